//! # gamesolver coordinator
//!
//! The service that turns kernels into jobs: an HTTP API (axum on tokio), a durable SQLite store
//! and a scheduler that leases tasks to workers. The binary `gamesolver serve` is a thin wrapper
//! around [`serve`].
//!
//! ```text
//!   api (routes, thin handlers, typed errors)   metrics   openapi
//!            \                |                 /
//!             Coordinator: one lock around the Scheduler (the store's single writer),
//!             a Notify for long-polling workers, a broadcast of changed jobs for SSE
//!                            |
//!             scheduler (jobs, planners, queue, leases)  ->  store (SQLite, WAL)
//! ```
//!
//! Handlers never run a search: a job is checked by `registry::prepare` and split by the
//! planner; kernels run in workers (`gamesolver-worker`, or the child processes of
//! `serve --local-workers` that [`local_workers`] supervises, so no kernel runs in this process).

pub mod answers;
pub mod api;
pub mod artifacts;
pub mod client;
pub mod dashboard;
pub mod games_api;
pub mod http;
pub mod local_workers;
pub mod metrics;
pub mod openapi;
pub mod retention;
pub mod routes;
pub mod scheduler;
pub mod store;

use parking_lot::Mutex;
use scheduler::{SchedConfig, Scheduler};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, Notify};

/// Largest request body accepted (a job with an explicit tree is the largest legitimate body).
pub const DEFAULT_BODY_LIMIT: usize = 1 << 20;

/// Settings of `gamesolver serve`.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Address to listen on.
    pub listen: String,
    /// SQLite file.
    pub db: PathBuf,
    /// Local worker processes to run and supervise (embedded mode; [`local_workers`]).
    pub local_workers: usize,
    /// Scheduler settings.
    pub sched: SchedConfig,
    /// Largest request body in bytes.
    pub body_limit: usize,
    /// Bearer token workers must present (`GAMESOLVER_WORKER_TOKEN`); `None`: see
    /// [`ServeConfig::insecure_workers`].
    pub worker_token: Option<String>,
    /// Without a worker token: `true` leaves the worker endpoints open to anyone
    /// (`--insecure-workers`); `false` (the default) protects them with a random token that only
    /// this process's local workers know ([`worker_auth`]).
    pub insecure_workers: bool,
    /// Bearer token clients must present on job endpoints (`GAMESOLVER_API_TOKEN`).
    pub api_token: Option<String>,
    /// Without an API token, allow listening beyond loopback (`--insecure-open-api`).
    pub insecure_open_api: bool,
    /// Timeouts and caps of the HTTP server.
    pub http: http::HttpLimits,
    /// Bound on the bytes of all file artifacts (retrograde databases), in MiB.
    pub max_artifacts_mb: u64,
    /// Retention of finished jobs and the disk quota ([`retention`]).
    pub retention: retention::RetentionConfig,
}

impl ServeConfig {
    /// Defaults with the tokens read from the environment.
    pub fn from_env(listen: String, db: PathBuf, local_workers: usize) -> Self {
        let token = |name: &str| std::env::var(name).ok().filter(|t| !t.is_empty());
        ServeConfig {
            listen,
            db,
            local_workers,
            sched: SchedConfig::default(),
            body_limit: DEFAULT_BODY_LIMIT,
            worker_token: token("GAMESOLVER_WORKER_TOKEN"),
            insecure_workers: false,
            api_token: token("GAMESOLVER_API_TOKEN"),
            insecure_open_api: false,
            http: http::HttpLimits::default(),
            max_artifacts_mb: artifacts::DEFAULT_MAX_ARTIFACTS_MB,
            retention: retention::RetentionConfig::default(),
        }
    }

    /// Secure by default: without an API token the job API listens on loopback only, unless
    /// `--insecure-open-api` says otherwise. The error is one line for the operator.
    pub fn check_exposure(&self) -> Result<(), String> {
        for (name, token) in [
            ("GAMESOLVER_API_TOKEN", &self.api_token),
            ("GAMESOLVER_WORKER_TOKEN", &self.worker_token),
        ] {
            if token.as_deref().is_some_and(placeholder_token) {
                return Err(format!(
                    "{name} is still the example's placeholder: set a long random value \
                     (e.g. `openssl rand -hex 32`) in deploy/.env or the environment"
                ));
            }
        }
        if self.api_token.is_none()
            && !self.insecure_open_api
            && http::beyond_loopback(&self.listen)
        {
            return Err(format!(
                "refusing to listen on '{}' without GAMESOLVER_API_TOKEN (anyone reaching it \
                 could submit jobs): set the token, listen on 127.0.0.1, or pass \
                 --insecure-open-api",
                self.listen
            ));
        }
        Ok(())
    }
}

/// A token copied from an example without being changed (`change-me-...`, `<token>`, ...):
/// anyone who read the example would know it.
pub fn placeholder_token(token: &str) -> bool {
    let t = token.trim().to_ascii_lowercase().replace(['_', ' '], "-");
    t.contains("change-me")
        || t.contains("changeme")
        || t.contains("replace-me")
        || t.contains("placeholder")
        || t.starts_with('<')
        || t.starts_with("${")
}

/// How the worker endpoints are protected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerAuth {
    /// `GAMESOLVER_WORKER_TOKEN` is set: workers anywhere present it.
    Token(String),
    /// No token was given: a random one, known only to the local workers of this process, so
    /// `/v1/worker/...` refuses every outside client (secure by default; embedded mode works).
    LocalOnly(String),
    /// No token and `--insecure-workers`: anyone may act as a worker.
    Open,
}

impl WorkerAuth {
    /// The token the endpoints require, if any.
    pub fn token(&self) -> Option<&str> {
        match self {
            WorkerAuth::Token(t) | WorkerAuth::LocalOnly(t) => Some(t),
            WorkerAuth::Open => None,
        }
    }
}

/// The worker authentication `config` asks for (a fresh random token for
/// [`WorkerAuth::LocalOnly`]).
pub fn worker_auth(config: &ServeConfig) -> WorkerAuth {
    match (&config.worker_token, config.insecure_workers) {
        (Some(t), _) => WorkerAuth::Token(t.clone()),
        (None, true) => WorkerAuth::Open,
        (None, false) => {
            use rand::Rng;
            let mut rng = rand::thread_rng();
            WorkerAuth::LocalOnly(format!(
                "local-{:016x}{:016x}{:016x}{:016x}",
                rng.gen::<u64>(),
                rng.gen::<u64>(),
                rng.gen::<u64>(),
                rng.gen::<u64>()
            ))
        }
    }
}

/// The shared state of the coordinator.
pub struct Coordinator {
    sched: Mutex<Scheduler>,
    /// A read-only connection to the store, behind its own lock: reads of jobs that are not
    /// resident (finished ones, lists, task pages, proofs) never take the scheduler's lock.
    reader: Mutex<store::Reader>,
    /// Woken once per queued task (long-polling workers wait on it): [`Coordinator::wake_workers`].
    pub tasks_ready: Notify,
    /// One scheduler call at a time goes to the blocking pool ([`Coordinator::blocking`]).
    gate: tokio::sync::Semaphore,
    /// Ids of jobs whose status changed (SSE streams listen to it).
    pub job_changed: broadcast::Sender<u64>,
    /// Worker token, if any.
    pub worker_token: Option<String>,
    /// Client token, if any.
    pub api_token: Option<String>,
    /// Body limit.
    pub body_limit: usize,
    /// Set when the coordinator shuts down: long polls end at once.
    pub closing: tokio::sync::watch::Sender<bool>,
    /// Event streams opened (`/metrics`: how clients follow jobs).
    pub event_streams: std::sync::atomic::AtomicU64,
    /// `GET /v1/jobs/{id}` answered (`/metrics`: polling shows here).
    pub status_reads: std::sync::atomic::AtomicU64,
    /// File artifacts beside the store (retrograde databases and round chunks).
    pub artifacts: Arc<artifacts::ArtifactStore>,
    /// Work too heavy for the scheduler's lock, to the planning thread ([`planning_thread`]).
    background: Mutex<Option<std::sync::mpsc::Sender<scheduler::Background>>>,
    /// Woken when tasks on workers were told to stop (workers' cancel watches look again).
    pub cancels: Notify,
    /// Longest hold of the scheduler's lock so far, in microseconds (`/metrics`).
    pub lock_hold_max_us: std::sync::atomic::AtomicU64,
    /// Total time the scheduler's lock was held, in microseconds (`/metrics`).
    pub lock_hold_total_us: std::sync::atomic::AtomicU64,
    /// Most CPU time one hold of the scheduler's lock used, in microseconds (`/metrics`).
    pub lock_work_max_us: std::sync::atomic::AtomicU64,
    /// Retention of finished jobs and the disk quota.
    pub retention: retention::Retention,
}

/// The coordinator's planning thread: runs, one at a time and off the scheduler's lock, the
/// work a scheduler call handed out ([`scheduler::Background`]: a done plan's final search and
/// result, preparing a large resting job again), then gives each result back under the lock.
/// Its stack is the kernels' ([`gamesolver_shared::search::KERNEL_STACK_BYTES`]): a plan's
/// final search is a small kernel call. It ends with the coordinator.
fn planning_thread(
    coord: std::sync::Weak<Coordinator>,
    rx: std::sync::mpsc::Receiver<scheduler::Background>,
) {
    let spawned = std::thread::Builder::new()
        .name("planning".into())
        .stack_size(gamesolver_shared::search::KERNEL_STACK_BYTES)
        .spawn(move || {
            while let Ok(work) = rx.recv() {
                let done =
                    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work.run())) {
                        Ok(done) => done,
                        Err(_) => {
                            tracing::error!("background planning work panicked");
                            continue;
                        }
                    };
                let Some(c) = coord.upgrade() else {
                    return;
                };
                if let Err(e) = c.with(|s| s.complete(done)) {
                    tracing::warn!("background planning result not stored: {e}");
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!("cannot start the planning thread: {e}");
    }
}

impl Coordinator {
    /// Opens the store and rebuilds the scheduler from it.
    pub fn open(config: &ServeConfig) -> anyhow::Result<Arc<Coordinator>> {
        let store = store::Store::open(&config.db)?;
        let artifacts = Arc::new(artifacts::ArtifactStore::open(
            &config.db,
            config.max_artifacts_mb,
        )?);
        // Jobs that name a set this coordinator built (`tables=NAME@HASH`) are checked against
        // these artifacts, from the first one the store reloads on.
        gamesolver_shared::search::retrograde::artifacts::install_source(
            artifacts.clone(),
            gamesolver_shared::search::retrograde::artifacts::SourceMode::Check,
        );
        let retention = retention::Retention::open(
            store.pruner()?,
            &config.db,
            artifacts.clone(),
            config.retention.clone(),
        )?;
        let mut sched = Scheduler::open(store, config.sched.clone())?;
        sched.set_background(true);
        let reader = sched.reader()?;
        let (job_changed, _) = broadcast::channel(4096);
        let (tx, rx) = std::sync::mpsc::channel();
        let coord = Arc::new(Coordinator {
            sched: Mutex::new(sched),
            reader: Mutex::new(reader),
            tasks_ready: Notify::new(),
            gate: tokio::sync::Semaphore::new(1),
            job_changed,
            worker_token: config.worker_token.clone(),
            api_token: config.api_token.clone(),
            body_limit: config.body_limit,
            closing: tokio::sync::watch::channel(false).0,
            event_streams: Default::default(),
            status_reads: Default::default(),
            artifacts,
            retention,
            background: Mutex::new(Some(tx)),
            cancels: Notify::new(),
            lock_hold_max_us: Default::default(),
            lock_hold_total_us: Default::default(),
            lock_work_max_us: Default::default(),
        });
        planning_thread(Arc::downgrade(&coord), rx);
        Ok(coord)
    }

    /// Ends the planning thread once it has done the work already handed to it.
    pub fn stop_background(&self) {
        self.background.lock().take();
    }

    /// Counts a hold of the scheduler's lock that started at `since`, `cpu_since` microseconds
    /// of this thread's CPU time ([`thread_cpu_us`]); a hold longer than [`SLOW_HOLD`] is logged
    /// with the call site that took the lock.
    fn held(
        &self,
        (since, cpu_since): (std::time::Instant, u64),
        at: &std::panic::Location<'static>,
    ) {
        use std::sync::atomic::Ordering;
        let us = since.elapsed().as_micros() as u64;
        let cpu = thread_cpu_us().saturating_sub(cpu_since);
        self.lock_hold_max_us.fetch_max(us, Ordering::Relaxed);
        self.lock_hold_total_us.fetch_add(us, Ordering::Relaxed);
        self.lock_work_max_us.fetch_max(cpu, Ordering::Relaxed);
        if us >= SLOW_HOLD.as_micros() as u64 {
            tracing::warn!(
                "the scheduler's lock was held {:.1} ms ({:.1} ms of CPU) by {}:{}",
                us as f64 / 1e3,
                cpu as f64 / 1e3,
                at.file(),
                at.line()
            );
        }
    }

    /// Runs `f` on the scheduler under the lock, then wakes workers and SSE streams as its
    /// effects require. Blocking (the lock, the store's commit): call from a blocking context.
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(&mut Scheduler) -> R) -> R {
        self.with_at(f, std::panic::Location::caller())
    }

    /// [`Coordinator::with`] for a call made at `at`.
    fn with_at<R>(
        &self,
        f: impl FnOnce(&mut Scheduler) -> R,
        at: &'static std::panic::Location<'static>,
    ) -> R {
        let (r, changed, queued, background, cancels) = {
            let mut s = self.sched.lock();
            let since = (std::time::Instant::now(), thread_cpu_us());
            let r = f(&mut s);
            let (changed, queued) = s.take_effects();
            let background = s.take_background();
            let cancels = s.take_cancels();
            self.held(since, at);
            (r, changed, queued, background, cancels)
        };
        if !background.is_empty() {
            if let Some(tx) = self.background.lock().as_ref() {
                for work in background {
                    let _ = tx.send(work);
                }
            }
        }
        if cancels {
            self.cancels.notify_waiters();
        }
        self.wake_workers(queued);
        for id in changed {
            let _ = self.job_changed.send(id);
        }
        r
    }

    /// Wakes as many long-polling workers as there are queued tasks (at most [`MAX_WAKE`]),
    /// not every poll for one task. A woken poll that fails passes its wake-up on
    /// (`api::worker_lease`); a dropped one does too (tokio's `Notified`).
    pub fn wake_workers(&self, queued: usize) {
        for _ in 0..queued.min(MAX_WAKE) {
            self.tasks_ready.notify_one();
        }
    }

    /// `f`, one caller at a time, on the calling async thread: the others wait in the gate's
    /// fair queue as cheap async tasks, not as blocked threads convoying on the lock, and no
    /// call pays two thread switches for a hop to the blocking pool. A scheduler call is short
    /// (memory and one small SQLite transaction on the page cache), so holding a runtime
    /// thread for it costs less than the hop.
    async fn blocking<R: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&Coordinator) -> R + Send + 'static,
    ) -> R {
        let _turn = self.gate.acquire().await;
        f(self)
    }

    /// `f` on the scheduler under the lock, on tokio's blocking pool, for reads (no effects to
    /// drain). Keep `f` to memory: it holds the lock that every worker request needs.
    #[track_caller]
    pub fn read<R: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&Scheduler) -> R + Send + 'static,
    ) -> impl std::future::Future<Output = R> + Send + 'static {
        let at = std::panic::Location::caller();
        let me = self.clone();
        async move {
            me.blocking(move |c| {
                let s = c.sched.lock();
                let since = (std::time::Instant::now(), thread_cpu_us());
                let r = f(&s);
                c.held(since, at);
                r
            })
            .await
        }
    }

    /// `f` on the store's read-only connection (its own lock, never the scheduler's), on
    /// tokio's blocking pool.
    pub async fn query<R: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&store::Queries<'_>) -> R + Send + 'static,
    ) -> R {
        let me = self.clone();
        match tokio::task::spawn_blocking(move || f(&me.reader.lock().queries())).await {
            Ok(r) => r,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => std::future::pending().await,
        }
    }

    /// The status of job `id` (`GET /v1/jobs/{id}`, SSE, dashboard): from memory, under the
    /// lock, while the job is resident; else its stored final status, one query on the reader
    /// outside the lock. A job is evicted only after its final status is committed, so one of
    /// the two always has it. A job that the retention policy deleted is a 404 that says so.
    /// Never blocks an async thread.
    pub async fn job_status(
        self: &Arc<Self>,
        id: u64,
    ) -> Result<answers::JobStatus, scheduler::SchedError> {
        let resident = self.read(move |s| s.resident_status(id)).await;
        match resident {
            Some(st) => Ok(st),
            None => self
                .query(move |q| scheduler::stored_status(q, id))
                .await
                .map_err(|e| self.retention.explain(id, e)),
        }
    }

    /// [`Coordinator::with`] at once, ahead of the gate's queue: for heartbeats, whose latency
    /// decides whether a busy coordinator's leases expire (short: memory, and one progress row).
    #[track_caller]
    pub fn call_now<R>(&self, f: impl FnOnce(&mut Scheduler) -> R) -> R {
        self.with_at(f, std::panic::Location::caller())
    }

    /// [`Coordinator::with`] in the gate's queue ([`Coordinator::blocking`]), for async handlers.
    #[track_caller]
    pub fn call<R: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut Scheduler) -> R + Send + 'static,
    ) -> impl std::future::Future<Output = R> + Send + 'static {
        let at = std::panic::Location::caller();
        let me = self.clone();
        async move { me.blocking(move |c| c.with_at(f, at)).await }
    }
}

/// The CPU time this thread has used, in microseconds (0 where the platform has no such
/// clock): a lock's hold in CPU time is the work done under it, without the time its thread
/// waited for a core or for the disk.
pub fn thread_cpu_us() -> u64 {
    #[cfg(unix)]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid timespec for the call to fill.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0 {
            return t.tv_sec as u64 * 1_000_000 + t.tv_nsec as u64 / 1_000;
        }
    }
    0
}

/// A hold of the scheduler's lock at least this long is logged with its call site.
pub const SLOW_HOLD: std::time::Duration = std::time::Duration::from_millis(20);

/// Most long polls one change wakes at once.
pub const MAX_WAKE: usize = 4096;

/// Runs the coordinator until SIGINT or SIGTERM: binds, restores the store, starts the lease
/// sweeper, the retention sweep ([`retention::run`]) and the local workers, serves HTTP.
pub async fn serve(mut config: ServeConfig) -> anyhow::Result<()> {
    config.check_exposure().map_err(anyhow::Error::msg)?;
    let nofile = http::raise_nofile_limit();
    let auth = worker_auth(&config);
    config.worker_token = auth.token().map(str::to_string);
    let coord = Coordinator::open(&config)?;
    let listener = tokio::net::TcpListener::bind(&config.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on '{}': {e}", config.listen))?;
    let addr: SocketAddr = listener.local_addr()?;
    log_exposure(&auth, config.api_token.is_none(), addr);
    let limits = config.http.clone();
    let stats = http::HttpStats::new(&limits);
    if let Some(n) = nofile {
        if stats.max_connections as u64 + http::FD_RESERVE > n {
            tracing::warn!(
                "--max-connections {} leaves under {} of the {n} open files for the store and \
                 the workers",
                stats.max_connections,
                http::FD_RESERVE
            );
        }
    }
    tracing::info!(
        "gamesolver coordinator listening on http://{addr} (store {}; at most {} connections, \
         {} event streams)",
        config.db.display(),
        stats.max_connections,
        stats.max_event_streams
    );
    print_address(addr);

    let sweeper = spawn_sweeper(coord.clone(), config.sched.lease_ms);

    let local = start_local_workers(&config, addr)?;

    tracing::info!("retention: {}", config.retention.describe());
    let retention = tokio::spawn(retention::run(coord.clone()));

    let app = routes::router_with(coord.clone(), &limits, stats.clone());
    let closing = {
        let coord = coord.clone();
        async move {
            shutdown_signal().await;
            // Local workers get SIGTERM first (running tasks finish or release their leases),
            // then long polls end so that they see it at once; the HTTP server keeps serving
            // them until they have exited (or were killed after the grace period).
            if let Some(local) = &local {
                local.signal_stop();
            }
            let _ = coord.closing.send(true);
            if let Some(local) = local {
                let _ = tokio::task::spawn_blocking(move || local.stop()).await;
            }
        }
    };
    http::run(listener, app, &limits, stats, closing).await;
    sweeper.abort();
    retention.abort();
    Ok(())
}

/// Logs who may reach the worker endpoints and the job API (`api_open`: no API token).
fn log_exposure(auth: &WorkerAuth, api_open: bool, addr: SocketAddr) {
    match auth {
        WorkerAuth::Token(_) => {}
        WorkerAuth::LocalOnly(_) => tracing::info!(
            "GAMESOLVER_WORKER_TOKEN is not set: the worker endpoints accept only this process's \
             local workers (set the token to let other workers in, or --insecure-workers)"
        ),
        WorkerAuth::Open => tracing::warn!(
            "--insecure-workers and no GAMESOLVER_WORKER_TOKEN: any client may act as a worker"
        ),
    }
    if api_open {
        if addr.ip().is_loopback() {
            tracing::info!(
                "GAMESOLVER_API_TOKEN is not set: listening on loopback only (set the token to \
                 open the job API to a network)"
            );
        } else {
            tracing::warn!(
                "--insecure-open-api and no GAMESOLVER_API_TOKEN: anyone reaching {addr} may \
                 submit jobs"
            );
        }
    }
}

/// Prints where the coordinator listens and where its dashboard is.
fn print_address(addr: SocketAddr) {
    // Scripts wait for the first line to learn the port when listening on port 0, and may
    // close the pipe after it: both lines go in one write, and a closed stdout is no error.
    let shown = match addr.ip() {
        ip if ip.is_unspecified() => format!("localhost:{}", addr.port()),
        _ => addr.to_string(),
    };
    use std::io::Write;
    let _ = std::io::stdout().write_all(
        format!(
            "listening on http://{addr}\ndashboard: http://{shown}/  (API: \
             http://{shown}/v1/status, docs: http://{shown}/docs)\n"
        )
        .as_bytes(),
    );
    let _ = std::io::stdout().flush();
}

/// Starts the sweeper: expired leases, jobs past their time limit and silent workers, ten
/// times a lease time (every 20 ms to 1 s).
fn spawn_sweeper(coord: Arc<Coordinator>, lease_ms: u64) -> tokio::task::JoinHandle<()> {
    let every = Duration::from_millis((lease_ms / 10).clamp(20, 1000));
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        loop {
            tick.tick().await;
            if let Err(e) = coord.call(|s| s.expire_leases()).await {
                tracing::error!("lease sweep: {e}");
            }
            if let Err(e) = coord.call(|s| s.end_timed_out()).await {
                tracing::error!("time limit sweep: {e}");
            }
            coord.call(|s| s.expire_workers()).await;
        }
    })
}

/// Starts the `--local-workers` children, connected to `addr` through loopback (or none).
fn start_local_workers(
    config: &ServeConfig,
    addr: SocketAddr,
) -> anyhow::Result<Option<local_workers::LocalWorkers>> {
    if config.local_workers == 0 {
        return Ok(None);
    }
    // Loopback, whatever address the API listens on: the children run on this machine.
    let coordinator = match addr.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => {
            format!("http://127.0.0.1:{}", addr.port())
        }
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => {
            format!("http://[::1]:{}", addr.port())
        }
        _ => format!("http://{addr}"),
    };
    Ok(Some(local_workers::LocalWorkers::start(
        &local_workers::LocalWorkerSpec {
            count: config.local_workers,
            coordinator,
            token: config.worker_token.clone(),
            memory_mb: gamesolver_worker::default_memory_mb(),
        },
    )?))
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
}

/// [`serve`] on a new multi-threaded runtime (for the command line).
pub fn serve_blocking(config: ServeConfig) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(serve(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples' tokens are refused with a line naming the variable; real ones pass.
    #[test]
    fn placeholder_tokens_are_refused() {
        for t in [
            "change-me-worker-token",
            "CHANGE_ME",
            "changeme",
            "<token>",
            "${TOKEN}",
        ] {
            assert!(placeholder_token(t), "{t}");
        }
        for t in ["wt-secret", "3f9c2a7e0b1d4c58a6e2f0b9c7d1e3a5"] {
            assert!(!placeholder_token(t), "{t}");
        }
        let mut c = ServeConfig::from_env("127.0.0.1:0".into(), "x.db".into(), 0);
        c.worker_token = Some("change-me-worker-token".into());
        let e = c.check_exposure().unwrap_err();
        assert!(e.starts_with("GAMESOLVER_WORKER_TOKEN is still"), "{e}");
        c.worker_token = Some("3f9c2a7e0b1d4c58".into());
        assert_eq!(c.check_exposure(), Ok(()));
    }
}
