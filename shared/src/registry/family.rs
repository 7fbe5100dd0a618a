//! The two-player zero-sum family (`minimax`, `alphabeta`) and what every kernel of a two-player
//! zero-sum game or an explicit tree goes through first. Generic over the game; the registry
//! instantiates it per game.

use super::kernel::{self, Analyse, Group, KernelList, Shape};
use super::spec::{self, DefaultValue, Spec, MAX_DEPTH};
use super::{catalogue, Opts, PlanShape, PreparedJob, Resources, SolveError};
use crate::games::tree::{Tree, TreeKind};
use crate::games::Exact;

use crate::search::eval::{Evaluated, Evaluator};
use crate::search::{engine, minimax, Control, StopReason};
use crate::wire::{Extra, JobSpec, RawBounds, TaskKind, TaskOutput};
use std::sync::OnceLock;

/// `depth`: plies of a depth-limited search (none: the exact value).
pub const DEPTH: Spec = spec::DEPTH;
/// `memory_mb`: the transposition table's budget (alphabeta).
pub const MEMORY_MB: Spec =
    spec::memory_mb(engine::DEFAULT_TABLE_MB, "transposition table budget, MiB")
        .for_algorithms(&["alphabeta"]);
/// `weak`: win/draw/loss only.
pub const WEAK: Spec =
    Spec::flag("weak", false, "only win (1), draw (0) or loss (-1)").for_algorithms(&["alphabeta"]);
/// `eval`: which evaluator a depth-limited search uses (read by [`wants_features`]).
pub const EVAL: Spec = Spec::choice(
    "eval",
    &["features", "game"],
    DefaultValue::Depends("the game's choice"),
    "the evaluator of a depth-limited search",
);
/// `book`: a Connect Four opening book, by name in the data folder.
pub const BOOK: Spec = Spec::text(
    "book",
    DefaultValue::Unset("none"),
    "Connect Four opening book: a file name in the data folder's connect4/",
)
.for_algorithms(&["alphabeta"]);
/// `target`: decide "value >= target".
pub const TARGET: Spec = spec::TARGET
    .with_help("decide value >= target (game's scale)")
    .for_algorithms(&["alphabeta"]);
/// `guess`: where the probes of an exact alphabeta start.
pub const GUESS: Spec = Spec::text(
    "guess",
    DefaultValue::Depends("the game's own (Othello) or none"),
    "first guess of the exact value, inside the game's values",
)
.for_algorithms(&["alphabeta"]);

/// Options of the two-player zero-sum family (`minimax`, `alphabeta`).
pub const OPTIONS: &[Spec] = &[
    DEPTH,
    spec::THREADS.for_algorithms(&["alphabeta"]),
    MEMORY_MB,
    WEAK,
    EVAL,
    BOOK,
    TARGET,
    GUESS,
    spec::TABLES.for_algorithms(&["alphabeta"]),
    super::analysis::ANALYSE.for_algorithms(&["alphabeta"]),
];

/// Largest |target| or |guess| on a game's internal scale: far outside every game's values, and
/// far enough from `i32`'s ends that the kernels' `target - 1` and step rounding never wrap.
pub const MAX_INTERNAL_TARGET: i32 = 1 << 30;

/// What a two-player job asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ask {
    /// The exact value (or the depth-limited value with `depth`).
    Value,
    /// Decide "value >= target" (internal scale).
    Decide(i32),
}

/// Which kernel of the family a job runs: the kernel's hook says it, so the job never reads
/// the algorithm's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// `minimax` (`kernels/minimax.rs`).
    Minimax,
    /// `alphabeta` (`kernels/alphabeta.rs`).
    Alphabeta,
}

/// A prepared two-player zero-sum job.
pub struct ZeroSumJob<G: Exact> {
    job: JobSpec,
    search: Search,
    game: G,
    root: G::State,
    depth: Option<u32>,
    ask: Ask,
    /// `alphabeta`: the engine's settings (`depth`, `threads`).
    engine: engine::Config,
    /// `weak=true`: only win (+1), draw (0) or loss (-1).
    weak: bool,
    /// Table budget (`memory_mb`).
    memory_mb: u64,
    /// The `threads` option (else the runner's threads).
    threads: Option<usize>,
    /// The `guess` option (internal scale): where the probe plan starts.
    guess: Option<i32>,
    /// The engine's table, made on first use and shared by every task of this job (the
    /// null-window probes of one exact value reuse each other's work). Lock-free inside.
    table: OnceLock<Result<engine::Table, String>>,
    /// The game's opening book (`book=FILE`).
    book: Option<std::sync::Arc<G::Book>>,
}

/// The two-player zero-sum family: `minimax` and `alphabeta`.
pub static GROUP: Group = Group {
    title: "Two-player zero-sum",
    options: OPTIONS,
    skip: |game| match game.family {
        catalogue::Family::ZeroSum { book: false, .. } => &["book"],
        catalogue::Family::Tree => &["book", "weak", "eval"],
        _ => &[],
    },
};

/// Prepares a job over a two-player zero-sum game: parses the position and hands the game to
/// the job's kernel in the list `L`.
pub fn zero_sum<G: Exact, L: KernelList>(
    job: &JobSpec,
    game: G,
    res: &Resources,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let root = game
        .parse_position(&job.position)
        .map_err(|e| SolveError::bad(format!("position: {e}")))?;
    zero_sum_at::<G, L>(job, game, root, res)
}

/// What every kernel of a two-player zero-sum game shares: `analyse=all` (the kernels that
/// analyse every move) and `tables` (the kernels that read it), then the kernel's hook.
fn zero_sum_at<G: Exact, L: KernelList>(
    job: &JobSpec,
    game: G,
    root: G::State,
    res: &Resources,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let Some(kernel) = L::find(&job.algorithm) else {
        return Err(kernel::does_not_apply::<L>(job, Shape::ZeroSum));
    };
    if job.options.contains_key(super::analysis::ANALYSE.name) && kernel.analyse != Analyse::Own {
        return super::analysis::route::<G, L>(job, game, root, res, zero_sum_at::<G, L>);
    }
    let opts = Opts::new(&job.options, "option");
    let game = match opts.text(&spec::TABLES) {
        None => game,
        Some(_) if !kernel.reads(spec::TABLES.name) => {
            let takers: Vec<&str> = L::all()
                .into_iter()
                .filter(|a| a.reads(spec::TABLES.name))
                .map(|a| a.name)
                .collect();
            return Err(SolveError::bad(format!(
                "option 'tables' is for {}",
                takers.join(", ")
            )));
        }
        Some(name) => game.with_tables(name.trim())?,
    };
    L::zero_sum(&job.algorithm, job, game, root, res)
        .unwrap_or_else(|| Err(kernel::does_not_apply::<L>(job, Shape::ZeroSum)))
}

/// Prepares a `minimax` or `alphabeta` job (tables applied to the game already).
pub fn two_player<G: Exact>(
    job: &JobSpec,
    game: G,
    root: G::State,
    res: &Resources,
    search: Search,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let alphabeta = search == Search::Alphabeta;
    let opts = Opts::new(&job.options, "option");
    // Applied to the game by `zero_sum_at` before it got here.
    opts.allow(spec::TABLES.name);
    let depth: Option<u32> = opts.uint(&DEPTH)?;
    // Cut down to what the runner offers (the job may run on bigger workers elsewhere).
    let threads: Option<usize> = opts
        .uint::<usize>(&spec::THREADS)?
        .map(|t| t.min(res.threads));
    let memory_mb = opts.uint_value::<u64>(&MEMORY_MB)?.min(res.memory_mb);
    let weak = opts.flag(&WEAK)?;
    // Read (and checked) by `wants_features` in the registry, before the game was built.
    opts.allow(EVAL.name);
    let book = load_book(job, &game, opts.text(&BOOK), alphabeta && depth.is_none())?;
    let ask = match opts.text(&TARGET) {
        None => Ask::Value,
        Some(t) => Ask::Decide(super::parse_internal(&game, &root, "target", t)?),
    };
    let guess = match opts.text(&GUESS) {
        None => None,
        Some(t) => {
            let g = super::parse_internal(&game, &root, "guess", t)?;
            let (lo, hi) = game.value_bounds(&root);
            if g < lo || g > hi {
                return Err(SolveError::bad(format!(
                    "option guess: '{}' is outside the value bounds [{}, {}]",
                    t.trim(),
                    game.value_to_json(&root, lo),
                    game.value_to_json(&root, hi)
                )));
            }
            if !alphabeta || depth.is_some() || matches!(ask, Ask::Decide(_)) {
                return Err(SolveError::bad(
                    "option 'guess' is for the exact value by alphabeta (no 'depth', no 'target')",
                ));
            }
            Some(g)
        }
    };
    if !alphabeta && matches!(ask, Ask::Decide(_)) {
        return Err(SolveError::bad(
            "option 'target' is for alphabeta and the proof-number algorithms",
        ));
    }
    if alphabeta && weak && (depth.is_some() || matches!(ask, Ask::Decide(_))) {
        return Err(SolveError::bad(
            "option 'weak' is for the exact value (no 'depth', no 'target')",
        ));
    }
    if depth.is_some() && matches!(ask, Ask::Decide(_)) {
        return Err(SolveError::bad(
            "options 'depth' and 'target' cannot be combined",
        ));
    }
    // The family's options that another of its kernels reads.
    if let Some(spec) = OPTIONS
        .iter()
        .find(|s| !s.applies_to(&job.algorithm) && job.options.contains_key(s.name))
    {
        return Err(SolveError::bad(format!(
            "option '{}' is for {}",
            spec.name,
            spec.only.join(", ")
        )));
    }
    opts.finish()?;
    Ok(Box::new(ZeroSumJob {
        job: job.clone(),
        search,
        game,
        root,
        depth,
        ask,
        engine: engine::Config {
            depth,
            ..engine::Config::default()
        },
        weak,
        memory_mb,
        threads,
        guess,
        table: OnceLock::new(),
        book,
    }))
}

/// The `eval` option of depth-limited search: `features` (the game's weighted-feature
/// evaluator, values scaled so that a real win is above every estimate; see `search::eval`) or
/// `game` (the game's built-in `evaluate`). `default` is the game's choice when the option is
/// absent. Only the kernels that read `eval` (`alphabeta` and `minimax`, this family's option
/// table says so) use an evaluator, and only with a `depth`.
pub fn wants_features<L: KernelList>(job: &JobSpec, default: bool) -> Result<bool, SolveError> {
    let depth_limited = L::find(&job.algorithm).is_some_and(|k| k.reads(EVAL.name))
        && job.options.contains_key(DEPTH.name);
    match Opts::new(&job.options, "option").choice_given(&EVAL)? {
        None => Ok(default && depth_limited),
        Some("game") => Ok(false),
        Some("features") if !catalogue::feature_games().contains(&job.game.as_str()) => {
            Err(SolveError::bad(format!(
                "option 'eval=features': game '{}' has no feature evaluator (games with one: {})",
                job.game,
                catalogue::feature_games().join(", ")
            )))
        }
        Some("features") if depth_limited => Ok(true),
        Some("features") => Err(SolveError::bad(
            "option 'eval=features' is for alphabeta or minimax with a 'depth'",
        )),
        Some(other) => Err(SolveError::Internal(format!("eval={other}"))),
    }
}

/// Prepares a two-player job on `game`, or on `features(game)` (the game with its weighted-feature
/// evaluator) when [`wants_features`] says so; `default` is the game's choice without `eval`.
pub fn zero_sum_or_features<G, E, L>(
    job: &JobSpec,
    game: G,
    default: bool,
    features: fn(G) -> Evaluated<G, E>,
    res: &Resources,
) -> Result<Box<dyn PreparedJob>, SolveError>
where
    G: Exact,
    E: Evaluator<G>,
    L: KernelList,
{
    if wants_features::<L>(job, default)? {
        zero_sum::<_, L>(job, features(game), res)
    } else {
        zero_sum::<_, L>(job, game, res)
    }
}

/// The `book=FILE` option (exact alphabeta, games whose solver reads a book): FILE is a plain
/// file name in the game's data folder, so every worker finds the same book.
fn load_book<G: Exact>(
    job: &JobSpec,
    game: &G,
    name: Option<&str>,
    exact_alphabeta: bool,
) -> Result<Option<std::sync::Arc<G::Book>>, SolveError> {
    let Some(name) = name else { return Ok(None) };
    if !game.takes_book() {
        return Err(SolveError::bad(format!(
            "option 'book' is for connect4 boards of the fast solver, not game '{}' with these parameters",
            job.game
        )));
    }
    if !exact_alphabeta {
        return Err(SolveError::bad(
            "option 'book' is for exact alphabeta (no 'depth')",
        ));
    }
    game.load_book(name)
        .map(Some)
        .map_err(|e| SolveError::bad(format!("option {e}")))
}

/// What the engine gives a job: the outcome, the deepest finished iteration, and why it stopped
/// early (depth-limited search).
type EngineRun<M> = (minimax::Outcome<M>, u32, Option<StopReason>);

/// Node budget of the depth-limited search that gives a stopped exact job its move (see
/// `stopped_move`): a few tens of milliseconds, small next to the limit that stopped the job.
const STOPPED_MOVE_NODES: u64 = 100_000;

/// Nodes of that search per millisecond of the job's time limit, at most: at the engine's
/// usual rates a tenth of the job's time or less.
const STOPPED_MOVE_NODES_PER_MS: u64 = 100;

/// Depth cap of that search; the node budget ends it first on any board worth searching.
const STOPPED_MOVE_MAX_DEPTH: u32 = 64;

impl<G: Exact> ZeroSumJob<G> {
    /// The job's table (made on first use).
    fn table(&self) -> Result<&engine::Table, SolveError> {
        self.table
            .get_or_init(|| {
                engine::Table::take(engine::table_bytes(
                    &self.game,
                    &self.root,
                    Some(self.memory_mb),
                ))
            })
            .as_ref()
            .map_err(|e| SolveError::Internal(format!("option memory_mb: {e}")))
    }

    /// The first guess of an exact job without `guess`: the game's own ([`Exact::first_guess`]),
    /// none for weak jobs (their scale is -1..1).
    fn default_guess(&self) -> Option<i32> {
        if self.weak {
            return None;
        }
        self.game.first_guess(&self.root)
    }

    /// The move a stopped exact job answers with when no probe failed high: iterative deepening
    /// with the game's evaluator, one thread, on a small table of its own, within
    /// [`STOPPED_MOVE_NODES`] nodes (or the job's smaller node limit, or
    /// [`STOPPED_MOVE_NODES_PER_MS`] per millisecond of its time limit), so the answer is
    /// deterministic. The deepest finished iteration gives the move; `None` when none finished.
    fn stopped_move(&self) -> Option<engine::Outcome<G::Move>> {
        let cfg = engine::Config {
            depth: Some(STOPPED_MOVE_MAX_DEPTH),
            threads: 1,
            ..self.engine.clone()
        };
        // Small next to what the job was allowed: a job of a millisecond gets a search of
        // [`STOPPED_MOVE_NODES_PER_MS`] nodes, not of 100,000 (the coordinator runs it, off
        // its lock but on its planning thread, for every such job).
        let by_time = self.job.limits.time_ms.map_or(u64::MAX, |t| {
            t.saturating_mul(STOPPED_MOVE_NODES_PER_MS).max(1)
        });
        let budget = self
            .job
            .limits
            .node_limit
            .map_or(STOPPED_MOVE_NODES, |n| n.min(STOPPED_MOVE_NODES))
            .min(by_time);
        let table = engine::Table::with_bytes(1 << 20).ok()?;
        let ctl = Control::with_limits(None, Some(budget));
        let e = engine::search(
            &self.game,
            &self.root,
            -engine::INF,
            engine::INF,
            &cfg,
            &table,
            &ctl,
        )?;
        e.best_move.is_some().then_some(e)
    }

    /// Runs the engine on the root with a window; also returns the deepest finished iteration
    /// and why it stopped early (depth-limited search).
    fn engine(
        &self,
        alpha: i32,
        beta: i32,
        ctl: &Control,
    ) -> Result<EngineRun<G::Move>, SolveError> {
        // The job's `threads` option, else the threads the runner gives (`--threads`).
        let cfg = engine::Config {
            threads: self.threads.unwrap_or(ctl.threads()),
            ..self.engine.clone()
        };
        let table = self.table()?;
        // Exact search: the game's own solver when it has one (Connect Four, Othello).
        let own = match cfg.depth {
            None => self.game.exact_search(
                &self.root,
                alpha,
                beta,
                cfg.threads,
                table,
                self.book.as_deref(),
                ctl,
            ),
            // Depth-limited: the game's own when it has one for this depth (Othello solves
            // exactly once the depth covers every empty square).
            Some(d) => self
                .game
                .depth_search(&self.root, d, alpha, beta, cfg.threads, table, ctl),
        };
        let e = match own {
            Some(e) => e,
            None => engine::search(&self.game, &self.root, alpha, beta, &cfg, table, ctl),
        }
        .ok_or_else(|| super::stopped(ctl))?;
        let o = minimax::Outcome {
            value: e.value,
            best_move: e.best_move,
            pv: e.pv,
            nodes: e.nodes,
            leaves: 0,
        };
        Ok((o, e.depth, e.stopped))
    }

    /// The root's bounds on the scale the planner sees: the game's values, or -1..1 when weak.
    fn root_bounds(&self) -> (i32, i32) {
        let (lo, hi) = self.game.value_bounds(&self.root);
        if self.weak {
            (lo.signum(), hi.signum())
        } else {
            (lo, hi)
        }
    }

    fn output(
        &self,
        o: minimax::Outcome<G::Move>,
        value: serde_json::Value,
        raw: RawBounds,
        ms: u64,
    ) -> TaskOutput {
        let mut extra = Extra::default();
        let mut s = self.root.clone();
        let mut pv = Vec::new();
        for &m in &o.pv {
            pv.push(serde_json::Value::from(self.game.format_move(&s, m)));
            self.game.apply(&mut s, m);
        }
        extra.insert("pv".into(), pv.into());
        if let Some(d) = self.depth {
            extra.insert("depth".into(), d.into());
        }
        TaskOutput {
            value,
            best_move: o.best_move.map(|m| self.game.format_move(&self.root, m)),
            nodes: o.nodes,
            elapsed_ms: ms,
            raw: Some(raw),
            extra,
            proof: None,
        }
    }

    /// Null-window probe "value >= target": returns fail-soft bounds.
    fn probe(&self, target: i32, ctl: &Control) -> Result<TaskOutput, SolveError> {
        let t0 = std::time::Instant::now();
        let (lo, hi) = self.root_bounds();
        let ms = || t0.elapsed().as_millis() as u64;
        if target <= lo || target > hi {
            // Decided by the bounds alone.
            let holds = target <= lo;
            let raw = RawBounds {
                lower: lo,
                upper: hi,
            };
            let mut out = TaskOutput {
                raw: Some(raw),
                elapsed_ms: ms(),
                ..TaskOutput::default()
            };
            out.extra.proved = Some(Some(holds));
            return Ok(out);
        }
        // Weak: targets 0 and 1 mean the same on both scales (value >= 1 is a win, value >= 0
        // not a loss), and fail-soft bounds map to their signs.
        let (o, _, _) = self.engine(target - 1, target, ctl)?;
        let v = if self.weak { o.value.signum() } else { o.value };
        let raw = if o.value >= target {
            RawBounds {
                lower: v,
                upper: hi,
            }
        } else {
            RawBounds {
                lower: lo,
                upper: v,
            }
        };
        let holds = o.value >= target;
        let mut out = self.output(o, serde_json::Value::Null, raw, ms());
        if !holds {
            out.best_move = None;
            out.extra.remove("pv");
        }
        out.extra.proved = Some(Some(holds));
        Ok(out)
    }
}

impl<G: Exact> Drop for ZeroSumJob<G> {
    fn drop(&mut self) {
        // The next job of the same table size reuses the memory (see engine::table).
        if let Some(Ok(table)) = self.table.take() {
            table.recycle();
        }
    }
}

impl<G: Exact> PreparedJob for ZeroSumJob<G> {
    fn job(&self) -> &JobSpec {
        &self.job
    }

    fn plan_shape(&self) -> PlanShape {
        match (self.search, self.ask, self.depth) {
            (Search::Alphabeta, Ask::Value, None)
                if !self.game.is_terminal(&self.root) && !self.game.one_task(&self.root) =>
            {
                let (lower, upper) = self.root_bounds();
                let step = if self.weak { 1 } else { self.game.value_step() };
                let guess = match self.guess {
                    Some(g) if self.weak => Some(g.signum()),
                    Some(g) => Some(g),
                    None => self.default_guess(),
                };
                PlanShape::Probes {
                    lower,
                    upper,
                    step,
                    guess,
                }
            }
            _ => PlanShape::Single,
        }
    }

    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError> {
        let t0 = std::time::Instant::now();
        match (task, self.ask) {
            (TaskKind::Probe { target }, _) => self.probe(*target, ctl),
            (TaskKind::Whole, Ask::Decide(target)) => self.probe(target, ctl),
            (TaskKind::Whole, Ask::Value) => {
                let (o, reached, stopped) = match self.search {
                    Search::Minimax => {
                        let o = minimax::minimax(&self.game, &self.root, self.depth, ctl)
                            .ok_or_else(|| super::stopped(ctl))?;
                        (o, 0, None)
                    }
                    // Weak: the window (-1, 1) around a draw decides the sign (fail-soft: a
                    // value at or below -1 is a loss, at or above 1 a win).
                    _ if self.weak => self.engine(-1, 1, ctl)?,
                    _ => self.engine(-engine::INF, engine::INF, ctl)?,
                };
                let value = if self.weak {
                    o.value.signum().into()
                } else {
                    self.game.value_to_json(&self.root, o.value)
                };
                let v = if self.weak { o.value.signum() } else { o.value };
                let raw = RawBounds { lower: v, upper: v };
                let mut out = self.output(o, value, raw, t0.elapsed().as_millis() as u64);
                if self.search == Search::Alphabeta && self.depth.is_some() {
                    // Iterative deepening: the deepest finished iteration, and whether a limit
                    // stopped it early.
                    out.extra.insert("depth".into(), reached.into());
                    if let Some(r) = stopped {
                        out.extra.stopped = Some(r);
                    }
                }
                Ok(out)
            }
            (other, _) => Err(SolveError::Internal(other.does_not_apply())),
        }
    }

    fn show_value(&self, raw: i32) -> serde_json::Value {
        if self.weak {
            raw.into()
        } else {
            self.game.value_to_json(&self.root, raw)
        }
    }

    /// Probes: bounds that answer the target within the root's value range. Whole tasks: exact
    /// searches give exact bounds in the range and the value they show; depth-limited ones a
    /// number. Every best move is legal at the root.
    /// Outputs carry a `pv` (a legal line from the root) and a `depth` (at most the job's), a
    /// decision's `proved`, a depth-limited search's `stopped`, and nothing else.
    fn check_output(&self, task: &TaskKind, out: &TaskOutput) -> Result<(), String> {
        use super::check;
        check::only_keys(out, &["proved", "stopped"], &["pv", "depth"])?;
        check::pv(&self.game, &self.root, out)?;
        check::count(out, "depth", self.depth.map_or(MAX_DEPTH, u64::from))?;
        check::best_move(&self.game, &self.root, out)?;
        if check::is_stopped(out) {
            return Ok(());
        }
        let (lo, hi) = self.root_bounds();
        match (task, self.ask) {
            (&TaskKind::Probe { target }, _) | (TaskKind::Whole, Ask::Decide(target)) => {
                check::probe_answer(out, target, lo, hi)?;
                if !out.value.is_null() {
                    return Err("a decision reports bounds, not a value".into());
                }
            }
            (TaskKind::Whole, Ask::Value) if self.depth.is_none() => {
                let raw = out.raw.ok_or("an exact search reported no bounds")?;
                check::raw_in(&raw, lo, hi)?;
                if !raw.is_exact() {
                    return Err("an exact search reported a range, not a value".into());
                }
                if out.value != self.show_value(raw.lower) {
                    return Err(format!(
                        "value {} is not the value of its bounds ({})",
                        check::clip_value(&out.value),
                        self.show_value(raw.lower)
                    ));
                }
            }
            (TaskKind::Whole, Ask::Value) => {
                // Depth-limited: an estimate, possibly outside the exact values, that its
                // bounds pin.
                check::number(&out.value, "value")?;
                if let Some(r) = out.raw {
                    if !r.is_exact() || r.lower.unsigned_abs() > MAX_INTERNAL_TARGET as u32 {
                        return Err("a depth-limited search reports one value as its bounds".into());
                    }
                    if out.value != self.show_value(r.lower) {
                        return Err(format!(
                            "value {} is not the value of its bounds ({})",
                            check::clip_value(&out.value),
                            self.show_value(r.lower)
                        ));
                    }
                }
            }
            (other, _) => return Err(other.does_not_apply()),
        }
        Ok(())
    }

    fn finish_probes(&self, bounds: RawBounds, probes: &[TaskOutput]) -> TaskOutput {
        // The probe that proved the final lower bound carries a move that reaches it.
        let best = probes
            .iter()
            .rev()
            .find(|p| p.best_move.is_some() && p.raw.map(|r| r.lower) == Some(bounds.lower));
        let mut fallback_nodes = 0;
        let mut out = match best {
            Some(p) => p.clone(),
            // A limit stopped the plan before the final lower bound's probe gave a move: the
            // move of the highest probe that failed high (it reaches at least that probe's
            // bound), else the move of a depth-limited search with the evaluator. Neither is
            // proved best; the bounds below say what is proved.
            None if probes.iter().any(|p| p.raw.is_none()) => {
                let failed_high = probes
                    .iter()
                    .filter(|p| p.best_move.is_some())
                    .filter_map(|p| p.raw.map(|r| (r.lower, p)))
                    .max_by_key(|(lower, _)| *lower);
                match failed_high {
                    Some((_, p)) => p.clone(),
                    // The time was up before any probe was leased: no search on the
                    // coordinator for a job that got none on a worker.
                    None if probes.iter().all(crate::plan::unstarted) => TaskOutput::default(),
                    None => {
                        let mut out = TaskOutput::default();
                        if let Some(e) = self.stopped_move() {
                            fallback_nodes = e.nodes;
                            out.best_move =
                                e.best_move.map(|m| self.game.format_move(&self.root, m));
                            out.extra.insert("best_move_depth".into(), e.depth.into());
                        }
                        out
                    }
                }
            }
            None => {
                // No probe failed high: the value is the smallest possible, every move reaches it.
                let mut moves = Vec::new();
                self.game.legal_moves(&self.root, &mut moves);
                TaskOutput {
                    best_move: moves.first().map(|&m| self.game.format_move(&self.root, m)),
                    ..TaskOutput::default()
                }
            }
        };
        out.nodes = probes.iter().map(|p| p.nodes).sum::<u64>() + fallback_nodes;
        out.raw = Some(bounds);
        out.extra.proved = None;
        let show = |v: i32| {
            if self.weak {
                serde_json::Value::from(v)
            } else {
                self.game.value_to_json(&self.root, v)
            }
        };
        out.value = if bounds.is_exact() {
            show(bounds.lower)
        } else {
            serde_json::Value::Null
        };
        out.extra.insert(
            "bounds".into(),
            serde_json::json!([show(bounds.lower), show(bounds.upper)]),
        );
        if self.weak {
            out.extra.insert("weak".into(), true.into());
        }
        out.extra.insert("probes".into(), probes.len().into());
        out
    }
}

/// Explicit trees: a kernel for trees of any kind (MCTS), else the kind of tree decides which
/// hook of the job's kernel prepares it.
pub fn tree<L: KernelList>(
    job: &JobSpec,
    res: &Resources,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let tree = Tree::parse(&job.position).map_err(|e| SolveError::bad(format!("position: {e}")))?;
    let tree = match L::tree(&job.algorithm, job, tree, res) {
        Ok(prepared) => return prepared,
        Err(tree) => tree,
    };
    let chance_kernel =
        L::find(&job.algorithm).is_some_and(|a| a.serves.contains(&Shape::ChanceTree));
    match tree.kind() {
        TreeKind::MinMax if job.options.contains_key("weak") => Err(SolveError::bad(
            "option 'weak' does not apply to trees (their values are leaf numbers, not win/draw/loss)",
        )),
        TreeKind::MinMax if !chance_kernel => zero_sum_at::<_, L>(job, tree, 0, res),
        TreeKind::MinMax | TreeKind::Chance => {
            L::chance(&job.algorithm, job, tree, 0, false, true, res)
                .unwrap_or_else(|| Err(kernel::does_not_apply::<L>(job, Shape::ChanceTree)))
        }
        TreeKind::MultiPlayer => L::multi_tree(&job.algorithm, job, tree)
            .unwrap_or_else(|| Err(kernel::does_not_apply::<L>(job, Shape::MultiTree))),
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::run_local;
    use crate::registry::{prepare, PlanShape};
    use crate::search::Control;
    use crate::wire::JobSpec;

    fn guess_of(
        game: &str,
        params: &[(&str, &str)],
        position: &str,
        options: &[(&str, &str)],
    ) -> Option<i32> {
        let job = JobSpec::new(game, position, "alphabeta")
            .with_params(params)
            .with_options(options);
        match prepare(&job).unwrap().plan_shape() {
            PlanShape::Probes { guess, .. } => guess,
            other => panic!("{game} '{position}': not a probe plan: {other:?}"),
        }
    }

    /// Exact Connect Four jobs bisect by default, on every board size; `guess=V` sets where the
    /// probes start; weak jobs keep their bisection of -1..1.
    #[test]
    fn connect4_exact_jobs_bisect_unless_given_a_guess() {
        assert_eq!(guess_of("connect4", &[], "", &[]), None);
        assert_eq!(guess_of("connect4", &[], "4433", &[]), None);
        assert_eq!(
            guess_of("connect4", &[], "4433", &[("guess", "1")]),
            Some(100)
        );
        assert_eq!(
            guess_of("connect4", &[], "", &[("guess", "-3")]),
            Some(-300)
        );
        assert_eq!(guess_of("connect4", &[], "", &[("guess", "0")]), Some(0));
        assert_eq!(guess_of("connect4", &[], "", &[("weak", "true")]), None);
        // A board too big for the fast path (the generic engine), and a small one.
        let big = [("width", "9"), ("height", "7")];
        assert_eq!(guess_of("connect4", &big, "", &[]), None);
        assert_eq!(guess_of("connect4", &big, "", &[("guess", "1")]), Some(100));
        let small = [("width", "5"), ("height", "4")];
        assert_eq!(guess_of("connect4", &small, "", &[]), None);
    }

    /// With a guess at the win boundary (`guess=1`), exact Connect Four values through the planner equal a
    /// full-window search (itself checked against minimax) on a small board, for every root of
    /// 3 to 6 stones (13 to 16 empty cells: probe plans), with values of every sign.
    #[test]
    fn connect4_guessed_plans_stay_exact() {
        use crate::games::connect4::{solver, Connect4};
        use crate::model::Game;
        use crate::search::engine::{Table, INF};
        let g = Connect4::<u64>::new(5, 4, 1).unwrap();
        let mut signs = std::collections::BTreeSet::new();
        let mut layer = vec![String::new()];
        for stones in 1..=6 {
            let mut next = Vec::new();
            for p in &layer {
                for c in 1..=5 {
                    let m = format!("{p}{c}");
                    if g.parse_position(&m).is_ok_and(|s| !g.is_terminal(&s)) {
                        next.push(m);
                    }
                }
            }
            // Every 7th position of each layer of 3 stones or more.
            layer = next;
            if stones < 3 {
                continue;
            }
            for moves in layer.iter().step_by(7) {
                let s = g.parse_position(moves).unwrap();
                let table = Table::with_bytes(1 << 16).unwrap();
                let ctl = Control::unlimited();
                let truth = solver::search(&g, &s, -INF, INF, 1, &table, None, &ctl)
                    .unwrap()
                    .value;
                let job = JobSpec::new("connect4", moves, "alphabeta")
                    .with_params(&[("width", "5"), ("height", "4")])
                    .with_options(&[("guess", "1")]);
                let prepared = prepare(&job).unwrap();
                let r = run_local(prepared.as_ref(), &ctl).unwrap();
                assert_eq!(r.value, serde_json::json!(truth / 100), "5x4 '{moves}'");
                assert!(r.best_move.is_some(), "5x4 '{moves}': no best move");
                assert!(
                    r.extra.contains_key("probes"),
                    "5x4 '{moves}': a probe plan"
                );
                signs.insert(truth.signum());
            }
        }
        assert_eq!(signs.len(), 3, "wins, draws and losses: {signs:?}");
    }
}
