//! Moves out of turn, for best-reply search (Schadd and Winands 2011).
//!
//! Best-reply search lets every opponent of the root player answer at the same layer and keeps
//! only the strongest answer; that needs the moves a player *would* have if it were its turn,
//! and a way to play such a move and hand the turn back to the root player. Only games whose
//! rules make sense for that implement [`OutOfTurn`] (deterministic games: no chance nodes).

use super::Game;

/// A game whose players can be asked for moves, and can make them, out of turn.
pub trait OutOfTurn: Game {
    /// Clears `moves` and fills it with what `player` could play at `state` if it were to move
    /// there (the same list as [`Game::legal_moves`] when `player` is the mover; a pass move if
    /// the game has them; empty at a terminal state).
    fn moves_as(&self, state: &Self::State, player: u8, moves: &mut Vec<Self::Move>);
    /// Plays `mv` (from [`OutOfTurn::moves_as`] for `player`) for `player` and gives the turn
    /// to `next`. With `player` the mover and `next` its successor this is [`Game::apply`].
    fn apply_as(&self, state: &mut Self::State, player: u8, mv: Self::Move, next: u8);
}
