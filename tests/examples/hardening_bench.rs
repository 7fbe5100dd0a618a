//! Figures of the hardening issue, with real processes on loopback:
//!
//! 1. the coordinator's resident memory with 20 queued jobs of about 1 MB (explicit trees) and
//!    with 10,000 queued small jobs (no worker, so they stay queued);
//! 2. `/healthz` and a worker's heartbeat latency (p50, p99) with 300 idle connections open and
//!    4 clients polling a finished job of 2,000 tasks.
//!
//! Run: `cargo build --release -p gamesolver -p gamesolver-worker && cargo run --release -p
//! gamesolver-e2e --example hardening_bench`. Not a test: the numbers depend on the machine.

use gamesolver_e2e::*;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn rss(c: &Coordinator) -> f64 {
    rss_mib(c.proc.pid()).unwrap_or(f64::NAN)
}

fn main() {
    use_binaries_beside_examples();
    let quota = CoordOpts {
        extra_args: vec!["--max-queued-jobs".into(), "20000".into()],
        ..Default::default()
    };

    // 1. Memory.
    let c = Coordinator::fresh("hb-mem-big", &quota);
    let base = rss(&c);
    let tree = big_tree(950_000, 0);
    let mut accepted = 0;
    for _ in 0..20 {
        let (code, v) = c.post(
            "/v1/jobs",
            &json!({"game": "tree", "algorithm": "minimax", "position": tree}),
            None,
        );
        if code == 201 {
            accepted += 1;
        } else {
            eprintln!("refused: {code} {v}");
        }
    }
    println!(
        "20 jobs of {} KB ({accepted} accepted): coordinator {base:.0} MB -> {:.0} MB",
        tree.len() / 1000,
        rss(&c)
    );
    drop(c);
    let c = Coordinator::fresh("hb-mem-small", &quota);
    let base = rss(&c);
    let mut accepted = 0;
    for i in 0..10_000 {
        let p = format!("{}", 1 + i % 9);
        let (code, _) = c.post(
            "/v1/jobs",
            &json!({"game": "tictactoe", "position": p, "algorithm": "alphabeta"}),
            None,
        );
        accepted += usize::from(code == 201);
    }
    println!(
        "10,000 small jobs ({accepted} accepted): coordinator {base:.0} MB -> {:.0} MB",
        rss(&c)
    );
    drop(c);

    // 2. Latency under idle connections and polling.
    let token = "bench-token";
    let c = Coordinator::fresh(
        "hb-load",
        &CoordOpts {
            worker_token: Some(token.into()),
            ..Default::default()
        },
    );
    let workers: Vec<Proc> = (0..2)
        .map(|_| start_worker(&c.url, 1, &[("GAMESOLVER_WORKER_TOKEN", token)]))
        .collect();
    let big = c.submit(&many_task_job(2000), None);
    let st = c.wait_job(big, Duration::from_secs(900));
    assert_eq!(st["state"], "done");
    drop(workers);
    c.submit(
        &json!({"game": "connect4", "algorithm": "alphabeta", "position": ""}),
        None,
    );
    let quiet = time_gets(&c.url, "/healthz", 200, Duration::from_millis(5));
    let idle = idle_connections(&c.url, 300);
    let stop = Arc::new(AtomicBool::new(false));
    let polls = pollers(&c.url, &format!("/v1/jobs/{big}"), 4, stop.clone());
    let (url, tok) = (c.url.clone(), token.to_string());
    let beats =
        std::thread::spawn(move || time_heartbeats(&url, &tok, 300, Duration::from_millis(20)));
    let health = time_gets(&c.url, "/healthz", 1000, Duration::from_millis(5));
    let beats = beats.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    let polled: usize = polls.into_iter().map(|h| h.join().unwrap_or(0)).sum();
    println!(
        "/healthz alone: p50 {:.2} ms, p99 {:.2} ms",
        quiet.quantile(0.5),
        quiet.quantile(0.99)
    );
    println!(
        "{} idle connections, 4 clients polling a finished 2,000-task job ({polled} polls):",
        idle.len()
    );
    println!(
        "  /healthz p50 {:.2} ms, p99 {:.2} ms ({} unanswered)",
        health.quantile(0.5),
        health.quantile(0.99),
        health.failed
    );
    println!(
        "  heartbeat p50 {:.2} ms, p99 {:.2} ms ({} unanswered)",
        beats.quantile(0.5),
        beats.quantile(0.99),
        beats.failed
    );
}
