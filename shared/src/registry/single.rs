//! The single-player family: NMCS and NRPA over any [`SinglePlayer`] game.
//!
//! Options (all checked here; unknown keys are refused; the user's table: docs/API.md, section
//! 5.7): `nmcs` takes `level` and `seed`; `nrpa` takes `level`, `iterations`, `alpha`, `adapt`
//! ([`AdaptRule`]), `seed`, `threads`, `parallel` and `batch` ([`crate::search::nrpa::Scheme`]),
//! `runs` and `across` (tasks across workers: independent runs, or rounds on one shared policy,
//! docs/nrpa.md), `stop_at` and `checkpoint_s`.
//!
//! Values: `value` is the best score found (a JSON integer when whole), `best_move` is null,
//! `sequence` lists the moves in the game's notation and `position` is a position text that
//! replays them (a `.psol` file for Morpion). NRPA jobs are planned as `runs` run tasks; run `i`
//! uses the planner's seed for `i`, and its output carries `checkpoint` (the top-level policy and
//! best sequences). A run task whose `input` is `{"checkpoint": C}` resumes from `C` under the
//! same options, so a restarted coordinator continues a long job: it stores the checkpoint a run
//! reports with its progress ([`PreparedJob::resume_task`]) and hands the task out with it when
//! it is leased again. The merged result keeps the best run, sums the rollouts (`nodes`) and lists
//! `run_scores`.

use super::kernel::{self, Group};
use super::spec::{self, DefaultValue, Spec};
use super::{Opts, PlanShape, PreparedJob, Resources, SolveError};
use crate::model::single::SinglePlayer;
use crate::search::nrpa::{self, AdaptRule, Checkpoint, NrpaOptions, Scheme};
use crate::search::{nmcs, Control, StopReason};
use crate::wire::{
    Extra, JobSpec, KernelProgress, ResumeInput, RoundInput, RoundResult, TaskKind, TaskOutput,
};
use serde::Deserialize;

/// Why the level bounds: each level multiplies the work by about the sequence length.
const LEVEL_WHY: &str = "each level multiplies the work by the sequence length; records use 3 to 5";

/// `level` of `nmcs` (0: one random rollout).
pub const NMCS_LEVEL: Spec = Spec::uint(
    "level",
    0,
    8,
    DefaultValue::UInt(2),
    "nesting level",
    LEVEL_WHY,
)
.for_algorithms(&["nmcs"]);
/// `level` of `nrpa`.
pub const NRPA_LEVEL: Spec = Spec::uint(
    "level",
    1,
    8,
    DefaultValue::UInt(3),
    "nesting level",
    LEVEL_WHY,
)
.for_algorithms(&["nrpa"]);
/// `iterations` (N) of `nrpa`.
pub const ITERATIONS: Spec = Spec::uint(
    "iterations",
    1,
    10_000,
    DefaultValue::UInt(100),
    "iterations per level (N)",
    "the literature uses 100; with across=shared it is the number of tasks",
)
.for_algorithms(&["nrpa"]);
/// `alpha` of `nrpa`.
pub const ALPHA: Spec = Spec::float(
    "alpha",
    1e-6,
    1e3,
    DefaultValue::Float(1.0),
    "policy learning rate",
    "positive; larger rates only saturate the policy",
)
.for_algorithms(&["nrpa"]);
/// `batch` of `nrpa` (shared scheme).
pub const BATCH: Spec = Spec::uint(
    "batch",
    1,
    1024,
    DefaultValue::Depends("threads"),
    "top-level iterations started from the same policy",
    "a few times the most threads",
)
.for_algorithms(&["nrpa"]);
/// `runs` of `nrpa`: planner tasks.
pub const RUNS: Spec = Spec::uint(
    "runs",
    1,
    1024,
    DefaultValue::UInt(1),
    "independent runs (tasks) for several workers",
    "each run is a task kept by the coordinator; a thousand workers is a large cluster",
)
.for_algorithms(&["nrpa"]);
/// `stop_at` of `nrpa`.
pub const STOP_AT: Spec = Spec::float(
    "stop_at",
    -1e15,
    1e15,
    DefaultValue::Unset("none"),
    "stop once a score reaches it",
    "finite",
)
.for_algorithms(&["nrpa"]);
/// `checkpoint_s` of `nrpa`.
pub const CHECKPOINT_S: Spec = Spec::float(
    "checkpoint_s",
    0.1,
    1e7,
    DefaultValue::Float(30.0),
    "seconds between a long run's checkpoints",
    "a tenth of a second to four months",
)
.for_algorithms(&["nrpa"]);

/// `adapt` of `nrpa`: the policy's adaptation rule.
pub const ADAPT: Spec = Spec::choice(
    "adapt",
    &["seed", "layers"],
    DefaultValue::Word("seed"),
    "Rosin's Adapt, or morpion-lpp's layered one",
)
.for_algorithms(&["nrpa"]);
/// `threads` of `nrpa`: one unless given (the search a job describes does not change with the
/// runner), cut to the runner's.
pub const THREADS: Spec = spec::THREADS
    .with_default(DefaultValue::UInt(1))
    .for_algorithms(&["nrpa"]);
/// `parallel` of `nrpa`: how a task's threads share the work.
pub const PARALLEL: Spec = Spec::choice(
    "parallel",
    &["shared", "independent"],
    DefaultValue::Word("shared"),
    "top-level batches from one policy, or complete runs",
)
.for_algorithms(&["nrpa"]);
/// `across` of `nrpa`: how the `runs` tasks cooperate.
pub const ACROSS: Spec = Spec::choice(
    "across",
    &["independent", "shared"],
    DefaultValue::Word("independent"),
    "complete runs, or rounds sharing the top-level policy",
)
.for_algorithms(&["nrpa"]);

/// Options of the single-player family (`nmcs`, `nrpa`).
pub const OPTIONS: &[Spec] = &[
    NMCS_LEVEL,
    NRPA_LEVEL,
    spec::SEED,
    ITERATIONS,
    ALPHA,
    ADAPT,
    THREADS,
    PARALLEL,
    BATCH,
    RUNS,
    ACROSS,
    STOP_AT,
    CHECKPOINT_S,
];

pub enum Algo {
    Nmcs {
        level: u32,
        seed: u64,
    },
    Nrpa {
        opts: NrpaOptions,
        runs: u32,
        /// `across=shared`: rounds of `runs` tasks sharing the top-level policy.
        rounds: bool,
    },
}

/// A prepared single-player job.
pub struct SingleJob<G: SinglePlayer> {
    job: JobSpec,
    game: G,
    root: G::State,
    algo: Algo,
}

/// The single-player family: `nmcs`, `nrpa`.
pub static GROUP: Group = Group {
    title: "Single-player",
    options: OPTIONS,
    skip: kernel::skip_none,
};

/// The settings of an `nrpa` job.
pub fn nrpa_settings(opts: &Opts, res: &Resources) -> Result<Algo, SolveError> {
    // Cut down to what the runner offers; `batch` defaults to the threads asked for, so
    // the search it describes does not change with the runner.
    let asked: usize = opts.uint_value(&THREADS)?;
    let threads = asked.min(res.threads);
    let scheme = match opts.choice(&PARALLEL)? {
        "independent" => Scheme::Independent,
        _ => Scheme::Shared,
    };
    let adapt = match opts.choice(&ADAPT)? {
        "layers" => AdaptRule::Layers,
        _ => AdaptRule::Seed,
    };
    // Checked before it becomes a Duration (which panics on NaN or negative seconds).
    let checkpoint_s: f64 = opts.float_value(&CHECKPOINT_S)?;
    let o = NrpaOptions {
        level: opts.uint_value(&NRPA_LEVEL)?,
        iterations: opts.uint_value(&ITERATIONS)?,
        alpha: opts.float_value(&ALPHA)?,
        adapt,
        seed: opts.uint_value(&spec::SEED)?,
        threads,
        batch: opts.uint_or(&BATCH, asked)?,
        scheme,
        stop_at: opts.float(&STOP_AT)?,
        checkpoint_every: std::time::Duration::from_secs_f64(checkpoint_s),
    };
    let runs: u32 = opts.uint_value(&RUNS)?;
    let rounds = opts.choice(&ACROSS)? == "shared";
    if rounds && (asked > 1 || o.batch > 1) {
        return Err(SolveError::bad(
                "option 'across=shared' runs one top-level iteration per task: use threads=1 and batch=1",
            ));
    }
    Ok(Algo::Nrpa {
        opts: o,
        runs,
        rounds,
    })
}

/// Prepares a job over a single-player game: parses the position, then the kernel's settings
/// (`read`).
pub fn single<G: SinglePlayer>(
    job: &JobSpec,
    game: G,
    res: &Resources,
    read: fn(&Opts, &Resources) -> Result<Algo, SolveError>,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let root = game
        .parse_position(&job.position)
        .map_err(|e| SolveError::bad(format!("position: {e}")))?;
    let opts = Opts::new(&job.options, "option");
    let algo = read(&opts, res)?;
    opts.finish()?;
    Ok(Box::new(SingleJob {
        job: job.clone(),
        game,
        root,
        algo,
    }))
}

/// A score as JSON: an integer when whole, null when nothing was found.
pub fn score_json(x: f64) -> serde_json::Value {
    if !x.is_finite() {
        serde_json::Value::Null
    } else if x.fract() == 0.0 && x.abs() < 9.0e15 {
        (x as i64).into()
    } else {
        x.into()
    }
}

impl<G: SinglePlayer> SingleJob<G> {
    fn output(
        &self,
        score: f64,
        seq: &[G::Move],
        rollouts: u64,
        stopped: Option<StopReason>,
        ms: u64,
    ) -> TaskOutput {
        let mut extra = Extra::default();
        let mut s = self.root.clone();
        let mut texts = Vec::with_capacity(seq.len());
        for &m in seq {
            texts.push(self.game.format_move(&s, m));
            self.game.apply(&mut s, m);
        }
        extra.sequence = Some(texts);
        extra.insert(
            "position".into(),
            self.game.sequence_text(&self.root, seq).into(),
        );
        extra.insert("rollouts".into(), rollouts.into());
        extra.stopped = stopped;
        TaskOutput {
            value: score_json(score),
            best_move: None,
            nodes: rollouts,
            elapsed_ms: ms,
            raw: None,
            extra,
            proof: None,
        }
    }
}

/// The moves `m` from the job's root as texts.
fn move_texts<G: SinglePlayer>(job: &SingleJob<G>, m: &[G::Move]) -> Vec<String> {
    let mut s = job.root.clone();
    m.iter()
        .map(|&mv| {
            let t = job.game.format_move(&s, mv);
            job.game.apply(&mut s, mv);
            t
        })
        .collect()
}

/// A run's improvements `(ms, rollouts, best)` as its `history`: a list of `[ms, rollouts,
/// best]`.
fn history_json(history: &[(u64, u64, f64)]) -> serde_json::Value {
    let points: Vec<serde_json::Value> = history
        .iter()
        .map(|(ms, n, s)| serde_json::json!([ms, n, score_json(*s)]))
        .collect();
    points.into()
}

/// A run's `history`: at most [`super::check::MAX_POINTS`] points `[ms, rollouts, best]`, the
/// best never above the value.
fn check_history(h: &serde_json::Value, value: Option<f64>) -> Result<(), String> {
    let points = h.as_array().ok_or("'history' is not a list")?;
    if points.len() > super::check::MAX_POINTS {
        return Err("'history' is too long".into());
    }
    for p in points {
        let ok = match p.as_array().map(Vec::as_slice) {
            Some([ms, n, best]) => {
                ms.is_u64()
                    && n.is_u64()
                    && (best.is_null()
                        || best.as_f64().is_some_and(|b| {
                            value.is_some_and(|v| b <= v + 1e-9 * v.abs().max(1.0))
                        }))
            }
            _ => false,
        };
        if !ok {
            return Err("a 'history' point is not [ms, rollouts, best up to the value]".into());
        }
    }
    Ok(())
}

impl<G: SinglePlayer> SingleJob<G> {
    /// A checkpoint as the kernel writes it: read back (its sequences replayed) and written
    /// again, it is the same JSON.
    fn canonical_checkpoint(&self, c: &serde_json::Value) -> Result<(), String> {
        let read = Checkpoint::from_json(&self.game, &self.root, c)?;
        if read.to_json(&self.game, &self.root) != *c {
            return Err("a checkpoint carries more, or other, than the kernel writes".into());
        }
        Ok(())
    }

    /// The start checkpoint of a round task from its [`RoundInput`] (as JSON: `input` of the
    /// task).
    fn round_start_of(
        &self,
        opts: &NrpaOptions,
        width: usize,
        input: &serde_json::Value,
    ) -> Result<Checkpoint<G::Move>, String> {
        let input =
            RoundInput::deserialize(input).map_err(|e| format!("round input is malformed: {e}"))?;
        self.round_start_from(opts, width, &input)
    }

    /// The start checkpoint of a round: `from` with the previous round's results merged.
    fn round_start_from(
        &self,
        opts: &NrpaOptions,
        width: usize,
        input: &RoundInput,
    ) -> Result<Checkpoint<G::Move>, String> {
        let from = match &input.from {
            None | Some(serde_json::Value::Null) => None,
            Some(c) => Some(Checkpoint::from_json(&self.game, &self.root, c)?),
        };
        let mut results = Vec::new();
        for r in &input.results {
            let seq = |v: &Option<serde_json::Value>, k: &str| {
                let v = v.clone().unwrap_or_default();
                nrpa::sequence_from_json(&self.game, &self.root, &v, k).map(|s| s.map(|(_, m)| m))
            };
            results.push(nrpa::RoundResult {
                sub: seq(&r.sub, "sub")?,
                found: seq(&r.found, "found")?,
            });
        }
        nrpa::round_start(&self.game, &self.root, opts, width, from.as_ref(), &results)
    }

    /// One task of the shared-policy scheme across workers (top-level iteration `index`).
    fn round_task(
        &self,
        opts: &NrpaOptions,
        width: usize,
        index: u32,
        input: &serde_json::Value,
        ctl: &Control,
        t0: std::time::Instant,
    ) -> Result<TaskOutput, SolveError> {
        let start = self
            .round_start_of(opts, width, input)
            .map_err(SolveError::bad)?;
        let first = index - index % width as u32;
        if start.done != first {
            return Err(SolveError::bad(format!(
                "round input has {} iterations done, task {index} needs {first}",
                start.done
            )));
        }
        let o = nrpa::round_iteration(&self.game, &self.root, opts, &start, index as u64, ctl)
            .map_err(SolveError::bad)?;
        let found = o.result.found.clone().unwrap_or_default();
        let mut out = self.output(
            o.score,
            &found,
            o.rollouts,
            o.stopped,
            t0.elapsed().as_millis() as u64,
        );
        let seq =
            |m: &Option<Vec<G::Move>>| nrpa::sequence_json(&self.game, &self.root, m.as_deref());
        out.extra.round.sub = Some(seq(&o.result.sub));
        out.extra.round.found = Some(seq(&o.result.found));
        if index == first {
            // One task per round carries the round's start: the next round's `from`.
            out.extra.round.round_start = Some(start.to_json(&self.game, &self.root));
        }
        out.extra.final_round = o.result.sub.is_none() || o.reached;
        out.extra.insert("history".into(), history_json(&o.history));
        Ok(out)
    }

    /// The result of a rounds plan from its outputs in iteration order: the last round's start
    /// with the last round's results is the final checkpoint; its best is the result.
    fn merge_rounds(
        &self,
        opts: &NrpaOptions,
        width: usize,
        outs: &[TaskOutput],
    ) -> Result<TaskOutput, String> {
        let last_start = outs
            .iter()
            .rposition(|o| o.extra.round.round_start.is_some())
            .ok_or("no round output carries its start")?;
        let input = RoundInput {
            round: 0,
            from: outs[last_start].extra.round.round_start.clone(),
            results: outs[last_start..].iter().map(RoundResult::of).collect(),
        };
        let c = self.round_start_from(opts, width, &input)?;
        let (score, moves) = c.best.clone().unwrap_or((f64::NEG_INFINITY, Vec::new()));
        let nodes: u64 = outs.iter().map(|o| o.nodes).sum();
        let mut out = self.output(
            score,
            &moves,
            nodes,
            None,
            outs.iter().map(|o| o.elapsed_ms).sum(),
        );
        out.extra.stopped = outs.iter().find_map(|o| o.extra.stopped);
        // Best score over the run, one point per finished task: [iteration, rollouts, best].
        let mut best = f64::NEG_INFINITY;
        let mut rollouts = 0u64;
        let mut hist = Vec::new();
        for (i, o) in outs.iter().enumerate() {
            rollouts += o.nodes;
            let v = o.value.as_f64().unwrap_or(f64::NEG_INFINITY);
            if v > best {
                best = v;
                hist.push(serde_json::json!([i, rollouts, score_json(v)]));
            }
        }
        out.extra.insert("history".into(), hist.into());
        out.extra.insert("iterations_done".into(), c.done.into());
        out.extra.checkpoint = Some(c.to_json(&self.game, &self.root));
        Ok(out)
    }
}

impl<G: SinglePlayer> PreparedJob for SingleJob<G> {
    fn job(&self) -> &JobSpec {
        &self.job
    }

    /// A score with the `sequence` that reaches it: the moves are legal from the root, end the
    /// game, and the score of where they end is the value (null: nothing found, no moves). No
    /// best move. Besides: the `position` the sequence gives, `rollouts` (the nodes), a
    /// `history` of improvements up to the value, NRPA's checkpoints and round results (each
    /// read back and written again exactly as the kernel writes it, so they carry nothing
    /// else), and nothing else. Stopped outputs are checked the same way.
    fn check_output(&self, task: &TaskKind, out: &TaskOutput) -> Result<(), String> {
        use super::check;
        let planned = matches!(
            (&self.algo, task),
            (Algo::Nmcs { .. }, TaskKind::Whole)
                | (Algo::Nrpa { .. }, TaskKind::Whole | TaskKind::Run { .. })
        );
        if !planned {
            return Err(format!("{} tasks do not apply to this job", task.name()));
        }
        let rounds = matches!(self.algo, Algo::Nrpa { rounds: true, .. });
        let nrpa = matches!(self.algo, Algo::Nrpa { .. });
        let typed: &[&str] = match (nrpa, rounds) {
            (false, _) => &["sequence", "stopped"],
            (true, false) => &["sequence", "stopped", "checkpoint"],
            (true, true) => &[
                "sequence",
                "stopped",
                "round_start",
                "sub",
                "found",
                "final",
            ],
        };
        let display: &[&str] = if nrpa {
            &["position", "rollouts", "history"]
        } else {
            &["position", "rollouts"]
        };
        check::only_keys(out, typed, display)?;
        if out.best_move.is_some() || out.raw.is_some() {
            return Err("single-player results have no best move and no bounds".into());
        }
        let value = check::number(&out.value, "value")?;
        let list = out.extra.sequence.as_deref().unwrap_or_default();
        let (moves, end) = check::replay(&self.game, &self.root, list, "sequence")?;
        match value {
            None if !moves.is_empty() => {
                return Err("a sequence without its score".into());
            }
            None => {}
            Some(v) => {
                if !self.game.is_terminal(&end) {
                    return Err("the sequence of a score does not end the game".into());
                }
                let score = self.game.score(&end);
                if (score - v).abs() > 1e-9 * score.abs().max(1.0) {
                    return Err(format!(
                        "value {} is not the score {} of its sequence",
                        check::short(v),
                        check::short(score)
                    ));
                }
            }
        }
        if let Some(p) = out.extra.get("position") {
            if p.as_str() != Some(self.game.sequence_text(&self.root, &moves).as_str()) {
                return Err("'position' is not the position of the sequence".into());
            }
        }
        if check::count(out, "rollouts", u64::MAX)?.is_some_and(|r| r != out.nodes) {
            return Err("'rollouts' is not the nodes".into());
        }
        if let Some(h) = out.extra.get("history") {
            check_history(h, value)?;
        }
        if let Some(c) = &out.extra.checkpoint {
            let list = c.as_array().ok_or("'checkpoint' is not a list")?;
            if list.len() as u64 > spec::MAX_THREADS {
                return Err("more checkpoints than threads".into());
            }
            for c in list {
                self.canonical_checkpoint(c)?;
            }
        }
        let r = &out.extra.round;
        if let Some(c) = &r.round_start {
            self.canonical_checkpoint(c)?;
        }
        for (what, seq) in [("sub", &r.sub), ("found", &r.found)] {
            if let Some(v) = seq {
                let read = nrpa::sequence_from_json(&self.game, &self.root, v, what)?;
                if let Some((_, m)) = &read {
                    check::replay(&self.game, &self.root, &move_texts(self, m), what)?;
                }
                let again =
                    nrpa::sequence_json(&self.game, &self.root, read.map(|r| r.1).as_deref());
                if again != *v {
                    return Err(format!("'{what}' is not a sequence with its score"));
                }
            }
        }
        Ok(())
    }

    /// A run task of `across=independent` resumes from the checkpoint its progress carries
    /// (every 30 s), when the run makes one checkpoint: the shared scheme inside the worker, or
    /// one thread. (With `parallel=independent` and several threads each thread reports its
    /// own checkpoint, and a resume needs all of them at once: such a task restarts.) Rounds
    /// tasks need nothing: their stored inputs are the checkpoints.
    fn resume_task(&self, task: &TaskKind, progress: &serde_json::Value) -> Option<TaskKind> {
        let Algo::Nrpa {
            opts,
            rounds: false,
            ..
        } = &self.algo
        else {
            return None;
        };
        let TaskKind::Run { index, seed, .. } = task else {
            return None;
        };
        if opts.scheme == Scheme::Independent && opts.threads > 1 {
            return None;
        }
        let c = KernelProgress::read(progress)
            .checkpoint
            .filter(|c| c.is_object())?;
        let input = ResumeInput {
            checkpoint: Some(vec![c]),
        };
        Some(TaskKind::Run {
            index: *index,
            seed: *seed,
            input: serde_json::to_value(input).ok()?,
        })
    }

    fn plan_shape(&self) -> PlanShape {
        match &self.algo {
            Algo::Nmcs { .. } => PlanShape::Single,
            Algo::Nrpa {
                opts,
                runs,
                rounds: true,
            } => PlanShape::Rounds {
                width: *runs,
                iterations: opts.iterations,
                // The seed of run 0 of a runs plan: `runs=W across=shared` is then the
                // single-task run with `batch=W`.
                seed: crate::plan::run_seed(opts.seed, 0),
            },
            Algo::Nrpa { opts, runs, .. } => PlanShape::Runs {
                count: *runs,
                base_seed: opts.seed,
            },
        }
    }

    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError> {
        let t0 = std::time::Instant::now();
        match (&self.algo, task) {
            (Algo::Nmcs { level, seed }, TaskKind::Whole) => {
                let o = nmcs::nmcs(&self.game, &self.root, *level, *seed, ctl);
                Ok(self.output(
                    o.score,
                    &o.sequence,
                    o.rollouts,
                    o.stopped,
                    t0.elapsed().as_millis() as u64,
                ))
            }
            (
                Algo::Nrpa {
                    opts,
                    runs,
                    rounds: true,
                },
                TaskKind::Run { index, seed, input },
            ) => {
                let opts = NrpaOptions {
                    seed: *seed,
                    ..opts.clone()
                };
                self.round_task(&opts, *runs as usize, *index, input, ctl, t0)
            }
            (Algo::Nrpa { opts, .. }, TaskKind::Whole | TaskKind::Run { .. }) => {
                let mut opts = opts.clone();
                let mut resume = None;
                if let TaskKind::Run { seed, input, .. } = task {
                    opts.seed = *seed;
                    if let Some(list) = ResumeInput::read(input)
                        .map_err(SolveError::bad)?
                        .checkpoint
                    {
                        let parsed = list
                            .iter()
                            .map(|v| Checkpoint::from_json(&self.game, &self.root, v))
                            .collect::<Result<Vec<_>, _>>()
                            .map_err(SolveError::bad)?;
                        resume = Some(parsed);
                    }
                }
                let o = nrpa::nrpa(&self.game, &self.root, &opts, resume, ctl)
                    .map_err(SolveError::bad)?;
                let mut out = self.output(
                    o.score,
                    &o.sequence,
                    o.rollouts,
                    o.stopped,
                    t0.elapsed().as_millis() as u64,
                );
                let cps: Vec<serde_json::Value> = o
                    .checkpoints
                    .iter()
                    .map(|c| c.to_json(&self.game, &self.root))
                    .collect();
                out.extra.checkpoint = Some(cps.into());
                out.extra.insert("history".into(), history_json(&o.history));
                Ok(out)
            }
            (_, other) => Err(SolveError::Internal(other.does_not_apply())),
        }
    }

    fn merge_runs(&self, runs: &[TaskOutput]) -> TaskOutput {
        if let Algo::Nrpa {
            opts,
            runs: width,
            rounds: true,
        } = &self.algo
        {
            let opts = NrpaOptions {
                seed: crate::plan::run_seed(opts.seed, 0),
                ..opts.clone()
            };
            return self
                .merge_rounds(&opts, *width as usize, runs)
                .unwrap_or_else(|e| {
                    let mut o = TaskOutput::default();
                    o.extra.error = Some(e);
                    o
                });
        }
        // The best run wins (the first among equals, so the merge does not depend on timing).
        let mut best: Option<&TaskOutput> = None;
        for r in runs {
            let better = match best {
                None => true,
                Some(b) => {
                    r.value.as_f64().unwrap_or(f64::NEG_INFINITY)
                        > b.value.as_f64().unwrap_or(f64::NEG_INFINITY)
                }
            };
            if better {
                best = Some(r);
            }
        }
        let mut out = best.cloned().unwrap_or_default();
        out.nodes = runs.iter().map(|r| r.nodes).sum();
        out.elapsed_ms = runs.iter().map(|r| r.elapsed_ms).max().unwrap_or(0);
        out.extra.checkpoint = None;
        out.extra.insert("rollouts".into(), out.nodes.into());
        out.extra.insert(
            "run_scores".into(),
            runs.iter()
                .map(|r| r.value.clone())
                .collect::<Vec<_>>()
                .into(),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{run_local, Planner};
    use crate::registry::prepare;

    fn job(
        game: &str,
        params: &[(&str, &str)],
        position: &str,
        algo: &str,
        options: &[(&str, &str)],
    ) -> JobSpec {
        JobSpec::new(game, position, algo)
            .with_params(params)
            .with_options(options)
    }

    /// The `position` of a result, fed back as a position, replays to the reported score: a
    /// terminal position whose value is its score at every NMCS level (a level-1 or deeper
    /// call on a finished game once said null) and with NRPA.
    fn replays(j: &JobSpec, result_position: &str, value: &serde_json::Value) {
        let runs = [("nmcs", "0"), ("nmcs", "1"), ("nmcs", "2"), ("nrpa", "1")];
        for (algo, level) in runs {
            let mut again = j.clone();
            again.position = result_position.into();
            again.algorithm = algo.into();
            again.options = [("level".to_string(), level.to_string())]
                .into_iter()
                .collect();
            let p = prepare(&again).unwrap();
            let r = run_local(p.as_ref(), &Control::unlimited()).unwrap();
            assert_eq!(
                &r.value, value,
                "the returned position replays to its score (terminal), {algo} level {level}"
            );
            assert_eq!(
                r.extra.sequence.as_ref().unwrap().len(),
                0,
                "and is terminal ({algo} level {level})"
            );
        }
    }

    #[test]
    fn nrpa_and_nmcs_jobs_run_and_replay() {
        let j = job(
            "weakschur",
            &[("k", "3")],
            "",
            "nrpa",
            &[("level", "2"), ("iterations", "30"), ("seed", "3")],
        );
        let p = prepare(&j).unwrap();
        let r = run_local(p.as_ref(), &Control::unlimited()).unwrap();
        assert!(r.value.as_i64().unwrap() >= 20 && r.best_move.is_none());
        assert_eq!(r.nodes, 900);
        assert!(r.extra.checkpoint.is_none());
        replays(&j, r.extra["position"].as_str().unwrap(), &r.value);
        let again = run_local(prepare(&j).unwrap().as_ref(), &Control::unlimited()).unwrap();
        assert_eq!(
            (&again.value, &again.extra.sequence),
            (&r.value, &r.extra.sequence)
        );

        let j = job(
            "morpion",
            &[("variant", "5D")],
            "",
            "nmcs",
            &[("level", "1"), ("seed", "1")],
        );
        let r = run_local(prepare(&j).unwrap().as_ref(), &Control::unlimited()).unwrap();
        let text = r.extra["position"].as_str().unwrap();
        assert!(text.starts_with("(28,28)\n"));
        replays(&j, text, &r.value);
    }

    #[test]
    fn record_position_is_terminal_with_its_score() {
        let path = crate::games::data::data_dir().join("nrpa/morpion/5D_82_rosin.psol");
        let text = std::fs::read_to_string(path).unwrap();
        let j = job(
            "morpion",
            &[("variant", "5D")],
            &text,
            "nrpa",
            &[("level", "1"), ("iterations", "3")],
        );
        let r = run_local(prepare(&j).unwrap().as_ref(), &Control::unlimited()).unwrap();
        assert_eq!(r.value, serde_json::json!(82));
        let e = prepare(&job(
            "morpion",
            &[("variant", "5T")],
            "(28,28)\n(27,27) / 0\n(27,27) / 0",
            "nrpa",
            &[],
        ))
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            "position: move 2 ('(27,27) / 0'): (27,27) is already a dot"
        );
    }

    #[test]
    fn bad_options_are_one_line_errors() {
        for (opts, needle) in [
            (vec![("level", "0")], "level=0"),
            (vec![("level", "9")], "level=9"),
            (vec![("runs", "4000000000")], "runs=4000000000"),
            (vec![("iterations", "10001")], "iterations=10001"),
            (vec![("batch", "0")], "batch=0"),
            (vec![("depth", "3")], "unknown option 'depth'"),
            (vec![("parallel", "both")], "parallel=both"),
            (vec![("adapt", "moves")], "adapt=moves"),
            (vec![("alpha", "-1")], "alpha"),
            (vec![("iterations", "x")], "iterations=x"),
            (vec![("runs", "0")], "runs"),
            (vec![("checkpoint_s", "0")], "checkpoint_s"),
            (vec![("checkpoint_s", "-5")], "checkpoint_s"),
            (vec![("checkpoint_s", "NaN")], "checkpoint_s"),
            (vec![("checkpoint_s", "inf")], "checkpoint_s"),
        ] {
            let e = prepare(&job("weakschur", &[], "", "nrpa", &opts))
                .err()
                .unwrap()
                .to_string();
            assert!(e.contains(needle) && !e.contains('\n'), "{e}");
        }
        let e = prepare(&job("weakschur", &[("k", "9")], "", "nrpa", &[]))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("k=9"), "{e}");
        let e = prepare(&job("weakschur", &[], "", "alphabeta", &[]))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("single-player"), "{e}");
        let e = prepare(&job("morpion", &[("variant", "6T")], "", "nrpa", &[]))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("6T"), "{e}");
        let e = prepare(&job("morpion", &[("code", "dot")], "", "nrpa", &[]))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("code 'dot'"), "{e}");
    }

    /// Two run tasks (two workers) against one with the same seed: run 0 is the same run, so the
    /// merged best is at least as good.
    #[test]
    fn two_runs_are_at_least_as_good_as_one() {
        let base = [("level", "2"), ("iterations", "20"), ("seed", "5")];
        let one = run_local(
            prepare(&job("weakschur", &[("k", "4")], "", "nrpa", &base))
                .unwrap()
                .as_ref(),
            &Control::unlimited(),
        )
        .unwrap();
        let mut opts = base.to_vec();
        opts.push(("runs", "2"));
        let p = prepare(&job("weakschur", &[("k", "4")], "", "nrpa", &opts)).unwrap();
        let mut planner = Planner::new(p.plan_shape(), 2);
        let tasks = planner.next_tasks();
        assert_eq!(tasks.len(), 2, "both runs are issued at once");
        let outs: Vec<TaskOutput> = std::thread::scope(|sc| {
            let hs: Vec<_> = tasks
                .iter()
                .map(|t| sc.spawn(|| p.run(t, &Control::unlimited()).unwrap()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (t, o) in tasks.iter().zip(outs) {
            planner.on_result(t, o);
        }
        assert!(planner.is_done());
        let merged = planner.finish(p.as_ref());
        assert!(merged.value.as_f64().unwrap() >= one.value.as_f64().unwrap());
        assert_eq!(merged.nodes, 2 * one.nodes);
        assert_eq!(merged.extra["run_scores"].as_array().unwrap()[0], one.value);
    }

    /// A run stopped part-way resumes from its checkpoint (as a restarted coordinator would)
    /// and ends exactly where the uninterrupted run ends.
    #[test]
    fn run_task_resumes_from_its_checkpoint() {
        let j = job(
            "weakschur",
            &[("k", "4")],
            "",
            "nrpa",
            &[("level", "2"), ("iterations", "10"), ("seed", "8")],
        );
        let p = prepare(&j).unwrap();
        let task = TaskKind::Run {
            index: 0,
            seed: 77,
            input: serde_json::Value::Null,
        };
        let full = p.run(&task, &Control::unlimited()).unwrap();
        let part = p.run(&task, &Control::with_limits(None, Some(35))).unwrap();
        assert_eq!(part.extra.stopped, Some(StopReason::Nodes));
        let resume = TaskKind::Run {
            index: 0,
            seed: 77,
            input: serde_json::json!({"checkpoint": part.extra.checkpoint}),
        };
        let rest = p.run(&resume, &Control::unlimited()).unwrap();
        assert_eq!(
            (&rest.value, &rest.extra.sequence),
            (&full.value, &full.extra.sequence)
        );
        assert_eq!(rest.extra.checkpoint, full.extra.checkpoint);
        let bad = TaskKind::Run {
            index: 0,
            seed: 78,
            input: serde_json::json!({"checkpoint": part.extra.checkpoint}),
        };
        assert!(matches!(
            p.run(&bad, &Control::unlimited()),
            Err(SolveError::BadInput(_))
        ));
    }
    /// The shared-policy scheme across workers (`across=shared`): rounds of 2 tasks on two
    /// threads (two workers) replay the in-process shared scheme with batch 2 exactly, also when
    /// the planner is rebuilt mid-way from the stored tasks and results (a restarted
    /// coordinator: the stored round inputs are the checkpoints); the best replays.
    #[test]
    fn rounds_match_the_shared_scheme_and_survive_a_restart() {
        // Also with the layers Adapt, which the rounds apply too (on Morpion, where layers
        // hold several moves; on Weak Schur every layer is one move).
        rounds_case(("weakschur", ("k", "4")), "seed");
        rounds_case(("morpion", ("variant", "5D")), "layers");
    }

    fn rounds_case(game: (&str, (&str, &str)), adapt: &str) {
        let base = [
            ("level", "2"),
            ("iterations", "6"),
            ("seed", "4"),
            ("adapt", adapt),
        ];
        let mut in_proc = base.to_vec();
        in_proc.push(("batch", "2"));
        let direct = run_local(
            prepare(&job(game.0, &[game.1], "", "nrpa", &in_proc))
                .unwrap()
                .as_ref(),
            &Control::unlimited(),
        )
        .unwrap();
        let mut opts = base.to_vec();
        opts.extend([("runs", "2"), ("across", "shared")]);
        let j = job(game.0, &[game.1], "", "nrpa", &opts);
        let p = prepare(&j).unwrap();
        let shape = p.plan_shape();
        let mut planner = Planner::new(shape.clone(), 2);
        let (mut issued, mut results) = (Vec::new(), Vec::<(TaskKind, TaskOutput)>::new());
        let mut restarted = false;
        loop {
            let mut tasks = planner.next_tasks();
            issued.extend(tasks.iter().cloned());
            if !restarted && results.len() == 2 {
                // Round 1 is issued, no result in: the coordinator restarts.
                planner = Planner::restore(shape.clone(), 2, &issued, &results, &[]);
                restarted = true;
                assert!(planner.next_tasks().is_empty(), "nothing is issued twice");
                tasks = planner.pending().to_vec();
                assert_eq!(tasks.len(), 2);
            }
            if tasks.is_empty() {
                break;
            }
            assert!(tasks.len() <= 2);
            let outs: Vec<TaskOutput> = std::thread::scope(|sc| {
                let hs: Vec<_> = tasks
                    .iter()
                    .map(|t| sc.spawn(|| p.run(t, &Control::unlimited()).unwrap()))
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for (t, o) in tasks.iter().zip(outs) {
                assert!(planner.on_result(t, o.clone()));
                results.push((t.clone(), o));
            }
        }
        assert!(restarted && planner.is_done());
        assert_eq!(results.len(), 6);
        let merged = planner.finish(p.as_ref());
        assert_eq!(
            (&merged.value, &merged.extra.sequence, merged.nodes),
            (&direct.value, &direct.extra.sequence, direct.nodes)
        );
        assert_eq!(merged.extra.checkpoint.as_ref().unwrap()["done"], 6);
        let prog = planner.progress(p.as_ref());
        let by_round = prog["best_by_round"].as_array().unwrap();
        assert_eq!(by_round.len(), 3);
        assert!(by_round.windows(2).all(|w| w[0].as_f64() <= w[1].as_f64()));
        assert_eq!(by_round[2].as_f64(), merged.value.as_f64());
        replays(
            &j,
            merged.extra["position"].as_str().unwrap(),
            &merged.value,
        );

        // A tampered round input (an illegal move in a result) is refused.
        let (task, _) = results
            .iter()
            .find(|(t, _)| matches!(t, TaskKind::Run { index: 2, .. }))
            .unwrap();
        let TaskKind::Run { index, seed, input } = task.clone() else {
            unreachable!()
        };
        let mut input = input;
        input["results"][0]["sub"]["moves"][0] = "9".into();
        let bad = TaskKind::Run { index, seed, input };
        assert!(matches!(
            p.run(&bad, &Control::unlimited()),
            Err(SolveError::BadInput(_))
        ));
        let e = prepare(&job("weakschur", &[], "", "nrpa", &[("across", "both")]))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("across=both"), "{e}");
    }
}
