//! End-to-end tests of the proof-number jobs (issue 4) on a real coordinator and a real worker
//! process: a memory limit too small for the proof ends the job with the memory-limit result
//! (not an error about the input, not a crash), and the same worker process goes on to finish
//! the next job.

use gamesolver_e2e::*;
use serde_json::json;
use std::time::Duration;

const LONG: Duration = Duration::from_secs(180);

/// Whether process `pid` is alive (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // Field 3 is the state; the command name before it is in parentheses.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn a_memory_limit_too_small_ends_the_exact_value_job_with_a_result_and_the_worker_lives_on() {
    let c = Coordinator::fresh("pn-memory", &CoordOpts::default());
    let w = c.start_workers(1, 1).remove(0);
    // Othello 6x6 from the start: its proof tree is far beyond 1 MiB (about 50 000 nodes).
    // Without `target` the planner runs threshold probes; the first one hits the limit. PN²
    // stops there too (it used to re-expand its first level for minutes under this budget).
    for alg in ["pns", "pn2"] {
        let job = json!({
            "game": "othello", "game_params": {"size": 6}, "position": "",
            "algorithm": alg, "options": {"memory_mb": 1}
        });
        let id = c.submit(&job, None);
        let st = c.wait_job(id, LONG);
        assert_eq!(
            st["state"], "done",
            "{alg}: a memory limit is a result: {st}"
        );
        let r = &st["result"];
        assert_eq!(r["stopped"], "memory", "{alg}: {st}");
        assert!(
            r["error"].as_str().unwrap_or("").contains("memory limit"),
            "{alg}: {st}"
        );
        assert_eq!(r["value"], serde_json::Value::Null, "{alg}: {st}");
        let b = r["bounds"].as_array().expect("bounds");
        assert!(
            b[0].as_i64().unwrap() < b[1].as_i64().unwrap(),
            "{alg}: {st}"
        );
        assert!(alive(w.pid()), "the worker process died");
    }
    // The same worker finishes the next job.
    let id2 = c.submit(
        &json!({"game": "tictactoe", "position": "", "algorithm": "pns"}),
        None,
    );
    let st2 = c.wait_job(id2, LONG);
    assert_eq!(st2["state"], "done", "{st2}");
    assert_eq!(st2["result"]["value"], 0, "{st2}");
    assert!(alive(w.pid()), "the worker process died");
    assert_eq!(c.workers(), 1);
}
