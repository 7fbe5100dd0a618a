//! Capabilities for searching games with chance and with more than two players, whose values
//! are real numbers (`f64`), not the exact integers of [`super::ZeroSum`].
//!
//! - [`ChanceZeroSum`]: a two-player, strictly opposed game with chance nodes (backgammon, Pig,
//!   explicit trees with chance nodes), in negamax form: every value of a state is from the point
//!   of view of [`ChanceZeroSum::player_side`] of that state, and the other side's value is its negative.
//!   Chance states have a side too (the game chooses one, e.g. the player about to roll); kernels
//!   convert between sides with [`to_side`]. The theoretical bounds L and U of *-Minimax
//!   ([`ChanceZeroSum::utility_bounds`]) bound every terminal value and every evaluation.
//! - [`VectorEval`]: a static estimate of the utility vector of a non-terminal state, for
//!   depth-limited max^n, paranoid and best-reply search.
//!
//! [`check_chance_zero_sum`] is the battery check for [`ChanceZeroSum`]: it panics, naming the
//! game and the position, when a value or an evaluation leaves the declared bounds, when the side
//! of a decision node is not its player, or when terminal values disagree with `returns`.

use super::{Game, Stochastic, Turn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A two-player zero-sum game with chance nodes and real values, in negamax form.
pub trait ChanceZeroSum: Stochastic {
    /// The player (0 or 1) from whose point of view values of `state` are given: the player to
    /// move at decision nodes, and a fixed choice of the game at chance and terminal states.
    fn player_side(&self, state: &Self::State) -> u8;
    /// The value of a terminal state from `player_side(state)`'s point of view.
    fn terminal_score(&self, state: &Self::State) -> f64;
    /// Inclusive bounds `(L, U)` on every terminal value and every evaluation, from player 0's
    /// point of view (player 1's are `(-U, -L)`, see [`side_bounds`]). They must be true bounds:
    /// *-Minimax prunes with them, and a bound that excludes a real value gives wrong answers.
    fn utility_bounds(&self) -> (f64, f64);
    /// A static estimate of a non-terminal state from `player_side(state)`'s point of view, used at the
    /// depth cut; must lie within the bounds. It should estimate expected utility on the same
    /// scale as the terminal values (only positive affine maps of it keep expectimax's decisions).
    fn estimate(&self, state: &Self::State) -> f64;
    /// Optional speed-up: reorders the moves of a decision node so that likely best moves come
    /// first (Star2's probes look at the first ones). Must keep exactly the same set of moves.
    #[inline]
    fn order_decisions(&self, state: &Self::State, moves: &mut [Self::Move]) {
        let _ = (state, moves);
    }
}

/// A value of side `from` seen by side `to`: negated when the sides differ.
#[inline(always)]
pub fn to_side(from: u8, to: u8, value: f64) -> f64 {
    if from == to {
        value
    } else {
        -value
    }
}

/// The bounds `(L, U)` of player 0 seen from `side`.
#[inline(always)]
pub fn side_bounds(bounds: (f64, f64), side: u8) -> (f64, f64) {
    if side == 0 {
        bounds
    } else {
        (-bounds.1, -bounds.0)
    }
}

/// A static estimate of every player's utility at a non-terminal state.
pub trait VectorEval: Game {
    /// Writes one estimate per player into `out[..num_players()]`, on the scale of `returns`.
    fn evaluate_vector(&self, state: &Self::State, out: &mut [f64]);
}

/// How long a random game may be before the check declares that it does not end.
const MAX_PLIES: usize = 100_000;

/// Battery check for [`ChanceZeroSum`]: bounds hold for terminal values and evaluations, decision
/// nodes' side is their player, and terminal values are `returns[side] - returns[other]` up to a
/// positive factor (sign agreement).
pub fn check_chance_zero_sum<G: ChanceZeroSum>(
    game: &G,
    start: &G::State,
    playouts: usize,
    seed: u64,
) {
    super::battery::assert_players(game, 2, "ChanceZeroSum needs two players");
    let (lo, hi) = game.utility_bounds();
    assert!(
        lo <= hi && lo.is_finite() && hi.is_finite(),
        "{}: bad bounds [{lo}, {hi}]",
        game.name()
    );
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut moves = Vec::new();
    let mut returns = [0.0; 2];
    for _ in 0..playouts {
        let mut state = start.clone();
        let mut ended = false;
        for _ in 0..MAX_PLIES {
            let text = game.format_position(&state);
            let side = game.player_side(&state);
            assert!(side < 2, "{}: side {side} at '{text}'", game.name());
            let (l, u) = side_bounds((lo, hi), side);
            match game.turn(&state) {
                Turn::Terminal => {
                    let v = game.terminal_score(&state);
                    assert!(
                        l <= v && v <= u,
                        "{}: terminal value {v} outside [{l}, {u}] at '{text}'",
                        game.name()
                    );
                    game.returns(&state, &mut returns);
                    let margin = returns[side as usize] - returns[1 - side as usize];
                    assert!(
                        (margin > 0.0) == (v > 0.0) && (margin < 0.0) == (v < 0.0),
                        "{}: terminal value {v} disagrees with returns {returns:?} at '{text}'",
                        game.name()
                    );
                    ended = true;
                    break;
                }
                Turn::Player(p) => {
                    assert_eq!(
                        p,
                        side,
                        "{}: side differs from the player to move at '{text}'",
                        game.name()
                    );
                }
                Turn::Chance => {}
            }
            let e = game.estimate(&state);
            assert!(
                l <= e && e <= u,
                "{}: evaluation {e} outside [{l}, {u}] at '{text}'",
                game.name()
            );
            game.legal_moves(&state, &mut moves);
            if game.turn(&state) != Turn::Chance {
                let mut ordered = moves.clone();
                game.order_decisions(&state, &mut ordered);
                let key = |m: &G::Move| format!("{m:?}");
                let mut a = moves.clone();
                a.sort_by_key(key);
                ordered.sort_by_key(key);
                assert_eq!(
                    a,
                    ordered,
                    "{}: order_decisions changed the move set at '{text}'",
                    game.name()
                );
            }
            assert!(
                !moves.is_empty(),
                "{}: non-terminal '{text}' has no moves",
                game.name()
            );
            let mv = moves[rng.gen_range(0..moves.len())];
            game.apply(&mut state, mv);
        }
        assert!(
            ended,
            "{}: a random game did not end in {MAX_PLIES} plies",
            game.name()
        );
    }
}
