//! `gamesolver book`: builds a Connect Four opening book with our own solver (the exact score of
//! every position up to `--depth` stones, see `gamesolver_shared::games::connect4::book`) and
//! writes it to a file. Jobs use it with `--option book=FILE` when FILE is in the data folder's
//! `connect4/` directory.

use crate::cli::Failure;
use clap::Args;
use gamesolver_shared::games::connect4::{book, Connect4};
use gamesolver_shared::search::Control;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// `gamesolver book`.
#[derive(Debug, Args)]
pub struct BookArgs {
    /// Board width.
    #[arg(long, default_value_t = 7)]
    pub width: u32,
    /// Board height.
    #[arg(long, default_value_t = 6)]
    pub height: u32,
    /// Every position with at most this many stones goes into the book (at most the board's
    /// cells, and at most 1,000,000 positions: 9 stones on 7 x 6; deeper is refused at once).
    #[arg(long)]
    pub depth: u32,
    /// Search threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Table size in MB (shared by all positions), at most 1048576.
    #[arg(long, default_value_t = 64)]
    pub memory_mb: u64,
    /// Stop (exit 1, nothing written) after this many seconds.
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// The book file to write.
    #[arg(long)]
    pub out: PathBuf,
}

/// Builds the book and writes it; exit 2 on a bad board or a book past its bounds (found before
/// any work: see `book::positions_within`), 1 when stopped or unwritable.
pub fn run(args: BookArgs) -> Result<(), Failure> {
    let game = Connect4::<u64>::new(args.width, args.height, 1)
        .map_err(|e| Failure::bad_input(format!("book: {e}")))?;
    if args.threads == 0 || args.threads > 256 {
        return Err(Failure::bad_input(
            "book: --threads must be between 1 and 256",
        ));
    }
    if args.memory_mb == 0 {
        return Err(Failure::bad_input("book: --memory-mb must be positive"));
    }
    let limit = match args.time_limit {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return Err(Failure::bad_input(
                "book: --time-limit must be a positive number of seconds",
            ))
        }
        t => t.map(Duration::from_secs_f64),
    };
    let ctl = Control::with_limits(limit, None);
    let tty = std::io::stderr().is_terminal();
    let text = book::build(
        &game,
        args.depth,
        args.threads,
        args.memory_mb,
        &ctl,
        |done, total| {
            if tty {
                eprint!("\rbook: {done}/{total} positions");
            }
        },
    )
    .map_err(|e| Failure::bad_input(format!("book: {e}")))?;
    if tty {
        eprintln!();
    }
    let Some(text) = text else {
        return Err(Failure::no_result(
            "book: stopped by the time limit, nothing written",
        ));
    };
    std::fs::write(&args.out, &text).map_err(|e| {
        Failure::no_result(format!("book: cannot write '{}': {e}", args.out.display()))
    })?;
    println!(
        "book: {} positions up to {} stones written to {}",
        text.lines().count() - 1,
        args.depth,
        args.out.display()
    );
    Ok(())
}
