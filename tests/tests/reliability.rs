//! The reliability reproductions (second hostile review) against real processes: a real
//! coordinator, real worker processes, real HTTP on 127.0.0.1 and a real SQLite file.
//!
//! - A flood of jobs whose time is up before they start (each one's end used to run a
//!   100,000-node search under the scheduler's lock) and of large jobs that rest unprepared
//!   (prepared again under the lock when leased), while both real workers are busy: the status,
//!   an innocent worker's lease, heartbeat and result stay fast, and no innocent lease expires.
//! - A cancel reaches a running task within a second.
//! - A kernel that grows past the worker's `--memory-mb` fails its task with the reason; the
//!   worker lives on and solves the next job.

use gamesolver_e2e::*;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The tests of this file measure latencies and CPU: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

const LONG: Duration = Duration::from_secs(120);

/// A job that keeps a one-thread worker busy for minutes: Connect Four 8 x 7 from the empty
/// board (no opening book, far beyond minutes).
fn busy_job() -> Value {
    json!({"game": "connect4", "game_params": {"width": "8", "height": "7"},
           "position": "", "algorithm": "alphabeta", "limits": {"time_ms": 300_000}})
}

/// A `tree` job of about `bytes` bytes: MAX over MIN nodes of three leaves (its value is the
/// largest of the MINs' smallest leaves). Large enough to rest unprepared while it waits.
fn big_tree_job(bytes: usize, salt: i64) -> (Value, i64) {
    let mut mins = Vec::new();
    let mut len = 0;
    let mut best = i64::MIN;
    let mut i = 0i64;
    while len < bytes {
        let leaves = [1000 + i + salt, 2000 + i, 5000 - i];
        best = best.max(*leaves.iter().min().unwrap());
        let node = format!("{{\"min\":[{},{},{}]}}", leaves[0], leaves[1], leaves[2]);
        len += node.len() + 1;
        mins.push(node);
        i += 1;
    }
    let position = format!("{{\"max\":[{}]}}", mins.join(","));
    (
        json!({"game": "tree", "position": position, "algorithm": "minimax"}),
        best,
    )
}

/// Acts as a worker over raw HTTP: every call timed.
struct FakeWorker<'a> {
    c: &'a Coordinator,
    id: Value,
    lease: Latencies,
    heartbeat: Latencies,
    result: Latencies,
    refused: Vec<String>,
}

impl<'a> FakeWorker<'a> {
    fn register(c: &'a Coordinator) -> Self {
        let (code, reg) = c.post(
            "/v1/worker/register",
            &json!({"host": "innocent", "threads": 1}),
            None,
        );
        assert_eq!(code, 200, "register: {reg}");
        FakeWorker {
            c,
            id: reg["worker_id"].clone(),
            lease: Latencies::default(),
            heartbeat: Latencies::default(),
            result: Latencies::default(),
            refused: Vec::new(),
        }
    }

    fn timed(l: &mut Latencies, c: &Coordinator, path: &str, body: &Value) -> (u16, Value) {
        let t = Instant::now();
        let (code, v) = c.post(path, body, None);
        l.ms.push(t.elapsed().as_secs_f64() * 1e3);
        (code, v)
    }

    /// Leases one task (asking without waiting until one comes), heartbeats it, runs it with
    /// the real kernel here and reports it. Returns the task's job id.
    fn serve_one(&mut self, deadline: Instant) -> Option<u64> {
        let lease = loop {
            let (code, v) = Self::timed(
                &mut self.lease,
                self.c,
                "/v1/worker/lease",
                &json!({"worker_id": self.id, "wait_ms": 0}),
            );
            match code {
                200 => break v,
                204 if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                204 => return None,
                _ => panic!("lease: {code} {v}"),
            }
        };
        let lid = lease["lease_id"].clone();
        let (code, v) = Self::timed(
            &mut self.heartbeat,
            self.c,
            "/v1/worker/heartbeat",
            &json!({"worker_id": self.id, "lease_id": lid}),
        );
        if code != 200 {
            self.refused.push(format!("heartbeat {code} {v}"));
        }
        let spec: gamesolver_shared::wire::JobSpec =
            serde_json::from_value(lease["task"]["job"].clone()).expect("job");
        let kind: gamesolver_shared::wire::TaskKind =
            serde_json::from_value(lease["task"]["kind"].clone()).expect("kind");
        let ctl = gamesolver_shared::search::Control::with_limits(
            lease["time_ms"].as_u64().map(Duration::from_millis),
            None,
        );
        let outcome = match gamesolver_shared::registry::prepare(&spec)
            .expect("a leased job prepares")
            .run(&kind, &ctl)
        {
            Ok(output) => json!({"status": "done", "output": output}),
            Err(_) => json!({"status": "stopped", "reason": "time"}),
        };
        let (code, v) = Self::timed(
            &mut self.result,
            self.c,
            "/v1/worker/result",
            &json!({"worker_id": self.id, "lease_id": lid, "outcome": outcome}),
        );
        if code != 200 {
            self.refused.push(format!("result {code} {v}"));
        }
        lease["job_id"].as_u64()
    }
}

fn report(name: &str, l: &Latencies) -> f64 {
    let p99 = l.quantile(0.99);
    eprintln!(
        "{name}: {} calls, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms, failed {}",
        l.ms.len(),
        l.quantile(0.5),
        p99,
        l.quantile(1.0),
        l.failed
    );
    p99
}

#[test]
fn a_flood_of_heavy_jobs_stalls_no_one() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Two probes at a time: the busy job's two probes are all it ever has (each runs for
    // minutes), so what the innocent worker leases is the flood's and its own.
    let c = Coordinator::fresh(
        "rel-flood",
        &CoordOpts {
            parallelism: Some(2),
            // A slow hold of the scheduler's lock is logged with the place that took it.
            env: vec![("RUST_LOG".into(), "warn".into())],
            ..CoordOpts::default()
        },
    );
    let workers = c.start_workers(2, 1);
    // Busy workers stand for other machines: on this one they yield the CPU to the coordinator
    // and this test's clients, so what is measured is the coordinator, not the OS scheduler.
    for w in &workers {
        let _ = std::process::Command::new("renice")
            .args(["-n", "19", "-p", &w.pid().to_string()])
            .stdout(std::process::Stdio::null())
            .status();
    }
    let busy = c.submit(&busy_job(), None);
    wait_until(Duration::from_secs(30), "both workers busy", || {
        c.get(&format!("/v1/jobs/{busy}"), None).1["tasks"]["running"] == 2
    });
    let mut innocent = FakeWorker::register(&c);

    // Status reads all along.
    let stop = Arc::new(AtomicBool::new(false));
    let status = {
        let (url, stop) = (c.url.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut l = Latencies::default();
            while !stop.load(Ordering::Relaxed) {
                let t = Instant::now();
                let (code, _) = raw("GET", &format!("{url}/v1/status"), None, None);
                l.ms.push(t.elapsed().as_secs_f64() * 1e3);
                if code != 200 {
                    l.failed += 1;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            l
        })
    };
    // The flood: jobs whose time is up before they start, on a board where every search is
    // slow, and large jobs that rest unprepared until leased.
    let flood = {
        let url = c.url.clone();
        std::thread::spawn(move || {
            let mut ids = Vec::new();
            let mut trees = Vec::new();
            for i in 0..120 {
                let job = if i % 12 == 11 {
                    let (job, value) = big_tree_job(100_000, i);
                    trees.push(value);
                    job
                } else if i % 12 == 5 {
                    // Runs on the innocent worker until its limit stops it: its end searches
                    // for a move to answer with (on the planning thread, not under the lock).
                    json!({"game": "connect4", "game_params": {"width": "16", "height": "16"},
                           "position": "", "algorithm": "alphabeta",
                           "limits": {"time_ms": 300}})
                } else {
                    json!({"game": "connect4", "game_params": {"width": "16", "height": "16"},
                           "position": "", "algorithm": "alphabeta",
                           "limits": {"time_ms": 1}})
                };
                let (code, v) = http("POST", &format!("{url}/v1/jobs"), Some(&job), None);
                assert_eq!(code, 201, "flood job {i}: {v}");
                ids.push((v["id"].as_u64().unwrap(), job["game"] == "tree"));
            }
            (ids, trees)
        })
    };
    // The innocent worker serves whatever comes (the flood's large jobs among them) and
    // submits small jobs of its own, until the flood has been submitted and served.
    let mut mine = Vec::new();
    let started = Instant::now();
    while !flood.is_finished() || mine.len() < 30 {
        let (job, value) = big_tree_job(200, mine.len() as i64);
        let small = json!({"game": "tree", "position": job["position"], "algorithm": "minimax"});
        mine.push((c.submit(&small, None), value));
        let until = Instant::now() + Duration::from_secs(10);
        while let Some(j) = innocent.serve_one(until) {
            if j == mine.last().unwrap().0 {
                break;
            }
        }
        assert!(started.elapsed() < LONG, "the flood did not end in time");
    }
    let (flood_ids, _) = flood.join().expect("flood thread");
    eprintln!("flood submitted and served in {:?}", started.elapsed());
    // Serve what is left of the flood's large jobs.
    while innocent
        .serve_one(Instant::now() + Duration::from_millis(500))
        .is_some()
    {}
    stop.store(true, Ordering::Relaxed);
    let status = status.join().expect("status thread");

    for (id, value) in &mine {
        let st = c.wait_job(*id, LONG);
        assert_eq!(st["state"], "done", "{st}");
        assert_eq!(st["result"]["value"], *value, "{st}");
    }
    eprintln!("innocent jobs checked at {:?}", started.elapsed());
    for (id, tree) in &flood_ids {
        let st = c.wait_job(*id, LONG);
        assert_eq!(st["state"], "done", "flood job {id}: {st}");
        if !tree {
            assert_eq!(st["result"]["stopped"], "time", "{st}");
        }
    }
    eprintln!("flood jobs ended at {:?}", started.elapsed());
    assert!(
        innocent.refused.is_empty(),
        "innocent calls refused (an expired lease?): {:?}",
        innocent.refused
    );
    let hold = c.metric("gamesolver_scheduler_lock_hold_max_seconds") * 1e3;
    let work = c.metric("gamesolver_scheduler_lock_work_max_seconds") * 1e3;
    eprintln!(
        "flood of {} jobs, {} innocent jobs; longest hold of the scheduler's lock {hold:.1} ms, \
         most CPU under it {work:.1} ms",
        flood_ids.len(),
        mine.len()
    );
    let p = [
        report("status", &status),
        report("lease", &innocent.lease),
        report("heartbeat", &innocent.heartbeat),
        report("result", &innocent.result),
    ];
    assert_eq!(status.failed, 0, "status reads failed");
    for (what, p99) in ["status", "lease", "heartbeat", "result"].iter().zip(p) {
        assert!(p99 < 100.0, "{what} p99 {p99:.1} ms under the flood");
    }
    // Work under the lock is its CPU time: the wall time of one hold also counts a commit
    // waiting for a busy disk and the thread waiting for a core (a 105 ms hold with 8 ms p99s
    // was seen so on a shared machine), which the latencies above already bound.
    assert!(
        work < 50.0,
        "the scheduler's lock was held for {work:.1} ms of CPU"
    );
    assert!(hold < 1000.0, "the scheduler's lock was held {hold:.1} ms");
    let (code, _) = c.post(&format!("/v1/jobs/{busy}/cancel"), &json!({}), None);
    assert_eq!(code, 200);
}

/// CPU ticks (user + system) of a process.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
}

/// Time from `since` until the process has used no CPU over 200 ms (10 ms ticks).
fn until_idle(pid: u32, since: Instant, timeout: Duration) -> Duration {
    let mut last = (Instant::now(), cpu_ticks(pid));
    let mut idle_from: Option<Instant> = None;
    while since.elapsed() < timeout {
        std::thread::sleep(Duration::from_millis(20));
        let now = cpu_ticks(pid);
        if now == last.1 {
            let from = *idle_from.get_or_insert(last.0);
            if from.elapsed() >= Duration::from_millis(200) {
                return from.saturating_duration_since(since);
            }
        } else {
            idle_from = None;
        }
        last = (Instant::now(), now);
    }
    panic!("process {pid} still busy {timeout:?} after the cancel");
}

#[test]
fn a_cancel_stops_the_running_task_within_a_second() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The default lease time: heartbeats every 5 s, so only the cancel watch can be this fast.
    let c = Coordinator::fresh("rel-cancel", &CoordOpts::default());
    let workers = c.start_workers(2, 1);
    for round in 0..3 {
        let id = c.submit(&busy_job(), None);
        wait_until(Duration::from_secs(30), "both workers busy", || {
            c.get(&format!("/v1/jobs/{id}"), None).1["tasks"]["running"] == 2
        });
        std::thread::sleep(Duration::from_millis(300 + 400 * round));
        let t = Instant::now();
        let (code, v) = c.post(&format!("/v1/jobs/{id}/cancel"), &json!({}), None);
        assert_eq!(code, 200, "{v}");
        let mut stops = Vec::new();
        for w in &workers {
            stops.push(until_idle(w.pid(), t, Duration::from_secs(10)));
        }
        wait_until(Duration::from_secs(5), "the tasks reported", || {
            c.get(&format!("/v1/jobs/{id}"), None).1["tasks"]["running"] == 0
        });
        let reported = t.elapsed();
        eprintln!("cancel to idle workers: {stops:?}; to the tasks reported: {reported:?}");
        for s in stops {
            assert!(s < Duration::from_secs(1), "a worker ran on for {s:?}");
        }
    }
}

#[test]
fn a_kernel_past_the_memory_budget_fails_its_task_not_the_worker() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let c = Coordinator::fresh(
        "rel-memory",
        &CoordOpts {
            max_attempts: Some(1),
            ..CoordOpts::default()
        },
    );
    let hog = "{\"max\":[1,2,3]}";
    let worker = start_worker_with(
        &c.url,
        1,
        &[("GAMESOLVER_TEST_HOG_POSITION", hog)],
        &["--memory-mb", "256"],
    );
    wait_until(Duration::from_secs(30), "the worker registered", || {
        c.workers() == 1
    });
    let id = c.submit(
        &json!({"game": "tree", "position": hog, "algorithm": "minimax"}),
        None,
    );
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "failed", "{st}");
    let error = st["error"].as_str().unwrap_or_default();
    assert!(error.contains("memory"), "{st}");
    let (peak_kib, _) = usage(worker.pid());
    eprintln!(
        "hog stopped: {error}; worker peak RSS {} MiB",
        peak_kib / 1024
    );
    // The soft limit is 256 + 64 MiB; the hard one (1.5 x 256 + 256 MiB) was never reached.
    assert!(peak_kib / 1024 < 640, "peak {} MiB", peak_kib / 1024);
    assert!(process_alive(worker.pid()), "the worker lived on");
    let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
    let st = c.wait_job(c.submit(&job, None), LONG);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], local_value(&job));
}
