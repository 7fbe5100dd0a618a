//! The command line of a worker, shared by `gamesolver-worker` and the hidden `gamesolver worker`
//! subcommand that `gamesolver serve --local-workers N` runs as its child processes.
//!
//! A child of a coordinator finds the coordinator's process id in [`SUPERVISOR_ENV`] and its
//! worker token in `GAMESOLVER_WORKER_TOKEN` (the environment, not argv: the arguments of a
//! process are visible to every user in `ps`). Such a child never outlives its coordinator: on
//! Linux the kernel kills it when the coordinator dies (`PR_SET_PDEATHSIG`), on every Unix it
//! exits when its parent is no longer the coordinator that started it.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Environment variable holding the process id of the coordinator that supervises this worker.
pub const SUPERVISOR_ENV: &str = "GAMESOLVER_SUPERVISOR_PID";

/// Pulls tasks from a gamesolver coordinator and runs the search kernels.
#[derive(clap::Args, Clone, Debug)]
pub struct WorkerArgs {
    /// Base URL of the coordinator, e.g. http://127.0.0.1:8080.
    #[arg(long)]
    pub coordinator: String,
    /// Tasks to run at once, and kernel threads one task may use (default: the number of CPUs).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Memory budget of this worker in MiB, shared equally by its task slots: a task's
    /// memory_mb never exceeds the budget divided by --threads (default: half the machine's
    /// memory).
    #[arg(long, value_name = "MIB")]
    pub memory_mb: Option<u64>,
    /// Name shown in the coordinator's status (default: the host name).
    #[arg(long, hide = true)]
    pub name: Option<String>,
    /// Folder of the local artifact cache (retrograde databases fetched from the coordinator;
    /// default: GAMESOLVER_WORKER_CACHE, else gamesolver-artifacts in the temporary folder).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<std::path::PathBuf>,
    /// Bound of the artifact cache folder in MiB (0: no cache).
    #[arg(long, value_name = "MIB", default_value_t = crate::artifacts::DEFAULT_CACHE_MB)]
    pub cache_mb: u64,
}

/// Why a worker command ended without success: the exit status and one line for stderr.
#[derive(Debug)]
pub struct Failure {
    /// 2 for bad arguments, 1 otherwise.
    pub status: i32,
    /// The line to print after `error: `.
    pub message: String,
}

impl Failure {
    fn bad(message: impl Into<String>) -> Failure {
        Failure {
            status: 2,
            message: message.into(),
        }
    }
    fn failed(message: impl Into<String>) -> Failure {
        Failure {
            status: 1,
            message: message.into(),
        }
    }
}

/// Runs a worker as the arguments say until SIGTERM or SIGINT (blocking): checks them, ties the
/// process to its supervisor if it has one, logs to stderr, and calls [`crate::run`].
pub fn run_args(args: WorkerArgs) -> Result<(), Failure> {
    watch_supervisor()?;
    if !(args.coordinator.starts_with("http://") || args.coordinator.starts_with("https://")) {
        return Err(Failure::bad(format!(
            "--coordinator must be an http:// URL, not '{}'",
            args.coordinator
        )));
    }
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    if threads == 0 || threads > 4096 {
        return Err(Failure::bad(format!(
            "--threads must be 1..=4096, not {threads}"
        )));
    }
    let memory_mb = args.memory_mb.unwrap_or_else(crate::default_memory_mb);
    if memory_mb == 0 {
        return Err(Failure::bad("--memory-mb must be at least 1"));
    }
    // A second subscriber (a caller that set one up) is not an error.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let shutdown = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, shutdown.clone())
            .map_err(|e| Failure::failed(format!("cannot install signal handler: {e}")))?;
    }
    let config = crate::WorkerConfig {
        coordinator: args.coordinator,
        threads,
        memory_mb,
        token: std::env::var("GAMESOLVER_WORKER_TOKEN")
            .ok()
            .filter(|t| !t.is_empty()),
        host: args
            .name
            .filter(|n| !n.is_empty())
            .unwrap_or_else(crate::host_name),
        cache_dir: args.cache_dir,
        cache_mb: args.cache_mb,
    };
    crate::run(config, shutdown).map_err(|e| Failure::failed(e.to_string()))
}

/// When [`SUPERVISOR_ENV`] is set, makes sure this process dies with its supervisor: the kernel
/// sends it SIGKILL when the parent dies (Linux), a check now catches a parent that died before
/// that was set up, and a watchdog thread catches it later where there is no such signal.
fn watch_supervisor() -> Result<(), Failure> {
    let Some(value) = std::env::var_os(SUPERVISOR_ENV) else {
        return Ok(());
    };
    let expected: u32 = value
        .to_str()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Failure::bad(format!("{SUPERVISOR_ENV} must be a process id")))?;
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and reads no memory.
        let rc = unsafe {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            )
        };
        if rc != 0 {
            return Err(Failure::failed(format!(
                "cannot tie this worker to its coordinator: {}",
                std::io::Error::last_os_error()
            )));
        }
    }
    #[cfg(unix)]
    {
        let orphaned = move || std::os::unix::process::parent_id() != expected;
        if orphaned() {
            return Err(Failure::failed(format!(
                "the coordinator (process {expected}) that started this worker is gone"
            )));
        }
        std::thread::Builder::new()
            .name("supervisor-watch".into())
            .spawn(move || loop {
                std::thread::sleep(Duration::from_millis(500));
                if orphaned() {
                    eprintln!("error: the coordinator (process {expected}) is gone; exiting");
                    std::process::exit(1);
                }
            })
            .map_err(|e| Failure::failed(format!("cannot start a thread: {e}")))?;
    }
    #[cfg(not(unix))]
    let _ = (expected, Duration::ZERO);
    Ok(())
}
