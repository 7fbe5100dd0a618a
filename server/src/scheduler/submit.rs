//! A job's life: quotas and submission, driving its planner (new tasks, obsolete ones, the plan's
//! end), ending or cancelling it, and the work too heavy for the scheduler's lock.
//!
//! Quotas ([`SchedConfig`]): jobs not ended and bytes of job specs held are capped (429,
//! [`SchedError::Quota`]), and so are the tasks of one plan (400). Bad input to
//! [`Scheduler::submit`] is refused before anything is stored.
//!
//! A large job waiting for its first lease does not hold its prepared form ([`Scheduler::rest`]);
//! it is made again at that lease ([`Scheduler::wake`]). That preparation and a plan's final
//! search may cost far more than bookkeeping: the coordinator runs them off the lock
//! ([`Background`]), tests of the scheduler alone inline.
//!
//! [`SchedConfig`]: super::SchedConfig

use super::{
    describe, now_ms, spec_bytes, store_error, to_json, Job, JobState, SchedError, Scheduler, Task,
    TaskState, MAX_JOB_LEVEL_PARALLELISM, MAX_PARALLELISM,
};
use crate::store::Write;
use gamesolver_shared::plan::{job_result, Planner};
use gamesolver_shared::registry::{self, PreparedJob};
use gamesolver_shared::wire::JobSpec;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;

/// Jobs whose position and options reach this many bytes rest without their prepared form
/// while queued ([`Scheduler::rest`]).
pub(super) const REST_BYTES: usize = 16 << 10;

/// Work that may cost far more than bookkeeping (a plan's final search, preparing a large job
/// again): taken out of the scheduler's lock by [`Scheduler::take_background`], run with
/// [`Background::run`] on the coordinator's planning thread, and given back with
/// [`Scheduler::complete`].
pub enum Background {
    /// A done planner's result: [`Planner::finish`] (an exact job stopped by a limit may run a
    /// bounded search for its move there) and the result's serialisation.
    Finish {
        id: u64,
        token: u64,
        planner: Box<Planner>,
        prepared: Arc<dyn PreparedJob>,
        created_ms: u64,
    },
    /// A resting job's prepared form ([`Scheduler::rest`]), made again at its first lease.
    Prepare {
        id: u64,
        token: u64,
        spec: Arc<JobSpec>,
    },
}

/// What a [`Background`] work gives back.
pub enum BackgroundDone {
    Finished {
        id: u64,
        token: u64,
        planner: Box<Planner>,
        /// The job's result (JSON) and its proof certificate, serialised.
        result: Value,
        proof: Option<String>,
    },
    Prepared {
        id: u64,
        token: u64,
        prepared: Result<Arc<dyn PreparedJob>, registry::SolveError>,
    },
}

impl Background {
    /// Does the work; no scheduler state is touched.
    pub fn run(self) -> BackgroundDone {
        match self {
            Background::Finish {
                id,
                token,
                planner,
                prepared,
                created_ms,
            } => {
                let out = planner.finish(&*prepared);
                let finished = now_ms();
                let mut result = job_result(&*prepared, out, finished.saturating_sub(created_ms));
                // The proof of the output that decided the job is its artifact, not part of
                // its result.
                let proof = result.proof.take().map(|p| to_json(&p));
                let result = serde_json::to_value(result).unwrap_or(Value::Null);
                BackgroundDone::Finished {
                    id,
                    token,
                    planner,
                    result,
                    proof,
                }
            }
            Background::Prepare { id, token, spec } => BackgroundDone::Prepared {
                id,
                token,
                prepared: registry::prepare(&spec).map(Arc::from),
            },
        }
    }
}

impl Scheduler {
    /// Tasks a job of plan `shape` keeps in flight: the live worker slots (or the configured
    /// parallelism), capped by [`MAX_PARALLELISM`], or for a job-level plan by
    /// [`SchedConfig::max_job_level_parallelism`].
    ///
    /// [`SchedConfig::max_job_level_parallelism`]: super::SchedConfig::max_job_level_parallelism
    pub(super) fn parallelism(&self, shape: &registry::PlanShape) -> usize {
        let cap = match shape {
            registry::PlanShape::JobLevel { .. } => self
                .config
                .max_job_level_parallelism
                .clamp(1, MAX_JOB_LEVEL_PARALLELISM),
            _ => MAX_PARALLELISM,
        };
        self.config
            .parallelism
            .unwrap_or_else(|| self.live_worker_threads_up_to(cap))
            .clamp(1, cap)
    }

    /// Refuses a job that a quota does not allow: too many jobs not ended or too many spec
    /// bytes held (429, [`SchedError::Quota`]), or a plan with too many tasks (400). Each
    /// message names its limit and the `serve` flag that sets it.
    fn check_quotas(
        &self,
        spec: &JobSpec,
        prepared: &dyn PreparedJob,
    ) -> Result<usize, SchedError> {
        let tasks = match prepared.plan_shape() {
            registry::PlanShape::Runs { count, .. } => u64::from(count),
            registry::PlanShape::Rounds { iterations, .. } => u64::from(iterations),
            // Tasks in one round of the largest database (rounds come one after the other).
            registry::PlanShape::Retro { sizes, split } => sizes
                .iter()
                .map(|n| n.div_ceil(split.max(1)))
                .max()
                .unwrap_or(1),
            _ => 1,
        };
        if tasks > self.config.max_tasks_per_job {
            return Err(SchedError::BadInput(format!(
                "the job's plan has {tasks} tasks, over the limit of {} tasks per job (max-tasks-per-job)",
                self.config.max_tasks_per_job
            )));
        }
        let active = self.jobs.values().filter(|j| !j.state.is_final()).count();
        if active >= self.config.max_queued_jobs {
            return Err(SchedError::Quota(format!(
                "{active} jobs are queued or running, the limit (max-queued-jobs) is {}: try again later",
                self.config.max_queued_jobs
            )));
        }
        let bytes = spec_bytes(spec);
        if self.held_bytes.saturating_add(bytes) > self.config.max_position_bytes {
            return Err(SchedError::Quota(format!(
                "the job's position and options ({bytes} bytes) do not fit in the {} bytes the coordinator holds for jobs (max-position-bytes; {} in use): try again later",
                self.config.max_position_bytes, self.held_bytes
            )));
        }
        Ok(bytes)
    }

    /// Accepts a job that [`registry::prepare`] has checked, within the quotas
    /// ([`SchedConfig`]); stores it with its first tasks in one transaction and returns its id.
    ///
    /// [`SchedConfig`]: super::SchedConfig
    pub fn submit(
        &mut self,
        spec: JobSpec,
        prepared: Box<dyn PreparedJob>,
    ) -> Result<u64, SchedError> {
        let bytes = self.check_quotas(&spec, &*prepared)?;
        let id = self.next_job;
        self.next_job += 1;
        let prepared: Arc<dyn PreparedJob> = Arc::from(prepared);
        let shape = prepared.plan_shape();
        let planner = Planner::new(shape.clone(), self.parallelism(&shape));
        let created_ms = now_ms();
        let mut w = vec![
            Write::InsertJob {
                id,
                spec: to_json(&spec),
                created_ms,
            },
            Self::event(
                Some(id),
                "submitted",
                format!("{} {}", spec.game, spec.algorithm),
            ),
        ];
        self.held_bytes += bytes;
        self.jobs.insert(
            id,
            Job {
                prepared: Some(prepared),
                planner: Some(planner),
                ..Job::new(id, spec, bytes, JobState::Queued, created_ms)
            },
        );
        self.changed.insert(id);
        self.advance(id, &mut w);
        // On failure nothing was stored, and memory is rebuilt without the job.
        self.commit(w)?;
        self.rest(id);
        self.counters.jobs_submitted += 1;
        Ok(id)
    }

    /// After any change to a job's planner: drops obsolete tasks, issues new ones, or finishes
    /// the job.
    pub(super) fn advance(&mut self, id: u64, w: &mut Vec<Write>) {
        let Some(parallelism) = self
            .jobs
            .get(&id)
            .and_then(|j| j.planner.as_ref())
            .map(|p| self.parallelism(p.shape()))
        else {
            return;
        };
        if !self.drop_obsolete(id, w) {
            return;
        }
        self.issue_tasks(id, parallelism, w);
        self.finish_or_fail(id, w);
    }

    /// Takes the planner's retired artifacts and cancels the job's live tasks that it no
    /// longer needs: queued ones at once, running ones through their worker's next heartbeat.
    /// `false` when the job has no active planner (nothing more to do).
    fn drop_obsolete(&mut self, id: u64, w: &mut Vec<Write>) -> bool {
        let Some(job) = self.jobs.get_mut(&id) else {
            return false;
        };
        if job.state.is_final() {
            return false;
        }
        let Some(planner) = job.planner.as_mut() else {
            return false;
        };
        self.retired.extend(planner.take_retired_artifacts());
        let obsolete = planner.obsolete();
        if obsolete.is_empty() {
            return true;
        }
        for kind in &obsolete {
            planner.forget(kind);
        }
        // One pass over the job's tasks; only live ones are compared (a long job-level
        // search has thousands of finished tasks and drops a few kinds per result).
        for tid in &job.tasks {
            let Some(task) = self.tasks.get_mut(tid) else {
                continue;
            };
            if !matches!(task.state, TaskState::Queued | TaskState::Running)
                || !obsolete.contains(&task.kind)
            {
                continue;
            }
            if task.state == TaskState::Queued {
                task.state = TaskState::Cancelled;
                w.push(Self::task_write(task));
            } else {
                task.cancel = true;
                self.cancels_new = true;
            }
        }
        true
    }

    /// Queues the tasks the planner of active job `id` asks for next, at `parallelism`.
    fn issue_tasks(&mut self, id: u64, parallelism: usize, w: &mut Vec<Write>) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        let Some(planner) = job.planner.as_mut() else {
            return;
        };
        if planner.is_done() {
            return;
        }
        planner.set_parallelism(parallelism);
        for kind in planner.next_tasks() {
            let tid = self.next_task;
            self.next_task += 1;
            let what = describe(&kind, job.prepared.as_deref());
            w.push(Write::InsertTask {
                id: tid,
                job_id: id,
                kind: to_json(&kind),
                what: what.clone(),
            });
            self.tasks.insert(tid, Task::queued(tid, id, kind, what));
            job.tasks.push(tid);
            self.queue.push_back(tid);
            self.queued_new = true;
        }
    }

    /// Finishes active job `id` when its plan is done (off the lock when the scheduler has a
    /// background, here otherwise), or fails it when the plan has nothing left to wait for.
    fn finish_or_fail(&mut self, id: u64, w: &mut Vec<Write>) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        let Some(planner) = job.planner.as_ref() else {
            return;
        };
        if planner.is_done() {
            let prepared = job.prepared.clone().expect("active job has a prepared job");
            let planner = Box::new(job.planner.take().expect("checked"));
            let token = self.next_token;
            self.next_token += 1;
            let work = Background::Finish {
                id,
                token,
                planner,
                prepared,
                created_ms: job.created_ms,
            };
            if self.background {
                // Off the lock: the job shows the plan's last progress meanwhile, and the
                // artifacts its plan reads stay.
                if let Background::Finish {
                    planner, prepared, ..
                } = &work
                {
                    job.progress_at_rest = Some(planner.progress(&**prepared));
                    job.finishing_artifacts = planner.live_artifacts();
                }
                job.finishing = Some(token);
                self.to_background.push(work);
            } else {
                job.finishing = Some(token);
                let done = work.run();
                self.complete_with(done, w);
            }
        } else if planner.pending().is_empty() {
            self.end_job(
                id,
                JobState::Failed,
                None,
                Some("the plan ended without a result".into()),
                w,
            );
        }
    }

    /// Ends a job: stores its final state, cancels what is left of its tasks.
    pub(super) fn end_job(
        &mut self,
        id: u64,
        state: JobState,
        result: Option<Value>,
        error: Option<String>,
        w: &mut Vec<Write>,
    ) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        job.state = state;
        job.finished_ms = Some(now_ms());
        job.result = result;
        job.error = error.clone();
        job.final_progress = match (&job.planner, &job.prepared) {
            (Some(p), Some(j)) => Some(p.progress(&**j)),
            _ => job.progress_at_rest.take(),
        };
        job.prepared = None;
        if let (n @ 1.., Some(obj)) = (
            job.proved.len(),
            job.final_progress.as_mut().and_then(|p| p.as_object_mut()),
        ) {
            obj.insert("proved_positions".into(), n.into());
        }
        job.proved.clear();
        // Nothing reads an ended job's round chunks any more (a finished build has none left;
        // a cancelled or failed one its last rounds'): retired like spent ones, deleted with
        // them unless another running job names them.
        if let Some(p) = job.planner.take() {
            self.retired.extend(p.live_artifacts());
        }
        // A plan being finished off the lock: its artifacts, kept for it, go the same way.
        self.retired
            .extend(std::mem::take(&mut job.finishing_artifacts));
        job.finishing = None;
        job.waking = None;
        for tid in &job.tasks {
            let Some(task) = self.tasks.get_mut(tid) else {
                continue;
            };
            match task.state {
                TaskState::Queued => {
                    task.state = TaskState::Cancelled;
                    w.push(Self::task_write(task));
                }
                TaskState::Running => {
                    task.cancel = true;
                    self.cancels_new = true;
                }
                _ => {}
            }
        }
        let job = &self.jobs[&id];
        w.push(self.job_write(job));
        w.push(Self::event(
            Some(id),
            state.as_str(),
            error.unwrap_or_default(),
        ));
        self.changed.insert(id);
    }

    /// A job with a large spec (at least [`REST_BYTES`]) that waits in the queue without having
    /// started does not hold its prepared form (for a tree it weighs about 28 times the
    /// position): only its planner and the planner's progress stay. Small jobs keep theirs:
    /// it costs little and preparing again would not. [`Scheduler::wake`] prepares it again at its first lease.
    pub(super) fn rest(&mut self, id: u64) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        if job.state != JobState::Queued || job.spec_bytes < REST_BYTES {
            return;
        }
        if let (Some(p), Some(j)) = (&job.planner, job.prepared.take()) {
            job.progress_at_rest = Some(p.progress(&*j));
        }
    }

    /// Gives an active job its prepared form again, if it rests ([`Scheduler::rest`]): at once
    /// (`Ok(true)`) when work runs inline, else handed to the planning thread (`Ok(false)`: the
    /// job's tasks wait until [`Scheduler::complete`] brings it). The job was checked when it
    /// was submitted; this is the same check, so it fails only if the service changed meanwhile.
    pub(super) fn wake(&mut self, id: u64) -> Result<bool, registry::SolveError> {
        let Some(job) = self.jobs.get_mut(&id) else {
            return Ok(true);
        };
        if job.prepared.is_some() || job.state.is_final() {
            return Ok(true);
        }
        if job.waking.is_some() {
            return Ok(false);
        }
        let token = self.next_token;
        self.next_token += 1;
        let work = Background::Prepare {
            id,
            token,
            spec: job.spec.clone(),
        };
        job.waking = Some(token);
        if self.background {
            self.to_background.push(work);
            return Ok(false);
        }
        let mut w = Vec::new();
        self.complete_with(work.run(), &mut w);
        let job = &self.jobs[&id];
        match &job.error {
            Some(e) if job.state.is_final() => Err(registry::SolveError::Internal(e.clone())),
            _ => Ok(true),
        }
    }

    /// Work to run off the lock ([`Background`]); empty unless [`Scheduler::set_background`].
    pub fn take_background(&mut self) -> Vec<Background> {
        std::mem::take(&mut self.to_background)
    }

    /// From now on, work too heavy for the lock is handed out ([`Scheduler::take_background`])
    /// instead of running inline. The coordinator turns it on; tests of the scheduler alone
    /// keep the inline path, which runs the same [`Background::run`].
    pub fn set_background(&mut self, on: bool) {
        self.background = on;
    }

    /// Takes back what background work gave ([`Background::run`]) and commits its effect.
    pub fn complete(&mut self, done: BackgroundDone) -> Result<(), SchedError> {
        let mut w = Vec::new();
        self.complete_with(done, &mut w);
        self.commit(w)
    }

    fn complete_with(&mut self, done: BackgroundDone, w: &mut Vec<Write>) {
        match done {
            BackgroundDone::Finished {
                id,
                token,
                planner,
                result,
                proof,
            } => {
                let Some(job) = self.handed_back(id, token, |j| &mut j.finishing) else {
                    return;
                };
                job.finishing_artifacts.clear();
                job.planner = Some(*planner);
                // A plan that drops the proof keeps the one stored with the latest accepted
                // output.
                if let Some(proof) = proof {
                    w.push(Write::Artifact { job_id: id, proof });
                }
                self.end_job(id, JobState::Done, Some(result), None, w);
            }
            BackgroundDone::Prepared {
                id,
                token,
                prepared,
            } => {
                let Some(job) = self.handed_back(id, token, |j| &mut j.waking) else {
                    return;
                };
                match prepared {
                    Ok(p) => {
                        job.prepared = Some(p);
                        job.progress_at_rest = None;
                        // Its queued tasks may be leased now.
                        self.queued_new = true;
                        self.changed.insert(id);
                    }
                    Err(e) => self.end_job(
                        id,
                        JobState::Failed,
                        None,
                        Some(format!("cannot prepare the job again: {e}")),
                        w,
                    ),
                }
            }
        }
    }

    /// The live job whose background work came back with `token`, the token taken out of
    /// its `slot`; `None` when the work no longer counts (the job ended, or a newer hand-out
    /// replaced the token).
    fn handed_back(
        &mut self,
        id: u64,
        token: u64,
        slot: fn(&mut Job) -> &mut Option<u64>,
    ) -> Option<&mut Job> {
        let job = self.jobs.get_mut(&id).filter(|j| !j.state.is_final())?;
        let held = slot(job);
        if *held != Some(token) {
            return None;
        }
        *held = None;
        Some(job)
    }

    /// The artifacts to delete now: those the planners retired (old round chunks of retrograde
    /// builds) that no active job may still read. Call only after the changes that retired
    /// them were committed (a restart replays them, and the tasks it re-runs read what the
    /// store says is live).
    pub fn take_deletable_artifacts(&mut self) -> Vec<String> {
        if self.retired.is_empty() {
            return Vec::new();
        }
        let live: HashSet<String> = self
            .jobs
            .values()
            .filter(|j| !j.state.is_final())
            .filter_map(|j| j.planner.as_ref())
            .flat_map(|p| p.live_artifacts())
            .collect();
        let mut out = std::mem::take(&mut self.retired);
        out.sort_unstable();
        out.dedup();
        out.retain(|n| !live.contains(n));
        out
    }

    /// What the active jobs read of the artifact store: their planners' live round chunks, and
    /// the manifests of the sets they are pinned to (`tables=NAME@HASH`). Retention deletes
    /// neither (`crate::retention`).
    pub fn artifacts_in_use(&self) -> (HashSet<String>, HashSet<String>) {
        let (mut live, mut pinned) = (HashSet::new(), HashSet::new());
        for j in self.jobs.values().filter(|j| !j.state.is_final()) {
            if let Some(p) = &j.planner {
                live.extend(p.live_artifacts());
            }
            if let Some((_, hash)) = j.spec.options.get("tables").and_then(|t| t.split_once('@')) {
                pinned.insert(hash.trim().to_string());
            }
        }
        (live, pinned)
    }

    /// Cancels a job; its running tasks are told to stop through their heartbeats.
    pub fn cancel(&mut self, id: u64) -> Result<(), SchedError> {
        let Some(job) = self.jobs.get(&id) else {
            // Not resident: an evicted (ended) job, or none.
            let state = self
                .store
                .queries()
                .job_state(id)
                .map_err(store_error)?
                .ok_or_else(|| SchedError::NotFound(format!("no job {id}")))?;
            return Err(SchedError::Conflict(format!(
                "job {id} has already ended ({state})"
            )));
        };
        if job.state.is_final() {
            return Err(SchedError::Conflict(format!(
                "job {id} has already ended ({})",
                job.state.as_str()
            )));
        }
        let mut w = Vec::new();
        self.end_job(
            id,
            JobState::Cancelled,
            None,
            Some("cancelled by request".into()),
            &mut w,
        );
        self.commit(w)
    }
}
