//! End-to-end tests of parallel NRPA through the service (issue 6): two worker processes, the
//! shared-policy scheme across workers (`across=shared`, rounds), a coordinator killed with
//! SIGKILL mid-job and restarted on the same database, and the independent scheme (`runs=2`)
//! against one run of the same budget.

use gamesolver_e2e::*;
use serde_json::{json, Value};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(300);

/// The result of `job` computed in this process (same registry and planner).
fn local(job: &Value) -> gamesolver_shared::wire::JobResult {
    let spec: gamesolver_shared::wire::JobSpec =
        serde_json::from_value(job.clone()).expect("job spec");
    let prepared = gamesolver_shared::registry::prepare(&spec).expect("valid job");
    gamesolver_shared::plan::run_local(&*prepared, &gamesolver_shared::search::Control::unlimited())
        .expect("local run")
}

fn nrpa(options: Value) -> Value {
    json!({"game": "morpion", "game_params": {"variant": "5D"}, "position": "",
           "algorithm": "nrpa", "options": options})
}

/// Rounds on two worker processes; every process is killed after some rounds (the stored round
/// inputs are the checkpoints), the coordinator restarts on the same file, two new workers
/// finish the job, and the result is exactly the in-process run's (value, sequence, rollouts),
/// a position that replays to its score.
#[test]
fn shared_policy_rounds_on_two_workers_survive_a_coordinator_restart() {
    let dir = scratch("nrpa-rounds");
    let db = dir.join("db.sqlite");
    let opts = CoordOpts {
        parallelism: Some(2),
        lease_ms: Some(3000),
        ..Default::default()
    };
    let mut c = Coordinator::start(&db, &opts);
    let mut w1 = start_worker(&c.url, 1, &[]);
    let mut w2 = start_worker(&c.url, 1, &[]);
    wait_until(Duration::from_secs(30), "two workers registered", || {
        c.workers() == 2
    });
    let job = nrpa(json!({"level": "3", "iterations": "24", "seed": "2",
                          "runs": "2", "across": "shared"}));
    let id = c.submit(&job, None);
    wait_until(LONG, "two rounds done", || {
        c.get(&format!("/v1/jobs/{id}"), None).1["tasks"]["done"]
            .as_u64()
            .unwrap_or(0)
            >= 4
    });
    c.proc.kill9();
    w1.kill9();
    w2.kill9();
    let c = Coordinator::start(
        &db,
        &CoordOpts {
            port: Some(c.port),
            ..opts
        },
    );
    let _w3 = start_worker(&c.url, 1, &[]);
    let _w4 = start_worker(&c.url, 1, &[]);
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    let want = local(&job);
    let got = &st["result"];
    assert_eq!(got["value"], want.value);
    assert_eq!(got["sequence"], want.extra.to_map()["sequence"]);
    assert_eq!(got["nodes"], want.nodes);
    assert_eq!(got["checkpoint"]["done"], 24);
    // The position replays to the score as a terminal game.
    let replay = json!({"game": "morpion", "game_params": {"variant": "5D"},
                        "position": got["position"], "algorithm": "nmcs",
                        "options": {"level": "0"}});
    let r = local(&replay);
    assert_eq!(r.value, want.value);
    assert_eq!(
        r.extra.to_map()["sequence"].as_array().map(Vec::len),
        Some(0)
    );
}

/// Independent runs on two worker processes: the best of two runs is at least the one run of
/// the same per-run budget (run 0 is that run).
#[test]
fn independent_runs_on_two_workers_are_at_least_as_good_as_one() {
    let c = Coordinator::fresh(
        "nrpa-runs",
        &CoordOpts {
            parallelism: Some(2),
            ..Default::default()
        },
    );
    let _workers = c.start_workers(2, 1);
    let base = json!({"level": "2", "iterations": "40", "seed": "7"});
    let one = local(&nrpa(base.clone()));
    let mut two = base;
    two["runs"] = "2".into();
    let id = c.submit(&nrpa(two), None);
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    let got = &st["result"];
    assert!(
        got["value"].as_f64() >= one.value.as_f64(),
        "{got} vs {one:?}"
    );
    assert_eq!(got["run_scores"][0], one.value);
    assert_eq!(got["nodes"], 2 * one.nodes);
}

/// Independent runs (`across=independent`) checkpoint through the store: each run reports its
/// policy and best sequences every 30 s, the coordinator stores them, and after coordinator
/// and workers are killed with SIGKILL, the restarted coordinator hands each unfinished run out
/// with its checkpoint. The result equals the uninterrupted in-process run (value, sequence,
/// every run's score) with fewer rollouts counted (the resumed runs did not start over).
#[test]
fn independent_runs_resume_from_stored_checkpoints_after_a_coordinator_restart() {
    let dir = scratch("nrpa-runs-restart");
    let db = dir.join("db.sqlite");
    let opts = CoordOpts {
        parallelism: Some(2),
        lease_ms: Some(3000),
        ..Default::default()
    };
    let mut c = Coordinator::start(&db, &opts);
    let mut w1 = start_worker(&c.url, 1, &[]);
    let mut w2 = start_worker(&c.url, 1, &[]);
    wait_until(Duration::from_secs(30), "two workers registered", || {
        c.workers() == 2
    });
    // Checkpoints every second (`checkpoint_s`), so a run must last longer than that: on a
    // machine fast enough to finish first, try again with twice the iterations.
    let mut iterations = 10;
    let (id, job) = loop {
        let job = nrpa(json!({"level": "3", "iterations": iterations.to_string(),
                              "seed": "5", "runs": "2", "checkpoint_s": "1"}));
        let id = c.submit(&job, None);
        let mut st = Value::Null;
        wait_until(Duration::from_secs(300), "both runs checkpointed", || {
            st = c.get(&format!("/v1/jobs/{id}"), None).1;
            st["progress"]["checkpointed_tasks"].as_u64() == Some(2) || st["state"] == "done"
        });
        if st["state"] != "done" {
            break (id, job);
        }
        iterations *= 2;
    };
    c.proc.kill9();
    w1.kill9();
    w2.kill9();
    let c = Coordinator::start(
        &db,
        &CoordOpts {
            port: Some(c.port),
            ..opts
        },
    );
    let _w3 = start_worker(&c.url, 1, &[]);
    let _w4 = start_worker(&c.url, 1, &[]);
    let st = c.wait_job(id, Duration::from_secs(900));
    assert_eq!(st["state"], "done", "{st}");
    let want = local(&job);
    let got = &st["result"];
    assert_eq!(got["value"], want.value);
    assert_eq!(got["sequence"], want.extra.to_map()["sequence"]);
    assert_eq!(got["run_scores"], want.extra["run_scores"]);
    assert!(
        got["nodes"].as_u64() < Some(want.nodes),
        "resumed runs count only their rollouts after the checkpoint: {} vs {}",
        got["nodes"],
        want.nodes
    );
    let replay = json!({"game": "morpion", "game_params": {"variant": "5D"},
                        "position": got["position"], "algorithm": "nmcs",
                        "options": {"level": "0"}});
    assert_eq!(local(&replay).value, want.value);
}
