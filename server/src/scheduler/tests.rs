//! Unit tests of the scheduler alone, on a store in a temporary file: leases and reports, restarts
//! and failed commits, quotas, eviction, background work, time limits and cancels.

use super::report::HOLD_FOR_REPORTER;
use super::submit::REST_BYTES;
use super::*;
use gamesolver_shared::registry;
use gamesolver_shared::wire::protocol::Lease as LeaseGrant;
use gamesolver_shared::wire::TaskOutput;
use serde_json::json;
use std::time::Duration;

/// An answer as the JSON a client reads.
fn v<T: serde::Serialize>(answer: T) -> Value {
    serde_json::to_value(answer).unwrap()
}
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::protocol::{Heartbeat, Outcome, Register, Report};

fn db(name: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("gs-sched-{name}-{}.db", std::process::id()));
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", p.display()));
    }
    p
}

fn open(path: &std::path::Path, parallelism: usize) -> Scheduler {
    let config = SchedConfig {
        parallelism: Some(parallelism),
        ..SchedConfig::default()
    };
    Scheduler::open(Store::open(path).unwrap(), config).unwrap()
}

fn submit(s: &mut Scheduler, job: Value) -> u64 {
    let spec: JobSpec = serde_json::from_value(job).unwrap();
    let prepared = registry::prepare(&spec).unwrap();
    s.submit(spec, prepared).unwrap()
}

fn worker(s: &mut Scheduler) -> String {
    s.register(Register {
        host: "test".into(),
        threads: 4,
        version: String::new(),
    })
    .unwrap()
    .worker_id
}

/// Leases every queued task and runs each with the real kernel: (lease, output).
fn lease_and_run(s: &mut Scheduler, w: &str) -> Vec<(LeaseGrant, TaskOutput)> {
    let mut out = Vec::new();
    while let Some(grant) = s.lease(w).unwrap() {
        let output = run_grant(&grant);
        out.push((grant, output));
    }
    out
}

/// Runs one leased task with the real kernel.
fn run_grant(grant: &LeaseGrant) -> TaskOutput {
    registry::prepare(&grant.task.job)
        .unwrap()
        .run(&grant.task.kind, &Control::with_limits(None, None))
        .unwrap()
}

fn report_done(s: &mut Scheduler, w: &str, lease: &str, output: TaskOutput) -> bool {
    s.report(Report {
        worker_id: w.into(),
        lease_id: lease.into(),
        outcome: Outcome::Done { output },
        proved: Vec::new(),
    })
    .unwrap()
    .duplicate
}

fn target(kind: &TaskKind) -> i64 {
    match kind {
        TaskKind::Probe { target } => *target as i64,
        _ => panic!("expected probes, got {kind:?}"),
    }
}

/// A job-level plan keeps more than [`MAX_PARALLELISM`] leaves in flight when the slots
/// are there (up to its own cap, here the configured 40).
#[test]
fn job_level_plans_go_past_the_probe_cap() {
    let path = db("jlcap");
    let mut s = open(&path, 40);
    let w = worker(&mut s);
    submit(
        &mut s,
        json!({"game": "connect4", "position": "13712", "algorithm": "jlpns",
               "options": {"leaf": "alphabeta", "budget": 1}}),
    );
    let mut most = 0;
    for _ in 0..4 {
        let runs = lease_and_run(&mut s, &w);
        most = most.max(runs.len());
        for (grant, out) in runs {
            report_done(&mut s, &w, &grant.lease_id, out);
        }
    }
    assert!(
        most > MAX_PARALLELISM && most <= 40,
        "{most} leaves in flight"
    );
    drop(s);
    let _ = std::fs::remove_file(&path);
}

/// X (to move) completes the top row: value +1. With two probes in flight, the proof of
/// the highest target makes the other obsolete; its result, arriving later, must count as
/// cancelled, not done, and must not be stored.
#[test]
fn an_obsolete_probe_that_finishes_counts_as_cancelled_not_done() {
    let path = db("obsolete");
    let mut s = open(&path, 2);
    let w = worker(&mut s);
    let id = submit(
        &mut s,
        json!({"game": "tictactoe", "position": "1425", "algorithm": "alphabeta"}),
    );
    let mut runs = lease_and_run(&mut s, &w);
    assert!(runs.len() >= 2, "expected two probes in flight");
    runs.sort_by_key(|(g, _)| -target(&g.task.kind));
    let mut accepted = 0;
    let mut flagged = 0;
    for (grant, output) in runs {
        let cancel = s
            .heartbeat(Heartbeat {
                worker_id: w.clone(),
                lease_id: grant.lease_id.clone(),
                progress: None,
            })
            .unwrap()
            .cancel;
        if cancel {
            flagged += 1;
        } else {
            accepted += 1;
        }
        assert!(!report_done(&mut s, &w, &grant.lease_id, output));
        assert_eq!(
            s.stored_results(grant.task_id).unwrap(),
            u64::from(!cancel),
            "a result is stored only when it was used"
        );
    }
    assert!(flagged >= 1, "no probe became obsolete");
    let st = v(s.job_status(id).unwrap());
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], 1, "{st}");
    let t = &st["tasks"];
    assert_eq!(t["done"], accepted, "{st}");
    assert_eq!(t["cancelled"], flagged, "{st}");
    let sum: u64 = ["queued", "running", "done", "failed", "cancelled"]
        .iter()
        .map(|k| t[*k].as_u64().unwrap())
        .sum();
    assert_eq!(
        t["total"].as_u64(),
        Some(sum),
        "each task counted once: {st}"
    );
    drop(s);
    let _ = std::fs::remove_file(&path);
}

/// Probe targets are named in the job's value scale (a Connect Four score, not the internal
/// x100 integer), the same while the job runs, once it ended, and once it was evicted.
#[test]
fn probe_tasks_show_targets_in_the_job_value_scale() {
    let path = db("scale");
    let mut s = open(&path, 2);
    let w = worker(&mut s);
    // A middle-game position (Pons' Test_L2_R1, first line): score 4 for the side to move.
    let id = submit(
        &mut s,
        json!({"game": "connect4", "position": "5554224333234511764415115", "algorithm": "alphabeta"}),
    );
    let whats = |s: &Scheduler| -> Vec<String> {
        let st = v(s.job_status(id).unwrap());
        st["task_list"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["what"].as_str().unwrap().to_string())
            .collect()
    };
    let running = whats(&s);
    assert!(!running.is_empty());
    for what in &running {
        let v: i64 = what
            .strip_prefix("probe value >= ")
            .unwrap_or_else(|| panic!("not a probe: {what}"))
            .parse()
            .unwrap_or_else(|_| panic!("not a score: {what}"));
        assert!(v.abs() <= 21, "{what} is not on the score scale");
    }
    loop {
        let runs = lease_and_run(&mut s, &w);
        if runs.is_empty() {
            break;
        }
        for (grant, output) in runs {
            report_done(&mut s, &w, &grant.lease_id, output);
        }
    }
    let st = v(s.job_status(id).unwrap());
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], 4, "{st}");
    let ended = whats(&s);
    assert!(ended.starts_with(&running), "{running:?} then {ended:?}");
    s.take_effects();
    assert_eq!(s.resident().0, 0, "the ended job was evicted");
    assert_eq!(whats(&s), ended, "the store names tasks the same way");
    drop(s);
    let _ = std::fs::remove_file(&path);
}

/// A running task shows its worker's latest progress in the task list; a finished one
/// does not.
#[test]
fn running_tasks_show_their_progress() {
    let path = db("taskprog");
    let mut s = open(&path, 1);
    let w = worker(&mut s);
    let id = submit(
        &mut s,
        json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"}),
    );
    let grant = s.lease(&w).unwrap().expect("a task");
    let progress_of = |s: &Scheduler| -> Value {
        let st = v(s.job_status(id).unwrap());
        let list = st["task_list"].as_array().unwrap();
        let t = list
            .iter()
            .find(|t| t["id"] == grant.task_id)
            .expect("the leased task is listed");
        t["progress"].clone()
    };
    assert_eq!(progress_of(&s), Value::Null, "nothing reported yet");
    let report = json!({"nodes": 12_345, "elapsed_ms": 1_000, "nodes_per_s": 12_345});
    s.heartbeat(Heartbeat {
        worker_id: w.clone(),
        lease_id: grant.lease_id.clone(),
        progress: Some(report.clone()),
    })
    .unwrap();
    assert_eq!(progress_of(&s), report);
    let output = run_grant(&grant);
    report_done(&mut s, &w, &grant.lease_id, output);
    assert_eq!(progress_of(&s), Value::Null, "a done task shows none");
    drop(s);
    let _ = std::fs::remove_file(&path);
}

/// A task's times are its latest lease's: handed out, ended, and the run time between
/// (so far while it runs). The status (memory), the task page (the store's leases) and a
/// restarted coordinator (a task still running) say the same.
#[test]
fn task_rows_carry_their_lease_times_through_a_restart() {
    let path = db("tasktimes");
    let mut s = open(&path, 1);
    let w = worker(&mut s);
    let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
    let id = submit(&mut s, job.clone());
    let row = |s: &Scheduler, id: u64, task: u64| -> Value {
        let st = v(s.job_status(id).unwrap());
        st["task_list"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == task)
            .expect("the task is listed")
            .clone()
    };
    let before = now_ms();
    let grant = s.lease(&w).unwrap().expect("a task");
    let running = row(&s, id, grant.task_id);
    let started = running["started_ms"].as_u64().expect("started");
    assert!(started >= before, "{running}");
    assert!(running["ended_ms"].is_null(), "{running}");
    assert!(
        running["run_ms"].is_u64(),
        "a running task's time so far: {running}"
    );
    report_done(&mut s, &w, &grant.lease_id, run_grant(&grant));
    let done = row(&s, id, grant.task_id);
    let ended = done["ended_ms"].as_u64().expect("ended");
    assert_eq!(done["started_ms"].as_u64(), Some(started), "{done}");
    assert!(ended >= started, "{done}");
    assert_eq!(done["run_ms"].as_u64(), Some(ended - started), "{done}");
    let page = task_page(&s.store.queries(), id, 0, 1000).unwrap();
    let stored = page
        .tasks
        .iter()
        .find(|t| t.id == grant.task_id)
        .expect("stored");
    assert_eq!(
        (stored.started_ms, stored.ended_ms, stored.run_ms),
        (Some(started), Some(ended), Some(ended - started))
    );
    // A task never leased has no times.
    for t in page.tasks.iter().filter(|t| t.workers.is_empty()) {
        assert_eq!((t.started_ms, t.ended_ms, t.run_ms), (None, None, None));
    }
    // A job still running when the coordinator stops: its task's lease comes back.
    let id2 = submit(&mut s, job);
    let grant2 = loop {
        let g = s.lease(&w).unwrap().expect("a task");
        let j = s.tasks[&g.task_id].job_id;
        if j == id2 {
            break g;
        }
        report_done(&mut s, &w, &g.lease_id, run_grant(&g));
    };
    let started2 = row(&s, id2, grant2.task_id)["started_ms"].as_u64().unwrap();
    drop(s);
    let s = open(&path, 1);
    let back = row(&s, id2, grant2.task_id);
    assert_eq!(back["state"], "running", "{back}");
    assert_eq!(back["started_ms"].as_u64(), Some(started2), "{back}");
    assert!(
        back["ended_ms"].is_null() && back["run_ms"].is_u64(),
        "{back}"
    );
    drop(s);
    let _ = std::fs::remove_file(&path);
}

/// Finished jobs leave memory, and every answer about them stays the same: status, list
/// with paging, counts, a duplicate report on one of their leases, and all of it after a
/// restart too.
#[test]
fn finished_jobs_are_evicted_and_answered_from_the_store() {
    let path = db("evict");
    let mut s = open(&path, 2);
    let w = worker(&mut s);
    let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
    let mut ids = Vec::new();
    let mut before_eviction = Vec::new();
    let mut last_lease = String::new();
    for _ in 0..3 {
        let id = submit(&mut s, job.clone());
        s.take_effects();
        for (grant, output) in lease_and_run(&mut s, &w) {
            report_done(&mut s, &w, &grant.lease_id, output);
            last_lease = grant.lease_id;
        }
        // The status as the resident job gives it, before the effects evict it.
        let st = v(s.job_status(id).unwrap());
        assert_eq!(st["state"], "done", "{st}");
        s.take_effects();
        ids.push(id);
        before_eviction.push(st);
    }
    // One job still queued stays resident.
    let queued = submit(&mut s, job.clone());
    s.take_effects();
    let (jobs, _) = s.resident();
    assert_eq!(jobs, 1, "only the queued job stays in memory");
    for (id, st) in ids.iter().zip(&before_eviction) {
        assert_eq!(&v(s.job_status(*id).unwrap()), st);
        assert_eq!(s.job_final(*id), Some(true));
    }
    assert_eq!(s.job_final(queued), Some(false));
    assert!(
        matches!(s.cancel(ids[0]), Err(SchedError::Conflict(m)) if m.contains("already ended (done)"))
    );
    assert!(matches!(s.cancel(999), Err(SchedError::NotFound(_))));
    assert_eq!(s.job_final(999), None);
    assert!(matches!(s.job_status(999), Err(SchedError::NotFound(_))));
    // A report posted again on an evicted job's lease is still a duplicate; another
    // worker's is still refused.
    assert!(report_done(&mut s, &w, &last_lease, TaskOutput::default()));
    let other = worker(&mut s);
    let refused = s.report(Report {
        worker_id: other,
        lease_id: last_lease.clone(),
        outcome: Outcome::Cancelled,
        proved: Vec::new(),
    });
    assert!(
        matches!(&refused, Err(SchedError::Conflict(m)) if m.contains("another worker")),
        "{refused:?}"
    );
    // List: newest first, paged.
    let page = v(s.list(2, None).unwrap());
    let got: Vec<u64> = page["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_u64().unwrap())
        .collect();
    assert_eq!(got, vec![queued, ids[2]]);
    let next = page["next_before"].as_u64().unwrap();
    let page2 = v(s.list(2, Some(next)).unwrap());
    let got2: Vec<u64> = page2["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_u64().unwrap())
        .collect();
    assert_eq!(got2, vec![ids[1], ids[0]]);
    assert!(page2["jobs"][0]["summary"]
        .as_str()
        .unwrap()
        .contains("value"));
    let counts = v(s.status())["jobs"].clone();
    assert_eq!(counts, json!({"done": 3, "queued": 1}));
    // After a restart: nothing finished is loaded, the answers are the same, ids go on.
    drop(s);
    let mut s = open(&path, 2);
    assert_eq!(s.resident().0, 1);
    for (id, st) in ids.iter().zip(&before_eviction) {
        assert_eq!(&v(s.job_status(*id).unwrap()), st);
    }
    assert_eq!(v(s.status())["jobs"], counts);
    let next_id = submit(&mut s, job);
    assert_eq!(next_id, queued + 1);
    drop(s);
    let _ = std::fs::remove_file(&path);
}

/// A prepared job for tests of the scheduler's own logic: a plan of any shape, outputs
/// posted by the test, and a result check that refuses everything when `refuse` is set.
struct Stub {
    job: JobSpec,
    shape: registry::PlanShape,
    refuse: Option<String>,
}

impl PreparedJob for Stub {
    fn job(&self) -> &JobSpec {
        &self.job
    }
    fn plan_shape(&self) -> registry::PlanShape {
        self.shape.clone()
    }
    fn run(&self, _task: &TaskKind, _ctl: &Control) -> Result<TaskOutput, registry::SolveError> {
        Ok(TaskOutput::default())
    }
    fn check_output(&self, _task: &TaskKind, _out: &TaskOutput) -> Result<(), String> {
        match &self.refuse {
            Some(why) => Err(why.clone()),
            None => Ok(()),
        }
    }
}

fn stub_spec() -> JobSpec {
    serde_json::from_value(json!({"game": "tictactoe", "algorithm": "minimax"})).unwrap()
}

fn submit_stub(s: &mut Scheduler, shape: registry::PlanShape, refuse: Option<&str>) -> u64 {
    let stub = Stub {
        job: stub_spec(),
        shape,
        refuse: refuse.map(str::to_string),
    };
    s.submit(stub_spec(), Box::new(stub)).unwrap()
}

fn output(value: i64) -> TaskOutput {
    TaskOutput {
        value: value.into(),
        ..TaskOutput::default()
    }
}

fn open_with(path: &std::path::Path, config: SchedConfig) -> Scheduler {
    Scheduler::open(Store::open(path).unwrap(), config).unwrap()
}

/// The state a client and a worker can observe, for comparing a scheduler with another. A
/// running task's `run_ms` is a clock reading taken with the status (now minus its start), not
/// state: two looks a millisecond apart differ in it, so it is left out.
fn observed(s: &mut Scheduler, job: u64) -> Value {
    let st = v(s.status());
    let mut status = v(s.job_status(job).unwrap());
    for task in status["task_list"].as_array_mut().into_iter().flatten() {
        if task["state"] == "running" {
            task["run_ms"] = Value::Null;
        }
    }
    json!({
        "job": status,
        "queue_depth": st["queue_depth"],
        "running": st["running"],
        "jobs": st["jobs"],
        "leases": s.leases.keys().collect::<BTreeSet<_>>(),
    })
}

/// A commit that fails in submit, lease, heartbeat or report leaves memory equal to what a
/// fresh open of the same file gives (the store is the truth), answers a store error, and
/// the same call succeeds when tried again.
#[test]
fn a_failed_commit_leaves_memory_as_the_store_has_it() {
    let path = db("failcommit");
    let mut s = open(&path, 1);
    let w = worker(&mut s);
    let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
    let spec: JobSpec = serde_json::from_value(job.clone()).unwrap();
    let compare = |s: &mut Scheduler, id: u64, what: &str| {
        let mut fresh = open(&path, 1);
        assert_eq!(
            observed(s, id),
            observed(&mut fresh, id),
            "after a failed {what}"
        );
    };
    // Submit: nothing of the job stays.
    s.store.fail_next_commit();
    let refused = s.submit(spec.clone(), registry::prepare(&spec).unwrap());
    assert!(matches!(refused, Err(SchedError::Store(_))), "{refused:?}");
    assert_eq!(s.resident().0, 0);
    let id = submit(&mut s, job);
    compare(&mut s, id, "submit");
    // Lease: the task is still queued, and no lease is held.
    s.store.fail_next_commit();
    assert!(matches!(s.lease(&w), Err(SchedError::Store(_))));
    assert_eq!(s.leases.len(), 0);
    assert_eq!(v(s.job_status(id).unwrap())["tasks"]["queued"], 1);
    compare(&mut s, id, "lease");
    let grant = s.lease(&w).unwrap().expect("the retry leases the task");
    // Heartbeat with progress.
    s.store.fail_next_commit();
    let hb = Heartbeat {
        worker_id: w.clone(),
        lease_id: grant.lease_id.clone(),
        progress: Some(json!({"nodes": 5})),
    };
    assert!(matches!(s.heartbeat(hb.clone()), Err(SchedError::Store(_))));
    compare(&mut s, id, "heartbeat");
    assert!(!s.heartbeat(hb).unwrap().cancel);
    // Report: the result is not taken, the lease stays active, a retry is accepted.
    let out = run_grant(&grant);
    s.store.fail_next_commit();
    let refused = s.report(Report {
        worker_id: w.clone(),
        lease_id: grant.lease_id.clone(),
        outcome: Outcome::Done {
            output: out.clone(),
        },
        proved: Vec::new(),
    });
    assert!(matches!(refused, Err(SchedError::Store(_))), "{refused:?}");
    assert_eq!(s.stored_results(grant.task_id).unwrap(), 0);
    assert_eq!(v(s.job_status(id).unwrap())["tasks"]["running"], 1);
    compare(&mut s, id, "report");
    assert!(!report_done(&mut s, &w, &grant.lease_id, out));
    assert_eq!(s.stored_results(grant.task_id).unwrap(), 1);
    drop(s);
    let _ = std::fs::remove_file(&path);
}

/// A job-level leaf picked near the leaf a worker just answered is held for that worker:
/// while it has a free slot, others pass it over (and are told when the hold ends), it
/// takes the task itself, and once the hold ends anyone may.
#[test]
fn a_leaf_picked_near_a_workers_last_one_is_held_for_it() {
    let path = db("hold");
    let mut s = open(&path, 2);
    let one_slot = |s: &mut Scheduler| {
        s.register(Register {
            host: "test".into(),
            threads: 1,
            version: String::new(),
        })
        .unwrap()
        .worker_id
    };
    let (a, b) = (one_slot(&mut s), one_slot(&mut s));
    submit(
        &mut s,
        json!({"game": "connect4", "algorithm": "jlpns",
            "options": {"leaf": "dfpn", "budget": "100", "target": "1"}}),
    );
    let root = s.lease(&a).unwrap().expect("the root leaf");
    assert!(s.lease(&b).unwrap().is_none(), "one leaf so far");
    let out = run_grant(&root);
    assert!(
        out.extra.children.is_some(),
        "100 nodes do not solve the start"
    );
    report_done(&mut s, &a, &root.lease_id, out);
    // Two leaves now, the first picked for a.
    let for_b = s.lease(&b).unwrap().expect("the leaf not held");
    assert!(s.lease(&b).unwrap().is_none(), "the other is held for a");
    assert!(
        s.passed_hold_until().is_some(),
        "b is told when the hold ends"
    );
    let for_a = s.lease(&a).unwrap().expect("a takes its leaf");
    assert_ne!(for_a.task_id, for_b.task_id);
    // b answers, then a: each gets the leaf picked for it, whoever asks first.
    report_done(&mut s, &b, &for_b.lease_id, run_grant(&for_b));
    report_done(&mut s, &a, &for_a.lease_id, run_grant(&for_a));
    let held: Vec<(u64, String)> = s
        .queue
        .iter()
        .filter_map(|t| {
            let task = &s.tasks[t];
            task.held_for.as_ref().map(|h| (*t, h.0.clone()))
        })
        .collect();
    assert_eq!(held.len(), 2, "one leaf held for each: {held:?}");
    let got_a = s.lease(&a).unwrap().expect("a's leaf");
    let got_b = s.lease(&b).unwrap().expect("b's leaf");
    for (grant, w) in [(&got_a, &a), (&got_b, &b)] {
        assert!(
            held.contains(&(grant.task_id, w.clone())),
            "{w} took another's"
        );
    }
    // A hold ends: a's next leaf goes to b after it.
    report_done(&mut s, &a, &got_a.lease_id, run_grant(&got_a));
    report_done(&mut s, &b, &got_b.lease_id, run_grant(&got_b));
    let mine = s.lease(&b).unwrap().expect("b's own leaf");
    assert!(s.lease(&b).unwrap().is_none(), "a's leaf is held");
    std::thread::sleep(HOLD_FOR_REPORTER + Duration::from_millis(50));
    assert!(s.lease(&b).unwrap().is_some(), "the hold has ended");
    drop((mine, s));
    let _ = std::fs::remove_file(&path);
}

/// A job whose time is up does not hand out another task its plan would end on: the
/// coordinator ends the task itself (a job-level leaf with a one-node budget finishes inside
/// any remaining millisecond, so a worker would never see the limit), stores it like a
/// worker's report, and a restart replays it to the same end.
#[test]
fn a_job_past_its_time_limit_ends_without_another_lease() {
    let path = db("timeup");
    let mut s = open(&path, 1);
    let w = worker(&mut s);
    let job = json!({"game": "connect4", "algorithm": "jlpns", "options": {"budget": "1"},
        "limits": {"time_ms": 300}});
    let id = submit(&mut s, job);
    // Within the limit: leaves are leased and their results grow the tree.
    let grant = s.lease(&w).unwrap().expect("a leaf within the time limit");
    assert!(grant.time_ms.is_some_and(|t| t <= 300));
    let out = run_grant(&grant);
    assert!(!report_done(&mut s, &w, &grant.lease_id, out));
    std::thread::sleep(Duration::from_millis(350));
    assert!(s.lease(&w).unwrap().is_none(), "no lease past the limit");
    let st = v(s.job_status(id).unwrap());
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["stopped"], "time", "{st}");
    drop(s);
    let again = open(&path, 1);
    let st2 = v(again.job_status(id).unwrap());
    assert_eq!(st2["state"], "done");
    assert_eq!(st2["result"], st["result"]);
    drop(again);
    let _ = std::fs::remove_file(&path);
}

/// A result that fails the job's check is a failed attempt: not stored, the task is retried,
/// and after `max_attempts` the job fails naming the reason.
#[test]
fn a_result_that_fails_its_check_counts_as_a_failed_attempt() {
    let path = db("check");
    let mut s = open(&path, 1);
    let w = worker(&mut s);
    let id = submit_stub(
        &mut s,
        registry::PlanShape::Single,
        Some("value 7 is not a tic-tac-toe value"),
    );
    for attempt in 1..=DEFAULT_MAX_ATTEMPTS {
        let grant = s.lease(&w).unwrap().expect("the task is leased again");
        assert_eq!(grant.attempt, attempt);
        assert!(!report_done(&mut s, &w, &grant.lease_id, output(7)));
        assert_eq!(s.stored_results(grant.task_id).unwrap(), 0);
    }
    let st = v(s.job_status(id).unwrap());
    assert_eq!(st["state"], "failed", "{st}");
    let error = st["error"].as_str().unwrap();
    assert!(
        error.contains("value 7 is not a tic-tac-toe value") && error.contains("3 times"),
        "{error}"
    );
    assert_eq!(s.counters.results_invalid, u64::from(DEFAULT_MAX_ATTEMPTS));
    assert!(s.lease(&w).unwrap().is_none(), "nothing left to run");
    drop(s);
    let _ = std::fs::remove_file(&path);
}

/// A proof certificate is kept apart from the result: the stored result has none, the
/// artifact holds it; one over the size limit fails the attempt with a clear reason.
#[test]
fn a_proof_is_stored_as_an_artifact_not_in_the_result() {
    let path = db("proof");
    let config = SchedConfig {
        parallelism: Some(1),
        max_proof_bytes: 100,
        ..SchedConfig::default()
    };
    let mut s = open_with(&path, config);
    let w = worker(&mut s);
    let id = submit_stub(&mut s, registry::PlanShape::Single, None);
    let grant = s.lease(&w).unwrap().unwrap();
    let mut big = output(1);
    big.proof = Some(json!({"tree": "x".repeat(200)}));
    report_done(&mut s, &w, &grant.lease_id, big);
    let st = v(s.job_status(id).unwrap());
    assert_eq!(st["task_list"][0]["state"], "queued", "{st}");
    assert_eq!(s.stored_results(grant.task_id).unwrap(), 0);
    let why = st["task_list"][0]["last_error"].as_str().unwrap();
    assert!(why.contains("max-proof-bytes"), "{why}");
    let grant = s.lease(&w).unwrap().unwrap();
    let proof = json!({"format": "test", "tree": [1, 2, 3]});
    let mut out = output(1);
    out.proof = Some(proof.clone());
    report_done(&mut s, &w, &grant.lease_id, out);
    s.take_effects();
    let st = v(s.job_status(id).unwrap());
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], 1, "{st}");
    assert!(st["result"].get("proof").is_none(), "{st}");
    assert_eq!(super::proof(&s.store.queries(), id).unwrap(), proof);
    let stored = s.store.queries().job(id).unwrap().unwrap();
    assert!(!stored.result.unwrap().contains("tree"));
    // A job without one: 404.
    let other = submit_stub(&mut s, registry::PlanShape::Single, None);
    assert!(matches!(
        super::proof(&s.store.queries(), other),
        Err(SchedError::NotFound(m)) if m.contains("no proof")
    ));
    assert!(matches!(
        super::proof(&s.store.queries(), 999),
        Err(SchedError::NotFound(_))
    ));
    drop(s);
    let _ = std::fs::remove_file(&path);
}

/// Quotas: jobs not ended (429), spec bytes held (429, freed when a job is evicted),
/// tasks per job (400); each message names its limit.
#[test]
fn quotas_refuse_with_the_limit_named() {
    let path = db("quota");
    let small = serde_json::to_string(&stub_spec()).unwrap().len();
    let config = SchedConfig {
        parallelism: Some(1),
        max_queued_jobs: 2,
        max_tasks_per_job: 100,
        max_position_bytes: 10_000,
        ..SchedConfig::default()
    };
    assert!(small < 100);
    let mut s = open_with(&path, config);
    let w = worker(&mut s);
    let runs = |count| registry::PlanShape::Runs {
        count,
        base_seed: 1,
    };
    let refused = s.submit(
        stub_spec(),
        Box::new(Stub {
            job: stub_spec(),
            shape: runs(101),
            refuse: None,
        }),
    );
    assert!(
        matches!(&refused, Err(SchedError::BadInput(m)) if m.contains("max-tasks-per-job") && m.contains("101")),
        "{refused:?}"
    );
    let a = submit_stub(&mut s, runs(100), None);
    let mut held = stub_spec();
    held.position = "5".repeat(100);
    s.submit(
        held.clone(),
        Box::new(Stub {
            job: held,
            shape: registry::PlanShape::Single,
            refuse: None,
        }),
    )
    .unwrap();
    let refused = s.submit(stub_spec(), registry::prepare(&stub_spec()).unwrap());
    assert!(
        matches!(&refused, Err(SchedError::Quota(m)) if m.contains("max-queued-jobs")),
        "{refused:?}"
    );
    s.cancel(a).unwrap();
    s.take_effects();
    // Spec bytes: a large position does not fit next to what is held.
    let mut big = stub_spec();
    big.position = "1".repeat(9_950);
    let refused = s.submit(big.clone(), registry::prepare(&stub_spec()).unwrap());
    assert!(
        matches!(&refused, Err(SchedError::Quota(m)) if m.contains("max-position-bytes")),
        "{refused:?}"
    );
    // Once the other job is done and evicted, it fits.
    let grant = s.lease(&w).unwrap().unwrap();
    report_done(&mut s, &w, &grant.lease_id, output(0));
    s.take_effects();
    assert_eq!(s.resident().0, 0);
    assert!(s
        .submit(big, registry::prepare(&stub_spec()).unwrap())
        .is_ok());
    drop(s);
    let _ = std::fs::remove_file(&path);
}

/// A job of 2,000 tasks: memory holds the tasks in flight, not its history; the status
/// lists at most the latest finished ones with the full counts; the task pages list them
/// all; once finished, its status is one stored row (timed here against rebuilding it from
/// the task rows as the previous versions did).
#[test]
fn a_big_job_is_summarised_and_its_finished_status_is_one_query() {
    const N: u32 = 2000;
    let path = db("summary");
    let mut s = open(&path, 4);
    let w = worker(&mut s);
    let id = submit_stub(
        &mut s,
        registry::PlanShape::Runs {
            count: N,
            base_seed: 1,
        },
        None,
    );
    let mut most_resident = 0;
    let mut reported = 0;
    while let Some(grant) = s.lease(&w).unwrap() {
        report_done(
            &mut s,
            &w,
            &grant.lease_id,
            output(i64::from(grant.task_id as u32 % 7)),
        );
        reported += 1;
        most_resident = most_resident.max(s.resident().1);
        let st = v(s.job_status(id).unwrap());
        assert!(st["task_list"].as_array().unwrap().len() <= STATUS_RECENT_TASKS + 4);
        if reported == N / 2 {
            assert_eq!(st["tasks"]["done"], N / 2, "{}", st["tasks"]);
            assert_eq!(st["tasks"]["total"].as_u64().unwrap(), u64::from(N / 2) + 4);
        }
    }
    assert_eq!(reported, N);
    assert!(most_resident <= 8, "{most_resident} tasks held in memory");
    let resident = v(s.job_status(id).unwrap());
    assert_eq!(resident["state"], "done");
    assert_eq!(resident["tasks"]["done"], N);
    assert_eq!(resident["result"]["value"], 6);
    s.take_effects();
    assert_eq!(s.resident(), (0, 0));
    // The same status from the store.
    let reader = s.reader().unwrap();
    assert_eq!(v(stored_status(&reader.queries(), id).unwrap()), resident);
    // Every task, paged.
    let mut after = 0;
    let mut seen = 0;
    loop {
        let page = v(task_page(&reader.queries(), id, after, 300).unwrap());
        let tasks = page["tasks"].as_array().unwrap();
        for t in tasks {
            assert!(t["id"].as_u64().unwrap() > after);
            assert_eq!(t["state"], "done");
            assert_eq!(t["workers"], json!([w.clone()]));
        }
        seen += tasks.len();
        match page["next_after"].as_u64() {
            Some(n) => after = n,
            None => break,
        }
    }
    assert_eq!(seen, N as usize);
    assert!(matches!(
        task_page(&reader.queries(), 999, 0, 10),
        Err(SchedError::NotFound(_))
    ));
    // Timing: the stored final status against the rows it replaces (the older files' path,
    // which the previous versions took for every finished job, plus a prepare per read).
    let t0 = Instant::now();
    for _ in 0..20 {
        v(stored_status(&reader.queries(), id).unwrap());
    }
    let one_query = t0.elapsed() / 20;
    let t0 = Instant::now();
    for _ in 0..20 {
        s.store.job_tasks(id).unwrap();
    }
    let rows = t0.elapsed() / 20;
    // The previous versions' reads: every task row, then one lease query per task.
    let t0 = Instant::now();
    for _ in 0..20 {
        let tasks = s.store.queries().tasks(id, 0, usize::MAX).unwrap();
        let mut q = s
            .store
            .conn_for_tests()
            .prepare_cached("SELECT worker_id FROM leases WHERE task_id = ?1 ORDER BY rowid")
            .unwrap();
        for (t, _) in &tasks {
            let w: Vec<String> = q
                .query_map([t.id as i64], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(w.len(), 1);
        }
    }
    let per_task = t0.elapsed() / 20;
    eprintln!(
        "status of a finished job with {N} tasks: {one_query:?} (stored final status); its {N} task rows in two statements: {rows:?}; with a lease query per task (the previous reads): {per_task:?}"
    );
    // A job settled by an older version (no stored status) is answered from its rows, in
    // the same shape, without preparing it.
    s.store
        .conn_for_tests()
        .execute("UPDATE jobs SET final_status = NULL", [])
        .unwrap();
    assert_eq!(v(stored_status(&reader.queries(), id).unwrap()), resident);
    drop(s);
    let _ = std::fs::remove_file(&path);
}

/// The store's identity: different for two stores, kept when a store is opened again, and
/// sent in every lease.
#[test]
fn the_store_identity_is_random_kept_and_leased() {
    let (p1, p2) = (db("ident1"), db("ident2"));
    let id1 = Store::open(&p1).unwrap().identity().to_string();
    let id2 = Store::open(&p2).unwrap().identity().to_string();
    assert_ne!(id1, id2);
    assert!(id1.len() >= 32, "{id1}");
    assert_eq!(Store::open(&p1).unwrap().identity(), id1);
    let mut s = open(&p1, 1);
    let w = worker(&mut s);
    submit(
        &mut s,
        json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"}),
    );
    assert_eq!(s.lease(&w).unwrap().unwrap().store_id, id1);
    drop(s);
    for p in [p1, p2] {
        let _ = std::fs::remove_file(&p);
    }
}

/// A status never copies a huge position: it shows its start and its length.
#[test]
fn a_long_position_is_cut_in_the_status() {
    let path = db("longpos");
    let mut s = open(&path, 1);
    let mut spec = stub_spec();
    spec.position = "é".repeat(5000);
    let id = s
        .submit(
            spec.clone(),
            Box::new(Stub {
                job: spec,
                shape: registry::PlanShape::Single,
                refuse: None,
            }),
        )
        .unwrap();
    let st = v(s.job_status(id).unwrap());
    assert_eq!(st["position_bytes"], 10_000);
    let shown = st["job"]["position"].as_str().unwrap();
    assert!(shown.len() <= 256 && shown.starts_with("éé"), "{shown}");
    drop(s);
    let _ = std::fs::remove_file(&path);
}

/// A large job waits without its prepared form and gets it back at its first lease: the
/// status shows its progress meanwhile, and it runs to the right value.
#[test]
fn a_large_queued_job_rests_unprepared_until_leased() {
    let path = db("rest");
    let mut s = open(&path, 1);
    let w = worker(&mut s);
    // MAX over MIN nodes: MIN of each is its smallest leaf; the value is the largest of them.
    let mins: Vec<String> = (0..1200)
        .map(|i| format!("{{\"min\":[{},{},{}]}}", 1000 + i, 2000 + i, 5000 - i))
        .collect();
    let position = format!("{{\"max\":[{}]}}", mins.join(","));
    assert!(position.len() >= REST_BYTES);
    let id = submit(
        &mut s,
        json!({"game": "tree", "position": position, "algorithm": "minimax"}),
    );
    assert!(s.jobs[&id].prepared.is_none(), "a queued large job rests");
    let st = v(s.job_status(id).unwrap());
    assert_eq!(st["state"], "queued");
    assert!(st["progress"].is_object(), "{st}");
    let runs = lease_and_run(&mut s, &w);
    assert!(s.jobs[&id].prepared.is_some(), "prepared again when leased");
    for (grant, output) in runs {
        report_done(&mut s, &w, &grant.lease_id, output);
    }
    let st = v(s.job_status(id).unwrap());
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], 2199, "{st}");
    // A small job keeps its prepared form.
    let small = submit(
        &mut s,
        json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"}),
    );
    assert!(s.jobs[&small].prepared.is_some());
    drop(s);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn heavy_planning_work_is_handed_out_of_the_lock_and_taken_back() {
    let path = db("background");
    let mut s = open(&path, 1);
    s.set_background(true);
    let w = worker(&mut s);
    // A large job rests; its first lease hands its preparation out instead of doing it.
    let mins: Vec<String> = (0..1200)
        .map(|i| format!("{{\"min\":[{},{},{}]}}", 1000 + i, 2000 + i, 5000 - i))
        .collect();
    let position = format!("{{\"max\":[{}]}}", mins.join(","));
    let id = submit(
        &mut s,
        json!({"game": "tree", "position": position, "algorithm": "minimax"}),
    );
    assert!(
        s.lease(&w).unwrap().is_none(),
        "no lease while it is prepared"
    );
    let work = s.take_background();
    assert!(matches!(work.as_slice(), [Background::Prepare { .. }]));
    assert!(s.lease(&w).unwrap().is_none(), "handed out once");
    assert!(s.take_background().is_empty());
    for job in work {
        s.complete(job.run()).unwrap();
    }
    let runs = lease_and_run(&mut s, &w);
    assert!(!runs.is_empty());
    for (grant, output) in runs {
        report_done(&mut s, &w, &grant.lease_id, output);
    }
    // The plan is done; its result is made off the lock.
    let st = v(s.job_status(id).unwrap());
    assert_eq!(st["state"], "running", "{st}");
    let work = s.take_background();
    assert!(matches!(work.as_slice(), [Background::Finish { .. }]));
    // A result of work for a job as it no longer is (an old token) is dropped.
    let done: Vec<BackgroundDone> = work.into_iter().map(Background::run).collect();
    for d in done {
        s.complete(d).unwrap();
    }
    let st = v(s.job_status(id).unwrap());
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], 2199, "{st}");
    drop(s);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_finish_that_comes_back_after_a_cancel_is_dropped() {
    let path = db("background-cancel");
    let mut s = open(&path, 1);
    s.set_background(true);
    let w = worker(&mut s);
    let id = submit(
        &mut s,
        json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"}),
    );
    let mut work = Vec::new();
    while work.is_empty() {
        let runs = lease_and_run(&mut s, &w);
        assert!(!runs.is_empty(), "the plan goes on until it is done");
        for (grant, output) in runs {
            report_done(&mut s, &w, &grant.lease_id, output);
        }
        work = s.take_background();
    }
    assert_eq!(work.len(), 1);
    s.cancel(id).unwrap();
    for job in work {
        s.complete(job.run()).unwrap();
    }
    let st = v(s.job_status(id).unwrap());
    assert_eq!(st["state"], "cancelled", "{st}");
    assert!(st["result"].is_null(), "{st}");
    drop(s);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_worker_hears_which_of_its_tasks_to_cancel() {
    let path = db("cancels");
    let mut s = open(&path, 1);
    let w = worker(&mut s);
    let other = worker(&mut s);
    let id = submit(
        &mut s,
        json!({"game": "connect4", "position": "4453", "algorithm": "alphabeta"}),
    );
    let grant = s.lease(&w).unwrap().expect("a task");
    assert!(s.cancels_for(&w).unwrap().is_empty());
    assert!(!s.take_cancels());
    s.cancel(id).unwrap();
    assert!(s.take_cancels(), "a running task was told to stop");
    assert_eq!(s.cancels_for(&w).unwrap(), vec![grant.lease_id.clone()]);
    assert!(s.cancels_for(&other).unwrap().is_empty());
    s.report(Report {
        worker_id: w.clone(),
        lease_id: grant.lease_id,
        outcome: Outcome::Cancelled,
        proved: Vec::new(),
    })
    .unwrap();
    assert!(s.cancels_for(&w).unwrap().is_empty());
    assert!(matches!(
        s.cancels_for("nobody"),
        Err(SchedError::UnknownWorker(_))
    ));
    drop(s);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn jobs_whose_time_is_up_end_though_no_worker_asks() {
    let path = db("timed-out");
    let mut s = open(&path, 1);
    let probes = submit(
        &mut s,
        json!({"game": "connect4", "position": "", "algorithm": "alphabeta",
               "game_params": {"width": "8", "height": "7"}, "limits": {"time_ms": 1}}),
    );
    let runs = submit(
        &mut s,
        json!({"game": "connect4", "position": "", "algorithm": "mcts",
               "options": {"trees": 2, "tasks": 2}, "limits": {"time_ms": 1}}),
    );
    std::thread::sleep(Duration::from_millis(5));
    assert!(s.end_timed_out().unwrap() >= 2);
    let st = v(s.job_status(probes).unwrap());
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["stopped"], "time", "{st}");
    assert!(
        st["result"]["best_move"].is_null(),
        "no search for a job no worker ran: {st}"
    );
    let st = v(s.job_status(runs).unwrap());
    assert_eq!(st["state"], "failed", "{st}");
    assert!(st["error"].as_str().unwrap().contains("time limit"), "{st}");
    assert_eq!(s.end_timed_out().unwrap(), 0);
    drop(s);
    let _ = std::fs::remove_file(&path);
}
