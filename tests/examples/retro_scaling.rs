//! Throughput of retrograde builds through the service (issue #26): Awari databases of
//! 0..=STONES stones built by a fresh coordinator with 1, then 2, ... worker processes of one
//! thread each (real processes on loopback, artifacts over HTTP, each worker with its own cache
//! folder). Prints per run the wall time, positions per second per worker, every worker's CPU
//! seconds and peak resident memory (VmHWM from /proc, read before the workers stop), the
//! efficiency T1 / (N TN), and the databases' checksums (identical in every run, else it fails).
//!
//! Run: `cargo build --release --workspace --all-targets && TMPDIR=/big/folder cargo run
//! --release -p gamesolver-e2e --example retro_scaling STONES [WORKERS] [SPLIT]` (WORKERS: a
//! comma list, default `1,2`; SPLIT: the job's `split` option, default the job's default).
//! With `GAMESOLVER_RETRO_SUMS=FILE` the checksums are also written to FILE, one per line, to
//! compare with an in-process build (`gamesolver solve ... --json`). Not a test: the numbers
//! depend on the machine and its load (report `uptime`).

use gamesolver_e2e::*;
use serde_json::json;
use std::time::{Duration, Instant};

struct Run {
    secs: f64,
    positions: u64,
    sums: Vec<String>,
    workers: Vec<(u64, f64)>,
    coordinator: (u64, f64),
}

fn run(stones: u64, workers: usize, split: Option<u64>) -> Run {
    let dir = scratch(&format!("retro-scaling-{workers}"));
    let c = Coordinator::start(&dir.join("db.sqlite"), &CoordOpts::default());
    let procs: Vec<Proc> = (0..workers)
        .map(|i| {
            let cache = dir.join(format!("cache-{i}"));
            start_worker_with(
                &c.url,
                1,
                &[],
                &[
                    "--cache-dir",
                    cache.to_str().unwrap(),
                    "--memory-mb",
                    "4096",
                ],
            )
        })
        .collect();
    wait_until(Duration::from_secs(30), "the workers register", || {
        c.workers() == workers
    });
    let mut options = json!({"stones": stones, "name": "bench"});
    if let Some(s) = split {
        options["split"] = s.into();
    }
    let job = json!({"game": "awari", "algorithm": "retrograde", "options": options});
    let t0 = Instant::now();
    let id = c.submit(&job, None);
    let st = c.wait_job_polling(id, Duration::from_secs(6 * 3600), Duration::from_millis(50));
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(st["state"], "done", "{st}");
    let dbs = st["result"]["databases"].as_array().expect("databases");
    let positions = dbs.iter().map(|d| d["positions"].as_u64().unwrap()).sum();
    let sums = dbs
        .iter()
        .map(|d| d["sha256"].as_str().unwrap().to_string())
        .collect();
    let usage_now = procs.iter().map(|p| usage(p.pid())).collect();
    let coordinator = usage(c.proc.pid());
    drop(procs);
    let _ = std::fs::remove_dir_all(&dir);
    Run {
        secs,
        positions,
        sums,
        workers: usage_now,
        coordinator,
    }
}

fn main() {
    use_binaries_beside_examples();
    let args: Vec<String> = std::env::args().collect();
    let stones: u64 = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .expect("STONES (0..=24)");
    let counts: Vec<usize> = args
        .get(2)
        .map(|a| {
            a.split(',')
                .map(|n| n.parse().expect("worker count"))
                .collect()
        })
        .unwrap_or_else(|| vec![1, 2]);
    let split: Option<u64> = args.get(3).and_then(|a| a.parse().ok());
    let mut t1 = None;
    let mut sums: Option<Vec<String>> = None;
    for &n in &counts {
        let r = run(stones, n, split);
        if let Some(s) = &sums {
            assert_eq!(s, &r.sums, "the databases differ between runs");
        }
        let t1v = *t1.get_or_insert(r.secs * n as f64);
        println!(
            "{n} worker(s): 0..={stones} stones, {} positions in {:.1} s: {:.0} positions/s per worker, efficiency {:.2}",
            r.positions,
            r.secs,
            r.positions as f64 / r.secs / n as f64,
            t1v / (n as f64 * r.secs)
        );
        for (i, (hwm, cpu)) in r.workers.iter().enumerate() {
            println!(
                "  worker {i}: {cpu:.1} s CPU, peak RSS {:.0} MiB",
                *hwm as f64 / 1024.0
            );
        }
        println!(
            "  coordinator: {:.1} s CPU, peak RSS {:.0} MiB",
            r.coordinator.1,
            r.coordinator.0 as f64 / 1024.0
        );
        sums = Some(r.sums);
    }
    let sums = sums.unwrap_or_default();
    println!(
        "sha256 of the top database: {}",
        sums.last().cloned().unwrap_or_default()
    );
    if let Ok(path) = std::env::var("GAMESOLVER_RETRO_SUMS") {
        std::fs::write(&path, sums.join("\n") + "\n").expect("write the checksums");
    }
}
