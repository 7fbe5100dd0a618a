//! `gamesolver-worker --coordinator URL [--threads N]`: a thin wrapper around
//! [`gamesolver_worker::run`]. `gamesolver-worker healthcheck` checks the liveness file. SIGTERM and SIGINT shut it down cleanly (running tasks finish or
//! their leases are released). Bad arguments exit with status 2 and one line on stderr.

use clap::Parser;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Pulls tasks from a gamesolver coordinator and runs the search kernels.
#[derive(Parser, Debug)]
#[command(name = "gamesolver-worker", version)]
struct Args {
    /// Base URL of the coordinator, e.g. http://127.0.0.1:8080.
    #[arg(long)]
    coordinator: String,
    /// Tasks to run at once (default: the number of CPUs).
    #[arg(long)]
    threads: Option<usize>,
}

/// Most age of the liveness file for `healthcheck`: a slot touches it at least every long poll
/// (10 s) plus the largest backoff (5 s), so a minute means the worker is wedged.
const ALIVE_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(60);

/// `gamesolver-worker healthcheck`: exit 0 when the liveness file is fresh (container probes).
fn healthcheck() -> ! {
    let path = gamesolver_worker::alive_file();
    let age = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .map(|t| t.elapsed().unwrap_or_default());
    match age {
        Ok(a) if a <= ALIVE_MAX_AGE => std::process::exit(0),
        Ok(a) => {
            eprintln!("unhealthy: {} is {} s old", path.display(), a.as_secs());
            std::process::exit(1)
        }
        Err(e) => {
            eprintln!("unhealthy: cannot read {}: {e}", path.display());
            std::process::exit(1)
        }
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("healthcheck") {
        healthcheck();
    }
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) if e.use_stderr() => {
            let text = e.to_string();
            eprintln!("{}", text.lines().next().unwrap_or("bad arguments"));
            std::process::exit(2);
        }
        Err(e) => e.exit(),
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    if !(args.coordinator.starts_with("http://") || args.coordinator.starts_with("https://")) {
        eprintln!(
            "error: --coordinator must be an http:// URL, not '{}'",
            args.coordinator
        );
        std::process::exit(2);
    }
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    if threads == 0 || threads > 4096 {
        eprintln!("error: --threads must be 1..=4096, not {threads}");
        std::process::exit(2);
    }
    let shutdown = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        if let Err(e) = signal_hook::flag::register(sig, shutdown.clone()) {
            eprintln!("error: cannot install signal handler: {e}");
            std::process::exit(1);
        }
    }
    let config = gamesolver_worker::WorkerConfig {
        coordinator: args.coordinator,
        threads,
        token: std::env::var("GAMESOLVER_WORKER_TOKEN")
            .ok()
            .filter(|t| !t.is_empty()),
        host: gamesolver_worker::host_name(),
    };
    if let Err(e) = gamesolver_worker::run(config, shutdown) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
