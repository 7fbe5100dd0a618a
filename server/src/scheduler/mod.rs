//! The scheduler: jobs, their planners, the task queue and the leases, as one state machine.
//!
//! This file holds the state (the types below) and the small helpers every part uses. The
//! `impl Scheduler` is cut by concern, one file each:
//! - `restore`: opening on the store, committing each change, rebuilding memory from the store;
//! - `submit`: quotas, submitting, driving a job's planner, ending a job, background work;
//! - `lease`: workers, leases, heartbeats, releases, expiry, time limits, cancels;
//! - `report`: a task's outcome, checked, stored and fed to its job's planner;
//! - `status`: what the coordinator reads (job status, task pages, lists, service status).
//!
//! The scheduler never runs a search: it prepares a job only to validate it, to check and merge
//! its results.

mod games;
mod lease;
mod proved;
mod report;
mod restore;
mod status;
mod submit;

pub use report::{precheck, Prechecked};
pub use status::{list, proof, stored_status, task_page};
pub use submit::{Background, BackgroundDone};

use crate::answers::TaskView;
use crate::store::{Store, Write};
use gamesolver_shared::plan::Planner;
use gamesolver_shared::registry::PreparedJob;
use gamesolver_shared::wire::{JobSpec, TaskKind};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Default lease time. Long enough that a heartbeat every third of it survives a busy machine;
/// short enough that a dead worker's task moves on within seconds.
pub const DEFAULT_LEASE_MS: u64 = 15_000;
/// Default number of attempts of one task before its job fails (Celery and Faktory default to a
/// few retries; three tells a flaky worker from a poison task).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// Upper bound on the tasks one job keeps in flight, whatever the number of worker slots: beyond
/// it k-ary probes gain little (each extra probe cuts the interval less).
pub const MAX_PARALLELISM: usize = 16;
/// Default cap on the tasks a job-level proof-number job (`jlpns`) keeps in flight: every task
/// is a distinct leaf of the job's tree, so it can use far more workers than a probe plan.
pub const DEFAULT_MAX_JOB_LEVEL_PARALLELISM: usize = 256;
/// Largest accepted `--max-job-level-parallelism`. What grows with it: the job's pending task
/// rows, the leaves marked busy on each planning step (a walk of each pending leaf's path),
/// and the tree, by a leaf's children per task, at 130-235 B per node in memory (so 4,096
/// tasks in flight of Connect Four add about 4,096 x 7 x 235 B = 6.7 MB per round of results).
pub const MAX_JOB_LEVEL_PARALLELISM: usize = 4096;
/// Default cap on jobs not ended (queued or running); past it a submit gets 429.
pub const DEFAULT_MAX_QUEUED_JOBS: usize = 1000;
/// Default cap on the bytes of job specs (position and options) held in memory.
pub const DEFAULT_MAX_POSITION_BYTES: usize = 64 << 20;
/// Default cap on the tasks of one job's plan (runs, or iterations of a rounds plan).
pub const DEFAULT_MAX_TASKS_PER_JOB: u64 = 10_000;
/// Default cap on the size of a proof certificate (its JSON) a worker may report.
pub const DEFAULT_MAX_PROOF_BYTES: usize = 64 << 20;
/// Finished tasks a job's status lists (the most recent ones); all of them are paged at
/// `GET /v1/jobs/{id}/tasks`.
pub const STATUS_RECENT_TASKS: usize = 50;

/// A position longer than this is shown cut (with its length) in a job's status.
pub const STATUS_POSITION_BYTES: usize = 4096;

/// Settings of the scheduler.
#[derive(Clone, Debug)]
pub struct SchedConfig {
    /// Lease time in milliseconds.
    pub lease_ms: u64,
    /// Attempts of a task before its job fails.
    pub max_attempts: u32,
    /// Tasks a job keeps in flight; `None` follows the number of live worker slots.
    pub parallelism: Option<usize>,
    /// Cap on the tasks a job-level proof-number job keeps in flight (other plans: at most
    /// [`MAX_PARALLELISM`]), 1..=[`MAX_JOB_LEVEL_PARALLELISM`].
    pub max_job_level_parallelism: usize,
    /// Jobs not ended (queued or running) at most; more is 429.
    pub max_queued_jobs: usize,
    /// Bytes of job specs (position and options) held in memory at most; more is 429.
    pub max_position_bytes: usize,
    /// Tasks of one job's plan at most (runs, rounds iterations); more is 400.
    pub max_tasks_per_job: u64,
    /// Bytes of one proof certificate at most; a larger one fails the attempt.
    pub max_proof_bytes: usize,
}

impl Default for SchedConfig {
    fn default() -> Self {
        SchedConfig {
            lease_ms: DEFAULT_LEASE_MS,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            parallelism: None,
            max_job_level_parallelism: DEFAULT_MAX_JOB_LEVEL_PARALLELISM,
            max_queued_jobs: DEFAULT_MAX_QUEUED_JOBS,
            max_position_bytes: DEFAULT_MAX_POSITION_BYTES,
            max_tasks_per_job: DEFAULT_MAX_TASKS_PER_JOB,
            max_proof_bytes: DEFAULT_MAX_PROOF_BYTES,
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
    /// A quota of the service is full (the message names it): HTTP 429.
    Quota(String),
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
            | SchedError::Quota(m)
            | SchedError::Store(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SchedError {}

pub use crate::answers::{JobState, TaskState};

/// Tasks of a job that have finished, summarised: counts, and the latest few as shown.
#[derive(Default)]
struct Finished {
    done: u64,
    failed: u64,
    cancelled: u64,
    /// The most recent ones (at most [`STATUS_RECENT_TASKS`]), oldest first.
    recent: VecDeque<TaskView>,
}

struct Job {
    id: u64,
    /// Shared with lease grants and status answers, never copied while the job is held.
    spec: Arc<JobSpec>,
    /// Bytes of its position and options (the quota [`SchedConfig::max_position_bytes`]).
    spec_bytes: usize,
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
    /// The planner's progress while the job rests without its prepared form
    /// ([`Scheduler::rest`]).
    progress_at_rest: Option<Value>,
    /// Its tasks held in memory: those not finished, or still on a worker.
    tasks: Vec<u64>,
    /// Its finished tasks, summarised.
    finished: Finished,
    /// Its final status is in the store (it may be evicted).
    final_stored: bool,
    /// Its planner is done and being finished off the lock (the token of that work, see
    /// [`Background`]); the planner is away meanwhile.
    finishing: Option<u64>,
    /// Artifacts the away planner still reads (kept from deletion while it finishes).
    finishing_artifacts: Vec<String>,
    /// Its prepared form is being made again off the lock (the token of that work).
    waking: Option<u64>,
    /// Positions its workers proved, for the others (job-level plans; in memory only).
    proved: proved::ProvedPool,
}

impl Job {
    /// A job as it starts in memory: no prepared form, planner, result or tasks yet (submitting
    /// and restoring set what they know on top).
    fn new(id: u64, spec: JobSpec, spec_bytes: usize, state: JobState, created_ms: u64) -> Job {
        Job {
            id,
            spec: Arc::new(spec),
            spec_bytes,
            state,
            created_ms,
            finished_ms: None,
            prepared: None,
            planner: None,
            result: None,
            error: None,
            kernel_progress: None,
            final_progress: None,
            progress_at_rest: None,
            tasks: Vec::new(),
            finished: Finished::default(),
            final_stored: false,
            finishing: None,
            finishing_artifacts: Vec::new(),
            waking: None,
            proved: Default::default(),
        }
    }

    /// Whether its tasks' outcomes still matter: it has not ended, and its plan is not done
    /// (a plan being finished off the lock takes no more results; its end cancels the rest).
    fn takes_results(&self) -> bool {
        !self.state.is_final() && self.finishing.is_none()
    }
}

struct Task {
    id: u64,
    job_id: u64,
    kind: TaskKind,
    /// How the job's status names it (made while the job is prepared, so no read prepares it).
    what: String,
    state: TaskState,
    attempts: u32,
    lease: Option<String>,
    last_error: Option<String>,
    /// The planner no longer needs it, or its job ended: tell the worker to stop.
    cancel: bool,
    /// Workers that held a lease on it, in order.
    workers: Vec<String>,
    /// Its leases (any state), to forget their record when the job is evicted.
    lease_ids: Vec<String>,
    /// When its latest lease was handed out and when it ended (ms since the Unix epoch), as
    /// the store's `leases` keep them.
    started_ms: Option<u64>,
    ended_ms: Option<u64>,
    /// The task that continues it from its latest stored checkpoint (handed out instead of
    /// `kind` when it is leased again; results still count for `kind`).
    resume: Option<TaskKind>,
    /// The latest progress its worker reported while it ran (nodes and rate, or the kernel's
    /// own report), shown in the job's task list while the task runs.
    progress: Option<Value>,
    /// Held for a worker until then: a job-level leaf picked near the one that worker's table
    /// holds (see [`Scheduler::report`]); other workers pass it over while the holder has a
    /// free slot. Not stored: a restart hands it to anyone.
    held_for: Option<(String, Instant)>,
}

impl Task {
    /// A new task of job `job_id`, queued and never leased.
    fn queued(id: u64, job_id: u64, kind: TaskKind, what: String) -> Task {
        Task {
            id,
            job_id,
            kind,
            what,
            state: TaskState::Queued,
            attempts: 0,
            lease: None,
            last_error: None,
            cancel: false,
            workers: Vec::new(),
            lease_ids: Vec::new(),
            started_ms: None,
            ended_ms: None,
            resume: None,
            progress: None,
            held_for: None,
        }
    }
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
    /// Without a lease and without contact after this, the worker is forgotten
    /// ([`Scheduler::expire_workers`]).
    alive_until: Instant,
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
    /// Results that arrived after the planner stopped needing them (obsolete probes, tasks of
    /// ended jobs): their tasks count as cancelled.
    pub results_unneeded: u64,
    /// Results refused by the job's checks ([`PreparedJob::check_output`]) or over the proof
    /// size limit: each counted as a failed attempt.
    pub results_invalid: u64,
}

/// The scheduler state. Not thread-safe by itself: the coordinator keeps it behind one lock,
/// which also makes the store's single writer.
pub struct Scheduler {
    config: SchedConfig,
    store: Store,
    jobs: BTreeMap<u64, Job>,
    /// Bytes of the specs of the resident jobs (see [`spec_bytes`]).
    held_bytes: usize,
    tasks: HashMap<u64, Task>,
    queue: VecDeque<u64>,
    leases: HashMap<String, Lease>,
    /// Ended leases of resident tasks: id -> (worker id, how it ended). Older ones are in the
    /// store ([`Scheduler::lease_end`]).
    ended: HashMap<String, (String, &'static str)>,
    /// Evicted (finished) jobs by state, for the counts in `/v1/status` and `/metrics`.
    evicted: BTreeMap<&'static str, u64>,
    /// Artifacts the planners no longer read, from results already in the store (see
    /// [`Scheduler::take_deletable_artifacts`]).
    retired: Vec<String>,
    workers: BTreeMap<String, Worker>,
    next_job: u64,
    next_task: u64,
    counters: Counters,
    done_times: VecDeque<Instant>,
    /// Effects of the last calls, drained by the coordinator: jobs whose status changed and
    /// whether tasks were queued.
    changed: BTreeSet<u64>,
    queued_new: bool,
    /// When the earliest hold the last lease call passed over ends (a waiting worker looks
    /// again then, [`Scheduler::passed_hold_until`]).
    passed_hold: Option<Instant>,
    /// Whether work too heavy for the lock goes to [`Scheduler::take_background`] (the
    /// coordinator's planning thread) rather than running inline ([`Scheduler::set_background`]).
    background: bool,
    /// Work handed out of the lock, drained by the coordinator.
    to_background: Vec<Background>,
    /// Tokens of background work: a result whose token is not the job's current one (the job
    /// was rebuilt or ended meanwhile) is dropped.
    next_token: u64,
    /// Tasks were cancelled since the last drain (workers watching for cancels look again).
    cancels_new: bool,
}

/// The lease id stored with the result of a task that the time limit stopped before it was
/// leased.
const UNSTARTED_LEASE: &str = "time-limit";

pub use gamesolver_shared::plan::UNSTARTED;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// One line naming a task, for errors and events. A probe's target is shown in the job's value
/// scale (docs/API.md, section 3: a Connect Four score, not the internal x100 integer) when the
/// job is at hand, else as the internal integer.
fn describe(kind: &TaskKind, job: Option<&dyn PreparedJob>) -> String {
    match kind {
        TaskKind::Whole => "the whole job".into(),
        TaskKind::Probe { target } => match job {
            Some(j) => format!("probe value >= {}", j.show_value(*target)),
            None => format!("probe value >= {target} (internal)"),
        },
        TaskKind::Run { index, .. } => format!("run {index}"),
        TaskKind::Leaf {
            target,
            path,
            budget_div,
        } => {
            let t = match job {
                Some(j) => j.show_value(*target).to_string(),
                None => format!("{target} (internal)"),
            };
            let short = match budget_div {
                Some(d) => format!(" (budget / {d})"),
                None => String::new(),
            };
            format!("leaf {} value >= {t}{short}", path.join(" "))
        }
        TaskKind::Move { mv, task } => {
            let child = job.and_then(|j| j.child(mv));
            format!("move {mv}: {}", describe(task, child))
        }
        TaskKind::Retro {
            db,
            round,
            start,
            end,
            ..
        } => format!("{db} stones, round {round}, entries {start}..{end}"),
        TaskKind::RetroSeal { db, .. } => format!("{db} stones: seal the database"),
    }
}

/// Cuts `text` to at most `max` bytes at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Bytes of a job's position and options (what the memory quota counts).
fn spec_bytes(spec: &JobSpec) -> usize {
    spec.position.len()
        + spec
            .options
            .iter()
            .chain(spec.game_params.iter())
            .map(|(k, v)| k.len() + v.len())
            .sum::<usize>()
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

impl Scheduler {
    fn job_write(&self, job: &Job) -> Write {
        Write::JobState {
            id: job.id,
            state: job.state.as_str(),
            finished_ms: job.finished_ms,
            result: job.result.as_ref().map(to_json),
            error: job.error.clone(),
            progress: job.final_progress.as_ref().map(to_json),
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
}

fn store_error(e: rusqlite::Error) -> SchedError {
    SchedError::Store(format!("the job store failed: {e}"))
}

#[cfg(test)]
mod tests;
