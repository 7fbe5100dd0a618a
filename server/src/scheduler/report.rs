//! A task's outcome: a worker's report (done, failed, rejected, stopped or cancelled) ends its
//! lease; a result is checked, stored and fed to the job's planner.
//!
//! Contract (leases and attempts: see the `lease` room):
//! - A result is accepted once per lease. The same report posted again is answered as a
//!   duplicate and changes nothing; a report on an expired, released, foreign or unknown lease
//!   is refused ([`SchedError::Conflict`], HTTP 409). A task has at most one stored result (the
//!   store enforces it as well).
//! - Results are checked by the job ([`PreparedJob::check_output`]) before they are stored (off
//!   the lock when the coordinator can, [`precheck`]); a refused result, or a proof certificate
//!   over its size limit, is a failed attempt. A proof certificate is stored apart from the
//!   result, as the job's artifact.

use super::{cut, to_json, JobState, SchedError, Scheduler, TaskState, UNSTARTED, UNSTARTED_LEASE};
use crate::store::Write;
use gamesolver_shared::registry::PreparedJob;
use gamesolver_shared::search::StopReason;
use gamesolver_shared::wire::protocol::{Outcome, Report, ReportReply, MAX_PROVED_PER_REPORT};
use gamesolver_shared::wire::{TaskKind, TaskOutput};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest message of a worker's `failed` or `rejected` outcome that is kept (the rest is cut).
const MAX_WORKER_MESSAGE: usize = 1000;

/// How long a task picked near a worker's last leaf is held for that worker: long enough for
/// the worker's next lease request after its report, short enough that a worker that does not
/// come back delays nobody for long.
pub(super) const HOLD_FOR_REPORTER: Duration = Duration::from_millis(500);

/// A worker's result checked before the scheduler's lock is taken ([`precheck`]): the output's
/// serialisation and the game's verdict on it, which may cost as much as the output is large.
pub struct Prechecked {
    lease_id: String,
    text: String,
    proof_text: Option<String>,
    check: Result<(), String>,
}

/// Checks a reported output against its job, off the lock: what [`Scheduler::report`] would
/// do under it. `context` is what [`Scheduler::check_context`] gave for the report's lease.
pub fn precheck(
    context: (Arc<dyn PreparedJob>, TaskKind),
    lease_id: &str,
    output: &mut TaskOutput,
    max_proof_bytes: usize,
) -> Prechecked {
    let (prepared, kind) = context;
    let (text, proof_text) = output_texts(output);
    let check = check_texts(&proof_text, max_proof_bytes)
        .and_then(|()| prepared.check_output(&kind, output));
    Prechecked {
        lease_id: lease_id.to_string(),
        text,
        proof_text,
        check,
    }
}

/// A result's stored text (without its proof certificate, which is the job's artifact) and the
/// certificate's text; the output keeps its proof (the planner gets it whole).
fn output_texts(output: &mut TaskOutput) -> (String, Option<String>) {
    let proof = output.proof.take();
    let text = to_json(&*output);
    let proof_text = proof.as_ref().map(to_json);
    output.proof = proof;
    (text, proof_text)
}

/// The size limit of a proof certificate.
fn check_texts(proof_text: &Option<String>, max_proof_bytes: usize) -> Result<(), String> {
    match proof_text {
        Some(p) if p.len() > max_proof_bytes => Err(format!(
            "its proof certificate of {} bytes is over the limit of {} bytes (max-proof-bytes)",
            p.len(),
            max_proof_bytes
        )),
        _ => Ok(()),
    }
}

/// The report being handled once its lease has ended: who sent it, on which lease, for which
/// task of which job, and whether that job still took results (`Job::takes_results`) when the
/// report came.
#[derive(Clone, Copy)]
struct Reported<'a> {
    worker_id: &'a str,
    lease_id: &'a str,
    tid: u64,
    job_id: u64,
    job_active: bool,
}

impl Scheduler {
    /// Whether a limit stopping this task ends its job's plan with the bounds known so far.
    pub(super) fn ends_on_stop(&self, job_id: u64, tid: u64) -> bool {
        let Some(task) = self.tasks.get(&tid) else {
            return false;
        };
        self.jobs
            .get(&job_id)
            .and_then(|j| j.planner.as_ref())
            .is_some_and(|p| p.ends_on_stop(&task.kind))
    }

    /// Ends a task whose plan ends on a limit's stop: its planner takes the stopped output, the
    /// task is done with `note`, and the output is stored under `lease_id` like any result (a
    /// restart replays it, and the job's results say why it ended).
    pub(super) fn end_task_stopped(
        &mut self,
        tid: u64,
        lease_id: String,
        reason: StopReason,
        note: String,
        w: &mut Vec<Write>,
    ) {
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        let job_id = task.job_id;
        let mut output = TaskOutput::stopped(reason);
        if lease_id == UNSTARTED_LEASE {
            // No worker ran it: the plan's final step spends nothing on its account.
            output.extra.insert(UNSTARTED.into(), true.into());
        }
        task.state = TaskState::Done;
        task.last_error = Some(note);
        w.push(Self::task_write(task));
        w.push(Write::InsertResult {
            task_id: tid,
            lease_id,
            output: to_json(&output),
        });
        let kind = task.kind.clone();
        if let Some(p) = self.jobs.get_mut(&job_id).and_then(|j| j.planner.as_mut()) {
            p.on_result(&kind, output);
        }
        self.changed.insert(job_id);
        self.advance(job_id, w);
    }

    /// What checking a result on lease `lease_id` needs, to run [`precheck`] off the lock:
    /// the job's prepared form and the task's kind, while the lease is the worker's active one
    /// and its job is active (else `None`: [`Scheduler::report`] decides without a check).
    pub fn check_context(
        &self,
        worker_id: &str,
        lease_id: &str,
    ) -> Option<(Arc<dyn PreparedJob>, TaskKind)> {
        let lease = self
            .leases
            .get(lease_id)
            .filter(|l| l.worker_id == worker_id)?;
        let task = self.tasks.get(&lease.task_id)?;
        let job = self
            .jobs
            .get(&task.job_id)
            .filter(|j| !j.state.is_final())?;
        Some((job.prepared.clone()?, task.kind.clone()))
    }

    /// The largest proof certificate a result may carry (`--max-proof-bytes`).
    pub fn max_proof_bytes(&self) -> usize {
        self.config.max_proof_bytes
    }

    /// A task's outcome. Idempotent per lease; refused for a lease that is not the worker's.
    pub fn report(&mut self, r: Report) -> Result<ReportReply, SchedError> {
        self.report_checked(r, None)
    }

    /// [`Scheduler::report`] with the output's check done off the lock ([`precheck`]); a check
    /// made for another lease, or before its job lost its prepared form, is done again here.
    pub fn report_checked(
        &mut self,
        r: Report,
        pre: Option<Prechecked>,
    ) -> Result<ReportReply, SchedError> {
        self.touch(&r.worker_id)?;
        if let Some((owner, "done")) = self.lease_end(&r.lease_id) {
            if owner == r.worker_id {
                self.counters.results_duplicate += 1;
                return Ok(ReportReply { duplicate: true });
            }
        }
        if let Err(e) = self.active_lease(&r.worker_id, &r.lease_id) {
            self.counters.results_refused += 1;
            return Err(e);
        }
        let mut w = Vec::new();
        let tid = self.end_lease(&r.worker_id, &r.lease_id, "done", &mut w);
        let job_id = self.tasks[&tid].job_id;
        let at = Reported {
            worker_id: &r.worker_id,
            lease_id: &r.lease_id,
            tid,
            job_id,
            job_active: self.jobs[&job_id].takes_results(),
        };
        if at.job_active && matches!(r.outcome, Outcome::Done { .. }) {
            let take = r.proved.len().min(MAX_PROVED_PER_REPORT);
            if let Some(job) = self.jobs.get_mut(&job_id) {
                job.proved.add(&r.worker_id, &r.proved[..take]);
            }
        }
        match r.outcome {
            Outcome::Done { output } => self.report_done(at, output, pre, &mut w),
            Outcome::Failed { message } => {
                let message = cut(&message, MAX_WORKER_MESSAGE).to_string();
                self.counters.task_failures += 1;
                self.task_failed(
                    tid,
                    format!("failed on worker {}: {message}", r.worker_id),
                    &mut w,
                );
            }
            Outcome::Rejected { message } => self.report_rejected(at, message, &mut w),
            Outcome::Stopped { reason } => self.report_stopped(at, reason, &mut w),
            Outcome::Cancelled => self.report_cancelled(at, &mut w),
        }
        // Every outcome changes the job's task counts (and may let it be evicted).
        self.changed.insert(job_id);
        self.commit(w)?;
        Ok(ReportReply { duplicate: false })
    }

    /// A `done` outcome: the result is checked, then given to the planner; a result that fails
    /// its checks is a failed attempt.
    fn report_done(
        &mut self,
        at: Reported,
        mut output: TaskOutput,
        pre: Option<Prechecked>,
        w: &mut Vec<Write>,
    ) {
        // Done only when the planner takes the result; a probe that finished after it
        // became obsolete, or a task of a job that has ended, was cancelled (its result
        // is not stored either, so a restart replays exactly the results used).
        let kind = self.tasks[&at.tid].kind.clone();
        let (text, proof_text, check) = self.checked_output(at, &kind, &mut output, pre);
        if let Err(reason) = check {
            self.counters.results_invalid += 1;
            self.task_failed(
                at.tid,
                format!(
                    "from worker {} gave a result that was refused: {reason}",
                    at.worker_id
                ),
                w,
            );
            return;
        }
        let accepted = at.job_active
            && self
                .jobs
                .get_mut(&at.job_id)
                .and_then(|j| j.planner.as_mut())
                .is_some_and(|p| p.on_result(&kind, output));
        if accepted {
            self.accept_result(at, &kind, text, proof_text, w);
        } else {
            let task = self.tasks.get_mut(&at.tid).expect("lease has a task");
            task.state = TaskState::Cancelled;
            w.push(Self::task_write(task));
            self.counters.results_unneeded += 1;
        }
    }

    /// A result's stored text, its proof certificate's text and the verdict of its checks: those
    /// of the precheck made for this lease, else made here. A result for a job that no longer
    /// takes results is not checked (it is not used).
    fn checked_output(
        &self,
        at: Reported,
        kind: &TaskKind,
        output: &mut TaskOutput,
        pre: Option<Prechecked>,
    ) -> (String, Option<String>, Result<(), String>) {
        // The result is stored without its proof certificate, which is the job's
        // artifact; the planner gets it whole (the final output may carry it).
        // A worker is trusted to run kernels, not to be right: a result that fails the
        // game's checks, or a certificate over the limit, is a failed attempt.
        let (text, proof_text, check) =
            match pre.filter(|p| p.lease_id == at.lease_id) {
                Some(p) => (p.text, p.proof_text, p.check),
                None => {
                    let (text, proof_text) = output_texts(output);
                    let check =
                        match self.jobs.get(&at.job_id) {
                            _ if !at.job_active => Ok(()),
                            Some(j) => check_texts(&proof_text, self.config.max_proof_bytes)
                                .and_then(|()| match j.prepared.as_ref() {
                                    Some(p) => p.check_output(kind, output),
                                    // Never stored unchecked (a task runs only once its job
                                    // is prepared, so this does not happen).
                                    None => Err("its job is not prepared here".into()),
                                }),
                            None => Ok(()),
                        };
                    (text, proof_text, check)
                }
            };
        let check = if at.job_active { check } else { Ok(()) };
        (text, proof_text, check)
    }

    /// A result the planner took: the task is done, the result stored under its lease (and its
    /// proof certificate as the job's artifact), and the job's plan goes on.
    fn accept_result(
        &mut self,
        at: Reported,
        kind: &TaskKind,
        text: String,
        proof_text: Option<String>,
        w: &mut Vec<Write>,
    ) {
        let task = self.tasks.get_mut(&at.tid).expect("lease has a task");
        task.state = TaskState::Done;
        w.push(Self::task_write(task));
        w.push(Write::InsertResult {
            task_id: at.tid,
            lease_id: at.lease_id.to_string(),
            output: text,
        });
        if let Some(proof) = proof_text {
            w.push(Write::Artifact {
                job_id: at.job_id,
                proof,
            });
        }
        self.counters.tasks_done += 1;
        self.done_times.push_back(Instant::now());
        self.advance_near_reporter(at, kind, w);
    }

    /// Advances the job's plan after a result on `kind`, holding the first task it issues for
    /// the reporting worker when that task is a leaf picked near the worker's last one
    /// ([`HOLD_FOR_REPORTER`]).
    fn advance_near_reporter(&mut self, at: Reported, kind: &TaskKind, w: &mut Vec<Write>) {
        // The slot this result frees is this worker's: a job-level plan picks its
        // next leaf near the one the worker's table holds, and the first task it
        // issues is held for the worker.
        let near = match kind {
            TaskKind::Leaf { path, .. } => self
                .jobs
                .get_mut(&at.job_id)
                .and_then(|j| j.planner.as_mut())
                .map(|p| p.prefer_near(vec![path.clone()]))
                .is_some(),
            _ => false,
        };
        let first_new = self.next_task;
        self.advance(at.job_id, w);
        if let Some(t) = self.tasks.get_mut(&first_new).filter(|_| near) {
            t.held_for = Some((at.worker_id.to_string(), Instant::now() + HOLD_FOR_REPORTER));
        }
    }

    /// A `rejected` outcome (the job itself is wrong): the task fails, and its job with it.
    fn report_rejected(&mut self, at: Reported, message: String, w: &mut Vec<Write>) {
        let message = cut(&message, MAX_WORKER_MESSAGE).to_string();
        let task = self.tasks.get_mut(&at.tid).expect("lease has a task");
        task.state = TaskState::Failed;
        task.last_error = Some(message.clone());
        w.push(Self::task_write(task));
        if at.job_active {
            self.end_job(
                at.job_id,
                JobState::Failed,
                None,
                Some(format!("the worker rejected the job: {message}")),
                w,
            );
        }
    }

    /// A `stopped` outcome (a limit of the job stopped the kernel): a plan that a stop ends
    /// takes the task as stopped ([`Scheduler::end_task_stopped`]); otherwise the task fails,
    /// and its job with it.
    fn report_stopped(&mut self, at: Reported, reason: StopReason, w: &mut Vec<Write>) {
        if at.job_active && self.ends_on_stop(at.job_id, at.tid) {
            // A probe plan ends with the bounds proved before the limit (stored like any
            // result, so the job's results say why it ended).
            let note = format!("the {reason} limit stopped it");
            self.end_task_stopped(at.tid, at.lease_id.to_string(), reason, note, w);
            return;
        }
        let task = self.tasks.get_mut(&at.tid).expect("lease has a task");
        task.state = TaskState::Failed;
        let message = format!("the {reason} limit stopped {} before a result", task.what);
        task.last_error = Some(message.clone());
        w.push(Self::task_write(task));
        if at.job_active {
            self.end_job(at.job_id, JobState::Failed, None, Some(message), w);
        }
    }

    /// A `cancelled` outcome: the task is cancelled when it was told to stop or its job takes
    /// no more results, else it goes back to the head of the queue without counting the attempt.
    fn report_cancelled(&mut self, at: Reported, w: &mut Vec<Write>) {
        let task = self.tasks.get_mut(&at.tid).expect("lease has a task");
        if task.cancel || !at.job_active {
            task.state = TaskState::Cancelled;
            w.push(Self::task_write(task));
        } else {
            // Stopped on the worker's own account (shutting down): like a release.
            task.attempts = task.attempts.saturating_sub(1);
            task.state = TaskState::Queued;
            w.push(Self::task_write(task));
            self.queue.push_front(at.tid);
            self.queued_new = true;
        }
    }

    /// An attempt at a task failed (error, panic or expired lease): retry it or fail its job.
    pub(super) fn task_failed(&mut self, tid: u64, message: String, w: &mut Vec<Write>) {
        let max = self.config.max_attempts;
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        task.last_error = Some(message.clone());
        task.lease = None;
        let job_id = task.job_id;
        self.changed.insert(job_id);
        let job_active = self.jobs.get(&job_id).is_some_and(|j| j.takes_results());
        if task.cancel || !job_active {
            task.state = TaskState::Cancelled;
            w.push(Self::task_write(task));
        } else if task.attempts >= max {
            task.state = TaskState::Failed;
            w.push(Self::task_write(task));
            let reason = format!(
                "task {tid} ({}) failed {} times; last attempt {message}",
                task.what, task.attempts
            );
            self.end_job(job_id, JobState::Failed, None, Some(reason), w);
        } else {
            task.state = TaskState::Queued;
            w.push(Self::task_write(task));
            w.push(Self::event(
                Some(job_id),
                "retry",
                format!("task {tid} attempt {}: {message}", task.attempts),
            ));
            // First in line: the task was already leased once, and its job's planner counts it
            // among the tasks in flight, so behind newer tasks it would hold the job back (with
            // `--parallelism` equal to the worker slots, for as long as the whole queue).
            self.queue.push_front(tid);
            self.queued_new = true;
            self.changed.insert(job_id);
        }
    }
}
