//! One UCT tree (Kocsis and Szepesvári, see [`super`]) with MCTS-Solver, in an arena.
//!
//! Layout: every node lives in one `Vec<Node>`, the root at 0. A node's children are a contiguous
//! range `first .. first + len`, allocated at once (as unvisited slots holding only their move) the
//! first time the search chooses among them; choosing a slot with `visits == 0` is the expansion,
//! at most one per iteration. Nodes store no game state: an iteration copies the root state into a
//! reused scratch state and applies the moves of its path, so nothing is allocated per node or per
//! iteration beyond the arena's amortised growth.
//!
//! Statistics: `visits` is N(n); `reward` is U(n), the summed success of the player whose move led
//! to n (`mover`). Chance outcomes have no mover and store no reward. The root's per-player sums
//! (`player_rewards`) give the value of a chance root or of a game of more than two players.
//!
//! MCTS-Solver (M. H. M. Winands, Y. Björnsson and J.-T. Saito, "Monte-Carlo Tree Search Solver",
//! 2008), for two-player zero-sum rewards only: `proven` holds player 0's exact reward once known.
//! Terminals are proven by their result; a player node when a child gives its player a proven win
//! or when all its children are proven (the best of them). Selection skips children proven lost for
//! the player to move; a proven node backs up like a terminal. Chance nodes are never proven.

use super::policy::{ChanceModel, PlayoutPolicy, Rng};
use super::Rewards;
use crate::model::{Game, Turn};

/// `to_move` of a node whose children are not allocated yet.
const UNEXPANDED: u8 = u8::MAX;
/// `to_move` of a chance node.
const CHANCE: u8 = u8::MAX - 1;
/// `to_move` of a terminal node.
const TERMINAL: u8 = u8::MAX - 2;
/// `mover` of the root and of chance outcomes.
pub(super) const NO_MOVER: u8 = u8::MAX;

/// One node of the arena (32 bytes for a 2-byte move).
#[derive(Clone, Copy, Debug)]
pub(super) struct Node<M> {
    /// U(n): summed reward of `mover`.
    pub reward: f64,
    /// Player 0's proven reward, or NaN while unknown (MCTS-Solver).
    pub proven: f64,
    /// N(n).
    pub visits: u32,
    /// First child (arena index); meaningful when `len > 0`.
    pub first: u32,
    /// Number of children.
    pub len: u32,
    /// The move that led here (`None` at the root).
    pub mv: Option<M>,
    /// The player whose move led here, or [`NO_MOVER`].
    pub mover: u8,
    /// The player to move here, or [`UNEXPANDED`], [`CHANCE`], [`TERMINAL`].
    pub to_move: u8,
}

impl<M> Node<M> {
    fn new(mv: Option<M>, mover: u8) -> Self {
        Node {
            reward: 0.0,
            proven: f64::NAN,
            visits: 0,
            first: 0,
            len: 0,
            mv,
            mover,
            to_move: UNEXPANDED,
        }
    }
    #[inline]
    pub fn proven(&self) -> Option<f64> {
        (!self.proven.is_nan()).then_some(self.proven)
    }
}

/// UCB1 of a child (Auer, Cesa-Bianchi and Fischer 2002; Kocsis and Szepesvári 2006):
/// `U/N + c * sqrt(ln N_parent / N)`, and `+inf` for an unvisited child, which is therefore
/// tried before any visited one (no division by zero).
#[inline]
pub fn ucb1(reward: f64, visits: u32, parent_visits: u32, c: f64) -> f64 {
    if visits == 0 {
        return f64::INFINITY;
    }
    let n = visits as f64;
    reward / n + c * ((parent_visits as f64).ln() / n).sqrt()
}

/// Why an iteration could not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// One iteration done.
    Done,
    /// The root is proven: nothing left to learn.
    Solved,
    /// The arena is full.
    MemoryFull,
}

/// One tree and its scratch buffers.
pub(super) struct TreeSearch<'a, G: Game, C, P> {
    game: &'a G,
    root: &'a G::State,
    pub nodes: Vec<Node<G::Move>>,
    c: f64,
    solver: bool,
    rewards: &'a Rewards,
    chance: C,
    playout: P,
    rng: Rng,
    max_nodes: usize,
    state: G::State,
    moves: Vec<G::Move>,
    path: Vec<u32>,
    returns: Vec<f64>,
    reward: Vec<f64>,
    /// Summed rewards of every player over all iterations (the root's vector statistics).
    pub player_rewards: Vec<f64>,
    /// Iterations done.
    pub iterations: u64,
}

impl<'a, G: Game, C: ChanceModel<G>, P: PlayoutPolicy<G>> TreeSearch<'a, G, C, P> {
    /// A tree with only the root. `solver` must only be set for two-player zero-sum rewards.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        game: &'a G,
        root: &'a G::State,
        c: f64,
        solver: bool,
        rewards: &'a Rewards,
        chance: C,
        playout: P,
        rng: Rng,
        max_nodes: usize,
    ) -> Self {
        let players = game.num_players().max(1);
        let mut nodes = Vec::with_capacity(1024.min(max_nodes.max(1)));
        nodes.push(Node::new(None, NO_MOVER));
        TreeSearch {
            game,
            root,
            nodes,
            c,
            solver: solver && players == 2,
            rewards,
            chance,
            playout,
            rng,
            max_nodes: max_nodes.max(1),
            state: root.clone(),
            moves: Vec::new(),
            path: Vec::new(),
            returns: vec![0.0; players],
            reward: vec![0.0; players],
            player_rewards: vec![0.0; players],
            iterations: 0,
        }
    }

    /// Whether the root is proven.
    pub fn root_proven(&self) -> Option<f64> {
        self.nodes[0].proven()
    }

    /// The root's children (empty before the first iteration or at a terminal root).
    pub fn root_children(&self) -> &[Node<G::Move>] {
        let r = &self.nodes[0];
        &self.nodes[r.first as usize..(r.first + r.len) as usize]
    }

    /// Allocates the children of `n`, whose state is `self.state`. Returns false when the arena
    /// has no room for them.
    fn allocate_children(&mut self, n: usize) -> bool {
        let turn = self.game.turn(&self.state);
        let (to_move, mover) = match turn {
            Turn::Terminal => {
                self.nodes[n].to_move = TERMINAL;
                return true;
            }
            Turn::Chance => (CHANCE, NO_MOVER),
            Turn::Player(p) => (p, p),
        };
        self.game.legal_moves(&self.state, &mut self.moves);
        if self.moves.is_empty() {
            // A non-terminal state without moves breaks the model (the game battery checks it);
            // the search treats it as terminal rather than failing.
            self.nodes[n].to_move = TERMINAL;
            return true;
        }
        if self.nodes.len() + self.moves.len() > self.max_nodes
            || self.nodes.len() + self.moves.len() > u32::MAX as usize
        {
            return false;
        }
        let needed = self.nodes.len() + self.moves.len();
        if needed > self.nodes.capacity() {
            // Grow by doubling as usual, but never past the budget, so that a full arena holds
            // `max_nodes` nodes rather than up to twice that.
            let target = (2 * self.nodes.capacity()).clamp(needed, self.max_nodes.max(needed));
            self.nodes.reserve_exact(target - self.nodes.len());
        }
        let first = self.nodes.len() as u32;
        for &mv in &self.moves {
            self.nodes.push(Node::new(Some(mv), mover));
        }
        let node = &mut self.nodes[n];
        node.first = first;
        node.len = self.moves.len() as u32;
        node.to_move = to_move;
        true
    }

    /// Selection at player node `n` (player `p` to move): the first unvisited child, else the
    /// child of highest UCB1. With the solver, proven children that cannot be the best are
    /// skipped: those proven lost for `p`, and those proven worse for `p` than a proven sibling
    /// (the node is worth at least its best proven child). Ties go to the first child in move
    /// order.
    pub fn select(&self, n: usize, p: u8) -> usize {
        let node = &self.nodes[n];
        let (first, len) = (node.first as usize, node.len as usize);
        let kids = &self.nodes[first..first + len];
        // Player p's reward of a proven child (`proven` is player 0's).
        let for_p = |v: f64| if p == 0 { v } else { 1.0 - v };
        let mut floor = 0.0f64;
        if self.solver {
            for ch in kids {
                if ch.visits == 0 {
                    return first + kids.iter().position(|c| c.visits == 0).unwrap_or(0);
                }
                if let Some(v) = ch.proven() {
                    floor = floor.max(for_p(v));
                }
            }
        }
        // UCB1 with the parent's part hoisted: c * sqrt(ln N_p / N) = (c * sqrt(ln N_p)) / sqrt(N).
        let bonus = self.c * (node.visits as f64).ln().sqrt();
        let mut best = f64::NEG_INFINITY;
        let mut pick = first;
        for (i, ch) in kids.iter().enumerate() {
            if ch.visits == 0 {
                return first + i;
            }
            if let Some(v) = ch.proven() {
                let v = for_p(v);
                if v == 0.0 || v < floor {
                    continue;
                }
            }
            let n = ch.visits as f64;
            let score = ch.reward / n + bonus / n.sqrt();
            if score > best {
                best = score;
                pick = first + i;
            }
        }
        pick
    }

    /// Back-propagation: every node on `path` gets one visit, and its reward grows
    /// by the success of the player whose move led to it.
    pub fn backup(&mut self, path: &[u32], reward: &[f64]) {
        for &i in path {
            let node = &mut self.nodes[i as usize];
            node.visits += 1;
            if node.mover != NO_MOVER {
                node.reward += reward[node.mover as usize];
            }
        }
        for (sum, r) in self.player_rewards.iter_mut().zip(reward) {
            *sum += r;
        }
    }

    /// Tries to prove player node `n` from its children; true when it is proven.
    fn try_prove(&mut self, n: usize) -> bool {
        let node = &self.nodes[n];
        let p = node.to_move;
        if p >= 2 || node.len == 0 {
            return false;
        }
        let (first, len) = (node.first as usize, node.len as usize);
        let mut all = true;
        let mut best: Option<f64> = None;
        for ch in &self.nodes[first..first + len] {
            match ch.proven() {
                None => all = false,
                Some(v) => {
                    let better = match best {
                        None => true,
                        Some(b) => (p == 0 && v > b) || (p == 1 && v < b),
                    };
                    if better {
                        best = Some(v);
                    }
                }
            }
        }
        let won = matches!(best, Some(v) if (p == 0 && v == 1.0) || (p == 1 && v == 0.0));
        match best {
            Some(v) if won || all => {
                self.nodes[n].proven = v;
                true
            }
            _ => false,
        }
    }

    /// After a back-up whose last node is proven: proves ancestors bottom-up while they follow.
    fn propagate_proofs(&mut self) {
        let path = std::mem::take(&mut self.path);
        for k in (0..path.len().saturating_sub(1)).rev() {
            if self.nodes[path[k + 1] as usize].proven().is_none() {
                break;
            }
            let parent = path[k] as usize;
            if self.nodes[parent].proven().is_some() {
                continue;
            }
            if !self.try_prove(parent) {
                break;
            }
        }
        self.path = path;
    }

    /// Fills `self.reward` from the terminal scratch state.
    fn terminal_reward(&mut self) {
        self.game.returns(&self.state, &mut self.returns);
        self.rewards.convert(&self.returns, &mut self.reward);
    }

    /// Plays from the scratch state to the end and fills `self.reward`.
    fn simulate(&mut self) {
        loop {
            let mv = match self.game.turn(&self.state) {
                Turn::Terminal => break,
                Turn::Chance => self.chance.sample(self.game, &self.state, &mut self.rng),
                Turn::Player(_) => {
                    self.game.legal_moves(&self.state, &mut self.moves);
                    if self.moves.is_empty() {
                        break;
                    }
                    self.playout
                        .choose(self.game, &self.state, &self.moves, &mut self.rng)
                }
            };
            self.game.apply(&mut self.state, mv);
        }
        self.terminal_reward();
    }

    /// One iteration: selection, expansion, simulation, back-propagation.
    pub fn iterate(&mut self) -> Step {
        if self.nodes[0].proven().is_some() {
            return Step::Solved;
        }
        self.state.clone_from(self.root);
        self.path.clear();
        self.path.push(0);
        let mut n = 0usize;
        loop {
            let node = self.nodes[n];
            if n != 0 {
                if let Some(v) = node.proven() {
                    // A proven node (terminal or solved) backs up its known result.
                    self.reward[0] = v;
                    self.reward[1] = 1.0 - v;
                    break;
                }
            }
            if node.to_move == UNEXPANDED && !self.allocate_children(n) {
                return Step::MemoryFull;
            }
            let node = self.nodes[n];
            if node.to_move == TERMINAL {
                // A terminal reached again (without the solver, which would have proven it),
                // or a terminal root: back up its known result.
                self.terminal_reward();
                break;
            }
            let child = if node.to_move == CHANCE {
                let mv = self.chance.sample(self.game, &self.state, &mut self.rng);
                let (first, len) = (node.first as usize, node.len as usize);
                let at = self.nodes[first..first + len]
                    .iter()
                    .position(|c| c.mv == Some(mv));
                debug_assert!(
                    at.is_some(),
                    "chance outcome {mv:?} is not among the legal moves"
                );
                first + at.unwrap_or(0)
            } else {
                self.select(n, node.to_move)
            };
            let mv = self.nodes[child].mv.expect("children carry their move");
            self.game.apply(&mut self.state, mv);
            self.path.push(child as u32);
            if self.nodes[child].visits == 0 {
                // Expansion: the new node enters the tree; simulate from it, or take its result.
                if self.game.is_terminal(&self.state) {
                    self.nodes[child].to_move = TERMINAL;
                    self.terminal_reward();
                    if self.solver {
                        self.nodes[child].proven = self.reward[0];
                    }
                } else {
                    self.simulate();
                }
                break;
            }
            n = child;
        }
        let path = std::mem::take(&mut self.path);
        let reward = std::mem::take(&mut self.reward);
        self.backup(&path, &reward);
        self.path = path;
        self.reward = reward;
        self.iterations += 1;
        if self.solver {
            self.propagate_proofs();
            if self.nodes[0].proven().is_some() {
                return Step::Solved;
            }
        }
        Step::Done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::mnk::Mnk;
    use crate::search::mcts::policy::{RandomPlayout, UniformChance};
    use rand::SeedableRng;

    fn search<'a>(
        g: &'a Mnk,
        root: &'a <Mnk as Game>::State,
        rewards: &'a Rewards,
        c: f64,
    ) -> TreeSearch<'a, Mnk, UniformChance<u16>, RandomPlayout> {
        TreeSearch::new(
            g,
            root,
            c,
            true,
            rewards,
            UniformChance::default(),
            RandomPlayout,
            Rng::seed_from_u64(1),
            1 << 20,
        )
    }

    /// Puts children with the given (wins, visits) under a root with `parent` visits.
    fn with_children(
        t: &mut TreeSearch<'_, Mnk, UniformChance<u16>, RandomPlayout>,
        parent: u32,
        stats: &[(f64, u32)],
    ) {
        t.nodes.truncate(1);
        t.nodes[0].visits = parent;
        t.nodes[0].first = 1;
        t.nodes[0].len = stats.len() as u32;
        t.nodes[0].to_move = 0;
        for (i, &(u, n)) in stats.iter().enumerate() {
            let mut node = Node::new(Some(i as u16), 0);
            node.reward = u;
            node.visits = n;
            t.nodes.push(node);
        }
    }

    /// Three children compared: 50 parent visits, children 21/30, 7/12, 3/8.
    /// The survey's C = 2 under the root is c = sqrt 2 here: 1.211, 1.391, 1.364, the second is
    /// selected; c = 0.5 gives 0.881, 0.869, 0.725 and the first is selected.
    #[test]
    fn course_ucb1_example() {
        let stats = [(21.0, 30), (7.0, 12), (3.0, 8)];
        let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
        let sqrt2 = std::f64::consts::SQRT_2;
        let got: Vec<f64> = stats
            .iter()
            .map(|&(u, n)| round3(ucb1(u, n, 50, sqrt2)))
            .collect();
        assert_eq!(got, [1.211, 1.391, 1.364]);
        let got: Vec<f64> = stats
            .iter()
            .map(|&(u, n)| round3(ucb1(u, n, 50, 0.5)))
            .collect();
        assert_eq!(got, [0.881, 0.869, 0.725]);
        let g = Mnk::tictactoe();
        let root = g.initial_state();
        let rewards = Rewards::Outcome;
        let mut t = search(&g, &root, &rewards, sqrt2);
        with_children(&mut t, 50, &stats);
        assert_eq!(
            t.select(0, 0),
            2,
            "c = sqrt 2 selects the second child (arena index 2)"
        );
        t.c = 0.5;
        assert_eq!(t.select(0, 0), 1, "c = 0.5 selects the first child");
        // An unvisited child goes first, whatever the others' values.
        with_children(&mut t, 50, &[(30.0, 30), (0.0, 0), (7.0, 12)]);
        assert_eq!(t.select(0, 0), 2);
    }

    /// Selection equals the argmax of the reference [`ucb1`] on random statistics.
    #[test]
    fn selection_is_the_argmax_of_ucb1() {
        use rand::Rng as _;
        let g = Mnk::tictactoe();
        let root = g.initial_state();
        let rewards = Rewards::Outcome;
        let mut t = search(&g, &root, &rewards, 1.0);
        let mut rng = Rng::seed_from_u64(5);
        for _ in 0..2000 {
            let stats: Vec<(f64, u32)> = (0..rng.gen_range(1..9))
                .map(|_| {
                    let n = rng.gen_range(1..200u32);
                    (rng.gen_range(0..=2 * n) as f64 / 2.0, n)
                })
                .collect();
            let parent = stats.iter().map(|s| s.1).sum::<u32>() + rng.gen_range(0..3);
            t.c = rng.gen_range(0.0..3.0);
            with_children(&mut t, parent, &stats);
            let scores: Vec<f64> = stats
                .iter()
                .map(|&(u, n)| ucb1(u, n, parent, t.c))
                .collect();
            let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let picked = t.select(0, 0) - 1;
            assert!(
                (scores[picked] - top).abs() < 1e-12,
                "{stats:?} c={}: picked {picked}",
                t.c
            );
        }
    }

    /// Root 100 visits, A 54/90, B 4/10: c = 1 selects B, c = 0.2 selects A;
    /// the move played is the most visited, A.
    #[test]
    fn course_exercise_exploration_constant() {
        let g = Mnk::tictactoe();
        let root = g.initial_state();
        let rewards = Rewards::Outcome;
        let mut t = search(&g, &root, &rewards, 1.0);
        with_children(&mut t, 100, &[(54.0, 90), (4.0, 10)]);
        assert_eq!(t.select(0, 0), 2);
        t.c = 0.2;
        assert_eq!(t.select(0, 0), 1);
    }

    /// White moves at the root; n1 (White's move), n2 (Black's), n3 (White's); Black
    /// wins the playout: every node gets a visit, only n2 a win. The exercise's counts a: 12/8,
    /// b: 7/3, c: 2/1 become a: 13/8, b: 8/4, c: 3/1. A draw adds 0.5 to every child.
    #[test]
    fn course_backpropagation_example() {
        let g = Mnk::tictactoe();
        let root = g.initial_state();
        let rewards = Rewards::Outcome;
        let mut t = search(&g, &root, &rewards, 1.0);
        t.nodes.truncate(1);
        let (white, black) = (0u8, 1u8);
        for (mover, u, n) in [(white, 8.0, 12), (black, 3.0, 7), (white, 1.0, 2)] {
            let mut node = Node::new(Some(0), mover);
            node.reward = u;
            node.visits = n;
            t.nodes.push(node);
        }
        let mut black_wins = [0.0; 2];
        Rewards::Outcome.convert(&[-1.0, 1.0], &mut black_wins);
        assert_eq!(black_wins, [0.0, 1.0]);
        t.backup(&[0, 1, 2, 3], &black_wins);
        let got: Vec<(u32, f64)> = t.nodes.iter().map(|n| (n.visits, n.reward)).collect();
        assert_eq!(got, [(1, 0.0), (13, 8.0), (8, 4.0), (3, 1.0)]);
        let mut draw = [0.0; 2];
        Rewards::Outcome.convert(&[0.0, 0.0], &mut draw);
        t.backup(&[0, 1, 2, 3], &draw);
        let got: Vec<(u32, f64)> = t.nodes.iter().map(|n| (n.visits, n.reward)).collect();
        assert_eq!(got, [(2, 0.0), (14, 8.5), (9, 4.5), (4, 1.5)]);
        assert_eq!(t.player_rewards, [0.5, 1.5]);
    }

    /// Tic-tac-toe with X to play 3 after X 1,2 / O 4,5: the solver proves the immediate win and
    /// stops; each child is expanded once before any is revisited.
    #[test]
    fn solver_proves_an_immediate_win_and_expands_one_child_per_iteration() {
        let g = Mnk::tictactoe();
        let root = g.parse_position("1425").unwrap();
        let rewards = Rewards::Outcome;
        let mut t = search(&g, &root, &rewards, std::f64::consts::SQRT_2);
        let mut steps = 0;
        while t.iterate() == Step::Done {
            steps += 1;
            assert_eq!(
                t.nodes.iter().filter(|n| n.visits > 0).count(),
                steps + 1,
                "one new node per iteration"
            );
            assert!(steps < 1000);
        }
        // Moves 3, 6, 7, 8, 9 in that order: the winning 3 is the first child, proven at once.
        assert_eq!(t.root_proven(), Some(1.0));
        assert_eq!(t.iterations, 1);
    }
}
