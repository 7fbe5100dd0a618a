//! `gamesolver`: coordinator, local runner and command-line client. Thin: parse, run, exit.

mod analyse_cmd;
mod book_cmd;
mod cli;
mod simulate_cmd;
mod tables_cmd;

use clap::Parser;

/// Counts live heap bytes so that a worker's `--memory-mb` is a limit
/// (`gamesolver_worker::memory`).
#[global_allocator]
static ALLOC: gamesolver_worker::memory::CountingAlloc = gamesolver_worker::memory::CountingAlloc;

fn main() {
    let parsed = match cli::Cli::try_parse() {
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
            // One line naming the problem (clap's first line), never the usage block.
            let text = e.render().to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("error: bad arguments");
            eprintln!("{}", first.trim());
            std::process::exit(2);
        }
    };
    let outcome = match parsed.command {
        cli::Command::Solve(args) => cli::solve(args),
        cli::Command::Analyse(args) => cli::analyse(args),
        cli::Command::Options(args) => cli::options(args),
        cli::Command::Batch(args) => cli::batch(args),
        cli::Command::Serve(args) => cli::serve(args),
        cli::Command::Healthcheck(args) => cli::healthcheck(args),
        cli::Command::VerifyProof(args) => cli::verify_proof(args),
        cli::Command::Bench(args) => cli::bench(args),
        cli::Command::Book(args) => book_cmd::run(args),
        cli::Command::Tables(args) => tables_cmd::run(args),
        cli::Command::Simulate(args) => simulate_cmd::run(args),
        cli::Command::Worker(args) => cli::worker(args),
    };
    if let Err(f) = outcome {
        if !f.message.is_empty() {
            eprintln!("error: {}", f.message);
        }
        std::process::exit(f.status);
    }
}
