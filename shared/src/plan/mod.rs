//! Job planning: a job becomes tasks, task results become more tasks or the final result.
//!
//! One [`Planner`] serves both ways a job runs: in-process ([`run_local`], `gamesolver solve`
//! without a coordinator) and in the coordinator, which stores every task and result. A planner is
//! a deterministic function of the job and the results fed to it, in order, so a restarted
//! coordinator rebuilds it by feeding the stored results again. Values inside are the game's
//! internal integers; everything shown ([`Planner::progress`]) goes through
//! [`PreparedJob::show_value`].
//!
//! Shapes ([`PlanShape`]):
//! - `Single`: one task, its output is the result.
//! - `Probes`: the exact value by threshold probes "value >= t" on the multiples of `step`, k at
//!   a time (k-ary search; with k = 1 outward-leaning bisection, or from a `guess`); each fail-soft
//!   result narrows the interval, and a probe without bounds (a memory limit) ends the plan. The
//!   target order in full: docs/scaling.md, "Probe plans".
//! - `Runs`: `count` independent runs, merged by the prepared job.
//! - `Rounds`: runs in rounds of `width`, each built from the previous round's outputs.
//! - `JobLevel`: the job-level proof-number tree (`planner/joblevel.rs`).
//! - `Moves`: analysis, one sub-planner per root move, tasks in flight side by side within the
//!   job's parallelism (`planner.rs`, "Moves plans").

mod job;
pub mod leaf_cache;
mod local;
mod planner;
pub mod simulate;
#[cfg(test)]
mod tests;

pub use job::{MovePlan, PlanShape, PreparedJob, SolveError};
pub use local::{job_result, run_local};
pub use planner::Planner;

/// Display key of a stopped output that no worker ran (the coordinator ended the task because
/// the job's time was up before it was leased): a plan's final step spends no search on its
/// account (see `registry::family`, the move of a stopped exact job).
pub const UNSTARTED: &str = "unstarted";

/// Whether `out` is a stopped output that no worker ran ([`UNSTARTED`]).
pub fn unstarted(out: &crate::wire::TaskOutput) -> bool {
    out.extra.display.get(UNSTARTED) == Some(&serde_json::Value::Bool(true))
}

/// Derives the seed of run `index` from a base seed (SplitMix64 step, so runs differ well).
pub fn run_seed(base: u64, index: u32) -> u64 {
    let mut z = base.wrapping_add((index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
