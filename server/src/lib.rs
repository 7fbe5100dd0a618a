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
//! planner; kernels run in workers (`gamesolver-worker`, or threads of `serve --local-workers`).

pub mod api;
pub mod bench;
pub mod client;
pub mod dashboard;
pub mod http;
pub mod metrics;
pub mod openapi;
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
    /// Worker threads to run inside this process (embedded mode).
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
        }
    }

    /// Secure by default: without an API token the job API listens on loopback only, unless
    /// `--insecure-open-api` says otherwise. The error is one line for the operator.
    pub fn check_exposure(&self) -> Result<(), String> {
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
    /// Woken whenever tasks are queued (long-polling workers wait on it).
    pub tasks_ready: Notify,
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
}

impl Coordinator {
    /// Opens the store and rebuilds the scheduler from it.
    pub fn open(config: &ServeConfig) -> anyhow::Result<Arc<Coordinator>> {
        let store = store::Store::open(&config.db)?;
        let sched = Scheduler::open(store, config.sched.clone())?;
        let (job_changed, _) = broadcast::channel(4096);
        Ok(Arc::new(Coordinator {
            sched: Mutex::new(sched),
            tasks_ready: Notify::new(),
            job_changed,
            worker_token: config.worker_token.clone(),
            api_token: config.api_token.clone(),
            body_limit: config.body_limit,
            closing: tokio::sync::watch::channel(false).0,
            event_streams: Default::default(),
            status_reads: Default::default(),
        }))
    }

    /// Runs `f` on the scheduler under the lock, then wakes workers and SSE streams as its
    /// effects require. Blocking (the lock, the store's commit): call from a blocking context.
    pub fn with<R>(&self, f: impl FnOnce(&mut Scheduler) -> R) -> R {
        let (r, changed, queued) = {
            let mut s = self.sched.lock();
            let r = f(&mut s);
            let (changed, queued) = s.take_effects();
            (r, changed, queued)
        };
        if queued {
            self.tasks_ready.notify_waiters();
        }
        for id in changed {
            let _ = self.job_changed.send(id);
        }
        r
    }

    /// [`Coordinator::with`] on tokio's blocking pool, for async handlers.
    pub async fn call<R: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut Scheduler) -> R + Send + 'static,
    ) -> R {
        let me = self.clone();
        match tokio::task::spawn_blocking(move || me.with(f)).await {
            Ok(r) => r,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
}

/// Runs the coordinator until SIGINT or SIGTERM: binds, restores the store, starts the lease
/// sweeper and the local workers, serves HTTP.
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
    match &auth {
        WorkerAuth::Token(_) => {}
        WorkerAuth::LocalOnly(_) => tracing::info!(
            "GAMESOLVER_WORKER_TOKEN is not set: the worker endpoints accept only this process's \
             local workers (set the token to let other workers in, or --insecure-workers)"
        ),
        WorkerAuth::Open => tracing::warn!(
            "--insecure-workers and no GAMESOLVER_WORKER_TOKEN: any client may act as a worker"
        ),
    }
    if config.api_token.is_none() {
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
    // Scripts wait for this line to learn the port when listening on port 0.
    println!("listening on http://{addr}");

    let sweeper = {
        let coord = coord.clone();
        let every = Duration::from_millis((config.sched.lease_ms / 10).clamp(20, 1000));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                if let Err(e) = coord.call(|s| s.expire_leases()).await {
                    tracing::error!("lease sweep: {e}");
                }
                coord.call(|s| s.expire_workers()).await;
            }
        })
    };

    let shutdown_workers = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut local = Vec::new();
    if config.local_workers > 0 {
        let wc = gamesolver_worker::WorkerConfig {
            coordinator: format!("http://{addr}"),
            threads: config.local_workers,
            token: config.worker_token.clone(),
            host: format!("{}-local", gamesolver_worker::host_name()),
        };
        let flag = shutdown_workers.clone();
        local.push(std::thread::spawn(move || {
            if let Err(e) = gamesolver_worker::run(wc, flag) {
                tracing::error!("local workers stopped: {e}");
            }
        }));
    }

    let app = api::router_with(coord.clone(), &limits, stats.clone());
    let closing = {
        let coord = coord.clone();
        let flag = shutdown_workers.clone();
        async move {
            shutdown_signal().await;
            // Local workers stop taking tasks (running ones finish or are released) and long
            // polls end, so the graceful shutdown does not wait for them.
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
            let _ = coord.closing.send(true);
        }
    };
    http::run(listener, app, &limits, stats, closing).await;
    sweeper.abort();
    for handle in local {
        let _ = tokio::task::spawn_blocking(move || handle.join()).await;
    }
    Ok(())
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
