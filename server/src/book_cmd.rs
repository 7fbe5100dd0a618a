//! `gamesolver book`: builds a game's opening book (the exact score of every position up to
//! `--depth` moves) with the game's own builder, the catalogue's book hook (`GameEntry::BOOK`),
//! and writes it to a file. Jobs use it with `--option book=FILE` when FILE is in the data
//! folder's directory of the game.

use crate::cli::{parse_settings, Failure};
use clap::Args;
use gamesolver_shared::model::settings::Opts;
use gamesolver_shared::registry::catalogue::{self, BookRequest};
use gamesolver_shared::search::Control;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// `gamesolver book`.
#[derive(Debug, Args)]
pub struct BookArgs {
    /// The game (default: the one game with a book builder, while there is one).
    #[arg(long)]
    pub game: Option<String>,
    /// Game parameter KEY=VALUE (repeatable), e.g. --game-param width=8.
    #[arg(long = "game-param", value_name = "KEY=VALUE")]
    pub game_params: Vec<String>,
    /// Every position with at most this many moves played goes into the book (the game bounds
    /// it: Connect Four at most the board's cells and 1,000,000 positions, 9 stones on 7 x 6;
    /// deeper is refused at once).
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

/// Builds the book and writes it; exit 2 on a bad game, board or a book past its bounds (found
/// before any work), 1 when stopped or unwritable.
pub fn run(args: BookArgs) -> Result<(), Failure> {
    let with_books = catalogue::book_games();
    let name = match (&args.game, with_books.as_slice()) {
        (Some(name), _) => name.clone(),
        (None, [only]) => only.to_string(),
        (None, _) => {
            return Err(Failure::bad_input(format!(
                "book: --game is required (games with a book: {})",
                with_books.join(", ")
            )))
        }
    };
    let Some(build) = catalogue::info(&name).map(|i| i.book) else {
        return Err(Failure::bad_input(format!(
            "book: unknown game '{name}' (games with a book: {})",
            with_books.join(", ")
        )));
    };
    let Some(build) = build else {
        return Err(Failure::bad_input(format!(
            "book: {name} has no opening book (games with a book: {})",
            with_books.join(", ")
        )));
    };
    let params = parse_settings(&args.game_params, "game parameter")?;
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
    let request = BookRequest {
        depth: args.depth,
        threads: args.threads,
        table_mb: args.memory_mb,
    };
    let mut progress = |done: usize, total: usize| {
        if tty {
            eprint!("\rbook: {done}/{total} positions");
        }
    };
    let text = build(
        &Opts::new(&params, "game parameter"),
        &request,
        &ctl,
        &mut progress,
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
        "book: {} positions up to {} moves written to {}",
        text.lines().count() - 1,
        args.depth,
        args.out.display()
    );
    Ok(())
}
