//! Job-level proof-number search (`jlpns`, issue #25) through the service: a real coordinator
//! on a real SQLite file, two real worker processes, and the coordinator killed (SIGKILL) in the
//! middle of the job. The restarted coordinator rebuilds the job-level tree from the stored tasks
//! and results, and the job ends with the published score.

use gamesolver_e2e::*;
use serde_json::{json, Value};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(300);

/// Line `index` of one of Pons' sets with its published score.
fn pons(set: &str, index: usize) -> (String, i64) {
    let data = gamesolver_shared::games::data::data_dir();
    let path = data.join("connect4").join(set);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let line = text.lines().nth(index).expect("a line");
    let (moves, score) = line.split_once(' ').expect("moves and score");
    (moves.to_string(), score.trim().parse().expect("score"))
}

fn tasks_done(st: &Value) -> u64 {
    st["tasks"]["done"].as_u64().unwrap_or(0)
}

#[test]
fn kill_9_of_the_coordinator_mid_jlpns_job_resumes_the_tree_and_agrees() {
    let dir = scratch("jlpns-kill-coordinator");
    let db = dir.join("db.sqlite");
    let opts = CoordOpts {
        lease_ms: Some(3000),
        ..Default::default()
    };
    let mut c = Coordinator::start(&db, &opts);
    let _w = c.start_workers(2, 1);
    // A hard opening position, exact, with a small budget: about 2,000 leaf tasks and seconds
    // of work, so the job is still running when ten are done (easier positions end in a few
    // dozen tasks, before the kill).
    let (moves, want) = pons("Test_L1_R3", 0);
    let job = json!({
        "game": "connect4", "position": moves, "algorithm": "jlpns",
        "options": {"leaf": "alphabeta", "budget": 20000}
    });
    let id = c.submit(&job, None);
    wait_until(Duration::from_secs(120), "some leaf tasks are done", || {
        let st = c.get(&format!("/v1/jobs/{id}"), None).1;
        assert_ne!(st["state"], "failed", "{st}");
        tasks_done(&st) >= 10
    });
    let before = c.get(&format!("/v1/jobs/{id}"), None).1;
    assert_ne!(before["state"], "done", "the job must still run: {before}");
    c.proc.kill9();
    let c = Coordinator::start(
        &db,
        &CoordOpts {
            port: Some(c.port),
            ..opts
        },
    );
    // Nothing answered is lost: the restarted store has at least the tasks done before.
    let after = c.get(&format!("/v1/jobs/{id}"), None).1;
    let done = |st: &Value| st["tasks"]["done"].as_u64().unwrap_or(0);
    assert!(
        done(&after) >= done(&before),
        "before {before}\nafter {after}"
    );
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], json!(want), "{st}");
    assert_eq!(st["result"]["bounds"], json!([want, want]), "{st}");
}

/// The same on a long job, with the defaults (no options beyond game, position and algorithm):
/// Connect Four after `13` (value -1; `alphabeta` says the same), about 30 CPU s of alpha-beta
/// leaves, dozens of leaf tasks over several thresholds. The coordinator is killed once a dozen
/// leaf tasks are answered; the restarted coordinator rebuilds the tree from the store (at least
/// as many nodes, answered leaves and decided thresholds as before the kill, not a fresh root)
/// and the job ends with the value.
#[test]
fn kill_9_of_the_coordinator_in_a_long_jlpns_job_resumes_and_agrees() {
    let dir = scratch("jlpns-kill-coordinator-long");
    let db = dir.join("db.sqlite");
    let opts = CoordOpts {
        lease_ms: Some(3000),
        ..Default::default()
    };
    let mut c = Coordinator::start(&db, &opts);
    let _w = c.start_workers(2, 1);
    let job = json!({"game": "connect4", "position": "13", "algorithm": "jlpns"});
    let id = c.submit(&job, None);
    let figure = |st: &Value, key: &str| st["progress"][key].as_u64().unwrap_or(0);
    wait_until(Duration::from_secs(600), "the tree has grown", || {
        let st = c.get(&format!("/v1/jobs/{id}"), None).1;
        assert_ne!(st["state"], "failed", "{st}");
        assert_ne!(st["state"], "done", "the job ended before the kill: {st}");
        tasks_done(&st) >= 12 && figure(&st, "tree_nodes") >= 8
    });
    let before = c.get(&format!("/v1/jobs/{id}"), None).1;
    c.proc.kill9();
    let c = Coordinator::start(
        &db,
        &CoordOpts {
            port: Some(c.port),
            ..opts
        },
    );
    let after = c.get(&format!("/v1/jobs/{id}"), None).1;
    assert!(
        tasks_done(&after) >= tasks_done(&before),
        "before {before}\nafter {after}"
    );
    if after["state"] != "done" {
        for key in ["tree_nodes", "thresholds_done", "leaf_tasks"] {
            assert!(
                figure(&after, key) >= figure(&before, key),
                "{key}: before {before}\nafter {after}"
            );
        }
    }
    let st = c.wait_job(id, Duration::from_secs(1200));
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], json!(-1), "{st}");
    assert_eq!(st["result"]["bounds"], json!([-1, -1]), "{st}");
}

/// An exact Othello `jlpns` job through the service with two one-slot workers: FFO #40 after
/// three moves of its line (17 empty squares), the default kernels (df-pn at 17 empties, the
/// end-game solver at 16 or fewer) with a small budget so that the tree has many leaves; the
/// value equals the in-process exact alpha-beta value.
#[test]
fn othello_jlpns_through_the_service_is_exact() {
    use gamesolver_shared::{plan::run_local, registry::prepare, search::Control, wire::JobSpec};
    let position = "O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X a2b1c1";
    let exact = {
        let job = JobSpec::new("othello", position, "alphabeta");
        let prepared = prepare(&job).unwrap();
        run_local(prepared.as_ref(), &Control::unlimited())
            .unwrap()
            .value
    };
    let dir = scratch("jlpns-othello");
    let c = Coordinator::start(&dir.join("db.sqlite"), &CoordOpts::default());
    let _w = c.start_workers(2, 1);
    let job = json!({
        "game": "othello", "position": position, "algorithm": "jlpns",
        "options": {"budget": 20000}
    });
    let id = c.submit(&job, None);
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], exact, "{st}");
    assert!(st["result"]["leaf_tasks"].as_u64().unwrap() > 1, "{st}");
}
