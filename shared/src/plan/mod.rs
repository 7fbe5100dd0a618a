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
//! - `Moves`: analysis; one sub-planner per root move (each a `Probes` or `Single` plan of the
//!   position after the move), their tasks wrapped in `TaskKind::Move` and in flight side by
//!   side within the job's parallelism (see `planner.rs`, "Moves plans").

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
