//! What the depth-first kernels share at a node: the visit tally with its limit check, the
//! per-ply buffers, the leaves of the two-player and the negamax chance kernels, the Star1
//! window arithmetic at a chance node (Ballard 1983), written once for Star1 and for
//! Star2's search phase, and the root player's side of paranoid and best-reply search
//! ([`RootPlayerSearch`]).
//!
//! Contract: a helper only names a step; the kernel that calls it visits the same nodes in the
//! same order and does the same floating-point operations in the same order as if the step
//! were written inline, so the kernels' node counts are theirs (`gamesolver bench quick` and
//! `examples/star_bench.rs` print them).

use std::ops::{ControlFlow, Neg};

use super::Control;
use crate::model::chance::ChanceZeroSum;
use crate::model::{Game, Turn, VectorEval, ZeroSum};

/// What a multi-player search found.
#[derive(Clone, Debug, PartialEq)]
pub struct VectorOutcome<M> {
    /// One value per player (max^n), or a single entry for the root player (paranoid, BRS).
    pub value: Vec<f64>,
    /// Best root move (`None` at a chance or terminal root).
    pub best_move: Option<M>,
    /// Nodes visited, root included.
    pub nodes: u64,
    /// Terminal or depth-cut leaves scored.
    pub leaves: u64,
    /// Some leaf was cut by the depth limit (scored by the evaluator): a deeper search may give
    /// another value. False: the value is the game's own.
    pub cut: bool,
}

/// How often (in nodes) a kernel reports its nodes and asks whether to stop: a power of two.
const CHECK_EVERY: u64 = 0x1000;

/// Nodes and leaves a search visited, and whether a limit or a cancel stopped it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    /// Nodes entered (a node entered twice counts twice).
    pub nodes: u64,
    /// Terminal or depth-cut leaves scored.
    pub leaves: u64,
    /// A stop was requested; the search unwinds and its result is discarded.
    pub stopped: bool,
}

impl Tally {
    /// Counts a node; every [`CHECK_EVERY`] nodes reports them to `ctl` and asks whether to
    /// stop. False when the search must stop (now or earlier).
    #[inline]
    pub fn enter(&mut self, ctl: &Control) -> bool {
        self.nodes += 1;
        if self.nodes & (CHECK_EVERY - 1) == 0 {
            ctl.add_nodes(CHECK_EVERY);
            if ctl.should_stop().is_some() {
                self.stopped = true;
            }
        }
        !self.stopped
    }

    /// Reports the nodes not yet reported by [`Tally::enter`].
    pub fn flush(&self, ctl: &Control) {
        ctl.add_nodes(self.nodes & (CHECK_EVERY - 1));
    }

    /// Ends a search: reports the nodes not yet reported and returns the tally, or `None` when
    /// a stop was requested (the kernel then returns `None` and its value is discarded).
    pub fn finish(&self, ctl: &Control) -> Option<Tally> {
        self.flush(ctl);
        (!self.stopped).then_some(*self)
    }
}

/// A node count that a kernel reports to its control in batches, on its own polling schedule.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NodeCount {
    /// Nodes counted.
    pub nodes: u64,
    /// Nodes already reported.
    reported: u64,
}

impl NodeCount {
    /// Reports the nodes counted since the last flush.
    #[inline]
    pub fn flush(&mut self, ctl: &Control) {
        ctl.add_nodes(self.nodes - self.reported);
        self.reported = self.nodes;
    }

    /// Counts `n` nodes that were reported elsewhere.
    #[inline]
    pub fn add_reported(&mut self, n: u64) {
        self.nodes += n;
        self.reported += n;
    }
}

/// Takes the per-ply buffer of `ply` out of `bufs` (so that a node allocates nothing and can
/// recurse while holding it), adding empty buffers up to `ply` the first time the search gets
/// that deep. The caller puts the buffer back with `bufs[ply] = buf` before returning.
#[inline]
pub(crate) fn take_ply<T>(bufs: &mut Vec<Vec<T>>, ply: usize) -> Vec<T> {
    ensure_ply(bufs, ply);
    std::mem::take(&mut bufs[ply])
}

/// Adds default per-ply buffers to `bufs` until it has one for `ply`.
#[inline]
pub(crate) fn ensure_ply<T: Default>(bufs: &mut Vec<T>, ply: usize) {
    while bufs.len() <= ply {
        bufs.push(T::default());
    }
}

/// The per-ply buffers of a chance kernel: a decision node's moves, a chance node's outcomes,
/// and what else the kernel keeps per ply (`extra`).
pub(crate) struct ChanceFrame<M, X = ()> {
    pub moves: Vec<M>,
    pub outcomes: Vec<(M, f64)>,
    pub extra: X,
}

impl<M, X: Default> Default for ChanceFrame<M, X> {
    fn default() -> Self {
        ChanceFrame {
            moves: Vec::new(),
            outcomes: Vec::new(),
            extra: X::default(),
        }
    }
}

/// The leaf value of `state` in a two-player negamax kernel, from `game.side(state)`'s point of
/// view: the terminal value, or the evaluation at the depth cut (`depth == Some(0)`); `None`
/// when `state` is to be searched. Counts the leaf.
#[inline]
pub(crate) fn negamax_leaf<G: ZeroSum>(
    game: &G,
    state: &G::State,
    depth: Option<u32>,
    tally: &mut Tally,
) -> Option<i32> {
    let v = if game.is_terminal(state) {
        game.terminal_value(state)
    } else if depth == Some(0) {
        game.evaluate(state)
    } else {
        return None;
    };
    tally.leaves += 1;
    Some(v)
}

/// The fail-hard leaf value of `state` in a negamax chance kernel, from `player_side(state)`'s
/// point of view, clamped to `[alpha, beta]`: the terminal score, or the estimate at the depth
/// cut; `None` when `state` is to be searched. Counts the leaf.
#[inline]
pub(crate) fn star_leaf<G: ChanceZeroSum>(
    game: &G,
    state: &G::State,
    turn: Turn,
    depth: Option<u32>,
    (alpha, beta): (f64, f64),
    tally: &mut Tally,
) -> Option<f64> {
    let v = if turn == Turn::Terminal {
        game.terminal_score(state)
    } else if depth == Some(0) {
        game.estimate(state)
    } else {
        return None;
    };
    tally.leaves += 1;
    Some(v.max(alpha).min(beta))
}

/// Folds the value `v` of move `mv` (from the node's side) into a fail-hard negamax decision
/// node at `ply` of Star1 or Star2 (their decision loop): `Some(beta)` on a cut-off, else `v`
/// raises `alpha`. The root move that reached the result is recorded in `best_root`.
#[inline]
pub(crate) fn star_decision<M>(
    v: f64,
    mv: M,
    ply: usize,
    alpha: &mut f64,
    beta: f64,
    best_root: &mut Option<M>,
) -> Option<f64> {
    if v >= beta {
        if ply == 0 {
            *best_root = Some(mv);
        }
        return Some(beta);
    }
    if v > *alpha {
        *alpha = v;
        if ply == 0 {
            *best_root = Some(mv);
        }
    }
    None
}

/// The window `(a, b)` of a node of side `side` as seen by its child of side `child_side`:
/// the same when the side does not change, negated and swapped when it does (negamax).
#[inline]
pub(crate) fn child_window<V: Neg<Output = V>>(side: u8, child_side: u8, (a, b): (V, V)) -> (V, V) {
    if child_side == side {
        (a, b)
    } else {
        (-b, -a)
    }
}

/// Where outcome `i` of a chance node stands before it is searched (Star1's step).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum OutcomeWindow {
    /// The node fails low (returns alpha) whatever the outcome's value.
    FailLow,
    /// The node fails high (returns beta) whatever the outcome's value.
    FailHigh,
    /// Search the outcome in `(ax, bx)` (the node's side); `cur_alpha`, `cur_beta` decide it.
    Search {
        /// At or below this the node fails low.
        cur_alpha: f64,
        /// At or above this the node fails high.
        cur_beta: f64,
        /// The outcome's search window, inside its bounds.
        ax: f64,
        bx: f64,
    },
}

impl OutcomeWindow {
    /// The outcome's `(cur_alpha, cur_beta, ax, bx)` when it is to be searched, else the node's
    /// value: `alpha` when it fails low, `beta` when it fails high.
    #[inline]
    pub fn searched(self, alpha: f64, beta: f64) -> Result<(f64, f64, f64, f64), f64> {
        match self {
            OutcomeWindow::FailLow => Err(alpha),
            OutcomeWindow::FailHigh => Err(beta),
            OutcomeWindow::Search {
                cur_alpha,
                cur_beta,
                ax,
                bx,
            } => Ok((cur_alpha, cur_beta, ax, bx)),
        }
    }
}

/// Star1's window for outcome `i` of probability `p` at a chance node searched in
/// `(alpha, beta)`: `cur_x` is the weighted sum of the outcomes before `i`, `rest` the weighted
/// sums of the lower and upper bounds of the outcomes after `i`, `own` the outcome's own bounds
/// and `bounds` the theoretical L and U, all from the node's side:
///
/// ```text
/// cur_alpha = (alpha - cur_x - rest_upper) / p      ax = max(L, cur_alpha)
/// cur_beta  = (beta  - cur_x - rest_lower) / p      bx = min(U, cur_beta)
/// ```
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) fn outcome_window(
    alpha: f64,
    beta: f64,
    cur_x: f64,
    (rest_lower, rest_upper): (f64, f64),
    p: f64,
    (own_lower, own_upper): (f64, f64),
    (lo, hi): (f64, f64),
) -> OutcomeWindow {
    let cur_alpha = (alpha - cur_x - rest_upper) / p;
    let cur_beta = (beta - cur_x - rest_lower) / p;
    if cur_alpha >= own_upper {
        return OutcomeWindow::FailLow;
    }
    if cur_beta <= own_lower {
        return OutcomeWindow::FailHigh;
    }
    OutcomeWindow::Search {
        cur_alpha,
        cur_beta,
        ax: lo.max(cur_alpha),
        bx: hi.min(cur_beta),
    }
}

/// After outcome `i` came back with `v` (the node's side): `Some(beta)` or `Some(alpha)` when
/// the node fails high or low, `None` to go on with `cur_x + p * v`.
#[inline]
pub(crate) fn outcome_cut(
    v: f64,
    cur_alpha: f64,
    cur_beta: f64,
    alpha: f64,
    beta: f64,
) -> Option<f64> {
    if v >= cur_beta {
        Some(beta)
    } else if v <= cur_alpha {
        Some(alpha)
    } else {
        None
    }
}

/// The player whose interests decide ties and paranoid search: the mover at `state`, or player
/// 0 at a chance or terminal root.
pub fn root_player<G: Game>(game: &G, state: &G::State) -> usize {
    match game.turn(state) {
        Turn::Player(p) => p as usize,
        _ => 0,
    }
}

/// The root player's half of a two-sided search of a multi-player game (paranoid search and
/// best-reply search): leaves scored by the root player's entry of `returns` or
/// `evaluate_vector`, the tally, the depth-cut flag, the best root move, and the fail-soft
/// alpha-beta step of a MAX (root player) or MIN (coalition) node. Both kernels had this inline;
/// the operations and their order are theirs, so their node counts are unchanged.
pub(crate) struct RootPlayerSearch<'a, G: VectorEval> {
    pub game: &'a G,
    pub ctl: &'a Control,
    /// The player whose utility is maximised.
    pub root: usize,
    buf: Vec<f64>,
    pub tally: Tally,
    /// Some leaf was scored by the evaluator at the depth cut.
    pub cut: bool,
    pub best_root: Option<G::Move>,
}

/// Where a node stands: `ply`, its distance from the root (the index of its buffers), and
/// `depth`, the players' plies left before the depth cut (`None`: no cut).
#[derive(Clone, Copy, Debug)]
pub(crate) struct At {
    pub ply: usize,
    pub depth: Option<u32>,
}

impl At {
    /// The root of a search of `depth` players' plies.
    #[inline(always)]
    pub fn root(depth: Option<u32>) -> At {
        At { ply: 0, depth }
    }

    /// The child a player's move leads to: one ply down, one ply of depth used.
    #[inline(always)]
    pub fn after_move(self) -> At {
        At {
            ply: self.ply + 1,
            depth: self.depth.map(|d| d - 1),
        }
    }

    /// The child a chance outcome leads to: one ply down; chance nodes use no depth.
    #[inline(always)]
    pub fn after_chance(self) -> At {
        At {
            ply: self.ply + 1,
            depth: self.depth,
        }
    }
}

/// The fail-soft window of a node being searched and its best value so far.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    pub best: f64,
    pub alpha: f64,
    pub beta: f64,
}

impl Window {
    /// A node's window before its first child: `best` is the worst value for its side.
    pub fn open(maximise: bool, alpha: f64, beta: f64) -> Window {
        let best = if maximise {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        Window { best, alpha, beta }
    }
}

impl<'a, G: VectorEval> RootPlayerSearch<'a, G> {
    /// A search for the utility of the root player of `state` ([`root_player`]).
    pub fn new(game: &'a G, ctl: &'a Control, state: &G::State) -> Self {
        RootPlayerSearch {
            game,
            ctl,
            root: root_player(game, state),
            buf: vec![0.0; game.num_players().max(1)],
            tally: Tally::default(),
            cut: false,
            best_root: None,
        }
    }

    /// Opens a node: counts it and scores it when it is a leaf (terminal, or at the depth cut,
    /// which sets `cut`). `Break(v)` ends the node with value `v` (0 when the search was stopped:
    /// that result is discarded); `Continue(turn)` gives the turn of a node to be searched.
    #[inline]
    pub fn open(&mut self, state: &G::State, depth: Option<u32>) -> ControlFlow<f64, Turn> {
        if !self.tally.enter(self.ctl) {
            return ControlFlow::Break(0.0);
        }
        let turn = self.game.turn(state);
        if turn == Turn::Terminal {
            return ControlFlow::Break(self.leaf(state, true));
        }
        if depth == Some(0) {
            self.cut = true;
            return ControlFlow::Break(self.leaf(state, false));
        }
        ControlFlow::Continue(turn)
    }

    /// The root player's utility at a leaf: the game's `returns` at a terminal state, the
    /// evaluator's estimate otherwise. Counts the leaf.
    #[inline]
    pub fn leaf(&mut self, state: &G::State, terminal: bool) -> f64 {
        self.tally.leaves += 1;
        if terminal {
            self.game.returns(state, &mut self.buf);
        } else {
            self.game.evaluate_vector(state, &mut self.buf);
        }
        self.buf[self.root]
    }

    /// Folds the value `v` of move `mv` into a MAX (`maximise`) or MIN node's window at `ply`
    /// (alpha-beta, fail-soft, cut-off on equality; the first best root move is kept). True
    /// when the remaining children are cut off.
    #[inline]
    pub fn fold(
        &mut self,
        maximise: bool,
        ply: usize,
        mv: G::Move,
        v: f64,
        w: &mut Window,
    ) -> bool {
        if (maximise && v > w.best) || (!maximise && v < w.best) {
            w.best = v;
            if ply == 0 {
                self.best_root = Some(mv);
            }
        }
        if maximise {
            if w.best >= w.beta {
                return true;
            }
            w.alpha = w.alpha.max(w.best);
        } else {
            if w.best <= w.alpha {
                return true;
            }
            w.beta = w.beta.min(w.best);
        }
        false
    }

    /// The result of a search whose root value is `v`, `None` when it was stopped.
    pub fn outcome(self, v: f64) -> Option<VectorOutcome<G::Move>> {
        let t = self.tally.finish(self.ctl)?;
        Some(VectorOutcome {
            value: vec![v],
            best_move: self.best_root,
            nodes: t.nodes,
            leaves: t.leaves,
            cut: self.cut,
        })
    }
}
