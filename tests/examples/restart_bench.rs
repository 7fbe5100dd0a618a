//! How long a worker takes to be back at work after its coordinator restarts (issue 23's
//! figures), measured with real processes on loopback: one `gamesolver-worker` (one slot) idles
//! in its long poll; the coordinator is killed (SIGKILL), stays down for a while, and starts
//! again on the same store and port. The figure is the time from the new coordinator's
//! `listening on` line to the worker's registration with it (the worker re-registers on its
//! first call, which is its next lease request), followed by a job that must run on it.
//!
//! Run: `cargo build --release -p gamesolver -p gamesolver-worker && cargo run --release -p
//! gamesolver-e2e --example restart_bench [RESTARTS]` (RESTARTS defaults to 12; the downtimes
//! cycle through 0.2, 1, 3 and 8 s). Not a test: numbers depend on the machine and its load.

use gamesolver_e2e::*;
use serde_json::json;
use std::time::{Duration, Instant};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    use_binaries_beside_examples();
    let restarts: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(12);
    let downtimes = [0.2, 1.0, 3.0, 8.0];
    let db = scratch("restart-bench").join("db.sqlite");
    let opts = CoordOpts {
        port: Some(free_port()),
        ..Default::default()
    };
    let mut c = Coordinator::start(&db, &opts);
    let _worker = start_worker(&c.url, 1, &[]);
    wait_until(Duration::from_secs(30), "the worker registers", || {
        c.workers() == 1
    });
    let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
    let mut back_ms = Vec::new();
    for i in 0..restarts {
        let down = Duration::from_secs_f64(downtimes[i % downtimes.len()]);
        // Let the worker settle into a long poll, as an idle worker is.
        std::thread::sleep(Duration::from_millis(300));
        c.proc.kill9();
        drop(c);
        std::thread::sleep(down);
        c = Coordinator::start(&db, &opts);
        let end = Instant::now() + Duration::from_secs(60);
        while c.workers() == 0 {
            assert!(Instant::now() < end, "the worker did not come back in 60 s");
            std::thread::sleep(Duration::from_millis(2));
        }
        let ms = c.listening_at.elapsed().as_secs_f64() * 1000.0;
        let id = c.submit(&job, None);
        let st = c.wait_job(id, Duration::from_secs(60));
        assert_eq!(st["state"], "done", "{st}");
        println!(
            "restart {}: down {:.1} s, worker back {ms:.0} ms after 'listening'",
            i + 1,
            down.as_secs_f64()
        );
        back_ms.push(ms);
    }
    back_ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "worker back at work after a coordinator restart: p50 {:.0} ms, max {:.0} ms ({} restarts, down {:?} s)",
        percentile(&back_ms, 0.5),
        back_ms[back_ms.len() - 1],
        back_ms.len(),
        downtimes
    );
}
