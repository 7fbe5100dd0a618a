//! Running a job in this process ([`run_local`]) and the result it ends with ([`job_result`]).

use super::job::{PreparedJob, SolveError};
use super::planner::Planner;
use crate::search::Control;
use crate::wire::{JobResult, StopReason, TaskOutput};

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
    if let Some(out) = job.run_here(ctl) {
        return Ok(job_result(job, out?, ctl.elapsed().as_millis() as u64));
    }
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
            ctl.absorb(&task_ctl);
            let out = match (out, task_ctl.should_stop()) {
                (Ok(out), _) => out,
                // A job limit stopped a probe: the plan ends with the bounds proved so far (as
                // the coordinator ends it when a worker reports the same).
                (Err(_), Some(r @ (StopReason::Time | StopReason::Nodes)))
                    if planner.ends_on_stop(&task) =>
                {
                    TaskOutput {
                        nodes: task_ctl.nodes(),
                        ..TaskOutput::stopped(r)
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
