//! `gamesolver tables`: a game's endgame databases by retrograde analysis, through the game's
//! catalogue hook (`GameEntry::TABLES`), kept in the data folder's `tables/NAME` as one
//! checksummed file per database.
//!
//! - `build NAME --stones N` builds the databases 0..=N, continuing from the files already
//!   there (each is checked before it is used), so a build that is stopped loses at most the
//!   database in flight.
//! - `verify NAME` recomputes every entry from its successors' entries (Romein and Bal's check)
//!   and reports the mismatches (exit 1 when there are any).
//! - `lookup NAME POSITION` prints the score of a position and its best moves.
//!
//! `--game` names the game (default: the one game with databases); NAME is a plain data name,
//! never a path. Bad input exits 2 with one line.

use crate::cli::{parse_settings, Failure};
use clap::{Args, Subcommand};
use gamesolver_shared::games::data;
use gamesolver_shared::model::settings::Opts;
use gamesolver_shared::registry::catalogue;
use gamesolver_shared::search::retrograde::tool::{EndgameTables, LineLimits};
use gamesolver_shared::search::retrograde::{self, store, Tables};
use std::path::PathBuf;
use std::time::Instant;

/// The game of a `tables` command and its parameters.
#[derive(Debug, Args)]
pub struct GameArgs {
    /// The game (default: the one game with endgame databases, while there is one).
    #[arg(long)]
    pub game: Option<String>,
    /// Game parameter KEY=VALUE (repeatable), e.g. --game-param pits=4.
    #[arg(long = "game-param", value_name = "KEY=VALUE")]
    pub game_params: Vec<String>,
}

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
        /// Largest database to build (Awari: the stone count).
        #[arg(long)]
        stones: u32,
        #[command(flatten)]
        game: GameArgs,
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
        #[command(flatten)]
        game: GameArgs,
        /// Worker threads.
        #[arg(long, default_value_t = 1)]
        threads: usize,
    },
    /// Print the score of POSITION (the game's notation) and its best moves.
    Lookup {
        /// The set's name.
        name: String,
        /// The position (Awari: the pit counts, side to move first; empty: the start).
        position: String,
        #[command(flatten)]
        game: GameArgs,
        /// Look the board up in the set this coordinator built (`GET
        /// /v1/tables/NAME/lookup`; the game is the build's, `--game` is not used), instead of
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
            game,
            threads,
            memory_mb,
        } => build_set(&name, stones, &game, threads, memory_mb),
        TablesAction::Verify {
            name,
            game,
            threads,
        } => verify(&name, &game, threads),
        TablesAction::Lookup {
            name,
            position,
            coordinator: Some(url),
            ..
        } => lookup_remote(&url, &name, &position),
        TablesAction::Lookup {
            name,
            position,
            game,
            coordinator: None,
        } => lookup(&name, &position, &game),
    }
}

/// `gamesolver tables build`: the databases up to `stones` into set `name`, within
/// `memory_mb`.
fn build_set(
    name: &str,
    stones: u32,
    game: &GameArgs,
    threads: usize,
    memory_mb: u64,
) -> Result<(), Failure> {
    let (game, dir) = open(name, game)?;
    if stones as usize > game.max_db() {
        return Err(Failure::bad_input(format!(
            "tables: --stones must be at most {} on this board",
            game.max_db()
        )));
    }
    let need = build_bytes(&*game, stones as usize);
    if need > memory_mb << 20 {
        return Err(Failure::bad_input(format!(
            "tables: the databases up to {stones} stones need {} MiB, more than --memory-mb {memory_mb}",
            need >> 20
        )));
    }
    in_pool(threads, || build(&*game, &dir, stones as usize))
}

/// `gamesolver tables verify`: every entry of set `name` against its successors.
fn verify(name: &str, game: &GameArgs, threads: usize) -> Result<(), Failure> {
    let (game, dir) = open(name, game)?;
    let tables = load(&*game, &dir, name)?;
    in_pool(threads, || {
        let mut bad = 0usize;
        for db in 0..tables.len() {
            let t0 = Instant::now();
            let wrong = game.verify(&tables, db);
            println!(
                "{}: {} entries, {wrong} mismatches ({:.1} s)",
                game.db_label(db),
                game.db_len(db),
                t0.elapsed().as_secs_f64()
            );
            bad += wrong;
        }
        if bad == 0 {
            Ok(())
        } else {
            Err(Failure::no_result(format!("tables: {bad} mismatches")))
        }
    })
}

/// `gamesolver tables lookup --coordinator URL`: `position` in the set `name` that coordinator
/// built.
fn lookup_remote(url: &str, name: &str, position: &str) -> Result<(), Failure> {
    let remote_error = |e| match e {
        gamesolver::client::RemoteError::BadInput(m) => Failure::bad_input(m),
        gamesolver::client::RemoteError::NoResult(m) => Failure::no_result(m),
    };
    let found = gamesolver::client::remote(url)
        .and_then(|r| r.lookup(name, position))
        .map_err(remote_error)?;
    let best: Vec<&str> = found["best"]
        .as_array()
        .map(|b| b.iter().filter_map(|m| m.as_str()).collect())
        .unwrap_or_default();
    println!("score {}", found["score"]);
    println!("{}", best_line(&best));
    let line = &found["line"];
    if let Some(moves) = line["moves"].as_array() {
        let moves: Vec<&str> = moves.iter().filter_map(|m| m["move"].as_str()).collect();
        println!(
            "line {} ({}: {}, value {})",
            moves.join(" "),
            line["end"].as_str().unwrap_or_default(),
            line["position"].as_str().unwrap_or_default(),
            line["value"]
        );
    }
    Ok(())
}

/// `gamesolver tables lookup`: `position` in set `name` of the data folder.
fn lookup(name: &str, position: &str, game: &GameArgs) -> Result<(), Failure> {
    let (game, dir) = open(name, game)?;
    let tables = load(&*game, &dir, name)?;
    let found = game
        .lookup(
            position,
            tables.len(),
            &mut |db, index| Ok(tables.db(db)[index as usize] as i32),
            Some(LineLimits {
                plies: 400,
                nodes: 20_000,
            }),
        )
        .map_err(|e| match e {
            Ok(bad) => Failure::bad_input(format!("tables: {bad}")),
            Err(io) => Failure::no_result(format!("tables: {io}")),
        })?;
    let Some(found_here) = found.found else {
        return Err(Failure::bad_input(format!(
            "tables: '{name}' covers 0 to {}, this position has {}",
            game.db_label(tables.len() - 1),
            game.db_label(found.db)
        )));
    };
    let moves: Vec<&str> = found_here.best.iter().map(String::as_str).collect();
    println!("score {}", found_here.score);
    println!("{}", best_line(&moves));
    if let Some(line) = &found_here.line {
        let moves: Vec<&str> = line.moves.iter().map(|m| m.1.as_str()).collect();
        println!(
            "line {} ({}: {}, value {})",
            moves.join(" "),
            line.end,
            line.position,
            line.value
        );
    }
    Ok(())
}

/// The line of a lookup that names the best moves.
fn best_line(moves: &[&str]) -> String {
    if moves.is_empty() {
        "best none (the game is over)".to_string()
    } else {
        format!("best {}", moves.join(" "))
    }
}

/// The game's databases (through its catalogue hook) and the set's folder.
fn open(name: &str, args: &GameArgs) -> Result<(Box<dyn EndgameTables>, PathBuf), Failure> {
    let name = data::plain_name(name).map_err(|e| Failure::bad_input(format!("tables: {e}")))?;
    let with_tables = catalogue::table_games();
    let game = match (&args.game, with_tables.as_slice()) {
        (Some(game), _) => game.clone(),
        (None, [only]) => only.to_string(),
        (None, _) => {
            return Err(Failure::bad_input(format!(
                "tables: --game is required (games with databases: {})",
                with_tables.join(", ")
            )))
        }
    };
    let hook = match catalogue::info(&game) {
        None => Err(format!("unknown game '{game}'")),
        Some(info) => info
            .tables
            .ok_or(format!("{game} has no endgame databases")),
    }
    .map_err(|e| {
        Failure::bad_input(format!(
            "tables: {e} (games with databases: {})",
            with_tables.join(", ")
        ))
    })?;
    let params = parse_settings(&args.game_params, "game parameter")?;
    let tables = hook(&Opts::new(&params, "game parameter"))
        .map_err(|e| Failure::bad_input(format!("tables: {e}")))?;
    Ok((tables, data::user_dir().join("tables").join(name)))
}

/// Every database of the set, each checked; an empty set is bad input.
fn load(game: &dyn EndgameTables, dir: &std::path::Path, name: &str) -> Result<Tables, Failure> {
    let tables = game
        .load(dir, game.max_db())
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
fn build_bytes(game: &dyn EndgameTables, top: usize) -> u64 {
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
fn build(game: &dyn EndgameTables, dir: &std::path::Path, top: usize) -> Result<(), Failure> {
    let tag = game.tag();
    let mut tables = game
        .load(dir, top)
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
        let label = game.db_label(db);
        let (entries, stats) = game.build(db, &tables, &mut |round, changed| {
            if let Some(b) = &bar {
                b.set_message(format!("{label}: round {round}, {changed} entries changed"));
            }
        });
        let secs = t0.elapsed().as_secs_f64();
        let sum = store::write_database(dir, &tag, db, &entries)
            .map_err(|e| Failure::no_result(format!("tables: {e}")))?;
        let line = format!(
            "{label}: {} positions, {} rounds, {secs:.2} s, {:.2} M positions/s per round, sha256 {}",
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
