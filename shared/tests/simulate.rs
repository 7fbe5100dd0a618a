//! Scaling by simulation on real jobs (`plan::simulate`): one simulated worker runs the job as
//! `run_local` does (same tasks, same value, same nodes), and every worker count finds the same
//! value, for a probe plan (Connect Four, Pons' Test_L1_R2), root-parallel MCTS runs and NRPA
//! rounds.

use gamesolver_shared::plan::simulate::{curve, simulate, CostModel, SimConfig};
use gamesolver_shared::plan::{run_local, PlanShape, PreparedJob, SolveError};
use gamesolver_shared::registry;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;

fn job(game: &str, position: &str, algorithm: &str, options: &[(&str, &str)]) -> JobSpec {
    let mut j = JobSpec::new(game, position, algorithm);
    for (k, v) in options {
        j.options.insert(k.to_string(), v.to_string());
    }
    j
}

fn preparer(spec: &JobSpec) -> impl Fn() -> Result<Box<dyn PreparedJob>, SolveError> + Sync + '_ {
    move || registry::prepare(spec)
}

fn cfg(workers: usize) -> SimConfig {
    SimConfig {
        workers,
        model: CostModel::Nodes,
        rate: Some(1e7),
        ..SimConfig::default()
    }
}

/// One worker, one prepared job: the simulated run is `run_local`'s run (value, best move and
/// nodes; the probes share one table in both), for a probe plan and for a run plan.
#[test]
fn one_simulated_worker_gives_the_run_local_result() {
    // Pons' Test_L1_R2, first line: 335662333565, score -2 (README).
    let c4 = job("connect4", "335662333565", "alphabeta", &[]);
    let mcts = job(
        "tictactoe",
        "5",
        "mcts",
        &[("playouts", "4000"), ("trees", "4"), ("tasks", "4")],
    );
    for spec in [&c4, &mcts] {
        let local = run_local(
            registry::prepare(spec).unwrap().as_ref(),
            &Control::unlimited(),
        )
        .unwrap();
        let sim = simulate(&preparer(spec), &cfg(1)).unwrap();
        assert_eq!(sim.result.value, local.value, "{spec:?}");
        assert_eq!(sim.result.best_move, local.best_move, "{spec:?}");
        assert_eq!(sim.result.nodes, local.nodes, "{spec:?}");
        assert_eq!(sim.cancelled, 0);
        assert_eq!(sim.issued, sim.tasks.len());
    }
    let local = run_local(
        registry::prepare(&c4).unwrap().as_ref(),
        &Control::unlimited(),
    )
    .unwrap();
    assert_eq!(local.value, serde_json::json!(-2));
}

/// Every worker count finds the same value; more workers never take longer than one here, and
/// the coordinator's cap holds.
#[test]
fn every_worker_count_finds_the_same_value() {
    // Pons' Test_L1_R3, second line: 3246313, score -2 (2.6 M nodes).
    let c4 = job("connect4", "3246313", "alphabeta", &[]);
    assert!(matches!(
        registry::prepare(&c4).unwrap().plan_shape(),
        PlanShape::Probes { .. }
    ));
    let base = SimConfig {
        max_parallelism: 16,
        ..cfg(1)
    };
    let c = curve(&preparer(&c4), &[1, 2, 4, 16, 1024], &base).unwrap();
    assert!(c.same_value, "{:?}", c.rows);
    assert_eq!(c.result.value, serde_json::json!(-2));
    for r in &c.rows {
        assert_eq!(r.value, serde_json::json!(-2));
        assert!(r.parallelism <= 16);
        assert!(r.peak_busy <= r.workers);
        assert!(r.idle_share >= 0.0 && r.idle_share <= 1.0);
    }
    // Root-parallel MCTS: the merge does not depend on which run ended first.
    let mcts = job(
        "connect4",
        "",
        "mcts",
        &[("playouts", "8000"), ("trees", "8"), ("tasks", "8")],
    );
    let c = curve(&preparer(&mcts), &[1, 2, 8, 64], &cfg(1)).unwrap();
    assert!(c.same_value);
    // Eight runs of equal playouts: eight workers run them side by side.
    let eight = c.rows.iter().find(|r| r.workers == 8).unwrap();
    assert!(eight.speedup > 3.0, "{:?}", c.rows);
    assert_eq!(eight.tasks_issued, 8);
    // NRPA rounds across workers (across=shared): rounds of 4 tasks on a small morpion run.
    let nrpa = job(
        "morpion",
        "",
        "nrpa",
        &[
            ("level", "1"),
            ("iterations", "8"),
            ("runs", "4"),
            ("across", "shared"),
            ("threads", "1"),
            ("batch", "1"),
        ],
    );
    assert!(matches!(
        registry::prepare(&nrpa).unwrap().plan_shape(),
        PlanShape::Rounds { .. }
    ));
    let c = curve(&preparer(&nrpa), &[1, 2, 4, 8], &cfg(1)).unwrap();
    assert!(c.same_value, "{:?}", c.rows);
    let four = c.rows.iter().find(|r| r.workers == 4).unwrap();
    assert!(four.speedup > 1.5, "{:?}", c.rows);
}
