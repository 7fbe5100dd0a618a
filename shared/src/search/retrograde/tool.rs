//! A game's endgame databases behind one object: what the `tables` command and the
//! coordinator's lookup route do with them (build, verify, look a position up) without naming
//! the game. A game offers it through its catalogue entry (`GameEntry::TABLES`) by implementing
//! [`TableGame`]; [`EndgameTables`] is then implemented for it.

use super::line::principal_line_by;
use super::store::{self, StoreError};
use super::{best_moves_by, build_database, verify_database, BuildStats, Tables};
use crate::model::{Game, Retrograde};
use std::path::Path;

/// What a game adds to [`Retrograde`] for its databases to be built and read by name.
pub trait TableGame: Retrograde + Game {
    /// The tag of this board's database files (the game and the parameters that change them).
    fn table_tag(&self) -> String;
    /// The largest database a build may go to on this board.
    fn max_db(&self) -> usize;
    /// What database `db` is called in progress lines and errors (`"12 stones"`).
    fn db_label(&self, db: usize) -> String;
    /// The state of a position a lookup names (a board, not moves: a lookup has no history).
    fn lookup_state(&self, text: &str) -> Result<Self::State, String>;
    /// The board of `state` as the databases see it.
    fn table_board(&self, state: &Self::State) -> <Self as Retrograde>::Board;
    /// A state of `board` (side to move first, nothing played), to print it and its moves.
    fn board_state(&self, board: &<Self as Retrograde>::Board) -> Self::State;
    /// A database move from `state`, in the game's notation.
    fn table_move(&self, state: &Self::State, m: <Self as Retrograde>::Move) -> String;
}

/// A lookup's answer: the position's database and, when the set covers it, its score (from the
/// side to move's point of view), the moves that keep it and its principal line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lookup {
    /// The position's database.
    pub db: usize,
    /// `None` when the set does not reach `db`.
    pub found: Option<Found>,
}

/// What the databases say of a covered position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The score for the side to move.
    pub score: i32,
    /// The moves that keep it, in the game's notation.
    pub best: Vec<String>,
    /// The principal line (`search::retrograde::line`), when asked for.
    pub line: Option<TextLine>,
}

/// A principal line in the game's notation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextLine {
    /// Each move: the position it is played from, the move, the position's value for the
    /// mover and what the move scores on the way.
    pub moves: Vec<(String, String, i32, i32)>,
    /// The position the line ends at.
    pub position: String,
    /// Its value for its side to move.
    pub value: i32,
    /// Why the line stops (`LineEnd::name`).
    pub end: &'static str,
}

/// Bounds of a lookup's principal line: most moves, and most positions visited to find the
/// distances that make it progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineLimits {
    /// Most moves.
    pub plies: usize,
    /// Most positions visited.
    pub nodes: usize,
}

/// One game's databases, object-safe; see the module doc.
pub trait EndgameTables: Send + Sync {
    /// [`TableGame::table_tag`].
    fn tag(&self) -> String;
    /// [`TableGame::max_db`].
    fn max_db(&self) -> usize;
    /// [`TableGame::db_label`].
    fn db_label(&self, db: usize) -> String;
    /// Positions in database `db`.
    fn db_len(&self, db: usize) -> u64;
    /// The databases `0..` found in `dir` (at most `0..=top`), each checked.
    fn load(&self, dir: &Path, top: usize) -> Result<Tables, StoreError>;
    /// Builds database `db` over `below`; `progress(round, changed)` after each round.
    fn build(
        &self,
        db: usize,
        below: &Tables,
        progress: &mut dyn FnMut(u32, u64),
    ) -> (Vec<i8>, BuildStats);
    /// The entries of database `db` that disagree with their successors' (Romein and Bal's
    /// check); 0 for a correct database.
    fn verify(&self, tables: &Tables, db: usize) -> usize;
    /// Looks `position` up, reading entries through `entry(db, index)` for `db < covered`,
    /// with its principal line when `line` bounds one. `Err(Ok(text))`: the position is bad;
    /// `Err(Err(e))`: an entry could not be read.
    fn lookup(
        &self,
        position: &str,
        covered: usize,
        entry: &mut dyn FnMut(usize, u64) -> Result<i32, String>,
        line: Option<LineLimits>,
    ) -> Result<Lookup, Result<String, String>>;
}

impl<G: TableGame> EndgameTables for G {
    fn tag(&self) -> String {
        self.table_tag()
    }
    fn max_db(&self) -> usize {
        TableGame::max_db(self)
    }
    fn db_label(&self, db: usize) -> String {
        TableGame::db_label(self, db)
    }
    fn db_len(&self, db: usize) -> u64 {
        Retrograde::db_len(self, db)
    }
    fn load(&self, dir: &Path, top: usize) -> Result<Tables, StoreError> {
        store::load_tables(self, &self.table_tag(), dir, top)
    }
    fn build(
        &self,
        db: usize,
        below: &Tables,
        progress: &mut dyn FnMut(u32, u64),
    ) -> (Vec<i8>, BuildStats) {
        build_database(self, db, below, progress)
    }
    fn verify(&self, tables: &Tables, db: usize) -> usize {
        verify_database(self, tables, db).len()
    }
    fn lookup(
        &self,
        position: &str,
        covered: usize,
        entry: &mut dyn FnMut(usize, u64) -> Result<i32, String>,
        line: Option<LineLimits>,
    ) -> Result<Lookup, Result<String, String>> {
        let state = self.lookup_state(position).map_err(Ok)?;
        let board = self.table_board(&state);
        let (db, _) = self.rank(&board);
        let Some((score, moves)) =
            best_moves_by(self, covered, &board, &mut *entry).map_err(Err)?
        else {
            return Ok(Lookup { db, found: None });
        };
        let best = moves.iter().map(|&m| self.table_move(&state, m)).collect();
        let line = match line {
            None => None,
            Some(limits) => principal_line_by(
                self,
                covered,
                &board,
                &mut *entry,
                limits.plies,
                limits.nodes,
            )
            .map_err(Err)?
            .map(|l| {
                let moves = l
                    .moves
                    .iter()
                    .zip(&l.boards)
                    .map(|(m, b)| {
                        let s = self.board_state(b);
                        let text = self.format_position(&s);
                        (text, self.table_move(&s, m.mv), m.value, m.gain)
                    })
                    .collect();
                let last = self.board_state(l.boards.last().expect("a line has a position"));
                TextLine {
                    moves,
                    position: self.format_position(&last),
                    value: l.last_value,
                    end: l.end.name(),
                }
            }),
        };
        Ok(Lookup {
            db,
            found: Some(Found { score, best, line }),
        })
    }
}
