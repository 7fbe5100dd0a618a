//! End-to-end tests of the job service (issue 3): real coordinator and worker processes on
//! 127.0.0.1, real HTTP, a real SQLite file. Each test starts its own coordinator on a free port
//! with its own database, and kills everything it started when it ends.
//!
//! Jobs: a Connect Four position of Pons' sets (with its published score) for the two-worker
//! test; elsewhere m,n,k positions whose running time is known: minimax on 4x4 k=4 after
//! `1,6,11,16,2,3` is one task of ~8 M nodes (a few seconds), so "mid-task" is a window of
//! seconds. Other expected values come from the same registry and planner run in this process
//! (`local_value`).

use gamesolver_e2e::*;
use serde_json::{json, Value};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(120);

fn mnk4(position: &str, algorithm: &str) -> Value {
    json!({"game": "mnk", "game_params": {"m": 4, "n": 4, "k": 4}, "position": position, "algorithm": algorithm})
}

/// Workers of each task of a finished job.
fn task_workers(status: &Value) -> Vec<Vec<String>> {
    status["task_list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["workers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

/// The first position of Pons' `Test_L2_R1` set (middle game, easy) with its published score.
fn pons_position() -> (String, i64) {
    let data = gamesolver_shared::games::data::data_dir();
    let path = data.join("connect4/Test_L2_R1");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let line = text.lines().next().expect("a line");
    let (moves, score) = line.split_once(' ').expect("moves and score");
    (moves.to_string(), score.trim().parse().expect("score"))
}

#[test]
fn a_pons_position_over_http_gets_its_exact_score_with_probes_on_two_worker_processes() {
    let c = Coordinator::fresh(
        "two-workers",
        &CoordOpts {
            parallelism: Some(2),
            ..Default::default()
        },
    );
    let _workers = c.start_workers(2, 1);
    let (moves, score) = pons_position();
    let job = json!({"game": "connect4", "position": moves, "algorithm": "alphabeta"});
    let id = c.submit(&job, None);
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(
        st["result"]["value"], score,
        "Pons' published score of {moves}"
    );
    assert_eq!(st["result"]["game"], "connect4");
    for key in ["algorithm", "best_move", "nodes", "elapsed_ms"] {
        assert!(st["result"].get(key).is_some(), "result lacks {key}: {st}");
    }
    assert!(st["tasks"]["done"].as_u64().unwrap() >= 2, "{st}");
    let workers: std::collections::BTreeSet<String> =
        task_workers(&st).into_iter().flatten().collect();
    assert_eq!(
        workers.len(),
        2,
        "probes should have run on both workers: {st}"
    );
}

/// `gamesolver solve --coordinator URL` submits, follows and prints like the in-process solve.
#[test]
fn solve_with_coordinator_prints_the_same_result_as_in_process() {
    let c = Coordinator::fresh(
        "solve-remote",
        &CoordOpts {
            local_workers: 1,
            ..Default::default()
        },
    );
    let run = |extra: &[&str]| {
        let mut args = vec![
            "solve",
            "--game",
            "tictactoe",
            "--position",
            "15",
            "--algorithm",
            "alphabeta",
            "--json",
        ];
        args.extend_from_slice(extra);
        gamesolver(&args)
    };
    let (code, local, _) = run(&[]);
    assert_eq!(code, Some(0));
    let (streams, reads) = (
        c.metric("gamesolver_event_streams_total"),
        c.metric("gamesolver_status_reads_total"),
    );
    let (code, remote, err) = run(&["--coordinator", &c.url]);
    assert_eq!(code, Some(0), "{err}");
    // The client followed the job's event stream rather than polling its status.
    assert!(
        c.metric("gamesolver_event_streams_total") > streams,
        "solve --coordinator opened no event stream"
    );
    assert_eq!(
        c.metric("gamesolver_status_reads_total"),
        reads,
        "solve --coordinator polled the status"
    );
    let (local, remote): (Value, Value) = (
        serde_json::from_str(&local).unwrap(),
        serde_json::from_str(&remote).unwrap(),
    );
    for key in ["game", "algorithm", "value", "best_move"] {
        assert_eq!(local[key], remote[key], "{key}: {local} vs {remote}");
    }
    // Bad input is refused by the coordinator with the registry's message: exit 2, one line.
    let out = std::process::Command::new(bin("gamesolver"))
        .args([
            "solve",
            "--game",
            "chess",
            "--algorithm",
            "alphabeta",
            "--coordinator",
            &c.url,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("chess") && err.trim().lines().count() == 1,
        "{err}"
    );
}

#[test]
fn kill_9_of_a_worker_mid_task_hands_the_task_on_and_counts_it_once() {
    let c = Coordinator::fresh(
        "kill-worker",
        &CoordOpts {
            lease_ms: Some(1500),
            ..Default::default()
        },
    );
    let mut w1 = start_worker(&c.url, 1, &[]);
    let job = mnk4("1,6,11,16,2,3", "minimax");
    let id = c.submit(&job, None);
    wait_until(
        Duration::from_secs(30),
        "the task runs on the first worker",
        || c.get(&format!("/v1/jobs/{id}"), None).1["tasks"]["running"] == 1,
    );
    std::thread::sleep(Duration::from_millis(300));
    w1.kill9();
    let _w2 = start_worker(&c.url, 1, &[]);
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], local_value(&job));
    let task = &st["task_list"][0];
    assert_eq!(task["attempts"], 2, "{st}");
    let workers = task_workers(&st).remove(0);
    assert_eq!(workers.len(), 2);
    assert_ne!(
        workers[0], workers[1],
        "the task must run again on the other worker"
    );
    assert_eq!(c.metric("gamesolver_tasks_done_total"), 1.0, "counted once");
    assert_eq!(c.metric("gamesolver_leases_expired_total"), 1.0);
}

#[test]
fn kill_9_of_the_coordinator_mid_job_then_restart_on_the_same_file_loses_nothing() {
    let dir = scratch("kill-coordinator");
    let db = dir.join("db.sqlite");
    let opts = CoordOpts {
        lease_ms: Some(3000),
        ..Default::default()
    };
    let mut c = Coordinator::start(&db, &opts);
    let _w = start_worker(&c.url, 1, &[]);
    // Quick jobs finish first, then the slow one runs while the coordinator dies.
    let quick: Vec<(u64, Value)> = ["5", "15", "159", "1"]
        .iter()
        .map(|p| {
            let job = json!({"game": "tictactoe", "position": p, "algorithm": "alphabeta"});
            (c.submit(&job, None), job)
        })
        .collect();
    let before: Vec<Value> = quick
        .iter()
        .map(|(id, _)| c.wait_job(*id, LONG)["result"].clone())
        .collect();
    let slow = mnk4("1,6,11,16,2,3", "minimax");
    let slow_id = c.submit(&slow, None);
    let queued = json!({"game": "tictactoe", "position": "19", "algorithm": "minimax"});
    wait_until(Duration::from_secs(30), "the slow task runs", || {
        c.get(&format!("/v1/jobs/{slow_id}"), None).1["tasks"]["running"] == 1
    });
    let queued_id = c.submit(&queued, None);
    c.proc.kill9();
    let c = Coordinator::start(
        &db,
        &CoordOpts {
            port: Some(c.port),
            ..opts
        },
    );
    // Every accepted job is there; finished results are unchanged.
    let list = c.get("/v1/jobs", None).1;
    assert_eq!(list["jobs"].as_array().unwrap().len(), 6, "{list}");
    for ((id, _), result) in quick.iter().zip(&before) {
        let st = c.get(&format!("/v1/jobs/{id}"), None).1;
        assert_eq!(st["state"], "done");
        assert_eq!(&st["result"], result);
    }
    // The running job resumes (the worker reports to the restarted coordinator) and finishes.
    let st = c.wait_job(slow_id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], local_value(&slow));
    let st = c.wait_job(queued_id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], local_value(&queued));
}

/// A fake worker speaking the protocol directly, to provoke what real workers rarely do.
#[test]
fn results_are_idempotent_and_leases_are_checked_and_tokens_required() {
    let c = Coordinator::fresh(
        "protocol",
        &CoordOpts {
            lease_ms: Some(800),
            worker_token: Some("wt-secret".into()),
            ..Default::default()
        },
    );
    let tok = Some("wt-secret");
    let reg = json!({"host": "fake", "threads": 1});
    // No token, wrong token: 401 with a JSON error.
    for t in [None, Some("wrong")] {
        let (code, v) = c.post("/v1/worker/register", &reg, t);
        assert_eq!(code, 401, "{v}");
        assert_eq!(v["error"]["code"], "unauthorized");
    }
    let w1 = c.post("/v1/worker/register", &reg, tok).1["worker_id"]
        .as_str()
        .unwrap()
        .to_string();
    let w2 = c.post("/v1/worker/register", &reg, tok).1["worker_id"]
        .as_str()
        .unwrap()
        .to_string();

    let job = json!({"game": "tictactoe", "position": "15", "algorithm": "minimax"});
    let id = c.submit(&job, None);
    let (code, lease) = c.post(
        "/v1/worker/lease",
        &json!({"worker_id": w1, "wait_ms": 2000}),
        tok,
    );
    assert_eq!(code, 200, "{lease}");
    let lease_id = lease["lease_id"].as_str().unwrap().to_string();
    assert_eq!(lease["job_id"], id);
    // Compute the task's real output in this process.
    let spec: gamesolver_shared::wire::JobSpec =
        serde_json::from_value(lease["task"]["job"].clone()).unwrap();
    let kind: gamesolver_shared::wire::TaskKind =
        serde_json::from_value(lease["task"]["kind"].clone()).unwrap();
    let prepared = gamesolver_shared::registry::prepare(&spec).unwrap();
    let output = prepared
        .run(&kind, &gamesolver_shared::search::Control::unlimited())
        .unwrap();
    let report = |worker: &str, lease: &str| json!({"worker_id": worker, "lease_id": lease, "outcome": {"status": "done", "output": output}});
    // A foreign worker can neither heartbeat nor report this lease.
    let (code, v) = c.post(
        "/v1/worker/heartbeat",
        &json!({"worker_id": w2, "lease_id": lease_id}),
        tok,
    );
    assert_eq!(code, 409, "{v}");
    let (code, v) = c.post("/v1/worker/result", &report(&w2, &lease_id), tok);
    assert_eq!(code, 409, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("another worker"),
        "{v}"
    );
    // The owner's heartbeat is fine; its result is accepted once, the repeat is a duplicate.
    let (code, v) = c.post(
        "/v1/worker/heartbeat",
        &json!({"worker_id": w1, "lease_id": lease_id, "progress": {"nodes": 1}}),
        tok,
    );
    assert_eq!((code, &v["cancel"]), (200, &json!(false)), "{v}");
    let (code, v) = c.post("/v1/worker/result", &report(&w1, &lease_id), tok);
    assert_eq!((code, &v["duplicate"]), (200, &json!(false)), "{v}");
    let (code, v) = c.post("/v1/worker/result", &report(&w1, &lease_id), tok);
    assert_eq!((code, &v["duplicate"]), (200, &json!(true)), "{v}");
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done");
    assert_eq!(st["result"]["value"], local_value(&job));
    assert_eq!(st["tasks"]["done"], 1);
    assert_eq!(
        c.metric("gamesolver_tasks_done_total"),
        1.0,
        "the duplicate was not counted"
    );
    assert_eq!(c.metric("gamesolver_results_duplicate_total"), 1.0);

    // An expired lease: its late result is refused, the task goes to the next worker.
    let id2 = c.submit(&job, None);
    let lease = c
        .post(
            "/v1/worker/lease",
            &json!({"worker_id": w1, "wait_ms": 2000}),
            tok,
        )
        .1;
    let stale = lease["lease_id"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_millis(1500));
    let (code, v) = c.post("/v1/worker/result", &report(&w1, &stale), tok);
    assert_eq!(code, 409, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("expired"),
        "{v}"
    );
    let (code, lease) = c.post(
        "/v1/worker/lease",
        &json!({"worker_id": w2, "wait_ms": 2000}),
        tok,
    );
    assert_eq!(code, 200, "{lease}");
    assert_eq!(lease["attempt"], 2);
    let fresh = lease["lease_id"].as_str().unwrap().to_string();
    assert_eq!(
        c.post("/v1/worker/result", &report(&w2, &fresh), tok).0,
        200
    );
    let st = c.wait_job(id2, LONG);
    assert_eq!(st["state"], "done");
    assert_eq!(st["tasks"]["done"], 1);
    // Unknown lease, unknown worker.
    assert_eq!(
        c.post("/v1/worker/result", &report(&w1, "l-nope"), tok).0,
        409
    );
    let (code, v) = c.post("/v1/worker/lease", &json!({"worker_id": "w-nope"}), tok);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (404, Some("unknown_worker"))
    );
    // An empty queue answers 204 after the wait.
    assert_eq!(
        c.post(
            "/v1/worker/lease",
            &json!({"worker_id": w1, "wait_ms": 100}),
            tok
        )
        .0,
        204
    );
}

#[test]
fn malformed_oversized_and_unauthorized_requests_get_4xx_json() {
    let c = Coordinator::fresh(
        "bad-requests",
        &CoordOpts {
            api_token: Some("api-secret".into()),
            ..Default::default()
        },
    );
    let t = Some("api-secret");
    let jobs = format!("{}/v1/jobs", c.url);
    let check = |code: u16, text: &str, want: u16, what: &str| {
        assert_eq!(code, want, "{what}: {text}");
        let v: Value =
            serde_json::from_str(text).unwrap_or_else(|_| panic!("{what}: not JSON: {text}"));
        assert!(
            v["error"]["code"].is_string() && v["error"]["message"].is_string(),
            "{what}: {v}"
        );
        v["error"]["message"].as_str().unwrap().to_string()
    };
    // Without or with a wrong API token.
    let (code, text) = raw("GET", &jobs, None, None);
    check(code, &text, 401, "no token");
    let (code, text) = raw(
        "POST",
        &jobs,
        Some(r#"{"game":"tictactoe","algorithm":"alphabeta"}"#),
        Some("nope"),
    );
    check(code, &text, 401, "wrong token");
    // Malformed JSON, wrong shape, unknown key.
    let (code, text) = raw("POST", &jobs, Some(r#"{"game": "#), t);
    check(code, &text, 400, "truncated JSON");
    let (code, text) = raw(
        "POST",
        &jobs,
        Some(r#"{"game": 3, "algorithm": "alphabeta"}"#),
        t,
    );
    check(code, &text, 400, "wrong type");
    let (code, text) = raw(
        "POST",
        &jobs,
        Some(r#"{"game":"tictactoe","algorithm":"alphabeta","colour":1}"#),
        t,
    );
    assert!(check(code, &text, 400, "unknown key").contains("colour"));
    // Validation by the registry, before anything is stored.
    let (code, text) = raw(
        "POST",
        &jobs,
        Some(r#"{"game":"chess","algorithm":"alphabeta"}"#),
        t,
    );
    assert!(check(code, &text, 400, "unknown game").contains("chess"));
    let (code, text) = raw(
        "POST",
        &jobs,
        Some(r#"{"game":"tictactoe","position":"55","algorithm":"alphabeta"}"#),
        t,
    );
    assert!(check(code, &text, 400, "illegal position").contains("position"));
    let (code, text) = raw(
        "POST",
        &jobs,
        Some(r#"{"game":"tictactoe","algorithm":"alphabeta","options":{"depht":3}}"#),
        t,
    );
    assert!(check(code, &text, 400, "unknown option").contains("depht"));
    let (code, text) = raw(
        "POST",
        &jobs,
        Some(r#"{"game":"tictactoe","algorithm":"alphabeta","limits":{"time_ms":0}}"#),
        t,
    );
    check(code, &text, 400, "zero time limit");
    assert_eq!(
        c.get("/v1/jobs", t).1["jobs"].as_array().unwrap().len(),
        0,
        "nothing was stored"
    );
    // Oversized body (2 MiB declared): refused from its Content-Length before any of it is read,
    // so a client that waits for 100-continue never sends it and reads a clean 413.
    let (code, text) = post_expecting_continue(&jobs, 2 << 20, t);
    assert!(check(code, &text, 413, "oversized").contains("limit"));
    // Just under the limit (1 MiB by default) is read and judged as JSON: not a 413.
    let (code, text) = post_expecting_continue(&jobs, 1000, t);
    check(code, &text, 400, "spaces are not a job");
    // Unknown path, wrong method, bad id.
    let (code, text) = raw("GET", &format!("{}/v1/nothing", c.url), None, t);
    check(code, &text, 404, "unknown path");
    let (code, text) = raw("DELETE", &jobs, None, t);
    check(code, &text, 405, "wrong method");
    let (code, text) = raw("GET", &format!("{jobs}/abc"), None, t);
    check(code, &text, 404, "bad id");
    let (code, text) = raw("GET", &format!("{jobs}/999"), None, t);
    check(code, &text, 404, "no such job");
    // Open endpoints need no token; every documented path exists.
    assert_eq!(raw("GET", &format!("{}/healthz", c.url), None, None).0, 200);
    let (code, docs) = raw("GET", &format!("{}/docs", c.url), None, None);
    assert!(code == 200 && docs.contains("/openapi.json") && !docs.contains("https://"));
    let spec = c.get("/openapi.json", None).1;
    for (path, ops) in spec["paths"].as_object().unwrap() {
        for method in ops.as_object().unwrap().keys() {
            let url = format!("{}{}", c.url, path.replace("{id}", "1"));
            let (code, text) = if method == "get" && path.ends_with("/events") {
                (0, String::new()) // streams: covered by the cancel test
            } else {
                raw(
                    &method.to_uppercase(),
                    &url,
                    (method == "post").then_some("{}"),
                    None,
                )
            };
            assert!(
                !text.contains("no such endpoint"),
                "{method} {path} is documented but not routed"
            );
            assert_ne!(code, 405, "{method} {path} is documented but not routed");
        }
    }
}

/// A job limit that stops a probe ends an exact job with the bounds proved before it (value
/// null, `stopped` naming the limit), through real worker processes, as `solve` does in-process.
#[test]
fn a_limit_stops_a_probe_job_with_its_proved_bounds_over_http() {
    let c = Coordinator::fresh(
        "stopped-probes",
        &CoordOpts {
            parallelism: Some(2),
            ..Default::default()
        },
    );
    let _workers = c.start_workers(2, 1);
    // About ten seconds of search (millions of nodes), far beyond the budget of each probe.
    let job = json!({"game": "connect4", "position": "4453", "algorithm": "alphabeta",
                     "limits": {"node_limit": 20000}});
    let id = c.submit(&job, None);
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    let r = &st["result"];
    assert_eq!(r["stopped"], "nodes", "{st}");
    assert_eq!(r["value"], Value::Null, "{st}");
    let b = r["bounds"].as_array().expect("bounds");
    let (lo, hi) = (b[0].as_i64().unwrap(), b[1].as_i64().unwrap());
    assert!(lo < hi, "{st}");
    // The same job in-process gives the same kind of answer.
    let local = local_result(&job);
    assert_eq!(local["stopped"], "nodes", "{local}");
    assert_eq!(local["value"], Value::Null, "{local}");
}

#[test]
fn a_poison_task_fails_its_job_after_n_attempts_while_other_jobs_finish() {
    let c = Coordinator::fresh(
        "poison",
        &CoordOpts {
            max_attempts: Some(3),
            ..Default::default()
        },
    );
    let _w = start_worker(&c.url, 2, &[("GAMESOLVER_TEST_PANIC_POSITION", "5")]);
    let poison = json!({"game": "tictactoe", "position": "5", "algorithm": "minimax"});
    let poison_id = c.submit(&poison, None);
    let good: Vec<(u64, Value)> = ["1", "9", "13", "2"]
        .iter()
        .map(|p| {
            let job = json!({"game": "tictactoe", "position": p, "algorithm": "alphabeta"});
            (c.submit(&job, None), job)
        })
        .collect();
    let st = c.wait_job(poison_id, LONG);
    assert_eq!(st["state"], "failed", "{st}");
    let error = st["error"].as_str().unwrap();
    assert!(
        error.contains("failed 3 times") && error.contains("panicked"),
        "{error}"
    );
    assert_eq!(st["task_list"][0]["attempts"], 3);
    for (id, job) in good {
        let st = c.wait_job(id, LONG);
        assert_eq!(st["state"], "done", "{st}");
        assert_eq!(st["result"]["value"], local_value(&job));
    }
}

#[test]
fn cancel_reaches_a_running_task_and_events_stream_until_the_end() {
    let c = Coordinator::fresh(
        "cancel",
        &CoordOpts {
            lease_ms: Some(900),
            ..Default::default()
        },
    );
    let _w = start_worker(&c.url, 1, &[]);
    let id = c.submit(&mnk4("1,6,11,16,2", "minimax"), None);
    wait_until(Duration::from_secs(30), "the task runs", || {
        c.get(&format!("/v1/jobs/{id}"), None).1["tasks"]["running"] == 1
    });
    let events = {
        let url = format!("{}/v1/jobs/{id}/events", c.url);
        std::thread::spawn(move || raw("GET", &url, None, None))
    };
    std::thread::sleep(Duration::from_millis(200));
    let (code, v) = c.post(&format!("/v1/jobs/{id}/cancel"), &json!({}), None);
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["state"], "cancelled");
    // The worker hears it in its next heartbeat and stops: the slot is free for the next job.
    let next = json!({"game": "tictactoe", "position": "1", "algorithm": "alphabeta"});
    let next_id = c.submit(&next, None);
    let st = c.wait_job(next_id, Duration::from_secs(20));
    assert_eq!(st["state"], "done");
    let st = c.get(&format!("/v1/jobs/{id}"), None).1;
    assert_eq!(st["tasks"]["cancelled"], 1, "{st}");
    assert_eq!(
        c.post(&format!("/v1/jobs/{id}/cancel"), &json!({}), None).0,
        409
    );
    let (code, stream) = events.join().unwrap();
    assert_eq!(code, 200);
    assert!(
        stream.contains("event: status") && stream.contains("event: end"),
        "{stream}"
    );
    assert!(stream.contains("\"cancelled\""), "{stream}");
}

#[test]
fn a_thousand_small_concurrent_jobs_all_finish_with_correct_values() {
    let dir = scratch("thousand");
    // Embedded mode: the coordinator and its two local worker processes.
    let c = Coordinator::start(
        &dir.join("db.sqlite"),
        &CoordOpts {
            local_workers: 2,
            ..Default::default()
        },
    );
    wait_until(Duration::from_secs(30), "local workers registered", || {
        c.workers() == 2
    });
    // Positions of tic-tac-toe with their values, computed in this process.
    let positions: Vec<String> = (1..=9)
        .flat_map(|a| {
            (1..=9)
                .filter(move |&b| b != a)
                .map(move |b| format!("{a}{b}"))
        })
        .chain((1..=9).map(|a| a.to_string()))
        .collect();
    let expected: std::collections::HashMap<String, Value> = positions
        .iter()
        .map(|p| {
            (
                p.clone(),
                local_value(&json!({"game": "tictactoe", "position": p, "algorithm": "alphabeta"})),
            )
        })
        .collect();
    let url = c.url.clone();
    let clients: Vec<_> = (0..8)
        .map(|k| {
            let positions = positions.clone();
            let url = url.clone();
            std::thread::spawn(move || {
                (0..125)
                    .map(|i| {
                        let p = positions[(k * 125 + i) % positions.len()].clone();
                        let algorithm = if i % 2 == 0 { "alphabeta" } else { "minimax" };
                        let job =
                            json!({"game": "tictactoe", "position": p, "algorithm": algorithm});
                        let (code, v) = http("POST", &format!("{url}/v1/jobs"), Some(&job), None);
                        assert_eq!(code, 201, "{v}");
                        (v["id"].as_u64().unwrap(), p)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let submitted: Vec<(u64, String)> = clients
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(submitted.len(), 1000);
    for (id, p) in &submitted {
        let st = c.wait_job(*id, LONG);
        assert_eq!(st["state"], "done", "{st}");
        assert_eq!(st["result"]["value"], expected[p], "job {id} position {p}");
    }
    let status = c.get("/v1/status", None).1;
    assert_eq!(status["queue_depth"], 0);
    assert_eq!(status["running"], 0, "nothing stuck: {status}");
}

/// Without `GAMESOLVER_WORKER_TOKEN` (and without `--insecure-workers`) the worker endpoints
/// refuse every outside client, while the coordinator's own local workers still run jobs.
#[test]
fn without_a_worker_token_only_local_workers_are_served() {
    let c = Coordinator::fresh(
        "worker-default",
        &CoordOpts {
            local_workers: 1,
            secure_default: true,
            ..Default::default()
        },
    );
    let reg = json!({"host": "outsider", "threads": 1});
    for t in [None, Some(""), Some("local-0000")] {
        let (code, v) = c.post("/v1/worker/register", &reg, t);
        assert_eq!(code, 401, "{v}");
        assert_eq!(v["error"]["code"], "unauthorized", "{v}");
    }
    let (code, v) = c.post(
        "/v1/worker/lease",
        &json!({"worker_id": "w-guess", "wait_ms": 10}),
        None,
    );
    assert_eq!(code, 401, "{v}");
    let id = c.submit(
        &json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"}),
        None,
    );
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], local_value(&st["job"]), "{st}");
    assert_eq!(c.workers(), 1, "only the local worker registered");
}

/// Finished jobs leave the coordinator's memory but every answer about them stays: status,
/// the event stream (one `end` event), the list with paging; across a restart as well.
#[test]
fn finished_jobs_answer_the_same_from_the_store_with_paging_and_events() {
    let dir = scratch("evicted");
    let db = dir.join("db.sqlite");
    let opts = CoordOpts {
        local_workers: 1,
        ..Default::default()
    };
    let mut c = Coordinator::start(&db, &opts);
    let mut ids = Vec::new();
    for pos in ["15", "1", "5"] {
        ids.push(c.submit(
            &json!({"game": "tictactoe", "position": pos, "algorithm": "alphabeta"}),
            None,
        ));
    }
    let settled = |st: &Value| {
        st["task_list"]
            .as_array()
            .is_some_and(|l| l.iter().all(|t| t["state"] != "running"))
    };
    let mut statuses: Vec<Value> = Vec::new();
    for id in &ids {
        let st = c.wait_job(*id, LONG);
        assert_eq!(st["state"], "done", "{st}");
        // A leftover probe may still report (as cancelled); compare once nothing runs.
        wait_until(LONG, "no task running", || {
            settled(&c.get(&format!("/v1/jobs/{id}"), None).1)
        });
        statuses.push(c.get(&format!("/v1/jobs/{id}"), None).1);
    }
    let check = |c: &Coordinator| {
        for (id, st) in ids.iter().zip(&statuses) {
            let (code, now) = c.get(&format!("/v1/jobs/{id}"), None);
            assert_eq!(code, 200);
            assert_eq!(&now, st, "status of job {id} changed");
            let (code, text) = raw("GET", &format!("{}/v1/jobs/{id}/events", c.url), None, None);
            assert_eq!(code, 200);
            assert!(text.contains("event: end"), "{text}");
            assert_eq!(text.matches("data:").count(), 1, "{text}");
        }
        let (_, page) = c.get("/v1/jobs?limit=2", None);
        let first: Vec<u64> = page["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["id"].as_u64().unwrap())
            .collect();
        assert_eq!(first, vec![ids[2], ids[1]], "{page}");
        let next = page["next_before"].as_u64().expect("a next page");
        let (_, page) = c.get(&format!("/v1/jobs?limit=2&before={next}"), None);
        assert_eq!(page["jobs"][0]["id"], ids[0], "{page}");
        assert!(page["next_before"].is_null(), "{page}");
        let (_, status) = c.get("/v1/status", None);
        assert_eq!(status["jobs"]["done"], 3, "{status}");
        let (code, v) = c.get("/v1/jobs?before=x", None);
        assert_eq!(code, 400, "{v}");
        assert_eq!(v["error"]["code"], "bad_request", "{v}");
    };
    check(&c);
    c.proc.terminate(Duration::from_secs(10));
    let c = Coordinator::start(&db, &opts);
    check(&c);
}
