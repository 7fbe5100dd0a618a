//! The command line (docs/API.md, section 1): the arguments of the in-process commands and
//! their runs (`solve`, `analyse`, `batch`, `options`, `serve`, ...); the subcommand table is in
//! `main.rs`.
//!
//! Exit statuses: 0 success; 1 a job ran but gave no result (limit reached, kernel failure) or a
//! `batch` line failed; 2 bad input (unknown game, illegal position, malformed option,
//! unreadable file), always with exactly one line on stderr naming the offending input.

use clap::Args;
use gamesolver_shared::plan;
use gamesolver_shared::registry::{self, SolveError};
use gamesolver_shared::search::{control::ProgressSink, Control};
use gamesolver_shared::viz::{self, Snapshot};
use gamesolver_shared::wire::{JobResult, JobSpec, Limits, Settings};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `gamesolver worker`: the same worker as `gamesolver-worker`, as a child of `serve`.
pub fn worker(args: gamesolver_worker::cli::WorkerArgs) -> Result<(), Failure> {
    gamesolver_worker::cli::run_args(args).map_err(|f| Failure {
        status: f.status,
        message: f.message,
    })
}

/// `gamesolver bench ...`: whatever follows, accepted so that the answer is the pointer below.
#[derive(Debug, Args)]
pub struct BenchMovedArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<String>,
}

/// `gamesolver bench`: the harness is not part of the production binary; exit 2 with one line
/// naming the binary that is.
pub fn bench(_args: BenchMovedArgs) -> Result<(), Failure> {
    Err(Failure {
        status: 2,
        message: "the benchmark harness is the gamesolver-bench binary (cargo run --release -p \
                  gamesolver-bench -- quick)"
            .into(),
    })
}

/// The end of `solve --help`: every kernel family's options and the game parameters, with
/// bounds and defaults, from the declared specs (`registry::spec::families`), the tables the
/// README's "Limits of a job" and `/openapi.json` show too.
pub fn options_help() -> String {
    let mut out = String::from(
        "Options (--option KEY=VALUE) by kernel family, and game parameters (--game-param \
         KEY=VALUE); `gamesolver options --game G --algorithm A` lists those of one pair:\n",
    );
    for (title, specs) in registry::spec::families() {
        out += &format!("\n{}:\n", title.replace('`', ""));
        out += &spec_lines(specs.iter(), true);
    }
    out
}

/// A block of settings as the help shows them, one a line: `  name  bounds  (default: d)
/// meaning [only ...]` (the algorithms it is limited to, when `only`), the columns as wide as
/// the block's longest name and bounds.
fn spec_lines<'s>(
    specs: impl Iterator<Item = &'s registry::spec::Spec> + Clone,
    only: bool,
) -> String {
    let name_width = specs.clone().map(|s| s.name.len()).max().unwrap_or(0);
    let range_width = specs
        .clone()
        .map(|s| s.range_text().len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for spec in specs {
        let only = if spec.only.is_empty() || !only {
            String::new()
        } else {
            format!(" [only {}]", spec.only.join(", "))
        };
        out += &format!(
            "  {:<name_width$}  {:<range_width$}  (default: {}) {}{only}\n",
            spec.name,
            spec.range_text(),
            spec.default.text(),
            spec.help
        );
    }
    out
}

/// The game of `options` and of a job: a catalogue game by name, or a game module.
#[derive(Debug, Args)]
pub struct GameChoice {
    /// Game name (tictactoe, mnk, connect4, tree, ...).
    #[arg(
        long,
        required_unless_present = "game_module",
        default_value = "",
        hide_default_value = true
    )]
    pub game: String,
    /// A game module to play instead of a catalogue game, run sandboxed in this process:
    /// FILE.wasm, or the text format FILE.wat (docs/GAME_MODULES.md).
    #[arg(long, value_name = "FILE", conflicts_with = "game")]
    pub game_module: Option<PathBuf>,
}

impl GameChoice {
    /// The catalogue game's name (empty when a module is given).
    pub fn name(&self) -> &str {
        &self.game
    }
}

/// `gamesolver options`.
#[derive(Debug, Args)]
pub struct OptionsArgs {
    #[command(flatten)]
    pub game: GameChoice,
    /// Algorithm name (minimax, alphabeta, pns, mcts, ...).
    #[arg(long)]
    pub algorithm: String,
    /// Print JSON (the answer of `GET /v1/options`) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `gamesolver options`: exit 2 when the registry does not run ALGORITHM on GAME.
pub fn options(args: OptionsArgs) -> Result<(), Failure> {
    let declared = registry::option_specs(args.game.name(), &args.algorithm);
    if declared.is_empty() {
        return Err(Failure::bad_input(format!(
            "no algorithm '{}' for game '{}'",
            args.algorithm,
            args.game.name()
        )));
    }
    if args.json {
        let list = gamesolver::answers::OptionList::of(args.game.name(), &args.algorithm);
        println!(
            "{}",
            serde_json::to_string_pretty(&list).unwrap_or_default()
        );
        return Ok(());
    }
    let mut out = format!(
        "Options of {} on {} (--option KEY=VALUE):\n",
        args.algorithm,
        args.game.name()
    );
    let block = |param: bool| {
        declared
            .iter()
            .filter(move |d| d.param == param)
            .map(|d| &d.spec)
    };
    out += &spec_lines(block(false), false);
    if declared.iter().any(|d| d.param) {
        out += "Game parameters (--game-param KEY=VALUE):\n";
        out += &spec_lines(block(true), false);
    }
    print!("{out}");
    Ok(())
}

/// `gamesolver verify-proof`.
#[derive(Debug, Args)]
pub struct VerifyProofArgs {
    /// The proof file.
    pub file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `gamesolver verify-proof`: exit 0 with the certified claim, 1 when the proof is wrong, 2 when
/// the file cannot be read.
pub fn verify_proof(args: VerifyProofArgs) -> Result<(), Failure> {
    if !args.file.is_file() {
        return Err(Failure::bad_input(format!(
            "cannot read proof file '{}'",
            args.file.display()
        )));
    }
    let certified = gamesolver_shared::registry::proof::verify_proof_file(&args.file)
        .map_err(|e| Failure::no_result(format!("proof rejected: {e}")))?;
    let v = serde_json::to_value(&certified).unwrap_or(serde_json::Value::Null);
    if args.json {
        println!("{v}");
    } else {
        println!("proof verified: {v}");
    }
    Ok(())
}

/// `gamesolver healthcheck`.
#[derive(Debug, Args)]
pub struct HealthArgs {
    /// Base URL of the coordinator.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// Seconds to wait for the answer.
    #[arg(long, default_value_t = 3.0)]
    pub timeout: f64,
}

/// `gamesolver healthcheck`: a plain HTTP/1.1 GET over a TCP socket (http only; the check runs
/// inside the coordinator's own container or pod).
pub fn healthcheck(args: HealthArgs) -> Result<(), Failure> {
    use std::io::Read;
    use std::net::{TcpStream, ToSocketAddrs};
    let rest = args.url.strip_prefix("http://").ok_or_else(|| {
        Failure::bad_input(format!("--url '{}' must start with http://", args.url))
    })?;
    let (hostport, base) = match rest.split_once('/') {
        Some((h, p)) => (h, format!("/{}", p.trim_end_matches('/'))),
        None => (rest, String::new()),
    };
    let hostport = if hostport.contains(':') {
        hostport.to_string()
    } else {
        format!("{hostport}:80")
    };
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(Failure::bad_input(
            "--timeout must be a positive number of seconds",
        ));
    }
    let timeout = Duration::from_secs_f64(args.timeout);
    let addr = hostport
        .to_socket_addrs()
        .map_err(|e| Failure::bad_input(format!("cannot resolve '{hostport}': {e}")))?
        .next()
        .ok_or_else(|| Failure::bad_input(format!("cannot resolve '{hostport}'")))?;
    let unhealthy = |m: String| Failure::no_result(format!("unhealthy: {m}"));
    let mut stream = TcpStream::connect_timeout(&addr, timeout)
        .map_err(|e| unhealthy(format!("{hostport}: {e}")))?;
    stream.set_read_timeout(Some(timeout)).ok();
    stream.set_write_timeout(Some(timeout)).ok();
    let request =
        format!("GET {base}/healthz HTTP/1.1\r\nHost: {hostport}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| unhealthy(e.to_string()))?;
    let mut head = [0u8; 64];
    let n = stream
        .read(&mut head)
        .map_err(|e| unhealthy(e.to_string()))?;
    let status_line = String::from_utf8_lossy(&head[..n]);
    let ok = status_line.split_whitespace().nth(1) == Some("200");
    if ok {
        Ok(())
    } else {
        Err(unhealthy(format!(
            "answer '{}'",
            status_line.lines().next().unwrap_or("")
        )))
    }
}

/// `gamesolver serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0: any free port, printed on stdout). Without
    /// GAMESOLVER_API_TOKEN only loopback is allowed (see --insecure-open-api).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// SQLite file holding jobs, tasks and results (created when missing).
    #[arg(long, default_value = "gamesolver.db")]
    pub db: PathBuf,
    /// Local workers to run (embedded mode): child processes of one task slot each, restarted
    /// when they exit, sharing half the machine's memory. A kernel that crashes costs one
    /// worker, never the coordinator.
    #[arg(long, default_value_t = 0)]
    pub local_workers: usize,
    /// Lease time in milliseconds: a task whose worker stops heartbeating for this long goes to
    /// another worker.
    #[arg(long, default_value_t = gamesolver::scheduler::DEFAULT_LEASE_MS)]
    pub lease_ms: u64,
    /// Attempts of a task before its job fails.
    #[arg(long, default_value_t = gamesolver::scheduler::DEFAULT_MAX_ATTEMPTS)]
    pub max_attempts: u32,
    /// Tasks one job keeps in flight (default: the number of live worker slots).
    #[arg(long)]
    pub parallelism: Option<usize>,
    /// Cap on the tasks one job-level proof-number job (`jlpns`) keeps in flight, 1..=4096
    /// (other plans: 16).
    #[arg(long, default_value_t = gamesolver::scheduler::DEFAULT_MAX_JOB_LEVEL_PARALLELISM)]
    pub max_job_level_parallelism: usize,
    /// Jobs queued or running at most; a submit past it gets 429.
    #[arg(long, default_value_t = gamesolver::scheduler::DEFAULT_MAX_QUEUED_JOBS)]
    pub max_queued_jobs: usize,
    /// Bytes of job positions and options the coordinator holds at most; past it, 429.
    #[arg(long, default_value_t = gamesolver::scheduler::DEFAULT_MAX_POSITION_BYTES)]
    pub max_position_bytes: usize,
    /// Tasks in one job's plan at most (runs, rounds iterations); a larger job gets 400.
    #[arg(long, default_value_t = gamesolver::scheduler::DEFAULT_MAX_TASKS_PER_JOB)]
    pub max_tasks_per_job: u64,
    /// Bytes of one proof certificate at most; a larger one fails its attempt.
    #[arg(long, default_value_t = gamesolver::scheduler::DEFAULT_MAX_PROOF_BYTES)]
    pub max_proof_bytes: usize,
    /// Bytes of all file artifacts (retrograde databases) kept beside the store, in MiB.
    #[arg(long, default_value_t = gamesolver::artifacts::DEFAULT_MAX_ARTIFACTS_MB, value_name = "MIB")]
    pub max_artifacts_mb: u64,
    /// Hours a finished job (done, failed, cancelled) is kept after it ended, with its tasks,
    /// results and proof; then it is deleted (404 says so). 0: no age limit; decimals allowed.
    #[arg(long, value_name = "HOURS", default_value_t = gamesolver::retention::DEFAULT_RETAIN_HOURS)]
    pub retain_hours: f64,
    /// MiB of the SQLite file that finished jobs may fill: past it the jobs that ended first are
    /// deleted first. 0: no size budget (--max-store-mb still applies).
    #[arg(long, value_name = "MIB", default_value_t = gamesolver::retention::DEFAULT_RETAIN_MB)]
    pub retain_mb: u64,
    /// MiB the whole store may hold (the SQLite file's live pages, its WAL, the file
    /// artifacts): retention deletes finished jobs to stay under it, and when it cannot a
    /// submit gets 429. 0: no quota.
    #[arg(long, value_name = "MIB", default_value_t = gamesolver::retention::DEFAULT_MAX_STORE_MB)]
    pub max_store_mb: u64,
    /// Without GAMESOLVER_WORKER_TOKEN, let anyone use the worker endpoints. By default they
    /// then accept only the local workers of this process (a random token kept in memory).
    #[arg(long)]
    pub insecure_workers: bool,
    /// Without GAMESOLVER_API_TOKEN, listen beyond loopback anyway: anyone who reaches the
    /// address may submit jobs. Without the token or this flag a non-loopback --listen exits 2.
    #[arg(long)]
    pub insecure_open_api: bool,
    #[command(flatten)]
    pub http: HttpArgs,
}

/// `gamesolver serve`: timeouts and caps of the HTTP server.
#[derive(Debug, Args)]
pub struct HttpArgs {
    /// Seconds a request head has to arrive whole, from its first byte (a half-sent head is
    /// closed past it).
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub header_timeout: u64,
    /// Seconds a connection may stay open without a request (from its opening or its previous
    /// answer).
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub idle_timeout: u64,
    /// Seconds a request body has to arrive, from the end of its head (408 past it).
    #[arg(long, value_name = "SECS", default_value_t = 15)]
    pub body_timeout: u64,
    /// Seconds to answer a request (503 past it); event streams and worker long polls
    /// (at most 30 s) are exempt.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub request_timeout: u64,
    /// Connections served at once [default: 3/4 of the open-file limit less 64, at most
    /// 10000; the soft limit is raised to the hard one at start]. At the cap a new connection
    /// closes the oldest idle one, or is closed at once if none is idle.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// Job event streams (SSE) open at once; 503 past it [default: a quarter of
    /// --max-connections].
    #[arg(long, value_name = "N")]
    pub max_event_streams: Option<usize>,
    /// Serve /metrics without the API token even when GAMESOLVER_API_TOKEN is set.
    #[arg(long)]
    pub open_metrics: bool,
}

impl HttpArgs {
    fn limits(&self) -> Result<gamesolver::http::HttpLimits, Failure> {
        const DAY: u64 = 86_400;
        for (flag, v) in [
            ("--header-timeout", self.header_timeout),
            ("--idle-timeout", self.idle_timeout),
            ("--body-timeout", self.body_timeout),
            ("--request-timeout", self.request_timeout),
        ] {
            if !(1..=DAY).contains(&v) {
                return Err(Failure::bad_input(format!(
                    "{flag} must be between 1 and {DAY} seconds"
                )));
            }
        }
        for (flag, v) in [
            (
                "--max-connections",
                self.max_connections.unwrap_or(1) as u64,
            ),
            (
                "--max-event-streams",
                self.max_event_streams.unwrap_or(1) as u64,
            ),
        ] {
            if v == 0 {
                return Err(Failure::bad_input(format!("{flag} must be at least 1")));
            }
        }
        Ok(gamesolver::http::HttpLimits {
            header_timeout: Duration::from_secs(self.header_timeout),
            idle_timeout: Duration::from_secs(self.idle_timeout),
            body_timeout: Duration::from_secs(self.body_timeout),
            request_timeout: Duration::from_secs(self.request_timeout),
            max_connections: self.max_connections,
            max_event_streams: self.max_event_streams,
            open_metrics: self.open_metrics,
        })
    }
}

/// `gamesolver serve`: the coordinator until SIGINT/SIGTERM.
pub fn serve(args: ServeArgs) -> Result<(), Failure> {
    if args.lease_ms < 50 {
        return Err(Failure::bad_input("--lease-ms must be at least 50"));
    }
    if args.max_attempts == 0 {
        return Err(Failure::bad_input("--max-attempts must be at least 1"));
    }
    if args.parallelism == Some(0) {
        return Err(Failure::bad_input("--parallelism must be at least 1"));
    }
    if !(1..=gamesolver::scheduler::MAX_JOB_LEVEL_PARALLELISM)
        .contains(&args.max_job_level_parallelism)
    {
        return Err(Failure::bad_input(format!(
            "--max-job-level-parallelism must be between 1 and {}",
            gamesolver::scheduler::MAX_JOB_LEVEL_PARALLELISM
        )));
    }
    let http = args.http.limits()?;
    let retention = gamesolver::retention::RetentionConfig {
        retain_hours: args.retain_hours,
        retain_mb: args.retain_mb,
        max_store_mb: args.max_store_mb,
    };
    retention.check().map_err(Failure::bad_input)?;
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let mut config = gamesolver::ServeConfig::from_env(args.listen, args.db, args.local_workers);
    config.sched.lease_ms = args.lease_ms;
    config.sched.max_attempts = args.max_attempts;
    config.sched.parallelism = args.parallelism;
    config.sched.max_job_level_parallelism = args.max_job_level_parallelism;
    config.sched.max_queued_jobs = args.max_queued_jobs;
    config.sched.max_position_bytes = args.max_position_bytes;
    config.sched.max_tasks_per_job = args.max_tasks_per_job;
    config.sched.max_proof_bytes = args.max_proof_bytes;
    config.max_artifacts_mb = args.max_artifacts_mb;
    config.retention = retention;
    config.insecure_workers = args.insecure_workers;
    config.insecure_open_api = args.insecure_open_api;
    config.http = http;
    config.check_exposure().map_err(Failure::bad_input)?;
    gamesolver::serve_blocking(config).map_err(|e| Failure::no_result(e.to_string()))
}

/// What defines a job, shared by `solve` and `batch`.
#[derive(Debug, Args)]
pub struct JobArgs {
    #[command(flatten)]
    pub game: GameChoice,
    /// Game parameter KEY=VALUE (repeatable), e.g. --game-param width=8.
    #[arg(long = "game-param", value_name = "KEY=VALUE")]
    pub game_params: Vec<String>,
    /// Algorithm name (minimax, alphabeta, pns, mcts, ...).
    #[arg(long)]
    pub algorithm: String,
    /// Algorithm option KEY=VALUE (repeatable), e.g. --option depth=6.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Threads the kernel may use.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The position of a job given on the command line: text or a file (`solve`, `simulate`).
#[derive(Debug, Args)]
pub struct PositionArgs {
    /// Position in the game's notation (default: the start).
    #[arg(long, conflicts_with = "position_file")]
    pub position: Option<String>,
    /// File holding the position text (for `tree`, `--position @FILE` too).
    #[arg(long, value_name = "FILE")]
    pub position_file: Option<PathBuf>,
}

impl PositionArgs {
    /// The position text for `game` (empty: the start).
    pub fn text(&self, game: &str) -> Result<String, Failure> {
        match (&self.position, &self.position_file) {
            (Some(p), _) => resolve_position(game, p),
            (None, Some(path)) => read_position_file(path),
            (None, None) => Ok(String::new()),
        }
    }
}

/// `gamesolver solve`.
#[derive(Debug, Args)]
pub struct SolveArgs {
    #[command(flatten)]
    pub job: JobArgs,
    #[command(flatten)]
    pub position: PositionArgs,
    /// Ask for a proof certificate (proof-number algorithms with a target) and write it to
    /// FILE; `verify-proof FILE` checks it. The result printed does not include it.
    #[arg(long, value_name = "FILE")]
    pub proof: Option<PathBuf>,
    /// Time limit in seconds (decimals allowed).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub time_limit: Option<f64>,
    /// Node limit.
    #[arg(long, value_name = "N")]
    pub node_limit: Option<u64>,
    /// Write a plot of the search's progress (bounds, best score, visits) to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Submit the job to this coordinator and follow it, instead of running it here.
    #[arg(long, value_name = "URL")]
    pub coordinator: Option<String>,
}

/// `gamesolver batch`.
#[derive(Debug, Args)]
pub struct BatchArgs {
    #[command(flatten)]
    pub job: JobArgs,
    /// One position per line, optionally followed by whitespace and the expected value.
    pub file: PathBuf,
}

/// A failure with its exit status and one-line message.
#[derive(Debug)]
pub struct Failure {
    pub status: i32,
    pub message: String,
}

impl Failure {
    pub fn bad_input(message: impl Into<String>) -> Self {
        Failure {
            status: 2,
            message: message.into(),
        }
    }
    pub fn no_result(message: impl Into<String>) -> Self {
        Failure {
            status: 1,
            message: message.into(),
        }
    }
}

impl From<SolveError> for Failure {
    fn from(e: SolveError) -> Self {
        match e {
            SolveError::BadInput(m) => Failure::bad_input(m),
            SolveError::Internal(m) => Failure::no_result(m),
        }
    }
}

/// Parses repeated `KEY=VALUE` arguments.
pub fn parse_settings(items: &[String], what: &str) -> Result<Settings, Failure> {
    let mut out = Settings::new();
    for item in items {
        let Some((k, v)) = item.split_once('=') else {
            return Err(Failure::bad_input(format!(
                "{what} '{item}' is not KEY=VALUE"
            )));
        };
        let k = k.trim();
        if k.is_empty() {
            return Err(Failure::bad_input(format!(
                "{what} '{item}' has an empty key"
            )));
        }
        if out.insert(k.to_string(), v.trim().to_string()).is_some() {
            return Err(Failure::bad_input(format!("{what} '{k}' is given twice")));
        }
    }
    Ok(out)
}

pub fn job_spec(args: &JobArgs, position: String, limits: Limits) -> Result<JobSpec, Failure> {
    if args.threads == 0 {
        return Err(Failure::bad_input("--threads must be at least 1"));
    }
    let game = match &args.game.game_module {
        None => args.game.game.clone(),
        Some(path) => load_module(path)?,
    };
    Ok(JobSpec {
        game,
        game_params: parse_settings(&args.game_params, "game parameter")?,
        position,
        algorithm: args.algorithm.clone(),
        options: parse_settings(&args.options, "option")?,
        limits,
    })
}

#[cfg(feature = "modules")]
/// Loads a game module from `path` into this process; its job name (`module:<sha256>`).
fn load_module(path: &std::path::Path) -> Result<String, Failure> {
    use gamesolver_shared::games::module;
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| Failure::bad_input(format!("--game-module {shown}: {e}")))?
        .len();
    if size > module::abi::MAX_MODULE_BYTES as u64 {
        return Err(Failure::bad_input(format!(
            "--game-module {shown}: {size} bytes, more than the {} accepted",
            module::abi::MAX_MODULE_BYTES
        )));
    }
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::bad_input(format!("--game-module {shown}: {e}")))?;
    let loaded = module::load(&bytes)
        .map_err(|e| Failure::bad_input(format!("--game-module {shown}: {e}")))?;
    Ok(format!("{}{}", registry::module::PREFIX, loaded.sha256))
}

/// Without the `modules` feature: says so, in one line.
#[cfg(not(feature = "modules"))]
fn load_module(path: &std::path::Path) -> Result<String, Failure> {
    Err(Failure::bad_input(format!(
        "--game-module {}: game modules are not in this build (build with --features modules, docs/GAME_MODULES.md)",
        path.display()
    )))
}

/// Runs a job in this process through the planner (the one way a job runs).
pub fn run_job(job: &JobSpec, threads: usize) -> Result<JobResult, Failure> {
    run_job_with(job, threads, None)
}

/// Like [`run_job`], with a progress sink and a live node counter (read by a progress bar).
pub fn run_job_with(
    job: &JobSpec,
    threads: usize,
    progress: Option<(ProgressSink, Arc<AtomicU64>)>,
) -> Result<JobResult, Failure> {
    let prepared = registry::prepare(job)?;
    // The job's limits are applied by the planner run itself (`plan::run_local`).
    let mut ctl = Control::unlimited().with_threads(threads);
    if let Some((sink, live)) = progress {
        ctl = ctl.with_progress(sink).with_live_nodes(live);
    }
    Ok(plan::run_local(prepared.as_ref(), &ctl)?)
}

/// The figures that matter in a progress report, for the progress bar: the bounds or the best
/// score, what is done of what (probes, runs, iterations, moves), playouts; numbers for people.
pub fn progress_message(p: &serde_json::Value) -> Option<String> {
    let n = |k: &str| p.get(k).and_then(|v| v.as_f64());
    let mut parts = Vec::new();
    if let (Some(lo), Some(hi)) = (n("lower"), n("upper")) {
        parts.push(if lo == hi {
            format!("value {lo}")
        } else {
            format!("bounds [{lo}, {hi}]")
        });
    }
    for key in ["best", "best_score"] {
        if let Some(v) = n(key) {
            parts.push(format!("best score {}", si(v)));
            break;
        }
    }
    for (done, of, label) in [
        ("probes_done", "", "probes"),
        ("runs_done", "runs", "runs"),
        ("iterations_done", "iterations", "iterations"),
        ("moves_done", "moves", "moves"),
        ("tasks_done", "", "tasks"),
    ] {
        if let Some(d) = n(done) {
            parts.push(match n(of) {
                Some(t) => format!("{} / {} {label}", si(d), si(t)),
                None => format!("{} {label}", si(d)),
            });
        }
    }
    for (key, label) in [("playouts", "playouts"), ("rollouts", "rollouts")] {
        if let Some(v) = n(key) {
            parts.push(format!("{} {label}", si(v)));
        }
    }
    if parts.is_empty() {
        if let Some(v) = n("nodes") {
            parts.push(format!("{} nodes", si(v)));
        }
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// A count or rate for people: 3 significant digits with an SI prefix (`12.3 M`), whole
/// numbers below 1,000 as they are.
pub fn si(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        return x.to_string();
    }
    if a < 1000.0 {
        return if x.fract() == 0.0 {
            format!("{x}")
        } else {
            format!("{x:.3}")
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
        };
    }
    let (v, p) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(s, _)| a >= *s)
        .map(|(s, p)| (x / s, p))
        .unwrap_or((x, ""));
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {p}")
}

/// Progress for `solve`: a spinner on a terminal (not with `--json`), and the history for
/// `--plot`.
struct Watch {
    history: Arc<Mutex<Vec<Snapshot>>>,
    bar: Option<indicatif::ProgressBar>,
    /// The plan's latest figure (bounds, best score, runs), shown with the live node count.
    figure: Arc<Mutex<String>>,
    /// Nodes searched so far, running tasks included (in-process jobs).
    live: Arc<AtomicU64>,
}

impl Watch {
    fn new(show_bar: bool) -> Self {
        let figure = Arc::new(Mutex::new("searching".to_string()));
        let live = Arc::new(AtomicU64::new(0));
        let bar = show_bar.then(|| {
            let b = indicatif::ProgressBar::new_spinner();
            b.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
                    .expect("static template"),
            );
            // The message first: the steady tick draws at once, so even a short search shows it.
            b.set_message("searching");
            b.enable_steady_tick(Duration::from_millis(120));
            // Four times a second: the plan's figure, the nodes and their rate, so that a long
            // probe is seen to move.
            let (bar, figure, live) = (b.clone(), figure.clone(), live.clone());
            std::thread::spawn(move || {
                let mut last = (Instant::now(), 0u64);
                let mut rate = 0.0;
                while !bar.is_finished() {
                    std::thread::sleep(Duration::from_millis(250));
                    let n = live.load(Ordering::Relaxed);
                    let dt = last.0.elapsed().as_secs_f64();
                    if n > last.1 && dt > 0.0 {
                        rate = (n - last.1) as f64 / dt;
                    }
                    last = (Instant::now(), n);
                    let f = figure.lock().map(|f| f.clone()).unwrap_or_default();
                    if n > 0 {
                        bar.set_message(format!(
                            "{f}  {} nodes  {} nodes/s",
                            si(n as f64),
                            si(rate)
                        ));
                    } else {
                        bar.set_message(f);
                    }
                }
            });
            b
        });
        Watch {
            history: Arc::new(Mutex::new(Vec::new())),
            bar,
            figure,
            live,
        }
    }

    fn sink(&self) -> ProgressSink {
        let history = self.history.clone();
        let bar = self.bar.clone();
        let figure = self.figure.clone();
        let start = Instant::now();
        Arc::new(move |p: serde_json::Value| {
            if let (Some(b), Some(m)) = (&bar, progress_message(&p)) {
                if let Ok(mut f) = figure.lock() {
                    f.clone_from(&m);
                }
                b.set_message(m);
            }
            let snap = Snapshot {
                t_ms: start.elapsed().as_millis() as u64,
                progress: p,
            };
            if let Ok(mut h) = history.lock() {
                h.push(snap);
            }
        })
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Largest position file the command line reads: the service's HTTP body limit.
pub const MAX_POSITION_FILE: u64 = 1 << 20;

/// Reads a position file: a regular file of at most [`MAX_POSITION_FILE`] bytes, in UTF-8. The
/// command line reads it, so the service never has to (a job names no path).
pub fn read_position_file(path: &std::path::Path) -> Result<String, Failure> {
    use std::io::Read;
    let bad = |why: String| {
        Failure::bad_input(format!(
            "cannot read position file '{}': {why}",
            path.display()
        ))
    };
    // A FIFO or a device could block or never end: only regular files.
    let meta = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
    if !meta.is_file() {
        return Err(bad("not a regular file".into()));
    }
    let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_POSITION_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| bad(e.to_string()))?;
    if bytes.len() as u64 > MAX_POSITION_FILE {
        return Err(bad(format!("larger than {MAX_POSITION_FILE} bytes")));
    }
    String::from_utf8(bytes).map_err(|_| bad("not UTF-8 text".into()))
}

/// The position text of a job: for a game whose catalogue entry says so
/// ([`registry::catalogue::Info::position_file`]), `@FILE` names a file holding the position,
/// read here (the service refuses `@`); other games' positions are used as given.
pub fn resolve_position(game: &str, position: &str) -> Result<String, Failure> {
    let from_file = registry::catalogue::info(game).is_some_and(|i| i.position_file);
    match position.trim().strip_prefix('@') {
        Some(path) if from_file => read_position_file(std::path::Path::new(path)),
        _ => Ok(position.to_string()),
    }
}

/// `gamesolver solve`.
pub fn solve(args: SolveArgs) -> Result<(), Failure> {
    solve_or_analyse(args, false)
}

/// `gamesolver analyse`: `solve` with `analyse=all`, printed one move per line.
pub fn analyse(args: SolveArgs) -> Result<(), Failure> {
    solve_or_analyse(args, true)
}

/// The job `solve` (or `analyse`) runs: the position, the limits, `proof` with `--proof`,
/// `analyse=all` for `analyse`.
fn solve_job(args: &SolveArgs, analyse: bool) -> Result<JobSpec, Failure> {
    let position = args.position.text(args.job.game.name())?;
    let time_ms = match args.time_limit {
        None => None,
        Some(t) if t.is_finite() && t > 0.0 && t < 1e9 => Some(((t * 1000.0).ceil() as u64).max(1)),
        Some(t) => {
            return Err(Failure::bad_input(format!(
                "--time-limit {t} must be a positive number of seconds"
            )))
        }
    };
    if args.node_limit == Some(0) {
        return Err(Failure::bad_input("--node-limit must be at least 1"));
    }
    let mut job = job_spec(
        &args.job,
        position,
        Limits {
            time_ms,
            node_limit: args.node_limit,
        },
    )?;
    if args.proof.is_some() {
        if job.options.contains_key("proof") {
            return Err(Failure::bad_input(
                "give --proof FILE or --option proof=true, not both",
            ));
        }
        job.options.insert("proof".into(), "true".into());
    }
    if analyse {
        match job.options.get("analyse").map(|v| v.trim()) {
            None | Some("all") => {
                job.options.insert("analyse".into(), "all".into());
            }
            Some(other) => {
                return Err(Failure::bad_input(format!(
                    "analyse scores every move: option 'analyse={other}' does not apply"
                )))
            }
        }
    }
    Ok(job)
}

fn solve_or_analyse(args: SolveArgs, analyse: bool) -> Result<(), Failure> {
    // Quiet by default (stdout is the answer); `RUST_LOG=gamesolver_shared=debug` shows each
    // task of the plan (a probe's target, nodes, time and bounds) on stderr.
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init();
    }
    let job = solve_job(&args, analyse)?;
    let watch = Watch::new(!args.job.json && std::io::stderr().is_terminal());
    let remote_error = |e| match e {
        gamesolver::client::RemoteError::BadInput(m) => Failure::bad_input(m),
        gamesolver::client::RemoteError::NoResult(m) => Failure::no_result(m),
    };
    let result = match &args.coordinator {
        None => run_job_with(
            &job,
            args.job.threads,
            Some((watch.sink(), watch.live.clone())),
        ),
        Some(url) => {
            let sink = watch.sink();
            gamesolver::client::solve_remote_job(url, &job, &|p| sink(p))
                .and_then(|(remote, id, mut r)| {
                    // The certificate is the job's artifact, served apart from its result.
                    if args.proof.is_some() && r.proof.is_none() {
                        r.proof = remote.proof(id)?;
                    }
                    Ok(r)
                })
                .map_err(remote_error)
        }
    };
    watch.finish();
    let mut result = result?;
    // The certificate goes to its file, never to stdout.
    let proof = result.proof.take();
    if let Some(path) = &args.proof {
        let cert = proof.ok_or_else(|| match &result.extra.error {
            // The job says why (a certificate over its memory or size limit).
            Some(why) => Failure::no_result(why.clone()),
            None => Failure::no_result("the job gave no proof certificate (it needs a proof-number algorithm and a target, and a decision)"),
        })?;
        let text = serde_json::to_string(&cert).expect("JSON values serialise");
        std::fs::write(path, text).map_err(|e| {
            Failure::no_result(format!("cannot write proof file '{}': {e}", path.display()))
        })?;
    }
    if let Some(path) = &args.plot {
        let history = watch.history.lock().map(|h| h.clone()).unwrap_or_default();
        let title = format!("{} {}", job.game, job.algorithm);
        std::fs::write(path, viz::progress_plot(&title, &history)).map_err(|e| {
            Failure::no_result(format!("cannot write plot '{}': {e}", path.display()))
        })?;
    }
    let mut out = std::io::stdout().lock();
    if args.job.json {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string(&result).expect("results serialise")
        );
    } else if analyse {
        let _ = write!(out, "{}", crate::analyse_cmd::render(&result, &job));
    } else {
        let _ = write!(out, "{}", crate::analyse_cmd::render_text(&result));
        // Games with a text board (Othello) draw the position solved.
        if let Ok(Some(board)) = viz::board::text(&job.game, &job.game_params, &job.position) {
            let _ = write!(out, "board\n{board}");
        }
    }
    Ok(())
}

/// Splits a batch line into position and optional expected value: the last whitespace-separated
/// token is the expected value when it reads as a JSON scalar and something precedes it. A
/// number may carry a leading `+` (`+38`, as Edax and the FFO files write scores); the value
/// returned is then the number without it.
/// A line that starts with whitespace and holds one token is the start position (empty text)
/// with an expected value.
pub fn split_batch_line(line: &str) -> (&str, Option<&str>) {
    let t = line.trim_end();
    if let Some(idx) = t.rfind(char::is_whitespace) {
        let (head, tail) = (t[..idx].trim(), t[idx..].trim());
        if let Some(number) = tail.strip_prefix('+') {
            let unsigned = number.starts_with(|c: char| c.is_ascii_digit());
            if unsigned
                && serde_json::from_str::<serde_json::Value>(number).is_ok_and(|v| v.is_number())
            {
                return (head, Some(number));
            }
        }
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(tail) {
            if v.is_number() || v.is_boolean() || v.is_string() {
                return (head, Some(tail));
            }
        }
    }
    (t.trim(), None)
}

/// An `.obf` line (Edax's and the FFO suites' format): `POSITION; MOVE:SCORE; MOVE:SCORE; ...`,
/// best move first. `None` unless the line has a `;` followed by at least one `MOVE:SCORE` and
/// nothing else, so other games' positions that hold a `;` (Awari) keep their meaning.
pub fn split_obf_line(line: &str) -> Option<(&str, Vec<(String, i64)>)> {
    let (head, tail) = line.split_once(';')?;
    let mut scores = Vec::new();
    for part in tail.split(';') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (mv, score) = part.split_once(':')?;
        let (mv, score) = (mv.trim(), score.trim());
        if mv.is_empty() || mv.contains(char::is_whitespace) {
            return None;
        }
        let score = score
            .strip_prefix('+')
            .unwrap_or(score)
            .parse::<i64>()
            .ok()?;
        scores.push((mv.to_ascii_lowercase(), score));
    }
    (!scores.is_empty()).then_some((head.trim(), scores))
}

/// The `.obf` move scores that a result with every move's score (`analyse=all`) contradicts,
/// as `move: got X, expected Y` (a move absent from the result counts as wrong).
pub fn obf_mismatches(r: &JobResult, scores: &[(String, i64)]) -> Vec<String> {
    let Some(moves) = r.extra.moves.as_deref() else {
        return Vec::new();
    };
    let mut bad = Vec::new();
    for (mv, want) in scores {
        let got = moves
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(mv))
            .and_then(|(_, s)| s.value.as_ref())
            .and_then(|v| v.as_f64());
        if got != Some(*want as f64) {
            let got = got.map_or("none".to_string(), |g| g.to_string());
            bad.push(format!("{mv}: got {got}, expected {want}"));
        }
    }
    bad
}

/// Whether a result matches the expected text: numbers compare numerically, booleans against
/// `proved` when the value is unknown (threshold decisions).
pub fn matches_expected(r: &JobResult, expected: &str) -> bool {
    let Ok(want) = serde_json::from_str::<serde_json::Value>(expected) else {
        return false;
    };
    let got = if r.value.is_null() {
        r.extra.proved.flatten().into()
    } else {
        r.value.clone()
    };
    match (got.as_f64(), want.as_f64()) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        _ => got == want,
    }
}

/// One line's row of `gamesolver batch`'s output.
struct BatchRow<'a> {
    line_no: usize,
    position: &'a str,
    expected: Option<&'a str>,
    outcome: &'a Result<JobResult, Failure>,
    /// Whether the result is the expected one (none expected: `None`).
    verdict: Option<bool>,
    /// The listed moves whose scores differ from the expected ones.
    move_errors: &'a [String],
}

impl BatchRow<'_> {
    /// Writes the row to `out`: a JSON object with `json`, else a line of text.
    fn write(&self, out: &mut impl Write, json: bool) {
        let BatchRow {
            line_no,
            position,
            expected,
            outcome,
            verdict,
            move_errors,
        } = *self;
        if json {
            let mut obj = match &outcome {
                Ok(r) => serde_json::to_value(r).expect("results serialise"),
                Err(e) => serde_json::json!({"error": e.message}),
            };
            obj["line"] = line_no.into();
            obj["position"] = position.into();
            if let Some(e) = expected {
                obj["expected"] = serde_json::from_str(e).unwrap_or(serde_json::Value::Null);
                obj["ok"] = verdict.unwrap_or(false).into();
            }
            if !move_errors.is_empty() {
                obj["move_errors"] = move_errors.to_vec().into();
            }
            let _ = writeln!(out, "{obj}");
        } else {
            let mark = match verdict {
                Some(true) => "ok  ",
                Some(false) => "FAIL",
                None => "-   ",
            };
            let _ = match &outcome {
                Ok(r) => writeln!(
                    out,
                    "{mark} {position} value {} expected {} best {} nodes {} {} ms{}",
                    r.value,
                    expected.unwrap_or("-"),
                    r.best_move.as_deref().unwrap_or("-"),
                    r.nodes,
                    r.elapsed_ms,
                    if move_errors.is_empty() {
                        String::new()
                    } else {
                        format!(" moves wrong: {}", move_errors.join("; "))
                    }
                ),
                Err(e) => writeln!(
                    out,
                    "{mark} {position} error (line {line_no}): {}",
                    e.message
                ),
            };
        }
    }
}

/// `gamesolver batch`.
pub fn batch(args: BatchArgs) -> Result<(), Failure> {
    let text = std::fs::read_to_string(&args.file).map_err(|e| {
        Failure::bad_input(format!(
            "cannot read batch file '{}': {e}",
            args.file.display()
        ))
    })?;
    // Check the game, algorithm and options once, on the start position, so that a wrong
    // name fails at once with status 2 instead of on every line. (Some games, like `tree`,
    // have no start position without a tree; their lines are checked one by one.)
    let probe = job_spec(&args.job, String::new(), Limits::default())?;
    if let Err(SolveError::BadInput(m)) = registry::prepare(&probe) {
        if !m.starts_with("position") {
            return Err(Failure::bad_input(m));
        }
    }
    let (mut passed, mut failed, mut broken) = (0u64, 0u64, 0u64);
    let mut out = std::io::stdout().lock();
    for (lineno, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        // An `.obf` line: the first move's score is the expected value; with `analyse=all`
        // every listed move's score is checked too.
        let obf = split_obf_line(line);
        let expected_text;
        let (position, expected) = match &obf {
            Some((position, scores)) => {
                expected_text = scores[0].1.to_string();
                (*position, Some(expected_text.as_str()))
            }
            None => split_batch_line(line),
        };
        let outcome = resolve_position(args.job.game.name(), position).and_then(|text| {
            let job = job_spec(&args.job, text, Limits::default())?;
            run_job(&job, args.job.threads).map(|mut r| {
                // Certificates are for `solve --proof FILE`; a batch line prints none.
                r.proof = None;
                r
            })
        });
        let move_errors = match (&outcome, &obf) {
            (Ok(r), Some((_, scores))) => obf_mismatches(r, scores),
            _ => Vec::new(),
        };
        let verdict = match (&outcome, expected) {
            (Ok(r), Some(e)) => Some(matches_expected(r, e) && move_errors.is_empty()),
            (Err(_), Some(_)) => Some(false),
            _ => None,
        };
        match verdict {
            Some(true) => passed += 1,
            Some(false) => failed += 1,
            None => {}
        }
        if outcome.is_err() {
            broken += 1;
        }
        let row = BatchRow {
            line_no: lineno + 1,
            position,
            expected,
            outcome: &outcome,
            verdict,
            move_errors: &move_errors,
        };
        row.write(&mut out, args.job.json);
    }
    let _ = writeln!(out, "{passed} passed, {failed} failed");
    let _ = out.flush();
    if failed > 0 || broken > 0 {
        return Err(Failure {
            status: 1,
            message: String::new(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In every block of `solve --help`, the bounds and the defaults start at one column each,
    /// however long a name or a range is.
    #[test]
    fn the_options_help_is_aligned() {
        let help = options_help();
        let blocks: Vec<Vec<&str>> = help
            .split("\n\n")
            .skip(1)
            .map(|b| b.lines().skip(1).collect())
            .collect();
        assert!(blocks.len() >= 5, "{help}");
        for lines in blocks {
            let column = |l: &str, what: &str| l.find(what).unwrap_or_else(|| panic!("{l}"));
            let defaults: Vec<usize> = lines.iter().map(|l| column(l, "(default: ")).collect();
            assert!(defaults.iter().all(|&c| c == defaults[0]), "{lines:#?}");
            // The bounds start where the spaces after the name end.
            let ranges: Vec<usize> = lines
                .iter()
                .map(|l| {
                    let gap = 2 + l[2..].find(' ').unwrap_or(0);
                    l.len() - l[gap..].trim_start().len()
                })
                .collect();
            assert!(ranges.iter().all(|&c| c == ranges[0]), "{lines:#?}");
        }
    }

    #[test]
    fn obf_lines_give_the_board_and_the_move_scores() {
        let line = "O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X; A2:+38; C7:+36; D8:-4;";
        let (position, scores) = split_obf_line(line).unwrap();
        assert_eq!(
            position,
            "O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X"
        );
        assert_eq!(
            scores,
            [
                ("a2".to_string(), 38),
                ("c7".to_string(), 36),
                ("d8".to_string(), -4)
            ]
        );
        // Not .obf: no `;`, nothing after it, or an Awari position with moves after its `;`.
        assert_eq!(split_obf_line("f5d6 -2"), None);
        assert_eq!(split_obf_line("BOARD X;"), None);
        assert_eq!(split_obf_line("4,4,4,4,4,4,4,4,4,4,4,4;cf 3"), None);
        assert_eq!(split_obf_line("BOARD X; A2:+3x"), None);
    }

    #[test]
    fn batch_lines_split_on_a_trailing_scalar() {
        assert_eq!(split_batch_line("4455 -3"), ("4455", Some("-3")));
        assert_eq!(split_batch_line("4455"), ("4455", None));
        assert_eq!(split_batch_line("12 true "), ("12", Some("true")));
        assert_eq!(split_batch_line(" 0"), ("", Some("0")));
        // Edax's and FFO's signed scores: `+38` is the number 38, not part of the position.
        assert_eq!(split_batch_line("4455 +38"), ("4455", Some("38")));
        assert_eq!(split_batch_line("4455 +0.5"), ("4455", Some("0.5")));
        assert_eq!(split_batch_line(" +2"), ("", Some("2")));
        // A `+` that does not start a number stays part of the position.
        assert_eq!(split_batch_line("a1 +x"), ("a1 +x", None));
        assert_eq!(split_batch_line("a1 +-3"), ("a1 +-3", None));
        assert_eq!(
            split_batch_line(r#"{"max": [1, 2]}"#),
            (r#"{"max": [1, 2]}"#, None)
        );
        assert_eq!(
            split_batch_line(r#"{"max": [1, 2]} 2"#),
            (r#"{"max": [1, 2]}"#, Some("2"))
        );
    }

    #[test]
    fn settings_are_checked() {
        assert!(parse_settings(&["a=1".into(), "b = 2".into()], "option").is_ok());
        assert_eq!(
            parse_settings(&["a".into()], "option").unwrap_err().status,
            2
        );
        assert!(parse_settings(&["a=1".into(), "a=2".into()], "option")
            .unwrap_err()
            .message
            .contains("twice"));
    }
}
