//! What the planner needs of a job: how it may be split ([`PlanShape`]), how to run one task and
//! combine outputs ([`PreparedJob`]), and why a job or task gives no result ([`SolveError`]). The
//! registry implements [`PreparedJob`] for every family; the planner owns the contract.

use crate::search::Control;
use crate::wire::{JobSpec, RawBounds, TaskKind, TaskOutput};

pub use crate::model::settings::SolveError;

/// How a job may be split into tasks. The planner (`plan`) turns this into tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanShape {
    /// One [`TaskKind::Whole`] task.
    Single,
    /// The exact value by threshold probes ([`TaskKind::Probe`]) over the closed interval
    /// `[lower, upper]` of internal integer values; the result is assembled by
    /// [`PreparedJob::finish_probes`].
    Probes {
        /// Smallest possible value.
        lower: i32,
        /// Largest possible value.
        upper: i32,
        /// Every possible value is a multiple of this (`ZeroSum::value_step`), so are `lower`
        /// and `upper`; probes and bounds stay on these values.
        step: i32,
        /// A first guess of the value (`guess=V`, or the game's own: Othello, Connect Four): probes start
        /// at "value >= guess" and step outward from it (1, 2, 4, ... steps) on the side the
        /// answers point to, then bisect once the value is bracketed (MTD(f)-like). `None`:
        /// bisection from the middle (Pons' order).
        guess: Option<i32>,
    },
    /// `count` independent [`TaskKind::Run`] tasks whose outputs are combined by
    /// [`PreparedJob::merge_runs`].
    Runs {
        /// Number of runs.
        count: u32,
        /// Seed of run 0; run i uses a seed derived from it.
        base_seed: u64,
    },
    /// Rounds of `width` [`TaskKind::Run`] tasks, `iterations` tasks in all (task `index` is
    /// round `index / width`). The tasks of a round get one input built from the previous
    /// round's outputs ([`crate::wire::RoundInput`]: `from` is the first output's
    /// [`crate::wire::RoundReport::round_start`], `results` every output's `sub` and `found`), so
    /// the kernel can carry state from round to round (NRPA's shared top-level policy). An output
    /// with [`crate::wire::Extra::final_round`] ends the plan. The outputs, in index order, are
    /// combined by [`PreparedJob::merge_runs`].
    Rounds {
        /// Tasks per round.
        width: u32,
        /// Tasks in all.
        iterations: u32,
        /// Seed given to every task.
        seed: u64,
    },
    /// Analysis (`analyse=all`): one sub-plan per legal root move, each the plan of the position
    /// after the move ([`TaskKind::Move`] wraps its tasks). The sub-plans run side by side within
    /// the job's parallelism; the result is assembled by [`PreparedJob::finish_moves`].
    Moves(Vec<MovePlan>),
    /// Job-level proof-number search (`jlpns`, see `planner/joblevel.rs`): the coordinator keeps
    /// the top of a proof-number tree over `value >= t` (the value from the root's side, internal
    /// scale); each task is one leaf ([`TaskKind::Leaf`]) that a worker searches with a budget
    /// and solves or expands. With `target` the plan decides that one threshold; without it the
    /// thresholds follow a probe plan over `[lower, upper]` (on the grid of `step`, starting at
    /// `guess` when given), the tree and every proven bound carried from one to the next. The
    /// result is assembled by [`PreparedJob::finish_probes`], one output per finished threshold.
    JobLevel {
        /// Smallest possible value.
        lower: i32,
        /// Largest possible value.
        upper: i32,
        /// Spacing of the possible values.
        step: i32,
        /// First guess of the value (exact plans).
        guess: Option<i32>,
        /// The one threshold of a decision plan.
        target: Option<i32>,
        /// The job named no leaf budget: its default, sized for one worker, is divided by the
        /// plan's parallelism (up to `planner/joblevel.rs`'s `AUTO_BUDGET_MAX_DIV`), so that
        /// more workers get more, shorter leaves.
        auto_budget: bool,
    },
    /// A retrograde build (`plan/planner/retro.rs`): databases `0..sizes.len()` in order, each
    /// by rounds of [`TaskKind::Retro`] tasks over index ranges of `split` entries until a
    /// round changes nothing, then one [`TaskKind::RetroSeal`] task that makes its file.
    Retro {
        /// Entries of each database, `sizes[d]` for database `d`.
        sizes: Vec<u64>,
        /// Entries per round task (the last range of a database may be shorter).
        split: u64,
    },
}

/// The sub-plan of one root move in a [`PlanShape::Moves`] plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovePlan {
    /// The move, in the game's notation.
    pub mv: String,
    /// The plan of the position after it (on that position's scale): `Probes` or `Single`.
    pub shape: PlanShape,
    /// Whether the side to move changes with the move, so that the root's view of a child's
    /// internal value is its negation.
    pub negate: bool,
}

/// A job whose game, position, algorithm and options have been checked; ready to run tasks.
pub trait PreparedJob: Send + Sync {
    /// The job as submitted.
    fn job(&self) -> &JobSpec;
    /// How the planner may split it.
    fn plan_shape(&self) -> PlanShape;
    /// Runs one task. `ctl` carries the limits, the stop flag and the progress sink.
    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError>;
    /// Positions this process's kernels proved for this job since the last call, for the
    /// job's other workers (job-level leaves of games whose solver exports them,
    /// [`crate::games::Exact::export_proved`]); empty by default.
    fn take_proved(&self) -> Vec<crate::wire::Proved> {
        Vec::new()
    }
    /// Entries another worker's [`PreparedJob::take_proved`] gave, for this process's
    /// kernels' tables; ignored by default.
    fn learn_proved(&self, entries: &[crate::wire::Proved]) {
        let _ = entries;
    }
    /// An internal integer value of the root (a probe target or bound) as the outside world
    /// sees it (docs/API.md, "Values"); progress reports go through it. Default: the integer.
    fn show_value(&self, raw: i32) -> serde_json::Value {
        raw.into()
    }
    /// For [`PlanShape::Probes`]: the output for the final bounds, given every probe's output
    /// (e.g. the best move comes from the probe that proved the lower bound).
    fn finish_probes(&self, bounds: RawBounds, probes: &[TaskOutput]) -> TaskOutput {
        let _ = probes;
        TaskOutput {
            value: if bounds.is_exact() {
                bounds.lower.into()
            } else {
                serde_json::Value::Null
            },
            raw: Some(bounds),
            ..TaskOutput::default()
        }
    }
    /// For [`PlanShape::Runs`]: combines the outputs of all runs into one.
    fn merge_runs(&self, runs: &[TaskOutput]) -> TaskOutput {
        runs.iter()
            .max_by(|a, b| {
                let (x, y) = (a.value.as_f64(), b.value.as_f64());
                x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
            })
            .cloned()
            .unwrap_or_default()
    }
    /// For [`PlanShape::Moves`]: the prepared job of the position after `mv` (a root move),
    /// which runs, checks and finishes that move's tasks. Default: none.
    fn child(&self, mv: &str) -> Option<&dyn PreparedJob> {
        let _ = mv;
        None
    }
    /// For [`PlanShape::Moves`]: the result from each root move's final output (on the child's
    /// scale) and its bounds from the root's point of view (internal scale), in plan order.
    /// Default: the first move's output.
    fn finish_moves(&self, moves: &[(String, RawBounds, TaskOutput)]) -> TaskOutput {
        moves.first().map(|m| m.2.clone()).unwrap_or_default()
    }
    /// Checks an output that a worker reported for `task` before the coordinator stores it: the
    /// value's type and range for the game, a best move that is legal at the root, bounds inside
    /// the value range. A worker is trusted to run kernels, not to be right about the game: a
    /// failed check is treated as a failed attempt. Default: accepted.
    fn check_output(&self, task: &TaskKind, out: &TaskOutput) -> Result<(), String> {
        let _ = (task, out);
        Ok(())
    }
    /// For a progress report of `task` that carries a checkpoint: the task (same kind and
    /// index, its input replaced) that continues from that checkpoint exactly like the
    /// uninterrupted task. The coordinator stores it and hands it out when the task is leased
    /// again (a restart or an expired lease). Default: none (the task restarts from scratch).
    fn resume_task(&self, _task: &TaskKind, _progress: &serde_json::Value) -> Option<TaskKind> {
        None
    }
    /// A job that has a whole-job driver of its own for this process (a retrograde build runs
    /// its rounds on the caller's thread pool and writes its databases to the data folder):
    /// [`crate::plan::run_local`] runs it instead of the plan. Default: none.
    fn run_here(&self, ctl: &Control) -> Option<Result<TaskOutput, SolveError>> {
        let _ = ctl;
        None
    }
}
