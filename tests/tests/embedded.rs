//! End-to-end tests of the coordinator's local worker processes (`serve --local-workers N`) and
//! of the worker's cache of prepared jobs across coordinators: real `gamesolver` and
//! `gamesolver-worker` processes, real HTTP on loopback, real SQLite files.

use gamesolver_e2e::*;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const LONG: Duration = Duration::from_secs(120);

/// The ids of the workers the coordinator lists.
fn worker_ids(c: &Coordinator) -> Vec<String> {
    c.get("/v1/status", None).1["workers"]
        .as_array()
        .map(|ws| {
            ws.iter()
                .filter_map(|w| w["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Polls `/healthz` every 20 ms until stopped (at most `LONG`); returns the answers that were
/// not a 200 and the slowest answer.
fn watch_health(
    url: String,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<(Vec<u16>, Duration)> {
    std::thread::spawn(move || {
        let (mut bad, mut slowest) = (Vec::new(), Duration::ZERO);
        let end = Instant::now() + LONG;
        while !stop.load(Ordering::Relaxed) && Instant::now() < end {
            let t = Instant::now();
            let (code, _) = raw("GET", &format!("{url}/healthz"), None, None);
            slowest = slowest.max(t.elapsed());
            if code != 200 {
                bad.push(code);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        (bad, slowest)
    })
}

/// Issue 23, scope 3: a kernel that aborts the process (the test hook calls `abort()` inside the
/// kernel call) costs its local worker, never the coordinator. The coordinator answers
/// throughout, restarts the worker, fails the job after `--max-attempts` lost leases, and the
/// restarted worker runs the next job.
#[test]
fn a_kernel_that_aborts_costs_a_local_worker_never_the_coordinator() {
    let poison = "5";
    let c = Coordinator::fresh(
        "embedded-abort",
        &CoordOpts {
            local_workers: 1,
            max_attempts: Some(2),
            lease_ms: Some(1000),
            // As a user starts it: the local worker gets its token through the environment.
            secure_default: true,
            env: vec![("GAMESOLVER_TEST_ABORT_POSITION".into(), poison.into())],
            ..Default::default()
        },
    );
    let coordinator_pid = c.proc.pid();
    wait_until(
        Duration::from_secs(30),
        "the local worker registers",
        || child_pids(coordinator_pid).len() == 1 && c.workers() == 1,
    );
    let first_child = child_pids(coordinator_pid)[0];
    let first_worker = worker_ids(&c)[0].clone();

    let stop = Arc::new(AtomicBool::new(false));
    let health = watch_health(c.url.clone(), stop.clone());
    let id = c.submit(
        &json!({"game": "tictactoe", "position": poison, "algorithm": "minimax"}),
        None,
    );
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "failed", "{st}");
    let reason = st["error"].as_str().unwrap_or_default();
    assert!(
        reason.contains("failed 2 times") && reason.contains("lost its lease"),
        "the reason names the attempts and the lost lease: {st}"
    );
    assert!(process_alive(coordinator_pid), "the coordinator is alive");

    // The worker was restarted: another child process, registered anew.
    wait_until(Duration::from_secs(30), "a restarted local worker", || {
        let kids = child_pids(coordinator_pid);
        kids.len() == 1
            && kids[0] != first_child
            && worker_ids(&c).iter().any(|w| *w != first_worker)
    });
    assert!(!process_alive(first_child), "the aborted child is gone");

    // The restarted worker runs a job at another position.
    let job = json!({"game": "tictactoe", "position": "1", "algorithm": "minimax"});
    let id = c.submit(&job, None);
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], local_value(&job), "{st}");

    stop.store(true, Ordering::Relaxed);
    let (bad, slowest) = health.join().expect("health thread");
    assert!(
        bad.is_empty(),
        "/healthz failed while workers died: {bad:?}"
    );
    eprintln!("slowest /healthz while the local worker aborted twice: {slowest:?}");
}

/// Local workers stop with their coordinator: on SIGTERM they are told to stop and waited for,
/// and a coordinator killed with SIGKILL takes them along (the kernel's parent-death signal).
/// Their worker token is in their environment, never on their command line.
#[test]
fn local_workers_never_outlive_their_coordinator() {
    for (name, kill) in [("embedded-term", false), ("embedded-kill", true)] {
        let mut c = Coordinator::fresh(
            name,
            &CoordOpts {
                local_workers: 2,
                secure_default: true,
                ..Default::default()
            },
        );
        let pid = c.proc.pid();
        wait_until(
            Duration::from_secs(30),
            "two local workers register",
            || child_pids(pid).len() == 2 && c.workers() == 2,
        );
        let kids = child_pids(pid);
        for k in &kids {
            let read = |file: &str| {
                let bytes = std::fs::read(format!("/proc/{k}/{file}")).unwrap_or_default();
                String::from_utf8_lossy(&bytes)
                    .split('\0')
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            };
            let (args, env) = (read("cmdline"), read("environ"));
            assert_eq!(args.get(1).map(String::as_str), Some("worker"), "{args:?}");
            // The local-only token ("local-" and 64 hex digits) is in the environment only.
            let token = env
                .iter()
                .find_map(|v| v.strip_prefix("GAMESOLVER_WORKER_TOKEN="))
                .expect("the token in the child's environment");
            assert!(token.starts_with("local-") && token.len() > 40, "{token}");
            assert!(
                !args.iter().any(|a| a.contains(token)),
                "the worker token is on the command line: {args:?}"
            );
        }
        let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
        let id = c.submit(&job, None);
        assert_eq!(c.wait_job(id, LONG)["state"], "done");
        // A task of several seconds keeps one worker busy when the coordinator stops.
        let slow = json!({"game": "mnk", "game_params": {"m": 4, "n": 4, "k": 4},
            "position": "1,6,11,16", "algorithm": "minimax"});
        let busy = c.submit(&slow, None);
        wait_until(Duration::from_secs(30), "the slow task runs", || {
            c.get(&format!("/v1/jobs/{busy}"), None).1["tasks"]["running"] == 1
        });
        if kill {
            c.proc.kill9();
        } else {
            // SIGTERM: the busy worker gets the grace period to finish or release its task;
            // the coordinator waits for its children, then exits cleanly.
            let t = Instant::now();
            assert_eq!(
                c.proc.terminate(Duration::from_secs(30)),
                Some(0),
                "a clean exit"
            );
            assert!(
                t.elapsed() < Duration::from_secs(15),
                "stopping took {:?}",
                t.elapsed()
            );
        }
        wait_until(
            Duration::from_secs(15),
            &format!("{name}: the local workers {kids:?} are gone"),
            || kids.iter().all(|k| !process_alive(*k)),
        );
    }
}

/// The subcommand that runs a local worker is not offered to users.
#[test]
fn the_worker_subcommand_is_hidden() {
    let out = std::process::Command::new(bin("gamesolver"))
        .arg("--help")
        .output()
        .expect("gamesolver --help");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("serve"), "{help}");
    assert!(
        !help.lines().any(|l| l.trim_start().starts_with("worker")),
        "{help}"
    );
}

/// Issue 23, scope 6, as reported: a worker that ran job 1 (tic-tac-toe) of one coordinator
/// must not answer job 1 (Connect Four) of another coordinator on a fresh store at the same
/// address from its cache. The same worker process stays up across both.
#[test]
fn a_worker_never_answers_a_fresh_store_from_its_cache() {
    let dir = scratch("store-reset");
    let opts = CoordOpts {
        port: Some(free_port()),
        ..Default::default()
    };
    let mut a = Coordinator::start(&dir.join("a.sqlite"), &opts);
    let mut worker = start_worker(&a.url, 1, &[]);
    wait_until(
        Duration::from_secs(30),
        "the worker registers with A",
        || a.workers() == 1,
    );
    let ttt = json!({"game": "tictactoe", "algorithm": "minimax"});
    assert_eq!(a.submit(&ttt, None), 1);
    let st = a.wait_job(1, LONG);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], local_value(&ttt), "{st}");
    assert_eq!(a.proc.terminate(Duration::from_secs(30)), Some(0));
    drop(a);

    let b = Coordinator::start(&dir.join("b.sqlite"), &opts);
    wait_until(
        Duration::from_secs(30),
        "the same worker registers with B",
        || b.workers() == 1,
    );
    let c4 = json!({"game": "connect4", "algorithm": "minimax", "options": {"depth": 2}});
    assert_eq!(
        b.submit(&c4, None),
        1,
        "a fresh store numbers jobs from 1 again"
    );
    let st = b.wait_job(1, LONG);
    assert_eq!(st["state"], "done", "{st}");
    let expected = local_result(&c4);
    for field in ["value", "best_move", "nodes", "pv"] {
        assert_eq!(
            st["result"][field], expected[field],
            "{field}: the service {st} / in-process {expected}"
        );
    }
    assert!(
        process_alive(worker.pid()),
        "the worker ran both jobs in one process"
    );
    worker.terminate(Duration::from_secs(30));
}

/// A local worker that is killed from outside (as the OOM killer would) is restarted and runs
/// the next job; its task, if any, came back through its expired lease.
#[test]
fn a_killed_local_worker_is_restarted() {
    let c = Coordinator::fresh(
        "embedded-restart",
        &CoordOpts {
            local_workers: 1,
            lease_ms: Some(1000),
            ..Default::default()
        },
    );
    let pid = c.proc.pid();
    wait_until(Duration::from_secs(30), "the local worker", || {
        child_pids(pid).len() == 1
    });
    let first = child_pids(pid)[0];
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &first.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    wait_until(Duration::from_secs(30), "a new local worker", || {
        let kids = child_pids(pid);
        kids.len() == 1 && kids[0] != first
    });
    let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
    let id = c.submit(&job, None);
    let st: Value = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    assert_eq!(st["result"]["value"], local_value(&job), "{st}");
}

/// Issue 23, scope 2: a job's `threads` never exceeds what its worker offers. A one-slot
/// worker offers one kernel thread; a job asking for 256 (it used to run 258 threads in the
/// worker process) runs within the worker's own few threads.
#[test]
fn a_job_never_runs_more_threads_than_its_worker_offers() {
    let c = Coordinator::fresh("thread-cap", &CoordOpts::default());
    let worker = start_worker(&c.url, 1, &[]);
    wait_until(Duration::from_secs(30), "the worker registers", || {
        c.workers() == 1
    });
    let threads_of = |pid: u32| -> usize {
        std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count())
    };
    // Main, one slot, one kernel thread (and a spare for helpers of the HTTP client).
    let idle = threads_of(worker.pid());
    assert!(
        (1..=4).contains(&idle),
        "an idle one-slot worker runs {idle} threads"
    );
    let job = json!({"game": "connect4", "algorithm": "alphabeta",
        "options": {"threads": 256}, "limits": {"time_ms": 3000}});
    let id = c.submit(&job, None);
    let mut most = idle;
    let end = Instant::now() + LONG;
    loop {
        most = most.max(threads_of(worker.pid()));
        let st = c.get(&format!("/v1/jobs/{id}"), None).1;
        if st["state"] == "done" || st["state"] == "failed" {
            assert_eq!(st["state"], "done", "{st}");
            break;
        }
        assert!(Instant::now() < end, "the job did not end: {st}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        most <= idle + 1,
        "the worker ran {most} threads for a job of threads=256 (idle: {idle})"
    );
}
