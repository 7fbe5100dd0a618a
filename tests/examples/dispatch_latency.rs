//! The time a trivial job takes through the service with 1, 2 and 4 idle worker processes (one
//! slot each): tic-tac-toe after "15", exact alpha-beta (a probe plan), submitted and followed
//! until done, as `gamesolver bench` measures its dispatch overhead. Prints the median and the
//! spread per worker count, and for the slowest job its tasks (state, attempts, workers), so a
//! slow dispatch can be traced to the task that held it.
//!
//! Run: `cargo build --release -p gamesolver -p gamesolver-worker && cargo run --release -p
//! gamesolver-e2e --example dispatch_latency [RUNS]` (default 41 runs). Not a test.

use gamesolver_e2e::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn main() {
    use_binaries_beside_examples();
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(41);
    let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
    for workers in [1usize, 2, 4] {
        let c = Coordinator::fresh(&format!("dispatch-{workers}"), &CoordOpts::default());
        let _procs = c.start_workers(workers, 1);
        let mut ms = Vec::new();
        let mut slowest: (f64, u64) = (0.0, 0);
        for _ in 0..runs {
            let t0 = Instant::now();
            let id = c.submit(&job, None);
            loop {
                let (_, st) = c.get(&format!("/v1/jobs/{id}"), None);
                if st["state"] == "done" {
                    break;
                }
                assert!(
                    t0.elapsed() < Duration::from_secs(30),
                    "job {id} did not end: {st}"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
            let t = t0.elapsed().as_secs_f64() * 1e3;
            if t > slowest.0 {
                slowest = (t, id);
            }
            ms.push(t);
        }
        let mut sorted = ms.clone();
        sorted.sort_by(f64::total_cmp);
        let q = |p: f64| sorted[((sorted.len() - 1) as f64 * p).round() as usize];
        let (_, st) = c.get(&format!("/v1/jobs/{}", slowest.1), None);
        let tasks: Vec<Value> = st["task_list"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                json!({"kind": t["kind"], "state": t["state"], "attempts": t["attempts"],
                    "workers": t["workers"]})
            })
            .collect();
        println!(
            "{}",
            json!({
                "workers": workers,
                "runs": runs,
                "median_ms": (q(0.5) * 10.0).round() / 10.0,
                "p10_ms": (q(0.1) * 10.0).round() / 10.0,
                "p90_ms": (q(0.9) * 10.0).round() / 10.0,
                "max_ms": (q(1.0) * 10.0).round() / 10.0,
                "all_ms": ms.iter().map(|x| x.round()).collect::<Vec<_>>(),
                "slowest_tasks": tasks,
            })
        );
    }
}
