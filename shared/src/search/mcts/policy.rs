//! The pluggable parts of an MCTS iteration: how chance outcomes are drawn and how a playout
//! chooses moves.
//!
//! - [`ChanceModel`]: draws the outcome at a [`Turn::Chance`](crate::model::Turn) state, in the
//!   tree and in playouts. [`TrueChance`] draws with the game's probabilities (an
//!   outcome of probability 0.8 comes about four times as often as one of 0.2); it needs
//!   [`Stochastic`]. [`UniformChance`] is for games without [`Stochastic`]: the model says that
//!   `legal_moves` lists the outcomes at a chance state, and a game that declares no
//!   probabilities has its outcomes treated as equally likely. Deterministic games never reach
//!   it, and no game needs a fake `Stochastic` implementation.
//! - [`PlayoutPolicy`]: picks a playout move among the legal ones. [`RandomPlayout`] (uniform) is
//!   the default; a game-aware policy plugs in through this trait.
//!
//! Both keep their scratch buffers between calls, so a playout allocates nothing per move.

use crate::model::{Game, Stochastic};
use rand::Rng as _;

/// The random number generator of every MCTS tree: ChaCha8, portable and reproducible for a
/// fixed seed on every platform.
pub type Rng = rand_chacha::ChaCha8Rng;

/// Draws chance outcomes.
pub trait ChanceModel<G: Game>: Clone + Send + Sync {
    /// An outcome of the chance state `state`, one of the moves `game.legal_moves` lists there.
    fn sample(&mut self, game: &G, state: &G::State, rng: &mut Rng) -> G::Move;
}

/// Equally likely outcomes, for games without [`Stochastic`] (see the module doc).
#[derive(Clone, Debug)]
pub struct UniformChance<M> {
    moves: Vec<M>,
}

impl<M> Default for UniformChance<M> {
    fn default() -> Self {
        UniformChance { moves: Vec::new() }
    }
}

impl<G: Game> ChanceModel<G> for UniformChance<G::Move> {
    fn sample(&mut self, game: &G, state: &G::State, rng: &mut Rng) -> G::Move {
        game.legal_moves(state, &mut self.moves);
        self.moves[rng.gen_range(0..self.moves.len())]
    }
}

/// Outcomes drawn with the probabilities of [`Stochastic::chance_outcomes`].
#[derive(Clone, Debug)]
pub struct TrueChance<M> {
    outcomes: Vec<(M, f64)>,
}

impl<M> Default for TrueChance<M> {
    fn default() -> Self {
        TrueChance {
            outcomes: Vec::new(),
        }
    }
}

impl<G: Stochastic> ChanceModel<G> for TrueChance<G::Move> {
    fn sample(&mut self, game: &G, state: &G::State, rng: &mut Rng) -> G::Move {
        game.chance_outcomes(state, &mut self.outcomes);
        let mut x: f64 = rng.gen();
        for &(mv, p) in &self.outcomes {
            if x < p {
                return mv;
            }
            x -= p;
        }
        // Rounding: probabilities sum to 1 only within 1e-9, so the last outcome takes the rest.
        self.outcomes[self.outcomes.len() - 1].0
    }
}

/// Chooses playout moves.
pub trait PlayoutPolicy<G: Game>: Clone + Send + Sync {
    /// One of `moves` (the non-empty legal moves of `state`).
    fn choose(&mut self, game: &G, state: &G::State, moves: &[G::Move], rng: &mut Rng) -> G::Move;
}

/// Uniformly random legal moves (UCT's default playout).
#[derive(Clone, Copy, Debug, Default)]
pub struct RandomPlayout;

impl<G: Game> PlayoutPolicy<G> for RandomPlayout {
    #[inline]
    fn choose(
        &mut self,
        _game: &G,
        _state: &G::State,
        moves: &[G::Move],
        rng: &mut Rng,
    ) -> G::Move {
        moves[rng.gen_range(0..moves.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::tree::Tree;
    use rand::SeedableRng;

    /// An outcome of probability 0.8 is drawn about four times as often as one of 0.2.
    #[test]
    fn true_chance_follows_the_probabilities() {
        let t = Tree::parse(r#"{"chance": [[0.8, 1], [0.2, 2]]}"#).unwrap();
        let mut model = TrueChance::default();
        let mut rng = Rng::seed_from_u64(3);
        let mut counts = [0u32; 2];
        for _ in 0..100_000 {
            counts[ChanceModel::<Tree>::sample(&mut model, &t, &0, &mut rng) as usize] += 1;
        }
        let ratio = counts[0] as f64 / counts[1] as f64;
        assert!((ratio - 4.0).abs() < 0.15, "ratio {ratio} ({counts:?})");
        let mut uniform = UniformChance::default();
        let mut counts = [0u32; 2];
        for _ in 0..100_000 {
            counts[ChanceModel::<Tree>::sample(&mut uniform, &t, &0, &mut rng) as usize] += 1;
        }
        let ratio = counts[0] as f64 / counts[1] as f64;
        assert!((ratio - 1.0).abs() < 0.05, "uniform ratio {ratio}");
    }
}
