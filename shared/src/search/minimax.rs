//! Plain minimax (von Neumann 1928), in negamax form: the reference every two-player kernel is
//! checked against.
//!
//! Contract: [`minimax`] returns the exact value of `state` from the point of view of
//! `game.side(state)` when `depth` is `None`; with `Some(d)` it cuts at depth `d` (plies counted
//! from `state`, depth 0 = `state` itself) and uses `game.evaluate` there. No pruning, no table,
//! no move ordering: it visits every node of the (cut) tree, in the game's move order, and the
//! first of several equally good moves is the one reported. A stop request ([`Control`]) makes it
//! return `None`.

use std::ops::ControlFlow;

use super::node::{negamax_leaf, take_ply, At, Tally};
use super::Control;
use crate::model::{to_parent, ZeroSum};

/// What a two-player search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome<M> {
    /// Value from the point of view of the side to move at the root.
    pub value: i32,
    /// Best root move (`None` at a terminal root).
    pub best_move: Option<M>,
    /// Principal variation, starting with `best_move`.
    pub pv: Vec<M>,
    /// Nodes visited (root included).
    pub nodes: u64,
    /// Terminal or depth-cut leaves evaluated.
    pub leaves: u64,
}

/// What the two-player kernels without a table ([`minimax`], [`super::alphabeta`]) share: the
/// node tally with its limit check, the leaves, the per-ply move buffers, and the result.
pub(crate) struct NegamaxSearch<'a, G: ZeroSum> {
    pub game: &'a G,
    ctl: &'a Control,
    moves: Vec<Vec<G::Move>>,
    tally: Tally,
}

impl<'a, G: ZeroSum> NegamaxSearch<'a, G> {
    pub fn new(game: &'a G, ctl: &'a Control) -> Self {
        NegamaxSearch {
            game,
            ctl,
            moves: Vec::new(),
            tally: Tally::default(),
        }
    }

    /// Opens the node at `at`: counts it, and scores it when it is a leaf. `Break(v)` ends the
    /// node with value `v` (0 when the search was stopped: that result is discarded);
    /// `Continue(moves)` lends the node `state`'s legal moves in the game's order, in the ply's
    /// buffer, to be given back with [`NegamaxSearch::close`].
    #[inline]
    pub fn open(&mut self, state: &G::State, at: At) -> ControlFlow<i32, Vec<G::Move>> {
        if !self.tally.enter(self.ctl) {
            return ControlFlow::Break(0);
        }
        if let Some(v) = negamax_leaf(self.game, state, at.depth, &mut self.tally) {
            return ControlFlow::Break(v);
        }
        let mut moves = take_ply(&mut self.moves, at.ply);
        self.game.legal_moves(state, &mut moves);
        ControlFlow::Continue(moves)
    }

    /// Gives back the move buffer [`NegamaxSearch::open`] lent to the node at `ply`.
    #[inline]
    pub fn close(&mut self, ply: usize, moves: Vec<G::Move>) {
        self.moves[ply] = moves;
    }

    /// The result of the search whose root value and line are `best`, or `None` when a stop
    /// was requested. Reports the nodes not yet reported.
    pub fn outcome(&self, best: Best<G::Move>) -> Option<Outcome<G::Move>> {
        let t = self.tally.finish(self.ctl)?;
        let mut pv = best.line;
        pv.reverse();
        Some(Outcome {
            value: best.value,
            best_move: pv.first().copied(),
            pv,
            nodes: t.nodes,
            leaves: t.leaves,
        })
    }
}

/// A node's best value so far and its principal variation, collected leaf first (each node
/// pushes its move after its best child's line).
pub(crate) struct Best<M> {
    pub value: i32,
    pub line: Vec<M>,
}

impl<M> Best<M> {
    /// Below every value, no line.
    pub fn new() -> Self {
        Best {
            value: i32::MIN,
            line: Vec::new(),
        }
    }

    /// A leaf's value.
    pub fn leaf(value: i32) -> Self {
        Best {
            value,
            line: Vec::new(),
        }
    }

    /// Offers move `mv` with value `v` (the node's side) and its child's best `line`: kept
    /// when strictly better, so the first of several equal moves stays.
    #[inline]
    pub fn offer(&mut self, mv: M, v: i32, mut line: Vec<M>) {
        if v > self.value {
            self.value = v;
            line.push(mv);
            self.line = line;
        }
    }
}

struct Search<'a, G: ZeroSum> {
    n: NegamaxSearch<'a, G>,
}

impl<G: ZeroSum> Search<'_, G> {
    /// The node's value and principal variation.
    fn value(&mut self, state: &G::State, at: At) -> Best<G::Move> {
        let moves = match self.n.open(state, at) {
            ControlFlow::Break(v) => return Best::leaf(v),
            ControlFlow::Continue(moves) => moves,
        };
        let game = self.n.game;
        let side = game.side(state);
        let mut best = Best::new();
        for &mv in &moves {
            let mut child = state.clone();
            game.apply(&mut child, mv);
            let b = self.value(&child, at.after_move());
            best.offer(mv, to_parent(side, game.side(&child), b.value), b.line);
        }
        self.n.close(at.ply, moves);
        best
    }
}

/// Exact (or depth-limited) minimax value of `state`. `None` if stopped by `ctl`.
pub fn minimax<G: ZeroSum>(
    game: &G,
    state: &G::State,
    depth: Option<u32>,
    ctl: &Control,
) -> Option<Outcome<G::Move>> {
    let mut s = Search {
        n: NegamaxSearch::new(game, ctl),
    };
    let best = s.value(state, At::root(depth));
    s.n.outcome(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{mnk::Mnk, tree::Tree};
    use crate::model::{Game, ZeroSum};

    #[test]
    fn course_tree_value_5_move_c() {
        let t = Tree::parse(r#"{"max": [{"min": [4, 9, 6]}, {"min": [2, 15, 13]}, {"min": [5, 8, 10]}], "labels": ["A", "B", "C"]}"#).unwrap();
        let o = minimax(&t, &0, None, &Control::unlimited()).unwrap();
        assert_eq!(t.value_to_json(&0, o.value), serde_json::json!(5));
        assert_eq!(t.format_move(&0, o.best_move.unwrap()), "C");
        assert_eq!(o.leaves, 9);
    }

    #[test]
    fn tictactoe_is_a_draw_and_the_course_position_blocks() {
        let g = Mnk::tictactoe();
        let o = minimax(&g, &g.initial_state(), None, &Control::unlimited()).unwrap();
        assert_eq!(o.value, 0);
        // X O X / . O . / . . . with X to move: only the bottom middle (8) holds.
        let s = g.parse_position("1235").unwrap();
        let o = minimax(&g, &s, None, &Control::unlimited()).unwrap();
        assert_eq!(o.value, 0);
        assert_eq!(g.format_move(&s, o.best_move.unwrap()), "8");
    }
}
