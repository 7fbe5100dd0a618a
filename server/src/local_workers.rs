//! The local workers of `gamesolver serve --local-workers N`: child processes that the coordinator
//! starts, restarts and stops, so that a kernel that aborts, overflows its stack or is killed for
//! its memory costs one worker, never the coordinator and its store.
//!
//! Each child is this same executable running the hidden `gamesolver worker` subcommand
//! ([`gamesolver_worker::cli`]) with one task slot. N children of one slot rather than one child
//! of N slots: a process that dies takes every task it runs with it, so with one slot an abort
//! costs exactly the attempt that caused it, and the other N-1 tasks run on. The price is one
//! kernel thread per task (a job's `threads` is cut to 1 in embedded mode; run
//! `gamesolver-worker --threads N` processes for multi-threaded jobs) and a registration per
//! child in `/v1/status`. Each child gets an equal share of the memory budget.
//!
//! The worker token goes through the child's environment (`GAMESOLVER_WORKER_TOKEN`), never its
//! arguments, which any user can read with `ps`. A child that exits for any reason is logged with
//! its exit status and started again after a backoff (100 ms doubling up to 10 s, back to 100 ms
//! once a child has lived a minute); the task it was running comes back when its lease expires,
//! which counts as an attempt. A child never outlives the coordinator (see
//! [`gamesolver_worker::cli::SUPERVISOR_ENV`]). A supervising thread lives as long as its child:
//! on Linux the parent-death signal follows the thread that started the child.

use parking_lot::Mutex;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// First wait before a child that exited is started again.
const RESTART_MIN: Duration = Duration::from_millis(100);
/// Longest wait before a restart (a child that dies at once, again and again).
const RESTART_MAX: Duration = Duration::from_secs(10);
/// A child that lived this long starts the backoff afresh when it exits.
const RESTART_RESET_AFTER: Duration = Duration::from_secs(60);
/// How often a supervising thread checks on its child.
const POLL: Duration = Duration::from_millis(50);
/// How long stopping waits for the children after SIGTERM before it kills them: a worker lets a
/// running task finish for [`gamesolver_worker::SHUTDOWN_GRACE`], then releases its lease.
pub const STOP_GRACE: Duration =
    Duration::from_secs(gamesolver_worker::SHUTDOWN_GRACE.as_secs() + 2);

/// How to start the children.
#[derive(Clone, Debug)]
pub struct LocalWorkerSpec {
    /// Children to run (one task slot each).
    pub count: usize,
    /// The coordinator's base URL (`http://127.0.0.1:PORT`).
    pub coordinator: String,
    /// The worker token the children present, if any.
    pub token: Option<String>,
    /// Memory budget of all the children together, in MiB.
    pub memory_mb: u64,
}

/// State shared by the supervising threads and [`LocalWorkers::stop`].
struct Shared {
    /// Set when the coordinator stops: no more restarts.
    stop: AtomicBool,
    /// The process id of each child that is running (by index).
    pids: Mutex<Vec<Option<u32>>>,
}

/// The running children and their supervising threads.
pub struct LocalWorkers {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl LocalWorkers {
    /// Starts `spec.count` children, each watched by a thread of its own.
    pub fn start(spec: &LocalWorkerSpec) -> anyhow::Result<LocalWorkers> {
        let exe = std::env::current_exe().map_err(|e| {
            anyhow::anyhow!("cannot find this executable to start local workers: {e}")
        })?;
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            pids: Mutex::new(vec![None; spec.count]),
        });
        let host = gamesolver_worker::host_name();
        let memory_mb = (spec.memory_mb / spec.count.max(1) as u64).max(1);
        let mut threads = Vec::with_capacity(spec.count);
        for index in 0..spec.count {
            let child = ChildSpec {
                exe: exe.clone(),
                index,
                coordinator: spec.coordinator.clone(),
                token: spec.token.clone(),
                memory_mb,
                name: format!("{host}-local-{index}"),
            };
            let shared = shared.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("local-worker-{index}"))
                    .spawn(move || supervise(&child, &shared))?,
            );
        }
        Ok(LocalWorkers { shared, threads })
    }

    /// Tells every child to stop (SIGTERM) and starts no new one. Returns at once.
    pub fn signal_stop(&self) {
        signal_stop(&self.shared);
    }

    /// Stops the children: SIGTERM, up to [`STOP_GRACE`] for them to exit, then SIGKILL.
    /// Blocking.
    pub fn stop(mut self) {
        self.signal_stop();
        for t in self.threads.drain(..) {
            // Each thread kills its child past the grace period, then returns.
            let _ = t.join();
        }
    }
}

impl Drop for LocalWorkers {
    /// A coordinator that ends without [`LocalWorkers::stop`] still stops its children.
    fn drop(&mut self) {
        signal_stop(&self.shared);
    }
}

/// Sets the stop flag, then sends SIGTERM to every running child. Under the lock of the pids, so
/// a child started concurrently is either signalled here or sees the flag (see [`supervise`]).
fn signal_stop(shared: &Shared) {
    let pids = shared.pids.lock();
    shared.stop.store(true, Ordering::SeqCst);
    for pid in pids.iter().flatten() {
        terminate(*pid);
    }
}

/// Sends SIGTERM to child `pid`. Callers hold the lock of the pids: a child is reaped only under
/// that lock, and taken off the list in the same breath, so `pid` cannot have been reused by
/// another process.
fn terminate(pid: u32) {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return;
        };
        // SAFETY: kill(2) takes two integers and touches no memory of ours.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// One child's command line and share.
struct ChildSpec {
    exe: PathBuf,
    index: usize,
    coordinator: String,
    token: Option<String>,
    memory_mb: u64,
    name: String,
}

impl ChildSpec {
    fn spawn(&self) -> std::io::Result<Child> {
        let mut cmd = Command::new(&self.exe);
        cmd.arg("worker")
            .args(["--coordinator", &self.coordinator])
            .args(["--threads", "1"])
            .args(["--memory-mb", &self.memory_mb.to_string()])
            .args(["--name", &self.name])
            .env(
                gamesolver_worker::cli::SUPERVISOR_ENV,
                std::process::id().to_string(),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        match &self.token {
            Some(t) => cmd.env("GAMESOLVER_WORKER_TOKEN", t),
            None => cmd.env_remove("GAMESOLVER_WORKER_TOKEN"),
        };
        cmd.spawn()
    }
}

/// Runs child `spec.index` until the coordinator stops, starting it again whenever it exits.
fn supervise(spec: &ChildSpec, shared: &Shared) {
    let i = spec.index;
    let mut backoff = RESTART_MIN;
    while !shared.stop.load(Ordering::SeqCst) {
        let started = Instant::now();
        let mut child = match spec.spawn() {
            Ok(c) => c,
            Err(e) => {
                tracing::error!("local worker {i}: cannot start: {e}; retrying in {backoff:?}");
                sleep_unless_stopped(backoff, shared);
                backoff = (backoff * 2).min(RESTART_MAX);
                continue;
            }
        };
        let pid = child.id();
        {
            let mut pids = shared.pids.lock();
            pids[i] = Some(pid);
            if shared.stop.load(Ordering::SeqCst) {
                // `signal_stop` ran before the pid was listed: signal this child here.
                terminate(pid);
            }
        }
        tracing::info!("local worker {i} started (pid {pid})");
        let status = watch(i, &mut child, shared);
        let lived = started.elapsed();
        let Some(status) = status else {
            // Stopped (or lost): the child was told to exit, and did or was killed.
            if !shared.stop.load(Ordering::SeqCst) {
                sleep_unless_stopped(backoff, shared);
                backoff = (backoff * 2).min(RESTART_MAX);
                continue;
            }
            return;
        };
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        if lived >= RESTART_RESET_AFTER {
            backoff = RESTART_MIN;
        }
        tracing::warn!(
            "local worker {i} (pid {pid}) exited ({}) after {:.1} s; restarting in {backoff:?}",
            describe(&status),
            lived.as_secs_f64()
        );
        sleep_unless_stopped(backoff, shared);
        backoff = (backoff * 2).min(RESTART_MAX);
    }
}

/// Waits for child `i` to exit on its own (`Some(status)`), or for the stop flag: then waits up
/// to [`STOP_GRACE`] for it to exit after the SIGTERM it was sent, kills it past that, and
/// returns `None`. The child is reaped either way, and taken off the list of pids as it is.
fn watch(i: usize, child: &mut Child, shared: &Shared) -> Option<ExitStatus> {
    let mut deadline: Option<Instant> = None;
    loop {
        {
            let mut pids = shared.pids.lock();
            let exited = match child.try_wait() {
                Ok(status) => status.map(Ok),
                Err(e) => Some(Err(e)),
            };
            if let Some(exited) = exited {
                pids[i] = None;
                drop(pids);
                return match (exited, deadline) {
                    (_, Some(_)) => None,
                    (Ok(status), None) => Some(status),
                    (Err(e), None) => {
                        tracing::error!("local worker {i}: cannot wait for it: {e}");
                        let _ = child.kill();
                        let _ = child.wait();
                        None
                    }
                };
            }
        }
        if deadline.is_none() && shared.stop.load(Ordering::SeqCst) {
            deadline = Some(Instant::now() + STOP_GRACE);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            tracing::warn!("local worker {i} did not stop within {STOP_GRACE:?}; killing it");
            let mut pids = shared.pids.lock();
            let _ = child.kill();
            let _ = child.wait();
            pids[i] = None;
            return None;
        }
        std::thread::sleep(POLL);
    }
}

/// An exit status in words: the code, or the signal that ended the process.
fn describe(status: &ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            let name = match sig {
                libc::SIGABRT => {
                    " (SIGABRT: aborted, e.g. a stack overflow or a failed allocation)"
                }
                libc::SIGKILL => " (SIGKILL: killed, e.g. by the out-of-memory killer)",
                libc::SIGSEGV => " (SIGSEGV)",
                libc::SIGTERM => " (SIGTERM)",
                _ => "",
            };
            return format!("signal {sig}{name}");
        }
    }
    match status.code() {
        Some(c) => format!("exit status {c}"),
        None => status.to_string(),
    }
}

fn sleep_unless_stopped(d: Duration, shared: &Shared) {
    let end = Instant::now() + d;
    while Instant::now() < end && !shared.stop.load(Ordering::SeqCst) {
        std::thread::sleep((end - Instant::now()).min(POLL));
    }
}
