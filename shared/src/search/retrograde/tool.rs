//! A game's endgame databases behind one object: what the `tables` command and the
//! coordinator's lookup route do with them (build, verify, look a position up) without naming
//! the game. A game offers it through its catalogue entry (`GameEntry::TABLES`) by implementing
//! [`TableGame`]; [`EndgameTables`] is then implemented for it.

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
    /// A database move from `state`, in the game's notation.
    fn table_move(&self, state: &Self::State, m: <Self as Retrograde>::Move) -> String;
}

/// A lookup's answer: the position's database and, when the set covers it, its score (from the
/// side to move's point of view) and the moves that keep it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lookup {
    /// The position's database.
    pub db: usize,
    /// Score and best moves; `None` when the set does not reach `db`.
    pub found: Option<(i32, Vec<String>)>,
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
    /// Looks `position` up, reading entries through `entry(db, index)` for `db < covered`.
    fn lookup(
        &self,
        position: &str,
        covered: usize,
        entry: &mut dyn FnMut(usize, u64) -> Result<i32, String>,
    ) -> Result<Lookup, String>;
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
    ) -> Result<Lookup, String> {
        let state = self.lookup_state(position)?;
        let board = self.table_board(&state);
        let (db, _) = self.rank(&board);
        let found = best_moves_by(self, covered, &board, entry)?.map(|(score, moves)| {
            let moves = moves.iter().map(|&m| self.table_move(&state, m)).collect();
            (score, moves)
        });
        Ok(Lookup { db, found })
    }
}
