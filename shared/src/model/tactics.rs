//! Optional search hints a game gives the alpha-beta engine (`search::engine`): which moves an
//! exact search may skip, which moves are noisy (searched past the depth cut by quiescence) or
//! forcing (searched one ply deeper), and a slot per move for the history heuristic.
//!
//! Every method has a default that gives no hint, so a game opts in with an empty
//! `impl Tactics for MyGame {}` and overrides only what it knows. The engine stays generic: the
//! game-specific knowledge (Connect Four's non-losing moves and its bound from the remaining
//! moves, say) lives here, never in the kernel.
//!
//! Contract of [`Tactics::exact_moves`]: it may leave out moves and tighten bounds, but never
//! changes the exact value. Depth-limited search does not call it (a pruned move could change a
//! depth-limited value), so depth-limited results stay equal to plain minimax with the same
//! evaluator when no move is noisy or forcing.

use super::ZeroSum;

/// Search hints; see the module doc. Values are from `side(state)`'s point of view.
pub trait Tactics: ZeroSum {
    /// For exact search at a non-terminal `state` where [`ZeroSum::immediate_value`] gave
    /// `None`: fills `moves` (cleared first) with the moves worth searching, best first, and
    /// returns bounds `(lower, upper)` on the value known without searching.
    ///
    /// Promise: the value of `state` is the maximum of the kept moves' values (every move left
    /// out is no better than some kept move), or, when `moves` is left empty, `lower == upper`
    /// and that is the value. Default: every legal move in [`ZeroSum::order_moves`]'s order and
    /// [`ZeroSum::value_bounds`].
    fn exact_moves(&self, state: &Self::State, moves: &mut Vec<Self::Move>) -> (i32, i32) {
        self.legal_moves(state, moves);
        self.order_moves(state, moves);
        self.value_bounds(state)
    }

    /// Whether `mv` is noisy at `state`: the static evaluation of the position after it is not
    /// to be trusted, so quiescence search plays it beyond the depth cut. Default: no move.
    fn is_noisy(&self, state: &Self::State, mv: Self::Move) -> bool {
        let _ = (state, mv);
        false
    }

    /// Whether `mv` is forcing at `state` (the opponent's reply is all but forced), so a
    /// depth-limited search extends it by one ply. Default: no move.
    fn is_forcing(&self, state: &Self::State, mv: Self::Move) -> bool {
        let _ = (state, mv);
        false
    }

    /// Number of history slots; [`Tactics::history_slot`] returns values below it. Default 0
    /// (no history heuristic).
    fn history_slots(&self) -> usize {
        0
    }

    /// The history slot of `mv` at `state`: moves that mean the same thing in different
    /// positions (the same column, the same square) share a slot.
    fn history_slot(&self, state: &Self::State, mv: Self::Move) -> usize {
        let _ = (state, mv);
        0
    }

    /// Whether exact search looks for short proofs first (see `search::engine`, "Deepening
    /// exact search"): for games whose play can run long without deciding anything (Awari's
    /// capture-free play, bounded only by its repetition rule), where a depth-first exact search
    /// follows one endless line while a short forced win sits beside it. Needs tight
    /// [`ZeroSum::value_bounds`]: a position cut at the horizon counts as one of its bounds.
    /// Default: no (plain depth-first exact search).
    fn exact_deepening(&self) -> bool {
        false
    }

    /// A rough upper bound on the number of positions an exact search from `state` stores,
    /// so the engine can size its table below the memory budget for small searches (a large
    /// table costs page faults on first touch). Default: unknown (the whole budget).
    fn table_entries_hint(&self, state: &Self::State) -> Option<u64> {
        let _ = state;
        None
    }
}
