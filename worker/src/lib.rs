//! # gamesolver worker
//!
//! Pulls tasks from a coordinator and runs kernels (`gamesolver-worker --coordinator URL
//! [--threads N]`, or in-process threads of `gamesolver serve --local-workers N`).
//!
//! How it runs:
//! - It registers, then each of its N slots long-polls `/v1/worker/lease` for one task at a time.
//! - A task runs on a dedicated rayon pool of N threads, apart from the slot threads that speak
//!   HTTP, so heartbeats are never starved by a busy kernel. The slot heartbeats every
//!   `heartbeat_ms` with the latest progress the kernel published through its `Control`; a reply
//!   with `cancel` (or a 409: the lease is gone) sets the kernel's stop flag.
//! - Prepared jobs are cached by job id, so the probes of one job share the kernel's tables.
//! - A kernel panic is caught (`catch_unwind`) and reported as a failed attempt; the coordinator
//!   decides whether to retry.
//! - When the coordinator is away, every request is retried with jittered exponential backoff;
//!   a finished result is kept and reported when it is back.
//! - On shutdown (SIGTERM/SIGINT in the binary, a flag in-process) a slot lets its task finish
//!   for up to [`SHUTDOWN_GRACE`], then stops the kernel and releases the lease, so the task
//!   goes to another worker without counting as an attempt.
//!
//! Liveness: every slot touches the file named by `GAMESOLVER_WORKER_ALIVE_FILE` (default
//! [`DEFAULT_ALIVE_FILE`]) each time it hears from the coordinator or heartbeats a task;
//! `gamesolver-worker healthcheck` fails when that file is older than a minute (a wedged worker).
//!
//! Test hook (hidden, for the end-to-end tests of poison tasks): when the environment variable
//! `GAMESOLVER_TEST_PANIC_POSITION` is set, a task whose job position equals its value panics
//! inside the kernel call, exactly where a kernel bug would.

use gamesolver_shared::registry::{self, PreparedJob, SolveError};
use gamesolver_shared::search::{Control, StopReason};
use gamesolver_shared::wire::protocol::{
    Heartbeat, HeartbeatReply, Lease, LeaseRequest, Outcome, Register, Registered, Release, Report,
};
use parking_lot::{Mutex, RwLock};
use rand::Rng;
use serde::de::DeserializeOwned;
use serde::Serialize;
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

/// First and largest backoff when the coordinator does not answer.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// Settings of a worker.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Base URL of the coordinator (`http://host:port`).
    pub coordinator: String,
    /// Task slots (tasks run at once) and kernel threads.
    pub threads: usize,
    /// Worker token (`GAMESOLVER_WORKER_TOKEN`).
    pub token: Option<String>,
    /// Name shown in `/v1/status`.
    pub host: String,
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
    /// Not reachable, or a 5xx: try again later.
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
    fn wait(&mut self, shutdown: &AtomicBool) {
        let ms = rand::thread_rng()
            .gen_range(self.ceiling.as_millis() as u64 / 2..=self.ceiling.as_millis() as u64);
        sleep_unless(Duration::from_millis(ms), shutdown);
        self.ceiling = (self.ceiling * 2).min(BACKOFF_MAX);
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

/// Prepared jobs by job id, and the ids in insertion order (the oldest is evicted first).
type PreparedCache = (HashMap<u64, Arc<dyn PreparedJob>>, VecDeque<u64>);

struct Shared {
    config: WorkerConfig,
    client: Client,
    registration: RwLock<Option<Registered>>,
    cache: Mutex<PreparedCache>,
    pool: rayon::ThreadPool,
    shutdown: Arc<AtomicBool>,
    poison: Option<String>,
    alive: std::path::PathBuf,
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
                Ok(None) => backoff.wait(&self.shutdown),
                Err(CallError::Refused(code, text)) => {
                    tracing::error!("the coordinator refused registration ({code}): {text}");
                    return None;
                }
                Err(e) => {
                    tracing::warn!("coordinator away ({e}); retrying");
                    backoff.wait(&self.shutdown);
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

    fn prepared(&self, lease: &Lease) -> Result<Arc<dyn PreparedJob>, SolveError> {
        if let Some(p) = self.cache.lock().0.get(&lease.job_id) {
            return Ok(p.clone());
        }
        let p: Arc<dyn PreparedJob> = Arc::from(registry::prepare(&lease.task.job)?);
        let mut cache = self.cache.lock();
        let (map, order) = &mut *cache;
        if map.insert(lease.job_id, p.clone()).is_none() {
            order.push_back(lease.job_id);
        }
        while order.len() > PREPARED_CACHE {
            if let Some(old) = order.pop_front() {
                map.remove(&old);
            }
        }
        Ok(p)
    }
}

/// Runs a worker until `shutdown` is set (or the coordinator refuses it). Blocking.
pub fn run(config: WorkerConfig, shutdown: Arc<AtomicBool>) -> anyhow::Result<()> {
    if config.threads == 0 {
        anyhow::bail!("--threads must be at least 1");
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads)
        .thread_name(|i| format!("kernel-{i}"))
        .build()?;
    let shared = Arc::new(Shared {
        client: Client::new(&config),
        config: config.clone(),
        registration: RwLock::new(None),
        cache: Mutex::new((HashMap::new(), VecDeque::new())),
        pool,
        shutdown: shutdown.clone(),
        poison: std::env::var("GAMESOLVER_TEST_PANIC_POSITION").ok(),
        alive: alive_file(),
    });
    if shared.register().is_none() {
        if shutdown.load(Ordering::Relaxed) {
            return Ok(());
        }
        anyhow::bail!(
            "the coordinator at {} refused this worker",
            config.coordinator
        );
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
                backoff.wait(&shared.shutdown);
            }
            Err(e) => {
                tracing::debug!("lease: coordinator away ({e})");
                backoff.wait(&shared.shutdown);
            }
        }
    }
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
fn run_lease(shared: &Shared, lease: Lease) {
    let worker_id = shared.worker_id().unwrap_or_default();
    let heartbeat_every = Duration::from_millis(
        shared
            .registration
            .read()
            .as_ref()
            .map(|r| r.heartbeat_ms)
            .unwrap_or(1000)
            .max(10),
    );
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
    .with_progress(sink);
    let (tx, rx) = mpsc::channel::<KernelResult>();
    {
        let ctl = ctl.clone();
        let kind = lease.task.kind.clone();
        let poisoned = shared.poison.as_deref() == Some(lease.task.job.position.as_str());
        shared.pool.spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                if poisoned {
                    panic!("test poison: GAMESOLVER_TEST_PANIC_POSITION matches this job");
                }
                prepared.run(&kind, &ctl)
            }));
            let _ = tx.send(r);
        });
    }
    // Heartbeat until the kernel answers.
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
                worker_id: worker_id.clone(),
                lease_id: lease.lease_id.clone(),
                progress: with_node_count(
                    progress.lock().take(),
                    nodes,
                    nodes != last_nodes,
                    started.elapsed(),
                ),
            };
            last_nodes = nodes;
            match shared
                .client
                .post::<_, HeartbeatReply>("/v1/worker/heartbeat", &hb)
            {
                Ok(Some(HeartbeatReply { cancel: true })) => {
                    cancel.store(true, Ordering::Relaxed);
                }
                Ok(_) => {}
                Err(CallError::Conflict(m)) => {
                    tracing::warn!("lease {} lost: {m}", lease.lease_id);
                    lease_lost = true;
                    cancel.store(true, Ordering::Relaxed);
                }
                Err(CallError::UnknownWorker) => {
                    lease_lost = true;
                    cancel.store(true, Ordering::Relaxed);
                }
                Err(e) => tracing::debug!("heartbeat: coordinator away ({e})"),
            }
        }
    };
    if lease_lost {
        return;
    }
    if released_for_shutdown {
        let r = Release {
            worker_id: worker_id.clone(),
            lease_id: lease.lease_id.clone(),
        };
        let _ = shared
            .client
            .post::<_, serde_json::Value>("/v1/worker/release", &r);
        return;
    }
    let outcome = match result {
        Ok(Ok(output)) => Outcome::Done { output },
        Ok(Err(e)) => match ctl.should_stop() {
            Some(StopReason::Cancelled) => Outcome::Cancelled,
            Some(r @ (StopReason::Time | StopReason::Nodes)) => Outcome::Stopped {
                reason: r.as_str().into(),
            },
            _ => match e {
                SolveError::BadInput(m) => Outcome::Rejected { message: m },
                SolveError::Internal(m) => Outcome::Failed { message: m },
            },
        },
        Err(panic) => Outcome::Failed {
            message: format!("kernel panicked: {}", panic_message(&*panic)),
        },
    };
    report(shared, &worker_id, &lease, outcome);
}

/// Reports an outcome, retrying while the coordinator is away (a finished result is worth
/// keeping). Gives up on 409 (the lease is gone: the task runs elsewhere).
fn report(shared: &Shared, worker_id: &str, lease: &Lease, outcome: Outcome) {
    let body = Report {
        worker_id: worker_id.into(),
        lease_id: lease.lease_id.clone(),
        outcome,
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
                tracing::debug!("report: coordinator away ({e})");
                if shared.shutdown.load(Ordering::Relaxed)
                    && Instant::now() > give_up_after_shutdown
                {
                    return;
                }
                // Sleep even during shutdown: the grace period is for this.
                let never = AtomicBool::new(false);
                backoff.wait(&never);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::with_node_count;
    use serde_json::json;
    use std::time::Duration;

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
