//! Best-reply search (BRS; M. P. D. Schadd and M. H. M. Winands, "Best Reply Search for
//! Multiplayer Games", 2011): multi-player search in which, between two turns of the root player,
//! only the single strongest reply of all opponents together is played.
//!
//! Contract of [`best_reply`]: the BRS value of `state` for the root player `r` (the mover at
//! `state`; player 0 at a terminal root). At a MAX layer `r` plays one of its moves and maximises
//! its own utility; at the MIN layer that follows, every opponent's moves are generated in the same
//! position ([`OutOfTurn::moves_as`], opponents in turn order after `r`), each played with the turn
//! handed back to `r` ([`OutOfTurn::apply_as`]), and the minimum of `r`'s utility is taken: the
//! other opponents pass. Leaves are terminal states (`returns`, entry `r`) and, with `depth =
//! Some(d)`, states after `d` layers (`evaluate_vector`, entry `r`); a layer where nobody can move
//! is scored by the evaluator too. The search is two-sided, so alpha-beta applies: fail-soft,
//! cut-offs on equality, children in move order; the first of equal root moves is reported. No
//! chance nodes. A stop request returns `None`.
//!
//! Unlike paranoid search, `r` gets a turn every second ply, so the same depth looks further ahead
//! for `r`, at the price of positions that cannot arise in the real game (the paper's trade-off).

use std::ops::ControlFlow;

use super::maxn::VectorOutcome;
use super::node::{take_ply, At, RootPlayerSearch, Window};
use super::Control;
use crate::model::{OutOfTurn, VectorEval};

struct Search<'a, G: OutOfTurn + VectorEval> {
    s: RootPlayerSearch<'a, G>,
    players: usize,
    /// One move buffer per ply, reused for every opponent of a MIN layer in turn.
    moves: Vec<Vec<G::Move>>,
}

impl<G: OutOfTurn + VectorEval> Search<'_, G> {
    /// The BRS value of `state`, a MAX layer (`max_layer`, the root player to move) or a MIN
    /// layer, searched with the window (`alpha`, `beta`), fail-soft.
    fn value(&mut self, state: &G::State, alpha: f64, beta: f64, at: At, max_layer: bool) -> f64 {
        if let ControlFlow::Break(v) = self.s.open(state, at.depth) {
            return v;
        }
        let game = self.s.game;
        let ply = at.ply;
        let mut moves = take_ply(&mut self.moves, ply);
        let mut any = false;
        let mut w = Window::open(max_layer, alpha, beta);
        if max_layer {
            game.legal_moves(state, &mut moves);
            for &mv in &moves {
                any = true;
                let mut child = state.clone();
                game.apply(&mut child, mv);
                let v = self.value(&child, w.alpha, w.beta, at.after_move(), false);
                if self.s.fold(true, ply, mv, v, &mut w) {
                    break;
                }
            }
        } else {
            let root = self.s.root;
            'opponents: for k in 1..self.players {
                let o = ((root + k) % self.players) as u8;
                game.moves_as(state, o, &mut moves);
                for &mv in &moves {
                    any = true;
                    let mut child = state.clone();
                    game.apply_as(&mut child, o, mv, root as u8);
                    let v = self.value(&child, w.alpha, w.beta, at.after_move(), true);
                    if self.s.fold(false, ply, mv, v, &mut w) {
                        break 'opponents;
                    }
                }
            }
        }
        self.moves[ply] = moves;
        if !any {
            return self.s.leaf(state, false);
        }
        w.best
    }
}

/// BRS value of `state` for its mover (see the module doc); `value` holds one entry.
pub fn best_reply<G: OutOfTurn + VectorEval>(
    game: &G,
    state: &G::State,
    depth: Option<u32>,
    ctl: &Control,
) -> Option<VectorOutcome<G::Move>> {
    let mut s = Search {
        s: RootPlayerSearch::new(game, ctl, state),
        players: game.num_players(),
        moves: Vec::new(),
    };
    let v = s.value(
        state,
        f64::NEG_INFINITY,
        f64::INFINITY,
        At::root(depth),
        true,
    );
    s.s.outcome(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Game, NotationError, Turn};
    use proptest::prelude::*;

    /// A random game in which every player has moves in every position: the number of moves of
    /// player `p` (0 to 3, so that some players cannot move) and the utilities are hashes of the
    /// path. Terminal at `height` plies.
    struct RandomGame {
        players: u8,
        height: u8,
        salt: u64,
    }

    #[derive(Clone, Debug)]
    struct Node {
        key: u64,
        plies: u8,
        to_move: u8,
    }

    fn mix(mut h: u64) -> u64 {
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }

    impl Game for RandomGame {
        type State = Node;
        type Move = (u8, u8);
        fn name(&self) -> &'static str {
            "random-out-of-turn"
        }
        fn num_players(&self) -> usize {
            self.players as usize
        }
        fn initial_state(&self) -> Node {
            Node {
                key: self.salt,
                plies: 0,
                to_move: 0,
            }
        }
        fn turn(&self, s: &Node) -> Turn {
            if s.plies >= self.height {
                Turn::Terminal
            } else {
                Turn::Player(s.to_move)
            }
        }
        fn legal_moves(&self, s: &Node, moves: &mut Vec<(u8, u8)>) {
            self.moves_as(s, s.to_move, moves);
        }
        fn apply(&self, s: &mut Node, mv: (u8, u8)) {
            let next = (s.to_move + 1) % self.players;
            self.apply_as(s, s.to_move, mv, next);
        }
        fn returns(&self, s: &Node, out: &mut [f64]) {
            for (p, o) in out.iter_mut().enumerate() {
                *o = (mix(s.key ^ ((p as u64 + 1) << 40)) % 6) as f64;
            }
        }
        fn parse_position(&self, _text: &str) -> Result<Node, NotationError> {
            Err(NotationError::new("no notation"))
        }
        fn format_position(&self, s: &Node) -> String {
            format!("{:x}", s.key)
        }
        fn parse_move(&self, _s: &Node, _text: &str) -> Result<(u8, u8), NotationError> {
            Err(NotationError::new("no notation"))
        }
        fn format_move(&self, _s: &Node, mv: (u8, u8)) -> String {
            format!("{}.{}", mv.0, mv.1)
        }
        fn same_state(&self, a: &Node, b: &Node) -> bool {
            a.key == b.key && a.plies == b.plies && a.to_move == b.to_move
        }
    }

    impl OutOfTurn for RandomGame {
        fn moves_as(&self, s: &Node, player: u8, moves: &mut Vec<(u8, u8)>) {
            moves.clear();
            if s.plies >= self.height {
                return;
            }
            let n = mix(s.key ^ ((player as u64 + 7) << 48)) % 4;
            moves.extend((0..n as u8).map(|i| (player, i)));
        }
        fn apply_as(&self, s: &mut Node, player: u8, mv: (u8, u8), next: u8) {
            s.key = mix(s.key ^ ((player as u64) << 8) ^ (mv.1 as u64 + 1));
            s.plies += 1;
            s.to_move = next;
        }
    }

    impl VectorEval for RandomGame {
        fn evaluate_vector(&self, s: &Node, out: &mut [f64]) {
            for (p, o) in out.iter_mut().enumerate() {
                *o = (mix(s.key ^ ((p as u64 + 1) << 32)) % 6) as f64;
            }
        }
    }

    /// The naive reference: BRS by plain recursion, no pruning, a fresh buffer per node.
    /// Returns (value, first best root move, nodes).
    fn naive<G: OutOfTurn + VectorEval>(
        g: &G,
        s: &G::State,
        root: usize,
        depth: Option<u32>,
        max_layer: bool,
        nodes: &mut u64,
    ) -> (f64, Option<G::Move>) {
        *nodes += 1;
        let mut buf = vec![0.0; g.num_players()];
        if g.turn(s) == Turn::Terminal {
            g.returns(s, &mut buf);
            return (buf[root], None);
        }
        if depth == Some(0) {
            g.evaluate_vector(s, &mut buf);
            return (buf[root], None);
        }
        let next = depth.map(|d| d - 1);
        let mut children: Vec<(f64, G::Move)> = Vec::new();
        if max_layer {
            let mut moves = Vec::new();
            g.legal_moves(s, &mut moves);
            for mv in moves {
                let mut c = s.clone();
                g.apply(&mut c, mv);
                children.push((naive(g, &c, root, next, false, nodes).0, mv));
            }
        } else {
            for o in (0..g.num_players()).filter(|&o| o != root) {
                let mut moves = Vec::new();
                g.moves_as(s, o as u8, &mut moves);
                for mv in moves {
                    let mut c = s.clone();
                    g.apply_as(&mut c, o as u8, mv, root as u8);
                    children.push((naive(g, &c, root, next, true, nodes).0, mv));
                }
            }
        }
        if children.is_empty() {
            g.evaluate_vector(s, &mut buf);
            return (buf[root], None);
        }
        let mut best = children[0];
        for &c in &children[1..] {
            if (max_layer && c.0 > best.0) || (!max_layer && c.0 < best.0) {
                best = c;
            }
        }
        (best.0, Some(best.1))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// Alpha-beta BRS equals the naive BRS (value and first best root move) on random
        /// multi-player games, with and without a depth limit, and never visits more nodes.
        #[test]
        fn brs_equals_naive_brs(salt in any::<u64>(), players in 3u8..=4, height in 1u8..7,
                                depth in proptest::option::of(1u32..7)) {
            let g = RandomGame { players, height, salt };
            let s = g.initial_state();
            let o = best_reply(&g, &s, depth, &Control::unlimited()).unwrap();
            let mut nodes = 0;
            let (v, mv) = naive(&g, &s, 0, depth, true, &mut nodes);
            prop_assert_eq!(o.value[0], v);
            prop_assert_eq!(o.best_move, mv);
            prop_assert!(o.nodes <= nodes, "{} > {}", o.nodes, nodes);
        }
    }

    /// Pruning pays on bushier games: fewer nodes than the naive search over many of them.
    #[test]
    fn pruning_cuts_nodes() {
        let (mut pruned, mut plain) = (0, 0);
        for salt in 0..200 {
            let g = RandomGame {
                players: 4,
                height: 6,
                salt,
            };
            let s = g.initial_state();
            pruned += best_reply(&g, &s, None, &Control::unlimited())
                .unwrap()
                .nodes;
            naive(&g, &s, 0, None, true, &mut plain);
        }
        assert!(pruned * 10 < plain * 9, "{pruned} vs {plain}");
    }

    /// By hand, Rolit 4 x 4 for three players from the start (red b2, yellow c2, green c3, blue
    /// b3 neutral). Red must capture: d2 (takes c2), b4 (takes b3) or d4 (takes c3), each giving
    /// red 3 discs. At depth 2 paranoid search lets only yellow answer: after d2 yellow has no
    /// disc and cannot capture (red keeps 3), after b4 or d4 yellow takes one red disc back
    /// (a2 or c4): paranoid value 3 with d2. BRS lets green answer as well: after d2 green
    /// takes c2 back by c1 (or b2 by a1), so every red move ends at 2: value 2, first move d2.
    #[test]
    fn rolit_by_hand_brs_sees_the_second_opponent() {
        use crate::games::rolit::Rolit;
        use crate::search::paranoid::paranoid;
        let g = Rolit::new(3, 4).unwrap();
        let s = g.initial_state();
        let ctl = Control::unlimited();
        let mut moves = Vec::new();
        g.legal_moves(&s, &mut moves);
        let names: Vec<String> = moves.iter().map(|&m| g.format_move(&s, m)).collect();
        assert_eq!(names, ["d2", "b4", "d4"]);
        let p = paranoid(&g, &s, Some(2), &ctl).unwrap();
        assert_eq!(p.value, vec![3.0]);
        assert_eq!(g.format_move(&s, p.best_move.unwrap()), "d2");
        let b = best_reply(&g, &s, Some(2), &ctl).unwrap();
        assert_eq!(b.value, vec![2.0]);
        assert_eq!(g.format_move(&s, b.best_move.unwrap()), "d2");
        let b1 = best_reply(&g, &s, Some(1), &ctl).unwrap();
        assert_eq!(b1.value, vec![3.0]);
        let mut nodes = 0;
        assert_eq!(
            naive(&g, &s, 0, Some(4), true, &mut nodes).0,
            best_reply(&g, &s, Some(4), &ctl).unwrap().value[0]
        );
    }
}
