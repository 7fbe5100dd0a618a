//! Static evaluation by weighted features, and the adapter that plugs an evaluator into the
//! engine's evaluation hook ([`ZeroSum::evaluate`], used at the depth cut of depth-limited search
//! and as the stand-pat value of quiescence).
//!
//! Contract:
//! - A [`Feature`] is a function of a non-terminal position, from the side to move's view
//!   (positive is good for it). A [`Weighted`] evaluator sums `weight * feature`.
//! - [`Evaluated`] wraps a game and an [`Evaluator`]: it multiplies every value of the game
//!   (terminal values, bounds, exact-search hints) by `scale` and clamps every estimate to
//!   `[-margin, margin]`, `margin = scale * smallest_win - 1` (`smallest_win` the least positive
//!   value of a real win). So a real win scores above any estimate and a real loss below,
//!   whatever the weights; draws (0) sit in the middle.
//! - The scaling is strictly monotone, so every search keeps its meaning: a depth-limited search
//!   finds a proven value (a multiple of `scale`) or an estimate strictly inside
//!   `±scale*smallest_win`. [`ZeroSum::value_to_json`] shows proven values as the game does and
//!   estimates as a fraction of the smallest win in (-1, 1): a reader tells a proof from a guess.
//!
//! The evaluators of concrete games live with the games (`games::othello::eval`,
//! `games::connect4::eval`); this module never names a game.

use crate::model::{Game, Hashed, NotationError, Tactics, Turn, ZeroSum};

/// A static estimate of a non-terminal position, from `game.side(state)`'s point of view, in the
/// evaluator's own units (any magnitude: [`Evaluated`] clamps it).
pub trait Evaluator<G: ZeroSum>: Clone + Send + Sync + 'static {
    /// The estimate of `state` (not terminal).
    fn estimate(&self, game: &G, state: &G::State) -> i64;
}

/// One feature: a named function of the position (side to move's point of view) and its weight.
pub struct Feature<G: Game> {
    /// Short name, for explanations and tests.
    pub name: &'static str,
    /// Weight in evaluator units per unit of the feature.
    pub weight: i32,
    /// The feature's value at a non-terminal state, from the side to move's point of view.
    pub value: fn(&G, &G::State) -> i32,
}

impl<G: Game> Clone for Feature<G> {
    fn clone(&self) -> Self {
        Feature {
            name: self.name,
            weight: self.weight,
            value: self.value,
        }
    }
}

impl<G: Game> std::fmt::Debug for Feature<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} x {}", self.weight, self.name)
    }
}

/// A weighted-feature evaluator: the estimate is `sum(weight * value)` over the features.
#[derive(Debug)]
pub struct Weighted<G: Game> {
    features: Vec<Feature<G>>,
}

impl<G: Game> Clone for Weighted<G> {
    fn clone(&self) -> Self {
        Weighted {
            features: self.features.clone(),
        }
    }
}

impl<G: Game> Weighted<G> {
    /// An evaluator over `features` (names must be distinct).
    pub fn new(features: Vec<Feature<G>>) -> Self {
        for (i, f) in features.iter().enumerate() {
            assert!(
                features[..i].iter().all(|g| g.name != f.name),
                "feature '{}' is listed twice",
                f.name
            );
        }
        Weighted { features }
    }

    /// The features, in order.
    pub fn features(&self) -> &[Feature<G>] {
        &self.features
    }

    /// The same evaluator with the weight of feature `name` replaced (for tuning and tests).
    pub fn with_weight(mut self, name: &str, weight: i32) -> Self {
        let f = self
            .features
            .iter_mut()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no feature '{name}'"));
        f.weight = weight;
        self
    }

    /// Every feature's `(name, value, weight)` at `state`: the explanation of an estimate.
    pub fn terms(&self, game: &G, state: &G::State) -> Vec<(&'static str, i32, i32)> {
        self.features
            .iter()
            .map(|f| (f.name, (f.value)(game, state), f.weight))
            .collect()
    }

    /// The weighted sum at `state` (not clamped).
    #[inline]
    pub fn score(&self, game: &G, state: &G::State) -> i64 {
        self.features
            .iter()
            .map(|f| f.weight as i64 * (f.value)(game, state) as i64)
            .sum()
    }
}

impl<G: ZeroSum> Evaluator<G> for Weighted<G> {
    #[inline]
    fn estimate(&self, game: &G, state: &G::State) -> i64 {
        self.score(game, state)
    }
}

/// A game whose static evaluation is an [`Evaluator`]'s, with values scaled so that estimates
/// fit strictly between a real loss and a real win (see the module doc). Everything else is the
/// wrapped game's: moves, notation, hash, hints.
#[derive(Clone, Debug)]
pub struct Evaluated<G, E> {
    game: G,
    eval: E,
    scale: i32,
    margin: i32,
}

impl<G: ZeroSum, E: Evaluator<G>> Evaluated<G, E> {
    /// Wraps `game`: its values are multiplied by `scale`, and estimates are clamped to
    /// `scale * smallest_win - 1` in magnitude, where `smallest_win` is the least positive
    /// value of a real win of `game`. Fails when that leaves no room for an estimate or when the
    /// scaled bounds of the initial position overflow `i32`.
    pub fn new(game: G, eval: E, scale: i32, smallest_win: i32) -> Result<Self, String> {
        if scale < 1 || smallest_win < 1 {
            return Err(format!(
                "evaluator scale {scale} and smallest win {smallest_win} must be positive"
            ));
        }
        let margin = scale
            .checked_mul(smallest_win)
            .ok_or("evaluator scale too large")?
            - 1;
        if margin < 1 {
            return Err("the game's values leave no room for an estimate: raise the scale".into());
        }
        let (lo, hi) = game.value_bounds(&game.initial_state());
        if lo.checked_mul(scale).is_none() || hi.checked_mul(scale).is_none() {
            return Err(format!(
                "scaled values overflow: bounds ({lo}, {hi}) times {scale}"
            ));
        }
        Ok(Evaluated {
            game,
            eval,
            scale,
            margin,
        })
    }

    /// The wrapped game.
    pub fn inner(&self) -> &G {
        &self.game
    }

    /// The evaluator.
    pub fn evaluator(&self) -> &E {
        &self.eval
    }

    /// The factor between the wrapped game's values and this game's.
    pub fn scale(&self) -> i32 {
        self.scale
    }

    /// Largest magnitude of an estimate (below every real win).
    pub fn margin(&self) -> i32 {
        self.margin
    }

    /// The wrapped game's value of a value of this game, if it is a proven one (not an
    /// estimate). A 0 is reported as a draw: an estimate of exactly 0 reads the same.
    pub fn proven(&self, value: i32) -> Option<i32> {
        (value % self.scale == 0 && (value == 0 || value.abs() > self.margin))
            .then_some(value / self.scale)
    }

    #[inline(always)]
    fn up(&self, v: i32) -> i32 {
        v.saturating_mul(self.scale)
    }
}

impl<G: ZeroSum, E: Evaluator<G>> Game for Evaluated<G, E> {
    type State = G::State;
    type Move = G::Move;

    fn name(&self) -> &'static str {
        self.game.name()
    }
    fn num_players(&self) -> usize {
        self.game.num_players()
    }
    fn initial_state(&self) -> G::State {
        self.game.initial_state()
    }
    #[inline]
    fn turn(&self, state: &G::State) -> Turn {
        self.game.turn(state)
    }
    #[inline]
    fn legal_moves(&self, state: &G::State, moves: &mut Vec<G::Move>) {
        self.game.legal_moves(state, moves)
    }
    #[inline]
    fn apply(&self, state: &mut G::State, mv: G::Move) {
        self.game.apply(state, mv)
    }
    fn returns(&self, state: &G::State, out: &mut [f64]) {
        self.game.returns(state, out)
    }
    fn parse_position(&self, text: &str) -> Result<G::State, NotationError> {
        self.game.parse_position(text)
    }
    fn format_position(&self, state: &G::State) -> String {
        self.game.format_position(state)
    }
    fn parse_move(&self, state: &G::State, text: &str) -> Result<G::Move, NotationError> {
        self.game.parse_move(state, text)
    }
    fn format_move(&self, state: &G::State, mv: G::Move) -> String {
        self.game.format_move(state, mv)
    }
    fn same_state(&self, a: &G::State, b: &G::State) -> bool {
        self.game.same_state(a, b)
    }
    #[inline]
    fn is_terminal(&self, state: &G::State) -> bool {
        self.game.is_terminal(state)
    }
}

impl<G: ZeroSum, E: Evaluator<G>> ZeroSum for Evaluated<G, E> {
    #[inline]
    fn side(&self, state: &G::State) -> u8 {
        self.game.side(state)
    }
    #[inline]
    fn terminal_value(&self, state: &G::State) -> i32 {
        self.up(self.game.terminal_value(state))
    }
    fn value_bounds(&self, state: &G::State) -> (i32, i32) {
        let (lo, hi) = self.game.value_bounds(state);
        (self.up(lo), self.up(hi))
    }
    fn value_to_json(&self, state: &G::State, value: i32) -> serde_json::Value {
        match self.proven(value) {
            Some(v) => self.game.value_to_json(state, v),
            // An estimate: a fraction of the smallest win, strictly inside (-1, 1).
            None => (value as f64 / (self.margin as f64 + 1.0)).into(),
        }
    }
    fn parse_target(&self, state: &G::State, text: &str) -> Result<i32, NotationError> {
        let t = self.game.parse_target(state, text)?;
        t.checked_mul(self.scale)
            .ok_or_else(|| NotationError::new(format!("'{text}' is out of range")))
    }
    #[inline]
    fn immediate_value(&self, state: &G::State) -> Option<i32> {
        self.game.immediate_value(state).map(|v| self.up(v))
    }
    #[inline]
    fn order_moves(&self, state: &G::State, moves: &mut [G::Move]) {
        self.game.order_moves(state, moves)
    }
    #[inline]
    fn evaluate(&self, state: &G::State) -> i32 {
        let m = self.margin as i64;
        self.eval.estimate(&self.game, state).clamp(-m, m) as i32
    }
}

impl<G: ZeroSum + Hashed, E: Evaluator<G>> Hashed for Evaluated<G, E> {
    const HASH_IS_KEY: bool = G::HASH_IS_KEY;
    #[inline]
    fn hash(&self, state: &G::State) -> u64 {
        self.game.hash(state)
    }
}

impl<G: Tactics, E: Evaluator<G>> Tactics for Evaluated<G, E> {
    #[inline]
    fn exact_moves(&self, state: &G::State, moves: &mut Vec<G::Move>) -> (i32, i32) {
        let (lo, hi) = self.game.exact_moves(state, moves);
        (self.up(lo), self.up(hi))
    }
    #[inline]
    fn is_noisy(&self, state: &G::State, mv: G::Move) -> bool {
        self.game.is_noisy(state, mv)
    }
    #[inline]
    fn is_forcing(&self, state: &G::State, mv: G::Move) -> bool {
        self.game.is_forcing(state, mv)
    }
    fn history_slots(&self) -> usize {
        self.game.history_slots()
    }
    #[inline]
    fn history_slot(&self, state: &G::State, mv: G::Move) -> usize {
        self.game.history_slot(state, mv)
    }
    fn table_entries_hint(&self, state: &G::State) -> Option<u64> {
        self.game.table_entries_hint(state)
    }
}

#[cfg(test)]
mod tests;
