//! Alpha-beta pruning (Knuth and Moore 1975), in negamax form, fail-soft.
//!
//! Contract of [`alphabeta`]: with `alpha < beta`, the returned value `v` satisfies
//! - `v <= alpha`  implies  true value `<= v` (fail low: an upper bound),
//! - `v >= beta`   implies  true value `>= v` (fail high: a lower bound),
//! - otherwise `v` is the exact value,
//!
//! all from the point of view of `game.side(state)`. With the full window it returns the
//! minimax value (same root value as [`super::minimax`] on every tree). Cut-offs happen on
//! equality too (Knuth and Moore 1975). No table, and moves are searched in the game's order after
//! `game.order_moves` when `use_ordering` is set: this is the reference implementation. The fast
//! engine with tables, iterative deepening and move ordering heuristics is [`super::engine`].

use std::ops::ControlFlow;

use super::minimax::{Best, NegamaxSearch, Outcome};
use super::node::{child_window, At};
use super::Control;
use crate::model::{to_parent, ZeroSum};

struct Search<'a, G: ZeroSum> {
    n: NegamaxSearch<'a, G>,
    use_ordering: bool,
}

impl<G: ZeroSum> Search<'_, G> {
    /// The node's fail-soft value in `(alpha, beta)` and its principal variation.
    fn value(&mut self, state: &G::State, mut alpha: i32, beta: i32, at: At) -> Best<G::Move> {
        let mut moves = match self.n.open(state, at) {
            ControlFlow::Break(v) => return Best::leaf(v),
            ControlFlow::Continue(moves) => moves,
        };
        let game = self.n.game;
        if self.use_ordering {
            game.order_moves(state, &mut moves);
        }
        let side = game.side(state);
        let mut best = Best::new();
        for &mv in &moves {
            let mut child = state.clone();
            game.apply(&mut child, mv);
            let child_side = game.side(&child);
            let (ca, cb) = child_window(side, child_side, (alpha, beta));
            let b = self.value(&child, ca, cb, at.after_move());
            best.offer(mv, to_parent(side, child_side, b.value), b.line);
            if best.value >= beta {
                break;
            }
            alpha = alpha.max(best.value);
        }
        self.n.close(at.ply, moves);
        best
    }
}

/// Fail-soft alpha-beta value of `state` in the window `(alpha, beta)`; see the module doc.
/// `None` if stopped by `ctl`.
pub fn alphabeta<G: ZeroSum>(
    game: &G,
    state: &G::State,
    alpha: i32,
    beta: i32,
    depth: Option<u32>,
    use_ordering: bool,
    ctl: &Control,
) -> Option<Outcome<G::Move>> {
    assert!(alpha < beta, "alpha-beta needs alpha < beta");
    let mut s = Search {
        n: NegamaxSearch::new(game, ctl),
        use_ordering,
    };
    let best = s.value(state, alpha, beta, At::root(depth));
    s.n.outcome(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{
        mnk::Mnk,
        tree::{random_tree, Tree},
    };
    use crate::model::{Game, ZeroSum};
    use crate::search::minimax::minimax;
    use proptest::prelude::*;

    fn full<G: ZeroSum>(g: &G, s: &G::State) -> Outcome<G::Move> {
        alphabeta(
            g,
            s,
            i32::MIN + 1,
            i32::MAX,
            None,
            false,
            &Control::unlimited(),
        )
        .unwrap()
    }

    /// A=(4,9,6), B=(2,15,13), C=(5,8,10): value 5, move C, 7 of 9 leaves; with C
    /// searched first, 5 of 9.
    #[test]
    fn course_cutoffs() {
        let t = Tree::parse(r#"{"max": [{"min": [4, 9, 6]}, {"min": [2, 15, 13]}, {"min": [5, 8, 10]}], "labels": ["A", "B", "C"]}"#).unwrap();
        let o = full(&t, &0);
        assert_eq!(t.value_to_json(&0, o.value), serde_json::json!(5));
        assert_eq!(t.format_move(&0, o.best_move.unwrap()), "C");
        assert_eq!(o.leaves, 7);
        let c_first = Tree::parse(r#"{"max": [{"min": [5, 8, 10]}, {"min": [4, 9, 6]}, {"min": [2, 15, 13]}], "labels": ["C", "A", "B"]}"#).unwrap();
        let o = full(&c_first, &0);
        assert_eq!(c_first.value_to_json(&0, o.value), serde_json::json!(5));
        assert_eq!(c_first.format_move(&0, o.best_move.unwrap()), "C");
        assert_eq!(o.leaves, 5);
    }

    #[test]
    fn mnk_values() {
        // 4,4,3 and 4,4,4 need a transposition table to be quick: see the engine's tests.
        let cases = [((3, 3, 3), 0), ((3, 4, 3), 1)];
        for ((m, n, k), want) in cases {
            let g = Mnk::new(m, n, k).unwrap();
            let o = full(&g, &g.initial_state());
            assert_eq!(o.value, want, "{m},{n},{k}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        /// Alpha-beta equals minimax at the root of every tree, and its fail-soft bounds hold
        /// for every window.
        #[test]
        fn alphabeta_equals_minimax_on_random_trees(seed in any::<u64>(), a in -25i32..25, w in 1i32..20) {
            let t = Tree::parse(&random_tree(seed, 6, 20)).unwrap();
            let exact = minimax(&t, &0, None, &Control::unlimited()).unwrap();
            let ab = full(&t, &0);
            prop_assert_eq!(ab.value, exact.value);
            prop_assert!(ab.leaves <= exact.leaves);
            let (lo, hi) = t.value_bounds(&0);
            let (alpha, beta) = (lo + a % (hi - lo + 1), lo + a % (hi - lo + 1) + w);
            let v = alphabeta(&t, &0, alpha, beta, None, false, &Control::unlimited()).unwrap().value;
            if v <= alpha { prop_assert!(exact.value <= v); }
            else if v >= beta { prop_assert!(exact.value >= v); }
            else { prop_assert_eq!(v, exact.value); }
        }
    }

    #[test]
    fn alphabeta_equals_minimax_on_tictactoe_positions() {
        use rand::{Rng, SeedableRng};
        let g = Mnk::tictactoe();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut moves = Vec::new();
        for _ in 0..200 {
            let mut s = g.initial_state();
            for _ in 0..rng.gen_range(0..6) {
                g.legal_moves(&s, &mut moves);
                if moves.is_empty() {
                    break;
                }
                g.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
            }
            let m = minimax(&g, &s, None, &Control::unlimited()).unwrap();
            assert_eq!(full(&g, &s).value, m.value, "{}", g.format_position(&s));
            for d in 0..4 {
                let m = minimax(&g, &s, Some(d), &Control::unlimited()).unwrap();
                let a = alphabeta(&g, &s, -2, 2, Some(d), true, &Control::unlimited()).unwrap();
                assert_eq!(a.value, m.value);
            }
        }
    }
}
