//! Max^n (Luckhardt and Irani 1986): search with a utility vector, one entry per player.
//!
//! Contract of [`maxn`]: the utility vector of `state` (player `i`'s entry at index `i`, on the
//! scale of `game.returns`). At a node where player `p` moves, `p` compares the `p`-th entries
//! of its children's vectors and returns the whole vector of the child it prefers (never a
//! combination of entries); a chance node returns the probability-weighted average of
//! its children's vectors. Equal `p`-th entries are resolved by [`TieBreak`], which Luckhardt and Irani's (1986)
//! example shows can change the root's value. Terminal states give `returns`; with
//! `depth = Some(d)` (players' plies; chance nodes do not use depth up) non-terminal states at
//! depth 0 give `evaluate_vector`. No pruning: every node of the (cut) tree is visited.
//! A stop request returns `None`.
//!
//! Values live in one flat buffer, a slot of `num_players` numbers per ply, so the search
//! allocates nothing per node.

pub use super::node::root_player;
pub use super::node::VectorOutcome;
use super::node::{At, Tally};
use super::Control;
use crate::model::{Stochastic, Turn, VectorEval};

/// How a mover chooses among children whose own entries are equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TieBreak {
    /// The leftmost (first in move order) among equals (`tiebreak=first`).
    First,
    /// The rightmost among equals (`tiebreak=last`).
    Last,
    /// The one worst for the player to move at the root (`tiebreak=paranoid`).
    Paranoid,
    /// The one best for the player to move at the root (`tiebreak=friendly`).
    Friendly,
}

impl std::str::FromStr for TieBreak {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "first" => Ok(TieBreak::First),
            "last" => Ok(TieBreak::Last),
            "paranoid" => Ok(TieBreak::Paranoid),
            "friendly" => Ok(TieBreak::Friendly),
            other => Err(format!(
                "tiebreak '{other}' is unknown (first, last, paranoid, friendly)"
            )),
        }
    }
}

struct Search<'a, G: Stochastic + VectorEval> {
    game: &'a G,
    ctl: &'a Control,
    n: usize,
    root: usize,
    tiebreak: TieBreak,
    /// Result slot per ply.
    vals: Vec<f64>,
    /// Best-so-far (decision) or running average (chance) per ply.
    work: Vec<f64>,
    moves: Vec<Vec<G::Move>>,
    outcomes: Vec<Vec<(G::Move, f64)>>,
    tally: Tally,
    cut: bool,
    best_root: Option<G::Move>,
}

impl<G: Stochastic + VectorEval> Search<'_, G> {
    /// Writes the vector of `state` into slot `ply` of `vals`.
    fn value(&mut self, state: &G::State, at: At) {
        let At { ply, depth } = at;
        let n = self.n;
        if self.vals.len() < (ply + 2) * n {
            self.vals.resize((ply + 2) * n, 0.0);
            self.work.resize((ply + 2) * n, 0.0);
        }
        if !self.tally.enter(self.ctl) {
            return;
        }
        let slot = ply * n..(ply + 1) * n;
        let turn = self.game.turn(state);
        if turn == Turn::Terminal {
            self.tally.leaves += 1;
            self.game.returns(state, &mut self.vals[slot]);
            return;
        }
        if depth == Some(0) {
            self.tally.leaves += 1;
            self.cut = true;
            self.game.evaluate_vector(state, &mut self.vals[slot]);
            return;
        }
        if self.moves.len() <= ply {
            self.moves.push(Vec::new());
            self.outcomes.push(Vec::new());
        }
        let child_slot = (ply + 1) * n..(ply + 2) * n;
        match turn {
            Turn::Chance => {
                let mut outcomes = std::mem::take(&mut self.outcomes[ply]);
                self.game.chance_outcomes(state, &mut outcomes);
                self.work[slot.clone()].fill(0.0);
                for &(mv, p) in &outcomes {
                    let mut child = state.clone();
                    self.game.apply(&mut child, mv);
                    self.value(&child, at.after_chance());
                    for i in 0..n {
                        self.work[ply * n + i] += p * self.vals[(ply + 1) * n + i];
                    }
                }
                self.outcomes[ply] = outcomes;
            }
            Turn::Player(p) => {
                let p = p as usize;
                let mut moves = std::mem::take(&mut self.moves[ply]);
                self.game.legal_moves(state, &mut moves);
                for (k, &mv) in moves.iter().enumerate() {
                    let mut child = state.clone();
                    self.game.apply(&mut child, mv);
                    self.value(&child, at.after_move());
                    let (new, old) = (&self.vals[child_slot.clone()], &self.work[slot.clone()]);
                    let take = k == 0
                        || new[p] > old[p]
                        || (new[p] == old[p]
                            && match self.tiebreak {
                                TieBreak::First => false,
                                TieBreak::Last => true,
                                TieBreak::Paranoid => new[self.root] < old[self.root],
                                TieBreak::Friendly => new[self.root] > old[self.root],
                            });
                    if take {
                        let (vals, work) = (&self.vals, &mut self.work);
                        work[slot.clone()].copy_from_slice(&vals[child_slot.clone()]);
                        if ply == 0 {
                            self.best_root = Some(mv);
                        }
                    }
                }
                self.moves[ply] = moves;
            }
            Turn::Terminal => unreachable!(),
        }
        let (vals, work) = (&mut self.vals, &self.work);
        vals[slot.clone()].copy_from_slice(&work[slot]);
    }
}

/// Max^n vector of `state` (see the module doc).
pub fn maxn<G: Stochastic + VectorEval>(
    game: &G,
    state: &G::State,
    depth: Option<u32>,
    tiebreak: TieBreak,
    ctl: &Control,
) -> Option<VectorOutcome<G::Move>> {
    let n = game.num_players();
    let mut s = Search {
        game,
        ctl,
        n,
        root: root_player(game, state),
        tiebreak,
        vals: vec![0.0; 2 * n],
        work: vec![0.0; 2 * n],
        moves: Vec::new(),
        outcomes: Vec::new(),
        tally: Tally::default(),
        cut: false,
        best_root: None,
    };
    s.value(state, At::root(depth));
    let t = s.tally.finish(ctl)?;
    Some(VectorOutcome {
        value: s.vals[..n].to_vec(),
        best_move: s.best_root,
        nodes: t.nodes,
        leaves: t.leaves,
        cut: s.cut,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::games::tree::Tree;
    use crate::model::Game;
    use proptest::prelude::*;

    fn leaf(u: [i32; 3]) -> String {
        format!(r#"{{"utility": [{}, {}, {}]}}"#, u[0], u[1], u[2])
    }
    fn node(p: u8, kids: &[String]) -> String {
        format!(r#"{{"player": {p}, "children": [{}]}}"#, kids.join(","))
    }

    /// A, B, C move in turn; the root gets (5, 4, 5) and A chooses right.
    #[test]
    fn course_three_player_tree() {
        let left = node(
            1,
            &[
                node(2, &[leaf([1, 2, 6]), leaf([4, 2, 3])]),
                node(2, &[leaf([6, 1, 2]), leaf([7, 4, 1])]),
            ],
        );
        let right = node(2, &[leaf([2, 5, 4]), leaf([5, 4, 5])]);
        let right = node(1, &[right, node(2, &[leaf([5, 2, 4]), leaf([7, 7, 1])])]);
        let text = format!(
            r#"{{"player": 0, "children": [{left}, {right}], "labels": ["left", "right"]}}"#
        );
        let t = Tree::parse(&text).unwrap();
        for tb in [
            TieBreak::First,
            TieBreak::Last,
            TieBreak::Paranoid,
            TieBreak::Friendly,
        ] {
            let o = maxn(&t, &0, None, tb, &Control::unlimited()).unwrap();
            assert_eq!(o.value, vec![5.0, 4.0, 5.0]);
            assert_eq!(t.format_move(&0, o.best_move.unwrap()), "right");
            assert_eq!(o.nodes, 15);
        }
        // C never combines entries: from (1, 2, 6) and (4, 2, 3) it returns (1, 2, 6).
        let c = Tree::parse(&node(2, &[leaf([1, 2, 6]), leaf([4, 2, 3])])).unwrap();
        assert_eq!(
            maxn(&c, &0, None, TieBreak::First, &Control::unlimited())
                .unwrap()
                .value,
            vec![1.0, 2.0, 6.0]
        );
    }

    /// C is indifferent between (2, 3, 4) and (6, 1, 4); A's payoff (2 or 6) depends
    /// on the tie-break, and so does A's choice against a sure (4, 0, 0).
    #[test]
    fn tie_break_decides() {
        let c = node(2, &[leaf([2, 3, 4]), leaf([6, 1, 4])]);
        let text = format!(
            r#"{{"player": 0, "children": [{}, {c}], "labels": ["sure", "risky"]}}"#,
            leaf([4, 0, 0])
        );
        let t = Tree::parse(&text).unwrap();
        let run = |tb| maxn(&t, &0, None, tb, &Control::unlimited()).unwrap();
        let first = run(TieBreak::First);
        assert_eq!(first.value, vec![4.0, 0.0, 0.0]);
        assert_eq!(t.format_move(&0, first.best_move.unwrap()), "sure");
        let last = run(TieBreak::Last);
        assert_eq!(last.value, vec![6.0, 1.0, 4.0]);
        assert_eq!(t.format_move(&0, last.best_move.unwrap()), "risky");
        assert_eq!(run(TieBreak::Paranoid).value, first.value);
        assert_eq!(run(TieBreak::Friendly).value, last.value);
    }

    /// A random multi-player tree (3 or 4 players, small integer utilities so ties are common,
    /// chance nodes with non-uniform probabilities when `chance`).
    pub(crate) fn random_multi_tree(
        seed: u64,
        depth: u32,
        chance: bool,
    ) -> (serde_json::Value, usize) {
        use rand::{Rng, SeedableRng};
        use serde_json::{json, Value};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let players = rng.gen_range(3..=4);
        fn build(
            rng: &mut rand_chacha::ChaCha8Rng,
            depth: u32,
            players: usize,
            chance: bool,
        ) -> Value {
            if depth == 0 || rng.gen_ratio(1, 8) {
                let u: Vec<f64> = (0..players).map(|_| rng.gen_range(0..4) as f64).collect();
                return json!({ "utility": u });
            }
            if chance && rng.gen_ratio(1, 4) {
                let n = rng.gen_range(2..=3);
                let w: Vec<f64> = (0..n).map(|_| rng.gen_range(1..=5) as f64).collect();
                let total: f64 = w.iter().sum();
                let kids: Vec<Value> = w
                    .iter()
                    .map(|x| json!([x / total, build(rng, depth - 1, players, chance)]))
                    .collect();
                return json!({ "chance": kids });
            }
            let p = rng.gen_range(0..players);
            let n = rng.gen_range(1..=3);
            let kids: Vec<Value> = (0..n)
                .map(|_| build(rng, depth - 1, players, chance))
                .collect();
            json!({ "player": p, "children": kids })
        }
        (build(&mut rng, depth, players, chance), players)
    }

    /// The naive reference: recursion over the JSON itself, a fresh vector per node.
    fn naive(v: &serde_json::Value) -> Vec<f64> {
        if let Some(u) = v.get("utility") {
            return u
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
        }
        if let Some(kids) = v.get("chance") {
            let mut acc: Vec<f64> = Vec::new();
            for pair in kids.as_array().unwrap() {
                let p = pair[0].as_f64().unwrap();
                let c = naive(&pair[1]);
                if acc.is_empty() {
                    acc = vec![0.0; c.len()];
                }
                for (a, x) in acc.iter_mut().zip(c) {
                    *a += p * x;
                }
            }
            return acc;
        }
        let p = v["player"].as_u64().unwrap() as usize;
        let mut best: Option<Vec<f64>> = None;
        for c in v["children"].as_array().unwrap() {
            let c = naive(c);
            if best.as_ref().is_none() || c[p] > best.as_ref().unwrap()[p] {
                best = Some(c);
            }
        }
        best.unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// Max^n with tie-break `first` equals the naive max^n on random trees (with chance).
        #[test]
        fn maxn_equals_naive(seed in any::<u64>(), depth in 1u32..7, chance in any::<bool>()) {
            let (json, players) = random_multi_tree(seed, depth, chance);
            let t = Tree::from_json(&json).unwrap();
            prop_assume!(t.num_players() == players);
            let o = maxn(&t, &0, None, TieBreak::First, &Control::unlimited()).unwrap();
            let want = naive(&json);
            prop_assert_eq!(o.value.len(), want.len());
            for (a, b) in o.value.iter().zip(&want) {
                prop_assert!((a - b).abs() < 1e-9, "{:?} vs {:?}", o.value, want);
            }
        }
    }
}
