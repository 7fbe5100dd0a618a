//! What a game offers to retrograde analysis (`search::retrograde`): its positions split into
//! databases (Awari: one per number of stones on the board), each ranked densely `0..len`, and
//! the result of every move from a position.
//!
//! Contract. Boards are seen from the side to move and every move hands the turn to the
//! opponent. A move either stays in the same database and scores nothing ([`Successor::Inside`])
//! or leaves it for a database that is solved before it ([`Successor::Below`]; Awari: a capture
//! of `gain` stones lands in the database of `stones - gain`). Values are integers from the side
//! to move's point of view, `|value| <= value_limit(db) <= 127`, so that every entry fits an
//! `i8`; play that goes on for ever inside one database is worth 0 to both sides.

use super::ZeroSum;

/// Where a move from a position of database `db` leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Successor {
    /// The position of this index in the same database, worth nothing on the way.
    Inside(u64),
    /// The position of `index` in the lower database `db`; the mover scores `gain` on the way.
    Below {
        /// The database, solved before the current one.
        db: usize,
        /// The index of the position there.
        index: u64,
        /// What the mover scores with this move (Awari: the stones captured).
        gain: i32,
    },
}

/// A game whose positions retrograde analysis can enumerate; see the module doc.
pub trait Retrograde: Send + Sync {
    /// A position as the databases see it (no history, no score so far).
    type Board: Copy + Send + Sync + std::fmt::Debug;
    /// A move, as the game names it.
    type Move: Copy + Send + Sync + std::fmt::Debug;

    /// Number of positions in database `db`.
    fn db_len(&self, db: usize) -> u64;
    /// The position of `index` (`< db_len(db)`) in database `db`.
    fn unrank(&self, db: usize, index: u64) -> Self::Board;
    /// The database and index of `board`: the inverse of [`Retrograde::unrank`].
    fn rank(&self, board: &Self::Board) -> (usize, u64);
    /// Clears `out` and lists every legal move of `board` (in database `db`) with where it
    /// leads. An empty list means the game is over at `board`.
    fn successors(&self, db: usize, board: &Self::Board, out: &mut Vec<(Self::Move, Successor)>);
    /// Clears `out` and lists the indices, in database `db`, of every position with a legal move
    /// whose successor is [`Successor::Inside`] `board` (the unmove generator; each once). The
    /// retrograde kernel re-evaluates only these after `board`'s entry changes, so the list
    /// must be exact: a position missing from it is never revisited.
    fn predecessors(&self, db: usize, board: &Self::Board, out: &mut Vec<u64>);
    /// The value of a position without moves, from the side to move's point of view.
    fn end_value(&self, db: usize, board: &Self::Board) -> i32;
    /// The largest absolute value a position of database `db` can have (at most 127).
    fn value_limit(&self, db: usize) -> i32;
}

/// A zero-sum game whose search states can be answered from databases: the capability the
/// table-backed search wrapper (`search::retrograde::probe`) needs.
pub trait TableProbe: ZeroSum + Retrograde {
    /// When the value of `state` is `offset + v`, with `v` the database value of `board` (from
    /// the side to move's point of view), returns `(board, offset)`; `None` when the databases
    /// cannot answer for this state (its value depends on more than its board, say).
    fn probe_board(&self, state: &Self::State) -> Option<(Self::Board, i32)>;
}
