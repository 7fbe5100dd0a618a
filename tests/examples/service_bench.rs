//! Figures of the job service (issue 3), measured with real processes on loopback:
//!
//! 1. tasks dispatched per second end to end with the durable store (SQLite, WAL): many small
//!    jobs through two worker processes of two slots each;
//! 2. overhead of a job through coordinator and worker over calling the planner and kernel
//!    directly in this process (same job, wall time submit -> done);
//! 3. latency of `GET /v1/jobs/{id}` and `GET /v1/status` (p50, p99) while 4 workers are busy.
//!
//! Run: `cargo build --release -p gamesolver -p gamesolver-worker && cargo run --release -p
//! gamesolver-e2e --example service_bench [JOBS]` (JOBS defaults to 2000). Not a test: numbers
//! depend on the machine and its load.

use gamesolver_e2e::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    use_binaries_beside_examples();
    let jobs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let dir = scratch("bench");

    // 1. Throughput.
    let c = Coordinator::start(&dir.join("t.sqlite"), &CoordOpts::default());
    let _w: Vec<Proc> = (0..2).map(|_| start_worker(&c.url, 2, &[])).collect();
    wait_until(Duration::from_secs(30), "workers", || c.workers() == 2);
    let t0 = Instant::now();
    let url = c.url.clone();
    let clients: Vec<_> = (0..8)
        .map(|k| {
            let url = url.clone();
            std::thread::spawn(move || {
                (0..jobs / 8)
                    .map(|i| {
                        let p = format!("{}{}", 1 + (k + i) % 9, 1 + (k + i + 1) % 9);
                        let job =
                            json!({"game": "tictactoe", "position": p, "algorithm": "alphabeta"});
                        http("POST", &format!("{url}/v1/jobs"), Some(&job), None).1["id"]
                            .as_u64()
                            .unwrap()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let ids: Vec<u64> = clients
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let submit_s = t0.elapsed().as_secs_f64();
    for id in &ids {
        c.wait_job(*id, Duration::from_secs(600));
    }
    let all_s = t0.elapsed().as_secs_f64();
    let tasks = c.metric("gamesolver_tasks_done_total");
    println!("throughput: {} jobs, {tasks} tasks in {all_s:.2} s (submitted in {submit_s:.2} s): {:.0} tasks/s, {:.0} jobs/s",
        ids.len(), tasks / all_s, ids.len() as f64 / all_s);
    drop(c);

    // 2. Overhead over a direct call.
    let c = Coordinator::start(&dir.join("o.sqlite"), &CoordOpts::default());
    let _w = start_worker(&c.url, 1, &[]);
    wait_until(Duration::from_secs(30), "worker", || c.workers() == 1);
    for job in [
        json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"}),
        json!({"game": "mnk", "game_params": {"m": 4, "n": 4, "k": 4}, "position": "1,6,11,16", "algorithm": "alphabeta"}),
        json!({"game": "mnk", "game_params": {"m": 4, "n": 4, "k": 4}, "position": "1,6,11,16,2,3,4", "algorithm": "minimax"}),
    ] {
        let reps = 5;
        let t = Instant::now();
        for _ in 0..reps {
            local_value(&job);
        }
        let direct = t.elapsed().as_secs_f64() * 1000.0 / reps as f64;
        let t = Instant::now();
        for _ in 0..reps {
            let id = c.submit(&job, None);
            c.wait_job_polling(id, Duration::from_secs(600), Duration::from_millis(1));
        }
        let remote = t.elapsed().as_secs_f64() * 1000.0 / reps as f64;
        println!("overhead: {} {} '{}': direct {direct:.1} ms, through the service {remote:.1} ms (+{:.1} ms; status polled every 1 ms by this client)",
            job["game"].as_str().unwrap(), job["algorithm"].as_str().unwrap(), job["position"].as_str().unwrap(), remote - direct);
    }
    drop(c);

    // 3. Status latency with 4 busy workers.
    let c = Coordinator::start(
        &dir.join("s.sqlite"),
        &CoordOpts {
            lease_ms: Some(3000),
            ..Default::default()
        },
    );
    let _w: Vec<Proc> = (0..4).map(|_| start_worker(&c.url, 1, &[])).collect();
    wait_until(Duration::from_secs(30), "workers", || c.workers() == 4);
    let busy: Vec<u64> = (0..4)
        .map(|_| c.submit(&json!({"game": "mnk", "game_params": {"m": 4, "n": 4, "k": 4}, "position": "1,6,11,16", "algorithm": "minimax"}), None))
        .collect();
    wait_until(Duration::from_secs(30), "4 tasks running", || {
        c.get("/v1/status", None).1["running"] == 4
    });
    for path in [format!("/v1/jobs/{}", busy[0]), "/v1/status".to_string()] {
        let mut ms: Vec<f64> = (0..400)
            .map(|_| {
                let t = Instant::now();
                let (code, _): (u16, Value) = c.get(&path, None);
                assert_eq!(code, 200);
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "latency of GET {path} with 4 busy workers: p50 {:.2} ms, p99 {:.2} ms (400 requests)",
            percentile(&ms, 0.5),
            percentile(&ms, 0.99)
        );
    }
    for id in busy {
        c.post(&format!("/v1/jobs/{id}/cancel"), &json!({}), None);
    }
}
