//! # gamesolver worker
//!
//! Pulls tasks from a coordinator and runs kernels (`gamesolver-worker --coordinator URL
//! [--threads N] [--memory-mb M]`, or the child processes of `gamesolver serve --local-workers N`,
//! which run the same code through a hidden `gamesolver worker` subcommand). Each of its N slots
//! long-polls `/v1/worker/lease` for one task at a time.
//!
//! Facts to keep:
//! - A task runs on its own rayon pool (stacks of [`KERNEL_STACK_BYTES`], the size the kernels'
//!   depth bounds assume), apart from the slot threads that speak HTTP, so heartbeats are never
//!   starved; a `cancel` reply or a 409 sets the kernel's stop flag.
//! - A task gets at most `--threads` threads and an equal share of `--memory-mb` per slot
//!   ([`WorkerConfig::task_resources`]), so all slots busy at once stay within the budget.
//! - Prepared jobs are cached by store identity and the SHA-256 of the job's canonical JSON, never
//!   by job id (ids restart with a new store).
//! - A kernel panic is reported as a failed attempt; an abort ends the process and its lease
//!   expires. On shutdown a slot lets its task finish for [`SHUTDOWN_GRACE`], then releases it.
//!
//! Retries, liveness file ([`DEFAULT_ALIVE_FILE`]) and the hidden test hooks
//! (`GAMESOLVER_TEST_{PANIC,ABORT,HOG}_POSITION`): docs/services.md, "Worker".

pub mod artifacts;
pub mod cli;
pub mod memory;

use gamesolver_shared::registry::{self, PreparedJob, Resources, SolveError};
use gamesolver_shared::search::{Control, StopReason};
use gamesolver_shared::wire::protocol::{
    CancelList, CancelWatch, Heartbeat, HeartbeatReply, Lease, LeaseRequest, Outcome, Register,
    Registered, Release, Report,
};
use parking_lot::{Mutex, RwLock};
use rand::Rng;
use serde::de::DeserializeOwned;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a shutting-down worker lets a running task finish before it releases the lease.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// Long-poll time of a lease request (the coordinator caps it at 30 s).
pub const LONG_POLL_MS: u64 = 10_000;
/// Prepared jobs kept per worker (kernels keep tables across the probes of a job; a few jobs at
/// once is what a worker serves in practice).
pub const PREPARED_CACHE: usize = 16;
/// Where the liveness file goes unless `GAMESOLVER_WORKER_ALIVE_FILE` says otherwise.
pub const DEFAULT_ALIVE_FILE: &str = "/tmp/gamesolver-worker.alive";

/// The liveness file of this worker.
pub fn alive_file() -> std::path::PathBuf {
    std::env::var_os("GAMESOLVER_WORKER_ALIVE_FILE")
        .filter(|v| !v.is_empty())
        .map(Into::into)
        .unwrap_or_else(|| DEFAULT_ALIVE_FILE.into())
}

/// Marks this worker alive (best effort: a read-only file system only costs the health check).
fn touch_alive(path: &std::path::Path) {
    let _ = std::fs::write(path, b"alive\n");
}

/// First backoff when the coordinator does not answer.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
/// Largest backoff when the coordinator answers with errors (5xx, broken replies): it is up but
/// struggling, so workers back off further.
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// Largest backoff while nothing listens at the coordinator's address (a refused connection
/// costs it nothing): a restarted coordinator gets its workers back within about a second.
const BACKOFF_MAX_UNREACHABLE: Duration = Duration::from_secs(1);

/// Stack of the kernel pool's threads: the size the kernels' depth bounds are computed for, so
/// the bounds, not luck, keep a deep search from overflowing it.
pub use gamesolver_shared::search::KERNEL_STACK_BYTES;

/// Memory budget of a worker whose machine does not say (no `/proc/meminfo`), in MiB.
pub const FALLBACK_MEMORY_MB: u64 = 4096;

/// The default `--memory-mb`: half of the machine's memory (`MemTotal`, or the cgroup v2
/// `memory.max` of a container when that is lower), leaving the rest to the system and other
/// processes; [`FALLBACK_MEMORY_MB`] when neither can be read.
pub fn default_memory_mb() -> u64 {
    let total_kb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| mem_total_kb(&t));
    let cgroup_kb = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
        .map(|bytes| bytes / 1024);
    let kb = match (total_kb, cgroup_kb) {
        (Some(t), Some(c)) => t.min(c),
        (Some(k), None) | (None, Some(k)) => k,
        (None, None) => return FALLBACK_MEMORY_MB,
    };
    (kb / 1024 / 2).max(1)
}

/// `MemTotal` of a `/proc/meminfo` text, in kB.
fn mem_total_kb(meminfo: &str) -> Option<u64> {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()
}

/// Settings of a worker.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Base URL of the coordinator (`http://host:port`).
    pub coordinator: String,
    /// Task slots (tasks run at once) and kernel threads.
    pub threads: usize,
    /// Memory budget of the whole worker in MiB, shared equally by its slots.
    pub memory_mb: u64,
    /// Worker token (`GAMESOLVER_WORKER_TOKEN`).
    pub token: Option<String>,
    /// Name shown in `/v1/status`.
    pub host: String,
    /// The local cache folder of artifacts (retrograde databases); `None`:
    /// [`default_cache_dir`].
    pub cache_dir: Option<std::path::PathBuf>,
    /// Bound of the cache folder in MiB.
    pub cache_mb: u64,
}

/// The artifact cache folder unless `--cache-dir` says otherwise: `GAMESOLVER_WORKER_CACHE`,
/// else `gamesolver-artifacts` in the temporary folder (shared by the workers of a machine:
/// content-addressed files written by rename are safe to share).
pub fn default_cache_dir() -> std::path::PathBuf {
    std::env::var_os("GAMESOLVER_WORKER_CACHE")
        .filter(|v| !v.is_empty())
        .map(Into::into)
        .unwrap_or_else(|| std::env::temp_dir().join("gamesolver-artifacts"))
}

impl WorkerConfig {
    /// What one task may use: the worker's kernel threads (a one-slot worker offers one thread,
    /// and a job's `threads` never exceeds `--threads`), and the memory budget divided by the
    /// slots, so that every slot running its largest task at once stays within `--memory-mb`.
    pub fn task_resources(&self) -> Resources {
        let slots = self.threads.max(1);
        Resources {
            threads: slots.min(Resources::MAX.threads),
            memory_mb: (self.memory_mb / slots as u64).clamp(1, Resources::MAX.memory_mb),
        }
    }
}

/// This machine's host name, or `worker`.
pub fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".into())
}

/// Why a request to the coordinator did not succeed.
#[derive(Debug)]
enum CallError {
    /// Nothing listens at the coordinator's address (the connection failed): try again soon.
    Unreachable(String),
    /// A 5xx, a broken reply or a timeout: try again later.
    Away(String),
    /// 409: the lease is no longer ours.
    Conflict(String),
    /// 404 `unknown_worker`: register again.
    UnknownWorker,
    /// 401 or another 4xx: retrying will not help.
    Refused(u16, String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Unreachable(m) => write!(f, "coordinator unreachable: {m}"),
            CallError::Away(m) => write!(f, "coordinator away: {m}"),
            CallError::Conflict(m) => write!(f, "conflict: {m}"),
            CallError::UnknownWorker => f.write_str("unknown worker"),
            CallError::Refused(c, m) => write!(f, "refused ({c}): {m}"),
        }
    }
}

struct Client {
    agent: ureq::Agent,
    base: String,
    auth: Option<String>,
}

impl Client {
    fn new(config: &WorkerConfig) -> Client {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(5))
            .timeout(Duration::from_millis(LONG_POLL_MS + 20_000))
            .build();
        Client {
            agent,
            base: config.coordinator.trim_end_matches('/').to_string(),
            auth: config.token.as_ref().map(|t| format!("Bearer {t}")),
        }
    }

    /// POSTs `body`; `Ok(None)` for 204.
    fn post<B: Serialize, R: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<Option<R>, CallError> {
        let mut req = self.agent.post(&format!("{}{path}", self.base));
        if let Some(a) = &self.auth {
            req = req.set("Authorization", a);
        }
        match req.send_json(body) {
            Ok(resp) if resp.status() == 204 => Ok(None),
            Ok(resp) => resp
                .into_json::<R>()
                .map(Some)
                .map_err(|e| CallError::Away(format!("bad reply: {e}"))),
            Err(ureq::Error::Status(code, resp)) => {
                let text = resp.into_string().unwrap_or_default();
                Err(match code {
                    409 => CallError::Conflict(text),
                    404 if text.contains("unknown_worker") => CallError::UnknownWorker,
                    c if c >= 500 => CallError::Away(format!("{c}: {text}")),
                    c => CallError::Refused(c, text),
                })
            }
            Err(e @ ureq::Error::Transport(_)) if e.kind() == ureq::ErrorKind::ConnectionFailed => {
                Err(CallError::Unreachable(e.to_string()))
            }
            Err(e) => Err(CallError::Away(e.to_string())),
        }
    }
}

/// Jittered exponential backoff ("full jitter": a uniform wait up to the current ceiling).
struct Backoff {
    ceiling: Duration,
}

impl Backoff {
    fn new() -> Self {
        Backoff {
            ceiling: BACKOFF_MIN,
        }
    }
    /// Waits after a failed call: up to [`BACKOFF_MAX_UNREACHABLE`] when nothing listened,
    /// else up to [`BACKOFF_MAX`].
    fn wait_after(&mut self, e: &CallError, shutdown: &AtomicBool) {
        let cap = match e {
            CallError::Unreachable(_) => BACKOFF_MAX_UNREACHABLE,
            _ => BACKOFF_MAX,
        };
        self.wait(cap, shutdown);
    }
    fn wait(&mut self, cap: Duration, shutdown: &AtomicBool) {
        self.ceiling = self.ceiling.min(cap);
        let ms = rand::thread_rng()
            .gen_range(self.ceiling.as_millis() as u64 / 2..=self.ceiling.as_millis() as u64);
        sleep_unless(Duration::from_millis(ms), shutdown);
        self.ceiling = (self.ceiling * 2).min(cap);
    }
    fn reset(&mut self) {
        self.ceiling = BACKOFF_MIN;
    }
}

/// Sleeps up to `d`, waking early on shutdown.
fn sleep_unless(d: Duration, shutdown: &AtomicBool) {
    let end = Instant::now() + d;
    while Instant::now() < end && !shutdown.load(Ordering::Relaxed) {
        std::thread::sleep((end - Instant::now()).min(Duration::from_millis(50)));
    }
}

/// What a prepared job is cached under: the coordinator's store identity and the SHA-256 of the
/// job's canonical JSON. Never the job id, which starts again at 1 with a new store; a
/// cryptographic digest, so that no submitted job can be made to collide with another's.
type CacheKey = (String, [u8; 32]);

/// The cache key of a lease's job; `None` when the job cannot be serialised (it is then prepared
/// afresh, never cached).
fn cache_key(lease: &Lease) -> Option<CacheKey> {
    // `JobSpec`'s maps are `BTreeMap`s: its JSON is canonical (one text per job).
    let canonical = serde_json::to_string(&lease.task.job).ok()?;
    Some((
        lease.store_id.clone(),
        Sha256::digest(canonical.as_bytes()).into(),
    ))
}

/// Prepared jobs by [`CacheKey`], at most [`PREPARED_CACHE`] of them (the oldest is evicted
/// first).
#[derive(Default)]
struct PreparedCache {
    map: HashMap<CacheKey, Arc<dyn PreparedJob>>,
    order: VecDeque<CacheKey>,
}

impl PreparedCache {
    fn get(&self, key: &CacheKey) -> Option<Arc<dyn PreparedJob>> {
        self.map.get(key).cloned()
    }

    /// Forgets every cached job (tasks running keep theirs): their tables are freed once no
    /// task holds them.
    fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
    }

    fn insert(&mut self, key: CacheKey, p: Arc<dyn PreparedJob>) {
        if self.map.insert(key.clone(), p).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > PREPARED_CACHE {
            if let Some(old) = self.order.pop_front() {
                self.map.remove(&old);
            }
        }
    }
}

struct Shared {
    config: WorkerConfig,
    client: Client,
    registration: RwLock<Option<Registered>>,
    cache: Mutex<PreparedCache>,
    pool: rayon::ThreadPool,
    shutdown: Arc<AtomicBool>,
    /// `GAMESOLVER_TEST_PANIC_POSITION` (see the module doc).
    poison: Option<String>,
    /// `GAMESOLVER_TEST_ABORT_POSITION` (see the module doc).
    abort_at: Option<String>,
    /// `GAMESOLVER_TEST_HOG_POSITION` (see the module doc).
    hog_at: Option<String>,
    alive: std::path::PathBuf,
    /// The coordinator's file artifacts, with the local cache.
    artifacts: Arc<artifacts::HttpArtifacts>,
    /// The stop flags of the tasks running now, by lease id ([`cancel_watch`] sets them).
    running: Mutex<HashMap<String, Arc<AtomicBool>>>,
}

impl Shared {
    /// Registers (again), retrying while the coordinator is away. `None` on shutdown or refusal.
    fn register(&self) -> Option<Registered> {
        let mut backoff = Backoff::new();
        let body = Register {
            host: self.config.host.clone(),
            threads: self.config.threads as u32,
            version: env!("CARGO_PKG_VERSION").into(),
        };
        while !self.shutdown.load(Ordering::Relaxed) {
            touch_alive(&self.alive);
            match self
                .client
                .post::<_, Registered>("/v1/worker/register", &body)
            {
                Ok(Some(r)) => {
                    tracing::info!("registered as {} with {}", r.worker_id, self.client.base);
                    *self.registration.write() = Some(r.clone());
                    return Some(r);
                }
                Ok(None) => backoff.wait(BACKOFF_MAX, &self.shutdown),
                Err(CallError::Refused(code, text)) => {
                    tracing::error!("the coordinator refused registration ({code}): {text}");
                    return None;
                }
                Err(e) => {
                    tracing::warn!("{e}; retrying");
                    backoff.wait_after(&e, &self.shutdown);
                }
            }
        }
        None
    }

    fn worker_id(&self) -> Option<String> {
        self.registration
            .read()
            .as_ref()
            .map(|r| r.worker_id.clone())
    }

    /// The lease's job, prepared within this worker's [`WorkerConfig::task_resources`], from
    /// the cache when the same job of the same store was prepared before.
    fn prepared(&self, lease: &Lease) -> Result<Arc<dyn PreparedJob>, SolveError> {
        let key = cache_key(lease);
        if let Some(p) = key.as_ref().and_then(|k| self.cache.lock().get(k)) {
            return Ok(p);
        }
        let p: Arc<dyn PreparedJob> = Arc::from(registry::prepare_with(
            &lease.task.job,
            &self.config.task_resources(),
        )?);
        if let Some(k) = key {
            self.cache.lock().insert(k, p.clone());
        }
        Ok(p)
    }
}

/// Runs a worker until `shutdown` is set (or the coordinator refuses it). Blocking.
pub fn run(config: WorkerConfig, shutdown: Arc<AtomicBool>) -> anyhow::Result<()> {
    if config.threads == 0 {
        anyhow::bail!("--threads must be at least 1");
    }
    if config.memory_mb == 0 {
        anyhow::bail!("--memory-mb must be at least 1");
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads)
        .stack_size(KERNEL_STACK_BYTES)
        .thread_name(|i| format!("kernel-{i}"))
        .build()?;
    let shared = Arc::new(Shared {
        client: Client::new(&config),
        config: config.clone(),
        registration: RwLock::new(None),
        cache: Mutex::new(PreparedCache::default()),
        pool,
        shutdown: shutdown.clone(),
        poison: std::env::var("GAMESOLVER_TEST_PANIC_POSITION").ok(),
        abort_at: std::env::var("GAMESOLVER_TEST_ABORT_POSITION").ok(),
        hog_at: std::env::var("GAMESOLVER_TEST_HOG_POSITION").ok(),
        alive: alive_file(),
        running: Mutex::new(HashMap::new()),
        artifacts: Arc::new(artifacts::HttpArtifacts::new(
            &config.coordinator,
            config.token.as_deref(),
            config.cache_dir.clone().unwrap_or_else(default_cache_dir),
            config.cache_mb,
            shutdown.clone(),
        )?),
    });
    // Jobs that name a set the coordinator built (`tables=NAME@HASH`) read it from there.
    gamesolver_shared::search::retrograde::artifacts::install_source(
        shared.artifacts.clone(),
        gamesolver_shared::search::retrograde::artifacts::SourceMode::Read,
    );
    if shared.register().is_none() {
        if shutdown.load(Ordering::Relaxed) {
            return Ok(());
        }
        anyhow::bail!(
            "the coordinator at {} refused this worker",
            config.coordinator
        );
    }
    if memory::installed() {
        memory::set_hard_limit(memory::hard_limit_for(config.memory_mb));
    }
    {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("cancels".into())
            .spawn(move || cancel_watch(&shared))?;
    }
    let slots: Vec<_> = (0..config.threads)
        .map(|i| {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(format!("slot-{i}"))
                .spawn(move || slot_loop(&shared))
        })
        .collect::<Result<_, _>>()?;
    for s in slots {
        let _ = s.join();
    }
    Ok(())
}

/// One slot: lease, run, report, forever.
fn slot_loop(shared: &Shared) {
    let mut backoff = Backoff::new();
    while !shared.shutdown.load(Ordering::Relaxed) {
        let Some(worker_id) = shared.worker_id() else {
            return;
        };
        let req = LeaseRequest {
            worker_id,
            wait_ms: LONG_POLL_MS,
        };
        touch_alive(&shared.alive);
        match shared.client.post::<_, Lease>("/v1/worker/lease", &req) {
            Ok(Some(lease)) => {
                backoff.reset();
                run_lease(shared, lease);
            }
            Ok(None) => backoff.reset(),
            Err(CallError::UnknownWorker) => {
                if shared.register().is_none() {
                    return;
                }
            }
            Err(CallError::Refused(code, text)) => {
                tracing::error!("lease refused ({code}): {text}");
                backoff.wait(BACKOFF_MAX, &shared.shutdown);
            }
            Err(e) => {
                tracing::debug!("lease: {e}");
                backoff.wait_after(&e, &shared.shutdown);
            }
        }
    }
}

/// Watches for cancelled tasks while any runs: a long poll on `/v1/worker/cancels` answered as
/// soon as the coordinator cancels one of this worker's leases, whose stop flag is then set.
/// Heartbeats carry the same answer, but only every third of the lease time; this way a cancel
/// reaches a running kernel within a second. A coordinator without the endpoint (an older
/// version) leaves cancels to the heartbeats.
fn cancel_watch(shared: &Shared) {
    let mut backoff = Backoff::new();
    while !shared.shutdown.load(Ordering::Relaxed) {
        if shared.running.lock().is_empty() {
            sleep_unless(Duration::from_millis(50), &shared.shutdown);
            continue;
        }
        let Some(worker_id) = shared.worker_id() else {
            sleep_unless(Duration::from_millis(200), &shared.shutdown);
            continue;
        };
        let req = CancelWatch {
            worker_id,
            wait_ms: LONG_POLL_MS,
        };
        match shared
            .client
            .post::<_, CancelList>("/v1/worker/cancels", &req)
        {
            Ok(Some(list)) => {
                backoff.reset();
                let mut fresh = false;
                let running = shared.running.lock();
                for lease in &list.cancel {
                    if let Some(flag) = running.get(lease) {
                        fresh |= !flag.swap(true, Ordering::Relaxed);
                    }
                }
                drop(running);
                if !list.cancel.is_empty() && !fresh {
                    // Told already; the task is on its way out and will report.
                    sleep_unless(Duration::from_millis(100), &shared.shutdown);
                }
            }
            Ok(None) => backoff.reset(),
            Err(CallError::Refused(404, _)) => {
                sleep_unless(Duration::from_secs(30), &shared.shutdown);
            }
            Err(e) => {
                tracing::debug!("cancel watch: {e}");
                backoff.wait_after(&e, &shared.shutdown);
            }
        }
    }
}

/// Keeps a running task's stop flag where [`cancel_watch`] finds it, until dropped.
struct Running<'a> {
    shared: &'a Shared,
    lease_id: String,
}

impl<'a> Running<'a> {
    fn new(shared: &'a Shared, lease_id: &str, flag: Arc<AtomicBool>) -> Self {
        shared.running.lock().insert(lease_id.to_string(), flag);
        Running {
            shared,
            lease_id: lease_id.to_string(),
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.shared.running.lock().remove(&self.lease_id);
    }
}

/// The memory hog of `GAMESOLVER_TEST_HOG_POSITION`: grows until stopped, at most 16 MiB per
/// 50 ms (320 MiB/s), so that the two looks of the soft check (200 ms apart: cached tables
/// first, then the task) come before the hard limit even on a loaded machine (a faster
/// kernel meets the hard limit instead: see `memory`).
fn hog(ctl: &Control) -> SolveError {
    let mut held: Vec<Vec<u8>> = Vec::new();
    while ctl.should_stop().is_none() {
        held.push(vec![1u8; 16 << 20]);
        std::thread::sleep(Duration::from_millis(50));
    }
    SolveError::Internal(format!("test hog stopped after {} MiB", held.len() * 16))
}

/// What the kernel thread sends back.
type KernelResult = std::thread::Result<Result<gamesolver_shared::wire::TaskOutput, SolveError>>;

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".into()
    }
}

/// The progress a heartbeat carries: the kernel's own report, if it made one, with the nodes
/// its `Control` counted so far added when the report does not say; else, when the count
/// moved since the last heartbeat (`moved`), the count alone with the task's elapsed time and
/// rate. So a long exact search (a probe that runs for an hour, which publishes nothing itself)
/// still shows on the status endpoint that it is alive and how fast it goes.
fn with_node_count(
    report: Option<serde_json::Value>,
    nodes: u64,
    moved: bool,
    elapsed: Duration,
) -> Option<serde_json::Value> {
    match report {
        Some(serde_json::Value::Object(mut o)) => {
            if nodes > 0 {
                o.entry("nodes").or_insert(nodes.into());
            }
            Some(serde_json::Value::Object(o))
        }
        Some(other) => Some(other),
        None if moved && nodes > 0 => {
            let ms = elapsed.as_millis().max(1) as u64;
            Some(serde_json::json!({
                "nodes": nodes,
                "elapsed_ms": ms,
                "nodes_per_s": nodes.saturating_mul(1000) / ms,
            }))
        }
        None => None,
    }
}

/// Runs one leased task: kernel on the pool, heartbeats here, then the report.
fn run_lease(shared: &Shared, mut lease: Lease) {
    let worker_id = shared.worker_id().unwrap_or_default();
    let prepared = match shared.prepared(&lease) {
        Ok(p) => p,
        Err(e) => {
            let outcome = match e {
                SolveError::BadInput(m) => Outcome::Rejected { message: m },
                SolveError::Internal(m) => Outcome::Failed { message: m },
            };
            report(shared, &worker_id, &lease, outcome);
            return;
        }
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let _running = Running::new(shared, &lease.lease_id, cancel.clone());
    let progress: Arc<Mutex<Option<serde_json::Value>>> = Arc::new(Mutex::new(None));
    let sink = {
        let progress = progress.clone();
        Arc::new(move |v: serde_json::Value| *progress.lock() = Some(v))
    };
    let ctl = Control::with_limits(
        lease.time_ms.map(Duration::from_millis),
        lease.task.job.limits.node_limit,
    )
    .with_cancel_flag(cancel.clone())
    .with_progress(sink)
    .with_artifacts(shared.artifacts.clone());
    let rx = spawn_kernel(shared, &mut lease, &prepared, &ctl);
    let watched = watch(shared, &worker_id, &lease, &ctl, &cancel, &progress, rx);
    if watched.lease_lost {
        return;
    }
    if watched.released_for_shutdown {
        let r = Release {
            worker_id: worker_id.clone(),
            lease_id: lease.lease_id.clone(),
        };
        let _ = shared
            .client
            .post::<_, serde_json::Value>("/v1/worker/release", &r);
        return;
    }
    let outcome = match watched.result {
        _ if watched.over_memory.is_some() => Outcome::Failed {
            message: format!(
                "the worker's memory went past its budget ({} MiB in use, --memory-mb {} plus \
                 64 MiB for the worker): the task was stopped",
                watched.over_memory.unwrap_or(0) >> 20,
                shared.config.memory_mb
            ),
        },
        Ok(Ok(output)) => Outcome::Done { output },
        Ok(Err(e)) => match ctl.should_stop() {
            Some(StopReason::Cancelled) => Outcome::Cancelled,
            Some(r @ (StopReason::Time | StopReason::Nodes)) => Outcome::Stopped { reason: r },
            _ => match e {
                SolveError::BadInput(m) => Outcome::Rejected { message: m },
                SolveError::Internal(m) => Outcome::Failed { message: m },
            },
        },
        Err(panic) => Outcome::Failed {
            message: format!("kernel panicked: {}", panic_message(&*panic)),
        },
    };
    // What the kernel proved goes with a result, for the job's other workers.
    let proved = match &outcome {
        Outcome::Done { .. } => prepared.take_proved(),
        _ => Vec::new(),
    };
    report_with(shared, &worker_id, &lease, outcome, proved);
}

/// Runs the lease's kernel on the pool (with the proved entries the lease brought, and the
/// test hooks that abort, panic or hog on a named position); its result comes on the channel.
fn spawn_kernel(
    shared: &Shared,
    lease: &mut Lease,
    prepared: &Arc<dyn PreparedJob>,
    ctl: &Control,
) -> mpsc::Receiver<KernelResult> {
    let (tx, rx) = mpsc::channel::<KernelResult>();
    let ctl = ctl.clone();
    let kind = lease.task.kind.clone();
    let position = Some(lease.task.job.position.as_str());
    let poisoned = shared.poison.as_deref() == position;
    let aborting = shared.abort_at.as_deref() == position;
    let hogging = shared.hog_at.as_deref() == position;
    let prepared = prepared.clone();
    let proved_in = std::mem::take(&mut lease.proved);
    shared.pool.spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if aborting {
                eprintln!("test abort: GAMESOLVER_TEST_ABORT_POSITION matches this job");
                std::process::abort();
            }
            if poisoned {
                panic!("test poison: GAMESOLVER_TEST_PANIC_POSITION matches this job");
            }
            if hogging {
                return Err(hog(&ctl));
            }
            prepared.learn_proved(&proved_in);
            prepared.run(&kind, &ctl)
        }));
        let _ = tx.send(r);
    });
    rx
}

/// How a kernel's run ended, as [`watch`] saw it.
struct Watched {
    result: KernelResult,
    /// The coordinator no longer knows the lease (or the worker): nothing to report.
    lease_lost: bool,
    /// Stopped for a shutdown past its grace: the lease goes back unreported.
    released_for_shutdown: bool,
    /// Bytes in use when the kernel was stopped for the memory budget.
    over_memory: Option<usize>,
}

/// Heartbeats the lease until the kernel answers on `rx`, stopping it (through `cancel`)
/// when the coordinator says so or lost the lease, past the memory budget, or on shutdown.
fn watch(
    shared: &Shared,
    worker_id: &str,
    lease: &Lease,
    ctl: &Control,
    cancel: &AtomicBool,
    progress: &Mutex<Option<serde_json::Value>>,
    rx: mpsc::Receiver<KernelResult>,
) -> Watched {
    let heartbeat_every = Duration::from_millis(
        shared
            .registration
            .read()
            .as_ref()
            .map(|r| r.heartbeat_ms)
            .unwrap_or(1000)
            .max(10),
    );
    let memory_limit = memory::soft_limit_for(shared.config.memory_mb);
    let mut over_memory: Option<usize> = None;
    let mut cache_cleared = false;
    let mut lease_lost = false;
    let mut last_heartbeat = Instant::now();
    let started = Instant::now();
    let mut last_nodes = 0;
    let mut shutdown_since: Option<Instant> = None;
    let mut released_for_shutdown = false;
    let result = loop {
        match rx.recv_timeout(
            heartbeat_every
                .min(Duration::from_millis(200))
                .max(Duration::from_millis(10)),
        ) {
            Ok(r) => break r,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                break Err(Box::new("the kernel thread vanished") as Box<dyn std::any::Any + Send>)
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        // The worker's memory budget is a limit: a kernel past it is stopped and its task
        // fails with the reason (see `memory`).
        // Cached jobs keep their tables: they go first, and the task fails only if its own
        // kernel is still past the budget at the next look.
        if over_memory.is_none() {
            if let Some(bytes) = memory::allocated().filter(|&b| b > memory_limit) {
                if cache_cleared {
                    over_memory = Some(bytes);
                    cancel.store(true, Ordering::Relaxed);
                } else {
                    shared.cache.lock().clear();
                    cache_cleared = true;
                }
            }
        }
        if shared.shutdown.load(Ordering::Relaxed) {
            let since = *shutdown_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= SHUTDOWN_GRACE && !released_for_shutdown {
                cancel.store(true, Ordering::Relaxed);
                released_for_shutdown = true;
            }
        }
        if last_heartbeat.elapsed() >= heartbeat_every {
            last_heartbeat = Instant::now();
            touch_alive(&shared.alive);
            let nodes = ctl.nodes();
            let hb = Heartbeat {
                worker_id: worker_id.to_string(),
                lease_id: lease.lease_id.clone(),
                progress: with_node_count(
                    progress.lock().take(),
                    nodes,
                    nodes != last_nodes,
                    started.elapsed(),
                ),
            };
            last_nodes = nodes;
            match heartbeat(shared, &hb) {
                Beat::Go => {}
                Beat::Stop => cancel.store(true, Ordering::Relaxed),
                Beat::Lost => {
                    lease_lost = true;
                    cancel.store(true, Ordering::Relaxed);
                }
            }
        }
    };
    Watched {
        result,
        lease_lost,
        released_for_shutdown,
        over_memory,
    }
}

/// What the answer to a heartbeat asks of its task.
enum Beat {
    /// Go on (also while the coordinator is away).
    Go,
    /// Stop: the planner no longer needs the task, or its job ended.
    Stop,
    /// The coordinator no longer knows the lease or the worker: stop, report nothing.
    Lost,
}

/// Sends heartbeat `hb` and reads the answer.
fn heartbeat(shared: &Shared, hb: &Heartbeat) -> Beat {
    match shared
        .client
        .post::<_, HeartbeatReply>("/v1/worker/heartbeat", hb)
    {
        Ok(Some(HeartbeatReply { cancel: true })) => Beat::Stop,
        Ok(_) => Beat::Go,
        Err(CallError::Conflict(m)) => {
            tracing::warn!("lease {} lost: {m}", hb.lease_id);
            Beat::Lost
        }
        Err(CallError::UnknownWorker) => Beat::Lost,
        Err(e) => {
            tracing::debug!("heartbeat: coordinator away ({e})");
            Beat::Go
        }
    }
}

/// Reports an outcome, retrying while the coordinator is away (a finished result is worth
/// keeping). Gives up on 409 (the lease is gone: the task runs elsewhere).
fn report(shared: &Shared, worker_id: &str, lease: &Lease, outcome: Outcome) {
    report_with(shared, worker_id, lease, outcome, Vec::new());
}

/// [`report`] with the positions the task proved ([`Report::proved`]).
fn report_with(
    shared: &Shared,
    worker_id: &str,
    lease: &Lease,
    outcome: Outcome,
    proved: Vec<gamesolver_shared::wire::Proved>,
) {
    let body = Report {
        worker_id: worker_id.into(),
        lease_id: lease.lease_id.clone(),
        outcome,
        proved,
    };
    let mut backoff = Backoff::new();
    let give_up_after_shutdown = Instant::now() + SHUTDOWN_GRACE;
    loop {
        match shared
            .client
            .post::<_, serde_json::Value>("/v1/worker/result", &body)
        {
            Ok(_) => return,
            Err(CallError::Conflict(m)) => {
                tracing::warn!("result for lease {} refused: {m}", lease.lease_id);
                return;
            }
            Err(CallError::Refused(code, m)) => {
                tracing::error!("result refused ({code}): {m}");
                return;
            }
            Err(CallError::UnknownWorker) => return,
            Err(e) => {
                tracing::debug!("report: {e}");
                if shared.shutdown.load(Ordering::Relaxed)
                    && Instant::now() > give_up_after_shutdown
                {
                    return;
                }
                // Sleep even during shutdown: the grace period is for this.
                let never = AtomicBool::new(false);
                backoff.wait_after(&e, &never);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gamesolver_shared::wire::{JobSpec, TaskKind, TaskSpec};
    use serde_json::json;

    fn lease(job_id: u64, store_id: &str, job: &JobSpec) -> Lease {
        Lease {
            lease_id: format!("l-{job_id}"),
            task_id: 1,
            job_id,
            attempt: 1,
            task: TaskSpec {
                job: job.clone(),
                kind: TaskKind::Whole,
            },
            time_ms: None,
            store_id: store_id.into(),
            proved: Vec::new(),
        }
    }

    fn key(job_id: u64, store_id: &str, job: &JobSpec) -> CacheKey {
        cache_key(&lease(job_id, store_id, job)).expect("a job serialises")
    }

    /// The wrong answer: a coordinator restarted on a fresh store hands out job 1
    /// again, with other content. Neither the same id with another spec, nor the same spec of
    /// another store, may hit; the same job of the same store hits whatever its id.
    #[test]
    fn cached_jobs_are_keyed_by_content_and_store_never_by_id() {
        let ttt = JobSpec::new("tictactoe", "", "minimax");
        let c4 = JobSpec::new("connect4", "", "minimax").with_options(&[("depth", "2")]);
        let mut cache = PreparedCache::default();
        for store in ["store-a", ""] {
            let p = registry::prepare(&ttt).expect("a valid job");
            cache.insert(key(1, store, &ttt), Arc::from(p));
            // Same job id, other content: a miss, with or without a store identity.
            assert!(cache.get(&key(1, store, &c4)).is_none(), "store '{store}'");
            // One option more is other content too.
            let deeper = ttt.clone().with_options(&[("depth", "1")]);
            assert!(cache.get(&key(1, store, &deeper)).is_none());
            // The same content under another id (a job submitted twice) is the same job.
            let hit = cache.get(&key(7, store, &ttt)).expect("a hit");
            assert_eq!(hit.job(), &ttt);
        }
        // Same id and content, another store: a miss.
        assert!(cache.get(&key(1, "store-b", &ttt)).is_none());
    }

    #[test]
    fn the_prepared_cache_is_bounded() {
        let mut cache = PreparedCache::default();
        let jobs: Vec<JobSpec> = (0..PREPARED_CACHE + 3)
            .map(|i| {
                JobSpec::new("tictactoe", &(1 + i % 9).to_string(), "minimax")
                    .with_options(&[("seed", &i.to_string())])
            })
            .collect();
        for (i, job) in jobs.iter().enumerate() {
            let p = registry::prepare(&JobSpec::new("tictactoe", "", "minimax")).unwrap();
            cache.insert(key(i as u64, "s", job), Arc::from(p));
        }
        assert_eq!(cache.map.len(), PREPARED_CACHE);
        assert_eq!(cache.order.len(), PREPARED_CACHE);
        assert!(
            cache.get(&key(0, "s", &jobs[0])).is_none(),
            "the oldest went first"
        );
        assert!(cache.get(&key(99, "s", jobs.last().unwrap())).is_some());
    }

    /// A task gets all the worker's threads and its slot's share of the memory budget.
    #[test]
    fn a_task_gets_the_threads_and_its_slots_share_of_memory() {
        let config = |threads, memory_mb| WorkerConfig {
            coordinator: "http://127.0.0.1:1".into(),
            threads,
            memory_mb,
            token: None,
            host: "h".into(),
            cache_dir: None,
            cache_mb: 0,
        };
        let r = config(1, 4096).task_resources();
        assert_eq!((r.threads, r.memory_mb), (1, 4096));
        let r = config(4, 4096).task_resources();
        assert_eq!((r.threads, r.memory_mb), (4, 1024));
        let r = config(3, 2).task_resources();
        assert_eq!((r.threads, r.memory_mb), (3, 1), "never a zero budget");
        let r = config(4096, u64::MAX).task_resources();
        assert_eq!(r, Resources::MAX);
    }

    #[test]
    fn memory_total_is_read_from_meminfo() {
        let text = "MemTotal:       24576000 kB\nMemFree:         1000 kB\n";
        assert_eq!(mem_total_kb(text), Some(24_576_000));
        assert_eq!(mem_total_kb("MemFree: 1 kB\n"), None);
        assert_eq!(mem_total_kb("MemTotal: lots\n"), None);
        assert!(default_memory_mb() >= 1);
    }

    #[test]
    fn heartbeats_carry_the_node_count() {
        let s = Duration::from_secs(2);
        // Nothing from the kernel: the count and the rate, only when the count moved.
        assert_eq!(
            with_node_count(None, 3_000, true, s),
            Some(json!({"nodes": 3_000, "elapsed_ms": 2_000, "nodes_per_s": 1_500}))
        );
        assert_eq!(with_node_count(None, 3_000, false, s), None);
        assert_eq!(with_node_count(None, 0, true, s), None);
        // The kernel's report wins; the count is added only where it says nothing of nodes.
        assert_eq!(
            with_node_count(Some(json!({"playouts": 7})), 9, false, s),
            Some(json!({"playouts": 7, "nodes": 9}))
        );
        assert_eq!(
            with_node_count(Some(json!({"nodes": 5})), 9, true, s),
            Some(json!({"nodes": 5}))
        );
        assert_eq!(
            with_node_count(Some(json!([1, 2])), 9, true, s),
            Some(json!([1, 2]))
        );
    }
}
