//! Analysis (`analyse=all`: every move's exact score) against solving only the value, through
//! a real coordinator with 1 and 2 worker processes (one slot each), on Connect Four positions of
//! Pons' `Test_L1_R2` and `Test_L1_R3` sets (the first `ANALYSIS_POSITIONS` lines of each,
//! default 3). For each position and worker count it prints the job's wall-clock time
//! (`elapsed_ms` of the result, from submission to the end) of the plain exact job and of the
//! analysis, and checks that the analysis's value is the published score.
//!
//! Run: `cargo build --release --workspace && cargo run --release -p gamesolver-bench --example
//! analysis_bench`. Not a test: the times depend on the machine.

use gamesolver_e2e::*;
use gamesolver_shared::games::data::pons_set;
use serde_json::{json, Value};
use std::time::Duration;

/// Longest wait for one job.
const JOB_LIMIT: Duration = Duration::from_secs(1800);

fn main() {
    let per_set: usize = std::env::var("ANALYSIS_POSITIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let mut positions = Vec::new();
    for set in ["Test_L1_R2", "Test_L1_R3"] {
        let lines = pons_set(set).unwrap_or_else(|e| panic!("{e}"));
        for l in lines.into_iter().take(per_set) {
            positions.push((set, l.moves, l.score as i64));
        }
    }
    println!("| set | position | workers | value | value only (s) | analysis (s) | ratio |");
    println!("|---|---|---|---|---|---|---|");
    for workers in [1usize, 2] {
        let c = Coordinator::fresh(&format!("analysis-bench-{workers}"), &CoordOpts::default());
        let _procs = c.start_workers(workers, 1);
        for (set, moves, score) in &positions {
            let run = |options: Value| -> (Value, f64) {
                let job = json!({"game": "connect4", "position": moves,
                                 "algorithm": "alphabeta", "options": options});
                let id = c.submit(&job, None);
                let st = c.wait_job_polling(id, JOB_LIMIT, Duration::from_millis(100));
                assert_eq!(st["state"], "done", "{st}");
                let r = st["result"].clone();
                let secs = r["elapsed_ms"].as_f64().unwrap_or(0.0) / 1000.0;
                (r, secs)
            };
            let (plain, t_plain) = run(json!({}));
            let (analysis, t_analysis) = run(json!({"analyse": "all"}));
            assert_eq!(plain["value"], *score, "{set} {moves}");
            assert_eq!(analysis["value"], *score, "{set} {moves}");
            println!(
                "| {set} | {moves} | {workers} | {score} | {t_plain:.2} | {t_analysis:.2} | {:.1} |",
                t_analysis / t_plain.max(1e-3)
            );
        }
    }
}
