//! The [`Planner`]: the state machine that issues the tasks of one job and folds their outputs.

use super::job::{PlanShape, PreparedJob};
use super::run_seed;
use crate::wire::{RawBounds, RoundInput, RoundResult, TaskKind, TaskOutput};
use joblevel::JobLevel;
use moves::Child;

mod joblevel;
mod moves;
mod retro;

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
    /// Moves plans: the sub-planner of each root move, in plan order.
    children: Vec<Child>,
    /// Job-level proof-number plans: the tree.
    joblevel: Option<Box<JobLevel>>,
    /// Retrograde plans: where the build stands.
    retro: retro::Build,
    /// Paths of the leaves last searched by the workers expected to take the next tasks
    /// ([`Planner::prefer_near`]), used by the next call of [`Planner::next_tasks`].
    near: Vec<Vec<String>>,
}

impl Planner {
    /// A planner for `shape` that keeps up to `parallelism` tasks in flight.
    pub fn new(shape: PlanShape, parallelism: usize) -> Self {
        let (bounds, step) = match shape {
            PlanShape::Probes {
                lower, upper, step, ..
            }
            | PlanShape::JobLevel {
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
        let children = match &shape {
            PlanShape::Moves(plans) => plans.iter().map(Child::new).collect(),
            _ => Vec::new(),
        };
        let joblevel = JobLevel::new(&shape).map(Box::new);
        let retro = match &shape {
            PlanShape::Retro { sizes, split } => retro::Build::new(sizes, *split),
            _ => retro::Build::default(),
        };
        Planner {
            joblevel,
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
            children,
            retro,
            near: Vec::new(),
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
            TaskKind::Probe { .. } | TaskKind::Leaf { .. } => {}
            TaskKind::Move { .. } => self.mark_move_issued(&task),
            TaskKind::Retro { .. } | TaskKind::RetroSeal { .. } => {}
        }
        self.pending.push(task);
    }

    /// The plan's shape.
    pub fn shape(&self) -> &PlanShape {
        &self.shape
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
        match &self.joblevel {
            Some(j) => j.bounds(),
            None => self.bounds,
        }
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
            PlanShape::Moves(_) => self.moves_done(),
            PlanShape::JobLevel { .. } => self.joblevel.as_ref().is_none_or(|j| j.is_done()),
            PlanShape::Retro { .. } => self.retro_done(),
        }
    }

    /// Whether a rounds plan got an output that ends it (stopped, or its goal reached).
    fn rounds_final(&self) -> bool {
        self.by_index.iter().any(|(_, o)| o.extra.final_round)
    }

    /// The input of round `round` of a rounds plan, `None` while the previous round is not
    /// complete.
    fn round_input(&self, round: u32, width: u32) -> Option<RoundInput> {
        if round == 0 {
            return Some(RoundInput::default());
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
        let from = prev[0].1.extra.round.round_start.clone()?;
        Some(RoundInput {
            round,
            from: Some(from),
            results: prev.iter().map(|(_, o)| RoundResult::of(o)).collect(),
        })
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
                            Some(v) => {
                                let v = serde_json::to_value(v).expect("a round input is JSON");
                                input = Some((round, v));
                            }
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
            PlanShape::Moves(_) => out = self.next_move_tasks(),
            PlanShape::JobLevel { .. } => {
                let free = self.parallelism.saturating_sub(self.pending.len());
                if let Some(j) = &self.joblevel {
                    out = j.next_tasks(&self.pending, free, self.parallelism, &self.near);
                }
            }
            PlanShape::Retro { .. } => out = self.next_retro_tasks(),
        }
        self.near.clear();
        self.pending.extend(out.iter().cloned());
        out
    }

    /// Locality hint for the next [`Planner::next_tasks`] (job-level plans; others ignore it):
    /// the leaf paths last searched by the workers expected to take its tasks, in order. The
    /// plan's state does not depend on it, only which leaves the next tasks name.
    pub fn prefer_near(&mut self, paths: Vec<Vec<String>>) {
        self.near = paths;
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

    /// Artifacts the plan no longer reads (a retrograde build's old round chunks), each given
    /// once: the coordinator deletes those that no job's [`Planner::live_artifacts`] names.
    pub fn take_retired_artifacts(&mut self) -> Vec<String> {
        self.retro.take_retired()
    }

    /// Artifacts that tasks to come may read, besides sealed databases (never retired).
    pub fn live_artifacts(&self) -> Vec<String> {
        self.retro.live()
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
            (PlanShape::Moves(_), _) => {
                self.on_move_result(task, output);
                return true;
            }
            (PlanShape::JobLevel { .. }, _) => {
                if let Some(j) = &mut self.joblevel {
                    j.on_result(task, &output);
                }
                return true;
            }
            // Outputs are not kept: the plan keeps what it reads of them.
            (PlanShape::Retro { .. }, _) => {
                self.on_retro_result(task, &output);
                return true;
            }
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
        if let PlanShape::Moves(_) = self.shape {
            return self.obsolete_moves();
        }
        if let Some(j) = &self.joblevel {
            return j.obsolete(&self.pending);
        }
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
            self.forget_move(task);
        }
    }

    /// Progress as JSON (bounds for probe plans, in `job`'s value scale; runs done for run
    /// plans).
    pub fn progress(&self, job: &dyn PreparedJob) -> serde_json::Value {
        match self.shape {
            PlanShape::Single => serde_json::json!({"tasks_done": self.outputs.len()}),
            PlanShape::Moves(_) => self.move_progress(job),
            PlanShape::JobLevel { .. } => match &self.joblevel {
                Some(j) => j.progress(job),
                None => serde_json::Value::Null,
            },
            PlanShape::Retro { .. } => self.retro_progress(),
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
        match self.shape {
            PlanShape::Moves(_) => self.pending.contains(task) && self.move_ends_on_stop(task),
            _ => {
                matches!(
                    self.shape,
                    PlanShape::Probes { .. } | PlanShape::JobLevel { .. }
                ) && self.pending.contains(task)
            }
        }
    }

    /// The final output (call when [`Planner::is_done`]).
    pub fn finish(&self, job: &dyn PreparedJob) -> TaskOutput {
        match self.shape {
            PlanShape::Single => self.outputs.last().cloned().unwrap_or_default(),
            PlanShape::Moves(_) => self.finish_moves(job),
            PlanShape::JobLevel { .. } => match &self.joblevel {
                Some(j) => j.finish(job),
                None => TaskOutput::default(),
            },
            PlanShape::Retro { .. } => self.finish_retro(job),
            PlanShape::Probes { .. } => {
                let mut out = job.finish_probes(self.bounds, &self.outputs);
                // A limit ended the plan: say which, next to the bounds proved before it.
                let stopped = self
                    .outputs
                    .iter()
                    .find(|o| o.raw.is_none())
                    .and_then(|o| o.extra.stopped);
                if stopped.is_some() {
                    out.extra.stopped = stopped;
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
