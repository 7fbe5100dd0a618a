//! Scaling of job-level proof-number search (`jlpns`) over worker processes (issue #25): the
//! same jobs on a fresh coordinator with 1 and then 2 workers of one thread each, real processes
//! on loopback. Prints T1, T2 and the efficiency T1 / (2 T2) per job, and the job-level tree's
//! size (leaf tasks, tree nodes, bytes per node in memory and stored), the CPU seconds the
//! workers and the coordinator spent on each run, and the nodes of the answered leaf tasks
//! with the workers' rate per CPU second.
//!
//! Run: `cargo build --release -p gamesolver -p gamesolver-worker && cargo run --release -p
//! gamesolver-e2e --example jl_scaling [LEAF] [BUDGET] [JOBS]` (defaults: `alphabeta`,
//! `200000`, 3: the first JOBS positions of Pons' Test_L1_R3, then two Othello 6 x 6 positions after
//! three plies, deciding "value >= 1" with the df-pn leaf). Not a test: numbers depend on the machine and its
//! load (report `uptime`).

use gamesolver_e2e::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn pons(set: &str, count: usize) -> Vec<String> {
    let data = gamesolver_shared::games::data::data_dir();
    let path = data.join("connect4").join(set);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .take(count)
        .map(|l| l.split_once(' ').expect("moves and score").0.to_string())
        .collect()
}

/// One run: wall seconds, the job's result, the coordinator's CPU seconds and the workers'.
struct Run {
    secs: f64,
    result: Value,
    coordinator_cpu: f64,
    worker_cpu: f64,
}

/// Runs `job` on a fresh coordinator with `workers` one-thread workers.
fn timed(name: &str, job: &Value, workers: usize) -> Run {
    let c = Coordinator::fresh(
        &format!("jl-scaling-{name}-{workers}"),
        &CoordOpts::default(),
    );
    let w = c.start_workers(workers, 1);
    wait_until(Duration::from_secs(30), "the workers register", || {
        c.workers() == workers
    });
    let cpu = |pid: u32| usage(pid).1;
    let c0 = cpu(c.proc.pid());
    let w0: f64 = w.iter().map(|p| cpu(p.pid())).sum();
    let t0 = Instant::now();
    let id = c.submit(job, None);
    let st = c.wait_job_polling(id, Duration::from_secs(3600), Duration::from_millis(20));
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(st["state"], "done", "{st}");
    Run {
        secs,
        result: st["result"].clone(),
        coordinator_cpu: cpu(c.proc.pid()) - c0,
        worker_cpu: w.iter().map(|p| cpu(p.pid())).sum::<f64>() - w0,
    }
}

/// Othello 6 x 6 after three plies: the first `count` positions in move order.
fn othello_openings(count: usize) -> Vec<String> {
    use gamesolver_shared::games::othello::Othello;
    use gamesolver_shared::model::Game;
    let g = Othello::new(6).expect("6 x 6");
    let mut out = vec![g.initial_state()];
    for _ in 0..3 {
        let mut next = Vec::new();
        for s in &out {
            let mut moves = Vec::new();
            g.legal_moves(s, &mut moves);
            for m in moves {
                let mut c = s.clone();
                g.apply(&mut c, m);
                next.push(c);
            }
        }
        out = next;
    }
    out.iter()
        .take(count)
        .map(|s| g.format_position(s))
        .collect()
}

fn main() {
    use_binaries_beside_examples();
    let args: Vec<String> = std::env::args().collect();
    let leaf = args.get(1).cloned().unwrap_or_else(|| "alphabeta".into());
    let budget: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let count: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(3);
    let mut jobs: Vec<(String, Value)> = pons("Test_L1_R3", count)
        .into_iter()
        .map(|p| {
            (
                format!("c4 {p}"),
                json!({"game": "connect4", "position": p, "algorithm": "jlpns",
                       "options": {"leaf": leaf, "budget": budget}}),
            )
        })
        .collect();
    for p in othello_openings(2) {
        jobs.push((
            format!("othello6 {p}"),
            json!({"game": "othello", "game_params": {"size": 6}, "position": p,
                   "algorithm": "jlpns", "options": {"leaf": "dfpn", "budget": budget, "target": 1}}),
        ));
    }
    let (mut s1, mut s2) = (0.0, 0.0);
    for (i, (name, job)) in jobs.iter().enumerate() {
        let one = timed(&i.to_string(), job, 1);
        let two = timed(&i.to_string(), job, 2);
        let (t1, r1, t2, r2) = (one.secs, &one.result, two.secs, &two.result);
        assert_eq!(r1["value"], r2["value"], "{name}");
        assert_eq!(r1["proved"], r2["proved"], "{name}");
        s1 += t1;
        s2 += t2;
        println!(
            "{name}: value {} proved {} | T1 {t1:.2} s ({} leaf tasks) | T2 {t2:.2} s ({} leaf tasks) | efficiency {:.2} | tree {} nodes, {} B/node in memory, {} B/node stored",
            r1["value"],
            r1["proved"],
            r1["leaf_tasks"],
            r2["leaf_tasks"],
            t1 / (2.0 * t2),
            r2["tree_nodes"],
            r2["tree_bytes_per_node"],
            r2["stored_bytes_per_node"],
        );
        // CPU times are in ticks of 10 ms: no ratio for runs of a few ticks.
        let inflation = if one.worker_cpu >= 0.1 {
            format!("{:.2}", two.worker_cpu / one.worker_cpu)
        } else {
            "-".into()
        };
        println!(
            "  CPU s: workers {:.2} / {:.2} (inflation {inflation}), coordinator {:.2} / {:.2}",
            one.worker_cpu, two.worker_cpu, one.coordinator_cpu, two.coordinator_cpu,
        );
        // Nodes of the answered leaf tasks (cancelled ones are not counted) and the workers'
        // rate: CPU inflation is node inflation times the slowdown of a core beside a busy one.
        let (n1, n2) = (
            r1["nodes"].as_f64().unwrap_or(0.0),
            r2["nodes"].as_f64().unwrap_or(0.0),
        );
        if n1 > 0.0 && one.worker_cpu >= 0.1 && two.worker_cpu >= 0.1 {
            println!(
                "  nodes (answered leaves): {n1:.0} / {n2:.0} (x {:.2}), M nodes per worker-CPU s: {:.2} / {:.2}",
                n2 / n1,
                n1 / one.worker_cpu / 1e6,
                n2 / two.worker_cpu / 1e6,
            );
        }
    }
    println!(
        "all: T1 {s1:.2} s, T2 {s2:.2} s, efficiency {:.2}",
        s1 / (2.0 * s2)
    );
}
