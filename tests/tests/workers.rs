//! End-to-end tests of the coordinator's worker registry and of tasks whose worker died: real
//! coordinator and worker processes, real HTTP, a real SQLite file.

use gamesolver_e2e::*;
use serde_json::{json, Value};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(120);

/// Registers `n` workers that never come back (as many worker processes that started and
/// died would).
fn register_many(c: &Coordinator, n: usize) {
    for i in 0..n {
        let (code, v) = c.post(
            "/v1/worker/register",
            &json!({"host": format!("gone-{i}"), "threads": 1}),
            None,
        );
        assert_eq!(code, 200, "register {i}: {v}");
    }
}

/// The registry holds the live workers, not every registration: workers that stopped talking
/// are forgotten after two lease times, cycle after cycle, while a live worker (idle in its
/// long poll, which is longer than the lease time here) stays known and keeps solving jobs.
#[test]
fn workers_that_stop_heartbeating_are_forgotten_and_memory_stays_bounded() {
    let c = Coordinator::fresh(
        "worker-registry",
        &CoordOpts {
            lease_ms: Some(300),
            ..Default::default()
        },
    );
    let _live = c.start_workers(1, 1);
    for cycle in 0..3 {
        register_many(&c, 500);
        assert!(c.metric("gamesolver_workers_known") >= 1.0);
        wait_until(
            Duration::from_secs(30),
            "the dead registrations are forgotten",
            || c.metric("gamesolver_workers_known") <= 1.0,
        );
        assert_eq!(
            c.workers(),
            1,
            "cycle {cycle}: the live worker is still known"
        );
        let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
        let id = c.submit(&job, None);
        let st = c.wait_job(id, LONG);
        assert_eq!(st["state"], "done", "cycle {cycle}: {st}");
        assert_eq!(st["result"]["value"], local_value(&job), "{st}");
    }
    assert_eq!(c.metric("gamesolver_workers_known"), 1.0);
}

fn finished_ms(st: &Value) -> u64 {
    st["finished_ms"].as_u64().expect("finished_ms")
}

/// With `--parallelism` equal to the worker slots, a task whose worker was killed goes back to
/// the head of the queue when its lease expires: the next free slot runs it before tasks that
/// were submitted after it, instead of leaving its job waiting behind all of them.
#[test]
fn an_expired_task_is_offered_before_newer_tasks() {
    let c = Coordinator::fresh(
        "expired-first",
        &CoordOpts {
            lease_ms: Some(1500),
            parallelism: Some(1),
            ..Default::default()
        },
    );
    let mut w1 = start_worker(&c.url, 1, &[]);
    // One task of a few seconds (minimax, m,n,k 4x4 after six moves; see service.rs).
    let slow = json!({"game": "mnk", "game_params": {"m": 4, "n": 4, "k": 4},
        "position": "1,6,11,16,2,3", "algorithm": "minimax"});
    let a = c.submit(&slow, None);
    wait_until(
        Duration::from_secs(30),
        "the task runs on the first worker",
        || c.get(&format!("/v1/jobs/{a}"), None).1["tasks"]["running"] == 1,
    );
    w1.kill9();
    // Newer single-task jobs queue up behind the running one.
    let quick = json!({"game": "tictactoe", "position": "", "algorithm": "minimax"});
    let later: Vec<u64> = (0..3).map(|_| c.submit(&quick, None)).collect();
    wait_until(
        Duration::from_secs(30),
        "the dead worker's lease expires",
        || c.metric("gamesolver_leases_expired_total") >= 1.0,
    );
    let _w2 = start_worker(&c.url, 1, &[]);
    let st_a = c.wait_job(a, LONG);
    assert_eq!(st_a["state"], "done", "{st_a}");
    assert_eq!(st_a["task_list"][0]["attempts"], 2, "{st_a}");
    for id in later {
        let st = c.wait_job(id, LONG);
        assert_eq!(st["state"], "done", "{st}");
        assert!(
            finished_ms(&st) >= finished_ms(&st_a),
            "job {id} ran before the expired task: {st} / {st_a}"
        );
    }
}
