//! Expectiminimax: max, min and chance nodes, each with its own back-up rule. The reference every
//! chance kernel (Star1, Star2, Star2.5) is checked against.
//!
//! Contract of [`expectimax`]: the value of `state` from the point of view of
//! `game.player_side(state)`. Inside, the search is written as Michie's expectimax (D. Michie,
//! "Game-playing and game-learning automata", 1966), not in negamax form: player 0 maximises,
//! player 1 minimises player 0's value, a chance node averages its children by probability; values
//! are turned to player 0's view on the way up and back to the root side at the end.
//!
//! Depth: `Some(d)` allows `d` players' plies below `state`; chance nodes use none. A non-terminal
//! node reached at depth 0 (decision or chance) is scored with `game.evaluate`; `None` searches to
//! the end (finite trees only).
//!
//! Pruning ([`Pruning::ChanceBounds`]) is Ballard's (1983, see [`super::star1`]): alpha-beta at MAX
//! and MIN nodes, and at a chance node, after each outcome, the interval the value can still reach
//! (partial average plus the unseen probability times L or U) is compared with the window; outside
//! it the node returns that bound (fail-soft). With utilities in [0, 10], a first outcome 2 of two
//! equal ones bounds the node by 6, so a MAX that has 7 elsewhere skips the second. Without pruning
//! every node of the (cut) tree is visited in order. The first of equal root moves is reported; a
//! stop request returns `None`.

use super::node::{ensure_ply, At, ChanceFrame, Tally};
use super::Control;
use crate::model::chance::{to_side, ChanceZeroSum};
use crate::model::Turn;

/// What a chance search found.
#[derive(Clone, Debug, PartialEq)]
pub struct ChanceOutcome<M> {
    /// Value from the point of view of `side(root)`.
    pub value: f64,
    /// Best root move (`None` at a chance or terminal root).
    pub best_move: Option<M>,
    /// Nodes visited, root included; a node visited twice (a probe, then the search) counts twice.
    pub nodes: u64,
    /// Terminal or depth-cut leaves scored.
    pub leaves: u64,
}

impl<M> ChanceOutcome<M> {
    /// The result of a chance search whose root value is `value` (from the root's side), or
    /// `None` when a stop was requested. Reports the nodes not yet reported to `ctl`.
    pub(crate) fn from_search(
        value: f64,
        best_move: Option<M>,
        tally: &Tally,
        ctl: &Control,
    ) -> Option<Self> {
        let t = tally.finish(ctl)?;
        Some(ChanceOutcome {
            value,
            best_move,
            nodes: t.nodes,
            leaves: t.leaves,
        })
    }
}

/// Whether [`expectimax`] prunes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pruning {
    /// Plain expectiminimax: every node is visited.
    None,
    /// Alpha-beta at decision nodes and Ballard's cut at chance nodes with the bounds L, U.
    ChanceBounds,
}

struct Search<'a, G: ChanceZeroSum> {
    game: &'a G,
    ctl: &'a Control,
    /// Player 0's bounds (L, U).
    bounds: (f64, f64),
    pruning: Pruning,
    frames: Vec<ChanceFrame<G::Move>>,
    tally: Tally,
    best_root: Option<G::Move>,
}

impl<G: ChanceZeroSum> Search<'_, G> {
    /// Value of `state` for player 0, fail-soft in the window `(alpha, beta)` when pruning.
    fn value(&mut self, state: &G::State, alpha: f64, beta: f64, at: At) -> f64 {
        let At { ply, depth } = at;
        if !self.tally.enter(self.ctl) {
            return 0.0;
        }
        let turn = self.game.turn(state);
        if turn == Turn::Terminal {
            self.tally.leaves += 1;
            return to_side(
                self.game.player_side(state),
                0,
                self.game.terminal_score(state),
            );
        }
        if depth == Some(0) {
            self.tally.leaves += 1;
            return to_side(self.game.player_side(state), 0, self.game.estimate(state));
        }
        ensure_ply(&mut self.frames, ply);
        let prune = self.pruning == Pruning::ChanceBounds;
        match turn {
            Turn::Chance => {
                let mut outcomes = std::mem::take(&mut self.frames[ply].outcomes);
                self.game.chance_outcomes(state, &mut outcomes);
                let (lo, hi) = self.bounds;
                let mut sum = 0.0;
                let mut rest = 1.0;
                let mut result = None;
                for &(mv, p) in &outcomes {
                    let mut child = state.clone();
                    self.game.apply(&mut child, mv);
                    // Children of a chance node are searched exactly: a partial average is not a
                    // minimax bound, only the interval below is.
                    let v = self.value(&child, f64::NEG_INFINITY, f64::INFINITY, at.after_chance());
                    sum += p * v;
                    rest -= p;
                    if prune {
                        let upper = sum + rest.max(0.0) * hi;
                        let lower = sum + rest.max(0.0) * lo;
                        if upper <= alpha {
                            result = Some(upper);
                            break;
                        }
                        if lower >= beta {
                            result = Some(lower);
                            break;
                        }
                    }
                }
                self.frames[ply].outcomes = outcomes;
                result.unwrap_or(sum)
            }
            Turn::Player(_) => {
                let mut moves = std::mem::take(&mut self.frames[ply].moves);
                self.game.legal_moves(state, &mut moves);
                self.game.order_decisions(state, &mut moves);
                let maximise = self.game.player_side(state) == 0;
                let (mut a, mut b) = (alpha, beta);
                let mut best = if maximise {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                };
                for &mv in &moves {
                    let mut child = state.clone();
                    self.game.apply(&mut child, mv);
                    let (ca, cb) = if prune {
                        (a, b)
                    } else {
                        (f64::NEG_INFINITY, f64::INFINITY)
                    };
                    let v = self.value(&child, ca, cb, at.after_move());
                    let better = if maximise { v > best } else { v < best };
                    if better {
                        best = v;
                        if ply == 0 {
                            self.best_root = Some(mv);
                        }
                    }
                    if prune {
                        if maximise {
                            if best >= b {
                                break;
                            }
                            a = a.max(best);
                        } else {
                            if best <= a {
                                break;
                            }
                            b = b.min(best);
                        }
                    }
                }
                self.frames[ply].moves = moves;
                best
            }
            Turn::Terminal => unreachable!(),
        }
    }
}

/// Expectiminimax value of `state` (see the module doc), from `player_side(state)`'s point of view.
/// `bounds` overrides the game's utility bounds (player 0's point of view) for the chance cut.
pub fn expectimax<G: ChanceZeroSum>(
    game: &G,
    state: &G::State,
    depth: Option<u32>,
    pruning: Pruning,
    bounds: Option<(f64, f64)>,
    ctl: &Control,
) -> Option<ChanceOutcome<G::Move>> {
    let mut s = Search {
        game,
        ctl,
        bounds: bounds.unwrap_or_else(|| game.utility_bounds()),
        pruning,
        frames: Vec::new(),
        tally: Tally::default(),
        best_root: None,
    };
    let v = s.value(state, f64::NEG_INFINITY, f64::INFINITY, At::root(depth));
    let value = to_side(0, game.player_side(state), v);
    ChanceOutcome::from_search(value, s.best_root, &s.tally, ctl)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::tree::Tree;
    use crate::model::Game;

    fn run(t: &Tree, pruning: Pruning) -> ChanceOutcome<u32> {
        expectimax(t, &0, None, pruning, None, &Control::unlimited()).unwrap()
    }

    /// L gives 0.5*3 + 0.5*4 = 3.5, R gives 0.25*1 + 0.75*5 = 4; MAX chooses R.
    #[test]
    fn course_coin_flip_tree() {
        let t = Tree::parse(
            r#"{"max": [{"chance": [[0.5, {"min": [3, 7]}], [0.5, {"min": [8, 4]}]]},
                        {"chance": [[0.25, {"min": [10, 1]}], [0.75, {"min": [6, 5]}]]}],
                "labels": ["L", "R"]}"#,
        )
        .unwrap();
        for pruning in [Pruning::None, Pruning::ChanceBounds] {
            let o = run(&t, pruning);
            assert!((o.value - 4.0).abs() < 1e-12, "{o:?}");
            assert_eq!(t.format_move(&0, o.best_move.unwrap()), "R");
        }
        // The values of the two moves themselves.
        let l = expectimax(&t, &1, None, Pruning::None, None, &Control::unlimited()).unwrap();
        assert!((l.value - 3.5).abs() < 1e-12);
    }

    /// A = (4, 9, 6), B = (2, 15, 13), C = (5, 8, 10). Minimax chooses C (5); an
    /// opponent who answers uniformly at random makes the averages 6.33, 10, 7.67: B.
    #[test]
    fn course_expectimax_chooses_b_where_minimax_chooses_c() {
        let third = 1.0 / 3.0;
        let chance = |a: i32, b: i32, c: i32| {
            format!(r#"{{"chance": [[{third}, {a}], [{third}, {b}], [{third}, {c}]]}}"#)
        };
        let text = format!(
            r#"{{"max": [{}, {}, {}], "labels": ["A", "B", "C"]}}"#,
            chance(4, 9, 6),
            chance(2, 15, 13),
            chance(5, 8, 10)
        );
        let t = Tree::parse(&text).unwrap();
        let o = run(&t, Pruning::None);
        assert_eq!(t.format_move(&0, o.best_move.unwrap()), "B");
        assert!((o.value - 10.0).abs() < 1e-9);
        let mut each = Vec::new();
        for mv in 0..3 {
            let mut s = 0;
            t.apply(&mut s, mv);
            each.push(
                expectimax(&t, &s, None, Pruning::None, None, &Control::unlimited())
                    .unwrap()
                    .value,
            );
        }
        for (got, want) in each.iter().zip([19.0 / 3.0, 10.0, 23.0 / 3.0]) {
            assert!((got - want).abs() < 1e-9, "{each:?}");
        }
        assert!((each[0] - 6.33).abs() < 0.01 && (each[2] - 7.67).abs() < 0.01);
        // The same leaves under MIN nodes: minimax (and expectiminimax without chance) picks C.
        let minmax = Tree::parse(r#"{"max": [{"min": [4, 9, 6]}, {"min": [2, 15, 13]}, {"min": [5, 8, 10]}], "labels": ["A", "B", "C"]}"#).unwrap();
        let o = run(&minmax, Pruning::None);
        assert_eq!(minmax.format_move(&0, o.best_move.unwrap()), "C");
        assert_eq!(o.value, 5.0);
        let m = crate::search::minimax::minimax(&minmax, &0, None, &Control::unlimited()).unwrap();
        assert_eq!(minmax.format_move(&0, m.best_move.unwrap()), "C");
    }

    /// A gives 2 (0.6) or 3 (0.4), B gives 1 (0.6) or 4 (0.4): 2.4 vs 2.2, A. A
    /// positive affine map (10x + 5: 29 vs 27) keeps A; cubing (15.6 vs 26.2) switches to B.
    #[test]
    fn affine_keeps_and_cubing_changes_the_decision() {
        let tree = |f: &dyn Fn(f64) -> f64| {
            let text = format!(
                r#"{{"max": [{{"chance": [[0.6, {}], [0.4, {}]]}}, {{"chance": [[0.6, {}], [0.4, {}]]}}], "labels": ["A", "B"]}}"#,
                f(2.0),
                f(3.0),
                f(1.0),
                f(4.0)
            );
            Tree::parse(&text).unwrap()
        };
        let values = |t: &Tree| -> Vec<f64> {
            (0..2)
                .map(|mv| {
                    let mut s = 0;
                    t.apply(&mut s, mv);
                    expectimax(t, &s, None, Pruning::None, None, &Control::unlimited())
                        .unwrap()
                        .value
                })
                .collect()
        };
        let id = tree(&|x| x);
        let v = values(&id);
        assert!(
            (v[0] - 2.4).abs() < 1e-9 && (v[1] - 2.2).abs() < 1e-9,
            "{v:?}"
        );
        assert_eq!(
            id.format_move(&0, run(&id, Pruning::None).best_move.unwrap()),
            "A"
        );
        let affine = tree(&|x| 10.0 * x + 5.0);
        let v = values(&affine);
        assert!(
            (v[0] - 29.0).abs() < 1e-9 && (v[1] - 27.0).abs() < 1e-9,
            "{v:?}"
        );
        assert_eq!(
            affine.format_move(&0, run(&affine, Pruning::None).best_move.unwrap()),
            "A"
        );
        let cubed = tree(&|x| x * x * x);
        let v = values(&cubed);
        assert!(
            (v[0] - 15.6).abs() < 1e-9 && (v[1] - 26.2).abs() < 1e-9,
            "{v:?}"
        );
        assert_eq!(
            cubed.format_move(&0, run(&cubed, Pruning::None).best_move.unwrap()),
            "B"
        );
        // As MIN nodes the values are 2 and 1 before cubing and 8 and 1 after: same order.
        let min_id = Tree::parse(r#"{"max": [{"min": [2, 3]}, {"min": [1, 4]}]}"#).unwrap();
        let min_cubed = Tree::parse(r#"{"max": [{"min": [8, 27]}, {"min": [1, 64]}]}"#).unwrap();
        assert_eq!(
            run(&min_id, Pruning::None).best_move,
            run(&min_cubed, Pruning::None).best_move
        );
    }

    /// Utilities in [0, 10]; MAX has a move worth 7; the other move is a chance node
    /// with two equal outcomes, the first worth 2. Its value is at most 0.5*2 + 0.5*10 = 6, so
    /// the second outcome is never visited.
    #[test]
    fn chance_node_bound_cut() {
        let t =
            Tree::parse(r#"{"max": [7, {"chance": [[0.5, 2], [0.5, {"min": [9, 10]}]]}, 0, 10]}"#)
                .unwrap();
        // Declared bounds [0, 10] (the leaves span them too).
        let plain = expectimax(
            &t,
            &0,
            None,
            Pruning::None,
            Some((0.0, 10.0)),
            &Control::unlimited(),
        )
        .unwrap();
        let cut = expectimax(
            &t,
            &0,
            None,
            Pruning::ChanceBounds,
            Some((0.0, 10.0)),
            &Control::unlimited(),
        )
        .unwrap();
        assert_eq!(plain.value, 10.0);
        assert_eq!(cut.value, 10.0);
        // Plain: root, 7, chance, 2, min, 9, 10, 0, 10 = 9 nodes. Cut: the min node and its two
        // leaves are skipped.
        assert_eq!(plain.nodes, 9);
        assert_eq!(cut.nodes, 6);
        // Where the chance node alone is asked, the bound is 6 after the first outcome.
        let t = Tree::parse(r#"{"max": [7, {"chance": [[0.5, 2], [0.5, 10]]}]}"#).unwrap();
        let cut = expectimax(
            &t,
            &0,
            None,
            Pruning::ChanceBounds,
            Some((0.0, 10.0)),
            &Control::unlimited(),
        )
        .unwrap();
        assert_eq!(cut.value, 7.0);
        assert_eq!(
            cut.nodes, 4,
            "root, 7, chance, 2: the outcome 10 is skipped"
        );
    }

    /// A random chance tree with dyadic probabilities (eighths) and integer leaves, so that
    /// expected values are exact in floating point; `f` maps every leaf.
    fn dyadic_tree(seed: u64, f: &dyn Fn(f64) -> f64) -> Tree {
        use rand::{Rng, SeedableRng};
        use serde_json::{json, Value};
        fn node(rng: &mut rand_chacha::ChaCha8Rng, depth: u32, f: &dyn Fn(f64) -> f64) -> Value {
            if depth == 0 || rng.gen_ratio(1, 8) {
                return json!(f(rng.gen_range(-10..=10) as f64));
            }
            match rng.gen_range(0..3) {
                0 => {
                    // Split 8 eighths into 2..4 positive parts.
                    let n = rng.gen_range(2..=4);
                    let mut cuts: Vec<u32> = (1..8).collect();
                    while cuts.len() > n - 1 {
                        cuts.remove(rng.gen_range(0..cuts.len()));
                    }
                    let mut prev = 0;
                    let mut kids = Vec::new();
                    for c in cuts.into_iter().chain(std::iter::once(8)) {
                        kids.push(json!([(c - prev) as f64 / 8.0, node(rng, depth - 1, f)]));
                        prev = c;
                    }
                    json!({ "chance": kids })
                }
                k => {
                    let n = rng.gen_range(1..=3);
                    let kids: Vec<Value> = (0..n).map(|_| node(rng, depth - 1, f)).collect();
                    json!({ if k == 1 { "max" } else { "min" }: kids })
                }
            }
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        Tree::from_json(&node(&mut rng, 6, f)).unwrap()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        /// A positive affine map of the leaves (a x + c, a > 0) maps the value the
        /// same way and keeps the decision, on random trees with chance nodes.
        #[test]
        fn positive_affine_maps_keep_decisions(seed in proptest::prelude::any::<u64>(), a in 1i32..6, c in -10i32..10) {
            let (a, c) = (a as f64, c as f64);
            let plain = dyadic_tree(seed, &|x| x);
            let mapped = dyadic_tree(seed, &|x| a * x + c);
            let p = run(&plain, Pruning::None);
            let m = run(&mapped, Pruning::None);
            let side = ChanceZeroSum::player_side(&plain, &0);
            let (pv, mv) = (to_side(side, 0, p.value), to_side(side, 0, m.value));
            proptest::prop_assert!((mv - (a * pv + c)).abs() < 1e-9, "{} vs {}", mv, a * pv + c);
            proptest::prop_assert_eq!(p.best_move, m.best_move);
        }
    }
}
