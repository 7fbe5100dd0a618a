//! Job planning: a job becomes tasks, task results become more tasks or the final result.
//!
//! One [`Planner`] serves both ways a job runs: in-process ([`run_local`], used by
//! `gamesolver solve` without a coordinator) and in the coordinator, which stores every issued
//! task and every result. A planner is a deterministic function of the job and the results it
//! has been fed, in order, so a restarted coordinator rebuilds it by feeding the stored results
//! again.
//!
//! Shapes ([`PlanShape`]):
//! - `Single`: one task, its output is the result.
//! - `Probes`: the exact value by threshold probes "value >= t" over `[lower, upper]`. With
//!   `parallelism` k the planner keeps up to k probes in flight at targets that split the open
//!   interval evenly (k-ary search); with k = 1 it bisects, leaning outward as Pons' solver does
//!   (far probes are cheap), and near 0 (a narrow interval touching the win boundary) asks the win
//!   boundary and the value next to it first (small values are the common ones). Every result
//!   narrows the interval with its fail-soft bound, so one probe can close more than its own
//!   question. A shape with a `guess` (MTD(f)-like) probes the guess first, then steps outward 1,
//!   2, 4, ... grid steps on the side the answers point to and bisects once bracketed (see
//!   `Planner::guess_targets`). Targets and bounds stay on the multiples of the shape's `step` (the
//!   values the game can produce: Connect Four's internal scores are multiples of 100), so no probe
//!   is spent between two possible values and no bound shows a value that cannot occur. A probe
//!   output without bounds (`raw: None`) is a probe that gave up for good (a memory limit): the
//!   plan ends there, and the prepared job reports the bounds known so far and why it stopped.
//!
//! Values inside the planner are the game's internal integers; everything it shows outside
//! ([`Planner::progress`]) goes through [`PreparedJob::show_value`], the game's own scale.
//! - `Runs`: `count` independent runs, merged by the prepared job.
//! - `Rounds`: runs in rounds of `width`; a round is issued when the previous one is complete,
//!   its input built from that round's outputs (the stored inputs are the checkpoints).

use crate::registry::{PlanShape, PreparedJob, SolveError};
use crate::search::{Control, StopReason};
use crate::wire::{JobResult, RawBounds, TaskKind, TaskOutput};

/// Derives the seed of run `index` from a base seed (SplitMix64 step, so runs differ well).
pub fn run_seed(base: u64, index: u32) -> u64 {
    let mut z = base.wrapping_add((index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The planner state of one job.
#[derive(Clone, Debug)]
pub struct Planner {
    shape: PlanShape,
    parallelism: usize,
    /// Tasks issued and not yet answered.
    pending: Vec<TaskKind>,
    /// Outputs received, in order.
    outputs: Vec<TaskOutput>,
    /// Current bounds (probe plans), multiples of `step`.
    bounds: RawBounds,
    /// Spacing of the possible values (probe plans; 1 otherwise).
    step: i32,
    /// A probe gave up without bounds: the plan ends with what is known.
    gave_up: bool,
    /// Next run index to issue (run plans).
    next_run: u32,
    /// Outputs of run tasks by index (run and rounds plans).
    by_index: Vec<(u32, TaskOutput)>,
    issued_single: bool,
}

impl Planner {
    /// A planner for `shape` that keeps up to `parallelism` tasks in flight.
    pub fn new(shape: PlanShape, parallelism: usize) -> Self {
        let (bounds, step) = match shape {
            PlanShape::Probes {
                lower, upper, step, ..
            } => (RawBounds { lower, upper }, step.max(1)),
            _ => (
                RawBounds {
                    lower: i32::MIN,
                    upper: i32::MAX,
                },
                1,
            ),
        };
        Planner {
            shape,
            parallelism: parallelism.max(1),
            pending: Vec::new(),
            outputs: Vec::new(),
            bounds,
            step,
            gave_up: false,
            next_run: 0,
            by_index: Vec::new(),
            issued_single: false,
        }
    }

    /// The largest multiple of `step` that is `<= v`.
    fn floor_step(&self, v: i32) -> i32 {
        (v as i64).div_euclid(self.step as i64) as i32 * self.step
    }

    /// The smallest multiple of `step` that is `>= v` (saturating at the largest one).
    fn ceil_step(&self, v: i32) -> i32 {
        let s = self.step as i64;
        let up = -((-(v as i64)).div_euclid(s)) * s;
        if up > i32::MAX as i64 {
            self.floor_step(i32::MAX)
        } else {
            up as i32
        }
    }

    /// Rebuilds the planner of a job from what a store kept: every task it issued, in issue
    /// order; the results received, in arrival order; and the tasks it dropped as obsolete.
    /// Because a planner is a function of these, the rebuilt one continues exactly where the
    /// lost one stopped (used by the coordinator after a restart).
    pub fn restore(
        shape: PlanShape,
        parallelism: usize,
        issued: &[TaskKind],
        results: &[(TaskKind, TaskOutput)],
        dropped: &[TaskKind],
    ) -> Self {
        let mut p = Planner::new(shape, parallelism);
        for task in issued {
            p.mark_issued(task.clone());
        }
        for (task, out) in results {
            p.on_result(task, out.clone());
        }
        for task in dropped {
            p.forget(task);
        }
        p
    }

    /// Records `task` as issued without asking for it (restore).
    fn mark_issued(&mut self, task: TaskKind) {
        match &task {
            TaskKind::Whole => self.issued_single = true,
            TaskKind::Run { index, .. } => self.next_run = self.next_run.max(index + 1),
            TaskKind::Probe { .. } => {}
        }
        self.pending.push(task);
    }

    /// Changes how many tasks may be in flight from now on (the coordinator follows the number
    /// of worker slots). Tasks already issued stay issued.
    pub fn set_parallelism(&mut self, parallelism: usize) {
        self.parallelism = parallelism.max(1);
    }

    /// Tasks issued and not yet answered or forgotten.
    pub fn pending(&self) -> &[TaskKind] {
        &self.pending
    }

    /// Current bounds of a probe plan.
    pub fn bounds(&self) -> RawBounds {
        self.bounds
    }

    /// Whether every needed result is in.
    pub fn is_done(&self) -> bool {
        match self.shape {
            PlanShape::Single => {
                self.issued_single && self.pending.is_empty() && !self.outputs.is_empty()
            }
            PlanShape::Probes { .. } => self.bounds.is_exact() || self.gave_up,
            PlanShape::Runs { count, .. } => self.outputs.len() as u32 >= count,
            PlanShape::Rounds { iterations, .. } => {
                self.by_index.len() as u32 >= iterations
                    || (self.pending.is_empty() && self.rounds_final())
            }
        }
    }

    /// Whether a rounds plan got an output that ends it (stopped, or its goal reached).
    fn rounds_final(&self) -> bool {
        self.by_index
            .iter()
            .any(|(_, o)| o.extra.get("final") == Some(&serde_json::Value::Bool(true)))
    }

    /// The input of round `round` of a rounds plan, `None` while the previous round is not
    /// complete.
    fn round_input(&self, round: u32, width: u32) -> Option<serde_json::Value> {
        if round == 0 {
            return Some(serde_json::json!({"round": 0}));
        }
        let lo = (round - 1) * width;
        let mut prev: Vec<&(u32, TaskOutput)> = self
            .by_index
            .iter()
            .filter(|(i, _)| (lo..lo + width).contains(i))
            .collect();
        if prev.len() < width as usize {
            return None;
        }
        prev.sort_by_key(|(i, _)| *i);
        let from = prev[0].1.extra.get("round_start")?.clone();
        let results: Vec<serde_json::Value> = prev
            .iter()
            .map(|(_, o)| serde_json::json!({"sub": o.extra.get("sub"), "found": o.extra.get("found")}))
            .collect();
        Some(serde_json::json!({"round": round, "from": from, "results": results}))
    }

    /// Tasks to issue now (empty while waiting for results or when done).
    pub fn next_tasks(&mut self) -> Vec<TaskKind> {
        let mut out = Vec::new();
        match self.shape {
            PlanShape::Single => {
                if !self.issued_single {
                    self.issued_single = true;
                    out.push(TaskKind::Whole);
                }
            }
            PlanShape::Runs { count, base_seed } => {
                while self.next_run < count && self.pending.len() + out.len() < self.parallelism {
                    out.push(TaskKind::Run {
                        index: self.next_run,
                        seed: run_seed(base_seed, self.next_run),
                        input: serde_json::Value::Null,
                    });
                    self.next_run += 1;
                }
            }
            PlanShape::Rounds {
                width,
                iterations,
                seed,
            } => {
                let width = width.max(1);
                let mut input: Option<(u32, serde_json::Value)> = None;
                while !self.rounds_final()
                    && self.next_run < iterations
                    && self.pending.len() + out.len() < self.parallelism
                {
                    let round = self.next_run / width;
                    if input.as_ref().map(|x| x.0) != Some(round) {
                        match self.round_input(round, width) {
                            Some(v) => input = Some((round, v)),
                            None => break,
                        }
                    }
                    out.push(TaskKind::Run {
                        index: self.next_run,
                        seed,
                        input: input.as_ref().map(|x| x.1.clone()).unwrap_or_default(),
                    });
                    self.next_run += 1;
                }
            }
            PlanShape::Probes { .. } => {
                if self.is_done() {
                    return out;
                }
                let free = self.parallelism.saturating_sub(self.pending.len());
                for t in self.probe_targets(free) {
                    out.push(TaskKind::Probe { target: t });
                }
            }
        }
        self.pending.extend(out.iter().cloned());
        out
    }

    /// Probe targets for `free` new probes, not already pending. A probe "value >= t" is useful
    /// for `lower < t <= upper`. Worked out on the grid of possible values (value / step), so
    /// that every target is a possible value.
    fn probe_targets(&self, free: usize) -> Vec<i32> {
        let step = self.step;
        let (lo, hi) = (self.bounds.lower / step, self.bounds.upper / step);
        let pending: Vec<i32> = self
            .pending
            .iter()
            .filter_map(|t| match t {
                TaskKind::Probe { target } => Some(self.ceil_step(*target) / step),
                _ => None,
            })
            .collect();
        let mut targets = Vec::new();
        if free == 0 || lo >= hi {
            return targets;
        }
        if let PlanShape::Probes {
            lower,
            upper,
            guess: Some(g),
            ..
        } = self.shape
        {
            return self.guess_targets(free, g, (lower, upper), &pending);
        }
        if self.parallelism == 1 {
            // Near 0: once the interval is at most a quarter of the initial one and touches
            // the win boundary (it holds a value <= 0 and one >= 1, or starts at 1, or ends at
            // 0), every probe left is a costly one (a proof close to the value) and the value is
            // most likely the smallest: ask the boundary itself, "value >= 1", and once it is
            // decided the next value out ("value >= 2" above it, "value >= 0" below), before
            // bisecting outward (on Connect Four's empty board this replaces two probes that
            // cost 153 M nodes, "value >= 3" and "value >= -1", by none).
            let (lo0, hi0) = match self.shape {
                PlanShape::Probes { lower, upper, .. } => {
                    (self.ceil_step(lower) / step, self.floor_step(upper) / step)
                }
                _ => (lo, hi),
            };
            let narrow = 4 * (hi as i64 - lo as i64) <= hi0 as i64 - lo0 as i64;
            if narrow && lo <= 1 && hi >= 0 {
                let t = if lo < 1 && 1 <= hi {
                    1
                } else if lo == 1 {
                    2
                } else {
                    0
                };
                let t = t.clamp(lo + 1, hi);
                if !pending.contains(&t) {
                    targets.push(t * step);
                }
                return targets;
            }
            // Pons' bisection: from the midpoint `med`, move out to half of the bound on the
            // same side of 0 (min/2 or max/2) when that is further out, then ask "value > med".
            let width = ((hi as i64 - lo as i64) / 2) as i32;
            let mut med = lo + width;
            if med <= 0 && lo / 2 < med {
                med = lo / 2;
            } else if med >= 0 && hi / 2 > med {
                med = hi / 2;
            }
            let mid = med + 1;
            let mid = mid.clamp(lo + 1, hi);
            if !pending.contains(&mid) {
                targets.push(mid * step);
            }
            return targets;
        }
        // k-ary: split the open interval (lo, hi] into pieces around the probes in flight.
        let k = (free + pending.len()) as i64;
        let width = hi as i64 - lo as i64;
        for i in 1..=k {
            let t = (lo as i64 + (width * i + k) / (k + 1)).clamp(lo as i64 + 1, hi as i64) as i32;
            if !pending.contains(&t) && !targets.contains(&(t * step)) && targets.len() < free {
                targets.push(t * step);
            }
        }
        targets
    }

    /// Probe targets for a plan with a first guess `guess` (internal scale) over the initial
    /// bounds `initial`: MTD(f)-like. While no answer has decided "value >= guess" the probe is
    /// the guess itself; once one side is known and the other bound is still the initial one,
    /// the probes step outward from the guess on that side by 1, 2, 4, ... grid steps (targets
    /// G, G+1, G+3, G+7, ... upwards, G, G-1, G-3, G-7, ... downwards); once both bounds have
    /// moved (the value is bracketed), bisection. With `free > 1` the extra probes go to the
    /// next targets of the same sequence (around the guess while it is undecided), and the
    /// k-ary split when the sequence is used up. Everything on the grid of `value / step`, a
    /// function of the bounds, the guess and the pending probes only (so restorable).
    fn guess_targets(
        &self,
        free: usize,
        guess: i32,
        initial: (i32, i32),
        pending: &[i32],
    ) -> Vec<i32> {
        let step = self.step;
        let (lo, hi) = (self.bounds.lower / step, self.bounds.upper / step);
        let (lo0, hi0) = (
            self.ceil_step(initial.0) / step,
            self.floor_step(initial.1) / step,
        );
        // A useful probe "value >= t" has lo0 < t <= hi0.
        let g = (self.floor_step(guess) / step).clamp(lo0 + 1, hi0.max(lo0 + 1));
        let mut seq: Vec<i32> = Vec::new();
        let want = free + pending.len();
        if lo < g && g <= hi {
            // Undecided: the guess, then its neighbours, nearest first, upper side first.
            seq.push(g);
            for d in 1..=(hi - lo) {
                seq.push(g + d);
                seq.push(g - d);
                if seq.len() > 2 * want + 2 {
                    break;
                }
            }
        } else if lo >= g && hi == hi0 {
            // Value >= guess, nothing above proved yet: step up, doubling.
            let mut l = lo;
            while l < hi && seq.len() <= want {
                let t = (l as i64 + (l as i64 - g as i64) + 1).min(hi as i64) as i32;
                seq.push(t);
                l = t;
            }
        } else if hi < g && lo == lo0 {
            // Value < guess, nothing below proved yet: step down, doubling.
            let mut h = hi;
            while h > lo && seq.len() <= want {
                let t = (h as i64 - (g as i64 - 1 - h as i64)).max(lo as i64 + 1) as i32;
                seq.push(t);
                h = t - 1;
            }
        } else {
            // Bracketed: bisection (no lean).
            seq.push(lo + (hi - lo - 1) / 2 + 1);
        }
        // Fallback: the k-ary split of (lo, hi].
        let k = want as i64;
        let width = hi as i64 - lo as i64;
        for i in 1..=k {
            seq.push((lo as i64 + (width * i + k) / (k + 1)) as i32);
        }
        let mut targets = Vec::new();
        for t in seq {
            let t = t.clamp(lo + 1, hi);
            if targets.len() < free && !pending.contains(&t) && !targets.contains(&(t * step)) {
                targets.push(t * step);
            }
        }
        targets
    }

    /// Feeds the output of an issued task. Unknown or repeated tasks are ignored (a result is
    /// never counted twice).
    pub fn on_result(&mut self, task: &TaskKind, output: TaskOutput) -> bool {
        let Some(pos) = self.pending.iter().position(|t| t == task) else {
            return false;
        };
        self.pending.remove(pos);
        match (&self.shape, output.raw) {
            (PlanShape::Probes { .. }, Some(r)) => {
                // A bound between two possible values means the next possible one.
                let r = RawBounds {
                    lower: self.ceil_step(r.lower),
                    upper: self.floor_step(r.upper),
                };
                self.bounds.lower = self.bounds.lower.max(r.lower);
                self.bounds.upper = self.bounds.upper.min(r.upper);
                // Bounds come from exact searches, so they can never cross; if they do, a kernel
                // is wrong, and the planner keeps the last answer's view rather than inventing one.
                if self.bounds.lower > self.bounds.upper {
                    self.bounds = r;
                }
            }
            (PlanShape::Probes { .. }, None) => self.gave_up = true,
            _ => {}
        }
        if let (PlanShape::Rounds { .. } | PlanShape::Runs { .. }, TaskKind::Run { index, .. }) =
            (&self.shape, task)
        {
            self.by_index.push((*index, output.clone()));
        }
        self.outputs.push(output);
        true
    }

    /// Pending probes whose answer can no longer change the result (their target is outside
    /// the open interval): the coordinator may cancel them.
    pub fn obsolete(&self) -> Vec<TaskKind> {
        self.pending
            .iter()
            .filter(|t| match t {
                TaskKind::Probe { target } => {
                    *target <= self.bounds.lower || *target > self.bounds.upper
                }
                _ => false,
            })
            .cloned()
            .collect()
    }

    /// Drops a pending task without a result (cancelled as obsolete).
    pub fn forget(&mut self, task: &TaskKind) {
        if let Some(pos) = self.pending.iter().position(|t| t == task) {
            self.pending.remove(pos);
        }
    }

    /// Progress as JSON (bounds for probe plans, in `job`'s value scale; runs done for run
    /// plans).
    pub fn progress(&self, job: &dyn PreparedJob) -> serde_json::Value {
        match self.shape {
            PlanShape::Single => serde_json::json!({"tasks_done": self.outputs.len()}),
            PlanShape::Probes { .. } => serde_json::json!({
                "lower": job.show_value(self.bounds.lower),
                "upper": job.show_value(self.bounds.upper),
                "probes_done": self.outputs.len(),
            }),
            PlanShape::Runs { count, .. } => {
                serde_json::json!({"runs_done": self.outputs.len(), "runs": count})
            }
            PlanShape::Rounds {
                width, iterations, ..
            } => {
                // The best score after each complete round: the best score over time.
                let mut sorted: Vec<&(u32, TaskOutput)> = self.by_index.iter().collect();
                sorted.sort_by_key(|(i, _)| *i);
                let mut best = f64::NEG_INFINITY;
                let mut by_round = Vec::new();
                for (k, (_, o)) in sorted.iter().enumerate() {
                    best = best.max(o.value.as_f64().unwrap_or(f64::NEG_INFINITY));
                    if (k + 1) % width.max(1) as usize == 0 {
                        by_round.push(serde_json::json!(best));
                    }
                }
                serde_json::json!({
                    "iterations_done": self.by_index.len(),
                    "iterations": iterations,
                    "rounds_done": by_round.len(),
                    "best": if best.is_finite() { serde_json::json!(best) } else { serde_json::Value::Null },
                    "best_by_round": by_round,
                })
            }
        }
    }

    /// Whether a limit-stopped task ends this plan with what it knows ([`TaskOutput::stopped`]
    /// fed to [`Planner::on_result`]): probe plans do, with the bounds proved so far; other
    /// plans fail as before (their tasks report their own best under a limit).
    pub fn ends_on_stop(&self, task: &TaskKind) -> bool {
        matches!(self.shape, PlanShape::Probes { .. }) && self.pending.contains(task)
    }

    /// The final output (call when [`Planner::is_done`]).
    pub fn finish(&self, job: &dyn PreparedJob) -> TaskOutput {
        match self.shape {
            PlanShape::Single => self.outputs.last().cloned().unwrap_or_default(),
            PlanShape::Probes { .. } => {
                let mut out = job.finish_probes(self.bounds, &self.outputs);
                // A limit ended the plan: say which, next to the bounds proved before it.
                let stopped = self
                    .outputs
                    .iter()
                    .find(|o| o.raw.is_none())
                    .and_then(|o| o.extra.get("stopped"));
                if let Some(r) = stopped {
                    out.extra.insert("stopped".into(), r.clone());
                }
                out
            }
            // Runs are merged in index order, not arrival order, so `run_scores[i]` is run i's
            // and a merge never depends on which worker finished first.
            PlanShape::Runs { .. } | PlanShape::Rounds { .. } => {
                let mut sorted = self.by_index.clone();
                sorted.sort_by_key(|(i, _)| *i);
                let outs: Vec<TaskOutput> = sorted.into_iter().map(|(_, o)| o).collect();
                job.merge_runs(&outs)
            }
        }
    }
}

/// Builds the job result from the final output.
pub fn job_result(job: &dyn PreparedJob, out: TaskOutput, elapsed_ms: u64) -> JobResult {
    JobResult {
        game: job.job().game.clone(),
        algorithm: job.job().algorithm.clone(),
        value: out.value,
        best_move: out.best_move,
        nodes: out.nodes,
        elapsed_ms,
        extra: out.extra,
        proof: out.proof,
    }
}

/// Runs a prepared job in this process through the planner: tasks one at a time (parallelism
/// 1), so a probe plan bisects and each kernel may use `ctl`'s threads itself.
///
/// The job's own limits apply here, whoever calls (CLI, bench, tests), as a worker applies
/// them to a leased task: `time_ms` is the budget of the whole run, from this call on;
/// `node_limit` is the budget of each task (the contract of [`crate::wire::Limits`]). Limits
/// already in `ctl` still hold (the earlier deadline, the smaller budget wins). The memory
/// budget is a job option (`memory_mb`), read by the kernel from the prepared job itself.
///
/// The tasks run on a thread with a [`crate::search::KERNEL_STACK_BYTES`] stack, sized for the
/// deepest recursion a job's bounds allow, whatever the caller's thread is.
pub fn run_local(job: &dyn PreparedJob, ctl: &Control) -> Result<JobResult, SolveError> {
    crate::search::run_on_kernel_stack(|| run_local_here(job, ctl))
}

fn run_local_here(job: &dyn PreparedJob, ctl: &Control) -> Result<JobResult, SolveError> {
    let limits = &job.job().limits;
    let deadline = limits
        .time_ms
        .map(|ms| std::time::Instant::now() + std::time::Duration::from_millis(ms));
    let mut planner = Planner::new(job.plan_shape(), 1);
    loop {
        let tasks = planner.next_tasks();
        if tasks.is_empty() {
            break;
        }
        for task in tasks {
            let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
            let task_ctl = ctl.for_task(left, limits.node_limit);
            let out = job.run(&task, &task_ctl);
            ctl.add_nodes(task_ctl.nodes());
            let out = match (out, task_ctl.should_stop()) {
                (Ok(out), _) => out,
                // A job limit stopped a probe: the plan ends with the bounds proved so far (as
                // the coordinator ends it when a worker reports the same).
                (Err(_), Some(r @ (StopReason::Time | StopReason::Nodes)))
                    if planner.ends_on_stop(&task) =>
                {
                    TaskOutput {
                        nodes: task_ctl.nodes(),
                        ..TaskOutput::stopped(r.as_str())
                    }
                }
                (Err(e), _) => return Err(e),
            };
            tracing::debug!(
                task = ?task,
                nodes = out.nodes,
                elapsed_ms = out.elapsed_ms,
                raw = ?out.raw,
                "task finished"
            );
            planner.on_result(&task, out);
        }
        ctl.report(planner.progress(job));
        if planner.is_done() {
            break;
        }
    }
    if !planner.is_done() {
        return Err(SolveError::Internal(
            "the plan ended without a result".into(),
        ));
    }
    let out = planner.finish(job);
    Ok(job_result(job, out, ctl.elapsed().as_millis() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake job whose value is `v`: probes answer with exact fail-soft bounds.
    fn answer(v: i32, t: i32) -> TaskOutput {
        TaskOutput {
            raw: Some(if v >= t {
                RawBounds {
                    lower: t,
                    upper: i32::MAX,
                }
            } else {
                RawBounds {
                    lower: i32::MIN,
                    upper: t - 1,
                }
            }),
            ..TaskOutput::default()
        }
    }

    /// A probe plan over -21..=21 without a guess, `k` probes in flight.
    fn unguessed_plan(k: usize) -> Planner {
        Planner::new(
            PlanShape::Probes {
                lower: -21,
                upper: 21,
                step: 1,
                guess: None,
            },
            k,
        )
    }

    #[test]
    fn probes_find_every_value_with_any_parallelism() {
        for k in 1..=5 {
            for v in -21..=21 {
                let mut p = unguessed_plan(k);
                let mut rounds = 0;
                while !p.is_done() {
                    let tasks = p.next_tasks();
                    assert!(!tasks.is_empty(), "stuck at {:?}", p.bounds());
                    assert!(tasks.len() <= k);
                    for t in tasks {
                        let TaskKind::Probe { target } = t else {
                            panic!()
                        };
                        assert!(p.on_result(&t, answer(v, target)));
                        assert!(
                            !p.on_result(&t, answer(v, target)),
                            "a repeated result is ignored"
                        );
                    }
                    rounds += 1;
                    assert!(rounds < 50);
                }
                assert_eq!(p.bounds(), RawBounds { lower: v, upper: v });
            }
        }
    }

    /// One probe at a time without a guess: Pons' order while the interval is wide, then, near
    /// 0, the win boundary and the value next to it (not "value >= 3" and "value >= 0" first).
    #[test]
    fn bisection_asks_the_win_boundary_once_near_zero() {
        for (v, want) in [
            (1, vec![-9, 11, -3, 6, 1, 2]),
            (0, vec![-9, 11, -3, 6, 1, 0]),
            (-1, vec![-9, 11, -3, 6, 1, 0, -1]),
            (2, vec![-9, 11, -3, 6, 1, 2, 4, 3]),
            // Far from 0: Pons' order throughout.
            (15, vec![-9, 11, 17, 14, 16, 15]),
        ] {
            let mut p = unguessed_plan(1);
            let mut asked = Vec::new();
            while !p.is_done() {
                for t in p.next_tasks() {
                    let TaskKind::Probe { target } = t else {
                        panic!()
                    };
                    asked.push(target);
                    p.on_result(&t, answer(v, target));
                }
                assert!(asked.len() < 20);
            }
            assert_eq!(asked, want, "value {v}");
            assert_eq!(p.bounds(), RawBounds { lower: v, upper: v });
        }
    }

    /// A planner rebuilt from its issued tasks and results (in any interleaving the coordinator
    /// stored) issues the same next tasks as the original.
    #[test]
    fn restore_continues_where_the_original_stopped() {
        for v in -5..=5 {
            let shape = PlanShape::Probes {
                lower: -7,
                upper: 7,
                step: 1,
                guess: None,
            };
            let mut p = Planner::new(shape.clone(), 3);
            let mut issued = Vec::new();
            let mut results = Vec::new();
            let mut rounds = 0;
            while !p.is_done() {
                let tasks = p.next_tasks();
                issued.extend(tasks.iter().cloned());
                // Answer only the first task of each round, so others stay pending.
                let t = tasks
                    .first()
                    .cloned()
                    .or_else(|| p.pending().first().cloned())
                    .unwrap();
                let TaskKind::Probe { target } = t else {
                    panic!()
                };
                p.on_result(&t, answer(v, target));
                results.push((t, answer(v, target)));
                let dropped = p.obsolete();
                for d in &dropped {
                    p.forget(d);
                }
                let all_dropped: Vec<TaskKind> = issued
                    .iter()
                    .filter(|t| !p.pending().contains(t) && !results.iter().any(|(r, _)| r == *t))
                    .cloned()
                    .collect();
                let mut q = Planner::restore(shape.clone(), 3, &issued, &results, &all_dropped);
                assert_eq!(q.bounds(), p.bounds());
                assert_eq!(q.pending(), p.pending());
                assert_eq!(q.is_done(), p.is_done());
                assert_eq!(q.clone().next_tasks(), p.clone().next_tasks());
                let _ = q.next_tasks();
                rounds += 1;
                assert!(rounds < 40);
            }
            assert_eq!(p.bounds(), RawBounds { lower: v, upper: v });
        }
        // Run plans continue with the next index, Single plans do not issue their task twice.
        let shape = PlanShape::Runs {
            count: 4,
            base_seed: 1,
        };
        let mut p = Planner::new(shape.clone(), 2);
        let issued = p.next_tasks();
        let mut q = Planner::restore(
            shape,
            2,
            &issued,
            &[(issued[0].clone(), TaskOutput::default())],
            &[],
        );
        let next = q.next_tasks();
        assert!(matches!(next[..], [TaskKind::Run { index: 2, .. }]));
        let mut s = Planner::restore(PlanShape::Single, 1, &[TaskKind::Whole], &[], &[]);
        assert!(s.next_tasks().is_empty());
    }

    /// With a value step (Connect Four's internal scale), every probe target and every bound is
    /// a possible value, also when probes answer with bounds between possible values (PNS's
    /// "value < t" gives the upper bound t - 1), and no more probes are spent than on the
    /// grid of possible values.
    #[test]
    fn probes_stay_on_the_value_grid() {
        const STEP: i32 = 100;
        for k in 1..=4 {
            for v in -21..=21 {
                let shape = PlanShape::Probes {
                    lower: -21 * STEP,
                    upper: 21 * STEP,
                    step: STEP,
                    guess: None,
                };
                let mut p = Planner::new(shape, k);
                let mut q = Planner::new(
                    PlanShape::Probes {
                        lower: -21,
                        upper: 21,
                        step: 1,
                        guess: None,
                    },
                    k,
                );
                let mut probes = 0;
                while !p.is_done() {
                    let tasks = p.next_tasks();
                    assert!(!tasks.is_empty(), "stuck at {:?}", p.bounds());
                    for t in tasks {
                        let TaskKind::Probe { target } = t else {
                            panic!()
                        };
                        assert_eq!(target % STEP, 0, "target {target} is not a possible value");
                        // Not fail-soft: exactly "value >= target" or "value <= target - 1".
                        let raw = if v * STEP >= target {
                            RawBounds {
                                lower: target,
                                upper: i32::MAX,
                            }
                        } else {
                            RawBounds {
                                lower: i32::MIN,
                                upper: target - 1,
                            }
                        };
                        p.on_result(
                            &t,
                            TaskOutput {
                                raw: Some(raw),
                                ..TaskOutput::default()
                            },
                        );
                        let b = p.bounds();
                        assert!(b.lower % STEP == 0 && b.upper % STEP == 0, "{b:?}");
                        probes += 1;
                    }
                }
                assert_eq!(
                    p.bounds(),
                    RawBounds {
                        lower: v * STEP,
                        upper: v * STEP
                    }
                );
                let mut unit = 0;
                while !q.is_done() {
                    for t in q.next_tasks() {
                        let TaskKind::Probe { target } = t else {
                            panic!()
                        };
                        q.on_result(&t, answer(v, target));
                        unit += 1;
                    }
                }
                assert_eq!(probes, unit, "k={k} v={v}: same probes as on the unit grid");
            }
        }
    }

    /// With a first guess, every value is found with any parallelism, for every guess (inside
    /// and at the edges of the bounds), with exact and with wider fail-soft answers; with one
    /// probe at a time the first probe is the guess and the plan takes few probes when the
    /// guess is close.
    #[test]
    fn guessed_probes_find_every_value_with_any_parallelism() {
        let fail_soft = |v: i32, t: i32, slack: i32| TaskOutput {
            raw: Some(if v >= t {
                RawBounds {
                    lower: (t + slack).min(v),
                    upper: i32::MAX,
                }
            } else {
                RawBounds {
                    lower: i32::MIN,
                    upper: (t - 1 - slack).max(v),
                }
            }),
            ..TaskOutput::default()
        };
        for k in 1..=4 {
            for g in -12..=12 {
                for v in -12..=12 {
                    for slack in [0, 1, 3] {
                        let shape = PlanShape::Probes {
                            lower: -12,
                            upper: 12,
                            step: 1,
                            guess: Some(g),
                        };
                        let mut p = Planner::new(shape, k);
                        let mut probes = 0;
                        let mut first = None;
                        while !p.is_done() {
                            let tasks = p.next_tasks();
                            assert!(!tasks.is_empty(), "stuck at {:?}", p.bounds());
                            assert!(tasks.len() <= k);
                            for t in tasks {
                                let TaskKind::Probe { target } = t else {
                                    panic!()
                                };
                                first.get_or_insert(target);
                                assert!(p.on_result(&t, fail_soft(v, target, slack)));
                                probes += 1;
                            }
                            for d in p.obsolete() {
                                p.forget(&d);
                            }
                            assert!(probes < 60);
                        }
                        assert_eq!(p.bounds(), RawBounds { lower: v, upper: v }, "g={g} v={v}");
                        if k == 1 {
                            assert_eq!(first, Some(g.max(-11)), "the first probe is the guess");
                            // Outward steps 1, 2, 4, ... then bisection: about 2 log2(distance).
                            let d = (v - g).abs() + 1;
                            let bound = 2 * (32 - (d as u32).leading_zeros()) as i32 + 2;
                            assert!(probes <= bound, "g={g} v={v}: {probes} probes > {bound}");
                        }
                    }
                }
            }
        }
    }

    /// A guessed plan on a value grid (step 100) keeps targets and bounds on the grid, and a
    /// restored planner continues like the original.
    #[test]
    fn guessed_probes_stay_on_the_grid_and_restore() {
        for v in -6..=6 {
            let shape = PlanShape::Probes {
                lower: -600,
                upper: 600,
                step: 100,
                guess: Some(250),
            };
            let mut p = Planner::new(shape.clone(), 2);
            let mut issued = Vec::new();
            let mut results = Vec::new();
            while !p.is_done() {
                let tasks = p.next_tasks();
                issued.extend(tasks.iter().cloned());
                let t = tasks
                    .first()
                    .cloned()
                    .or_else(|| p.pending().first().cloned())
                    .unwrap();
                let TaskKind::Probe { target } = t else {
                    panic!()
                };
                assert_eq!(target % 100, 0);
                p.on_result(&t, answer(v * 100, target));
                results.push((t, answer(v * 100, target)));
                let dropped: Vec<TaskKind> = issued
                    .iter()
                    .filter(|t| !p.pending().contains(t) && !results.iter().any(|(r, _)| r == *t))
                    .cloned()
                    .collect();
                let q = Planner::restore(shape.clone(), 2, &issued, &results, &dropped);
                assert_eq!(q.bounds(), p.bounds());
                assert_eq!(q.clone().next_tasks(), p.clone().next_tasks());
                assert!(issued.len() < 40);
            }
            assert_eq!(p.bounds().lower, v * 100);
        }
    }

    /// A probe that gives up (no bounds) ends the plan with the bounds known so far.
    #[test]
    fn a_probe_without_bounds_ends_the_plan() {
        let mut p = Planner::new(
            PlanShape::Probes {
                lower: -4,
                upper: 4,
                step: 1,
                guess: None,
            },
            1,
        );
        let t = p.next_tasks().remove(0);
        p.on_result(&t, answer(2, 1));
        assert!(!p.is_done());
        let t = p.next_tasks().remove(0);
        p.on_result(&t, TaskOutput::default());
        assert!(p.is_done());
        assert_eq!(p.bounds().upper, 4);
        assert!(p.next_tasks().is_empty());
    }

    /// `run_local` honours the job's limits by itself, with an unlimited control: the node
    /// budget per task, the time budget for the whole run.
    #[test]
    fn run_local_applies_the_job_limits() {
        use crate::wire::JobSpec;
        let job = |game: &str, position: &str, algorithm: &str| JobSpec {
            game: game.into(),
            position: position.into(),
            algorithm: algorithm.into(),
            ..JobSpec::default()
        };
        let run = |j: &JobSpec| {
            let p = crate::registry::prepare(j).expect("valid job");
            run_local(p.as_ref(), &Control::unlimited())
        };
        // Tic-tac-toe by plain minimax searches over half a million nodes.
        let mut j = job("tictactoe", "", "minimax");
        let full = run(&j).expect("solves");
        assert!(full.nodes > 100_000, "{full:?}");
        j.limits.node_limit = Some(1_000);
        let e = run(&j).expect_err("a node budget far below the search stops it");
        assert!(e.to_string().contains("nodes"), "{e}");
        // A probe plan: each probe gets the budget (Connect Four: alpha-beta probes); the
        // first probe it stops ends the plan with the bounds proved so far, not an error.
        let mut j = job("connect4", "4453", "alphabeta");
        j.limits.node_limit = Some(50_000);
        let r = run(&j).expect("a stopped probe plan ends with its bounds");
        assert_eq!(r.extra["stopped"], "nodes", "{r:?}");
        assert_eq!(r.value, serde_json::Value::Null, "{r:?}");
        let bounds = |r: &JobResult| {
            let b = r.extra["bounds"].as_array().expect("bounds").clone();
            (b[0].as_i64().unwrap(), b[1].as_i64().unwrap())
        };
        let (lo, hi) = bounds(&r);
        assert!(lo < hi, "{r:?}");
        // The time budget: a search of about ten seconds stops after about 0.2 s.
        j.limits = crate::wire::Limits {
            time_ms: Some(200),
            node_limit: None,
        };
        let t0 = std::time::Instant::now();
        let r = run(&j).expect("stops with bounds");
        assert_eq!(r.extra["stopped"], "time", "{r:?}");
        assert!(t0.elapsed() < std::time::Duration::from_secs(5));
        // The bounds are proved: the exact value of a position of Pons' set lies inside them
        // whatever the budget, and a bigger budget never loses a bound.
        let mut j = job("connect4", "335662333565", "alphabeta");
        let exact = run(&j).expect("solves").value.as_i64().expect("a value");
        let mut last = (i64::MIN, i64::MAX);
        for budget in [2_000, 20_000, 200_000, 2_000_000] {
            j.limits.node_limit = Some(budget);
            let r = run(&j).expect("ends");
            let (lo, hi) = match r.value.as_i64() {
                Some(v) => (v, v),
                None => {
                    assert!(r.extra.contains_key("stopped"), "{r:?}");
                    bounds(&r)
                }
            };
            assert!(
                lo <= exact && exact <= hi,
                "budget {budget}: {r:?}, exact {exact}"
            );
            // With a bigger budget the plan repeats the same probes further.
            assert!(
                lo >= last.0 && hi <= last.1,
                "budget {budget}: {r:?} after {last:?}"
            );
            last = (lo, hi);
        }
    }

    #[test]
    fn run_seeds_differ() {
        let s: std::collections::HashSet<u64> = (0..100).map(|i| run_seed(7, i)).collect();
        assert_eq!(s.len(), 100);
    }
}
