//! Root-parallel MCTS across worker processes (issue 7): a real coordinator and two real
//! `gamesolver-worker` processes run one `mcts` job whose trees are split into two tasks, and
//! the merged result must hold both trees' statistics.
//!
//! Ground truth comes from the same registry in this process: each task is run on its own
//! (`PreparedJob::run` with its `Run` index), and the service's merged visits must be their sum
//! per move (each tree is deterministic for its seed and budget, whichever worker runs it).

use gamesolver_e2e::*;
use gamesolver_shared::registry;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::{JobSpec, TaskKind};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const PLAYOUTS: u64 = 6000;

fn job() -> Value {
    json!({
        "game": "connect4",
        "position": "4453",
        "algorithm": "mcts",
        "options": {"playouts": PLAYOUTS.to_string(), "trees": "2", "tasks": "2", "seed": "11"},
    })
}

fn visits(v: &Value) -> BTreeMap<String, u64> {
    v.as_object()
        .expect("visits object")
        .iter()
        .map(|(k, n)| (k.clone(), n.as_u64().expect("count")))
        .collect()
}

#[test]
fn a_root_parallel_mcts_job_on_two_worker_processes_merges_both_trees() {
    let c = Coordinator::fresh(
        "mcts-two-workers",
        &CoordOpts {
            parallelism: Some(2),
            ..Default::default()
        },
    );
    let _workers = c.start_workers(2, 1);
    let id = c.submit(&job(), None);
    let st = c.wait_job(id, Duration::from_secs(120));
    assert_eq!(st["state"], "done", "{st}");
    let result = &st["result"];

    // Two tasks, both done, one on each worker process.
    let tasks = st["task_list"].as_array().expect("task list");
    assert_eq!(tasks.len(), 2, "{st}");
    let mut workers = BTreeSet::new();
    for t in tasks {
        assert_eq!(t["state"], "done", "{t}");
        let w = t["workers"].as_array().expect("workers");
        assert_eq!(w.len(), 1, "one attempt per task: {t}");
        workers.insert(w[0].to_string());
    }
    assert_eq!(workers.len(), 2, "each worker ran one task: {st}");

    // Each task on its own, in this process.
    let spec: JobSpec = serde_json::from_value(job()).unwrap();
    let prepared = registry::prepare(&spec).unwrap();
    let mut summed: BTreeMap<String, u64> = BTreeMap::new();
    let mut task_playouts = 0;
    for index in 0..2 {
        let out = prepared
            .run(
                &TaskKind::Run {
                    index,
                    seed: 0,
                    input: Value::Null,
                },
                &Control::unlimited(),
            )
            .unwrap();
        let v = visits(&out.extra["visits"]);
        let sum: u64 = v.values().sum();
        assert_eq!(
            sum,
            PLAYOUTS / 2,
            "task {index} grows one tree of half the playouts"
        );
        task_playouts += out.nodes;
        for (k, n) in v {
            *summed.entry(k).or_default() += n;
        }
    }
    let merged = visits(&result["visits"]);
    assert_eq!(merged.values().sum::<u64>(), PLAYOUTS, "{result}");
    assert_eq!(task_playouts, PLAYOUTS);
    assert_eq!(result["nodes"], PLAYOUTS, "{result}");
    assert_eq!(
        merged, summed,
        "merged visits are the per-move sum over both tasks"
    );
    assert_eq!(result["trees"], 2, "{result}");
    let votes: u64 = result["votes"]
        .as_object()
        .expect("votes")
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(votes, 2, "one vote per tree: {result}");
    assert!(
        result.get("root_stats").is_none(),
        "internal key leaked: {result}"
    );

    // The best move is the most visited one, and the value is on Connect Four's negamax scale
    // (expected outcome in [-1, 1]) with the win rate beside it.
    let best = result["best_move"].as_str().expect("best move");
    assert_eq!(merged[best], *merged.values().max().unwrap(), "{result}");
    let w = result["win_rate"].as_f64().expect("win_rate");
    let v = result["value"].as_f64().expect("value");
    assert!((0.0..=1.0).contains(&w), "{result}");
    assert!((v - (2.0 * w - 1.0)).abs() < 1e-8, "{result}");

    // The same job in one process with one task gives the same merged statistics.
    let one = json!({
        "game": "connect4", "position": "4453", "algorithm": "mcts",
        "options": {"playouts": PLAYOUTS.to_string(), "trees": "2", "seed": "11"},
    });
    let spec: JobSpec = serde_json::from_value(one).unwrap();
    let local = gamesolver_shared::plan::run_local(
        registry::prepare(&spec).unwrap().as_ref(),
        &Control::unlimited(),
    )
    .unwrap();
    assert_eq!(visits(&local.extra["visits"]), merged);
    assert_eq!(local.best_move.as_deref(), Some(best));
}
