//! The alpha-beta engine: negamax, fail-soft, with principal-variation search, a shared
//! transposition table, move ordering by table move, killers and history, iterative deepening,
//! quiescence and extensions, and Lazy SMP threads. Generic over `ZeroSum + Hashed + Tactics`;
//! it never names a game (game knowledge comes through [`Tactics`] hooks).
//!
//! Contract: values are from `game.side(root)`'s view; for a window `alpha < beta`, [`search`]
//! returns `v <= alpha` (the true value is at most `v`), `v >= beta` (at least `v`), or the true
//! value. "True value" is the exact game value when `depth` is `None`; with `Some(d)` the depth-`d`
//! minimax value with `game.evaluate` at the cut, extended by quiescence over noisy moves and one
//! ply per forcing move. Without those it equals [`super::minimax`]'s at the same depth (entries
//! are reused only at equal draft). Depth-limited search returns the deepest *finished* iteration;
//! a stopped exact search returns `None`. Exact search's hints ([`ZeroSum::immediate_value`],
//! [`Tactics::exact_moves`]) may prune moves and narrow the window, never change the value.
//!
//! Exact search may deepen over a horizon first ([`Tactics::exact_deepening`], up to
//! [`MAX_DEEPENING`]), taking turns with plain search under doubling node budgets; why its results
//! may be stored as exact entries: docs/kernels.md, "Alpha-beta engine". The table may be reused
//! across calls on one game and mode: its entries are sound bounds whatever window wrote them.
//! Threads: Lazy SMP; helpers perturb their move order; exact mode returns the first thread to
//! finish, depth-limited mode the main thread's result.

pub mod table;

pub use table::{Bound, Entry, Table, DRAFT_EXACT, NO_MOVE};

use super::node::NodeCount;
use super::{Control, StopReason};
use crate::model::{to_parent, Hashed, Tactics, ZeroSum};
use std::sync::atomic::{AtomicBool, Ordering};

/// "Infinity" for windows; negating it never overflows.
pub const INF: i32 = i32::MAX - 1;
/// Nodes between two polls of the limits and the stop flag (a power of two).
const POLL_INTERVAL: u64 = 1024;
/// Quiescence plies past the depth cut (bounds a search of noisy moves that never ends).
const QUIESCENCE_PLIES: u32 = 6;
/// Forcing moves are extended only up to this many times the iteration's depth from the root
/// (ply), so a line of forcing moves cannot grow the search without bound.
const EXTENSION_HORIZON: usize = 2;
/// Default table budget in MB when the job gives no `memory_mb` (Pons' solver uses 64 MB too).
pub const DEFAULT_TABLE_MB: u64 = 64;
/// Smallest table, in bytes.
const MIN_TABLE_BYTES: usize = 1 << 12;
/// Deepest horizon of deepening exact search (drafts `2 d + kind` stay below [`DRAFT_EXACT`]).
pub const MAX_DEEPENING: i32 = 120;
/// Nodes of the first turn of deepening and of plain search in deepening exact search.
const DEEPENING_BUDGET: u64 = 1 << 12;
/// Longest principal variation read back from the table.
const MAX_PV: usize = 256;

/// Search settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Depth limit in plies; `None` = exact.
    pub depth: Option<u32>,
    /// Search threads (Lazy SMP); 1 = single-threaded.
    pub threads: usize,
    /// Quiescence search over noisy moves at the depth cut.
    pub quiescence: bool,
    /// One-ply extensions of forcing moves.
    pub extensions: bool,
    /// Killer moves (two per ply) after the table move (depth-limited search only: in exact
    /// search they fight the game's own ordering from `exact_moves`, which on Connect Four cost
    /// 14 times the nodes on a Pons L2_R2 position).
    pub killers: bool,
    /// History heuristic for the remaining moves (depth-limited search only: in exact search the
    /// game's own ordering from `exact_moves` is kept).
    pub history: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            depth: None,
            threads: 1,
            quiescence: true,
            extensions: true,
            killers: true,
            history: true,
        }
    }
}

/// What the engine found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome<M> {
    /// Fail-soft value (see the module doc), from the root side's point of view.
    pub value: i32,
    /// The best root move of the finished search (`None` at a terminal root, or when the game's
    /// hints decided the root without searching a move).
    pub best_move: Option<M>,
    /// Principal variation from the table, starting with `best_move`.
    pub pv: Vec<M>,
    /// Nodes searched by all threads (quiescence nodes included).
    pub nodes: u64,
    /// Deepest finished iteration (depth-limited search); 0 for exact search.
    pub depth: u32,
    /// Why a depth-limited search stopped before its depth limit, if it did.
    pub stopped: Option<StopReason>,
}

impl<M> Outcome<M> {
    /// The outcome at a terminal root: its value, no move, one node.
    pub fn terminal<G: ZeroSum<Move = M>>(game: &G, root: &G::State) -> Self {
        Outcome {
            value: game.terminal_value(root),
            best_move: None,
            pv: Vec::new(),
            nodes: 1,
            depth: 0,
            stopped: None,
        }
    }
}

/// Table size for a search from `root`: the budget (`memory_mb`, or [`DEFAULT_TABLE_MB`]), cut
/// down to the game's hint of what the search needs.
pub fn table_bytes<G: Tactics>(game: &G, root: &G::State, memory_mb: Option<u64>) -> usize {
    let budget = memory_mb
        .unwrap_or(DEFAULT_TABLE_MB)
        .saturating_mul(1 << 20);
    let hint = game
        .table_entries_hint(root)
        .map(|n| n.saturating_mul(16))
        .unwrap_or(u64::MAX);
    (budget.min(hint) as usize).max(MIN_TABLE_BYTES)
}

/// Tests: an unlimited full-window search of `root` with `cfg` and a fresh 64 KiB table (the
/// set-up every evaluator's differential test repeated).
#[cfg(test)]
pub(crate) fn search_full<G: ZeroSum + Hashed + Tactics>(
    game: &G,
    root: &G::State,
    cfg: &Config,
) -> Outcome<G::Move> {
    let table = Table::with_bytes(1 << 16).expect("a 64 KiB table");
    search(game, root, -INF, INF, cfg, &table, &Control::unlimited())
        .expect("an unlimited search ends")
}

/// Tests: the default configuration cut at `depth` plies.
#[cfg(test)]
pub(crate) fn at_depth(depth: u32) -> Config {
    Config {
        depth: Some(depth),
        ..Config::default()
    }
}

/// Searches `root` with the window `(alpha, beta)` (see the module doc). `None` only when an
/// exact search was stopped.
pub fn search<G: ZeroSum + Hashed + Tactics>(
    game: &G,
    root: &G::State,
    alpha: i32,
    beta: i32,
    cfg: &Config,
    table: &Table,
    ctl: &Control,
) -> Option<Outcome<G::Move>> {
    assert!(alpha < beta, "the engine needs alpha < beta");
    let (alpha, beta) = (alpha.max(-INF), beta.min(INF));
    table.new_generation();
    if game.is_terminal(root) {
        return Some(Outcome::terminal(game, root));
    }
    let stop = AtomicBool::new(false);
    let threads = cfg.threads.max(1);
    let run = |helper: u64| {
        let mut w = Worker::new(game, table, cfg, ctl, &stop, helper);
        let r = w.go(root, alpha, beta);
        w.count.flush(ctl);
        (r, w.count.nodes)
    };
    let (found, nodes) = if threads == 1 {
        run(0)
    } else {
        std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads as u64)
                .map(|i| {
                    let run = &run;
                    let stop = &stop;
                    scope.spawn(move || {
                        let r = run(i);
                        if r.0.is_some() && cfg.depth.is_none() {
                            stop.store(true, Ordering::Relaxed);
                        }
                        r
                    })
                })
                .collect();
            let main = run(0);
            stop.store(true, Ordering::Relaxed);
            let mut nodes = main.1;
            let mut found = main.0;
            for h in helpers {
                let (r, n) = h.join().expect("a search thread panicked");
                nodes += n;
                if found.is_none() {
                    found = r;
                }
            }
            (found, nodes)
        })
    };
    let (value, best_move, depth, stopped) = found?;
    let pv = principal_variation(game, root, table, cfg.depth.is_none(), best_move);
    Some(Outcome {
        value,
        best_move,
        pv,
        nodes,
        depth,
        stopped,
    })
}

/// One search thread's state: per-ply move buffers (so nodes allocate nothing), killers,
/// history, node count.
struct Worker<'a, G: ZeroSum + Hashed + Tactics> {
    game: &'a G,
    table: &'a Table,
    cfg: &'a Config,
    ctl: &'a Control,
    stop: &'a AtomicBool,
    /// 0 for the main thread; helpers perturb their move order.
    helper: u64,
    moves: Vec<Vec<G::Move>>,
    /// Per ply: the generation index of each move in `moves` (what the table stores).
    order: Vec<Vec<u8>>,
    killers: Vec<[Option<G::Move>; 2]>,
    history: Vec<u32>,
    count: NodeCount,
    stopped: bool,
    interruptible: bool,
    root_best: Option<G::Move>,
    /// Plies from the root below which forcing moves are extended (this iteration).
    extension_horizon: usize,
    /// Deepening exact search: the side whose positions count as their lower bound at the
    /// horizon (the other side's count as their upper bound); `None` in plain exact search.
    low_side: Option<u8>,
    /// Deepening exact search: the node count at which this turn of the search gives up
    /// (`u64::MAX` outside deepening; `go` resets it).
    local_limit: u64,
    /// The search stopped at `local_limit` (not at the job's limits).
    aborted: bool,
}

type Found<M> = Option<(i32, Option<M>, u32, Option<StopReason>)>;

impl<'a, G: ZeroSum + Hashed + Tactics> Worker<'a, G> {
    fn new(
        game: &'a G,
        table: &'a Table,
        cfg: &'a Config,
        ctl: &'a Control,
        stop: &'a AtomicBool,
        helper: u64,
    ) -> Self {
        Worker {
            game,
            table,
            cfg,
            ctl,
            stop,
            helper,
            moves: Vec::new(),
            order: Vec::new(),
            killers: Vec::new(),
            history: vec![0; game.history_slots()],
            count: NodeCount::default(),
            stopped: false,
            interruptible: true,
            root_best: None,
            extension_horizon: 0,
            low_side: None,
            local_limit: u64::MAX,
            aborted: false,
        }
    }

    fn go(&mut self, root: &G::State, alpha: i32, beta: i32) -> Found<G::Move> {
        match self.cfg.depth {
            None if self.game.exact_deepening() => {
                let found = self.deepen(root, alpha, beta);
                self.local_limit = u64::MAX;
                found
            }
            None => {
                let v = self.node::<true>(root, alpha, beta, 0, 0);
                if self.stopped {
                    None
                } else {
                    Some((v, self.root_best, 0, None))
                }
            }
            Some(max_depth) => {
                let mut last = None;
                let mut stopped = None;
                for d in 1..=max_depth.max(1) {
                    // The first iteration always finishes, so there is always a move.
                    self.interruptible = d > 1;
                    self.root_best = None;
                    self.extension_horizon = EXTENSION_HORIZON * d as usize;
                    let v = self.node::<false>(root, alpha, beta, d as i32, 0);
                    if self.stopped {
                        stopped = Some(self.ctl.should_stop().unwrap_or(StopReason::Cancelled));
                        break;
                    }
                    last = Some((v, self.root_best, d));
                    if max_depth == 0 {
                        break;
                    }
                }
                last.map(|(v, m, d)| (v, m, d, stopped))
            }
        }
    }

    /// Deepening exact search (see the module doc): lower and upper bounds from horizons
    /// 1, 2, ... until they decide the window, taking turns with plain exact search under a
    /// node budget that doubles each turn (a drawn line that only a repetition ends has no short
    /// proof, and deepening would pay for every horizon up to its length). Past
    /// [`MAX_DEEPENING`] plain exact search runs without a budget.
    fn deepen(&mut self, root: &G::State, alpha: i32, beta: i32) -> Found<G::Move> {
        let game = self.game;
        let root_side = game.side(root);
        let (lo0, hi0) = game.value_bounds(root);
        let (mut lo, mut hi) = (lo0.clamp(-INF, INF), hi0.clamp(-INF, INF));
        // A move proved to reach `lo` (found by a pessimistic search that claimed it).
        let mut best = None;
        let mut d = 1;
        let mut budget = DEEPENING_BUDGET;
        loop {
            // Deepening, until the bounds decide or this turn's budget is spent (an iteration
            // cut short is run again next turn, with what it stored in the table).
            self.local_limit = self.count.nodes.saturating_add(budget);
            while d <= MAX_DEEPENING {
                if hi <= alpha {
                    return Some((hi, best, 0, None));
                }
                if best.is_some() && (lo >= beta || lo >= hi) {
                    return Some((lo, best, 0, None));
                }
                // Lower bound: the horizon takes the root side's lower bounds. The window
                // starts just below `lo`, so that a result reaching `lo` proves its move.
                let b = beta.min(hi);
                let a = alpha.max(lo - 1).min(b - 1);
                let Some((v, mv)) = self.bounded(root, a, b, d, root_side) else {
                    break;
                };
                if v > a {
                    lo = lo.max(v);
                    best = mv.or(best);
                }
                if lo < beta && lo < hi && hi > alpha {
                    // Upper bound: the horizon takes the root side's upper bounds.
                    let (a, b) = (alpha.max(lo), beta.min(hi));
                    let Some((v, _)) = self.bounded(root, a, b, d, root_side ^ 1) else {
                        break;
                    };
                    if v < b {
                        hi = hi.min(v);
                    }
                }
                d += 1;
            }
            if self.stopped {
                return None;
            }
            // Plain exact search under the same budget (unlimited past the deepest horizon).
            self.local_limit = if d > MAX_DEEPENING {
                u64::MAX
            } else {
                self.count.nodes.saturating_add(budget)
            };
            self.root_best = None;
            let v = self.node::<true>(root, alpha, beta, 0, 0);
            if !self.stopped {
                return Some((v, self.root_best, 0, None));
            }
            if !self.take_abort() {
                return None;
            }
            budget = budget.saturating_mul(2);
        }
    }

    /// One deepening search at horizon `d` with `low_side`'s positions taking their lower
    /// bounds there: its value and root move, or `None` when stopped (`self.stopped`; also
    /// when the turn's budget ran out, then with `self.stopped` cleared).
    fn bounded(
        &mut self,
        root: &G::State,
        alpha: i32,
        beta: i32,
        d: i32,
        low_side: u8,
    ) -> Option<(i32, Option<G::Move>)> {
        self.low_side = Some(low_side);
        self.root_best = None;
        let v = self.node::<true>(root, alpha, beta, d, 0);
        self.low_side = None;
        if self.stopped {
            self.take_abort();
            return None;
        }
        Some((v, self.root_best))
    }

    /// After a stopped search: whether it stopped at the turn's budget (`local_limit`), which
    /// clears the stop; a stop by the job's limits stays.
    fn take_abort(&mut self) -> bool {
        let aborted = std::mem::take(&mut self.aborted);
        if aborted {
            self.stopped = false;
        }
        aborted
    }

    /// The table draft of a deepening node's bound on its horizon value: horizon `depth`, and
    /// whether the horizon takes the node's lower bounds (0) or upper bounds (1).
    #[inline]
    fn horizon_draft(depth: i32, low: bool) -> u8 {
        (2 * depth.clamp(1, MAX_DEEPENING) + i32::from(!low)) as u8
    }

    #[cold]
    fn poll(&mut self) {
        self.count.flush(self.ctl);
        if self.interruptible
            && (self.stop.load(Ordering::Relaxed) || self.ctl.should_stop().is_some())
        {
            self.stopped = true;
            self.aborted = false;
        } else if self.count.nodes >= self.local_limit {
            self.stopped = true;
            self.aborted = true;
        }
    }

    #[inline(always)]
    fn count_node(&mut self) {
        self.count.nodes += 1;
        if self.count.nodes & (POLL_INTERVAL - 1) == 0 {
            self.poll();
        }
    }

    fn grow(&mut self, ply: usize) {
        while self.moves.len() <= ply {
            self.moves.push(Vec::new());
            self.order.push(Vec::new());
            self.killers.push([None, None]);
        }
    }

    /// The child's value from the parent's point of view.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn child<const EXACT: bool>(
        &mut self,
        c: &G::State,
        side: u8,
        alpha: i32,
        beta: i32,
        depth: i32,
        ply: usize,
    ) -> i32 {
        let cs = self.game.side(c);
        if cs == side {
            self.node::<EXACT>(c, alpha, beta, depth, ply)
        } else {
            to_parent(side, cs, self.node::<EXACT>(c, -beta, -alpha, depth, ply))
        }
    }

    fn node<const EXACT: bool>(
        &mut self,
        s: &G::State,
        alpha: i32,
        beta: i32,
        depth: i32,
        ply: usize,
    ) -> i32 {
        self.count_node();
        if self.stopped {
            return 0;
        }
        if self.game.is_terminal(s) {
            return self.game.terminal_value(s);
        }
        if ply >= self.moves.len() {
            self.grow(ply);
        }
        if !EXACT && depth <= 0 {
            return self.quiesce(s, alpha, beta, ply, QUIESCENCE_PLIES);
        }
        if EXACT && depth <= 0 {
            if let Some(low_side) = self.low_side {
                // The horizon of deepening exact search.
                let (lo, hi) = self.game.value_bounds(s);
                return if self.game.side(s) == low_side {
                    lo
                } else {
                    hi
                };
            }
        }
        let mut moves = std::mem::take(&mut self.moves[ply]);
        let mut order = std::mem::take(&mut self.order[ply]);
        let v = self.expand::<EXACT>(s, alpha, beta, depth, ply, &mut moves, &mut order);
        self.moves[ply] = moves;
        self.order[ply] = order;
        v
    }

    /// The move loop of [`Worker::node`], with the node's buffers lent out.
    #[allow(clippy::too_many_arguments)]
    fn expand<const EXACT: bool>(
        &mut self,
        s: &G::State,
        alpha: i32,
        beta: i32,
        depth: i32,
        ply: usize,
        moves: &mut Vec<G::Move>,
        order: &mut Vec<u8>,
    ) -> i32 {
        let game = self.game;
        // 1. Hints: a decided position, the moves worth searching, bounds without search.
        let (mut lo, mut hi) = if EXACT {
            if let Some(v) = game.immediate_value(s) {
                if ply == 0 {
                    self.root_best = immediate_move(game, s, v);
                }
                return v;
            }
            let (lo, hi) = game.exact_moves(s, moves);
            if moves.is_empty() || lo >= hi {
                return lo;
            }
            (lo, hi)
        } else {
            game.legal_moves(s, moves);
            game.order_moves(s, moves);
            (-INF, INF)
        };

        // 2. Table: bounds of an equal-draft entry, and its move for ordering. The root never
        //    cuts from the table, so a finished search always has its own best move.
        let key = game.hash(s);
        let mut tt_index = NO_MOVE;
        // Deepening exact search: whether the horizon takes this node's lower bounds.
        let low = self.low_side.map(|l| game.side(s) == l);
        if let Some(e) = self.table.probe(key) {
            tt_index = e.mv;
            let usable = if EXACT {
                e.draft == DRAFT_EXACT
                    || low.is_some_and(|low| e.draft == Self::horizon_draft(depth, low))
            } else {
                e.draft as i32 == depth
            };
            if usable && ply > 0 {
                match e.bound {
                    Bound::Exact => return e.value,
                    Bound::Lower => lo = lo.max(e.value),
                    Bound::Upper => hi = hi.min(e.value),
                }
            }
        }
        if ply > 0 {
            if lo >= beta || lo >= hi {
                return lo;
            }
            if hi <= alpha {
                return hi;
            }
        }
        let b = beta.min(hi);
        let mut a0 = alpha.max(lo);
        if a0 >= b {
            // Root only: the bounds alone decide; search just below them to find a move.
            a0 = b - 1;
        }

        // 3. Order: table move, killers, then (depth-limited) history, then the game's order.
        let n = moves.len();
        order.clear();
        order.extend((0..n).map(|i| i.min(NO_MOVE as usize) as u8));
        let mut next = 0;
        if (tt_index as usize) < n {
            promote(moves, order, tt_index as usize, 0);
            next = 1;
        }
        if !EXACT && self.cfg.killers {
            for k in 0..2 {
                if let Some(km) = self.killers[ply][k] {
                    if let Some(j) = moves[next..].iter().position(|&m| m == km) {
                        promote(moves, order, next + j, next);
                        next += 1;
                    }
                }
            }
        }
        if !EXACT && self.cfg.history && !self.history.is_empty() {
            // Insertion sort of the rest by history score, stable.
            for i in next + 1..n {
                let hi_score = self.history[game.history_slot(s, moves[i])];
                let mut j = i;
                while j > next && self.history[game.history_slot(s, moves[j - 1])] < hi_score {
                    j -= 1;
                }
                promote(moves, order, i, j);
            }
        }
        if self.helper != 0
            && next == 0
            && n > 1
            && (key ^ self.helper.wrapping_mul(0x9E37_79B9_7F4A_7C15)) & 3 == 0
        {
            moves.swap(0, 1);
            order.swap(0, 1);
        }

        // 4. Principal-variation search over the moves, fail-soft.
        let side = game.side(s);
        let nodes_before = self.count.nodes;
        let mut a = a0;
        let mut best = i32::MIN;
        let mut best_i = 0;
        for (i, &mv) in moves.iter().enumerate() {
            let mut c = s.clone();
            game.apply(&mut c, mv);
            let d = if EXACT {
                // Plain exact search ignores depth; deepening counts down to its horizon.
                if low.is_some() {
                    depth - 1
                } else {
                    0
                }
            } else {
                let extend =
                    self.cfg.extensions && ply < self.extension_horizon && game.is_forcing(s, mv);
                depth - 1 + extend as i32
            };
            let v = if i == 0 || a + 1 >= b {
                self.child::<EXACT>(&c, side, a, b, d, ply + 1)
            } else {
                let v = self.child::<EXACT>(&c, side, a, a + 1, d, ply + 1);
                if v > a && v < b && !self.stopped {
                    self.child::<EXACT>(&c, side, a, b, d, ply + 1)
                } else {
                    v
                }
            };
            if self.stopped {
                return 0;
            }
            if v > best {
                best = v;
                best_i = i;
                if best >= b {
                    self.cutoff(s, mv, ply, depth);
                    break;
                }
                if best > a {
                    a = best;
                }
            }
        }
        if ply == 0 {
            self.root_best = Some(moves[best_i]);
        }

        // 5. Store: the bound says which side of the window the value fell on.
        let bound = if best <= a0 {
            Bound::Upper
        } else if best >= b {
            Bound::Lower
        } else {
            Bound::Exact
        };
        let work = (64 - (self.count.nodes - nodes_before).leading_zeros()) as u8;
        // Deepening: a result on the side of the node's horizon kind bounds the true value
        // (an exact entry, as a one-sided bound); any other bounds only the horizon value.
        let (bound, horizon) = match low {
            Some(true) if bound != Bound::Upper => (Bound::Lower, None),
            Some(false) if bound != Bound::Lower => (Bound::Upper, None),
            Some(low) => (bound, Some(Self::horizon_draft(depth, low))),
            None => (bound, None),
        };
        self.table.store(
            key,
            Entry {
                value: best,
                bound,
                draft: if let Some(h) = horizon {
                    h
                } else if EXACT {
                    DRAFT_EXACT
                } else {
                    depth.clamp(0, DRAFT_EXACT as i32 - 1) as u8
                },
                mv: order[best_i],
                work,
            },
        );
        best
    }

    /// A move that failed high: remember it as a killer of its ply and in the history.
    #[inline]
    fn cutoff(&mut self, s: &G::State, mv: G::Move, ply: usize, depth: i32) {
        if self.cfg.killers && self.cfg.depth.is_some() {
            let k = &mut self.killers[ply];
            if k[0] != Some(mv) {
                k[1] = k[0];
                k[0] = Some(mv);
            }
        }
        if self.cfg.history && self.cfg.depth.is_some() && !self.history.is_empty() {
            let slot = self.game.history_slot(s, mv);
            let bonus = (depth.clamp(1, 64) as u32).pow(2);
            self.history[slot] = self.history[slot].saturating_add(bonus);
        }
    }

    /// Quiescence: the static evaluation, unless a noisy move does better (fail-soft).
    fn quiesce(&mut self, s: &G::State, alpha: i32, beta: i32, ply: usize, left: u32) -> i32 {
        let game = self.game;
        let stand = game.evaluate(s);
        if !self.cfg.quiescence || left == 0 || stand >= beta {
            return stand;
        }
        if ply >= self.moves.len() {
            self.grow(ply);
        }
        let mut moves = std::mem::take(&mut self.moves[ply]);
        game.legal_moves(s, &mut moves);
        let side = game.side(s);
        let mut best = stand;
        let mut a = alpha.max(stand);
        for &mv in moves.iter() {
            if !game.is_noisy(s, mv) {
                continue;
            }
            let mut c = s.clone();
            game.apply(&mut c, mv);
            self.count_node();
            if self.stopped {
                break;
            }
            let cs = game.side(&c);
            let v = if game.is_terminal(&c) {
                to_parent(side, cs, game.terminal_value(&c))
            } else if cs == side {
                self.quiesce(&c, a, beta, ply + 1, left - 1)
            } else {
                -self.quiesce(&c, -beta, -a, ply + 1, left - 1)
            };
            if v > best {
                best = v;
                if best >= beta {
                    break;
                }
                a = a.max(best);
            }
        }
        self.moves[ply] = moves;
        if self.stopped {
            return 0;
        }
        best
    }
}

/// Moves `moves[from]` to position `to <= from`, shifting the ones between (keeps their order).
#[inline(always)]
fn promote<M>(moves: &mut [M], order: &mut [u8], from: usize, to: usize) {
    if from > to {
        moves[to..=from].rotate_right(1);
        order[to..=from].rotate_right(1);
    }
}

/// At a root that `immediate_value` decided: a move whose child is terminal with that value.
fn immediate_move<G: ZeroSum>(game: &G, s: &G::State, v: i32) -> Option<G::Move> {
    let mut moves = Vec::new();
    game.legal_moves(s, &mut moves);
    let side = game.side(s);
    moves.into_iter().find(|&m| {
        let mut c = s.clone();
        game.apply(&mut c, m);
        game.is_terminal(&c) && to_parent(side, game.side(&c), game.terminal_value(&c)) == v
    })
}

/// The principal variation: `first`, then the table's moves while they are legal.
fn principal_variation<G: ZeroSum + Hashed + Tactics>(
    game: &G,
    root: &G::State,
    table: &Table,
    exact: bool,
    first: Option<G::Move>,
) -> Vec<G::Move> {
    let mut pv = Vec::new();
    let Some(first) = first else {
        return pv;
    };
    let mut s = root.clone();
    game.apply(&mut s, first);
    pv.push(first);
    let mut moves = Vec::new();
    while pv.len() < MAX_PV && !game.is_terminal(&s) {
        let mv = if exact {
            if let Some(v) = game.immediate_value(&s) {
                if let Some(m) = immediate_move(game, &s, v) {
                    pv.push(m);
                }
                break;
            }
            game.exact_moves(&s, &mut moves);
            table
                .probe(game.hash(&s))
                .and_then(|e| moves.get(e.mv as usize).copied())
        } else {
            game.legal_moves(&s, &mut moves);
            game.order_moves(&s, &mut moves);
            table
                .probe(game.hash(&s))
                .and_then(|e| moves.get(e.mv as usize).copied())
        };
        let Some(mv) = mv else { break };
        game.apply(&mut s, mv);
        pv.push(mv);
    }
    pv
}

#[cfg(test)]
pub(crate) mod tests;
