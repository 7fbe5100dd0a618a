//! Workers and leases: registering, leasing the next queued task, heartbeats, releases, expiry,
//! the time limits of waiting jobs, and telling workers which tasks to stop.
//!
//! Contract (the semantics of the trusted queues: SQS visibility timeout, Celery acks-late,
//! Faktory reservations, Temporal heartbeats):
//! - A worker leases one task at a time per slot. A lease lives `lease_ms` after its grant or
//!   its last heartbeat; an expired lease hands the task to the next worker that asks.
//! - Every lease counts as an attempt. A task whose attempts fail (a kernel error or panic, or a
//!   worker that dies and lets the lease expire) `max_attempts` times fails its job with a reason
//!   that names the task and the last error. A lease released by a worker that shuts down does
//!   not count.
//! - Cancel (of a job, or of a probe that the planner no longer needs) reaches a running task
//!   through the reply to its next heartbeat.
//!
//! The outcome a worker reports at the end of a lease is the `report` room's.

use super::{
    now_ms, to_json, JobState, Lease, SchedError, Scheduler, TaskState, Worker, UNSTARTED_LEASE,
};
use crate::store::Write;
use gamesolver_shared::search::StopReason;
use gamesolver_shared::wire::protocol::{
    Heartbeat, HeartbeatReply, Lease as LeaseGrant, Register, Registered, Release,
};
use gamesolver_shared::wire::TaskSpec;
use rand::Rng;
use serde_json::json;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// Most jobs that one lease call ends because their time is up before it finds a task: the
/// rest are ended by the next calls (and the sweeper), so no call does unbounded work.
const LEASE_ENDINGS: usize = 32;

/// How many queued tasks a lease looks at past those held for other workers.
const LEASE_SCAN: usize = 64;

fn random_id(prefix: &str) -> String {
    let mut rng = rand::thread_rng();
    format!("{prefix}{:016x}{:016x}", rng.gen::<u64>(), rng.gen::<u64>())
}

impl Scheduler {
    /// Whether tasks on workers were told to stop since the last call (workers watching for
    /// cancels look again, [`Scheduler::cancels_for`]).
    pub fn take_cancels(&mut self) -> bool {
        std::mem::replace(&mut self.cancels_new, false)
    }

    /// The leases of `worker_id` whose tasks should stop now: the planner no longer needs them
    /// or their job ended. A worker that is not known gets `NotFound` (it registers again).
    pub fn cancels_for(&mut self, worker_id: &str) -> Result<Vec<String>, SchedError> {
        self.touch(worker_id)?;
        let Some(wk) = self.workers.get(worker_id) else {
            return Ok(Vec::new());
        };
        Ok(wk
            .leases
            .iter()
            .filter(|l| {
                self.leases
                    .get(*l)
                    .and_then(|lease| self.tasks.get(&lease.task_id))
                    .is_some_and(|t| {
                        t.cancel || self.jobs.get(&t.job_id).is_none_or(|j| !j.takes_results())
                    })
            })
            .cloned()
            .collect())
    }

    /// How lease `id` ended, from memory or else from the store; `None` when it is unknown or
    /// active.
    pub(super) fn lease_end(&self, id: &str) -> Option<(String, &'static str)> {
        if let Some(e) = self.ended.get(id) {
            return Some(e.clone());
        }
        let (worker, state) = self.store.lease_end(id).ok()??;
        let state = match state.as_str() {
            "done" => "done",
            "expired" => "expired",
            _ => "released",
        };
        Some((worker, state))
    }

    /// The lease time.
    pub fn lease_ms(&self) -> u64 {
        self.config.lease_ms
    }

    pub(super) fn live_worker_threads(&self) -> usize {
        self.live_worker_threads_up_to(usize::MAX)
    }

    /// The live workers' threads, counted until `cap` is reached (a thousand workers are not
    /// scanned on each planning step for a parallelism of at most [`MAX_PARALLELISM`]).
    ///
    /// [`MAX_PARALLELISM`]: super::MAX_PARALLELISM
    pub(super) fn live_worker_threads_up_to(&self, cap: usize) -> usize {
        let horizon = Duration::from_millis(self.config.lease_ms.saturating_mul(2));
        let mut sum = 0usize;
        for w in self.workers.values() {
            if sum >= cap {
                break;
            }
            if !w.leases.is_empty() || w.last_seen.is_some_and(|t| t.elapsed() < horizon) {
                sum = sum.saturating_add(w.threads as usize);
            }
        }
        sum
    }

    /// Registers a worker.
    pub fn register(&mut self, reg: Register) -> Result<Registered, SchedError> {
        if reg.threads == 0 || reg.threads > 4096 {
            return Err(SchedError::BadInput(format!(
                "threads must be 1..=4096, not {}",
                reg.threads
            )));
        }
        let id = random_id("w-");
        let at_ms = now_ms();
        let w = vec![
            Write::Worker {
                id: id.clone(),
                host: reg.host.clone(),
                threads: reg.threads,
                at_ms,
            },
            Self::event(
                None,
                "worker",
                format!(
                    "{id} registered from {} with {} slots",
                    reg.host, reg.threads
                ),
            ),
        ];
        self.commit(w)?;
        self.workers.insert(
            id.clone(),
            Worker {
                host: reg.host,
                threads: reg.threads,
                last_seen: Some(Instant::now()),
                last_seen_ms: Some(at_ms),
                leases: BTreeSet::new(),
                alive_until: Instant::now() + self.worker_horizon(),
            },
        );
        Ok(Registered {
            worker_id: id,
            lease_ms: self.config.lease_ms,
            heartbeat_ms: (self.config.lease_ms / 3).max(1),
        })
    }

    pub(super) fn touch(&mut self, worker_id: &str) -> Result<(), SchedError> {
        let horizon = self.worker_horizon();
        let w = self.workers.get_mut(worker_id).ok_or_else(|| {
            SchedError::UnknownWorker(format!("unknown worker '{worker_id}': register again"))
        })?;
        let now = Instant::now();
        w.last_seen = Some(now);
        w.last_seen_ms = Some(now_ms());
        w.alive_until = w.alive_until.max(now + horizon);
        Ok(())
    }

    /// How long a worker without a lease is kept after its last contact: two lease times, as
    /// for counting live slots, so that a worker between two requests is never forgotten.
    pub(super) fn worker_horizon(&self) -> Duration {
        Duration::from_millis(self.config.lease_ms.saturating_mul(2))
    }

    /// A worker waits for a task in a long poll until `until`: it is alive until then, however
    /// short the lease time (the poll is not a contact that refreshes it).
    pub fn worker_waits(&mut self, worker_id: &str, until: Instant) {
        let horizon = self.worker_horizon();
        if let Some(w) = self.workers.get_mut(worker_id) {
            w.alive_until = w.alive_until.max(until + horizon);
        }
    }

    /// Forgets the workers that hold no lease and have not been heard of for the horizon
    /// (a worker that stopped or died), so that the registry holds the live workers, not every
    /// registration since the start. Their registrations stay in the store, and the workers
    /// that held a task stay named in its lease history there. A forgotten worker that comes
    /// back is told to register again. Returns how many were forgotten.
    pub fn expire_workers(&mut self) -> usize {
        let now = Instant::now();
        let before = self.workers.len();
        self.workers
            .retain(|_, w| !w.leases.is_empty() || w.alive_until > now);
        // The throughput window is trimmed here too, so it stays bounded without status reads.
        self.tasks_last_minute();
        before - self.workers.len()
    }

    /// Workers the registry holds (live ones and those within their horizon).
    pub fn known_workers(&self) -> usize {
        self.workers.len()
    }

    /// Whether the job has a time limit and it has passed (counted from its submission).
    fn past_time_limit(&self, job_id: u64) -> bool {
        self.jobs.get(&job_id).is_some_and(|j| {
            j.spec
                .limits
                .time_ms
                .is_some_and(|t| now_ms().saturating_sub(j.created_ms) >= t)
        })
    }

    /// Leases the next queued task to `worker_id`, or `None` when the queue is empty.
    pub fn lease(&mut self, worker_id: &str) -> Result<Option<LeaseGrant>, SchedError> {
        self.touch(worker_id)?;
        let mut w = Vec::new();
        let Some(tid) = self.next_leasable(worker_id, &mut w) else {
            if !w.is_empty() {
                self.commit(w)?;
            }
            return Ok(None);
        };
        let grant = self.grant(tid, worker_id, &mut w);
        self.commit(w)?;
        self.counters.tasks_leased += 1;
        Ok(Some(grant))
    }

    /// The next queued task that `worker_id` may start now, or `None`. Tasks of jobs that no
    /// longer take results are dropped; jobs that cannot be prepared again fail, and jobs past
    /// their time limit whose task would end the plan end (at most [`LEASE_ENDINGS`] a call),
    /// their writes pushed to `w`.
    fn next_leasable(&mut self, worker_id: &str, w: &mut Vec<Write>) -> Option<u64> {
        // Tasks of jobs whose prepared form is being made off the lock: back to the head of
        // the queue, in order, when this call ends.
        let mut waiting: Vec<u64> = Vec::new();
        let mut endings = 0;
        let grant = loop {
            let Some(tid) = self.next_queued_for(worker_id) else {
                break None;
            };
            let Some(job_id) = self
                .tasks
                .get(&tid)
                .filter(|t| t.state == TaskState::Queued)
                .map(|t| t.job_id)
            else {
                continue;
            };
            // A job that ended, or whose plan is done and being finished: its queued tasks are
            // no longer needed (the job's end cancels them).
            if self.jobs.get(&job_id).is_none_or(|j| !j.takes_results()) {
                continue;
            }
            // A job's first lease: it needs its prepared form from now on (results to check
            // and merge), which it did not hold while it waited.
            match self.wake(job_id) {
                Ok(true) => {}
                Ok(false) => {
                    waiting.push(tid);
                    continue;
                }
                Err(e) => {
                    self.end_job(
                        job_id,
                        JobState::Failed,
                        None,
                        Some(format!("cannot prepare the job again: {e}")),
                        w,
                    );
                    continue;
                }
            }
            // The job's time is up and this task would end its plan with what is known: end
            // it here. A worker handed the remaining millisecond could finish a small task in
            // it (a job-level leaf with a tiny budget does), and the plan would never end.
            if self.past_time_limit(job_id) && self.ends_on_stop(job_id, tid) {
                let note = "the time limit stopped it before it started".to_string();
                self.end_task_stopped(tid, UNSTARTED_LEASE.into(), StopReason::Time, note, w);
                endings += 1;
                if endings >= LEASE_ENDINGS {
                    // Bounded work per call: the worker asks again at once.
                    self.queued_new = true;
                    break None;
                }
                continue;
            }
            break Some(tid);
        };
        for &tid in waiting.iter().rev() {
            self.queue.push_front(tid);
        }
        grant
    }

    /// Starts queued task `tid` on `worker_id` under a new lease: the task, lease and (on its
    /// first start) job writes go to `w`, the lease into the book and the worker's set.
    fn grant(&mut self, tid: u64, worker_id: &str, w: &mut Vec<Write>) -> LeaseGrant {
        let store_id = self.store.identity().to_string();
        let job_id = self.tasks[&tid].job_id;
        let task = self.tasks.get_mut(&tid).expect("checked");
        let job = self.jobs.get_mut(&job_id).expect("checked");
        let lease_id = random_id("l-");
        task.attempts += 1;
        task.held_for = None;
        task.state = TaskState::Running;
        task.progress = None;
        task.lease = Some(lease_id.clone());
        task.workers.push(worker_id.to_string());
        task.lease_ids.push(lease_id.clone());
        let at_ms = now_ms();
        task.started_ms = Some(at_ms);
        task.ended_ms = None;
        w.push(Self::task_write(task));
        w.push(Write::InsertLease {
            id: lease_id.clone(),
            task_id: tid,
            worker_id: worker_id.into(),
            at_ms,
        });
        if job.state == JobState::Queued {
            job.state = JobState::Running;
            w.push(Write::JobState {
                id: job.id,
                state: job.state.as_str(),
                finished_ms: None,
                result: None,
                error: None,
                progress: None,
            });
        }
        let time_ms = job.spec.limits.time_ms.map(|t| {
            t.saturating_sub(now_ms().saturating_sub(job.created_ms))
                .max(1)
        });
        let grant = LeaseGrant {
            lease_id: lease_id.clone(),
            task_id: tid,
            job_id: job.id,
            attempt: task.attempts,
            task: TaskSpec {
                job: (*job.spec).clone(),
                kind: task.resume.clone().unwrap_or_else(|| task.kind.clone()),
            },
            time_ms,
            store_id,
            proved: job.proved.take_for(worker_id),
        };
        self.changed.insert(job.id);
        self.leases.insert(
            lease_id.clone(),
            Lease {
                task_id: tid,
                worker_id: worker_id.into(),
                expires: Instant::now() + Duration::from_millis(self.config.lease_ms),
            },
        );
        if let Some(wk) = self.workers.get_mut(worker_id) {
            wk.leases.insert(lease_id);
        }
        grant
    }

    /// Takes the next queued task for `worker_id` off the queue: the first one not held for
    /// another worker that has a free slot (among the first [`LEASE_SCAN`]; past them, the
    /// next one), or none. Entries of tasks no longer queued are left for the lease loop to drop.
    fn next_queued_for(&mut self, worker_id: &str) -> Option<u64> {
        let now = Instant::now();
        let mut passed: Option<Instant> = None;
        let pick = self
            .queue
            .iter()
            .take(LEASE_SCAN)
            .position(|tid| {
                let Some((holder, until)) = self.tasks.get(tid).and_then(|t| t.held_for.as_ref())
                else {
                    return true;
                };
                let takes = holder == worker_id
                    || *until <= now
                    || self
                        .workers
                        .get(holder)
                        .is_none_or(|w| w.leases.len() >= w.threads.max(1) as usize);
                if !takes {
                    passed = Some(passed.map_or(*until, |p| p.min(*until)));
                }
                takes
            })
            .or((self.queue.len() > LEASE_SCAN).then_some(LEASE_SCAN));
        self.passed_hold = passed;
        self.queue.remove(pick?)
    }

    /// When a task the last lease call passed over (held for another worker) stops being held:
    /// a worker that found nothing else should look again then rather than sleep through its
    /// long poll.
    pub fn passed_hold_until(&self) -> Option<Instant> {
        self.passed_hold
    }

    /// A long poll's turn: a lease for `worker_id`, or, with nothing queued, the worker is
    /// marked as waiting until `until` ([`Scheduler::worker_waits`]).
    pub fn lease_or_wait(
        &mut self,
        worker_id: &str,
        until: Instant,
    ) -> Result<Option<LeaseGrant>, SchedError> {
        let grant = self.lease(worker_id)?;
        if grant.is_none() {
            self.worker_waits(worker_id, until);
        }
        Ok(grant)
    }

    /// Refusal for a lease that is not active for `worker_id`.
    fn lease_conflict(&self, worker_id: &str, lease_id: &str) -> SchedError {
        let why = match (self.leases.get(lease_id), self.lease_end(lease_id)) {
            (Some(l), _) if l.worker_id != worker_id => "belongs to another worker",
            (_, Some((owner, _))) if owner != worker_id => "belongs to another worker",
            (_, Some((_, "expired"))) => "has expired and its task was handed on",
            (_, Some((_, "released"))) => "was released",
            (_, Some(_)) => "has already ended",
            _ => "is unknown",
        };
        SchedError::Conflict(format!("lease '{lease_id}' {why}"))
    }

    pub(super) fn active_lease(&self, worker_id: &str, lease_id: &str) -> Result<(), SchedError> {
        match self.leases.get(lease_id) {
            Some(l) if l.worker_id == worker_id => Ok(()),
            _ => Err(self.lease_conflict(worker_id, lease_id)),
        }
    }

    /// A heartbeat: extends the lease, records progress, tells the worker whether to stop.
    pub fn heartbeat(&mut self, hb: Heartbeat) -> Result<HeartbeatReply, SchedError> {
        self.touch(&hb.worker_id)?;
        if let Err(e) = self.active_lease(&hb.worker_id, &hb.lease_id) {
            self.counters.results_refused += 1;
            return Err(e);
        }
        let lease_ms = self.config.lease_ms;
        let lease = self.leases.get_mut(&hb.lease_id).expect("checked");
        lease.expires = Instant::now() + Duration::from_millis(lease_ms);
        let task = self
            .tasks
            .get_mut(&lease.task_id)
            .expect("lease has a task");
        let (task_id, job_id, cancel_task) = (task.id, task.job_id, task.cancel);
        let job = self.jobs.get_mut(&job_id).expect("task has a job");
        let cancel = cancel_task || !job.takes_results();
        if let Some(p) = hb.progress {
            let text = to_json(&p);
            let mut w = vec![Write::TaskProgress {
                id: task_id,
                progress: text,
            }];
            // A checkpoint in the progress is stored as the task that resumes from it.
            if !job.state.is_final() {
                if let Some(r) = job
                    .prepared
                    .as_ref()
                    .and_then(|j| j.resume_task(&task.kind, &p))
                {
                    w.push(Write::TaskResume {
                        id: task_id,
                        input: to_json(&r),
                    });
                    task.resume = Some(r);
                }
            }
            task.progress = Some(p.clone());
            job.kernel_progress = Some(json!({"task": task_id, "report": p}));
            self.changed.insert(job_id);
            self.commit(w)?;
        }
        Ok(HeartbeatReply { cancel })
    }

    /// Ends the active lease `lease_id` of `worker_id` as `state` (`done`, `released`), in
    /// memory and in `w`; returns its task, now off the worker.
    pub(super) fn end_lease(
        &mut self,
        worker_id: &str,
        lease_id: &str,
        state: &'static str,
        w: &mut Vec<Write>,
    ) -> u64 {
        let lease = self.leases.remove(lease_id).expect("checked");
        if let Some(wk) = self.workers.get_mut(worker_id) {
            wk.leases.remove(lease_id);
        }
        self.ended
            .insert(lease_id.to_string(), (worker_id.to_string(), state));
        let at_ms = now_ms();
        w.push(Write::LeaseState {
            id: lease_id.to_string(),
            state,
            at_ms,
        });
        let task = self
            .tasks
            .get_mut(&lease.task_id)
            .expect("lease has a task");
        task.lease = None;
        task.ended_ms = Some(at_ms);
        lease.task_id
    }

    /// A worker gives a lease back (shutdown): the task is queued again, the attempt not counted.
    pub fn release(&mut self, r: Release) -> Result<(), SchedError> {
        self.touch(&r.worker_id)?;
        if let Some((owner, "released")) = self.lease_end(&r.lease_id) {
            if owner == r.worker_id {
                return Ok(());
            }
        }
        self.active_lease(&r.worker_id, &r.lease_id)?;
        let mut w = Vec::new();
        let task_id = self.end_lease(&r.worker_id, &r.lease_id, "released", &mut w);
        self.counters.leases_released += 1;
        let task = self.tasks.get_mut(&task_id).expect("lease has a task");
        task.attempts = task.attempts.saturating_sub(1);
        let job_active = self
            .jobs
            .get(&task.job_id)
            .is_some_and(|j| j.takes_results());
        if task.cancel || !job_active {
            task.state = TaskState::Cancelled;
        } else {
            task.state = TaskState::Queued;
            self.queue.push_front(task.id);
            self.queued_new = true;
        }
        w.push(Self::task_write(task));
        self.changed.insert(task.job_id);
        self.commit(w)
    }

    /// Expires the leases whose time has passed; their tasks are retried or fail their jobs.
    pub fn expire_leases(&mut self) -> Result<usize, SchedError> {
        let now = Instant::now();
        let expired: Vec<String> = self
            .leases
            .iter()
            .filter(|(_, l)| l.expires <= now)
            .map(|(id, _)| id.clone())
            .collect();
        if expired.is_empty() {
            return Ok(0);
        }
        let mut w = Vec::new();
        for id in &expired {
            let lease = self.leases.remove(id).expect("listed");
            if let Some(wk) = self.workers.get_mut(&lease.worker_id) {
                wk.leases.remove(id);
            }
            self.ended
                .insert(id.clone(), (lease.worker_id.clone(), "expired"));
            self.counters.leases_expired += 1;
            let at_ms = now_ms();
            if let Some(t) = self.tasks.get_mut(&lease.task_id) {
                t.ended_ms = Some(at_ms);
            }
            w.push(Write::LeaseState {
                id: id.clone(),
                state: "expired",
                at_ms,
            });
            self.task_failed(
                lease.task_id,
                format!(
                    "on worker {} lost its lease (no heartbeat for {} ms)",
                    lease.worker_id, self.config.lease_ms
                ),
                &mut w,
            );
        }
        self.commit(w)?;
        Ok(expired.len())
    }

    /// Ends what the time limits of waiting jobs have stopped, whether or not a worker asks for
    /// a task (with every worker busy for an hour, a job of a second would otherwise wait that
    /// hour in the queue): a queued task whose job's time is up ends its plan with what is
    /// known, as at a lease, or, in a plan a stop does not end, fails the job naming the limit.
    /// At most [`LEASE_ENDINGS`] jobs a call; the sweeper calls it every tick.
    pub fn end_timed_out(&mut self) -> Result<usize, SchedError> {
        let now = now_ms();
        let due: Vec<u64> = self
            .queue
            .iter()
            .copied()
            .filter(|tid| {
                self.tasks
                    .get(tid)
                    .filter(|t| t.state == TaskState::Queued)
                    .and_then(|t| self.jobs.get(&t.job_id))
                    .is_some_and(|j| {
                        j.takes_results()
                            && j.spec
                                .limits
                                .time_ms
                                .is_some_and(|t| now.saturating_sub(j.created_ms) >= t)
                    })
            })
            .collect();
        let mut w = Vec::new();
        let mut ended = 0;
        for tid in due {
            if ended >= LEASE_ENDINGS {
                break;
            }
            let Some(task) = self.tasks.get(&tid) else {
                continue;
            };
            let (job_id, what) = (task.job_id, task.what.clone());
            if task.state != TaskState::Queued
                || !self.jobs.get(&job_id).is_some_and(|j| j.takes_results())
            {
                continue;
            }
            // A resting job is prepared again first (off the lock); a later call ends it.
            match self.wake(job_id) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    let message = format!("cannot prepare the job again: {e}");
                    self.end_job(job_id, JobState::Failed, None, Some(message), &mut w);
                    ended += 1;
                    continue;
                }
            }
            if self.ends_on_stop(job_id, tid) {
                let note = "the time limit stopped it before it started".to_string();
                self.end_task_stopped(tid, UNSTARTED_LEASE.into(), StopReason::Time, note, &mut w);
            } else {
                let message = format!("the time limit stopped {what} before it started");
                self.end_job(job_id, JobState::Failed, None, Some(message), &mut w);
            }
            ended += 1;
        }
        if ended > 0 {
            self.queue.retain(|tid| {
                self.tasks
                    .get(tid)
                    .is_some_and(|t| t.state == TaskState::Queued)
            });
            self.commit(w)?;
        }
        Ok(ended)
    }
}
