//! Paranoid search (Sturtevant and Korf 2000): every other player is modelled as
//! part of a coalition against the root player, which turns a multi-player game into a
//! two-sided one, so that alpha-beta applies.
//!
//! Contract of [`paranoid`]: the paranoid value of `state` for the root player `r` (the mover at
//! `state`, player 0 at a chance or terminal root): `r` maximises its own utility (entry `r` of
//! `returns`, or of `evaluate_vector` at the depth cut), every other player minimises it, and a
//! chance node averages its children by their probabilities. Alpha-beta is fail-soft at decision
//! nodes, cut-offs on equality; children of chance nodes are searched with the full
//! window, so their average is exact (the chance-node cut belongs to the chance kernels). The
//! first of several equally good root moves is reported. Depth counts the players' plies
//! (chance nodes do not use it up). A stop request returns `None`.

use std::ops::ControlFlow;

use super::maxn::VectorOutcome;
use super::node::{take_ply, At, RootPlayerSearch, Window};
use super::Control;
use crate::model::{Stochastic, Turn, VectorEval};

struct Search<'a, G: Stochastic + VectorEval> {
    s: RootPlayerSearch<'a, G>,
    moves: Vec<Vec<G::Move>>,
    outcomes: Vec<Vec<(G::Move, f64)>>,
}

impl<G: Stochastic + VectorEval> Search<'_, G> {
    fn value(&mut self, state: &G::State, alpha: f64, beta: f64, at: At) -> f64 {
        let ply = at.ply;
        let turn = match self.s.open(state, at.depth) {
            ControlFlow::Break(v) => return v,
            ControlFlow::Continue(turn) => turn,
        };
        let game = self.s.game;
        match turn {
            Turn::Chance => {
                let mut outcomes = take_ply(&mut self.outcomes, ply);
                game.chance_outcomes(state, &mut outcomes);
                let mut sum = 0.0;
                for &(mv, p) in &outcomes {
                    let mut child = state.clone();
                    game.apply(&mut child, mv);
                    sum +=
                        p * self.value(&child, f64::NEG_INFINITY, f64::INFINITY, at.after_chance());
                }
                self.outcomes[ply] = outcomes;
                sum
            }
            Turn::Player(p) => {
                let maximise = p as usize == self.s.root;
                let mut moves = take_ply(&mut self.moves, ply);
                game.legal_moves(state, &mut moves);
                let mut w = Window::open(maximise, alpha, beta);
                for &mv in &moves {
                    let mut child = state.clone();
                    game.apply(&mut child, mv);
                    let v = self.value(&child, w.alpha, w.beta, at.after_move());
                    if self.s.fold(maximise, ply, mv, v, &mut w) {
                        break;
                    }
                }
                self.moves[ply] = moves;
                w.best
            }
            Turn::Terminal => unreachable!(),
        }
    }
}

/// Paranoid value of `state` for the root player (see the module doc); `value` holds one entry.
pub fn paranoid<G: Stochastic + VectorEval>(
    game: &G,
    state: &G::State,
    depth: Option<u32>,
    ctl: &Control,
) -> Option<VectorOutcome<G::Move>> {
    let mut s = Search {
        s: RootPlayerSearch::new(game, ctl, state),
        moves: Vec::new(),
        outcomes: Vec::new(),
    };
    let v = s.value(state, f64::NEG_INFINITY, f64::INFINITY, At::root(depth));
    s.s.outcome(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::tree::Tree;
    use crate::model::ZeroSum;
    use crate::search::expectimax::{expectimax, Pruning};
    use crate::search::maxn::root_player;
    use crate::search::maxn::tests::random_multi_tree;
    use crate::search::minimax::minimax;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    /// The two-sided reduction: the root player's nodes become MAX, everyone else's MIN, and a
    /// leaf becomes the root player's utility.
    fn reduce(v: &Value, root: u64) -> Value {
        if let Some(u) = v.get("utility") {
            return u[root as usize].clone();
        }
        if let Some(kids) = v.get("chance") {
            let kids: Vec<Value> = kids
                .as_array()
                .unwrap()
                .iter()
                .map(|pair| json!([pair[0], reduce(&pair[1], root)]))
                .collect();
            return json!({ "chance": kids });
        }
        let kids: Vec<Value> = v["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| reduce(c, root))
            .collect();
        if v["player"].as_u64().unwrap() == root {
            json!({ "max": kids })
        } else {
            json!({ "min": kids })
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// Paranoid equals plain minimax on the two-sided reduction (expectiminimax when the tree
        /// has chance nodes), and never visits more leaves than the reduction has.
        #[test]
        fn paranoid_equals_minimax_on_the_reduction(seed in any::<u64>(), depth in 1u32..7, chance in any::<bool>()) {
            let (json, _) = random_multi_tree(seed, depth, chance);
            let t = Tree::from_json(&json).unwrap();
            let root = root_player(&t, &0) as u64;
            let reduced = Tree::from_json(&reduce(&json, root)).unwrap();
            let o = paranoid(&t, &0, None, &Control::unlimited()).unwrap();
            let ctl = Control::unlimited();
            let want = if reduced.kind() == crate::games::tree::TreeKind::MinMax {
                let m = minimax(&reduced, &0, None, &ctl).unwrap();
                reduced.value_to_json(&0, m.value).as_f64().unwrap()
            } else {
                let e = expectimax(&reduced, &0, None, Pruning::None, None, &ctl).unwrap();
                if crate::model::ChanceZeroSum::player_side(&reduced, &0) == 0 { e.value } else { -e.value }
            };
            prop_assert!((o.value[0] - want).abs() < 1e-9, "{} vs {}", o.value[0], want);
            let plain = expectimax(&reduced, &0, None, Pruning::None, None, &ctl).unwrap();
            prop_assert!(o.nodes <= plain.nodes);
        }
    }

    /// The max^n tests' tree, seen by A paranoidly: B and C minimise A's payoff. Left: C gives A 1
    /// or 4 -> 1, and 6 or 7 -> 6; B picks 1. Right: 2 or 5 -> 2, 5 or 7 -> 5; B picks 2. A: 2.
    #[test]
    fn course_tree_paranoid() {
        let leaf = |u: [i32; 3]| json!({ "utility": u });
        let c = |a, b| json!({ "player": 2, "children": [leaf(a), leaf(b)] });
        let b = |x, y| json!({ "player": 1, "children": [x, y] });
        let left = b(c([1, 2, 6], [4, 2, 3]), c([6, 1, 2], [7, 4, 1]));
        let right = b(c([2, 5, 4], [5, 4, 5]), c([5, 2, 4], [7, 7, 1]));
        let t = Tree::from_json(&json!({ "player": 0, "children": [left, right] })).unwrap();
        let o = paranoid(&t, &0, None, &Control::unlimited()).unwrap();
        assert_eq!(o.value, vec![2.0]);
        assert_eq!(o.best_move, Some(1));
    }
}
