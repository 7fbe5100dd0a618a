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
//! restart [`Scheduler::open`] rebuilds the active jobs, queue, leases (given a fresh `lease_ms`
//! so their workers can still report) and planners (by replaying the stored results,
//! [`Planner::restore`]). A call changes memory, then commits; when the commit fails, memory is
//! rebuilt from the store the same way (the store is the truth), so no failed call leaves a
//! trace in memory, and the call answers [`SchedError::Store`].
//!
//! Quotas ([`SchedConfig`]): jobs not ended and bytes of job specs held are capped (429,
//! [`SchedError::Quota`]), and so are the tasks of one plan (400). Results are checked by the
//! job ([`PreparedJob::check_output`]) before they are stored; a refused result, or a proof
//! certificate over its size limit, is a failed attempt. A proof certificate is stored apart
//! from the result, as the job's artifact.
//!
//! Memory: only active jobs are resident, and of their tasks only those in flight: a finished
//! task is summarised (counts, and the latest [`STATUS_RECENT_TASKS`] as shown), its rows stay
//! in the store. A large job waiting for its first lease does not hold its prepared form. A job
//! that has ended and has no task left on a worker has settled: its complete status is written
//! with the change that settled it, and it is evicted as soon as that call returns
//! ([`Scheduler::take_effects`]); from then on its status (one stored row), the job list, a
//! duplicate report on one of its leases and the job counts are answered from the store, with
//! the same answers as before eviction. Memory thus grows with the jobs in flight, not with
//! history or task counts.
//!
//! Reads: [`Scheduler::resident_status`] builds a resident job's status from memory alone;
//! [`stored_status`], [`list`], [`task_page`] and [`proof`] read the store through any
//! connection, so the coordinator runs them on its read-only connection outside the lock. No
//! read prepares (validates) a job: tasks are named when they are made.
//!
//! The scheduler never runs a search: it prepares a job only to validate it, to check and merge
//! its results. Bad input to [`Scheduler::submit`] is refused before anything is stored.

use crate::store::{Queries, Snapshot, Store, Write};
use gamesolver_shared::plan::{job_result, Planner};
use gamesolver_shared::registry::{self, PreparedJob};
use gamesolver_shared::search::StopReason;
use gamesolver_shared::wire::protocol::{
    Heartbeat, HeartbeatReply, Lease as LeaseGrant, Outcome, Register, Registered, Release, Report,
    ReportReply,
};
use gamesolver_shared::wire::{JobSpec, TaskKind, TaskOutput, TaskSpec};
use rand::Rng;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
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
/// Jobs whose position and options reach this many bytes rest without their prepared form
/// while queued ([`Scheduler::rest`]).
const REST_BYTES: usize = 16 << 10;
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

use crate::answers::{
    HeldTask, JobList, JobStatus, JobSummary, ServiceStatus, TaskCounts, TaskPage, TaskRow,
    TaskView, Throughput, WorkerView,
};
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
}

impl Job {
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

/// Longest message of a worker's `failed` or `rejected` outcome that is kept (the rest is cut).
const MAX_WORKER_MESSAGE: usize = 1000;

/// Most jobs that one lease call ends because their time is up before it finds a task: the
/// rest are ended by the next calls (and the sweeper), so no call does unbounded work.
const LEASE_ENDINGS: usize = 32;

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

/// How long a task picked near a worker's last leaf is held for that worker: long enough for
/// the worker's next lease request after its report, short enough that a worker that does not
/// come back delays nobody for long.
const HOLD_FOR_REPORTER: Duration = Duration::from_millis(500);

/// How many queued tasks a lease looks at past those held for other workers.
const LEASE_SCAN: usize = 64;

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

/// Task counts by state: queued, running, done, failed, cancelled.
type Counts = [u64; 5];

fn count_index(s: TaskState) -> usize {
    match s {
        TaskState::Queued => 0,
        TaskState::Running => 1,
        TaskState::Done => 2,
        TaskState::Failed => 3,
        TaskState::Cancelled => 4,
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

/// The job as a status shows it: a position (or option) longer than
/// [`STATUS_POSITION_BYTES`] is cut to its start, and `position_bytes` gives its length, so
/// polling a job never copies a megabyte tree into every answer.
fn spec_view(spec: &JobSpec) -> (JobSpec, Option<usize>) {
    let long = spec.position.len() > STATUS_POSITION_BYTES;
    let shown = JobSpec {
        game: spec.game.clone(),
        game_params: spec
            .game_params
            .iter()
            .map(|(k, v)| (k.clone(), cut(v, STATUS_POSITION_BYTES).to_string()))
            .collect(),
        position: if long {
            cut(&spec.position, 256).to_string()
        } else {
            spec.position.clone()
        },
        algorithm: spec.algorithm.clone(),
        options: spec
            .options
            .iter()
            .map(|(k, v)| (k.clone(), cut(v, STATUS_POSITION_BYTES).to_string()))
            .collect(),
        limits: spec.limits.clone(),
    };
    (shown, long.then_some(spec.position.len()))
}

/// The `tasks` of a job's status: each task once by its real state (`done` only for a result
/// that was accepted; obsolete probes and the leftovers of an ended job are `cancelled`).
fn task_counts(counts: Counts) -> TaskCounts {
    TaskCounts {
        total: counts.iter().sum(),
        queued: counts[0],
        running: counts[1],
        done: counts[2],
        failed: counts[3],
        cancelled: counts[4],
    }
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
    /// Opens the scheduler on `store`, rebuilding every job, task and lease it holds.
    pub fn open(store: Store, config: SchedConfig) -> anyhow::Result<Scheduler> {
        let mut s = Scheduler {
            config,
            store,
            jobs: BTreeMap::new(),
            held_bytes: 0,
            tasks: HashMap::new(),
            queue: VecDeque::new(),
            leases: HashMap::new(),
            ended: HashMap::new(),
            evicted: BTreeMap::new(),
            retired: Vec::new(),
            workers: BTreeMap::new(),
            next_job: 1,
            next_task: 1,
            counters: Counters::default(),
            done_times: VecDeque::new(),
            changed: BTreeSet::new(),
            queued_new: false,
            passed_hold: None,
            background: false,
            to_background: Vec::new(),
            next_token: 1,
            cancels_new: false,
        };
        let snap = s.store.load()?;
        let w = s.load(snap);
        if let Err(e) = s.store.commit(&w) {
            anyhow::bail!("the job store failed: {e}");
        }
        s.settled_written();
        let ids: Vec<u64> = s.jobs.keys().copied().collect();
        for id in ids {
            s.maybe_evict(id);
        }
        Ok(s)
    }

    /// Replaces the in-memory state (jobs, tasks, queue, leases, counts) by what `snap` holds;
    /// returns the writes that settle it (jobs that cannot resume, final statuses).
    fn load(&mut self, snap: Snapshot) -> Vec<Write> {
        // What a failed commit retired is not in the store: the replay retires it again if it is.
        self.retired.clear();
        self.jobs.clear();
        self.held_bytes = 0;
        self.tasks.clear();
        self.queue.clear();
        self.leases.clear();
        self.ended.clear();
        self.evicted.clear();
        self.workers.clear();
        self.changed.clear();
        // Work handed out before is for the jobs as they were: its results are dropped (their
        // tokens are no job's any more) and the replay below hands out what is still needed.
        self.to_background.clear();
        self.next_job = snap.max_job_id + 1;
        self.next_task = snap.max_task_id + 1;
        for (state, n) in &snap.finished {
            if let Some(st) = JobState::parse(state) {
                *self.evicted.entry(st.as_str()).or_insert(0) += n;
            }
        }
        let mut w = Vec::new();
        self.restore(snap, &mut w);
        self.changed.extend(self.jobs.keys().copied());
        self.settle(&mut w);
        let ids: Vec<u64> = self.jobs.keys().copied().collect();
        for id in ids {
            self.rest(id);
        }
        w
    }

    /// After a failed commit: the store is the truth, so memory is rebuilt from it as
    /// [`Scheduler::open`] would (what the failed call changed in memory is gone). Workers keep
    /// the liveness this process saw.
    fn rebuild(&mut self) {
        let snap = match self.store.load() {
            Ok(s) => s,
            Err(e) => {
                tracing::error!("cannot reload the job store after a failed commit: {e}");
                return;
            }
        };
        let old_workers = std::mem::take(&mut self.workers);
        let w = self.load(snap);
        for (id, old) in old_workers {
            if let Some(nw) = self.workers.get_mut(&id) {
                nw.last_seen = old.last_seen;
                nw.last_seen_ms = old.last_seen_ms;
                nw.alive_until = nw.alive_until.max(old.alive_until);
            }
        }
        match self.store.commit(&w) {
            Ok(()) => self.settled_written(),
            Err(e) => tracing::error!("the job store failed again while reloading: {e}"),
        }
        self.queued_new |= !self.queue.is_empty();
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
                    // A grace period to come back after the coordinator's restart.
                    alive_until: now + self.worker_horizon(),
                },
            );
        }
        let mut active_leases: HashMap<u64, (String, String)> = HashMap::new();
        let mut lease_workers: HashMap<u64, Vec<String>> = HashMap::new();
        let mut lease_ids: HashMap<u64, Vec<String>> = HashMap::new();
        let mut lease_times: HashMap<u64, (u64, Option<u64>)> = HashMap::new();
        for l in snap.leases {
            // In order: the last one is the latest.
            lease_times.insert(l.task_id, (l.created_ms, l.ended_ms));
            lease_workers
                .entry(l.task_id)
                .or_default()
                .push(l.worker_id.clone());
            lease_ids.entry(l.task_id).or_default().push(l.id.clone());
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
            let bytes = spec_bytes(&spec);
            self.held_bytes += bytes;
            let mut job = Job {
                id: sj.id,
                spec: Arc::new(spec),
                spec_bytes: bytes,
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
                progress_at_rest: None,
                tasks: Vec::new(),
                finished: Finished::default(),
                final_stored: false,
                finishing: None,
                finishing_artifacts: Vec::new(),
                waking: None,
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
                        let shape = p.plan_shape();
                        let planner = Planner::restore(
                            shape.clone(),
                            self.parallelism(&shape),
                            &issued,
                            &results,
                            &dropped,
                        );
                        job.prepared = Some(p);
                        job.planner = Some(planner);
                    }
                    Err(e) => {
                        self.changed.insert(job.id);
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
                let what = t
                    .what
                    .unwrap_or_else(|| describe(&kind, job.prepared.as_deref()));
                let mut task = Task {
                    id: t.id,
                    job_id: t.job_id,
                    kind,
                    what,
                    state: TaskState::parse(&t.state),
                    attempts: t.attempts,
                    lease: None,
                    last_error: t.last_error,
                    cancel: false,
                    workers: lease_workers.remove(&t.id).unwrap_or_default(),
                    lease_ids: lease_ids.remove(&t.id).unwrap_or_default(),
                    started_ms: lease_times.get(&t.id).map(|l| l.0),
                    ended_ms: lease_times.get(&t.id).and_then(|l| l.1),
                    resume: t
                        .resume
                        .as_deref()
                        .and_then(|r| serde_json::from_str::<TaskKind>(r).ok()),
                    progress: None,
                    held_for: None,
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

    /// Commits `w` with the final statuses of the jobs it settles; a store failure becomes
    /// [`SchedError::Store`] and memory is rebuilt from the store ([`Scheduler::rebuild`]), so
    /// memory never holds a change the store does not.
    fn commit(&mut self, mut w: Vec<Write>) -> Result<(), SchedError> {
        self.settle(&mut w);
        match self.store.commit(&w) {
            Ok(()) => {
                self.settled_written();
                Ok(())
            }
            Err(e) => {
                tracing::error!("store commit failed: {e}");
                self.rebuild();
                Err(SchedError::Store(format!("the job store failed: {e}")))
            }
        }
    }

    /// For each changed job: summarises its finished tasks and, once it has settled (ended,
    /// nothing on a worker), adds its final status to `w`, written with the change that settled
    /// it.
    fn settle(&mut self, w: &mut Vec<Write>) {
        let changed: Vec<u64> = self.changed.iter().copied().collect();
        for id in changed {
            self.summarise(id);
            if self.is_settled(id) && !self.jobs[&id].final_stored {
                if let Some(st) = self.resident_status(id) {
                    w.push(Write::FinalStatus {
                        id,
                        status: to_json(&st),
                    });
                }
            }
        }
    }

    /// Marks the final statuses of settled jobs as stored (after a commit succeeded).
    fn settled_written(&mut self) {
        let changed: Vec<u64> = self.changed.iter().copied().collect();
        for id in changed {
            if self.is_settled(id) {
                if let Some(j) = self.jobs.get_mut(&id) {
                    j.final_stored = true;
                }
            }
        }
    }

    /// Whether resident job `id` has ended and none of its tasks is on a worker.
    fn is_settled(&self, id: u64) -> bool {
        self.jobs.get(&id).is_some_and(|job| {
            job.state.is_final()
                && !job
                    .tasks
                    .iter()
                    .any(|t| self.tasks.get(t).is_some_and(|t| t.lease.is_some()))
        })
    }

    /// Moves the finished tasks of job `id` (final state, not on a worker) out of memory into
    /// its summary, so memory holds the tasks in flight, not a big job's history.
    fn summarise(&mut self, id: u64) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        let mut keep = Vec::with_capacity(job.tasks.len());
        for &tid in &job.tasks {
            let finished = self.tasks.get(&tid).is_some_and(|t| {
                t.lease.is_none()
                    && matches!(
                        t.state,
                        TaskState::Done | TaskState::Failed | TaskState::Cancelled
                    )
            });
            if !finished {
                keep.push(tid);
                continue;
            }
            let t = self.tasks.remove(&tid).expect("checked");
            for l in &t.lease_ids {
                self.ended.remove(l);
            }
            match t.state {
                TaskState::Done => job.finished.done += 1,
                TaskState::Failed => job.finished.failed += 1,
                _ => job.finished.cancelled += 1,
            }
            if job.finished.recent.len() == STATUS_RECENT_TASKS {
                job.finished.recent.pop_front();
            }
            job.finished.recent.push_back(TaskView {
                row: TaskRow {
                    id: t.id,
                    what: t.what,
                    state: t.state,
                    attempts: t.attempts,
                    workers: t.workers,
                    last_error: t.last_error,
                    started_ms: None,
                    ended_ms: None,
                    run_ms: None,
                }
                .with_times(t.started_ms, t.ended_ms, 0),
                progress: None,
            });
        }
        job.tasks = keep;
    }

    /// Drains the effects of the calls so far: (jobs whose status changed, whether new tasks
    /// were queued).
    ///
    /// Evicts the changed jobs that have settled (see the module doc): a caller that needs the
    /// status of a job from before the eviction reads it before this call; after it, the same
    /// status comes from the store.
    pub fn take_effects(&mut self) -> (Vec<u64>, usize) {
        let changed: Vec<u64> = std::mem::take(&mut self.changed).into_iter().collect();
        for &id in &changed {
            self.maybe_evict(id);
        }
        let queued = if std::mem::replace(&mut self.queued_new, false) {
            self.queue.len()
        } else {
            0
        };
        (changed, queued)
    }

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

    /// Evicts job `id` when it has settled and its final status is stored.
    fn maybe_evict(&mut self, id: u64) {
        if !self.is_settled(id) || !self.jobs.get(&id).is_some_and(|j| j.final_stored) {
            return;
        }
        let job = self.jobs.remove(&id).expect("checked");
        for tid in &job.tasks {
            if let Some(task) = self.tasks.remove(tid) {
                for l in &task.lease_ids {
                    self.ended.remove(l);
                }
            }
        }
        self.held_bytes = self.held_bytes.saturating_sub(job.spec_bytes);
        *self.evicted.entry(job.state.as_str()).or_insert(0) += 1;
    }

    /// Jobs and tasks held in memory (tests: finished jobs are evicted).
    pub fn resident(&self) -> (usize, usize) {
        (self.jobs.len(), self.tasks.len())
    }

    /// How lease `id` ended, from memory or else from the store; `None` when it is unknown or
    /// active.
    fn lease_end(&self, id: &str) -> Option<(String, &'static str)> {
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

    fn live_worker_threads(&self) -> usize {
        self.live_worker_threads_up_to(usize::MAX)
    }

    /// The live workers' threads, counted until `cap` is reached (a thousand workers are not
    /// scanned on each planning step for a parallelism of at most [`MAX_PARALLELISM`]).
    fn live_worker_threads_up_to(&self, cap: usize) -> usize {
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

    /// Tasks a job of plan `shape` keeps in flight: the live worker slots (or the configured
    /// parallelism), capped by [`MAX_PARALLELISM`], or for a job-level plan by
    /// [`SchedConfig::max_job_level_parallelism`].
    fn parallelism(&self, shape: &registry::PlanShape) -> usize {
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
                id,
                spec: Arc::new(spec),
                spec_bytes: bytes,
                state: JobState::Queued,
                created_ms,
                finished_ms: None,
                prepared: Some(prepared),
                planner: Some(planner),
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
    fn advance(&mut self, id: u64, w: &mut Vec<Write>) {
        let Some(parallelism) = self
            .jobs
            .get(&id)
            .and_then(|j| j.planner.as_ref())
            .map(|p| self.parallelism(p.shape()))
        else {
            return;
        };
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        if job.state.is_final() {
            return;
        }
        let Some(planner) = job.planner.as_mut() else {
            return;
        };
        self.retired.extend(planner.take_retired_artifacts());
        let obsolete = planner.obsolete();
        if !obsolete.is_empty() {
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
        }
        if !planner.is_done() {
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
                self.tasks.insert(
                    tid,
                    Task {
                        id: tid,
                        job_id: id,
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
                    },
                );
                job.tasks.push(tid);
                self.queue.push_back(tid);
                self.queued_new = true;
            }
        }
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
            _ => job.progress_at_rest.take(),
        };
        job.prepared = None;
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
    fn rest(&mut self, id: u64) {
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
    fn wake(&mut self, id: u64) -> Result<bool, registry::SolveError> {
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

    fn touch(&mut self, worker_id: &str) -> Result<(), SchedError> {
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
    fn worker_horizon(&self) -> Duration {
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

    /// Whether a limit stopping this task ends its job's plan with the bounds known so far.
    fn ends_on_stop(&self, job_id: u64, tid: u64) -> bool {
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
    fn end_task_stopped(
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

    /// Leases the next queued task to `worker_id`, or `None` when the queue is empty.
    pub fn lease(&mut self, worker_id: &str) -> Result<Option<LeaseGrant>, SchedError> {
        self.touch(worker_id)?;
        let store_id = self.store.identity().to_string();
        // Tasks of jobs whose prepared form is being made off the lock: back to the head of
        // the queue, in order, when this call ends.
        let mut waiting: Vec<u64> = Vec::new();
        let mut endings = 0;
        let mut w = Vec::new();
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
                        &mut w,
                    );
                    continue;
                }
            }
            // The job's time is up and this task would end its plan with what is known: end
            // it here. A worker handed the remaining millisecond could finish a small task in
            // it (a job-level leaf with a tiny budget does), and the plan would never end.
            if self.past_time_limit(job_id) && self.ends_on_stop(job_id, tid) {
                let note = "the time limit stopped it before it started".to_string();
                self.end_task_stopped(tid, UNSTARTED_LEASE.into(), StopReason::Time, note, &mut w);
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
        let Some(tid) = grant else {
            if !w.is_empty() {
                self.commit(w)?;
            }
            return Ok(None);
        };
        {
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
                store_id: store_id.clone(),
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
            self.commit(w)?;
            self.counters.tasks_leased += 1;
            Ok(Some(grant))
        }
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
        let lease = self.leases.remove(&r.lease_id).expect("checked");
        if let Some(wk) = self.workers.get_mut(&r.worker_id) {
            wk.leases.remove(&r.lease_id);
        }
        self.ended
            .insert(r.lease_id.clone(), (r.worker_id.clone(), "done"));
        let at_ms = now_ms();
        let mut w = vec![Write::LeaseState {
            id: r.lease_id.clone(),
            state: "done",
            at_ms,
        }];
        let tid = lease.task_id;
        let task = self.tasks.get_mut(&tid).expect("lease has a task");
        task.lease = None;
        task.ended_ms = Some(at_ms);
        let job_id = task.job_id;
        let job_active = self.jobs[&job_id].takes_results();
        match r.outcome {
            Outcome::Done { mut output } => {
                // Done only when the planner takes the result; a probe that finished after it
                // became obsolete, or a task of a job that has ended, was cancelled (its result
                // is not stored either, so a restart replays exactly the results used).
                let kind = task.kind.clone();
                // The result is stored without its proof certificate, which is the job's
                // artifact; the planner gets it whole (the final output may carry it).
                // A worker is trusted to run kernels, not to be right: a result that fails the
                // game's checks, or a certificate over the limit, is a failed attempt.
                let (text, proof_text, check) = match pre.filter(|p| p.lease_id == r.lease_id) {
                    Some(p) => (p.text, p.proof_text, p.check),
                    None => {
                        let (text, proof_text) = output_texts(&mut output);
                        let check = match self.jobs.get(&job_id) {
                            _ if !job_active => Ok(()),
                            Some(j) => check_texts(&proof_text, self.config.max_proof_bytes)
                                .and_then(|()| match j.prepared.as_ref() {
                                    Some(p) => p.check_output(&kind, &output),
                                    // Never stored unchecked (a task runs only once its job
                                    // is prepared, so this does not happen).
                                    None => Err("its job is not prepared here".into()),
                                }),
                            None => Ok(()),
                        };
                        (text, proof_text, check)
                    }
                };
                let check = if job_active { check } else { Ok(()) };
                if let Err(reason) = check {
                    self.counters.results_invalid += 1;
                    self.task_failed(
                        tid,
                        format!(
                            "from worker {} gave a result that was refused: {reason}",
                            r.worker_id
                        ),
                        &mut w,
                    );
                    self.changed.insert(job_id);
                    self.commit(w)?;
                    return Ok(ReportReply { duplicate: false });
                }
                let accepted = job_active
                    && self
                        .jobs
                        .get_mut(&job_id)
                        .and_then(|j| j.planner.as_mut())
                        .is_some_and(|p| p.on_result(&kind, output));
                let task = self.tasks.get_mut(&tid).expect("lease has a task");
                if accepted {
                    task.state = TaskState::Done;
                    w.push(Self::task_write(task));
                    w.push(Write::InsertResult {
                        task_id: tid,
                        lease_id: r.lease_id.clone(),
                        output: text,
                    });
                    if let Some(proof) = proof_text {
                        w.push(Write::Artifact { job_id, proof });
                    }
                    self.counters.tasks_done += 1;
                    self.done_times.push_back(Instant::now());
                    // The slot this result frees is this worker's: a job-level plan picks its
                    // next leaf near the one the worker's table holds, and the first task it
                    // issues is held for the worker.
                    let near = match &kind {
                        TaskKind::Leaf { path, .. } => self
                            .jobs
                            .get_mut(&job_id)
                            .and_then(|j| j.planner.as_mut())
                            .map(|p| p.prefer_near(vec![path.clone()]))
                            .is_some(),
                        _ => false,
                    };
                    let first_new = self.next_task;
                    self.advance(job_id, &mut w);
                    if let Some(t) = self.tasks.get_mut(&first_new).filter(|_| near) {
                        t.held_for =
                            Some((r.worker_id.clone(), Instant::now() + HOLD_FOR_REPORTER));
                    }
                } else {
                    task.state = TaskState::Cancelled;
                    w.push(Self::task_write(task));
                    self.counters.results_unneeded += 1;
                }
            }
            Outcome::Failed { message } => {
                let message = cut(&message, MAX_WORKER_MESSAGE).to_string();
                self.counters.task_failures += 1;
                self.task_failed(
                    tid,
                    format!("failed on worker {}: {message}", r.worker_id),
                    &mut w,
                );
            }
            Outcome::Rejected { message } => {
                let message = cut(&message, MAX_WORKER_MESSAGE).to_string();
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
            Outcome::Stopped { reason }
                if job_active
                    && self
                        .jobs
                        .get(&job_id)
                        .and_then(|j| j.planner.as_ref())
                        .is_some_and(|p| p.ends_on_stop(&task.kind)) =>
            {
                // A probe plan ends with the bounds proved before the limit (stored like any
                // result, so the job's results say why it ended).
                let note = format!("the {reason} limit stopped it");
                self.end_task_stopped(tid, r.lease_id.clone(), reason, note, &mut w);
            }
            Outcome::Stopped { reason } => {
                task.state = TaskState::Failed;
                let message = format!("the {reason} limit stopped {} before a result", task.what);
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
        // Every outcome changes the job's task counts (and may let it be evicted).
        self.changed.insert(job_id);
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

    /// A worker gives a lease back (shutdown): the task is queued again, the attempt not counted.
    pub fn release(&mut self, r: Release) -> Result<(), SchedError> {
        self.touch(&r.worker_id)?;
        if let Some((owner, "released")) = self.lease_end(&r.lease_id) {
            if owner == r.worker_id {
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
        let at_ms = now_ms();
        let mut w = vec![Write::LeaseState {
            id: r.lease_id,
            state: "released",
            at_ms,
        }];
        let task = self
            .tasks
            .get_mut(&lease.task_id)
            .expect("lease has a task");
        task.lease = None;
        task.ended_ms = Some(at_ms);
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

    /// The status of a job (`GET /v1/jobs/{id}`): from memory while the job is resident, else
    /// from the store, in the same shape. The coordinator answers HTTP reads with
    /// [`Scheduler::resident_status`] under its lock and [`stored_status`] on a reader, outside it.
    pub fn job_status(&self, id: u64) -> Result<JobStatus, SchedError> {
        match self.resident_status(id) {
            Some(st) => Ok(st),
            None => stored_status(&self.store.queries(), id),
        }
    }

    /// The status of a resident job, from memory only (no store, no validation), bounded: the
    /// tasks in flight and the latest [`STATUS_RECENT_TASKS`] finished ones. `None` when the job
    /// is not resident.
    pub fn resident_status(&self, id: u64) -> Option<JobStatus> {
        let job = self.jobs.get(&id)?;
        let mut counts: Counts = [
            0,
            0,
            job.finished.done,
            job.finished.failed,
            job.finished.cancelled,
        ];
        let mut tasks: Vec<TaskView> = job.finished.recent.iter().cloned().collect();
        let now = now_ms();
        for t in job.tasks.iter().filter_map(|tid| self.tasks.get(tid)) {
            counts[count_index(t.state)] += 1;
            tasks.push(TaskView {
                row: TaskRow {
                    id: t.id,
                    what: t.what.clone(),
                    state: t.state,
                    attempts: t.attempts,
                    workers: t.workers.clone(),
                    last_error: t.last_error.clone(),
                    started_ms: None,
                    ended_ms: None,
                    run_ms: None,
                }
                .with_times(t.started_ms, t.ended_ms, now),
                progress: match t.state {
                    TaskState::Running => t.progress.clone(),
                    _ => None,
                },
            });
        }
        tasks.sort_by_key(|t| t.row.id);
        let mut progress = match (&job.planner, &job.prepared, &job.final_progress) {
            (Some(p), Some(j), _) => p.progress(&**j),
            (_, _, Some(p)) => p.clone(),
            _ => job.progress_at_rest.clone().unwrap_or_else(|| json!({})),
        };
        if let (Some(k), Some(obj)) = (&job.kernel_progress, progress.as_object_mut()) {
            if !job.state.is_final() {
                obj.insert("kernel".into(), k.clone());
            }
        }
        let resumable = job
            .tasks
            .iter()
            .filter_map(|tid| self.tasks.get(tid))
            .filter(|t| t.resume.is_some() && !matches!(t.state, TaskState::Done))
            .count();
        if let (true, Some(obj)) = (resumable > 0, progress.as_object_mut()) {
            if !job.state.is_final() {
                // Tasks that would continue from a stored checkpoint if leased again.
                obj.insert("checkpointed_tasks".into(), resumable.into());
            }
        }
        let (shown, position_bytes) = spec_view(&job.spec);
        Some(JobStatus {
            id: job.id,
            state: job.state,
            progress,
            tasks: task_counts(counts),
            task_list: tasks,
            result: job.result.clone(),
            error: job.error.clone(),
            created_ms: job.created_ms,
            finished_ms: job.finished_ms,
            job: shown,
            position_bytes,
        })
    }

    /// Whether a job has ended (`None`: no such job).
    pub fn job_final(&self, id: u64) -> Option<bool> {
        match self.jobs.get(&id) {
            Some(j) => Some(j.state.is_final()),
            None => self
                .store
                .queries()
                .job_state(id)
                .ok()
                .flatten()
                .map(|_| true),
        }
    }

    /// Jobs newest first (see [`list`]), from the writer's connection.
    pub fn list(&self, limit: usize, before: Option<u64>) -> Result<JobList, SchedError> {
        list(&self.store.queries(), limit, before)
    }

    /// The store's identity (put in every lease grant).
    pub fn store_identity(&self) -> &str {
        self.store.identity()
    }

    /// A read-only connection to the store, for reads outside the scheduler's lock.
    pub fn reader(&self) -> anyhow::Result<crate::store::Reader> {
        self.store.reader()
    }

    /// Jobs by state: resident ones and evicted ones.
    fn job_counts(&self) -> BTreeMap<&'static str, u64> {
        let mut states: BTreeMap<&'static str, u64> = BTreeMap::new();
        for s in ["queued", "running", "done", "failed", "cancelled"] {
            states.insert(s, self.evicted.get(s).copied().unwrap_or(0));
        }
        for j in self.jobs.values() {
            *states.entry(j.state.as_str()).or_insert(0) += 1;
        }
        states
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
    pub fn status(&mut self) -> ServiceStatus {
        let per_minute = self.tasks_last_minute();
        let now = now_ms();
        let workers: Vec<WorkerView> = self
            .workers
            .iter()
            .filter(|(_, w)| w.last_seen.is_some() || !w.leases.is_empty())
            .map(|(id, w)| {
                let current: Vec<HeldTask> = w
                    .leases
                    .iter()
                    .filter_map(|l| {
                        let lease = self.leases.get(l)?;
                        let task = self.tasks.get(&lease.task_id)?;
                        Some(HeldTask {
                            task: task.id,
                            job: task.job_id,
                            what: task.what.clone(),
                        })
                    })
                    .collect();
                WorkerView {
                    id: id.clone(),
                    host: w.host.clone(),
                    threads: w.threads,
                    last_seen_ms: w.last_seen_ms,
                    last_seen_ago_ms: w.last_seen_ms.map(|t| now.saturating_sub(t)),
                    current,
                }
            })
            .collect();
        let queue_depth = self.queue_depth();
        let mut states = self.job_counts();
        states.retain(|_, n| *n > 0);
        ServiceStatus {
            workers,
            queue_depth,
            running: self.leases.len(),
            jobs: states
                .into_iter()
                .map(|(k, n)| (k.to_string(), n))
                .collect(),
            throughput: Throughput {
                tasks_last_minute: per_minute,
                tasks_done_total: self.counters.tasks_done,
            },
        }
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
        (
            self.counters.clone(),
            self.job_counts(),
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

fn store_error(e: rusqlite::Error) -> SchedError {
    SchedError::Store(format!("the job store failed: {e}"))
}

/// The status of a job that is not resident, from the store: the final status stored when it
/// settled (one query, whatever its task count); for a job settled by an older version, built
/// from its rows (a bounded task list, probe targets in the internal scale). Never prepares
/// the job.
pub fn stored_status(q: &Queries<'_>, id: u64) -> Result<JobStatus, SchedError> {
    match q.final_status(id).map_err(store_error)? {
        None => return Err(SchedError::NotFound(format!("no job {id}"))),
        Some(Some(text)) => {
            return serde_json::from_str(&text)
                .map_err(|e| SchedError::Store(format!("job {id}'s stored status: {e}")))
        }
        Some(None) => {}
    }
    let job = q
        .job(id)
        .map_err(store_error)?
        .ok_or_else(|| SchedError::NotFound(format!("no job {id}")))?;
    let mut counts: Counts = [0; 5];
    for (state, n) in q.task_counts(id).map_err(store_error)? {
        counts[count_index(TaskState::parse(&state))] += n;
    }
    let after = q
        .last_task_id_before(id, STATUS_RECENT_TASKS)
        .map_err(store_error)?;
    let tasks: Vec<TaskView> = q
        .tasks(id, after, STATUS_RECENT_TASKS)
        .map_err(store_error)?
        .into_iter()
        .map(|t| TaskView {
            row: stored_view(t),
            progress: None,
        })
        .collect();
    let parse = |text: &Option<String>| {
        text.as_deref()
            .and_then(|r| serde_json::from_str::<Value>(r).ok())
    };
    let spec: JobSpec = serde_json::from_str(&job.spec).unwrap_or_default();
    let (shown, position_bytes) = spec_view(&spec);
    Ok(JobStatus {
        id: job.id,
        state: JobState::parse(&job.state).unwrap_or(JobState::Failed),
        progress: parse(&job.progress).unwrap_or_else(|| json!({})),
        tasks: task_counts(counts),
        task_list: tasks,
        result: parse(&job.result),
        error: job.error.clone(),
        created_ms: job.created_ms,
        finished_ms: job.finished_ms,
        job: shown,
        position_bytes,
    })
}

fn stored_view((t, workers): (crate::store::StoredTask, Vec<String>)) -> TaskRow {
    let what = t.what.unwrap_or_else(|| {
        serde_json::from_str::<TaskKind>(&t.kind)
            .map(|k| describe(&k, None))
            .unwrap_or_else(|_| "?".into())
    });
    TaskRow {
        id: t.id,
        what,
        state: TaskState::parse(&t.state),
        attempts: t.attempts,
        workers,
        last_error: t.last_error,
        started_ms: None,
        ended_ms: None,
        run_ms: None,
    }
    .with_times(t.started_ms, t.ended_ms, now_ms())
}

/// `GET /v1/jobs/{id}/tasks`: up to `limit` tasks of job `id` with ids above `after`, by id,
/// from the store (every task of the job, finished or not), and `next_after` for the next page.
pub fn task_page(
    q: &Queries<'_>,
    id: u64,
    after: u64,
    limit: usize,
) -> Result<TaskPage, SchedError> {
    if q.job_state(id).map_err(store_error)?.is_none() {
        return Err(SchedError::NotFound(format!("no job {id}")));
    }
    let tasks: Vec<TaskRow> = q
        .tasks(id, after, limit)
        .map_err(store_error)?
        .into_iter()
        .map(stored_view)
        .collect();
    let next = if tasks.len() == limit && limit > 0 {
        tasks.last().map(|t| t.id)
    } else {
        None
    };
    Ok(TaskPage {
        tasks,
        next_after: next,
    })
}

/// `GET /v1/jobs/{id}/proof`: the job's proof certificate; 404 when it has none.
pub fn proof(q: &Queries<'_>, id: u64) -> Result<Value, SchedError> {
    let Some(state) = q.job_state(id).map_err(store_error)? else {
        return Err(SchedError::NotFound(format!("no job {id}")));
    };
    match q.proof(id).map_err(store_error)? {
        Some(text) => serde_json::from_str(&text)
            .map_err(|e| SchedError::Store(format!("job {id}'s stored proof: {e}"))),
        None => Err(SchedError::NotFound(format!(
            "job {id} ({state}) has no proof certificate (only proof-number jobs with option proof=true make one, once they are done)"
        ))),
    }
}

/// Jobs newest first, at most `limit`, with ids below `before` when given (paging: pass the
/// last id of a page to get the next), with a one-line summary each. Read from the store,
/// which holds every job (resident ones are written through before any answer); only the
/// columns a summary needs are read.
pub fn list(q: &Queries<'_>, limit: usize, before: Option<u64>) -> Result<JobList, SchedError> {
    let rows = q.list(limit, before).map_err(store_error)?;
    let jobs: Vec<JobSummary> = rows
        .into_iter()
        .map(|j| {
            let state = JobState::parse(&j.state).unwrap_or(JobState::Failed);
            let what = format!(
                "{} {}",
                j.game.as_deref().unwrap_or("?"),
                j.algorithm.as_deref().unwrap_or("?")
            );
            let value = j
                .value
                .as_deref()
                .and_then(|v| serde_json::from_str::<Value>(v).ok());
            let summary = match (state, &value, &j.error) {
                (JobState::Done, Some(v), _) => format!("{what}: value {v}"),
                (_, _, Some(e)) => format!("{what}: {e}"),
                (s, _, _) => format!("{what}: {}", s.as_str()),
            };
            JobSummary {
                id: j.id,
                state,
                summary,
                created_ms: j.created_ms,
            }
        })
        .collect();
    let next = if jobs.len() == limit && limit > 0 {
        jobs.last().map(|j| j.id)
    } else {
        None
    };
    Ok(JobList {
        jobs,
        next_before: next,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer as the JSON a client reads.
    fn v<T: serde::Serialize>(answer: T) -> Value {
        serde_json::to_value(answer).unwrap()
    }
    use gamesolver_shared::search::Control;
    use gamesolver_shared::wire::protocol::{Heartbeat, Outcome, Register, Report};

    fn db(name: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("gs-sched-{name}-{}.db", std::process::id()));
        for ext in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", p.display()));
        }
        p
    }

    fn open(path: &std::path::Path, parallelism: usize) -> Scheduler {
        let config = SchedConfig {
            parallelism: Some(parallelism),
            ..SchedConfig::default()
        };
        Scheduler::open(Store::open(path).unwrap(), config).unwrap()
    }

    fn submit(s: &mut Scheduler, job: Value) -> u64 {
        let spec: JobSpec = serde_json::from_value(job).unwrap();
        let prepared = registry::prepare(&spec).unwrap();
        s.submit(spec, prepared).unwrap()
    }

    fn worker(s: &mut Scheduler) -> String {
        s.register(Register {
            host: "test".into(),
            threads: 4,
            version: String::new(),
        })
        .unwrap()
        .worker_id
    }

    /// Leases every queued task and runs each with the real kernel: (lease, output).
    fn lease_and_run(s: &mut Scheduler, w: &str) -> Vec<(LeaseGrant, TaskOutput)> {
        let mut out = Vec::new();
        while let Some(grant) = s.lease(w).unwrap() {
            let output = run_grant(&grant);
            out.push((grant, output));
        }
        out
    }

    /// Runs one leased task with the real kernel.
    fn run_grant(grant: &LeaseGrant) -> TaskOutput {
        registry::prepare(&grant.task.job)
            .unwrap()
            .run(&grant.task.kind, &Control::with_limits(None, None))
            .unwrap()
    }

    fn report_done(s: &mut Scheduler, w: &str, lease: &str, output: TaskOutput) -> bool {
        s.report(Report {
            worker_id: w.into(),
            lease_id: lease.into(),
            outcome: Outcome::Done { output },
        })
        .unwrap()
        .duplicate
    }

    fn target(kind: &TaskKind) -> i64 {
        match kind {
            TaskKind::Probe { target } => *target as i64,
            _ => panic!("expected probes, got {kind:?}"),
        }
    }

    /// A job-level plan keeps more than [`MAX_PARALLELISM`] leaves in flight when the slots
    /// are there (up to its own cap, here the configured 40).
    #[test]
    fn job_level_plans_go_past_the_probe_cap() {
        let path = db("jlcap");
        let mut s = open(&path, 40);
        let w = worker(&mut s);
        submit(
            &mut s,
            json!({"game": "connect4", "position": "13712", "algorithm": "jlpns",
                   "options": {"leaf": "alphabeta", "budget": 1}}),
        );
        let mut most = 0;
        for _ in 0..4 {
            let runs = lease_and_run(&mut s, &w);
            most = most.max(runs.len());
            for (grant, out) in runs {
                report_done(&mut s, &w, &grant.lease_id, out);
            }
        }
        assert!(
            most > MAX_PARALLELISM && most <= 40,
            "{most} leaves in flight"
        );
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// X (to move) completes the top row: value +1. With two probes in flight, the proof of
    /// the highest target makes the other obsolete; its result, arriving later, must count as
    /// cancelled, not done, and must not be stored.
    #[test]
    fn an_obsolete_probe_that_finishes_counts_as_cancelled_not_done() {
        let path = db("obsolete");
        let mut s = open(&path, 2);
        let w = worker(&mut s);
        let id = submit(
            &mut s,
            json!({"game": "tictactoe", "position": "1425", "algorithm": "alphabeta"}),
        );
        let mut runs = lease_and_run(&mut s, &w);
        assert!(runs.len() >= 2, "expected two probes in flight");
        runs.sort_by_key(|(g, _)| -target(&g.task.kind));
        let mut accepted = 0;
        let mut flagged = 0;
        for (grant, output) in runs {
            let cancel = s
                .heartbeat(Heartbeat {
                    worker_id: w.clone(),
                    lease_id: grant.lease_id.clone(),
                    progress: None,
                })
                .unwrap()
                .cancel;
            if cancel {
                flagged += 1;
            } else {
                accepted += 1;
            }
            assert!(!report_done(&mut s, &w, &grant.lease_id, output));
            assert_eq!(
                s.stored_results(grant.task_id).unwrap(),
                u64::from(!cancel),
                "a result is stored only when it was used"
            );
        }
        assert!(flagged >= 1, "no probe became obsolete");
        let st = v(s.job_status(id).unwrap());
        assert_eq!(st["state"], "done", "{st}");
        assert_eq!(st["result"]["value"], 1, "{st}");
        let t = &st["tasks"];
        assert_eq!(t["done"], accepted, "{st}");
        assert_eq!(t["cancelled"], flagged, "{st}");
        let sum: u64 = ["queued", "running", "done", "failed", "cancelled"]
            .iter()
            .map(|k| t[*k].as_u64().unwrap())
            .sum();
        assert_eq!(
            t["total"].as_u64(),
            Some(sum),
            "each task counted once: {st}"
        );
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// Probe targets are named in the job's value scale (a Connect Four score, not the internal
    /// x100 integer), the same while the job runs, once it ended, and once it was evicted.
    #[test]
    fn probe_tasks_show_targets_in_the_job_value_scale() {
        let path = db("scale");
        let mut s = open(&path, 2);
        let w = worker(&mut s);
        // A middle-game position (Pons' Test_L2_R1, first line): score 4 for the side to move.
        let id = submit(
            &mut s,
            json!({"game": "connect4", "position": "5554224333234511764415115", "algorithm": "alphabeta"}),
        );
        let whats = |s: &Scheduler| -> Vec<String> {
            let st = v(s.job_status(id).unwrap());
            st["task_list"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["what"].as_str().unwrap().to_string())
                .collect()
        };
        let running = whats(&s);
        assert!(!running.is_empty());
        for what in &running {
            let v: i64 = what
                .strip_prefix("probe value >= ")
                .unwrap_or_else(|| panic!("not a probe: {what}"))
                .parse()
                .unwrap_or_else(|_| panic!("not a score: {what}"));
            assert!(v.abs() <= 21, "{what} is not on the score scale");
        }
        loop {
            let runs = lease_and_run(&mut s, &w);
            if runs.is_empty() {
                break;
            }
            for (grant, output) in runs {
                report_done(&mut s, &w, &grant.lease_id, output);
            }
        }
        let st = v(s.job_status(id).unwrap());
        assert_eq!(st["state"], "done", "{st}");
        assert_eq!(st["result"]["value"], 4, "{st}");
        let ended = whats(&s);
        assert!(ended.starts_with(&running), "{running:?} then {ended:?}");
        s.take_effects();
        assert_eq!(s.resident().0, 0, "the ended job was evicted");
        assert_eq!(whats(&s), ended, "the store names tasks the same way");
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// A running task shows its worker's latest progress in the task list; a finished one
    /// does not.
    #[test]
    fn running_tasks_show_their_progress() {
        let path = db("taskprog");
        let mut s = open(&path, 1);
        let w = worker(&mut s);
        let id = submit(
            &mut s,
            json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"}),
        );
        let grant = s.lease(&w).unwrap().expect("a task");
        let progress_of = |s: &Scheduler| -> Value {
            let st = v(s.job_status(id).unwrap());
            let list = st["task_list"].as_array().unwrap();
            let t = list
                .iter()
                .find(|t| t["id"] == grant.task_id)
                .expect("the leased task is listed");
            t["progress"].clone()
        };
        assert_eq!(progress_of(&s), Value::Null, "nothing reported yet");
        let report = json!({"nodes": 12_345, "elapsed_ms": 1_000, "nodes_per_s": 12_345});
        s.heartbeat(Heartbeat {
            worker_id: w.clone(),
            lease_id: grant.lease_id.clone(),
            progress: Some(report.clone()),
        })
        .unwrap();
        assert_eq!(progress_of(&s), report);
        let output = run_grant(&grant);
        report_done(&mut s, &w, &grant.lease_id, output);
        assert_eq!(progress_of(&s), Value::Null, "a done task shows none");
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// A task's times are its latest lease's: handed out, ended, and the run time between
    /// (so far while it runs). The status (memory), the task page (the store's leases) and a
    /// restarted coordinator (a task still running) say the same.
    #[test]
    fn task_rows_carry_their_lease_times_through_a_restart() {
        let path = db("tasktimes");
        let mut s = open(&path, 1);
        let w = worker(&mut s);
        let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
        let id = submit(&mut s, job.clone());
        let row = |s: &Scheduler, id: u64, task: u64| -> Value {
            let st = v(s.job_status(id).unwrap());
            st["task_list"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["id"] == task)
                .expect("the task is listed")
                .clone()
        };
        let before = now_ms();
        let grant = s.lease(&w).unwrap().expect("a task");
        let running = row(&s, id, grant.task_id);
        let started = running["started_ms"].as_u64().expect("started");
        assert!(started >= before, "{running}");
        assert!(running["ended_ms"].is_null(), "{running}");
        assert!(
            running["run_ms"].is_u64(),
            "a running task's time so far: {running}"
        );
        report_done(&mut s, &w, &grant.lease_id, run_grant(&grant));
        let done = row(&s, id, grant.task_id);
        let ended = done["ended_ms"].as_u64().expect("ended");
        assert_eq!(done["started_ms"].as_u64(), Some(started), "{done}");
        assert!(ended >= started, "{done}");
        assert_eq!(done["run_ms"].as_u64(), Some(ended - started), "{done}");
        let page = task_page(&s.store.queries(), id, 0, 1000).unwrap();
        let stored = page
            .tasks
            .iter()
            .find(|t| t.id == grant.task_id)
            .expect("stored");
        assert_eq!(
            (stored.started_ms, stored.ended_ms, stored.run_ms),
            (Some(started), Some(ended), Some(ended - started))
        );
        // A task never leased has no times.
        for t in page.tasks.iter().filter(|t| t.workers.is_empty()) {
            assert_eq!((t.started_ms, t.ended_ms, t.run_ms), (None, None, None));
        }
        // A job still running when the coordinator stops: its task's lease comes back.
        let id2 = submit(&mut s, job);
        let grant2 = loop {
            let g = s.lease(&w).unwrap().expect("a task");
            let j = s.tasks[&g.task_id].job_id;
            if j == id2 {
                break g;
            }
            report_done(&mut s, &w, &g.lease_id, run_grant(&g));
        };
        let started2 = row(&s, id2, grant2.task_id)["started_ms"].as_u64().unwrap();
        drop(s);
        let s = open(&path, 1);
        let back = row(&s, id2, grant2.task_id);
        assert_eq!(back["state"], "running", "{back}");
        assert_eq!(back["started_ms"].as_u64(), Some(started2), "{back}");
        assert!(
            back["ended_ms"].is_null() && back["run_ms"].is_u64(),
            "{back}"
        );
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// Finished jobs leave memory, and every answer about them stays the same: status, list
    /// with paging, counts, a duplicate report on one of their leases, and all of it after a
    /// restart too.
    #[test]
    fn finished_jobs_are_evicted_and_answered_from_the_store() {
        let path = db("evict");
        let mut s = open(&path, 2);
        let w = worker(&mut s);
        let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
        let mut ids = Vec::new();
        let mut before_eviction = Vec::new();
        let mut last_lease = String::new();
        for _ in 0..3 {
            let id = submit(&mut s, job.clone());
            s.take_effects();
            for (grant, output) in lease_and_run(&mut s, &w) {
                report_done(&mut s, &w, &grant.lease_id, output);
                last_lease = grant.lease_id;
            }
            // The status as the resident job gives it, before the effects evict it.
            let st = v(s.job_status(id).unwrap());
            assert_eq!(st["state"], "done", "{st}");
            s.take_effects();
            ids.push(id);
            before_eviction.push(st);
        }
        // One job still queued stays resident.
        let queued = submit(&mut s, job.clone());
        s.take_effects();
        let (jobs, _) = s.resident();
        assert_eq!(jobs, 1, "only the queued job stays in memory");
        for (id, st) in ids.iter().zip(&before_eviction) {
            assert_eq!(&v(s.job_status(*id).unwrap()), st);
            assert_eq!(s.job_final(*id), Some(true));
        }
        assert_eq!(s.job_final(queued), Some(false));
        assert!(
            matches!(s.cancel(ids[0]), Err(SchedError::Conflict(m)) if m.contains("already ended (done)"))
        );
        assert!(matches!(s.cancel(999), Err(SchedError::NotFound(_))));
        assert_eq!(s.job_final(999), None);
        assert!(matches!(s.job_status(999), Err(SchedError::NotFound(_))));
        // A report posted again on an evicted job's lease is still a duplicate; another
        // worker's is still refused.
        assert!(report_done(&mut s, &w, &last_lease, TaskOutput::default()));
        let other = worker(&mut s);
        let refused = s.report(Report {
            worker_id: other,
            lease_id: last_lease.clone(),
            outcome: Outcome::Cancelled,
        });
        assert!(
            matches!(&refused, Err(SchedError::Conflict(m)) if m.contains("another worker")),
            "{refused:?}"
        );
        // List: newest first, paged.
        let page = v(s.list(2, None).unwrap());
        let got: Vec<u64> = page["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["id"].as_u64().unwrap())
            .collect();
        assert_eq!(got, vec![queued, ids[2]]);
        let next = page["next_before"].as_u64().unwrap();
        let page2 = v(s.list(2, Some(next)).unwrap());
        let got2: Vec<u64> = page2["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["id"].as_u64().unwrap())
            .collect();
        assert_eq!(got2, vec![ids[1], ids[0]]);
        assert!(page2["jobs"][0]["summary"]
            .as_str()
            .unwrap()
            .contains("value"));
        let counts = v(s.status())["jobs"].clone();
        assert_eq!(counts, json!({"done": 3, "queued": 1}));
        // After a restart: nothing finished is loaded, the answers are the same, ids go on.
        drop(s);
        let mut s = open(&path, 2);
        assert_eq!(s.resident().0, 1);
        for (id, st) in ids.iter().zip(&before_eviction) {
            assert_eq!(&v(s.job_status(*id).unwrap()), st);
        }
        assert_eq!(v(s.status())["jobs"], counts);
        let next_id = submit(&mut s, job);
        assert_eq!(next_id, queued + 1);
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// A prepared job for tests of the scheduler's own logic: a plan of any shape, outputs
    /// posted by the test, and a result check that refuses everything when `refuse` is set.
    struct Stub {
        job: JobSpec,
        shape: registry::PlanShape,
        refuse: Option<String>,
    }

    impl PreparedJob for Stub {
        fn job(&self) -> &JobSpec {
            &self.job
        }
        fn plan_shape(&self) -> registry::PlanShape {
            self.shape.clone()
        }
        fn run(
            &self,
            _task: &TaskKind,
            _ctl: &Control,
        ) -> Result<TaskOutput, registry::SolveError> {
            Ok(TaskOutput::default())
        }
        fn check_output(&self, _task: &TaskKind, _out: &TaskOutput) -> Result<(), String> {
            match &self.refuse {
                Some(why) => Err(why.clone()),
                None => Ok(()),
            }
        }
    }

    fn stub_spec() -> JobSpec {
        serde_json::from_value(json!({"game": "tictactoe", "algorithm": "minimax"})).unwrap()
    }

    fn submit_stub(s: &mut Scheduler, shape: registry::PlanShape, refuse: Option<&str>) -> u64 {
        let stub = Stub {
            job: stub_spec(),
            shape,
            refuse: refuse.map(str::to_string),
        };
        s.submit(stub_spec(), Box::new(stub)).unwrap()
    }

    fn output(value: i64) -> TaskOutput {
        TaskOutput {
            value: value.into(),
            ..TaskOutput::default()
        }
    }

    fn open_with(path: &std::path::Path, config: SchedConfig) -> Scheduler {
        Scheduler::open(Store::open(path).unwrap(), config).unwrap()
    }

    /// The state a client and a worker can observe, for comparing a scheduler with another.
    fn observed(s: &mut Scheduler, job: u64) -> Value {
        let st = v(s.status());
        json!({
            "job": v(s.job_status(job).unwrap()),
            "queue_depth": st["queue_depth"],
            "running": st["running"],
            "jobs": st["jobs"],
            "leases": s.leases.keys().collect::<BTreeSet<_>>(),
        })
    }

    /// A commit that fails in submit, lease, heartbeat or report leaves memory equal to what a
    /// fresh open of the same file gives (the store is the truth), answers a store error, and
    /// the same call succeeds when tried again.
    #[test]
    fn a_failed_commit_leaves_memory_as_the_store_has_it() {
        let path = db("failcommit");
        let mut s = open(&path, 1);
        let w = worker(&mut s);
        let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
        let spec: JobSpec = serde_json::from_value(job.clone()).unwrap();
        let compare = |s: &mut Scheduler, id: u64, what: &str| {
            let mut fresh = open(&path, 1);
            assert_eq!(
                observed(s, id),
                observed(&mut fresh, id),
                "after a failed {what}"
            );
        };
        // Submit: nothing of the job stays.
        s.store.fail_next_commit();
        let refused = s.submit(spec.clone(), registry::prepare(&spec).unwrap());
        assert!(matches!(refused, Err(SchedError::Store(_))), "{refused:?}");
        assert_eq!(s.resident().0, 0);
        let id = submit(&mut s, job);
        compare(&mut s, id, "submit");
        // Lease: the task is still queued, and no lease is held.
        s.store.fail_next_commit();
        assert!(matches!(s.lease(&w), Err(SchedError::Store(_))));
        assert_eq!(s.leases.len(), 0);
        assert_eq!(v(s.job_status(id).unwrap())["tasks"]["queued"], 1);
        compare(&mut s, id, "lease");
        let grant = s.lease(&w).unwrap().expect("the retry leases the task");
        // Heartbeat with progress.
        s.store.fail_next_commit();
        let hb = Heartbeat {
            worker_id: w.clone(),
            lease_id: grant.lease_id.clone(),
            progress: Some(json!({"nodes": 5})),
        };
        assert!(matches!(s.heartbeat(hb.clone()), Err(SchedError::Store(_))));
        compare(&mut s, id, "heartbeat");
        assert!(!s.heartbeat(hb).unwrap().cancel);
        // Report: the result is not taken, the lease stays active, a retry is accepted.
        let out = run_grant(&grant);
        s.store.fail_next_commit();
        let refused = s.report(Report {
            worker_id: w.clone(),
            lease_id: grant.lease_id.clone(),
            outcome: Outcome::Done {
                output: out.clone(),
            },
        });
        assert!(matches!(refused, Err(SchedError::Store(_))), "{refused:?}");
        assert_eq!(s.stored_results(grant.task_id).unwrap(), 0);
        assert_eq!(v(s.job_status(id).unwrap())["tasks"]["running"], 1);
        compare(&mut s, id, "report");
        assert!(!report_done(&mut s, &w, &grant.lease_id, out));
        assert_eq!(s.stored_results(grant.task_id).unwrap(), 1);
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// A job-level leaf picked near the leaf a worker just answered is held for that worker:
    /// while it has a free slot, others pass it over (and are told when the hold ends), it
    /// takes the task itself, and once the hold ends anyone may.
    #[test]
    fn a_leaf_picked_near_a_workers_last_one_is_held_for_it() {
        let path = db("hold");
        let mut s = open(&path, 2);
        let one_slot = |s: &mut Scheduler| {
            s.register(Register {
                host: "test".into(),
                threads: 1,
                version: String::new(),
            })
            .unwrap()
            .worker_id
        };
        let (a, b) = (one_slot(&mut s), one_slot(&mut s));
        submit(
            &mut s,
            json!({"game": "connect4", "algorithm": "jlpns",
                "options": {"leaf": "dfpn", "budget": "100", "target": "1"}}),
        );
        let root = s.lease(&a).unwrap().expect("the root leaf");
        assert!(s.lease(&b).unwrap().is_none(), "one leaf so far");
        let out = run_grant(&root);
        assert!(
            out.extra.children.is_some(),
            "100 nodes do not solve the start"
        );
        report_done(&mut s, &a, &root.lease_id, out);
        // Two leaves now, the first picked for a.
        let for_b = s.lease(&b).unwrap().expect("the leaf not held");
        assert!(s.lease(&b).unwrap().is_none(), "the other is held for a");
        assert!(
            s.passed_hold_until().is_some(),
            "b is told when the hold ends"
        );
        let for_a = s.lease(&a).unwrap().expect("a takes its leaf");
        assert_ne!(for_a.task_id, for_b.task_id);
        // b answers, then a: each gets the leaf picked for it, whoever asks first.
        report_done(&mut s, &b, &for_b.lease_id, run_grant(&for_b));
        report_done(&mut s, &a, &for_a.lease_id, run_grant(&for_a));
        let held: Vec<(u64, String)> = s
            .queue
            .iter()
            .filter_map(|t| {
                let task = &s.tasks[t];
                task.held_for.as_ref().map(|h| (*t, h.0.clone()))
            })
            .collect();
        assert_eq!(held.len(), 2, "one leaf held for each: {held:?}");
        let got_a = s.lease(&a).unwrap().expect("a's leaf");
        let got_b = s.lease(&b).unwrap().expect("b's leaf");
        for (grant, w) in [(&got_a, &a), (&got_b, &b)] {
            assert!(
                held.contains(&(grant.task_id, w.clone())),
                "{w} took another's"
            );
        }
        // A hold ends: a's next leaf goes to b after it.
        report_done(&mut s, &a, &got_a.lease_id, run_grant(&got_a));
        report_done(&mut s, &b, &got_b.lease_id, run_grant(&got_b));
        let mine = s.lease(&b).unwrap().expect("b's own leaf");
        assert!(s.lease(&b).unwrap().is_none(), "a's leaf is held");
        std::thread::sleep(HOLD_FOR_REPORTER + Duration::from_millis(50));
        assert!(s.lease(&b).unwrap().is_some(), "the hold has ended");
        drop((mine, s));
        let _ = std::fs::remove_file(&path);
    }

    /// A job whose time is up does not hand out another task its plan would end on: the
    /// coordinator ends the task itself (a job-level leaf with a one-node budget finishes inside
    /// any remaining millisecond, so a worker would never see the limit), stores it like a
    /// worker's report, and a restart replays it to the same end.
    #[test]
    fn a_job_past_its_time_limit_ends_without_another_lease() {
        let path = db("timeup");
        let mut s = open(&path, 1);
        let w = worker(&mut s);
        let job = json!({"game": "connect4", "algorithm": "jlpns", "options": {"budget": "1"},
            "limits": {"time_ms": 300}});
        let id = submit(&mut s, job);
        // Within the limit: leaves are leased and their results grow the tree.
        let grant = s.lease(&w).unwrap().expect("a leaf within the time limit");
        assert!(grant.time_ms.is_some_and(|t| t <= 300));
        let out = run_grant(&grant);
        assert!(!report_done(&mut s, &w, &grant.lease_id, out));
        std::thread::sleep(Duration::from_millis(350));
        assert!(s.lease(&w).unwrap().is_none(), "no lease past the limit");
        let st = v(s.job_status(id).unwrap());
        assert_eq!(st["state"], "done", "{st}");
        assert_eq!(st["result"]["stopped"], "time", "{st}");
        drop(s);
        let again = open(&path, 1);
        let st2 = v(again.job_status(id).unwrap());
        assert_eq!(st2["state"], "done");
        assert_eq!(st2["result"], st["result"]);
        drop(again);
        let _ = std::fs::remove_file(&path);
    }

    /// A result that fails the job's check is a failed attempt: not stored, the task is retried,
    /// and after `max_attempts` the job fails naming the reason.
    #[test]
    fn a_result_that_fails_its_check_counts_as_a_failed_attempt() {
        let path = db("check");
        let mut s = open(&path, 1);
        let w = worker(&mut s);
        let id = submit_stub(
            &mut s,
            registry::PlanShape::Single,
            Some("value 7 is not a tic-tac-toe value"),
        );
        for attempt in 1..=DEFAULT_MAX_ATTEMPTS {
            let grant = s.lease(&w).unwrap().expect("the task is leased again");
            assert_eq!(grant.attempt, attempt);
            assert!(!report_done(&mut s, &w, &grant.lease_id, output(7)));
            assert_eq!(s.stored_results(grant.task_id).unwrap(), 0);
        }
        let st = v(s.job_status(id).unwrap());
        assert_eq!(st["state"], "failed", "{st}");
        let error = st["error"].as_str().unwrap();
        assert!(
            error.contains("value 7 is not a tic-tac-toe value") && error.contains("3 times"),
            "{error}"
        );
        assert_eq!(s.counters.results_invalid, u64::from(DEFAULT_MAX_ATTEMPTS));
        assert!(s.lease(&w).unwrap().is_none(), "nothing left to run");
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// A proof certificate is kept apart from the result: the stored result has none, the
    /// artifact holds it; one over the size limit fails the attempt with a clear reason.
    #[test]
    fn a_proof_is_stored_as_an_artifact_not_in_the_result() {
        let path = db("proof");
        let config = SchedConfig {
            parallelism: Some(1),
            max_proof_bytes: 100,
            ..SchedConfig::default()
        };
        let mut s = open_with(&path, config);
        let w = worker(&mut s);
        let id = submit_stub(&mut s, registry::PlanShape::Single, None);
        let grant = s.lease(&w).unwrap().unwrap();
        let mut big = output(1);
        big.proof = Some(json!({"tree": "x".repeat(200)}));
        report_done(&mut s, &w, &grant.lease_id, big);
        let st = v(s.job_status(id).unwrap());
        assert_eq!(st["task_list"][0]["state"], "queued", "{st}");
        assert_eq!(s.stored_results(grant.task_id).unwrap(), 0);
        let why = st["task_list"][0]["last_error"].as_str().unwrap();
        assert!(why.contains("max-proof-bytes"), "{why}");
        let grant = s.lease(&w).unwrap().unwrap();
        let proof = json!({"format": "test", "tree": [1, 2, 3]});
        let mut out = output(1);
        out.proof = Some(proof.clone());
        report_done(&mut s, &w, &grant.lease_id, out);
        s.take_effects();
        let st = v(s.job_status(id).unwrap());
        assert_eq!(st["state"], "done", "{st}");
        assert_eq!(st["result"]["value"], 1, "{st}");
        assert!(st["result"].get("proof").is_none(), "{st}");
        assert_eq!(super::proof(&s.store.queries(), id).unwrap(), proof);
        let stored = s.store.queries().job(id).unwrap().unwrap();
        assert!(!stored.result.unwrap().contains("tree"));
        // A job without one: 404.
        let other = submit_stub(&mut s, registry::PlanShape::Single, None);
        assert!(matches!(
            super::proof(&s.store.queries(), other),
            Err(SchedError::NotFound(m)) if m.contains("no proof")
        ));
        assert!(matches!(
            super::proof(&s.store.queries(), 999),
            Err(SchedError::NotFound(_))
        ));
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// Quotas: jobs not ended (429), spec bytes held (429, freed when a job is evicted),
    /// tasks per job (400); each message names its limit.
    #[test]
    fn quotas_refuse_with_the_limit_named() {
        let path = db("quota");
        let small = serde_json::to_string(&stub_spec()).unwrap().len();
        let config = SchedConfig {
            parallelism: Some(1),
            max_queued_jobs: 2,
            max_tasks_per_job: 100,
            max_position_bytes: 10_000,
            ..SchedConfig::default()
        };
        assert!(small < 100);
        let mut s = open_with(&path, config);
        let w = worker(&mut s);
        let runs = |count| registry::PlanShape::Runs {
            count,
            base_seed: 1,
        };
        let refused = s.submit(
            stub_spec(),
            Box::new(Stub {
                job: stub_spec(),
                shape: runs(101),
                refuse: None,
            }),
        );
        assert!(
            matches!(&refused, Err(SchedError::BadInput(m)) if m.contains("max-tasks-per-job") && m.contains("101")),
            "{refused:?}"
        );
        let a = submit_stub(&mut s, runs(100), None);
        let mut held = stub_spec();
        held.position = "5".repeat(100);
        s.submit(
            held.clone(),
            Box::new(Stub {
                job: held,
                shape: registry::PlanShape::Single,
                refuse: None,
            }),
        )
        .unwrap();
        let refused = s.submit(stub_spec(), registry::prepare(&stub_spec()).unwrap());
        assert!(
            matches!(&refused, Err(SchedError::Quota(m)) if m.contains("max-queued-jobs")),
            "{refused:?}"
        );
        s.cancel(a).unwrap();
        s.take_effects();
        // Spec bytes: a large position does not fit next to what is held.
        let mut big = stub_spec();
        big.position = "1".repeat(9_950);
        let refused = s.submit(big.clone(), registry::prepare(&stub_spec()).unwrap());
        assert!(
            matches!(&refused, Err(SchedError::Quota(m)) if m.contains("max-position-bytes")),
            "{refused:?}"
        );
        // Once the other job is done and evicted, it fits.
        let grant = s.lease(&w).unwrap().unwrap();
        report_done(&mut s, &w, &grant.lease_id, output(0));
        s.take_effects();
        assert_eq!(s.resident().0, 0);
        assert!(s
            .submit(big, registry::prepare(&stub_spec()).unwrap())
            .is_ok());
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// A job of 2,000 tasks: memory holds the tasks in flight, not its history; the status
    /// lists at most the latest finished ones with the full counts; the task pages list them
    /// all; once finished, its status is one stored row (timed here against rebuilding it from
    /// the task rows as the previous versions did).
    #[test]
    fn a_big_job_is_summarised_and_its_finished_status_is_one_query() {
        const N: u32 = 2000;
        let path = db("summary");
        let mut s = open(&path, 4);
        let w = worker(&mut s);
        let id = submit_stub(
            &mut s,
            registry::PlanShape::Runs {
                count: N,
                base_seed: 1,
            },
            None,
        );
        let mut most_resident = 0;
        let mut reported = 0;
        while let Some(grant) = s.lease(&w).unwrap() {
            report_done(
                &mut s,
                &w,
                &grant.lease_id,
                output(i64::from(grant.task_id as u32 % 7)),
            );
            reported += 1;
            most_resident = most_resident.max(s.resident().1);
            let st = v(s.job_status(id).unwrap());
            assert!(st["task_list"].as_array().unwrap().len() <= STATUS_RECENT_TASKS + 4);
            if reported == N / 2 {
                assert_eq!(st["tasks"]["done"], N / 2, "{}", st["tasks"]);
                assert_eq!(st["tasks"]["total"].as_u64().unwrap(), u64::from(N / 2) + 4);
            }
        }
        assert_eq!(reported, N);
        assert!(most_resident <= 8, "{most_resident} tasks held in memory");
        let resident = v(s.job_status(id).unwrap());
        assert_eq!(resident["state"], "done");
        assert_eq!(resident["tasks"]["done"], N);
        assert_eq!(resident["result"]["value"], 6);
        s.take_effects();
        assert_eq!(s.resident(), (0, 0));
        // The same status from the store.
        let reader = s.reader().unwrap();
        assert_eq!(v(stored_status(&reader.queries(), id).unwrap()), resident);
        // Every task, paged.
        let mut after = 0;
        let mut seen = 0;
        loop {
            let page = v(task_page(&reader.queries(), id, after, 300).unwrap());
            let tasks = page["tasks"].as_array().unwrap();
            for t in tasks {
                assert!(t["id"].as_u64().unwrap() > after);
                assert_eq!(t["state"], "done");
                assert_eq!(t["workers"], json!([w.clone()]));
            }
            seen += tasks.len();
            match page["next_after"].as_u64() {
                Some(n) => after = n,
                None => break,
            }
        }
        assert_eq!(seen, N as usize);
        assert!(matches!(
            task_page(&reader.queries(), 999, 0, 10),
            Err(SchedError::NotFound(_))
        ));
        // Timing: the stored final status against the rows it replaces (the older files' path,
        // which the previous versions took for every finished job, plus a prepare per read).
        let t0 = Instant::now();
        for _ in 0..20 {
            v(stored_status(&reader.queries(), id).unwrap());
        }
        let one_query = t0.elapsed() / 20;
        let t0 = Instant::now();
        for _ in 0..20 {
            s.store.job_tasks(id).unwrap();
        }
        let rows = t0.elapsed() / 20;
        // The previous versions' reads: every task row, then one lease query per task.
        let t0 = Instant::now();
        for _ in 0..20 {
            let tasks = s.store.queries().tasks(id, 0, usize::MAX).unwrap();
            let mut q = s
                .store
                .conn_for_tests()
                .prepare_cached("SELECT worker_id FROM leases WHERE task_id = ?1 ORDER BY rowid")
                .unwrap();
            for (t, _) in &tasks {
                let w: Vec<String> = q
                    .query_map([t.id as i64], |r| r.get(0))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                assert_eq!(w.len(), 1);
            }
        }
        let per_task = t0.elapsed() / 20;
        eprintln!(
            "status of a finished job with {N} tasks: {one_query:?} (stored final status); its {N} task rows in two statements: {rows:?}; with a lease query per task (the previous reads): {per_task:?}"
        );
        // A job settled by an older version (no stored status) is answered from its rows, in
        // the same shape, without preparing it.
        s.store
            .conn_for_tests()
            .execute("UPDATE jobs SET final_status = NULL", [])
            .unwrap();
        assert_eq!(v(stored_status(&reader.queries(), id).unwrap()), resident);
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// The store's identity: different for two stores, kept when a store is opened again, and
    /// sent in every lease.
    #[test]
    fn the_store_identity_is_random_kept_and_leased() {
        let (p1, p2) = (db("ident1"), db("ident2"));
        let id1 = Store::open(&p1).unwrap().identity().to_string();
        let id2 = Store::open(&p2).unwrap().identity().to_string();
        assert_ne!(id1, id2);
        assert!(id1.len() >= 32, "{id1}");
        assert_eq!(Store::open(&p1).unwrap().identity(), id1);
        let mut s = open(&p1, 1);
        let w = worker(&mut s);
        submit(
            &mut s,
            json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"}),
        );
        assert_eq!(s.lease(&w).unwrap().unwrap().store_id, id1);
        drop(s);
        for p in [p1, p2] {
            let _ = std::fs::remove_file(&p);
        }
    }

    /// A status never copies a huge position: it shows its start and its length.
    #[test]
    fn a_long_position_is_cut_in_the_status() {
        let path = db("longpos");
        let mut s = open(&path, 1);
        let mut spec = stub_spec();
        spec.position = "é".repeat(5000);
        let id = s
            .submit(
                spec.clone(),
                Box::new(Stub {
                    job: spec,
                    shape: registry::PlanShape::Single,
                    refuse: None,
                }),
            )
            .unwrap();
        let st = v(s.job_status(id).unwrap());
        assert_eq!(st["position_bytes"], 10_000);
        let shown = st["job"]["position"].as_str().unwrap();
        assert!(shown.len() <= 256 && shown.starts_with("éé"), "{shown}");
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// A large job waits without its prepared form and gets it back at its first lease: the
    /// status shows its progress meanwhile, and it runs to the right value.
    #[test]
    fn a_large_queued_job_rests_unprepared_until_leased() {
        let path = db("rest");
        let mut s = open(&path, 1);
        let w = worker(&mut s);
        // MAX over MIN nodes: MIN of each is its smallest leaf; the value is the largest of them.
        let mins: Vec<String> = (0..1200)
            .map(|i| format!("{{\"min\":[{},{},{}]}}", 1000 + i, 2000 + i, 5000 - i))
            .collect();
        let position = format!("{{\"max\":[{}]}}", mins.join(","));
        assert!(position.len() >= REST_BYTES);
        let id = submit(
            &mut s,
            json!({"game": "tree", "position": position, "algorithm": "minimax"}),
        );
        assert!(s.jobs[&id].prepared.is_none(), "a queued large job rests");
        let st = v(s.job_status(id).unwrap());
        assert_eq!(st["state"], "queued");
        assert!(st["progress"].is_object(), "{st}");
        let runs = lease_and_run(&mut s, &w);
        assert!(s.jobs[&id].prepared.is_some(), "prepared again when leased");
        for (grant, output) in runs {
            report_done(&mut s, &w, &grant.lease_id, output);
        }
        let st = v(s.job_status(id).unwrap());
        assert_eq!(st["state"], "done", "{st}");
        assert_eq!(st["result"]["value"], 2199, "{st}");
        // A small job keeps its prepared form.
        let small = submit(
            &mut s,
            json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"}),
        );
        assert!(s.jobs[&small].prepared.is_some());
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn heavy_planning_work_is_handed_out_of_the_lock_and_taken_back() {
        let path = db("background");
        let mut s = open(&path, 1);
        s.set_background(true);
        let w = worker(&mut s);
        // A large job rests; its first lease hands its preparation out instead of doing it.
        let mins: Vec<String> = (0..1200)
            .map(|i| format!("{{\"min\":[{},{},{}]}}", 1000 + i, 2000 + i, 5000 - i))
            .collect();
        let position = format!("{{\"max\":[{}]}}", mins.join(","));
        let id = submit(
            &mut s,
            json!({"game": "tree", "position": position, "algorithm": "minimax"}),
        );
        assert!(
            s.lease(&w).unwrap().is_none(),
            "no lease while it is prepared"
        );
        let work = s.take_background();
        assert!(matches!(work.as_slice(), [Background::Prepare { .. }]));
        assert!(s.lease(&w).unwrap().is_none(), "handed out once");
        assert!(s.take_background().is_empty());
        for job in work {
            s.complete(job.run()).unwrap();
        }
        let runs = lease_and_run(&mut s, &w);
        assert!(!runs.is_empty());
        for (grant, output) in runs {
            report_done(&mut s, &w, &grant.lease_id, output);
        }
        // The plan is done; its result is made off the lock.
        let st = v(s.job_status(id).unwrap());
        assert_eq!(st["state"], "running", "{st}");
        let work = s.take_background();
        assert!(matches!(work.as_slice(), [Background::Finish { .. }]));
        // A result of work for a job as it no longer is (an old token) is dropped.
        let done: Vec<BackgroundDone> = work.into_iter().map(Background::run).collect();
        for d in done {
            s.complete(d).unwrap();
        }
        let st = v(s.job_status(id).unwrap());
        assert_eq!(st["state"], "done", "{st}");
        assert_eq!(st["result"]["value"], 2199, "{st}");
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_finish_that_comes_back_after_a_cancel_is_dropped() {
        let path = db("background-cancel");
        let mut s = open(&path, 1);
        s.set_background(true);
        let w = worker(&mut s);
        let id = submit(
            &mut s,
            json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"}),
        );
        let mut work = Vec::new();
        while work.is_empty() {
            let runs = lease_and_run(&mut s, &w);
            assert!(!runs.is_empty(), "the plan goes on until it is done");
            for (grant, output) in runs {
                report_done(&mut s, &w, &grant.lease_id, output);
            }
            work = s.take_background();
        }
        assert_eq!(work.len(), 1);
        s.cancel(id).unwrap();
        for job in work {
            s.complete(job.run()).unwrap();
        }
        let st = v(s.job_status(id).unwrap());
        assert_eq!(st["state"], "cancelled", "{st}");
        assert!(st["result"].is_null(), "{st}");
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_worker_hears_which_of_its_tasks_to_cancel() {
        let path = db("cancels");
        let mut s = open(&path, 1);
        let w = worker(&mut s);
        let other = worker(&mut s);
        let id = submit(
            &mut s,
            json!({"game": "connect4", "position": "4453", "algorithm": "alphabeta"}),
        );
        let grant = s.lease(&w).unwrap().expect("a task");
        assert!(s.cancels_for(&w).unwrap().is_empty());
        assert!(!s.take_cancels());
        s.cancel(id).unwrap();
        assert!(s.take_cancels(), "a running task was told to stop");
        assert_eq!(s.cancels_for(&w).unwrap(), vec![grant.lease_id.clone()]);
        assert!(s.cancels_for(&other).unwrap().is_empty());
        s.report(Report {
            worker_id: w.clone(),
            lease_id: grant.lease_id,
            outcome: Outcome::Cancelled,
        })
        .unwrap();
        assert!(s.cancels_for(&w).unwrap().is_empty());
        assert!(matches!(
            s.cancels_for("nobody"),
            Err(SchedError::UnknownWorker(_))
        ));
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn jobs_whose_time_is_up_end_though_no_worker_asks() {
        let path = db("timed-out");
        let mut s = open(&path, 1);
        let probes = submit(
            &mut s,
            json!({"game": "connect4", "position": "", "algorithm": "alphabeta",
                   "game_params": {"width": "8", "height": "7"}, "limits": {"time_ms": 1}}),
        );
        let runs = submit(
            &mut s,
            json!({"game": "connect4", "position": "", "algorithm": "mcts",
                   "options": {"trees": 2, "tasks": 2}, "limits": {"time_ms": 1}}),
        );
        std::thread::sleep(Duration::from_millis(5));
        assert!(s.end_timed_out().unwrap() >= 2);
        let st = v(s.job_status(probes).unwrap());
        assert_eq!(st["state"], "done", "{st}");
        assert_eq!(st["result"]["stopped"], "time", "{st}");
        assert!(
            st["result"]["best_move"].is_null(),
            "no search for a job no worker ran: {st}"
        );
        let st = v(s.job_status(runs).unwrap());
        assert_eq!(st["state"], "failed", "{st}");
        assert!(st["error"].as_str().unwrap().contains("time limit"), "{st}");
        assert_eq!(s.end_timed_out().unwrap(), 0);
        drop(s);
        let _ = std::fs::remove_file(&path);
    }
}
