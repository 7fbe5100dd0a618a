//! `gamesolver-worker --coordinator URL [--threads N] [--memory-mb M]`: a thin wrapper around
//! [`gamesolver_worker::cli::run_args`]. `gamesolver-worker healthcheck` checks the liveness file.
//! SIGTERM and SIGINT shut it down cleanly (running tasks finish or their leases are released).
//! Bad arguments exit with status 2 and one line on stderr.

use clap::Parser;

/// Pulls tasks from a gamesolver coordinator and runs the search kernels.
#[derive(Parser, Debug)]
#[command(name = "gamesolver-worker", version)]
struct Cli {
    #[command(flatten)]
    args: gamesolver_worker::cli::WorkerArgs,
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

/// Counts live heap bytes so that a worker's `--memory-mb` is a limit
/// (`gamesolver_worker::memory`).
#[global_allocator]
static ALLOC: gamesolver_worker::memory::CountingAlloc = gamesolver_worker::memory::CountingAlloc;

fn main() {
    if std::env::args().nth(1).as_deref() == Some("healthcheck") {
        healthcheck();
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            let text = e.to_string();
            eprintln!("{}", text.lines().next().unwrap_or("bad arguments"));
            std::process::exit(2);
        }
        Err(e) => e.exit(),
    };
    if let Err(f) = gamesolver_worker::cli::run_args(cli.args) {
        eprintln!("error: {}", f.message);
        std::process::exit(f.status);
    }
}
