//! The scheduler: jobs, their planners, the task queue and the leases, as one state machine.
//!
//! Contract (the semantics of the trusted queues: SQS visibility timeout, Celery acks-late,
//! Faktory reservations, Temporal heartbeats):
//! - A worker leases one task at a time per slot. A lease lives `lease_ms` after its grant or
//!   its last heartbeat; an expired lease hands the task to the next worker that asks.
//! - Every lease counts as an attempt. A task whose attempts fail (a kernel error or panic, or a
//!   worker that dies and lets the lease expire) `max_attempts` times fails its job with a reason
//!   that names the task and the last error. A lease released by a worker that shuts down does
//!   not count.
//! - A result is accepted once per lease. The same report posted again is answered as a
//!   duplicate and changes nothing; a report on an expired, released, foreign or unknown lease
//!   is refused ([`SchedError::Conflict`], HTTP 409). A task has at most one stored result (the
//!   store enforces it as well).
//! - Cancel (of a job, or of a probe that the planner no longer needs) reaches a running task
//!   through the reply to its next heartbeat.
//!
//! Every change is written to the [`Store`] in one transaction before the call returns; after a
//! restart [`Scheduler::open`] rebuilds jobs, queue, leases (given a fresh `lease_ms` so their
//! workers can still report) and planners (by replaying the stored results,
//! [`Planner::restore`]).
//!
//! The scheduler never runs a search: it prepares a job only to validate it and to merge its
//! results. Bad input to [`Scheduler::submit`] is refused before anything is stored.

use crate::store::{Snapshot, Store, Write};
use gamesolver_shared::plan::{job_result, Planner};
use gamesolver_shared::registry::{self, PreparedJob};
use gamesolver_shared::wire::protocol::{
    Heartbeat, HeartbeatReply, Lease as LeaseGrant, Outcome, Register, Registered, Release, Report,
    ReportReply,
};
use gamesolver_shared::wire::{JobSpec, TaskKind, TaskOutput, TaskSpec};
use rand::Rng;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Default lease time. Long enough that a heartbeat every third of it survives a busy machine;
/// short enough that a dead worker's task moves on within seconds.
pub const DEFAULT_LEASE_MS: u64 = 15_000;
/// Default number of attempts of one task before its job fails (Celery and Faktory default to a
/// few retries; three tells a flaky worker from a poison task).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// Upper bound on the tasks one job keeps in flight, whatever the number of worker slots: beyond
/// it k-ary probes gain little (each extra probe cuts the interval less).
pub const MAX_PARALLELISM: usize = 16;

/// Settings of the scheduler.
#[derive(Clone, Debug)]
pub struct SchedConfig {
    /// Lease time in milliseconds.
    pub lease_ms: u64,
    /// Attempts of a task before its job fails.
    pub max_attempts: u32,
    /// Tasks a job keeps in flight; `None` follows the number of live worker slots.
    pub parallelism: Option<usize>,
}

impl Default for SchedConfig {
    fn default() -> Self {
        SchedConfig {
            lease_ms: DEFAULT_LEASE_MS,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            parallelism: None,
        }
    }
}

/// Why a scheduler call was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchedError {
    /// The request is wrong (bad job): HTTP 400.
    BadInput(String),
    /// No such job: HTTP 404.
    NotFound(String),
    /// The worker id is not registered: HTTP 404; the worker registers again.
    UnknownWorker(String),
    /// The lease or job is not in a state that allows this: HTTP 409.
    Conflict(String),
    /// The store failed: HTTP 500.
    Store(String),
}

impl std::fmt::Display for SchedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchedError::BadInput(m)
            | SchedError::NotFound(m)
            | SchedError::UnknownWorker(m)
            | SchedError::Conflict(m)
            | SchedError::Store(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SchedError {}

/// State of a job (CONTRACTS.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobState {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl JobState {
    /// The name in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }
    fn parse(s: &str) -> Option<JobState> {
        Some(match s {
            "queued" => JobState::Queued,
            "running" => JobState::Running,
            "done" => JobState::Done,
            "failed" => JobState::Failed,
            "cancelled" => JobState::Cancelled,
            _ => return None,
        })
    }
    /// Whether the job has ended.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            JobState::Done | JobState::Failed | JobState::Cancelled
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TaskState {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl TaskState {
    fn as_str(self) -> &'static str {
        match self {
            TaskState::Queued => "queued",
            TaskState::Running => "running",
            TaskState::Done => "done",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
        }
    }
    fn parse(s: &str) -> TaskState {
        match s {
            "running" => TaskState::Running,
            "done" => TaskState::Done,
            "failed" => TaskState::Failed,
            "cancelled" => TaskState::Cancelled,
            _ => TaskState::Queued,
        }
    }
}

struct Job {
    id: u64,
    spec: JobSpec,
    state: JobState,
    created_ms: u64,
    finished_ms: Option<u64>,
    /// Present while the job is active.
    prepared: Option<Arc<dyn PreparedJob>>,
    /// Present while the job is active.
    planner: Option<Planner>,
    result: Option<Value>,
    error: Option<String>,
    /// Latest kernel progress of any of its tasks.
    kernel_progress: Option<Value>,
    /// The planner's progress when the job ended (the planner itself is dropped then).
    final_progress: Option<Value>,
    tasks: Vec<u64>,
}

struct Task {
    id: u64,
    job_id: u64,
    kind: TaskKind,
    state: TaskState,
    attempts: u32,
    lease: Option<String>,
    last_error: Option<String>,
    /// The planner no longer needs it, or its job ended: tell the worker to stop.
    cancel: bool,
    /// Workers that held a lease on it, in order.
    workers: Vec<String>,
}

struct Lease {
    task_id: u64,
    worker_id: String,
    expires: Instant,
}

struct Worker {
    host: String,
    threads: u32,
    last_seen: Option<Instant>,
    last_seen_ms: Option<u64>,
    leases: BTreeSet<String>,
}

/// Monotonic counters for `/metrics`.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    pub jobs_submitted: u64,
    pub tasks_leased: u64,
    pub tasks_done: u64,
    pub task_failures: u64,
    pub leases_expired: u64,
    pub leases_released: u64,
    pub results_duplicate: u64,
    pub results_refused: u64,
}

/// The scheduler state. Not thread-safe by itself: the coordinator keeps it behind one lock,
/// which also makes the store's single writer.
pub struct Scheduler {
    config: SchedConfig,
    store: Store,
    jobs: BTreeMap<u64, Job>,
    tasks: HashMap<u64, Task>,
    queue: VecDeque<u64>,
    leases: HashMap<String, Lease>,
    /// Ended leases: id -> (worker id, how it ended).
    ended: HashMap<String, (String, &'static str)>,
    workers: BTreeMap<String, Worker>,
    next_job: u64,
    next_task: u64,
    counters: Counters,
    done_times: VecDeque<Instant>,
    /// Effects of the last calls, drained by the coordinator: jobs whose status changed and
    /// whether tasks were queued.
    changed: BTreeSet<u64>,
    queued_new: bool,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn random_id(prefix: &str) -> String {
    let mut rng = rand::thread_rng();
    format!("{prefix}{:016x}{:016x}", rng.gen::<u64>(), rng.gen::<u64>())
}

/// One line naming a task, for errors and events.
fn describe(kind: &TaskKind) -> String {
    match kind {
        TaskKind::Whole => "the whole job".into(),
        TaskKind::Probe { target } => format!("probe value >= {target}"),
        TaskKind::Run { index, .. } => format!("run {index}"),
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

impl Scheduler {
    /// Opens the scheduler on `store`, rebuilding every job, task and lease it holds.
    pub fn open(store: Store, config: SchedConfig) -> anyhow::Result<Scheduler> {
        let snap = store.load()?;
        let mut s = Scheduler {
            config,
            store,
            jobs: BTreeMap::new(),
            tasks: HashMap::new(),
            queue: VecDeque::new(),
            leases: HashMap::new(),
            ended: HashMap::new(),
            workers: BTreeMap::new(),
            next_job: 1,
            next_task: 1,
            counters: Counters::default(),
            done_times: VecDeque::new(),
            changed: BTreeSet::new(),
            queued_new: false,
        };
        let mut w = Vec::new();
        s.restore(snap, &mut w);
        s.commit(w)?;
        Ok(s)
    }

    fn restore(&mut self, snap: Snapshot, w: &mut Vec<Write>) {
        let now = Instant::now();
        for (id, host, threads) in snap.workers {
            self.workers.insert(
                id,
                Worker {
                    host,
                    threads,
                    last_seen: None,
                    last_seen_ms: None,
                    leases: BTreeSet::new(),
                },
            );
        }
        let mut active_leases: HashMap<u64, (String, String)> = HashMap::new();
        let mut lease_workers: HashMap<u64, Vec<String>> = HashMap::new();
        for l in snap.leases {
            lease_workers
                .entry(l.task_id)
                .or_default()
                .push(l.worker_id.clone());
            match l.state.as_str() {
                "active" => {
                    active_leases.insert(l.task_id, (l.id, l.worker_id));
                }
                "done" => {
                    self.ended.insert(l.id, (l.worker_id, "done"));
                }
                "expired" => {
                    self.ended.insert(l.id, (l.worker_id, "expired"));
                }
                _ => {
                    self.ended.insert(l.id, (l.worker_id, "released"));
                }
            }
        }
        let mut outputs: HashMap<u64, TaskOutput> = HashMap::new();
        let mut result_order: Vec<u64> = Vec::new();
        for (task_id, _lease, output) in snap.results {
            if let Ok(o) = serde_json::from_str::<TaskOutput>(&output) {
                outputs.insert(task_id, o);
                result_order.push(task_id);
            }
        }
        let mut by_job: BTreeMap<u64, Vec<crate::store::StoredTask>> = BTreeMap::new();
        for t in snap.tasks {
            self.next_task = self.next_task.max(t.id + 1);
            by_job.entry(t.job_id).or_default().push(t);
        }
        for sj in snap.jobs {
            self.next_job = self.next_job.max(sj.id + 1);
            let spec: JobSpec = serde_json::from_str(&sj.spec).unwrap_or_default();
            let mut state = JobState::parse(&sj.state).unwrap_or(JobState::Failed);
            let mut job = Job {
                id: sj.id,
                spec,
                state,
                created_ms: sj.created_ms,
                finished_ms: sj.finished_ms,
                prepared: None,
                planner: None,
                result: sj
                    .result
                    .as_deref()
                    .and_then(|r| serde_json::from_str(r).ok()),
                error: sj.error,
                kernel_progress: None,
                final_progress: None,
                tasks: Vec::new(),
            };
            let stored_tasks = by_job.remove(&sj.id).unwrap_or_default();
            if !state.is_final() {
                match registry::prepare(&job.spec) {
                    Ok(p) => {
                        let p: Arc<dyn PreparedJob> = Arc::from(p);
                        let mut issued = Vec::new();
                        let mut dropped = Vec::new();
                        let mut kinds: HashMap<u64, TaskKind> = HashMap::new();
                        for t in &stored_tasks {
                            if let Ok(kind) = serde_json::from_str::<TaskKind>(&t.kind) {
                                issued.push(kind.clone());
                                if t.state == "cancelled" && !outputs.contains_key(&t.id) {
                                    dropped.push(kind.clone());
                                }
                                kinds.insert(t.id, kind);
                            }
                        }
                        let results: Vec<(TaskKind, TaskOutput)> = result_order
                            .iter()
                            .filter_map(|tid| {
                                Some((kinds.get(tid)?.clone(), outputs.get(tid)?.clone()))
                            })
                            .collect();
                        let planner = Planner::restore(
                            p.plan_shape(),
                            self.parallelism(),
                            &issued,
                            &results,
                            &dropped,
                        );
                        job.prepared = Some(p);
                        job.planner = Some(planner);
                    }
                    Err(e) => {
                        state = JobState::Failed;
                        job.state = state;
                        job.error = Some(format!("cannot resume the job: {e}"));
                        job.finished_ms = Some(now_ms());
                        w.push(self.job_write(&job));
                    }
                }
            }
            for t in stored_tasks {
                let Ok(kind) = serde_json::from_str::<TaskKind>(&t.kind) else {
                    continue;
                };
                let mut task = Task {
                    id: t.id,
                    job_id: t.job_id,
                    kind,
                    state: TaskState::parse(&t.state),
                    attempts: t.attempts,
                    lease: None,
                    last_error: t.last_error,
                    cancel: false,
                    workers: lease_workers.remove(&t.id).unwrap_or_default(),
                };
                if !state.is_final() {
                    match task.state {
                        TaskState::Queued => self.queue.push_back(task.id),
                        TaskState::Running => match active_leases.remove(&task.id) {
                            Some((lease_id, worker_id)) => {
                                if let Some(wk) = self.workers.get_mut(&worker_id) {
                                    wk.leases.insert(lease_id.clone());
                                }
                                self.leases.insert(
                                    lease_id.clone(),
                                    Lease {
                                        task_id: task.id,
                                        worker_id,
                                        expires: now + Duration::from_millis(self.config.lease_ms),
                                    },
                                );
                                task.lease = Some(lease_id);
                            }
                            None => {
                                task.state = TaskState::Queued;
                                self.queue.push_back(task.id);
                            }
                        },
                        _ => {}
                    }
                }
                job.tasks.push(task.id);
                self.tasks.insert(task.id, task);
            }
            self.jobs.insert(job.id, job);
        }
        // Leases of tasks that ended meanwhile (cannot happen with one transaction per change,
        // but a hand-edited file should not wedge anything).
        for (_, (lease_id, worker_id)) in active_leases {
            self.ended.insert(lease_id, (worker_id, "expired"));
        }
        let active: Vec<u64> = self
            .jobs
            .values()
            .filter(|j| !j.state.is_final())
            .map(|j| j.id)
            .collect();
        for id in active {
            self.advance(id, w);
        }
        if !self.queue.is_empty() {
            self.queued_new = true;
        }
    }

    /// Commits `w`; a store failure becomes [`SchedError::Store`].
    fn commit(&mut self, w: Vec<Write>) -> Result<(), SchedError> {
        self.store.commit(&w).map_err(|e| {
            tracing::error!("store commit failed: {e}");
            SchedError::Store(format!("the job store failed: {e}"))
        })
    }

    /// Drains the effects of the calls so far: (jobs whose status changed, whether new tasks
    /// were queued).
    pub fn take_effects(&mut self) -> (Vec<u64>, bool) {
        let changed = std::mem::take(&mut self.changed).into_iter().collect();
        (changed, std::mem::replace(&mut self.queued_new, false))
    }

    /// The lease time.
    pub fn lease_ms(&self) -> u64 {
        self.config.lease_ms
    }

    fn live_worker_threads(&self) -> usize {
        let horizon = Duration::from_millis(self.config.lease_ms.saturating_mul(2));
        self.workers
            .values()
            .filter(|w| !w.leases.is_empty() || w.last_seen.is_some_and(|t| t.elapsed() < horizon))
            .map(|w| w.threads as usize)
            .sum()
    }

    fn parallelism(&self) -> usize {
        self.config
            .parallelism
            .unwrap_or_else(|| self.live_worker_threads())
            .clamp(1, MAX_PARALLELISM)
    }

    fn job_write(&self, job: &Job) -> Write {
        Write::JobState {
            id: job.id,
            state: job.state.as_str(),
            finished_ms: job.finished_ms,
            result: job.result.as_ref().map(to_json),
            error: job.error.clone(),
        }
    }

    fn task_write(task: &Task) -> Write {
        Write::TaskState {
            id: task.id,
            state: task.state.as_str(),
            attempts: task.attempts,
            last_error: task.last_error.clone(),
        }
    }

    fn event(job_id: Option<u64>, kind: &'static str, detail: String) -> Write {
        Write::Event {
            job_id,
            at_ms: now_ms(),
            kind,
            detail,
        }
    }

    /// Accepts a job that [`registry::prepare`] has checked; stores it with its first tasks in
    /// one transaction and returns its id.
    pub fn submit(
        &mut self,
        spec: JobSpec,
        prepared: Box<dyn PreparedJob>,
    ) -> Result<u64, SchedError> {
        let id = self.next_job;
        self.next_job += 1;
        let prepared: Arc<dyn PreparedJob> = Arc::from(prepared);
        let planner = Planner::new(prepared.plan_shape(), self.parallelism());
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
        self.jobs.insert(
            id,
            Job {
                id,
                spec,
                state: JobState::Queued,
                created_ms,
                finished_ms: None,
                prepared: Some(prepared),
                planner: Some(planner),
                result: None,
                error: None,
                kernel_progress: None,
                final_progress: None,
                tasks: Vec::new(),
            },
        );
        self.advance(id, &mut w);
        if let Err(e) = self.commit(w) {
            // Nothing was stored: forget the job entirely.
            if let Some(job) = self.jobs.remove(&id) {
                for t in job.tasks {
                    self.tasks.remove(&t);
                }
                self.queue.retain(|t| self.tasks.contains_key(t));
            }
            return Err(e);
        }
        self.counters.jobs_submitted += 1;
        self.changed.insert(id);
        Ok(id)
    }

    /// After any change to a job's planner: drops obsolete tasks, issues new ones, or finishes
    /// the job.
    fn advance(&mut self, id: u64, w: &mut Vec<Write>) {
        let parallelism = self.parallelism();
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        if job.state.is_final() {
            return;
        }
        let Some(planner) = job.planner.as_mut() else {
            return;
        };
        for kind in planner.obsolete() {
            planner.forget(&kind);
            for tid in &job.tasks {
                let Some(task) = self.tasks.get_mut(tid) else {
                    continue;
                };
                if task.kind != kind {
                    continue;
                }
                match task.state {
                    TaskState::Queued => {
                        task.state = TaskState::Cancelled;
                        w.push(Self::task_write(task));
                    }
                    TaskState::Running => task.cancel = true,
                    _ => {}
                }
            }
        }
        if !planner.is_done() {
            planner.set_parallelism(parallelism);
            for kind in planner.next_tasks() {
                let tid = self.next_task;
                self.next_task += 1;
                w.push(Write::InsertTask {
                    id: tid,
                    job_id: id,
                    kind: to_json(&kind),
                });
                self.tasks.insert(
                    tid,
                    Task {
                        id: tid,
                        job_id: id,
                        kind,
                        state: TaskState::Queued,
                        attempts: 0,
                        lease: None,
                        last_error: None,
                        cancel: false,
                        workers: Vec::new(),
                    },
                );
                job.tasks.push(tid);
                self.queue.push_back(tid);
                self.queued_new = true;
            }
        }
        if planner.is_done() {
            let prepared = job.prepared.clone().expect("active job has a prepared job");
            let out = planner.finish(&*prepared);
            let finished = now_ms();
            let result = job_result(&*prepared, out, finished.saturating_sub(job.created_ms));
            let result = serde_json::to_value(result).unwrap_or(Value::Null);
            self.end_job(id, JobState::Done, Some(result), None, w);
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
    fn end_job(
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
            _ => None,
        };
        job.prepared = None;
        job.planner = None;
        for tid in &job.tasks {
            let Some(task) = self.tasks.get_mut(tid) else {
                continue;
            };
            match task.state {
                TaskState::Queued => {
                    task.state = TaskState::Cancelled;
                    w.push(Self::task_write(task));
                }
                TaskState::Running => task.cancel = true,
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
            },
        );
        Ok(Registered {
            worker_id: id,
            lease_ms: self.config.lease_ms,
            heartbeat_ms: (self.config.lease_ms / 3).max(1),
        })
    }

    fn touch(&mut self, worker_id: &str) -> Result<(), SchedError> {
        let w = self.workers.get_mut(worker_id).ok_or_else(|| {
            SchedError::UnknownWorker(format!("unknown worker '{worker_id}': register again"))
        })?;
        w.last_seen = Some(Instant::now());
        w.last_seen_ms = Some(now_ms());
        Ok(())
    }

    /// Leases the next queued task to `worker_id`, or `None` when the queue is empty.
    pub fn lease(&mut self, worker_id: &str) -> Result<Option<LeaseGrant>, SchedError> {
        self.touch(worker_id)?;
        while let Some(tid) = self.queue.pop_front() {
            let Some(task) = self.tasks.get_mut(&tid) else {
                continue;
            };
            if task.state != TaskState::Queued {
                continue;
            }
            let Some(job) = self.jobs.get_mut(&task.job_id) else {
                continue;
            };
            if job.state.is_final() {
                continue;
            }
            let lease_id = random_id("l-");
            task.attempts += 1;
            task.state = TaskState::Running;
            task.lease = Some(lease_id.clone());
            task.workers.push(worker_id.to_string());
            let mut w = vec![
                Self::task_write(task),
                Write::InsertLease {
                    id: lease_id.clone(),
                    task_id: tid,
                    worker_id: worker_id.into(),
                    at_ms: now_ms(),
                },
            ];
            if job.state == JobState::Queued {
                job.state = JobState::Running;
                w.push(Write::JobState {
                    id: job.id,
                    state: job.state.as_str(),
                    finished_ms: None,
                    result: None,
                    error: None,
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
                    job: job.spec.clone(),
                    kind: task.kind.clone(),
                },
                time_ms,
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
            self.counters.tasks_leased += 1;
            self.commit(w)?;
            return Ok(Some(grant));
        }
        Ok(None)
    }

    /// Refusal for a lease that is not active for `worker_id`.
    fn lease_conflict(&self, worker_id: &str, lease_id: &str) -> SchedError {
        let why = match (self.leases.get(lease_id), self.ended.get(lease_id)) {
            (Some(l), _) if l.worker_id != worker_id => "belongs to another worker",
            (_, Some((owner, _))) if owner != worker_id => "belongs to another worker",
            (_, Some((_, "expired"))) => "has expired and its task was handed on",
            (_, Some((_, "released"))) => "was released",
            (_, Some(_)) => "has already ended",
            _ => "is unknown",
        };
        SchedError::Conflict(format!("lease '{lease_id}' {why}"))
    }

    fn active_lease(&self, worker_id: &str, lease_id: &str) -> Result<(), SchedError> {
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
        let task = &self.tasks[&lease.task_id];
        let (task_id, job_id, cancel_task) = (task.id, task.job_id, task.cancel);
        let job = self.jobs.get_mut(&job_id).expect("task has a job");
        let cancel = cancel_task || job.state.is_final();
        if let Some(p) = hb.progress {
            let text = to_json(&p);
            job.kernel_progress = Some(json!({"task": task_id, "report": p}));
            self.changed.insert(job_id);
            self.commit(vec![Write::TaskProgress {
                id: task_id,
                progress: text,
            }])?;
        }
        Ok(HeartbeatReply { cancel })
    }

    /// A task's outcome. Idempotent per lease; refused for a lease that is not the worker's.
    pub fn report(&mut self, r: Report) -> Result<ReportReply, SchedError> {
        self.touch(&r.worker_id)?;
        if let Some((owner, "done")) = self.ended.get(&r.lease_id) {
            if *owner == r.worker_id {
                self.counters.results_duplicate += 1;
                return Ok(ReportReply { duplicate: true });
            }
        }
        if let Err(e) = self.active_lease(&r.worker_id, &r.lease_id) {
            self.counters.results_refused += 1;
            return Err(e);
        }
        let lease = self.leases.remove(&r.lease_id).expect("checked");
        if let Some(wk) = self.workers.get_mut(&r.worker_id) {
            wk.leases.remove(&r.lease_id);
        }
        self.ended
            .insert(r.lease_id.clone(), (r.worker_id.clone(), "done"));
        let mut w = vec![Write::LeaseState {
            id: r.lease_id.clone(),
            state: "done",
            at_ms: now_ms(),
        }];
        let tid = lease.task_id;
        let task = self.tasks.get_mut(&tid).expect("lease has a task");
        task.lease = None;
        let job_id = task.job_id;
        let job_active = !self.jobs[&job_id].state.is_final();
        match r.outcome {
            Outcome::Done { output } => {
                task.state = TaskState::Done;
                let kind = task.kind.clone();
                w.push(Self::task_write(task));
                w.push(Write::InsertResult {
                    task_id: tid,
                    lease_id: r.lease_id.clone(),
                    output: to_json(&output),
                });
                self.counters.tasks_done += 1;
                self.done_times.push_back(Instant::now());
                if job_active {
                    let job = self.jobs.get_mut(&job_id).expect("task has a job");
                    if let Some(p) = job.planner.as_mut() {
                        p.on_result(&kind, output);
                    }
                    self.advance(job_id, &mut w);
                }
                self.changed.insert(job_id);
            }
            Outcome::Failed { message } => {
                self.counters.task_failures += 1;
                self.task_failed(
                    tid,
                    format!("failed on worker {}: {message}", r.worker_id),
                    &mut w,
                );
            }
            Outcome::Rejected { message } => {
                task.state = TaskState::Failed;
                task.last_error = Some(message.clone());
                w.push(Self::task_write(task));
                if job_active {
                    self.end_job(
                        job_id,
                        JobState::Failed,
                        None,
                        Some(format!("the worker rejected the job: {message}")),
                        &mut w,
                    );
                }
            }
            Outcome::Stopped { reason } => {
                task.state = TaskState::Failed;
                let message = format!(
                    "the {reason} limit stopped {} before a result",
                    describe(&task.kind)
                );
                task.last_error = Some(message.clone());
                w.push(Self::task_write(task));
                if job_active {
                    self.end_job(job_id, JobState::Failed, None, Some(message), &mut w);
                }
            }
            Outcome::Cancelled => {
                if task.cancel || !job_active {
                    task.state = TaskState::Cancelled;
                    w.push(Self::task_write(task));
                } else {
                    // Stopped on the worker's own account (shutting down): like a release.
                    task.attempts = task.attempts.saturating_sub(1);
                    task.state = TaskState::Queued;
                    w.push(Self::task_write(task));
                    self.queue.push_front(tid);
                    self.queued_new = true;
                }
            }
        }
        self.commit(w)?;
        Ok(ReportReply { duplicate: false })
    }

    /// An attempt at a task failed (error, panic or expired lease): retry it or fail its job.
    fn task_failed(&mut self, tid: u64, message: String, w: &mut Vec<Write>) {
        let max = self.config.max_attempts;
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        task.last_error = Some(message.clone());
        task.lease = None;
        let job_id = task.job_id;
        let job_active = self.jobs.get(&job_id).is_some_and(|j| !j.state.is_final());
        if task.cancel || !job_active {
            task.state = TaskState::Cancelled;
            w.push(Self::task_write(task));
        } else if task.attempts >= max {
            task.state = TaskState::Failed;
            w.push(Self::task_write(task));
            let reason = format!(
                "task {tid} ({}) failed {} times; last attempt {message}",
                describe(&task.kind),
                task.attempts
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
            self.queue.push_back(tid);
            self.queued_new = true;
            self.changed.insert(job_id);
        }
    }

    /// A worker gives a lease back (shutdown): the task is queued again, the attempt not counted.
    pub fn release(&mut self, r: Release) -> Result<(), SchedError> {
        self.touch(&r.worker_id)?;
        if let Some((owner, "released")) = self.ended.get(&r.lease_id) {
            if *owner == r.worker_id {
                return Ok(());
            }
        }
        self.active_lease(&r.worker_id, &r.lease_id)?;
        let lease = self.leases.remove(&r.lease_id).expect("checked");
        if let Some(wk) = self.workers.get_mut(&r.worker_id) {
            wk.leases.remove(&r.lease_id);
        }
        self.ended
            .insert(r.lease_id.clone(), (r.worker_id.clone(), "released"));
        self.counters.leases_released += 1;
        let mut w = vec![Write::LeaseState {
            id: r.lease_id,
            state: "released",
            at_ms: now_ms(),
        }];
        let task = self
            .tasks
            .get_mut(&lease.task_id)
            .expect("lease has a task");
        task.lease = None;
        task.attempts = task.attempts.saturating_sub(1);
        let job_active = self
            .jobs
            .get(&task.job_id)
            .is_some_and(|j| !j.state.is_final());
        if task.cancel || !job_active {
            task.state = TaskState::Cancelled;
        } else {
            task.state = TaskState::Queued;
            self.queue.push_front(task.id);
            self.queued_new = true;
        }
        w.push(Self::task_write(task));
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
            w.push(Write::LeaseState {
                id: id.clone(),
                state: "expired",
                at_ms: now_ms(),
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

    /// Cancels a job; its running tasks are told to stop through their heartbeats.
    pub fn cancel(&mut self, id: u64) -> Result<(), SchedError> {
        let job = self
            .jobs
            .get(&id)
            .ok_or_else(|| SchedError::NotFound(format!("no job {id}")))?;
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

    /// The status of a job (`GET /v1/jobs/{id}`).
    pub fn job_status(&self, id: u64) -> Result<Value, SchedError> {
        let job = self
            .jobs
            .get(&id)
            .ok_or_else(|| SchedError::NotFound(format!("no job {id}")))?;
        let mut counts = [0u64; 5];
        let mut list = Vec::new();
        for tid in &job.tasks {
            if let Some(t) = self.tasks.get(tid) {
                counts[t.state as usize] += 1;
                list.push(json!({
                    "id": t.id,
                    "what": describe(&t.kind),
                    "state": t.state.as_str(),
                    "attempts": t.attempts,
                    "workers": t.workers,
                    "last_error": t.last_error,
                }));
            }
        }
        let mut progress = match (&job.planner, &job.prepared, &job.final_progress) {
            (Some(p), Some(j), _) => p.progress(&**j),
            (_, _, Some(p)) => p.clone(),
            _ => json!({}),
        };
        if let (Some(k), Some(obj)) = (&job.kernel_progress, progress.as_object_mut()) {
            if !job.state.is_final() {
                obj.insert("kernel".into(), k.clone());
            }
        }
        Ok(json!({
            "id": job.id,
            "state": job.state.as_str(),
            "progress": progress,
            "tasks": {
                "total": job.tasks.len(),
                "queued": counts[TaskState::Queued as usize],
                "running": counts[TaskState::Running as usize],
                "done": counts[TaskState::Done as usize],
                "failed": counts[TaskState::Failed as usize],
                "cancelled": counts[TaskState::Cancelled as usize],
            },
            "task_list": list,
            "result": job.result,
            "error": job.error,
            "created_ms": job.created_ms,
            "finished_ms": job.finished_ms,
            "job": job.spec,
        }))
    }

    /// Whether a job has ended (`None`: no such job).
    pub fn job_final(&self, id: u64) -> Option<bool> {
        self.jobs.get(&id).map(|j| j.state.is_final())
    }

    /// Jobs newest first, at most `limit`, with a one-line summary each.
    pub fn list(&self, limit: usize) -> Value {
        let jobs: Vec<Value> = self
            .jobs
            .values()
            .rev()
            .take(limit)
            .map(|j| {
                let what = format!("{} {}", j.spec.game, j.spec.algorithm);
                let summary = match (j.state, &j.result, &j.error) {
                    (JobState::Done, Some(r), _) => format!("{what}: value {}", r.get("value").unwrap_or(&Value::Null)),
                    (_, _, Some(e)) => format!("{what}: {e}"),
                    (s, _, _) => format!("{what}: {}", s.as_str()),
                };
                json!({"id": j.id, "state": j.state.as_str(), "summary": summary, "created_ms": j.created_ms})
            })
            .collect();
        json!({ "jobs": jobs })
    }

    /// Tasks done in the last minute (throughput).
    fn tasks_last_minute(&mut self) -> usize {
        while self
            .done_times
            .front()
            .is_some_and(|t| t.elapsed() > Duration::from_secs(60))
        {
            self.done_times.pop_front();
        }
        self.done_times.len()
    }

    /// `GET /v1/status`: workers, queue depth, throughput.
    pub fn status(&mut self) -> Value {
        let per_minute = self.tasks_last_minute();
        let now = now_ms();
        let workers: Vec<Value> = self
            .workers
            .iter()
            .filter(|(_, w)| w.last_seen.is_some() || !w.leases.is_empty())
            .map(|(id, w)| {
                let current: Vec<Value> = w
                    .leases
                    .iter()
                    .filter_map(|l| {
                        let lease = self.leases.get(l)?;
                        let task = self.tasks.get(&lease.task_id)?;
                        Some(json!({"task": task.id, "job": task.job_id, "what": describe(&task.kind)}))
                    })
                    .collect();
                json!({
                    "id": id,
                    "host": w.host,
                    "threads": w.threads,
                    "last_seen_ms": w.last_seen_ms,
                    "last_seen_ago_ms": w.last_seen_ms.map(|t| now.saturating_sub(t)),
                    "current": current,
                })
            })
            .collect();
        let queue_depth = self.queue_depth();
        let mut states = BTreeMap::new();
        for j in self.jobs.values() {
            *states.entry(j.state.as_str()).or_insert(0u64) += 1;
        }
        json!({
            "workers": workers,
            "queue_depth": queue_depth,
            "running": self.leases.len(),
            "jobs": states,
            "throughput": {"tasks_last_minute": per_minute, "tasks_done_total": self.counters.tasks_done},
        })
    }

    fn queue_depth(&self) -> usize {
        self.queue
            .iter()
            .filter(|t| {
                self.tasks
                    .get(t)
                    .is_some_and(|t| t.state == TaskState::Queued)
            })
            .count()
    }

    /// Numbers for `/metrics`: counters, jobs by state, queue depth, running leases, live
    /// worker slots.
    pub fn metrics(&self) -> (Counters, BTreeMap<&'static str, u64>, usize, usize, usize) {
        let mut states: BTreeMap<&'static str, u64> = BTreeMap::new();
        for s in ["queued", "running", "done", "failed", "cancelled"] {
            states.insert(s, 0);
        }
        for j in self.jobs.values() {
            *states.entry(j.state.as_str()).or_insert(0) += 1;
        }
        (
            self.counters.clone(),
            states,
            self.queue_depth(),
            self.leases.len(),
            self.live_worker_threads(),
        )
    }

    /// Stored results of a task (tests: "counted once").
    pub fn stored_results(&self, task_id: u64) -> Result<u64, SchedError> {
        self.store
            .result_count(task_id)
            .map_err(|e| SchedError::Store(e.to_string()))
    }
}
