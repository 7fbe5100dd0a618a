//! Star1 (B. W. Ballard, "The *-minimax search procedure for trees containing chance nodes",
//! 1983): expectimax with alpha-beta windows carried through chance nodes by the theoretical
//! bounds L and U.
//!
//! Contract of [`star1`]: the expectiminimax value of `state` from the point of view of
//! `game.player_side(state)`, equal to [`super::expectimax::expectimax`]'s up to rounding, found
//! by visiting no more nodes.
//!
//! Ballard's pseudocode is the spec: negamax, fail-hard; at a chance node, after outcomes summing
//! to `cur_x` with `cur_y` probability unseen after `i`, outcome `i` is searched in
//! ```text
//! cur_alpha = (alpha - cur_x - U * cur_y) / p_i      ax = max(L, cur_alpha)
//! cur_beta  = (beta  - cur_x - L * cur_y) / p_i      bx = min(U, cur_beta)
//! ```
//! and the node fails high when the outcome reaches `cur_beta`, low when it stays at or below
//! `cur_alpha`. Probabilities are the true ones, L and U seen from the node's side. Beyond
//! Ballard's alternating MAX/chance tree, any node kind may follow any other (window negated
//! when the side changes), and a chance node whose window cannot be reached returns at once.
//! `depth` counts players' plies, not chance nodes. A stop request returns `None`.

use std::convert::Infallible;

use super::expectimax::ChanceOutcome;
use super::node::{
    child_window, ensure_ply, outcome_cut, outcome_window, star_decision, star_leaf, At,
    ChanceFrame, Tally,
};
use super::Control;
use crate::model::chance::{side_bounds, to_side, ChanceZeroSum};
use crate::model::Turn;

/// What a negamax chance kernel does at a chance node: Star1's node ([`Star1`]) or Star2's
/// probing one ([`super::star2::Probing`]). Both share [`Search`]'s decision node.
pub(crate) trait ChanceNode<G: ChanceZeroSum>: Sized {
    /// Per-ply buffers beyond a decision node's moves and a chance node's outcomes.
    type Buffers: Default;
    /// What the chance node learnt about a decision child's moves before searching it.
    type Hint: Copy;
    /// The value a hint gives a move in the decision node's window `(alpha, beta)`, if any.
    fn hinted(hint: &Self::Hint, alpha: f64, beta: f64) -> Option<f64>;
    /// Fail-hard value of the chance node `state` (see [`ChanceAt`]).
    fn chance(s: &mut Search<'_, G, Self>, state: &G::State, at: ChanceAt) -> f64;
}

/// A chance node being searched: its fail-hard window `(alpha, beta)` from its own side `side`,
/// and where it stands (`node`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChanceAt {
    pub alpha: f64,
    pub beta: f64,
    pub side: u8,
    pub node: At,
}

impl ChanceAt {
    /// `(alpha, beta, side, ply, depth)`.
    #[inline(always)]
    pub fn parts(self) -> (f64, f64, u8, usize, Option<u32>) {
        (
            self.alpha,
            self.beta,
            self.side,
            self.node.ply,
            self.node.depth,
        )
    }
}

/// The search state of a negamax chance kernel whose chance nodes are `C`'s.
pub(crate) struct Search<'a, G: ChanceZeroSum, C: ChanceNode<G>> {
    pub game: &'a G,
    pub ctl: &'a Control,
    /// Player 0's bounds (L, U).
    pub bounds: (f64, f64),
    pub node: C,
    pub frames: Vec<ChanceFrame<G::Move, C::Buffers>>,
    pub tally: Tally,
    pub best_root: Option<G::Move>,
}

impl<G: ChanceZeroSum, C: ChanceNode<G>> Search<'_, G, C> {
    /// Fail-hard value of `state` from `player_side(state)`'s point of view in `(alpha, beta)`;
    /// `hints` are the chance node's about this decision node's moves, in move order.
    pub fn value(
        &mut self,
        state: &G::State,
        alpha: f64,
        beta: f64,
        at: At,
        hints: &[C::Hint],
    ) -> f64 {
        let At { ply, depth } = at;
        if !self.tally.enter(self.ctl) {
            return 0.0;
        }
        let turn = self.game.turn(state);
        if let Some(v) = star_leaf(
            self.game,
            state,
            turn,
            depth,
            (alpha, beta),
            &mut self.tally,
        ) {
            return v;
        }
        ensure_ply(&mut self.frames, ply + 1);
        let side = self.game.player_side(state);
        if turn == Turn::Chance {
            let chance = ChanceAt {
                alpha,
                beta,
                side,
                node: at,
            };
            return C::chance(self, state, chance);
        }
        // Negamax at a decision node.
        let mut moves = std::mem::take(&mut self.frames[ply].moves);
        self.game.legal_moves(state, &mut moves);
        self.game.order_decisions(state, &mut moves);
        let mut alpha = alpha;
        let mut result = None;
        for (r, &mv) in moves.iter().enumerate() {
            let v = match hints.get(r).and_then(|h| C::hinted(h, alpha, beta)) {
                Some(v) => v,
                None => {
                    let mut child = state.clone();
                    self.game.apply(&mut child, mv);
                    let cs = self.game.player_side(&child);
                    let (ca, cb) = child_window(side, cs, (alpha, beta));
                    to_side(cs, side, self.value(&child, ca, cb, at.after_move(), &[]))
                }
            };
            if let Some(cut) = star_decision(v, mv, ply, &mut alpha, beta, &mut self.best_root) {
                result = Some(cut);
                break;
            }
        }
        self.frames[ply].moves = moves;
        result.unwrap_or(alpha)
    }
}

/// Star1's chance node: Ballard's `star1`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Star1;

impl<G: ChanceZeroSum> ChanceNode<G> for Star1 {
    type Buffers = ();
    type Hint = Infallible;

    fn hinted(hint: &Infallible, _: f64, _: f64) -> Option<f64> {
        match *hint {}
    }

    fn chance(s: &mut Search<'_, G, Self>, state: &G::State, at: ChanceAt) -> f64 {
        let (alpha, beta, side, ply, _) = at.parts();
        let (lo, hi) = side_bounds(s.bounds, side);
        let mut outcomes = std::mem::take(&mut s.frames[ply].outcomes);
        s.game.chance_outcomes(state, &mut outcomes);
        let mut cur_x = 0.0;
        let mut cur_y = 1.0;
        let mut result = None;
        for &(mv, p) in &outcomes {
            cur_y -= p;
            // The unseen outcomes after this one can be anywhere in [L, U].
            let rest = cur_y.max(0.0);
            let window = outcome_window(
                alpha,
                beta,
                cur_x,
                (lo * rest, hi * rest),
                p,
                (lo, hi),
                (lo, hi),
            );
            let (cur_alpha, cur_beta, ax, bx) = match window.searched(alpha, beta) {
                Ok(w) => w,
                Err(v) => {
                    result = Some(v);
                    break;
                }
            };
            let mut child = state.clone();
            s.game.apply(&mut child, mv);
            let cs = s.game.player_side(&child);
            let (ca, cb) = child_window(side, cs, (ax, bx));
            let v = to_side(
                cs,
                side,
                s.value(&child, ca, cb, at.node.after_chance(), &[]),
            );
            if let Some(cut) = outcome_cut(v, cur_alpha, cur_beta, alpha, beta) {
                result = Some(cut);
                break;
            }
            cur_x += p * v;
        }
        s.frames[ply].outcomes = outcomes;
        result.unwrap_or(cur_x)
    }
}

/// Runs the negamax chance kernel with chance nodes `node` from `state` (see [`star1`]).
pub(crate) fn search<G: ChanceZeroSum, C: ChanceNode<G>>(
    game: &G,
    state: &G::State,
    depth: Option<u32>,
    node: C,
    bounds: Option<(f64, f64)>,
    ctl: &Control,
) -> Option<ChanceOutcome<G::Move>> {
    let bounds = bounds.unwrap_or_else(|| game.utility_bounds());
    let mut s = Search {
        game,
        ctl,
        bounds,
        node,
        frames: Vec::new(),
        tally: Tally::default(),
        best_root: None,
    };
    let (a, b) = root_window(bounds, game.player_side(state));
    let value = s.value(state, a, b, At::root(depth), &[]);
    ChanceOutcome::from_search(value, s.best_root, &s.tally, ctl)
}

/// The root window: the bounds widened by one unit, so that a value on a bound is reported as
/// exact and the root always has a best move.
pub(crate) fn root_window(bounds: (f64, f64), side: u8) -> (f64, f64) {
    let (lo, hi) = side_bounds(bounds, side);
    (lo - 1.0, hi + 1.0)
}

/// Star1 value of `state` from `player_side(state)`'s point of view (see the module doc). `bounds`
/// overrides the game's utility bounds (player 0's point of view); they must be true bounds.
pub fn star1<G: ChanceZeroSum>(
    game: &G,
    state: &G::State,
    depth: Option<u32>,
    bounds: Option<(f64, f64)>,
    ctl: &Control,
) -> Option<ChanceOutcome<G::Move>> {
    search(game, state, depth, Star1, bounds, ctl)
}
