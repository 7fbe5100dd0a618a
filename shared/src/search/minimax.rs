//! Plain minimax (course 2.2), in negamax form: the reference every two-player kernel is
//! checked against.
//!
//! Contract: [`minimax`] returns the exact value of `state` from the point of view of
//! `game.side(state)` when `depth` is `None`; with `Some(d)` it cuts at depth `d` (plies counted
//! from `state`, depth 0 = `state` itself) and uses `game.evaluate` there. No pruning, no table,
//! no move ordering: it visits every node of the (cut) tree, in the game's move order, and the
//! first of several equally good moves is the one reported. A stop request ([`Control`]) makes it
//! return `None`.

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

struct Search<'a, G: ZeroSum> {
    game: &'a G,
    ctl: &'a Control,
    moves: Vec<Vec<G::Move>>,
    nodes: u64,
    leaves: u64,
    stopped: bool,
}

impl<G: ZeroSum> Search<'_, G> {
    /// Returns (value, principal variation reversed).
    fn value(&mut self, state: &G::State, ply: usize, depth: Option<u32>) -> (i32, Vec<G::Move>) {
        self.nodes += 1;
        if self.nodes & 0xFFF == 0 {
            self.ctl.add_nodes(0x1000);
            if self.ctl.should_stop().is_some() {
                self.stopped = true;
            }
        }
        if self.stopped {
            return (0, Vec::new());
        }
        if self.game.is_terminal(state) {
            self.leaves += 1;
            return (self.game.terminal_value(state), Vec::new());
        }
        if depth == Some(0) {
            self.leaves += 1;
            return (self.game.evaluate(state), Vec::new());
        }
        if self.moves.len() <= ply {
            self.moves.push(Vec::new());
        }
        let mut moves = std::mem::take(&mut self.moves[ply]);
        self.game.legal_moves(state, &mut moves);
        let side = self.game.side(state);
        let mut best = i32::MIN;
        let mut best_line = Vec::new();
        for &mv in &moves {
            let mut child = state.clone();
            self.game.apply(&mut child, mv);
            let (v, mut line) = self.value(&child, ply + 1, depth.map(|d| d - 1));
            let v = to_parent(side, self.game.side(&child), v);
            if v > best {
                best = v;
                line.push(mv);
                best_line = line;
            }
        }
        self.moves[ply] = moves;
        (best, best_line)
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
        game,
        ctl,
        moves: Vec::new(),
        nodes: 0,
        leaves: 0,
        stopped: false,
    };
    let (value, mut pv) = s.value(state, 0, depth);
    ctl.add_nodes(s.nodes & 0xFFF);
    if s.stopped {
        return None;
    }
    pv.reverse();
    Some(Outcome {
        value,
        best_move: pv.first().copied(),
        pv,
        nodes: s.nodes,
        leaves: s.leaves,
    })
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
        // Course 2.2: X O X / . O . / . . . with X to move: only the bottom middle (8) holds.
        let s = g.parse_position("1235").unwrap();
        let o = minimax(&g, &s, None, &Control::unlimited()).unwrap();
        assert_eq!(o.value, 0);
        assert_eq!(g.format_move(&s, o.best_move.unwrap()), "8");
    }
}
