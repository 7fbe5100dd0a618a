//! The game model: what every kernel sees of a game, and nothing more.
//!
//! The six parts of a game model (S. Russell and P. Norvig, "Artificial Intelligence: A Modern
//! Approach", ch. 5): an initial state, who moves ([`Game::turn`]), the legal actions
//! ([`Game::legal_moves`]), the result of an action ([`Game::apply`]), the terminal test
//! ([`Turn::Terminal`]) and every player's utility ([`Game::returns`]). Chance is part of the
//! model: a [`Turn::Chance`] state lists its outcomes with probabilities
//! ([`Stochastic::chance_outcomes`]). Capabilities only some games have are separate traits, so a
//! kernel names what it needs in its bounds and a missing one fails to compile, never at run time:
//! [`ZeroSum`] (two players, exact integer values in negamax form: minimax, alpha-beta, PNS),
//! [`Hashed`] (tables, df-pn), [`Stochastic`] (expectimax, *-Minimax, MCTS with chance),
//! [`MoveCodes`] (NRPA), [`Symmetric`] (canonical hashes), [`Undo`] (in-place walks of large
//! states), [`OutOfTurn`] (best-reply search).
//!
//! Conventions every implementation keeps:
//! - [`Game::legal_moves`] clears and fills a buffer the caller owns (one per ply in the kernels),
//!   so move generation allocates nothing per node.
//! - A state is a value: kernels copy it and apply a move to the copy (copy-make).
//! - Positions have a text notation with a round trip, `parse_position(format_position(s)) == s`
//!   under [`Game::same_state`]; parse errors name what is wrong and where.

use std::fmt::Debug;
use std::hash::Hash;

mod notation;
pub use notation::{excerpt, one_line, NotationError};

mod tactics;
pub use tactics::Tactics;

pub mod retrograde;
pub mod settings;
pub use retrograde::{Retrograde, Successor, TableProbe};

/// Who acts in a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Turn {
    /// Player `i` (0-based) chooses a move.
    Player(u8),
    /// Chance chooses an outcome; see [`Stochastic::chance_outcomes`].
    Chance,
    /// The game is over; see [`Game::returns`].
    Terminal,
}

/// A game: its rules and parameters (board size and the like). The state is separate.
pub trait Game: Send + Sync + 'static {
    /// Everything needed to know what can happen next (board, player to move, ...).
    type State: Clone + Debug + Send + Sync + 'static;
    /// A move, or a chance outcome at chance nodes. Small and `Copy`.
    type Move: Copy + Eq + Hash + Debug + Send + Sync + 'static;

    /// The registry name (`connect4`, `tictactoe`, ...).
    fn name(&self) -> &'static str;
    /// Number of players (not counting chance).
    fn num_players(&self) -> usize;
    /// The start of the game.
    fn initial_state(&self) -> Self::State;
    /// Who acts in `state`.
    fn turn(&self, state: &Self::State) -> Turn;
    /// Clears `moves` and fills it with the legal moves of the player to move. At chance nodes
    /// it lists the chance outcomes (without probabilities); at terminal states it leaves it empty.
    fn legal_moves(&self, state: &Self::State, moves: &mut Vec<Self::Move>);
    /// Plays `mv`, which must be legal in `state` (kernels only pass moves from `legal_moves`).
    fn apply(&self, state: &mut Self::State, mv: Self::Move);
    /// Utilities of a terminal state, one per player, written into `out[..num_players()]`.
    fn returns(&self, state: &Self::State, out: &mut [f64]);

    /// Reads a position in the game's text notation (docs/API.md, section 4).
    fn parse_position(&self, text: &str) -> Result<Self::State, NotationError>;
    /// Writes a position so that `parse_position` gives it back.
    fn format_position(&self, state: &Self::State) -> String;
    /// Reads one move, checking that it is legal in `state`.
    fn parse_move(&self, state: &Self::State, text: &str) -> Result<Self::Move, NotationError>;
    /// Writes one move as `parse_move` reads it.
    fn format_move(&self, state: &Self::State, mv: Self::Move) -> String;
    /// Whether two states are the same position (used by the notation round-trip checks).
    fn same_state(&self, a: &Self::State, b: &Self::State) -> bool;

    /// Convenience: is `state` terminal?
    #[inline]
    fn is_terminal(&self, state: &Self::State) -> bool {
        matches!(self.turn(state), Turn::Terminal)
    }
}

/// A two-player, strictly competitive game with exact integer values, in negamax form.
///
/// Values are `i32` and are always from the point of view of [`ZeroSum::side`] of the state
/// they describe. Games whose natural values are not integers (explicit trees with decimal
/// leaves) map them order-preservingly onto integers and back with [`ZeroSum::value_to_json`];
/// every kernel in this family only compares and negates values, so that mapping is exact.
pub trait ZeroSum: Game {
    /// The player from whose point of view values of `state` are given: the player to move, and
    /// at a terminal state the player who would be to move. Always 0 or 1.
    fn side(&self, state: &Self::State) -> u8;
    /// The exact value of a terminal state from `side(state)`'s point of view.
    fn terminal_value(&self, state: &Self::State) -> i32;
    /// Inclusive bounds on every value this game can produce from `state` onward (from
    /// `side(state)`'s point of view). Kernels use them as the initial window and for
    /// threshold search; tighter is better, but it must never exclude the true value.
    fn value_bounds(&self, state: &Self::State) -> (i32, i32);
    /// The value of `state` from `side(state)`'s point of view as the outside world sees it
    /// (docs/API.md, section 3). Default: the integer itself.
    fn value_to_json(&self, state: &Self::State, value: i32) -> serde_json::Value {
        let _ = state;
        serde_json::Value::from(value)
    }
    /// Every exact value (terminal values, hence every minimax value) is a multiple of this;
    /// only [`ZeroSum::evaluate`] produces values in between. Threshold searches use it so
    /// that they never probe, or report a bound, between two values the game can produce.
    /// Default 1.
    fn value_step(&self) -> i32 {
        1
    }
    /// The value an outside user means by `text` for a threshold (`target=V`) at `state`.
    /// Default: an integer. Games that map values must map thresholds the same way.
    fn parse_target(&self, state: &Self::State, text: &str) -> Result<i32, NotationError> {
        let _ = state;
        text.trim()
            .parse::<i32>()
            .map_err(|_| NotationError::new("not an integer").with_fragment(text.trim()))
    }

    /// Optional speed-up: if the side to move has a move that wins at once (or the position is
    /// otherwise decided without search), its exact value. Must be exact or `None`.
    #[inline]
    fn immediate_value(&self, state: &Self::State) -> Option<i32> {
        let _ = state;
        None
    }
    /// Optional speed-up: reorders `moves` so that likely best moves come first. Must keep
    /// exactly the same set of moves.
    #[inline]
    fn order_moves(&self, state: &Self::State, moves: &mut [Self::Move]) {
        let _ = (state, moves);
    }
    /// A static estimate of the value of a non-terminal state from `side(state)`'s point of view,
    /// used at the depth cut of depth-limited search. Must lie strictly inside the bounds of any
    /// real win or loss that the game can produce from here.
    fn evaluate(&self, state: &Self::State) -> i32 {
        let _ = state;
        0
    }
}

/// Converts a child's value to its parent's point of view: negate when the side changes.
#[inline(always)]
pub fn to_parent(parent_side: u8, child_side: u8, child_value: i32) -> i32 {
    if parent_side == child_side {
        child_value
    } else {
        -child_value
    }
}

/// A position hash. Equal states must hash equally.
pub trait Hashed: Game {
    /// True when [`Hashed::hash`] is injective (a perfect key), so that a table that compares
    /// full hashes can never confuse two positions.
    const HASH_IS_KEY: bool;
    /// The hash of `state`.
    fn hash(&self, state: &Self::State) -> u64;
}

/// Symmetric positions share a canonical hash, so a table can share their entries.
pub trait Symmetric: Hashed {
    /// A hash equal for all positions that are images of each other under the board's
    /// symmetries and that have the same value.
    fn canonical_hash(&self, state: &Self::State) -> u64;
}

/// Games with chance nodes.
pub trait Stochastic: Game {
    /// At a [`Turn::Chance`] state: clears `out` and fills it with every outcome and its
    /// probability. Probabilities are positive and sum to 1 (checked by the game battery).
    fn chance_outcomes(&self, state: &Self::State, out: &mut Vec<(Self::Move, f64)>);
}

/// Move codes for policy-learning kernels (NRPA): `code(state, mv)` names the meaning of a
/// move, unique per meaning and stable along a sequence (Rosin's `code(node, move)` in NRPA).
pub trait MoveCodes: Game {
    /// The code of `mv` in `state`.
    fn code(&self, state: &Self::State, mv: Self::Move) -> u64;
}

/// Undo of the last move, for games with large states.
pub trait Undo: Game {
    /// Takes back `mv`, which must be the last move applied to `state`.
    fn undo(&self, state: &mut Self::State, mv: Self::Move);
}

/// A game whose positions can be drawn (`viz::board`). The pictures themselves live in `viz`;
/// a game without one keeps the default.
pub trait Picture: Game {
    /// The SVG picture of `position` (in the game's notation): `Ok(None)` for a game without
    /// pictures, `Err` with one line for an illegal position.
    fn picture(&self, position: &str) -> Result<Option<String>, String> {
        let _ = position;
        Ok(None)
    }
    /// The board of `position` drawn in text for a terminal (fixed-width lines ending in
    /// `\n`): `Ok(None)` for a game without a text board, `Err` with one line for an illegal
    /// position.
    fn board_text(&self, position: &str) -> Result<Option<String>, String> {
        let _ = position;
        Ok(None)
    }
    /// What an exact score `value` of `position` (from its side to move's point of view, on
    /// the job's value scale) means in words, the one wording the CLI and the dashboard use
    /// (Connect Four: "win with your 3rd stone from here"): `Ok(None)` when the number says it
    /// all, `Err` with one line for an illegal position. Implemented in `viz::board`.
    fn score_words(&self, position: &str, value: i64) -> Result<Option<String>, String> {
        let _ = (position, value);
        Ok(None)
    }
}

/// Utility type: plays a whole sequence of moves given in notation, each checked for legality.
pub fn play_moves<G: Game>(
    game: &G,
    state: &mut G::State,
    moves: &[&str],
) -> Result<(), NotationError> {
    for (i, text) in moves.iter().enumerate() {
        let mv = game.parse_move(state, text).map_err(|e| e.at_move(i + 1))?;
        game.apply(state, mv);
    }
    Ok(())
}

pub mod battery;
pub mod chance;
pub mod multi;
pub mod single;
pub use chance::{ChanceZeroSum, VectorEval};
pub use multi::OutOfTurn;

/// The 64-bit finaliser of MurmurHash3 (a bijection with good avalanche): games mix their
/// position keys with it, and tables keyed by those keys mix them again to pick buckets.
#[inline(always)]
pub(crate) fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}
