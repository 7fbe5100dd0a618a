//! Game-specific fast paths of exact two-player search, reached through one capability trait.
//!
//! The generic engine (`search::engine`) solves every [`ZeroSum`] game. A game with a solver of
//! its own (Connect Four's bitboard solver, Othello's end-game solver) says so here, with the
//! knobs that go with it: an opening book, a first guess for the probe plan, and the roots small
//! enough for one task. Every hook has a default of "none", so a game without a fast path only
//! writes `impl Exact for MyGame { type Book = (); }`, and the registry never names a game.

use crate::model::settings::SolveError;
use crate::model::{Hashed, Tactics, ZeroSum};
use crate::search::engine::{Outcome, Table};
use crate::search::eval::{Evaluated, Evaluator};
use crate::search::Control;
use std::sync::Arc;

/// A two-player zero-sum game with hashes and tactics, and its optional exact fast paths.
/// `Clone`, so that an analysis job can give each root move's exact job its own copy.
pub trait Exact: ZeroSum + Hashed + Tactics + Clone {
    /// An opening book the game's solver reads (`book=FILE`); `()` for games without books.
    type Book: Send + Sync + 'static;

    /// Exact fail-soft search of `root` in the window `(alpha, beta)` (internal scale) by the
    /// game's own solver, with the contract of the generic engine's exact search. `None`: no
    /// solver of its own applies (the generic engine runs); `Some(None)`: stopped by `ctl`.
    #[allow(clippy::too_many_arguments)]
    fn exact_search(
        &self,
        root: &Self::State,
        alpha: i32,
        beta: i32,
        threads: usize,
        table: &Table,
        book: Option<&Self::Book>,
        ctl: &Control,
    ) -> Option<Option<Outcome<Self::Move>>> {
        let _ = (root, alpha, beta, threads, table, book, ctl);
        None
    }

    /// A depth-limited search of `root` to `depth` plies in the window `(alpha, beta)` by the
    /// game's own means, with the contract of the generic engine's depth-limited search (the
    /// outcome's `depth` the depth it reached). `None`: nothing of its own for this root and
    /// depth (the generic engine runs with the game's `evaluate`); `Some(None)`: stopped by
    /// `ctl`. Othello solves exactly when `depth` covers every empty square.
    #[allow(clippy::too_many_arguments)]
    fn depth_search(
        &self,
        root: &Self::State,
        depth: u32,
        alpha: i32,
        beta: i32,
        threads: usize,
        table: &Table,
        ctl: &Control,
    ) -> Option<Option<Outcome<Self::Move>>> {
        let _ = (root, depth, alpha, beta, threads, table, ctl);
        None
    }

    /// The leaf a job-level search (`jlpns`) runs by default on this game: its own exact solver
    /// (the `alphabeta` leaf kernel) or df-pn, and the node budget of one leaf task with one
    /// worker. Where the game's solver beats df-pn on a leaf, say so here (Connect Four).
    fn job_level_leaf(&self) -> JobLevelLeaf {
        JobLevelLeaf {
            own_solver: false,
            budget: 1_000_000,
        }
    }

    /// Whether the game's own exact solver decides `s` so quickly that a job-level leaf there
    /// runs it (the `alphabeta` leaf kernel) whatever kernel the job's default names: Othello
    /// near the end of the game, where its end-game solver beats df-pn.
    fn fast_leaf(&self, s: &Self::State) -> bool {
        let _ = s;
        false
    }

    /// Whether this game (with its parameters) takes an opening book.
    fn takes_book(&self) -> bool {
        false
    }

    /// Loads the opening book `name` (a plain file name in the game's data folder, read once
    /// per process) for this game. Only asked when [`Exact::takes_book`]. Errors start with
    /// `book` or name it ("no book 'x' in the data folder").
    fn load_book(&self, name: &str) -> Result<Arc<Self::Book>, String> {
        let _ = name;
        Err("book: this game takes no opening book".into())
    }

    /// This game reading exact values from the endgame databases `name` (option `tables=NAME`:
    /// a set in the data folder's `tables/NAME`, never a path, or `NAME@HASH`, a set the
    /// coordinator built) wherever they cover a position. Errors start with `tables`; a set
    /// that the job names correctly but that cannot be fetched is [`SolveError::Internal`] (the
    /// attempt fails, not the job).
    fn with_tables(&self, name: &str) -> Result<Self, SolveError> {
        let _ = name;
        Err(SolveError::bad(format!(
            "tables: game '{}' has no endgame databases",
            self.name()
        )))
    }

    /// The first guess of the exact value of `root` where the probe plan starts, when the game
    /// has a cheap and good one; `None`: the planner bisects from the middle.
    fn first_guess(&self, root: &Self::State) -> Option<i32> {
        let _ = root;
        None
    }

    /// Whether an exact search of `root` is so quick that one full-window task beats the
    /// planner's null-window probes.
    fn one_task(&self, root: &Self::State) -> bool {
        let _ = root;
        false
    }

    /// What the game's own solver proved below `root` and left in `table`, for other workers
    /// of the same job ([`crate::wire::Proved`]): entries of positions reachable from `root`
    /// whose search took at least `2^min_work` nodes, at most `max` of them. `None`: the game
    /// has no solver of its own, or its entries cannot be exchanged. Only games without
    /// repetitions implement it: a proved bound of a position then holds on every path.
    fn export_proved(
        &self,
        root: &Self::State,
        table: &Table,
        min_work: u32,
        max: usize,
    ) -> Option<Vec<crate::wire::Proved>> {
        let _ = (root, table, min_work, max);
        None
    }

    /// Stores entries that [`Exact::export_proved`] gave (on any worker) into `table`, where
    /// the solver's replacement policy lets them in. Entries that do not decode for this game
    /// are skipped: they come over the network.
    fn import_proved(&self, table: &Table, entries: &[crate::wire::Proved]) {
        let _ = (table, entries);
    }
}

/// A game with a weighted-feature evaluator keeps no fast path: the evaluator serves
/// depth-limited search, the fast paths exact search.
impl<G: Exact, E: Evaluator<G>> Exact for Evaluated<G, E> {
    type Book = ();
}

/// A game's default leaf for job-level proof-number search ([`Exact::job_level_leaf`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobLevelLeaf {
    /// The game's own exact solver (the `alphabeta` leaf kernel); else df-pn.
    pub own_solver: bool,
    /// Nodes of one leaf task with one worker (the planner divides it among many).
    pub budget: u64,
}
