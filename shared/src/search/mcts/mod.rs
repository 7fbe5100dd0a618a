//! Monte-Carlo tree search: UCT (L. Kocsis and C. Szepesvári, "Bandit based Monte-Carlo
//! Planning", 2006), with chance nodes, more than two players, MCTS-Solver and root
//! parallelisation.
//!
//! Contract of [`run_trees`] (shorthands [`mcts`] without chance, [`mcts_stochastic`] with it):
//! - Each tree iterates selection by UCB1 with constant `c` (unvisited children first), expansion
//!   of one child, a playout with a [`PlayoutPolicy`] and back-propagation of the reward of the
//!   player whose move led to each node; chance outcomes are drawn by a [`ChanceModel`].
//! - Rewards ([`Rewards`]) are per player in `[0, 1]`: [`Rewards::Outcome`] (a win 1, shared among
//!   tied winners) or [`Rewards::Scaled`] (each player's utility mapped from its bounds; with more
//!   than two players each maximises its own).
//! - With `solver` (two-player zero-sum only) proven results propagate (MCTS-Solver, `tree.rs`); a
//!   proven root stops every tree of the call early ([`Summary::root_proven`]).
//! - `trees` independent trees, tree `t` seeded `tree_seed(seed, t)`, each deterministic for its
//!   seed and budget, so the merged result is the same on any number of threads unless a limit,
//!   cancellation or a solved root stops it.
//! - The result ([`Summary`]) sums root statistics over trees; the move is the most visited child
//!   or the most voted ([`Merge::Vote`], after Soejima, Kishimoto and Watanabe, "Evaluating Root
//!   Parallelization in Go", 2010); a proven root plays a child achieving its value. Limits
//!   (budget, [`Control`], `max_nodes` per tree) are no error: `stopped` says which.

use crate::model::{Game, Stochastic, Turn};
use crate::search::{Control, StopReason};
use parking_lot::Mutex;
use rand::SeedableRng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

mod policy;
mod tree;

pub use policy::{ChanceModel, PlayoutPolicy, RandomPlayout, Rng, TrueChance, UniformChance};
pub use tree::ucb1;
use tree::{Step, TreeSearch};

/// Default exploration constant: sqrt 2, the UCB1 constant of Auer, Cesa-Bianchi and Fischer
/// (2002) for rewards in [0, 1], written C = 2 under the root in Browne et al.'s survey (2012).
pub const DEFAULT_C: f64 = std::f64::consts::SQRT_2;

/// Iterations between two looks at the [`Control`] (stop flag, clock) and node count updates:
/// small enough that a time limit is kept within milliseconds even with slow playouts.
pub const CHECK_EVERY: u64 = 256;

/// Shortest time between two progress reports.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);

/// How terminal returns become per-player rewards in `[0, 1]`.
#[derive(Clone, Debug, PartialEq)]
pub enum Rewards {
    /// Win 1, loss 0; players tied for the best return share 1 (two-player draw: 0.5 each).
    Outcome,
    /// Player `p`'s return mapped linearly from `[lower[p], upper[p]]` onto `[0, 1]` (clamped;
    /// 0.5 when the bounds are equal).
    Scaled {
        /// Smallest return of each player.
        lower: Vec<f64>,
        /// Largest return of each player.
        upper: Vec<f64>,
    },
}

impl Rewards {
    /// Converts `returns` into rewards `out` (same length).
    #[inline]
    pub fn convert(&self, returns: &[f64], out: &mut [f64]) {
        match self {
            Rewards::Outcome => {
                let best = returns.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let tied = returns.iter().filter(|&&r| r == best).count() as f64;
                for (o, &r) in out.iter_mut().zip(returns) {
                    *o = if r == best { 1.0 / tied } else { 0.0 };
                }
            }
            Rewards::Scaled { lower, upper } => {
                for (p, (o, &r)) in out.iter_mut().zip(returns).enumerate() {
                    let (l, u) = (lower[p], upper[p]);
                    *o = if u > l {
                        ((r - l) / (u - l)).clamp(0.0, 1.0)
                    } else {
                        0.5
                    };
                }
            }
        }
    }

    /// The return that reward `x` of player `p` stands for (the inverse of [`Rewards::convert`]
    /// for scaled rewards; the reward itself for outcomes).
    pub fn to_return(&self, p: usize, x: f64) -> f64 {
        match self {
            Rewards::Outcome => x,
            Rewards::Scaled { lower, upper } => lower[p] + x * (upper[p] - lower[p]),
        }
    }
}

/// How root statistics of several trees choose the move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merge {
    /// Most visits summed over trees.
    Sum,
    /// Most trees whose own most visited move it is; ties by summed visits.
    Vote,
}

/// Settings of an MCTS call.
#[derive(Clone, Debug)]
pub struct Config {
    /// Exploration constant `c` of UCB1.
    pub c: f64,
    /// Playouts over all trees (`None`: until a [`Control`] limit or a solved root).
    pub playouts: Option<u64>,
    /// Number of independent trees (root parallelisation).
    pub trees: u32,
    /// Seed of the whole call; tree `t` uses [`tree_seed`]`(seed, t)`.
    pub seed: u64,
    /// MCTS-Solver; only for two-player zero-sum rewards (ignored with other player counts).
    pub solver: bool,
    /// How returns become rewards.
    pub rewards: Rewards,
    /// Arena capacity of one tree, in nodes (see [`node_bytes`]).
    pub max_nodes: usize,
}

impl Config {
    /// Defaults: `c` = [`DEFAULT_C`], one tree, seed 0, solver on, outcome rewards, 2^24 nodes.
    pub fn new(playouts: Option<u64>) -> Self {
        Config {
            c: DEFAULT_C,
            playouts,
            trees: 1,
            seed: 0,
            solver: true,
            rewards: Rewards::Outcome,
            max_nodes: 1 << 24,
        }
    }
}

/// Bytes one arena node takes for game `G`.
pub fn node_bytes<G: Game>() -> usize {
    std::mem::size_of::<tree::Node<G::Move>>()
}

/// The seed of tree `t` (a SplitMix64 step, so that neighbouring trees differ well).
pub fn tree_seed(seed: u64, t: u32) -> u64 {
    let mut z = seed.wrapping_add((t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The playouts of tree `t` when `total` are shared by `trees` trees.
pub fn tree_budget(total: u64, trees: u32, t: u32) -> u64 {
    let trees = trees.max(1) as u64;
    total / trees + u64::from((t as u64) < total % trees)
}

/// Root statistics of one or more trees, merged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary<M> {
    /// Root moves (the game's move order).
    pub moves: Vec<M>,
    /// Visits per root move.
    pub visits: Vec<u64>,
    /// Summed rewards of the player to move at the root, per root move.
    pub rewards: Vec<f64>,
    /// Trees whose own choice the move is.
    pub votes: Vec<u32>,
    /// Player 0's proven reward of each root child (MCTS-Solver).
    pub proven: Vec<Option<f64>>,
    /// Player 0's proven reward of the root.
    pub root_proven: Option<f64>,
    /// Player to move at the root (`None` at a chance or terminal root).
    pub root_player: Option<u8>,
    /// Iterations over all trees.
    pub playouts: u64,
    /// Summed rewards of every player over all iterations.
    pub player_rewards: Vec<f64>,
    /// Trees merged.
    pub trees: u32,
    /// Arena nodes over all trees.
    pub nodes: u64,
    /// Why a tree stopped before its budget (`time`, `nodes`, `cancelled`, `memory`).
    pub stopped: Option<String>,
}

impl<M: Clone + PartialEq> Summary<M> {
    fn empty(root_player: Option<u8>, players: usize) -> Self {
        Summary {
            moves: Vec::new(),
            visits: Vec::new(),
            rewards: Vec::new(),
            votes: Vec::new(),
            proven: Vec::new(),
            root_proven: None,
            root_player,
            playouts: 0,
            player_rewards: vec![0.0; players],
            trees: 0,
            nodes: 0,
            stopped: None,
        }
    }

    /// Adds another summary of the same root: statistics are summed per move.
    pub fn merge(&mut self, other: &Summary<M>) {
        // Summaries of one root list its moves in the game's order: the same place is tried
        // first, and an empty summary takes the moves as they come, so that a merge of m
        // moves costs O(m), not O(m^2).
        let fresh = self.moves.is_empty();
        for (i, mv) in other.moves.iter().enumerate() {
            let same_place = self.moves.get(i).is_some_and(|m| m == mv);
            let found = if same_place {
                Some(i)
            } else if fresh {
                None
            } else {
                self.moves.iter().position(|m| m == mv)
            };
            let at = match found {
                Some(at) => at,
                None => {
                    self.moves.push(mv.clone());
                    self.visits.push(0);
                    self.rewards.push(0.0);
                    self.votes.push(0);
                    self.proven.push(None);
                    self.moves.len() - 1
                }
            };
            self.visits[at] += other.visits[i];
            self.rewards[at] += other.rewards[i];
            self.votes[at] += other.votes[i];
            self.proven[at] = self.proven[at].or(other.proven[i]);
        }
        self.root_proven = self.root_proven.or(other.root_proven);
        self.root_player = self.root_player.or(other.root_player);
        self.playouts += other.playouts;
        if self.player_rewards.len() < other.player_rewards.len() {
            self.player_rewards.resize(other.player_rewards.len(), 0.0);
        }
        for (s, o) in self.player_rewards.iter_mut().zip(&other.player_rewards) {
            *s += o;
        }
        self.trees += other.trees;
        self.nodes += other.nodes;
        if self.stopped.is_none() {
            self.stopped.clone_from(&other.stopped);
        }
    }

    /// Player `p`'s reward of a proven child, from player 0's proven reward.
    fn proven_for(v: f64, p: u8) -> f64 {
        if p == 0 {
            v
        } else {
            1.0 - v
        }
    }

    /// Index of the move to play (see the module doc), `None` without a player to move or
    /// without moves.
    pub fn best(&self, merge: Merge) -> Option<usize> {
        let p = self.root_player?;
        if self.moves.is_empty() {
            return None;
        }
        let key = |i: usize| match merge {
            Merge::Sum => (0, self.visits[i], self.rewards[i]),
            Merge::Vote => (self.votes[i], self.visits[i], self.rewards[i]),
        };
        let argmax = |candidates: &mut dyn Iterator<Item = usize>| {
            let mut best: Option<usize> = None;
            for i in candidates {
                let better = match best {
                    None => true,
                    Some(b) => key(i).partial_cmp(&key(b)) == Some(std::cmp::Ordering::Greater),
                };
                if better {
                    best = Some(i);
                }
            }
            best
        };
        let n = self.moves.len();
        if let Some(v) = self.root_proven {
            if let Some(b) = argmax(&mut (0..n).filter(|&i| self.proven[i] == Some(v))) {
                return Some(b);
            }
        }
        let lost = |i: usize| matches!(self.proven[i], Some(v) if Self::proven_for(v, p) == 0.0);
        argmax(&mut (0..n).filter(|&i| !lost(i))).or_else(|| argmax(&mut (0..n)))
    }

    /// Mean reward of player `p` over all playouts (`None` before the first).
    pub fn mean_reward(&self, p: usize) -> Option<f64> {
        (self.playouts > 0)
            .then(|| self.player_rewards.get(p).copied().unwrap_or(0.0) / self.playouts as f64)
    }

    /// The same summary with moves mapped (e.g. to their notation).
    pub fn map_moves<N>(self, f: impl FnMut(M) -> N) -> Summary<N> {
        Summary {
            moves: self.moves.into_iter().map(f).collect(),
            visits: self.visits,
            rewards: self.rewards,
            votes: self.votes,
            proven: self.proven,
            root_proven: self.root_proven,
            root_player: self.root_player,
            playouts: self.playouts,
            player_rewards: self.player_rewards,
            trees: self.trees,
            nodes: self.nodes,
            stopped: self.stopped,
        }
    }
}

/// Shared progress of the trees of one call.
struct Board {
    names: Vec<String>,
    /// Latest root visits of each tree (by tree slot).
    slots: Mutex<Vec<Vec<u64>>>,
    playouts: AtomicU64,
    /// When the last report went out (`None`: none yet, so the first publication reports).
    last: Mutex<Option<Instant>>,
}

impl Board {
    /// Records tree `slot`'s root visits and `new_playouts`; reports when it is time.
    fn publish(
        &self,
        ctl: &Control,
        slot: usize,
        visits: impl Iterator<Item = u64>,
        new_playouts: u64,
    ) {
        let total = self.playouts.fetch_add(new_playouts, Ordering::Relaxed) + new_playouts;
        let mut slots = self.slots.lock();
        slots[slot].clear();
        slots[slot].extend(visits);
        {
            let mut last = self.last.lock();
            if last.is_some_and(|t| t.elapsed() < PROGRESS_INTERVAL) {
                return;
            }
            *last = Some(Instant::now());
        }
        let mut sum = vec![0u64; self.names.len()];
        for s in slots.iter() {
            for (a, b) in sum.iter_mut().zip(s) {
                *a += b;
            }
        }
        drop(slots);
        let visits: serde_json::Map<String, serde_json::Value> = self
            .names
            .iter()
            .cloned()
            .zip(sum.into_iter().map(serde_json::Value::from))
            .collect();
        ctl.report(serde_json::json!({"playouts": total, "visits": visits}));
    }
}

/// Iterations between two progress updates of one tree.
const PROGRESS_EVERY: u64 = 4096;

/// Runs trees `range` of the `cfg.trees` trees of this call (all of them, or the share of one
/// task) in parallel and merges their root statistics. See the module doc.
pub fn run_trees<G, C, P>(
    game: &G,
    root: &G::State,
    cfg: &Config,
    range: Range<u32>,
    chance: &C,
    playout: &P,
    ctl: &Control,
) -> Summary<G::Move>
where
    G: Game,
    C: ChanceModel<G>,
    P: PlayoutPolicy<G>,
{
    let players = game.num_players().max(1);
    let root_player = match game.turn(root) {
        Turn::Player(p) => Some(p),
        _ => None,
    };
    let mut merged = Summary::empty(root_player, players);
    if game.is_terminal(root) || range.is_empty() {
        merged.trees = range.len() as u32;
        return merged;
    }
    let board = ctl.wants_progress().then(|| {
        let mut moves = Vec::new();
        game.legal_moves(root, &mut moves);
        Board {
            names: moves.iter().map(|&m| game.format_move(root, m)).collect(),
            slots: Mutex::new(vec![Vec::new(); range.len()]),
            playouts: AtomicU64::new(0),
            last: Mutex::new(None),
        }
    });
    let solved = AtomicBool::new(false);
    let start = range.start;
    let one_tree = |t: u32| -> Summary<G::Move> {
        let budget = cfg.playouts.map(|p| tree_budget(p, cfg.trees, t));
        let mut ts = TreeSearch::new(
            game,
            root,
            cfg.c,
            cfg.solver,
            &cfg.rewards,
            chance.clone(),
            playout.clone(),
            Rng::seed_from_u64(tree_seed(cfg.seed, t)),
            cfg.max_nodes,
        );
        let mut stopped = None;
        let mut unreported = 0u64;
        let mut unpublished = 0u64;
        loop {
            if budget.is_some_and(|b| ts.iterations >= b) || solved.load(Ordering::Relaxed) {
                break;
            }
            // Limits are read before a tree's first playout too: with thousands of trees, a
            // check only after each tree's first CHECK_EVERY playouts would run far past them.
            if unreported == 0 {
                if let Some(r) = ctl.should_stop() {
                    stopped = Some(r);
                    break;
                }
            }
            match ts.iterate() {
                Step::Done => {}
                Step::Solved => {
                    solved.store(true, Ordering::Relaxed);
                    break;
                }
                Step::MemoryFull => {
                    stopped = Some(StopReason::Memory);
                    break;
                }
            }
            unreported += 1;
            unpublished += 1;
            if unreported == CHECK_EVERY {
                ctl.add_nodes(unreported);
                unreported = 0;
            }
            if unpublished == PROGRESS_EVERY {
                if let Some(b) = &board {
                    b.publish(
                        ctl,
                        (t - start) as usize,
                        ts.root_children().iter().map(|c| c.visits as u64),
                        unpublished,
                    );
                }
                unpublished = 0;
            }
        }
        ctl.add_nodes(unreported);
        let kids = ts.root_children();
        let mut s = Summary {
            moves: kids
                .iter()
                .map(|c| c.mv.expect("children carry their move"))
                .collect(),
            visits: kids.iter().map(|c| c.visits as u64).collect(),
            rewards: kids.iter().map(|c| c.reward).collect(),
            votes: vec![0; kids.len()],
            proven: kids.iter().map(|c| c.proven()).collect(),
            root_proven: ts.root_proven(),
            root_player,
            playouts: ts.iterations,
            player_rewards: ts.player_rewards.clone(),
            trees: 1,
            nodes: ts.nodes.len() as u64,
            stopped: stopped.map(|r| r.as_str().to_string()),
        };
        if s.playouts > 0 {
            if let Some(b) = s.best(Merge::Sum) {
                s.votes[b] = 1;
            }
        }
        s
    };
    let per_tree: Vec<Summary<G::Move>> = range.into_par_iter().map(one_tree).collect();
    for s in &per_tree {
        merged.merge(s);
    }
    // A job-wide limit that was reached says why the run ended, whichever tree happened to stop
    // first and for what (with thousands of small trees one may fill its memory share first).
    if merged.stopped.is_some() {
        if let Some(r) = ctl.should_stop() {
            merged.stopped = Some(r.as_str().to_string());
        }
    }
    merged
}

/// MCTS on a game without chance probabilities (see [`UniformChance`]), random playouts, all
/// `cfg.trees` trees.
pub fn mcts<G: Game>(game: &G, root: &G::State, cfg: &Config, ctl: &Control) -> Summary<G::Move> {
    run_trees(
        game,
        root,
        cfg,
        0..cfg.trees,
        &UniformChance::default(),
        &RandomPlayout,
        ctl,
    )
}

/// MCTS on a game with chance nodes, outcomes drawn with their probabilities, random playouts,
/// all `cfg.trees` trees.
pub fn mcts_stochastic<G: Stochastic>(
    game: &G,
    root: &G::State,
    cfg: &Config,
    ctl: &Control,
) -> Summary<G::Move> {
    run_trees(
        game,
        root,
        cfg,
        0..cfg.trees,
        &TrueChance::default(),
        &RandomPlayout,
        ctl,
    )
}

#[cfg(test)]
mod tests;
