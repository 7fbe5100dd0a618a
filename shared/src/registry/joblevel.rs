//! Job-level proof-number search (`jlpns`) as a job: the coordinator's tree is the plan
//! ([`PlanShape::JobLevel`], `plan/planner/joblevel.rs`), a task is one leaf that a worker runs
//! the leaf kernel on.
//!
//! A leaf task ([`TaskKind::Leaf`]) replays its path from the root, then decides "value >= target"
//! (root side's view) there with at most `budget` nodes (`budget / budget_div` when the planner
//! divides). Defaults per game: [`Exact::job_level_leaf`]; without `leaf`, a leaf where the game's own
//! solver is fast ([`Exact::fast_leaf`]: Othello at 16 empty squares or fewer) runs `alphabeta`.
//! Leaf kernels: `dfpn` (one thread: a table the job's tasks in this process pass on; more: the
//! root-split df-pn), `pdspn`, and `alphabeta` (the null-window probe of exact jobs, on a table the
//! job's tasks share in this process).
//!
//! Solved, the output has `raw` (the leaf value's bounds from the root side's view) and `proved`.
//! Unsolved, it lists every child in move order ([`crate::wire::LeafChild`]): hash, whether the
//! root's side moves, the exact value when known at once, and the child's numbers (df-pn's table),
//! bounds (alpha-beta's short probes on its table, an eighth of the budget in all) or (1, 1).
//!
//! The coordinator checks a worker's leaf output against the game: the path is legal, the children
//! are exactly the legal moves with their hashes and sides, the bounds lie in the value range and
//! answer the threshold.

use super::spec::{self, DefaultValue, Spec};
use super::{Opts, PlanShape, PreparedJob, Resources, SolveError};
use crate::games::Exact;
use crate::model::ZeroSum;
use crate::search::pns::{dfpn, parallel, Algorithm, PnOptions, Verdict};
use crate::search::{engine, Control, StopReason};
use crate::wire::{
    JobSpec, LeafChild, Proved, RawBounds, TaskKind, TaskOutput, LEAF_MAX_BUDGET_DIV,
};
use std::sync::{Mutex, OnceLock};

/// `leaf`: the kernel a leaf task runs.
pub const LEAF: Spec = Spec::choice(
    "leaf",
    &["dfpn", "pdspn", "alphabeta"],
    DefaultValue::Depends(
        "alphabeta for connect4, else dfpn (othello: alphabeta at 16 empties or fewer)",
    ),
    "leaf kernel",
);
/// `budget`: nodes of one leaf task.
pub const BUDGET: Spec = Spec::uint(
    "budget",
    1,
    1 << 40,
    DefaultValue::Depends(
        "per game (connect4 16000000, othello 4000000, else 1000000), over the workers up to 16 \
         for the first 2 results per worker",
    ),
    "nodes of the leaf kernel per leaf task",
    "beyond it one task runs for days",
);

/// `memory_mb`: the leaf kernel's table.
pub const MEMORY_MB: Spec = spec::memory_mb(
    crate::search::pns::DEFAULT_MEMORY_MB,
    "leaf kernel's table budget (df-pn, PDS-PN, alpha-beta), MiB",
);
/// `threads`: the leaf kernel's threads.
pub const THREADS: Spec = spec::THREADS
    .with_default(DefaultValue::UInt(1))
    .with_help("threads of the leaf kernel (root splitting, or Lazy SMP for alphabeta)");
/// `target`: decide "value >= target" (none: the exact value).
pub const TARGET: Spec = spec::TARGET.with_help("decide value >= target (none: the exact value)");

/// Options of `jlpns` (only this algorithm reads them).
pub const OPTIONS: &[Spec] = &[TARGET, LEAF, BUDGET, MEMORY_MB, THREADS];

/// Alpha-beta's answer at a leaf: the proven bounds and the move that reaches the threshold
/// (`None`: stopped first).
type AbAnswer<M> = Option<(RawBounds, Option<M>)>;

/// The leaf kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leaf {
    Dfpn,
    Pdspn,
    AlphaBeta,
}

/// A prepared `jlpns` job.
pub struct JlJob<G: Exact> {
    job: JobSpec,
    game: G,
    root: G::State,
    leaf: Leaf,
    /// No `leaf` option: leaves where the game's solver is fast ([`Exact::fast_leaf`]) run it.
    auto_leaf: bool,
    budget: u64,
    /// The budget is the game's default (the planner divides it by the parallelism).
    auto_budget: bool,
    target: Option<i32>,
    threads: usize,
    opts: PnOptions,
    /// The alpha-beta leaves' table, made on first use, shared by the job's tasks here.
    table: OnceLock<Result<engine::Table, String>>,
    /// The df-pn leaves' tables kept between tasks (one per task running at once), each with
    /// the threshold its entries answer.
    dfpn_tables: Mutex<Vec<(i32, dfpn::DfpnTable)>>,
    /// Proved positions for the job's other workers ([`PreparedJob::take_proved`]).
    exchange: Mutex<Exchange>,
}

/// Alpha-beta leaves export the entries of positions whose search took at least `2^this`
/// nodes (the game's solver's work classes: Connect Four's top out at 15).
const PROVED_MIN_WORK: u32 = 14;
/// At most this many entries from one leaf task...
const PROVED_PER_TASK: usize = 4096;
/// ...and this many from one job in one process.
const PROVED_PER_JOB: usize = 1 << 20;

/// What this process told the job's other workers and has yet to tell them.
#[derive(Default)]
struct Exchange {
    /// Key -> entry fields, of every entry sent or received.
    known: std::collections::HashMap<u64, u64>,
    /// Entries found since the last [`PreparedJob::take_proved`].
    out: Vec<Proved>,
}

/// Prepares a `jlpns` job.
pub fn prepare<G: Exact>(
    job: &JobSpec,
    game: G,
    root: G::State,
    res: &Resources,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let o = Opts::new(&job.options, "option");
    let target = match o.text(&TARGET) {
        None => None,
        Some(t) => Some(super::parse_internal(&game, &root, "target", t)?),
    };
    let defaults = game.job_level_leaf();
    let (default_leaf, default_budget) = match defaults.own_solver {
        true => (Leaf::AlphaBeta, defaults.budget),
        false => (Leaf::Dfpn, defaults.budget),
    };
    let leaf = match o.choice_given(&LEAF)? {
        None => default_leaf,
        Some("pdspn") => Leaf::Pdspn,
        Some("alphabeta") => Leaf::AlphaBeta,
        Some(_) => Leaf::Dfpn,
    };
    let auto_leaf = !o.given(LEAF.name);
    let auto_budget = !o.given(BUDGET.name);
    let budget: u64 = o.uint_or(&BUDGET, default_budget)?;
    let opts = PnOptions {
        memory_mb: o.uint_value::<u64>(&MEMORY_MB)?.min(res.memory_mb),
        ..PnOptions::default()
    };
    let threads: usize = o.uint_value::<usize>(&THREADS)?.min(res.threads);
    o.finish()?;
    Ok(Box::new(JlJob {
        job: job.clone(),
        game,
        root,
        leaf,
        auto_leaf,
        budget,
        auto_budget,
        target,
        threads,
        opts,
        table: OnceLock::new(),
        dfpn_tables: Mutex::new(Vec::new()),
        exchange: Mutex::new(Exchange::default()),
    }))
}

/// The largest multiple of `step` that is `<= v`.
fn floor_step(v: i32, step: i32) -> i32 {
    ((v as i64).div_euclid(step.max(1) as i64) * step.max(1) as i64) as i32
}

/// The smallest multiple of `step` that is `>= v`.
fn ceil_step(v: i32, step: i32) -> i32 {
    let s = step.max(1) as i64;
    (-((-(v as i64)).div_euclid(s) * s)).min(i32::MAX as i64) as i32
}

impl<G: Exact> JlJob<G> {
    fn step(&self) -> i32 {
        self.game.value_step().max(1)
    }

    /// The position after `path`, every move checked against the rules.
    fn replay(&self, path: &[String]) -> Result<G::State, String> {
        let mut s = self.root.clone();
        for mv in path {
            if self.game.is_terminal(&s) {
                return Err(format!("leaf path: '{mv}' after the end of the game"));
            }
            let m = self
                .game
                .parse_move(&s, mv)
                .map_err(|e| format!("leaf path: {e}"))?;
            self.game.apply(&mut s, m);
        }
        Ok(s)
    }

    /// Whether the root's side moves at `s`.
    fn root_side(&self, s: &G::State) -> bool {
        self.game.side(s) == self.game.side(&self.root)
    }

    /// The value bounds of `s` from the root side's view.
    fn root_view_bounds(&self, s: &G::State) -> (i32, i32) {
        let (lo, hi) = self.game.value_bounds(s);
        if self.root_side(s) {
            (lo, hi)
        } else {
            (hi.saturating_neg(), lo.saturating_neg())
        }
    }

    /// A value known at once at `s` (terminal or immediate), from the root side's view.
    fn known(&self, s: &G::State) -> Option<i32> {
        let v = if self.game.is_terminal(s) {
            self.game.terminal_value(s)
        } else {
            self.game.immediate_value(s)?
        };
        Some(if self.root_side(s) {
            v
        } else {
            v.saturating_neg()
        })
    }

    /// Bounds of a position whose root-view answer to "value >= t" is `holds`, within `(lo, hi)`.
    fn verdict_bounds(&self, holds: bool, t: i32, (lo, hi): (i32, i32)) -> RawBounds {
        if holds {
            RawBounds {
                lower: ceil_step(t, self.step()).max(lo),
                upper: hi,
            }
        } else {
            RawBounds {
                lower: lo,
                upper: floor_step(t.saturating_sub(1), self.step()).min(hi),
            }
        }
    }

    /// Alpha-beta's answer to "value >= t" (root's view) at the non-terminal `state` within
    /// `ctl`'s budget: the proven bounds (root's view, from the fail-soft value) and, when the
    /// mover reaches its goal, its move; `None` when stopped first. The null-window probe exact
    /// jobs use (the game's own solver when it has one, else the generic engine), on the
    /// job's table in this process.
    fn ab_bounds(
        &self,
        state: &G::State,
        t: i32,
        ctl: &Control,
    ) -> Result<AbAnswer<G::Move>, SolveError> {
        let table = self.table()?;
        let bounds = self.root_view_bounds(state);
        let aligned = self.root_side(state);
        let t_leaf = if aligned { t } else { 1i32.saturating_sub(t) };
        let (a, b) = (t_leaf - 1, t_leaf);
        let e = match self
            .game
            .exact_search(state, a, b, self.threads, table, None, ctl)
        {
            Some(e) => e,
            None => {
                let cfg = engine::Config {
                    threads: self.threads,
                    ..engine::Config::default()
                };
                engine::search(&self.game, state, a, b, &cfg, table, ctl)
            }
        };
        Ok(e.map(|e| {
            let best = if e.value >= t_leaf { e.best_move } else { None };
            // Fail-soft: the leaf's value is >= e.value (high) or <= e.value (low).
            let (lo, hi) = if e.value >= t_leaf {
                (e.value, i32::MAX)
            } else {
                (i32::MIN, e.value)
            };
            let (lo, hi) = if aligned {
                (lo, hi)
            } else {
                (hi.saturating_neg(), lo.saturating_neg())
            };
            let raw = RawBounds {
                lower: ceil_step(lo.max(bounds.0), self.step()),
                upper: floor_step(hi.min(bounds.1), self.step()),
            };
            (raw, best)
        }))
    }

    /// A df-pn table for a leaf of threshold `t` (root's view): one kept from a task of the
    /// same threshold, else a kept one emptied, else a new one. Every leaf's question is its
    /// mover's goal under "the root's value >= t", so entries of one threshold stay sound
    /// whatever leaf wrote them ([`dfpn::Dfpn::decide_keeping`]).
    fn take_dfpn(&self, t: i32) -> dfpn::DfpnTable {
        let mut pool = self.dfpn_tables.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = pool.iter().position(|(k, _)| *k == t) {
            return pool.swap_remove(i).1;
        }
        match pool.pop() {
            Some((_, mut table)) => {
                table.clear();
                table
            }
            None => dfpn::DfpnTable::new(self.opts.memory_mb),
        }
    }

    /// Keeps a df-pn table of threshold `t` for the job's next tasks in this process (as many
    /// as ran at once: each task took one out).
    fn put_dfpn(&self, t: i32, table: dfpn::DfpnTable) {
        let mut pool = self.dfpn_tables.lock().unwrap_or_else(|e| e.into_inner());
        pool.push((t, table));
    }

    /// Adds the entries the game's solver left below `state` that this process has not yet
    /// sent or received to those [`PreparedJob::take_proved`] hands out.
    fn collect_proved(&self, state: &G::State) {
        let Ok(table) = self.table() else { return };
        let Some(found) = self
            .game
            .export_proved(state, table, PROVED_MIN_WORK, PROVED_PER_TASK)
        else {
            return;
        };
        let mut x = self.exchange.lock().unwrap_or_else(|e| e.into_inner());
        for e in found {
            if x.known.len() >= PROVED_PER_JOB {
                break;
            }
            if x.known.insert(e[0], e[1]) != Some(e[1]) {
                x.out.push(e);
            }
        }
    }

    fn table(&self) -> Result<&engine::Table, SolveError> {
        let mb = Some(self.opts.memory_mb);
        self.table
            .get_or_init(|| engine::Table::take(engine::table_bytes(&self.game, &self.root, mb)))
            .as_ref()
            .map_err(|e| SolveError::Internal(format!("option memory_mb: {e}")))
    }

    /// Runs one leaf task (see the module doc).
    fn leaf(
        &self,
        t: i32,
        path: &[String],
        budget: u64,
        ctl: &Control,
    ) -> Result<TaskOutput, SolveError> {
        let t0 = std::time::Instant::now();
        let state = self.replay(path).map_err(SolveError::Internal)?;
        let bounds = self.root_view_bounds(&state);
        let mut out = TaskOutput::default();
        let solved = |out: &mut TaskOutput, raw: RawBounds| {
            out.raw = Some(raw);
            out.extra.proved = Some(Some(raw.lower >= t));
            out.elapsed_ms = t0.elapsed().as_millis() as u64;
        };
        if let Some(v) = self.known(&state) {
            out.nodes = 1;
            solved(&mut out, RawBounds { lower: v, upper: v });
            return Ok(out);
        }
        if t <= bounds.0 || t > bounds.1 {
            solved(
                &mut out,
                RawBounds {
                    lower: bounds.0,
                    upper: bounds.1,
                },
            );
            return Ok(out);
        }
        // The leaf's own question, from its mover's view.
        let aligned = self.root_side(&state);
        let t_leaf = if aligned { t } else { 1i32.saturating_sub(t) };
        let sub = ctl.for_task(None, Some(budget));
        // Per child: (proof, disproof) of the leaf's goal, from df-pn's table.
        let mut numbers: Vec<Option<(u32, u32)>> = Vec::new();
        let mut moves = Vec::new();
        self.game.legal_moves(&state, &mut moves);
        self.game.order_moves(&state, &mut moves);
        // The job's kernel, or the game's own solver where it is fast and the job named none.
        let kernel = if self.auto_leaf && self.game.fast_leaf(&state) {
            Leaf::AlphaBeta
        } else {
            self.leaf
        };
        let answer: Option<RawBounds> = match kernel {
            Leaf::Dfpn if self.threads <= 1 => {
                let mut d = dfpn::Dfpn::with_table(&self.game, &self.opts, self.take_dfpn(t));
                let r = d.decide_keeping(&state, t_leaf, &sub);
                out.best_move = r.best_move.map(|m| self.game.format_move(&state, m));
                let answer = match r.verdict {
                    Verdict::Proved | Verdict::Disproved => Some(self.verdict_bounds(
                        (r.verdict == Verdict::Proved) == aligned,
                        t,
                        bounds,
                    )),
                    Verdict::Unknown(_) => {
                        numbers = moves
                            .iter()
                            .map(|&m| {
                                let mut c = state.clone();
                                self.game.apply(&mut c, m);
                                d.goal_numbers(&c)
                            })
                            .collect();
                        None
                    }
                };
                self.put_dfpn(t, d.into_table());
                answer
            }
            Leaf::Dfpn | Leaf::Pdspn => {
                let alg = if kernel == Leaf::Dfpn {
                    Algorithm::Dfpn
                } else {
                    Algorithm::Pdspn
                };
                let r = parallel::decide_parallel(
                    alg,
                    &self.game,
                    &state,
                    t_leaf,
                    &self.opts,
                    self.threads,
                    &sub,
                );
                out.best_move = r.best_move.map(|m| self.game.format_move(&state, m));
                match r.verdict {
                    Verdict::Proved | Verdict::Disproved => Some(self.verdict_bounds(
                        (r.verdict == Verdict::Proved) == aligned,
                        t,
                        bounds,
                    )),
                    Verdict::Unknown(_) => None,
                }
            }
            Leaf::AlphaBeta => {
                let answer = self.ab_bounds(&state, t, &sub)?;
                self.collect_proved(&state);
                answer.map(|(raw, best)| {
                    out.best_move = best.map(|m| self.game.format_move(&state, m));
                    raw
                })
            }
        };
        let mut nodes = sub.nodes();
        ctl.absorb(&sub);
        out.nodes = nodes.max(1);
        if let Some(raw) = answer {
            solved(&mut out, raw);
            return Ok(out);
        }
        out.best_move = None;
        // Unsolved: a job limit (time, cancel) is a stop; only the budget expands the leaf.
        match ctl.should_stop().or(sub.should_stop()) {
            Some(StopReason::Nodes) | None => {}
            Some(r) => {
                return Err(SolveError::Internal(format!(
                    "stopped before a result ({})",
                    r.as_str()
                )))
            }
        }
        // Alpha-beta's table holds what the search learnt about the children (with a null
        // window at the leaf, most children it finished answer the threshold): a short probe of
        // each child, an eighth of the budget for all of them, reads it back, and decides more
        // children where the remaining search is small. Their bounds go to the coordinator, so
        // no later task (on a worker without this table) searches them again.
        let mut probed: Vec<Option<RawBounds>> = Vec::new();
        if kernel == Leaf::AlphaBeta {
            let each = (budget / (8 * moves.len().max(1) as u64)).max(1);
            for &m in &moves {
                let mut c = state.clone();
                self.game.apply(&mut c, m);
                let cb = self.root_view_bounds(&c);
                if self.known(&c).is_some() {
                    probed.push(None);
                    continue;
                }
                if t <= cb.0 || t > cb.1 {
                    probed.push(Some(RawBounds {
                        lower: cb.0,
                        upper: cb.1,
                    }));
                    continue;
                }
                let csub = ctl.for_task(None, Some(each));
                let r = self.ab_bounds(&c, t, &csub)?.map(|(raw, _)| raw);
                nodes += csub.nodes();
                ctl.absorb(&csub);
                if ctl.should_stop().is_some() {
                    return Err(SolveError::Internal("stopped before a result".into()));
                }
                probed.push(r);
            }
            out.nodes = nodes.max(1);
        }
        let goal_flip = !aligned;
        let children = moves
            .iter()
            .enumerate()
            .map(|(i, &m)| {
                let mut c = state.clone();
                self.game.apply(&mut c, m);
                let mut child = LeafChild {
                    mv: self.game.format_move(&state, m),
                    hash: self.game.hash(&c),
                    or: self.root_side(&c),
                    pn: 1,
                    dn: 1,
                    lower: None,
                    upper: None,
                };
                if let Some(v) = self.known(&c) {
                    (child.lower, child.upper) = (Some(v), Some(v));
                } else if let Some(Some(b)) = probed.get(i) {
                    (child.lower, child.upper) = (Some(b.lower), Some(b.upper));
                } else if let Some(Some((p, d))) = numbers.get(i) {
                    let (p, d) = if goal_flip { (*d, *p) } else { (*p, *d) };
                    if p == 0 || d == 0 {
                        let b = self.verdict_bounds(p == 0, t, self.root_view_bounds(&c));
                        (child.lower, child.upper) = (Some(b.lower), Some(b.upper));
                    } else {
                        (child.pn, child.dn) = (p, d);
                    }
                }
                child
            })
            .collect();
        out.extra.children = Some(children);
        out.elapsed_ms = t0.elapsed().as_millis() as u64;
        Ok(out)
    }

    fn bounds_json(&self, lower: i32, upper: i32) -> serde_json::Value {
        bounds_json(&self.game, &self.root, lower, upper)
    }

    /// The checks of [`PreparedJob::check_output`] for a leaf task: bounds inside the leaf's
    /// values that answer the threshold, with `proved` saying the same, or (unsolved) every
    /// legal move of the leaf once, each child's hash, side and bounds right; no value; a best
    /// move legal at the leaf. Linear in the number of children.
    fn check_leaf(&self, t: i32, path: &[String], out: &TaskOutput) -> Result<(), String> {
        use super::check;
        let state = self.replay(path)?;
        if !out.value.is_null() {
            return Err("a leaf reports bounds, not a value".into());
        }
        check::best_move(&self.game, &state, out)?;
        let (lo, hi) = self.root_view_bounds(&state);
        if let Some(r) = out.raw {
            if r.lower > r.upper || r.lower < lo || r.upper > hi {
                return Err(format!(
                    "leaf bounds [{}, {}] outside [{lo}, {hi}]",
                    r.lower, r.upper
                ));
            }
            if r.lower < t && r.upper >= t {
                return Err("leaf bounds do not answer the threshold".into());
            }
            if out.extra.children.is_some() {
                return Err("a solved leaf lists no children".into());
            }
            if out.extra.proved.is_some_and(|p| p != Some(r.lower >= t)) {
                return Err("'proved' does not say what the leaf bounds say".into());
            }
            return Ok(());
        }
        if out.extra.proved.is_some() || out.best_move.is_some() {
            return Err("an unsolved leaf proves nothing and has no best move".into());
        }
        let Some(children) = &out.extra.children else {
            return Err("a leaf answer needs bounds or children".into());
        };
        let mut moves = Vec::new();
        self.game.legal_moves(&state, &mut moves);
        if children.len() != moves.len() || moves.is_empty() {
            return Err(format!(
                "leaf lists {} children, the position has {} moves",
                children.len(),
                moves.len()
            ));
        }
        // Each legal move by its notation, listed once: a map, so that a wide leaf costs no
        // more than its children.
        let mut by_text: std::collections::HashMap<String, (G::Move, bool)> = moves
            .iter()
            .map(|&m| (self.game.format_move(&state, m), (m, false)))
            .collect();
        for c in children {
            let Some((m, seen)) = by_text.get_mut(c.mv.as_str()) else {
                return Err(format!(
                    "leaf child '{}' is not a legal move there",
                    check::clip_text(&c.mv)
                ));
            };
            if std::mem::replace(seen, true) {
                return Err("leaf lists a child twice".into());
            }
            let mut s = state.clone();
            self.game.apply(&mut s, *m);
            if self.game.hash(&s) != c.hash || self.root_side(&s) != c.or {
                return Err(format!(
                    "leaf child '{}': wrong hash or side",
                    check::clip_text(&c.mv)
                ));
            }
            let (clo, chi) = self.root_view_bounds(&s);
            let (l, u) = (c.lower.unwrap_or(clo), c.upper.unwrap_or(chi));
            if l > u || l < clo || u > chi {
                return Err(format!(
                    "leaf child '{}': bounds outside the values",
                    check::clip_text(&c.mv)
                ));
            }
        }
        Ok(())
    }
}

/// The JSON of the bounds `(lower, upper)` on the value of `root`, in the game's terms.
pub(super) fn bounds_json<G: ZeroSum>(
    game: &G,
    root: &G::State,
    lower: i32,
    upper: i32,
) -> serde_json::Value {
    serde_json::json!([
        game.value_to_json(root, lower),
        game.value_to_json(root, upper)
    ])
}

/// Gives `out` what `bounds` on the value of `root` settle: the value (null unless they are
/// exact) and the bounds.
pub(super) fn put_bounds<G: ZeroSum>(
    out: &mut TaskOutput,
    game: &G,
    root: &G::State,
    bounds: RawBounds,
) {
    out.value = if bounds.is_exact() {
        game.value_to_json(root, bounds.lower)
    } else {
        serde_json::Value::Null
    };
    let json = bounds_json(game, root, bounds.lower, bounds.upper);
    out.extra.insert("bounds".into(), json);
}

impl<G: Exact> Drop for JlJob<G> {
    fn drop(&mut self) {
        if let Some(Ok(table)) = self.table.take() {
            table.recycle();
        }
    }
}

impl<G: Exact> PreparedJob for JlJob<G> {
    fn job(&self) -> &JobSpec {
        &self.job
    }

    fn plan_shape(&self) -> PlanShape {
        if self.game.is_terminal(&self.root) {
            return PlanShape::Single;
        }
        let (lo, hi) = self.game.value_bounds(&self.root);
        let step = self.step();
        PlanShape::JobLevel {
            lower: ceil_step(lo, step),
            upper: floor_step(hi, step),
            step,
            guess: match self.target {
                None => self.game.first_guess(&self.root),
                Some(_) => None,
            },
            target: self.target,
            auto_budget: self.auto_budget,
        }
    }

    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError> {
        match task {
            TaskKind::Leaf {
                target,
                path,
                budget_div,
            } => {
                let div = budget_div.unwrap_or(1).clamp(1, LEAF_MAX_BUDGET_DIV);
                let budget = (self.budget / u64::from(div)).max(1);
                self.leaf(*target, path, budget, ctl)
            }
            TaskKind::Whole => {
                // Only for a terminal root.
                let v = self.game.terminal_value(&self.root);
                let mut out = TaskOutput {
                    value: self.game.value_to_json(&self.root, v),
                    nodes: 1,
                    raw: Some(RawBounds { lower: v, upper: v }),
                    ..TaskOutput::default()
                };
                if let Some(t) = self.target {
                    out.extra.proved = Some(Some(v >= t));
                }
                out.extra.insert("bounds".into(), self.bounds_json(v, v));
                Ok(out)
            }
            _ => Err(SolveError::Internal(
                "only leaf tasks apply to a jlpns job".into(),
            )),
        }
    }

    fn take_proved(&self) -> Vec<Proved> {
        let mut x = self.exchange.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut x.out)
    }

    fn learn_proved(&self, entries: &[Proved]) {
        if entries.is_empty() || self.leaf != Leaf::AlphaBeta && !self.auto_leaf {
            return;
        }
        let Ok(table) = self.table() else { return };
        self.game.import_proved(table, entries);
        let mut x = self.exchange.lock().unwrap_or_else(|e| e.into_inner());
        for e in entries {
            if x.known.len() >= PROVED_PER_JOB {
                break;
            }
            x.known.insert(e[0], e[1]);
        }
    }

    fn show_value(&self, raw: i32) -> serde_json::Value {
        self.game.value_to_json(&self.root, raw)
    }

    fn check_output(&self, task: &TaskKind, out: &TaskOutput) -> Result<(), String> {
        use super::check;
        let whole = matches!(task, TaskKind::Whole);
        let display: &[&str] = if whole { &["bounds"] } else { &[] };
        check::only_keys(out, &["proved", "children", "stopped"], display)?;
        if check::is_stopped(out) && out.extra.children.is_none() {
            return Ok(());
        }
        match task {
            TaskKind::Leaf { target, path, .. } => self.check_leaf(*target, path, out),
            TaskKind::Whole => {
                let v = self.game.terminal_value(&self.root);
                check::exactly(out, "bounds", &self.bounds_json(v, v))?;
                match out.raw {
                    Some(r)
                        if r.lower == v
                            && r.upper == v
                            && out.value == self.game.value_to_json(&self.root, v)
                            && out.extra.children.is_none()
                            && out.best_move.is_none() =>
                    {
                        Ok(())
                    }
                    _ => Err("a terminal root's bounds and value must be its value".into()),
                }
            }
            _ => Err("only leaf tasks apply to a jlpns job".into()),
        }
    }

    /// One output per finished threshold (the planner's summaries): the value when exact, the
    /// bounds, the move that proved the lower bound, `proved` for a decision.
    fn finish_probes(&self, bounds: RawBounds, parts: &[TaskOutput]) -> TaskOutput {
        let (lo, _) = self.game.value_bounds(&self.root);
        let mut out = TaskOutput {
            nodes: parts.iter().map(|p| p.nodes).sum(),
            raw: Some(bounds),
            ..TaskOutput::default()
        };
        out.best_move = parts
            .iter()
            .rfind(|p| p.best_move.is_some() && p.raw.map(|r| r.lower) == Some(bounds.lower))
            .and_then(|p| p.best_move.clone());
        let decided = match self.target {
            Some(t) => bounds.lower >= t || bounds.upper < t,
            None => bounds.is_exact(),
        };
        if out.best_move.is_none() && decided && bounds.lower <= lo {
            // Nothing above the bottom: every move reaches the minimum.
            let mut moves = Vec::new();
            self.game.legal_moves(&self.root, &mut moves);
            self.game.order_moves(&self.root, &mut moves);
            out.best_move = moves.first().map(|&m| self.game.format_move(&self.root, m));
        }
        if let Some(t) = self.target {
            out.extra.proved = Some(decided.then_some(bounds.lower >= t));
            if bounds.lower < t {
                out.best_move = None;
            }
        }
        put_bounds(&mut out, &self.game, &self.root, bounds);
        out.extra.insert(
            "thresholds".into(),
            parts.iter().filter(|p| p.raw.is_some()).count().into(),
        );
        if !decided {
            if let Some(p) = parts.iter().find(|p| p.extra.stopped.is_some()) {
                out.extra.stopped = p.extra.stopped;
                out.extra.error = p.extra.error.clone();
            }
        }
        out
    }
}
