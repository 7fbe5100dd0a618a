//! The hostile-user reproductions of the hardening issue, as written, against real processes:
//! a coordinator in embedded mode (its local workers are child processes) and a separate worker
//! process, real HTTP on 127.0.0.1, a real SQLite file. Each request is refused with a 4xx JSON
//! error or runs within bounds; afterwards the coordinator and its workers still answer and
//! solve, and no file outside the store's folder was created, changed or read.

use gamesolver_e2e::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const LONG: Duration = Duration::from_secs(120);

/// Submits `job` and expects a 4xx JSON error; returns its message.
fn refused(c: &Coordinator, job: &Value) -> String {
    let t = Instant::now();
    let (code, v) = c.post("/v1/jobs", job, None);
    assert!(
        (400..500).contains(&code),
        "{job} was not refused: {code} {v}"
    );
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "{job} took {:?} to be refused",
        t.elapsed()
    );
    let msg = v["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{job}: no JSON error: {v}"))
        .to_string();
    assert!(!msg.contains('\n'), "one line: {msg}");
    msg
}

/// Still alive and still solving: `/healthz`, a worker listed, and a small job gets its value.
fn still_serving(c: &Coordinator) {
    assert_eq!(c.get("/healthz", None).0, 200);
    let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
    let id = c.submit(&job, None);
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], local_value(&job), "{st}");
}

/// Threads of a process (`/proc/PID/status`).
fn threads_of(pid: u32) -> Option<usize> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn no_job_names_a_file() {
    let dir = scratch("harden-files");
    let db = dir.join("db.sqlite");
    let c = Coordinator::start(
        &db,
        &CoordOpts {
            local_workers: 1,
            secure_default: true,
            ..Default::default()
        },
    );
    let outside = scratch("harden-files-outside");
    // A proof written to any path: refused, nothing created; pointed at the store: the store
    // is untouched and still works.
    let victim = outside.join("proof.json");
    let msg = refused(
        &c,
        &json!({"game": "tictactoe", "algorithm": "pns",
                "options": {"target": "0", "proof": victim.to_str().unwrap()}}),
    );
    assert!(msg.contains("proof"), "{msg}");
    assert!(!victim.exists(), "a job created {}", victim.display());
    refused(
        &c,
        &json!({"game": "tictactoe", "algorithm": "pns",
                "options": {"target": "0", "proof": db.to_str().unwrap()}}),
    );
    // A tree read from the server's disk: refused without reading it (no content echoed, no
    // hint whether it exists), also for /dev/zero and a FIFO that nobody writes.
    let secret = outside.join("secret.json");
    std::fs::write(&secret, r#"{"kind":"max","children":[{"value":424242}]}"#).unwrap();
    let fifo = outside.join("fifo");
    let made_fifo = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let mut paths = vec![
        secret.to_str().unwrap().to_string(),
        "/dev/zero".to_string(),
        outside.join("missing.json").to_str().unwrap().to_string(),
    ];
    if made_fifo {
        paths.push(fifo.to_str().unwrap().to_string());
    }
    let mut messages = Vec::new();
    for p in &paths {
        let msg = refused(
            &c,
            &json!({"game": "tree", "algorithm": "minimax", "position": format!("@{p}")}),
        );
        assert!(!msg.contains("424242"), "file content echoed: {msg}");
        assert!(
            !msg.contains(outside.to_str().unwrap()),
            "path echoed: {msg}"
        );
        messages.push(msg);
    }
    // An existing and a missing file get the same answer: nothing is revealed.
    assert_eq!(messages[0], messages[2]);
    // Data names that leave the data folder.
    for (game, params, alg, opts) in [
        (
            "connect4",
            json!({}),
            "alphabeta",
            json!({"book": "../../etc/passwd"}),
        ),
        (
            "connect4",
            json!({}),
            "alphabeta",
            json!({"book": "/etc/passwd"}),
        ),
        (
            "tsptw",
            json!({"instance": "../../../etc/passwd"}),
            "nrpa",
            json!({}),
        ),
        (
            "tsptw",
            json!({"instance": "/etc/passwd"}),
            "nrpa",
            json!({}),
        ),
    ] {
        let msg = refused(
            &c,
            &json!({"game": game, "game_params": params, "algorithm": alg, "options": opts}),
        );
        assert!(!msg.contains("/work") && !msg.contains("/tmp"), "{msg}");
    }
    still_serving(&c);
    // The store was never replaced by a proof: it still opens and answers after a restart.
    drop(c);
    let c = Coordinator::start(
        &db,
        &CoordOpts {
            local_workers: 1,
            secure_default: true,
            ..Default::default()
        },
    );
    still_serving(&c);
    // Outside the store's folder, only what this test made.
    let mut leftovers: Vec<String> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    leftovers.sort();
    let mut expected = vec!["secret.json".to_string()];
    if made_fifo {
        expected.insert(0, "fifo".to_string());
    }
    assert_eq!(leftovers, expected);
}

#[test]
fn numbers_past_their_bounds_are_refused_and_nothing_dies() {
    let c = Coordinator::fresh(
        "harden-bounds",
        &CoordOpts {
            local_workers: 1,
            secure_default: true,
            ..Default::default()
        },
    );
    for alg in ["expectimax", "star1", "star2"] {
        let msg = refused(
            &c,
            &json!({"game": "pig", "algorithm": alg, "options": {"depth": 1000000}}),
        );
        assert!(msg.contains("depth"), "{msg}");
    }
    let msg = refused(
        &c,
        &json!({"game": "samegame", "algorithm": "nmcs", "options": {"level": 4000000000u64}}),
    );
    assert!(msg.contains("level"), "{msg}");
    let msg = refused(
        &c,
        &json!({"game": "samegame", "algorithm": "nrpa", "options": {"runs": 4000000000u64}}),
    );
    assert!(msg.contains("runs"), "{msg}");
    for (m, n) in [
        (json!(274177), json!(67280421310721u64)),
        (json!(4294967296u64), json!(4294967296u64)),
    ] {
        refused(
            &c,
            &json!({"game": "mnk", "game_params": {"m": m, "n": n, "k": 3}, "algorithm": "alphabeta"}),
        );
        let (code, _) = raw(
            "GET",
            &format!("{}/v1/board.svg?game=mnk&m={m}&n={n}&k=3", c.url),
            None,
            None,
        );
        assert!((400..500).contains(&code), "board.svg m={m} n={n}: {code}");
    }
    still_serving(&c);
}

/// A job asking for 256 threads on a one-slot worker runs on that worker's one kernel thread.
#[test]
fn a_job_cannot_take_more_threads_than_the_worker_offers() {
    let c = Coordinator::fresh("harden-threads", &CoordOpts::default());
    let mut w = c.start_workers(1, 1);
    let pid = w[0].pid();
    let idle = threads_of(pid).expect("worker threads");
    let job = json!({"game": "connect4", "algorithm": "alphabeta", "position": "",
        "options": {"threads": 256}, "limits": {"time_ms": 3000}});
    let id = c.submit(&job, None);
    let mut most = idle;
    let end = Instant::now() + LONG;
    loop {
        most = most.max(threads_of(pid).unwrap_or(0));
        let (_, st) = c.get(&format!("/v1/jobs/{id}"), None);
        if matches!(st["state"].as_str(), Some("done" | "failed" | "cancelled")) {
            break;
        }
        assert!(Instant::now() < end, "job did not end: {st}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        most <= idle + 4,
        "the worker went from {idle} to {most} threads for a job with threads=256"
    );
    w[0].kill9();
}

/// A worker may post anything; the coordinator stores only results that make sense for the
/// game: a forged value costs an attempt, and the job ends with the true value once an honest
/// worker runs the task.
#[test]
fn a_forged_result_is_not_stored() {
    let token = "forge-test-token";
    let c = Coordinator::fresh(
        "harden-forged",
        &CoordOpts {
            worker_token: Some(token.into()),
            max_attempts: Some(5),
            ..Default::default()
        },
    );
    let job = json!({"game": "tictactoe", "position": "15", "algorithm": "minimax"});
    let id = c.submit(&job, None);
    let (code, reg) = c.post(
        "/v1/worker/register",
        &json!({"host": "forger", "threads": 1}),
        Some(token),
    );
    assert_eq!(code, 200, "{reg}");
    let wid = reg["worker_id"].as_str().unwrap().to_string();
    for forged in [
        json!({"value": 7, "best_move": null, "nodes": 1, "elapsed_ms": 1}),
        json!({"value": "win", "best_move": null, "nodes": 1, "elapsed_ms": 1}),
        json!({"value": 1, "best_move": "zz", "nodes": 1, "elapsed_ms": 1}),
    ] {
        let (code, lease) = c.post(
            "/v1/worker/lease",
            &json!({"worker_id": wid, "wait_ms": 5000}),
            Some(token),
        );
        assert_eq!(code, 200, "lease: {lease}");
        let (code, v) = c.post(
            "/v1/worker/result",
            &json!({"worker_id": wid, "lease_id": lease["lease_id"],
                    "outcome": {"status": "done", "output": forged}}),
            Some(token),
        );
        assert!(code == 200 || (400..500).contains(&code), "{code} {v}");
        let (_, st) = c.get(&format!("/v1/jobs/{id}"), None);
        assert!(
            matches!(st["state"].as_str(), Some("queued" | "running")),
            "a forged result {forged} settled the job: {st}"
        );
    }
    let w = start_worker_with_token(&c.url, token);
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], local_value(&job), "{st}");
    drop(w);
}

fn start_worker_with_token(url: &str, token: &str) -> Proc {
    start_worker(url, 1, &[("GAMESOLVER_WORKER_TOKEN", token)])
}

/// Hundreds of idle connections and four clients polling a finished job of 2,000 tasks do not
/// keep `/healthz` or a worker's heartbeats from being answered. (The latencies are figures of
/// `hardening_bench`, not asserted here.)
#[test]
fn health_and_heartbeats_are_answered_under_idle_connections_and_polling() {
    let token = "load-test-token";
    let c = Coordinator::fresh(
        "harden-load",
        &CoordOpts {
            worker_token: Some(token.into()),
            ..Default::default()
        },
    );
    let workers: Vec<Proc> = (0..2)
        .map(|_| start_worker(&c.url, 1, &[("GAMESOLVER_WORKER_TOKEN", token)]))
        .collect();
    let big = c.submit(&many_task_job(2000), None);
    let st = c.wait_job(big, Duration::from_secs(600));
    assert_eq!(st["state"], "done", "{}", st["error"]);
    assert_eq!(st["tasks"]["total"], 2000);
    drop(workers);
    // The status of a finished job with 2,000 tasks is a summary, not 2,000 entries.
    let (_, text) = raw("GET", &format!("{}/v1/jobs/{big}", c.url), None, None);
    assert!(text.len() < 64 << 10, "status of {} bytes", text.len());
    // A task for the heartbeat probe to hold.
    c.submit(
        &json!({"game": "connect4", "algorithm": "alphabeta", "position": ""}),
        None,
    );
    let idle = idle_connections(&c.url, 300);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let polls = pollers(&c.url, &format!("/v1/jobs/{big}"), 4, stop.clone());
    let (url, tok) = (c.url.clone(), token.to_string());
    let beats =
        std::thread::spawn(move || time_heartbeats(&url, &tok, 50, Duration::from_millis(40)));
    let health = time_gets(&c.url, "/healthz", 100, Duration::from_millis(20));
    let beats = beats.join().expect("heartbeat thread");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let polled: usize = polls.into_iter().map(|h| h.join().unwrap_or(0)).sum();
    eprintln!(
        "{} idle connections, {polled} polls: /healthz p50 {:.1} ms p99 {:.1} ms; heartbeat p50 {:.1} ms p99 {:.1} ms",
        idle.len(),
        health.quantile(0.5),
        health.quantile(0.99),
        beats.quantile(0.5),
        beats.quantile(0.99)
    );
    assert_eq!(health.failed, 0, "/healthz unanswered under load");
    assert_eq!(beats.failed, 0, "heartbeats unanswered under load");
    assert!(polled > 0);
    drop(idle);
    still_alive(&c);
}

fn still_alive(c: &Coordinator) {
    assert_eq!(c.get("/healthz", None).0, 200);
}

/// A position for `game` that `algorithm` accepts (the start, or a small tree of the kind).
fn walk_position(game: &str, algorithm: &str) -> &'static str {
    match (game, algorithm) {
        ("tree", "expectimax" | "star1" | "star2" | "star25") => {
            r#"{"max": [{"chance": [[0.5, {"min": [3, 7]}], [0.5, {"min": [8, 4]}]]}, 5]}"#
        }
        ("tree", "maxn" | "paranoid") => {
            r#"{"player": 0, "children": [{"utility": [1, 2, 3]}, {"utility": [3, 2, 1]}]}"#
        }
        ("tree", _) => r#"{"max": [{"min": [4, 9]}, {"min": [2, 3]}]}"#,
        _ => "",
    }
}

/// The registry walked over HTTP: every game and algorithm pair, each numeric setting of its
/// declared specs at its bounds and just past them. Past a bound: 400 naming `key=value`. At a
/// bound: refused only for another reason, or accepted and run within the job's limits on real
/// worker processes, which are still the same processes, alive and serving, at the end.
#[test]
fn every_numeric_setting_over_http_at_its_bounds_and_past_them() {
    use gamesolver_shared::registry::{option_specs, ALGORITHMS, GAMES};
    let token = "walk-token";
    let c = Coordinator::fresh(
        "harden-walk",
        &CoordOpts {
            worker_token: Some(token.into()),
            max_attempts: Some(1),
            extra_args: vec!["--max-queued-jobs".into(), "100000".into()],
            ..Default::default()
        },
    );
    // Workers with a small memory budget: settings at their bounds ask for the most memory.
    let mut workers: Vec<Proc> = (0..2)
        .map(|_| {
            start_worker_with(
                &c.url,
                1,
                &[("GAMESOLVER_WORKER_TOKEN", token)],
                &["--memory-mb", "512"],
            )
        })
        .collect();
    wait_until(Duration::from_secs(30), "workers", || c.workers() == 2);
    let pids: Vec<u32> = workers.iter().map(|w| w.pid()).collect();
    let (mut refused_past, mut accepted) = (0, Vec::new());
    for game in GAMES {
        for alg in ALGORITHMS {
            let specs = option_specs(game, alg);
            // Retrograde builds need `stones` and `name` together and build real databases at
            // accepted bounds; their option bounds are checked in `registry::retro`'s tests.
            if specs.is_empty() || *alg == "retrograde" {
                continue;
            }
            let mut base = json!({"game": game, "algorithm": alg,
                "position": walk_position(game, alg), "game_params": {}, "options": {},
                "limits": {"node_limit": 2000, "time_ms": 1500}});
            if *game == "tsptw" {
                base["game_params"]["instance"] = json!("rc_201.1");
            }
            for d in specs {
                let Some(edges) = d.spec.edges() else {
                    continue;
                };
                let name = d.spec.name;
                let with = |v: &str| {
                    let mut j = base.clone();
                    let map = if d.param { "game_params" } else { "options" };
                    j[map][name] = json!(v);
                    match name {
                        "tasks" if !d.param => j["options"]["trees"] = json!("4096"),
                        "lower" => j["options"]["upper"] = json!("1000000000000000"),
                        "upper" => j["options"]["lower"] = json!("-1000000000000000"),
                        _ => {}
                    }
                    j
                };
                for v in &edges.refused {
                    let msg = refused(&c, &with(v));
                    assert!(
                        msg.contains(&format!("'{name}={v}'")),
                        "{game} {alg}: {msg}"
                    );
                    refused_past += 1;
                }
                for v in &edges.accepted {
                    let job = with(v);
                    let (code, r) = c.post("/v1/jobs", &job, None);
                    match code {
                        201 => accepted.push((r["id"].as_u64().unwrap(), job)),
                        400 => {
                            let m = r["error"]["message"].as_str().unwrap_or("");
                            assert!(
                                !m.contains("out of bounds") && !m.contains("malformed"),
                                "{game} {alg} {name}={v}: {m}"
                            );
                        }
                        _ => panic!("{game} {alg} {name}={v}: {code} {r}"),
                    }
                }
            }
        }
    }
    assert!(
        refused_past >= 300,
        "{refused_past} settings past their bounds"
    );
    assert!(
        accepted.len() >= 100,
        "{} jobs at their bounds",
        accepted.len()
    );
    // One deadline for the whole walk, not one per job: jobs queue behind the 1,024-task MCTS
    // jobs at their bounds (about a minute each on two one-thread workers), and every game the
    // catalogue gains adds one.
    let end = Instant::now() + Duration::from_secs(600);
    for (id, job) in &accepted {
        while !matches!(
            c.get(&format!("/v1/jobs/{id}"), None).1["state"].as_str(),
            Some("done" | "failed" | "cancelled")
        ) {
            if Instant::now() > end {
                let status = c.get("/v1/status", None).1;
                let running: Vec<Value> = status["workers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|w| w["current"].as_array().cloned().unwrap_or_default())
                    .map(|t| c.get(&format!("/v1/jobs/{}", t["job"]), None).1["job"].clone())
                    .collect();
                panic!("{job} did not end; the workers run {running:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let st = c.get(&format!("/v1/jobs/{id}"), None).1;
        let err = st["error"].as_str().unwrap_or("");
        assert!(
            !err.contains("lost its lease") && !err.contains("panicked"),
            "{job}: {err}"
        );
    }
    for (w, pid) in workers.iter_mut().zip(&pids) {
        assert_eq!(w.pid(), *pid);
        assert!(
            std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "worker {pid} died"
        );
    }
    assert_eq!(c.workers(), 2);
    still_alive(&c);
}
