//! The `gamesolver-worker` binary: bad arguments exit with status 2 and one line; a worker whose
//! coordinator is away keeps retrying and still shuts down promptly on SIGTERM.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn worker() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gamesolver-worker"))
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    for args in [
        vec![],
        vec!["--coordinator", "ftp://example"],
        vec!["--coordinator", "http://127.0.0.1:9", "--threads", "0"],
        vec!["--coordinator", "http://127.0.0.1:9", "--threads", "many"],
        vec!["--coordinator", "http://127.0.0.1:9", "--memory-mb", "0"],
        vec!["--coordinator", "http://127.0.0.1:9", "--memory-mb", "-1"],
    ] {
        let out = worker().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_worker_without_coordinator_retries_and_stops_on_sigterm() {
    // Port 9 (discard) on loopback: nothing listens, connections are refused.
    let alive = std::env::temp_dir().join(format!("gs-worker-alive-{}", std::process::id()));
    let _ = std::fs::remove_file(&alive);
    let health = || {
        worker()
            .arg("healthcheck")
            .env("GAMESOLVER_WORKER_ALIVE_FILE", &alive)
            .status()
            .unwrap()
    };
    assert!(!health().success(), "no liveness file yet");
    let mut child = worker()
        .args(["--coordinator", "http://127.0.0.1:9", "--threads", "1"])
        .env("GAMESOLVER_WORKER_ALIVE_FILE", &alive)
        .env("RUST_LOG", "error")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    assert!(child.try_wait().unwrap().is_none(), "it keeps retrying");
    assert!(health().success(), "a retrying worker is alive");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            assert!(st.success(), "{st}");
            break;
        }
        assert!(Instant::now() < end, "no exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A worker started by a coordinator (`GAMESOLVER_SUPERVISOR_PID`) whose parent is not that
/// coordinator, because it is already gone, exits at once instead of running orphaned.
#[test]
fn a_supervised_worker_whose_coordinator_is_gone_exits() {
    // This test process is the parent; any other pid is "a coordinator that is gone".
    let other = std::process::id() + 1;
    let out = worker()
        .args(["--coordinator", "http://127.0.0.1:9", "--threads", "1"])
        .env("GAMESOLVER_SUPERVISOR_PID", other.to_string())
        .env("RUST_LOG", "error")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("is gone"), "{err}");
    let out = worker()
        .args(["--coordinator", "http://127.0.0.1:9"])
        .env("GAMESOLVER_SUPERVISOR_PID", "me")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
