//! `gamesolver-bench`: the benchmark harness (see the library's documentation). Thin: parse,
//! run, exit with the harness's status.

use clap::{Parser, Subcommand};
use gamesolver_bench::{BenchArgs, Suite};

/// gamesolver-bench: node-count signatures, perft and the scaling report, through real
/// `gamesolver` and `gamesolver-worker` processes.
#[derive(Debug, Parser)]
#[command(name = "gamesolver-bench", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The suites.
#[derive(Debug, Subcommand)]
enum Command {
    /// Small jobs, for CI (well under 5 minutes on 2 cores); checks the signatures.
    Quick(BenchArgs),
    /// Heavier jobs, for the published report (minutes).
    Full(BenchArgs),
    /// Connect Four on every board of width + height <= 14 through the service, against the
    /// published outcomes and last moves; writes docs/CONNECT4_BOARDS.md.
    C4Boards(gamesolver_bench::boards::BoardsArgs),
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                std::process::exit(0);
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let _ = e.print();
                std::process::exit(2);
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
    let result = match cli.command {
        Command::Quick(a) => gamesolver_bench::run(Suite::Quick, a),
        Command::Full(a) => gamesolver_bench::run(Suite::Full, a),
        Command::C4Boards(a) => gamesolver_bench::boards::run(a),
    };
    if let Err(e) = result {
        eprintln!("error: {}", e.message);
        std::process::exit(e.status);
    }
}
