//! Opening book: the exact scores of every position of a board
//! up to some number of stones, computed by our own solver ([`build`]), written to a text file,
//! and read back by any worker ([`load`], job option `book=FILE`). The fast solver
//! ([`super::solver`]) answers a position of at most `depth` stones from the book without
//! searching it.
//!
//! ## File format
//! ```text
//! # gamesolver connect4 book width=7 height=6 depth=2
//! 4 -2
//! 44 ...
//! ```
//! The header names the board and the depth; every other line is a position (columns played,
//! base 1, as in Pons' test sets) and its exact score. Every non-terminal position with at most
//! `depth` stones is in the file once up to mirror image (the mirror image has the same score;
//! lookups use the smaller of a position's key and its mirror's).

use super::solver::{self, Geometry};
use super::{C4State, Connect4, PARAM_BASE, PARAM_HEIGHT, PARAM_WIDTH};
use crate::games::entry::BookRequest;
use crate::model::settings::{Opts, SolveError};
use crate::model::{excerpt, Game};
use crate::search::engine::Table;
use crate::search::Control;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A loaded book.
#[derive(Debug)]
pub struct Book {
    width: u32,
    height: u32,
    depth: u32,
    scores: HashMap<u64, i8>,
}

impl Book {
    /// Positions of at most this many stones are in the book.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Number of positions stored.
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    /// Whether the book holds no position.
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    /// Whether the book is for this board.
    pub fn fits(&self, game: &Connect4<u64>) -> bool {
        self.width == game.width && self.height == game.height
    }

    /// The exact score of the position with canonical key `key` and `stones` stones.
    #[inline]
    pub fn get(&self, stones: u32, key: u64) -> Option<i32> {
        if stones > self.depth {
            return None;
        }
        self.scores.get(&key).map(|&v| v as i32)
    }

    /// Reads a book for `game` from its text (see the module doc).
    pub fn parse(game: &Connect4<u64>, text: &str) -> Result<Book, String> {
        let mut lines = text.lines();
        let header = lines.next().unwrap_or("");
        let mut fields = HashMap::new();
        let mut words = header.split_whitespace();
        if (words.next(), words.next(), words.next(), words.next())
            != (
                Some("#"),
                Some("gamesolver"),
                Some("connect4"),
                Some("book"),
            )
        {
            return Err("not a connect4 book (first line '# gamesolver connect4 book ...')".into());
        }
        for w in words {
            let (k, v) = w
                .split_once('=')
                .ok_or_else(|| format!("book header field '{}' is not key=value", excerpt(w)))?;
            let v: u32 = v
                .parse()
                .map_err(|_| format!("book header field '{}' is not a number", excerpt(w)))?;
            fields.insert(k.to_string(), v);
        }
        let field = |k: &str| {
            fields
                .get(k)
                .copied()
                .ok_or_else(|| format!("book header has no '{k}='"))
        };
        let (width, height, depth) = (field("width")?, field("height")?, field("depth")?);
        if (width, height) != (game.width, game.height) {
            return Err(format!(
                "book is for a {width} x {height} board, the job's board is {} x {}",
                game.width, game.height
            ));
        }
        let base1 = Connect4::<u64>::new(width, height, 1)?;
        let geo = Geometry::new(&base1);
        let mut scores = HashMap::new();
        for (i, line) in lines.enumerate() {
            let line = line.trim_end();
            if line.is_empty() {
                continue;
            }
            let bad = |why: String| format!("book line {}: {why}", i + 2);
            let (moves, score) = line
                .split_once(' ')
                .ok_or_else(|| bad("expected '<moves> <score>'".into()))?;
            let s = base1
                .parse_position(moves)
                .map_err(|e| bad(e.to_string()))?;
            let score: i8 = score
                .trim()
                .parse()
                .map_err(|_| bad(format!("score '{}' is not a small integer", excerpt(score))))?;
            if s.moves > depth as u16 || base1.is_terminal(&s) {
                return Err(bad("position deeper than the book or finished".into()));
            }
            scores.insert(geo.canonical(s.current, s.mask).0, score);
        }
        Ok(Book {
            width,
            height,
            depth,
            scores,
        })
    }
}

/// Books already read, by path (a worker reads a book once).
static LOADED: Mutex<Vec<(PathBuf, Arc<Book>)>> = Mutex::new(Vec::new());

/// Reads the book at `path` for `game` (once per process; later calls share it).
pub fn load(game: &Connect4<u64>, path: &Path) -> Result<Arc<Book>, String> {
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, b)) = loaded.iter().find(|(p, _)| p == path) {
        return if b.fits(game) {
            Ok(b.clone())
        } else {
            Err(format!(
                "book '{}' is for a {} x {} board, the job's board is {} x {}",
                path.file_name().unwrap_or_default().to_string_lossy(),
                b.width,
                b.height,
                game.width,
                game.height
            ))
        };
    }
    // Errors name the file, not its folder: they reach users of the service.
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read book '{name}' ({})", e.kind()))?;
    let book = Arc::new(Book::parse(game, &text).map_err(|e| format!("book '{name}': {e}"))?);
    loaded.push((path.to_path_buf(), book.clone()));
    Ok(book)
}

/// Most positions a book holds: every one is solved exactly (hours at a million), and the list
/// of them is held in memory while the book is built (about 100 bytes each).
pub const MAX_BOOK_POSITIONS: usize = 1_000_000;

/// Largest table of a book build, in MiB (as a job's `memory_mb`).
pub const MAX_TABLE_MB: u64 = 1 << 20;

/// [`positions`], refused as soon as there are more than `max` of them: the count grows
/// exponentially with the depth, so a deep book is found out after `max` positions, not after
/// the memory is gone. The error names the deepest book within the bound.
pub fn positions_within(
    game: &Connect4<u64>,
    depth: u32,
    max: usize,
) -> Result<Vec<(String, C4State<u64>)>, String> {
    let mut deepest = 0;
    let all = positions_upto(game, depth, max, &mut deepest);
    if all.len() > max {
        return Err(format!(
            "--depth {depth} gives more than {max} positions on a {} x {} board (--depth {deepest} gives at most that many)",
            game.width, game.height
        ));
    }
    Ok(all)
}

/// Every non-terminal position of `game` with at most `depth` stones, one per mirror pair, in
/// order of stones (a legal move order for each).
pub fn positions(game: &Connect4<u64>, depth: u32) -> Vec<(String, C4State<u64>)> {
    positions_upto(game, depth, usize::MAX, &mut 0)
}

/// [`positions`], stopping once there are more than `max`; `deepest` is set to the largest
/// number of stones whose positions all fit.
fn positions_upto(
    game: &Connect4<u64>,
    depth: u32,
    max: usize,
    deepest: &mut u32,
) -> Vec<(String, C4State<u64>)> {
    let geo = Geometry::new(game);
    let mut seen = std::collections::HashSet::new();
    let mut level = vec![(String::new(), game.initial_state())];
    let mut out = Vec::new();
    let mut moves = Vec::new();
    for stones in 0..=depth {
        let mut next = Vec::new();
        for (text, s) in level {
            if !seen.insert(geo.canonical(s.current, s.mask).0) {
                continue;
            }
            if stones < depth {
                game.legal_moves(&s, &mut moves);
                for &m in &moves {
                    let mut c = s;
                    game.apply(&mut c, m);
                    if !game.is_terminal(&c) {
                        next.push((format!("{text}{}", game.format_move(&s, m)), c));
                    }
                }
            }
            out.push((text, s));
            if out.len() > max {
                return out;
            }
        }
        *deepest = stones;
        level = next;
    }
    out
}

/// Builds the book of `game` up to `depth` stones with our solver (`threads` threads, a table of
/// `table_mb` MB shared by all positions); `progress(done, total)` is called after each position.
/// Returns the file's text, or `None` when stopped.
pub fn build(
    game: &Connect4<u64>,
    depth: u32,
    threads: usize,
    table_mb: u64,
    ctl: &Control,
    mut progress: impl FnMut(usize, usize),
) -> Result<Option<String>, String> {
    if !solver::applies(game) {
        return Err(format!(
            "books are for boards of at most {} bitboard bits ({} x {} has {})",
            solver::MAX_FAST_BITS,
            game.width,
            game.height,
            game.width * (game.height + 1)
        ));
    }
    let base1 = Connect4::<u64>::new(game.width, game.height, 1)?;
    let cells = game.width * game.height;
    if depth > cells {
        return Err(format!(
            "--depth {depth} is more stones than the {} x {} board's {cells} cells",
            game.width, game.height
        ));
    }
    if table_mb > MAX_TABLE_MB {
        return Err(format!(
            "--memory-mb {table_mb} is over {MAX_TABLE_MB} (1 TiB)"
        ));
    }
    let all = positions_within(&base1, depth, MAX_BOOK_POSITIONS)?;
    let table = Table::with_bytes((table_mb.max(1) << 20) as usize)?;
    let mut text = format!(
        "# gamesolver connect4 book width={} height={} depth={depth}\n",
        game.width, game.height
    );
    // Deepest first: shallower positions then find their children's subtrees in the table.
    for (i, (moves, s)) in all.iter().rev().enumerate() {
        let Some(score) = solver::solve(&base1, s, threads, &table, None, ctl) else {
            return Ok(None);
        };
        text.push_str(&format!("{moves} {score}\n"));
        progress(i + 1, all.len());
    }
    Ok(Some(text))
}

/// [`build`] as the catalogue's book hook (`gamesolver book`): the board from the game's
/// parameters. A book is written in the 1-based notation whatever `base` says (the notation of
/// the jobs that read it).
pub fn build_from_params(
    params: &Opts,
    request: &BookRequest,
    ctl: &Control,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Option<String>, SolveError> {
    let width = params.uint_value(&PARAM_WIDTH)?;
    let height = params.uint_value(&PARAM_HEIGHT)?;
    params.uint_value::<u8>(&PARAM_BASE)?;
    params.finish()?;
    let game = Connect4::<u64>::new(width, height, 1).map_err(SolveError::bad)?;
    build(
        &game,
        request.depth,
        request.threads,
        request.table_mb,
        ctl,
        progress,
    )
    .map_err(SolveError::bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deep book is refused before it fills the memory: the board's cells bound the depth,
    /// and the positions are counted as they are listed.
    #[test]
    fn deep_books_are_refused_at_once() {
        let game = Connect4::<u64>::new(7, 6, 1).unwrap();
        let ctl = Control::unlimited();
        let t = std::time::Instant::now();
        let e = build(&game, 100, 1, 1, &ctl, |_, _| {}).unwrap_err();
        assert!(
            e.contains("more stones than the 7 x 6 board's 42 cells"),
            "{e}"
        );
        let e = build(&game, 40, 1, 1, &ctl, |_, _| {}).unwrap_err();
        assert!(
            e.contains("more than 1000000 positions") && e.contains("--depth 9"),
            "{e}"
        );
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            t.elapsed()
        );
        let small = Connect4::<u64>::new(4, 4, 1).unwrap();
        assert_eq!(
            positions_within(&small, 3, 1000).unwrap(),
            positions(&small, 3)
        );
    }

    #[test]
    fn bad_header_fields_and_scores_are_quoted_on_one_short_line() {
        let game = Connect4::<u64>::new(7, 6, 1).unwrap();
        let long = "x".repeat(10_000);
        for text in [
            format!("# gamesolver connect4 book width=7\n{long}"),
            format!("# gamesolver connect4 book a\r{long}"),
            format!("# gamesolver connect4 book width=7{long}"),
            format!("# gamesolver connect4 book width=7 height=6 depth=4\n4 1\u{0}{long}"),
        ] {
            let e = Book::parse(&game, &text).map(|_| ()).unwrap_err();
            assert!(!e.chars().any(char::is_control) && e.len() < 150, "{e}");
        }
    }
}
