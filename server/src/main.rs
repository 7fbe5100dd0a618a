//! `gamesolver`: coordinator, local runner and command-line client. Thin: parse, run, exit.

mod analyse_cmd;
mod book_cmd;
mod cli;
mod games_cmd;
mod simulate_cmd;
mod tables_cmd;

use clap::{Parser, Subcommand};

/// gamesolver: solve and search games, locally or through a coordinator.
#[derive(Debug, Parser)]
#[command(name = "gamesolver", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one job and print its result.
    #[command(after_long_help = cli::options_help())]
    Solve(cli::SolveArgs),
    /// Score every legal move of a position (the job with `--option analyse=all`): one line
    /// per move, best first, with what the score means where the game's score says it (win
    /// with your nth stone, draw, loss to the opponent's nth stone; disc difference). `--json`
    /// prints the job result.
    #[command(after_long_help = cli::options_help())]
    Analyse(cli::SolveArgs),
    /// List the options and game parameters a job of ALGORITHM on GAME accepts: type, bounds,
    /// default and meaning (the same specs that check a job).
    Options(cli::OptionsArgs),
    /// Solve one position per line of FILE and compare with the expected values.
    Batch(cli::BatchArgs),
    /// Run the coordinator (HTTP API, durable store), optionally with local workers.
    Serve(cli::ServeArgs),
    /// Exit 0 when a coordinator answers `GET /healthz` with 200 (for container health checks,
    /// which have no shell or curl in our images).
    Healthcheck(cli::HealthArgs),
    /// Check a proof certificate (written by `solve --proof FILE` with a proof-number
    /// algorithm and a target) with the game rules alone, and print the value it certifies.
    VerifyProof(cli::VerifyProofArgs),
    /// The benchmark harness is its own binary; this says where (exit 2).
    #[command(hide = true)]
    Bench(cli::BenchMovedArgs),
    /// Build a game's opening book with its own solver (exact scores up to a depth).
    Book(book_cmd::BookArgs),
    /// Awari endgame databases by retrograde analysis: build, verify, look a position up.
    Tables(tables_cmd::TablesArgs),
    /// Game modules at a coordinator: upload one (checked there), list them.
    Games(games_cmd::GamesArgs),
    /// Scaling by simulation: the job's real plan and kernels with its tasks scheduled in
    /// virtual time on N workers, as the coordinator would; time, speedup, efficiency, work
    /// inflation and idle share per worker count.
    Simulate(simulate_cmd::SimulateArgs),
    /// A local worker of `serve --local-workers` (started by the coordinator, not by hand).
    #[command(hide = true)]
    Worker(gamesolver_worker::cli::WorkerArgs),
}

/// Counts live heap bytes so that a worker's `--memory-mb` is a limit
/// (`gamesolver_worker::memory`).
#[global_allocator]
static ALLOC: gamesolver_worker::memory::CountingAlloc = gamesolver_worker::memory::CountingAlloc;

fn main() {
    let parsed = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                std::process::exit(
                    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                        2
                    } else {
                        0
                    },
                );
            }
            eprintln!("{}", one_line(&e.render().to_string()));
            std::process::exit(2);
        }
    };
    let outcome = match parsed.command {
        Command::Solve(args) => cli::solve(args),
        Command::Analyse(args) => cli::analyse(args),
        Command::Options(args) => cli::options(args),
        Command::Batch(args) => cli::batch(args),
        Command::Serve(args) => cli::serve(args),
        Command::Healthcheck(args) => cli::healthcheck(args),
        Command::VerifyProof(args) => cli::verify_proof(args),
        Command::Bench(args) => cli::bench(args),
        Command::Book(args) => book_cmd::run(args),
        Command::Tables(args) => tables_cmd::run(args),
        Command::Games(args) => games_cmd::run(args),
        Command::Simulate(args) => simulate_cmd::run(args),
        Command::Worker(args) => cli::worker(args),
    };
    if let Err(f) = outcome {
        if !f.message.is_empty() {
            eprintln!("error: {}", f.message);
        }
        std::process::exit(f.status);
    }
}

/// Clap's error as one line: the problem, what it lists (the missing arguments) and its tips
/// (a similar argument, the valid values), without the usage block.
fn one_line(text: &str) -> String {
    let mut lines = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty());
    let mut out = lines.next().unwrap_or("error: bad arguments").to_string();
    let (mut items, mut tips) = (Vec::new(), Vec::new());
    for l in lines {
        if l.starts_with("tip:") {
            tips.push(l);
        } else {
            items.push(l);
        }
    }
    if !items.is_empty() {
        if !out.ends_with(':') {
            out.push(':');
        }
        out.push(' ');
        out.push_str(&items.join(", "));
    }
    for t in tips {
        out.push_str(" (");
        out.push_str(t);
        out.push(')');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one line keeps what clap lists and suggests, and never the usage block.
    #[test]
    fn clap_errors_keep_the_flag_and_the_tip() {
        let err = |args: &[&str]| {
            let e = crate::Cli::try_parse_from(args).unwrap_err();
            one_line(&e.render().to_string())
        };
        let missing = err(&["gamesolver", "solve", "--position", "4"]);
        assert!(missing.contains("--game"), "{missing}");
        assert!(!missing.contains("Usage"), "{missing}");
        let typo = err(&["gamesolver", "solve", "--gmae", "connect4"]);
        assert!(
            typo.contains("'--gmae'") && typo.contains("'--game'"),
            "{typo}"
        );
        let sub = err(&["gamesolver", "slove"]);
        assert!(sub.contains("'solve'"), "{sub}");
        for e in [missing, typo, sub] {
            assert!(!e.contains('\n') && e.starts_with("error:"), "{e}");
        }
    }

    /// Progress reads as figures for people, with what is done of what.
    #[test]
    fn progress_lines_are_for_people() {
        use serde_json::json;
        assert_eq!(cli::si(0.0), "0");
        assert_eq!(cli::si(999.0), "999");
        assert_eq!(cli::si(0.1234), "0.123");
        assert_eq!(cli::si(16_420_000.0), "16.4 M");
        assert_eq!(cli::si(1_500.0), "1.50 k");
        assert_eq!(cli::si(250e9), "250 G");
        let m = |p| cli::progress_message(&p).unwrap();
        assert_eq!(
            m(json!({"lower": -3, "upper": 5, "probes_done": 2})),
            "bounds [-3, 5], 2 probes"
        );
        assert_eq!(m(json!({"lower": 1, "upper": 1})), "value 1");
        assert_eq!(
            m(json!({"iterations_done": 40, "iterations": 100, "best": 82, "best_by_round": []})),
            "best score 82, 40 / 100 iterations"
        );
        assert_eq!(m(json!({"runs_done": 3, "runs": 8})), "3 / 8 runs");
        assert_eq!(m(json!({"nodes": 12345678})), "12.3 M nodes");
        assert_eq!(cli::progress_message(&json!({})), None);
    }
}
