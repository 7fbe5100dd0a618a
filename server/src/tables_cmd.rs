//! `gamesolver tables`: Awari endgame databases by retrograde analysis
//! (`gamesolver_shared::search::retrograde`), kept in the data folder's `tables/NAME` as one
//! checksummed file per stone count.
//!
//! - `build NAME --stones N` builds the databases of 0..=N stones, continuing from the files
//!   already there (each is checked before it is used), so a build that is stopped loses at most
//!   the database in flight. Progress (entries changed per round) goes to stderr.
//! - `verify NAME` recomputes every entry from its successors' entries (Romein and Bal's check)
//!   and reports the mismatches (exit 1 when there are any).
//! - `lookup NAME POSITION` prints the score of a position (Awari notation) and its best moves.
//!
//! NAME is a plain data name, never a path. Bad input exits 2 with one line.

use crate::cli::Failure;
use clap::{Args, Subcommand};
use gamesolver_shared::games::awari::Awari;
use gamesolver_shared::games::data;
use gamesolver_shared::model::{Game, Retrograde};
use gamesolver_shared::search::retrograde::{self, store, Tables};
use std::path::PathBuf;
use std::time::Instant;

/// Most stones `build` accepts on the standard board: the 24-stone database has 417 million
/// entries, and a build holds it twice beside every lower one (about 2.3 GB in all).
pub const MAX_STONES: u32 = 24;

/// `gamesolver tables`.
#[derive(Debug, Args)]
pub struct TablesArgs {
    #[command(subcommand)]
    pub action: TablesAction,
}

/// What `gamesolver tables` does.
#[derive(Debug, Subcommand)]
pub enum TablesAction {
    /// Build the databases of 0..=STONES stones into the data folder's tables/NAME.
    Build {
        /// The set's name (letters, digits, '.', '_', '-').
        name: String,
        /// Largest stone count to build.
        #[arg(long)]
        stones: u32,
        /// Pits per side (6: the real game).
        #[arg(long, default_value_t = 6)]
        pits: usize,
        /// Worker threads of the rounds.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Refuse a build whose databases need more memory than this, in MiB.
        #[arg(long, default_value_t = 4096)]
        memory_mb: u64,
    },
    /// Recompute every entry from its successors and report mismatches.
    Verify {
        /// The set's name.
        name: String,
        /// Pits per side.
        #[arg(long, default_value_t = 6)]
        pits: usize,
        /// Worker threads.
        #[arg(long, default_value_t = 1)]
        threads: usize,
    },
    /// Print the score of POSITION (Awari notation) and its best moves.
    Lookup {
        /// The set's name.
        name: String,
        /// The 12 pit counts, side to move first (empty: the start).
        position: String,
        /// Pits per side.
        #[arg(long, default_value_t = 6)]
        pits: usize,
        /// Look the board up in the set this coordinator built (`GET
        /// /v1/tables/NAME/lookup`; the board is the build's, `--pits` is not used), instead of
        /// the data folder.
        #[arg(long, value_name = "URL")]
        coordinator: Option<String>,
    },
}

/// Runs `gamesolver tables`.
pub fn run(args: TablesArgs) -> Result<(), Failure> {
    match args.action {
        TablesAction::Build {
            name,
            stones,
            pits,
            threads,
            memory_mb,
        } => {
            let (game, tag, dir) = open(&name, pits)?;
            if stones as usize > game.max_stones() || (pits == 6 && stones > MAX_STONES) {
                return Err(Failure::bad_input(format!(
                    "tables: --stones must be at most {} on a board of {pits} pits a side",
                    (game.max_stones() as u32).min(MAX_STONES)
                )));
            }
            let need = build_bytes(&game, stones as usize);
            if need > memory_mb << 20 {
                return Err(Failure::bad_input(format!(
                    "tables: the databases up to {stones} stones need {} MiB, more than --memory-mb {memory_mb}",
                    need >> 20
                )));
            }
            in_pool(threads, || build(&game, &tag, &dir, stones as usize))
        }
        TablesAction::Verify {
            name,
            pits,
            threads,
        } => {
            let (game, tag, dir) = open(&name, pits)?;
            let tables = load(&game, &tag, &dir, &name)?;
            in_pool(threads, || {
                let mut bad = 0usize;
                for db in 0..tables.len() {
                    let t0 = Instant::now();
                    let wrong = retrograde::verify_database(&game, &tables, db);
                    println!(
                        "{db} stones: {} entries, {} mismatches ({:.1} s)",
                        game.db_len(db),
                        wrong.len(),
                        t0.elapsed().as_secs_f64()
                    );
                    bad += wrong.len();
                }
                if bad == 0 {
                    Ok(())
                } else {
                    Err(Failure::no_result(format!("tables: {bad} mismatches")))
                }
            })
        }
        TablesAction::Lookup {
            name,
            position,
            coordinator: Some(url),
            ..
        } => {
            let remote_error = |e| match e {
                gamesolver::client::RemoteError::BadInput(m) => Failure::bad_input(m),
                gamesolver::client::RemoteError::NoResult(m) => Failure::no_result(m),
            };
            let found = gamesolver::client::remote(&url)
                .and_then(|r| r.lookup(&name, &position))
                .map_err(remote_error)?;
            let best: Vec<&str> = found["best"]
                .as_array()
                .map(|b| b.iter().filter_map(|m| m.as_str()).collect())
                .unwrap_or_default();
            println!("score {}", found["score"]);
            println!("{}", best_line(&best));
            Ok(())
        }
        TablesAction::Lookup {
            name,
            position,
            pits,
            coordinator: None,
        } => {
            let (game, tag, dir) = open(&name, pits)?;
            if position.contains(';') {
                return Err(Failure::bad_input(
                    "tables: a lookup takes a board (12 pit counts), not moves",
                ));
            }
            let state = game
                .parse_position(&position)
                .map_err(|e| Failure::bad_input(format!("tables: position: {e}")))?;
            let board = game.board(&state);
            let stones = game.stones(&board);
            let tables = load(&game, &tag, &dir, &name)?;
            let Some((score, moves)) = retrograde::best_moves(&game, &tables, &board) else {
                return Err(Failure::bad_input(format!(
                    "tables: '{name}' covers 0 to {} stones, this position has {stones}",
                    tables.len() - 1
                )));
            };
            let moves: Vec<String> = moves.iter().map(|&m| game.format_move(&state, m)).collect();
            let moves: Vec<&str> = moves.iter().map(String::as_str).collect();
            println!("score {score}");
            println!("{}", best_line(&moves));
            Ok(())
        }
    }
}

/// The line of a lookup that names the best moves.
fn best_line(moves: &[&str]) -> String {
    if moves.is_empty() {
        "best none (the game is over)".to_string()
    } else {
        format!("best {}", moves.join(" "))
    }
}

/// The game, the file tag of its databases and the set's folder.
fn open(name: &str, pits: usize) -> Result<(Awari, String, PathBuf), Failure> {
    let name = data::plain_name(name).map_err(|e| Failure::bad_input(format!("tables: {e}")))?;
    let game = Awari::new(pits).map_err(|e| Failure::bad_input(format!("tables: {e}")))?;
    let tag = game.table_tag();
    Ok((game, tag, data::user_dir().join("tables").join(name)))
}

/// Every database of the set, each checked; an empty set is bad input.
fn load(game: &Awari, tag: &str, dir: &std::path::Path, name: &str) -> Result<Tables, Failure> {
    let tables = store::load_tables(game, tag, dir, game.max_stones())
        .map_err(|e| Failure::no_result(format!("tables: {e}")))?;
    if tables.is_empty() {
        return Err(Failure::bad_input(format!(
            "tables: no databases '{name}' in the data folder"
        )));
    }
    Ok(tables)
}

/// Bytes a build up to `top` holds at its peak: every lower database once, the top one twice
/// (the previous round and the one being written).
fn build_bytes(game: &Awari, top: usize) -> u64 {
    (0..=top).map(|db| game.db_len(db)).sum::<u64>() + game.db_len(top)
}

/// Runs `f` on a rayon pool of `threads` threads.
fn in_pool<T>(threads: usize, f: impl FnOnce() -> Result<T, Failure> + Send) -> Result<T, Failure>
where
    T: Send,
{
    if threads == 0 || threads > 256 {
        return Err(Failure::bad_input(
            "tables: --threads must be between 1 and 256",
        ));
    }
    retrograde::with_threads(threads, f).map_err(|e| Failure::no_result(format!("tables: {e}")))?
}

/// Builds the databases up to `top`, continuing from the files in `dir`.
fn build(game: &Awari, tag: &str, dir: &std::path::Path, top: usize) -> Result<(), Failure> {
    let mut tables = store::load_tables(game, tag, dir, top)
        .map_err(|e| Failure::no_result(format!("tables: {e}")))?;
    if !tables.is_empty() {
        eprintln!("databases 0..{} found and checked", tables.len() - 1);
    }
    let start = Instant::now();
    // On a terminal, one bar over the databases whose message follows the rounds; elsewhere
    // (a log file) only the line per database below.
    let bar = std::io::IsTerminal::is_terminal(&std::io::stderr()).then(|| {
        let b = indicatif::ProgressBar::new((top + 1) as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {pos}/{len} databases  {msg}",
            )
            .expect("static template")
            .progress_chars("=> "),
        );
        b.set_position(tables.len() as u64);
        b.enable_steady_tick(std::time::Duration::from_millis(200));
        b
    });
    while tables.len() <= top {
        let db = tables.len();
        let t0 = Instant::now();
        let (entries, stats) = retrograde::build_database(game, db, &tables, |round, changed| {
            if let Some(b) = &bar {
                b.set_message(format!(
                    "{db} stones: round {round}, {changed} entries changed"
                ));
            }
        });
        let secs = t0.elapsed().as_secs_f64();
        let sum = store::write_database(dir, tag, db, &entries)
            .map_err(|e| Failure::no_result(format!("tables: {e}")))?;
        let line = format!(
            "{db} stones: {} positions, {} rounds, {secs:.2} s, {:.2} M positions/s per round, sha256 {}",
            stats.positions,
            stats.rounds,
            stats.positions as f64 * stats.rounds as f64 / secs.max(1e-9) / 1e6,
            hex(&sum)
        );
        match &bar {
            // Above the bar, which stays at the bottom.
            Some(b) => {
                b.suspend(|| println!("{line}"));
                b.inc(1);
            }
            None => println!("{line}"),
        }
        tables.push(entries);
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    eprintln!("done in {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
