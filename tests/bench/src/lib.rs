//! `gamesolver-bench quick|full`: the scaling report and the node-count signatures. A harness
//! apart from the production binaries: it drives `gamesolver` and `gamesolver-worker` as
//! processes (found beside this executable, or where `--gamesolver` and `--worker` say), and runs
//! the signature jobs and perft through the library in its own process.
//!
//! One run, in this order:
//! 1. **Signatures**: fixed one-thread jobs per kernel (node count and a fingerprint of the result)
//!    and perft counts per game, compared with [`SIGNATURES`] and [`PERFT`]. Any change in search
//!    behaviour changes a signature; a mismatch exits with status 1 naming the kernel, after the
//!    report is written.
//! 2. **Service**: for each worker count of `--workers` (default 1, 2, 4), a real coordinator and
//!    real workers; every job type is timed from first submission to last `done`, must reach the
//!    same value with any number of workers, and dispatch overhead is measured.
//! 3. **Peers** (`--peers DIR`): programs built outside the repository run on the same inputs and
//!    compared by CPU time; a missing peer is skipped with a note.
//!
//! Output: `report.md` and `report.json` in `--out` (default `bench-report`) and the Markdown on
//! stdout, with command, machine, date and `uptime` load. Exit status: 0 all good; 1 a signature
//! differs or a job failed or disagreed; 2 bad arguments or a missing binary. Times depend on
//! the load; node counts and signatures do not. Details: docs/services.md, "Benchmark harness".

pub mod boards;

use clap::Args;
use gamesolver_shared::model::{Game, Turn};
use gamesolver_shared::plan;
use gamesolver_shared::registry;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::{JobResult, JobSpec};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The flags of `gamesolver-bench quick` and `gamesolver-bench full`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Directory for `report.md` and `report.json` (created when missing).
    #[arg(long, default_value = "bench-report")]
    pub out: PathBuf,
    /// Worker process counts to measure, comma-separated; the first is the speedup baseline.
    #[arg(long, default_value = "1,2,4", value_delimiter = ',')]
    pub workers: Vec<usize>,
    /// Directory holding peer programs (`pons/`, `driver/`, `fhourstones/`, `morpion-lpp/`).
    #[arg(long)]
    pub peers: Option<PathBuf>,
    /// Skip the service part (signatures and kernel figures only).
    #[arg(long)]
    pub no_service: bool,
    /// The service's binaries.
    #[command(flatten)]
    pub binaries: Binaries,
}

/// The coordinator and worker binaries a bench starts (flags shared by its subcommands).
#[derive(Debug, Args)]
pub struct Binaries {
    /// The coordinator binary (default: `gamesolver` beside this executable).
    #[arg(long, value_name = "PATH")]
    pub gamesolver: Option<PathBuf>,
    /// The worker binary (default: `gamesolver-worker` beside this executable).
    #[arg(long, value_name = "PATH")]
    pub worker: Option<PathBuf>,
}

impl Binaries {
    /// The paths of the coordinator and the worker, checked to exist.
    pub fn resolve(&self) -> Result<(PathBuf, PathBuf), BenchError> {
        let exe = match &self.gamesolver {
            Some(p) => p.clone(),
            None => beside_me("gamesolver")?,
        };
        let worker = match &self.worker {
            Some(p) => p.clone(),
            None => beside_me("gamesolver-worker")?,
        };
        for (path, package, flag) in [
            (&exe, "gamesolver", "--gamesolver"),
            (&worker, "gamesolver-worker", "--worker"),
        ] {
            if !path.is_file() {
                return Err(bad(format!(
                    "binary '{}' not found (build it: cargo build --release -p {package}; or pass {flag} PATH)",
                    path.display()
                )));
            }
        }
        Ok((exe, worker))
    }
}

/// The named suites (the subcommands of `gamesolver-bench`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// Small jobs, for CI.
    Quick,
    /// Heavier jobs, for the published report.
    Full,
}

/// Why the bench did not succeed: exit status and one line.
#[derive(Debug)]
pub struct BenchError {
    /// 1: a check failed; 2: bad arguments or environment.
    pub status: i32,
    /// One line naming the problem.
    pub message: String,
}

fn bad(m: impl Into<String>) -> BenchError {
    BenchError {
        status: 2,
        message: m.into(),
    }
}

fn failed(m: impl Into<String>) -> BenchError {
    BenchError {
        status: 1,
        message: m.into(),
    }
}

/// A fixed job whose one-thread run is deterministic, with its stored signature.
pub struct Signature {
    /// Kernel name as reported.
    pub kernel: &'static str,
    /// Game.
    pub game: &'static str,
    /// Game parameters.
    pub params: &'static [(&'static str, &'static str)],
    /// Position text.
    pub position: &'static str,
    /// Algorithm.
    pub algorithm: &'static str,
    /// Options.
    pub options: &'static [(&'static str, &'static str)],
    /// Expected `nodes` of the result.
    pub nodes: u64,
    /// Expected [`fingerprint`] of the result.
    pub fingerprint: u64,
}

/// The stored signatures. Positions are from Pons' published Connect Four test sets; the
/// figures were produced by this command (a change in a kernel's search shows up here, and the
/// new figures must be reviewed and copied in the same commit).
pub const SIGNATURES: &[Signature] = &[
    Signature {
        kernel: "alphabeta (Connect Four, probes)",
        game: "connect4",
        params: &[],
        position: "5455174361263362",
        algorithm: "alphabeta",
        options: &[],
        nodes: 36027,
        fingerprint: 0xc87d_56e5_ef7f_341e,
    },
    Signature {
        kernel: "pns (Connect Four, exact value)",
        game: "connect4",
        params: &[],
        position: "4435612735531457155143",
        algorithm: "pns",
        options: &[],
        nodes: 3100,
        fingerprint: 0xce1e_1ee1_69fc_f2a6,
    },
    Signature {
        kernel: "dfpn (Connect Four, target 1)",
        game: "connect4",
        params: &[],
        position: "715371563635542612576371",
        algorithm: "dfpn",
        options: &[("target", "1")],
        nodes: 14015,
        fingerprint: 0xe84f_328e_4143_5f72,
    },
    Signature {
        kernel: "mcts (Connect Four, 2 trees)",
        game: "connect4",
        params: &[],
        position: "",
        algorithm: "mcts",
        options: &[("playouts", "20000"), ("trees", "2"), ("seed", "7")],
        nodes: 20000,
        fingerprint: 0xd0b7_3078_3201_48c2,
    },
    Signature {
        kernel: "nrpa (Morpion 5D, level 1)",
        game: "morpion",
        params: &[("variant", "5D")],
        position: "",
        algorithm: "nrpa",
        options: &[("level", "1"), ("iterations", "100"), ("seed", "3")],
        nodes: 100,
        fingerprint: 0x8f6d_250b_03bf_22ba,
    },
];

/// Perft counts (leaves at a depth, terminal positions before it not counted) with their
/// published values: Connect Four 7x6 (7^6 at depth 6; 7^7 - 7 at depth 7, the first player's
/// seven vertical wins end the game at ply 7), tic-tac-toe (255,168 games of 9 plies or fewer:
/// 127,872 of them reach ply 9), Othello 8x8 (a pass counts as a move).
pub const PERFT: &[(&str, u32, u64)] = &[
    ("connect4", 6, 117_649),
    ("connect4", 7, 823_536),
    ("tictactoe", 9, 127_872),
    ("othello", 6, 8_200),
    ("othello", 7, 55_092),
];

/// FNV-1a of the result's value, best move and search-shape keys (visits, votes, sequence, pv,
/// bounds): the part of a result that a change in search behaviour changes.
pub fn fingerprint(r: &JobResult) -> u64 {
    let all = r.extra.to_map();
    let mut shape = serde_json::Map::new();
    for key in ["visits", "votes", "sequence", "pv", "bounds", "proved"] {
        if let Some(v) = all.get(key) {
            shape.insert(key.into(), v.clone());
        }
    }
    let text = json!([r.value, r.best_move, shape]).to_string();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn spec(
    game: &str,
    params: &[(&str, &str)],
    position: &str,
    algorithm: &str,
    options: &[(&str, &str)],
) -> JobSpec {
    JobSpec::new(game, position, algorithm)
        .with_params(params)
        .with_options(options)
}

/// Runs `job` in this process on `threads` threads; returns the result and the wall time.
fn run_here(job: &JobSpec, threads: usize) -> Result<(JobResult, Duration), String> {
    let prepared = registry::prepare(job).map_err(|e| e.to_string())?;
    let ctl = Control::unlimited().with_threads(threads);
    let t0 = Instant::now();
    let r = plan::run_local(prepared.as_ref(), &ctl).map_err(|e| e.to_string())?;
    Ok((r, t0.elapsed()))
}

/// Leaves of the game tree `depth` plies below `state` (terminal states above it count 0).
pub fn perft<G: Game>(game: &G, state: &G::State, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if matches!(game.turn(state), Turn::Terminal) {
        return 0;
    }
    let mut moves = Vec::new();
    game.legal_moves(state, &mut moves);
    let mut total = 0;
    for m in moves {
        let mut child = state.clone();
        game.apply(&mut child, m);
        total += perft(game, &child, depth - 1);
    }
    total
}

/// Perft of a named game from its start, with its default parameters: the two-player
/// zero-sum games of the catalogue (those of [`PERFT`] among them).
pub fn perft_named(game: &str, depth: u32) -> Result<u64, String> {
    use gamesolver_shared::games::Exact;
    use gamesolver_shared::model::single::SinglePlayer;
    use gamesolver_shared::model::{ChanceZeroSum, OutOfTurn, Picture, Stochastic, VectorEval};
    use gamesolver_shared::registry::{catalogue, Opts};
    /// Counts zero-sum games; refuses the others.
    struct Perft<'a>(&'a str, u32);
    impl Perft<'_> {
        fn none(&self) -> Result<u64, String> {
            Err(format!("no perft for '{}'", self.0))
        }
    }
    impl catalogue::Visitor for Perft<'_> {
        type Output = Result<u64, String>;
        fn zero_sum<G: Exact + Picture>(self, g: G) -> Self::Output {
            Ok(perft(&g, &g.initial_state(), self.1))
        }
        fn chance<G: ChanceZeroSum + Picture>(self, _: G) -> Self::Output {
            self.none()
        }
        fn single<G: SinglePlayer + Picture>(self, _: G) -> Self::Output {
            self.none()
        }
        fn multi<G: Stochastic + VectorEval + OutOfTurn + Picture>(self, _: G) -> Self::Output {
            self.none()
        }
        fn tree(self) -> Self::Output {
            self.none()
        }
    }
    let params = gamesolver_shared::wire::Settings::new();
    let params = Opts::new(&params, "game parameter");
    match catalogue::visit(game, &params, Perft(game, depth)) {
        Some(counted) => counted.map_err(|e| e.to_string())?,
        None => Err(format!("no perft for '{game}'")),
    }
}

/// One service job of a suite, with what its result must be.
struct ServiceJob {
    /// Job type as reported.
    kind: &'static str,
    /// The jobs (run one after another; the time is their sum).
    jobs: Vec<JobSpec>,
    /// Expected value per job, when known (published scores).
    expected: Vec<Option<Value>>,
}

/// Connect Four positions with their published scores.
type Scored = &'static [(&'static str, i64)];

fn c4(position: &str, algorithm: &str) -> JobSpec {
    spec("connect4", &[], position, algorithm, &[])
}

/// The service jobs of a suite. Connect Four positions and scores are from Pons' test sets
/// (`quick`: `Test_L2_R2`, `Test_L2_R1`; `full`: the first lines of `Test_L1_R3`, the hardest
/// set, and of `Test_L2_R2`, in file order, not chosen by their times).
///
/// The `full` jobs are sized for 30-90 s per job type with one worker on a quiet 2-core machine,
/// and each splits into many tasks: 6 exact Connect Four jobs submitted together (each a series
/// of null-window probes, several in flight when workers are free), 14 PNS jobs likewise, MCTS
/// with 16 trees as 16 tasks, NRPA with 8 independent runs as 8 tasks, and NRPA level 4 whose
/// top-level iterations run in rounds of 4 tasks across workers (`across=shared`).
fn service_jobs(suite: Suite) -> Vec<ServiceJob> {
    let (ab, pns): (Scored, Scored) = match suite {
        Suite::Quick => (
            &[("274552224131661", 0)],
            &[("715371563635542612576371", 3)],
        ),
        Suite::Full => (
            &[
                ("13712", 3),
                ("3246313", -2),
                ("573154743", 2),
                ("751321", 2),
                ("251", 4),
                ("13234664", -3),
            ],
            &[
                ("274552224131661", 0),
                ("5455174361263362", -1),
                ("2531276566711153", 2),
                ("37313333717124171162542", 3),
                ("6614446666373154", -4),
                ("24617524315172127", 2),
                ("6242432155656447531617622", 0),
                ("4642332434166445", -2),
                ("165713352355467777", 3),
                ("7441746225252552", 2),
                ("7225753363613131156611", -3),
                ("246767232112661771721576", 1),
                ("1767235667232175621774455", 2),
                ("6323454652623215", -2),
            ],
        ),
    };
    let (playouts, trees, level, iterations, runs) = match suite {
        Suite::Quick => ("200000", "4", "2", "40", "4"),
        Suite::Full => ("24000000", "16", "3", "60", "8"),
    };
    let mut v = vec![
        ServiceJob {
            kind: "exact Connect Four (alphabeta, probes)",
            jobs: ab.iter().map(|(p, _)| c4(p, "alphabeta")).collect(),
            expected: ab.iter().map(|(_, s)| Some(json!(s))).collect(),
        },
        ServiceJob {
            kind: "multi-valued PNS (exact value by threshold probes)",
            jobs: pns.iter().map(|(p, _)| c4(p, "pns")).collect(),
            expected: pns.iter().map(|(_, s)| Some(json!(s))).collect(),
        },
        ServiceJob {
            kind: "root-parallel MCTS (trees as tasks)",
            jobs: vec![spec(
                "connect4",
                &[],
                "",
                "mcts",
                &[
                    ("playouts", playouts),
                    ("trees", trees),
                    ("tasks", trees),
                    ("seed", "1"),
                ],
            )],
            expected: vec![None],
        },
        ServiceJob {
            kind: "parallel NRPA (runs as tasks)",
            jobs: vec![spec(
                "morpion",
                &[("variant", "5D")],
                "",
                "nrpa",
                &[
                    ("level", level),
                    ("iterations", iterations),
                    ("runs", runs),
                    ("seed", "1"),
                ],
            )],
            expected: vec![None],
        },
    ];
    if suite == Suite::Full {
        v.push(ServiceJob {
            kind: "parallel NRPA (top-level iterations across workers, across=shared)",
            jobs: vec![spec(
                "morpion",
                &[("variant", "5D")],
                "",
                "nrpa",
                &[
                    ("level", "4"),
                    ("iterations", "32"),
                    ("runs", "4"),
                    ("across", "shared"),
                    ("seed", "1"),
                ],
            )],
            expected: vec![None],
        });
    }
    v
}

/// Kills the process when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// A coordinator with its worker processes.
struct Service {
    url: String,
    agent: ureq::Agent,
    // Workers first: they are dropped (killed) before the coordinator.
    workers: Vec<Proc>,
    coordinator: Proc,
}

fn http(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    body: Option<&Value>,
) -> Result<Value, String> {
    let req = agent.request(method, url);
    let r = match body {
        Some(b) => req.send_json(b),
        None => req.call(),
    };
    match r {
        Ok(resp) => resp.into_json().map_err(|e| format!("{url}: {e}")),
        Err(ureq::Error::Status(code, resp)) => Err(format!(
            "{method} {url}: {code} {}",
            resp.into_string().unwrap_or_default()
        )),
        Err(e) => Err(format!("{method} {url}: {e}")),
    }
}

impl Service {
    /// Starts `gamesolver serve` on a free port with a database in `dir`, and `workers`
    /// worker processes with one slot each; waits until all are registered.
    fn start(exe: &Path, worker: &Path, dir: &Path, workers: usize) -> Result<Service, String> {
        let one_slot = ["--threads".to_string(), "1".to_string()];
        Service::start_with(exe, worker, dir, workers, &one_slot)
    }

    /// As [`Service::start`], each worker started with `worker_args` (after `--coordinator`).
    fn start_with(
        exe: &Path,
        worker: &Path,
        dir: &Path,
        workers: usize,
        worker_args: &[String],
    ) -> Result<Service, String> {
        let db = dir.join(format!("bench-{workers}.sqlite"));
        // Worker endpoints need a token: one per run, shared with our own workers only.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let token = format!("bench-{}-{nanos:x}", std::process::id());
        let mut child = Command::new(exe)
            .args(["serve", "--listen", "127.0.0.1:0", "--db"])
            .arg(&db)
            .env("RUST_LOG", "error")
            .env("GAMESOLVER_WORKER_TOKEN", &token)
            .env_remove("GAMESOLVER_API_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the coordinator: {e}"))?;
        let out = child.stdout.take().expect("piped stdout");
        let coordinator = Proc(child);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .map_err(|_| "the coordinator printed no 'listening on' line in 60 s".to_string())?;
        let url = line
            .strip_prefix("listening on ")
            .ok_or_else(|| format!("unexpected first line of the coordinator: {line}"))?
            .trim()
            .to_string();
        let mut procs = Vec::new();
        for _ in 0..workers {
            let c = Command::new(worker)
                .args(["--coordinator", &url])
                .args(worker_args)
                .env("RUST_LOG", "error")
                .env("GAMESOLVER_WORKER_TOKEN", &token)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| format!("cannot start {}: {e}", worker.display()))?;
            procs.push(Proc(c));
        }
        let agent = ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(30))
            .build();
        let s = Service {
            url,
            agent,
            workers: procs,
            coordinator,
        };
        let end = Instant::now() + Duration::from_secs(60);
        loop {
            let live = http(&s.agent, "GET", &format!("{}/v1/status", s.url), None)
                .ok()
                .and_then(|v| v["workers"].as_array().map(|w| w.len()))
                .unwrap_or(0);
            if live >= workers {
                return Ok(s);
            }
            if Instant::now() > end {
                return Err(format!("{live} of {workers} workers registered after 60 s"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Submits `job`; returns its id.
    fn submit(&self, job: &JobSpec) -> Result<u64, String> {
        let body = serde_json::to_value(job).map_err(|e| e.to_string())?;
        let sub = http(
            &self.agent,
            "POST",
            &format!("{}/v1/jobs", self.url),
            Some(&body),
        )?;
        sub["id"]
            .as_u64()
            .ok_or_else(|| format!("no job id in {sub}"))
    }

    /// Waits until every job of `ids` is done; returns their final statuses and the time from
    /// `t0` to each one's end. It polls the light `GET /v1/status` (job counts by state: every
    /// 5 ms at first, backing off to 50 ms) and reads the jobs' own statuses (task lists
    /// included) only when the number of ended jobs changed, so that waiting for long jobs
    /// costs the coordinator little and its CPU time per task measures dispatch, not polling.
    fn wait(&self, ids: &[u64], t0: Instant) -> Result<Vec<(Value, Duration)>, String> {
        let mut out: Vec<Option<(Value, Duration)>> = vec![None; ids.len()];
        let mut pause = Duration::from_millis(5);
        let mut ended_before = None;
        let mut last_read = Instant::now();
        loop {
            let status = http(&self.agent, "GET", &format!("{}/v1/status", self.url), None)?;
            let ended: u64 = ["done", "failed", "cancelled"]
                .iter()
                .map(|k| status["jobs"][k].as_u64().unwrap_or(0))
                .sum();
            // Every 2 s regardless, should the status ever lack the counts.
            if ended_before != Some(ended) || last_read.elapsed() > Duration::from_secs(2) {
                ended_before = Some(ended);
                last_read = Instant::now();
                for (i, id) in ids.iter().enumerate() {
                    if out[i].is_some() {
                        continue;
                    }
                    let st = http(
                        &self.agent,
                        "GET",
                        &format!("{}/v1/jobs/{id}", self.url),
                        None,
                    )?;
                    match st["state"].as_str() {
                        Some("done") => out[i] = Some((st, t0.elapsed())),
                        Some("failed") | Some("cancelled") => {
                            return Err(format!(
                                "job {id} ({}) {}: {}",
                                st["job"]["algorithm"], st["state"], st["error"]
                            ))
                        }
                        _ => {}
                    }
                }
            }
            if out.iter().all(Option::is_some) {
                return Ok(out.into_iter().flatten().collect());
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// Submits `job` and waits for its end; returns the final status and the time from
    /// submission to the end.
    fn run(&self, job: &JobSpec) -> Result<(Value, Duration), String> {
        let t0 = Instant::now();
        let id = self.submit(job)?;
        let mut r = self.wait(&[id], t0)?;
        Ok(r.remove(0))
    }

    /// CPU seconds used so far by the coordinator and by all worker processes together.
    fn cpu(&self) -> (f64, f64) {
        let c = proc_cpu(self.coordinator.0.id()).unwrap_or(0.0);
        let w = self
            .workers
            .iter()
            .map(|p| proc_cpu(p.0.id()).unwrap_or(0.0))
            .sum();
        (c, w)
    }
}

/// Fields after the command name of `/proc/<pid>/stat` (index 0 is the state, field 3).
fn stat_fields(pid: &str) -> Option<Vec<f64>> {
    let t = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &t[t.rfind(')')? + 1..];
    Some(
        rest.split_whitespace()
            .map(|x| x.parse::<f64>().unwrap_or(0.0))
            .collect(),
    )
}

/// Clock ticks per second of `/proc/<pid>/stat` (USER_HZ, 100 on Linux for every
/// architecture this runs on; the 10 ms resolution is fine for jobs of seconds).
const TICKS: f64 = 100.0;

/// User + system CPU seconds of a live process (`/proc/<pid>/stat` fields 14 and 15).
fn proc_cpu(pid: u32) -> Option<f64> {
    let f = stat_fields(&pid.to_string())?;
    Some((f.get(11)? + f.get(12)?) / TICKS)
}

/// CPU seconds of this process (all its threads, user + system) and of its children that
/// have been waited for (fields 14-17 of `/proc/self/stat`): (self, children).
fn self_cpu() -> (f64, f64) {
    match stat_fields("self") {
        Some(f) if f.len() > 14 => ((f[11] + f[12]) / TICKS, (f[13] + f[14]) / TICKS),
        _ => (f64::NAN, f64::NAN),
    }
}

/// The load averages of `/proc/loadavg` (1, 5, 15 minutes), when readable.
fn load() -> Option<[f64; 3]> {
    let t = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = t.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

fn machine() -> Value {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_default();
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemTotal"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|k| k.parse::<f64>().ok())
        })
        .map(|kib| (kib / 1048576.0 * 10.0).round() / 10.0);
    json!({
        "cpus": cpus,
        "cpu_model": model,
        "memory_gib": mem_gib,
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "version": env!("CARGO_PKG_VERSION"),
    })
}

/// The current time in UTC as `YYYY-MM-DD HH:MM`, for the report's date (civil date from days
/// since 1970-01-01, proleptic Gregorian calendar).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    utc_text(secs)
}

/// `secs` after the Unix epoch as `YYYY-MM-DD HH:MM` (UTC).
pub fn utc_text(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    // Days to a civil date, with 400-year eras starting on 0000-03-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{d:02} {h:02}:{m:02}")
}

fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    xs[xs.len() / 2]
}

/// Part 1: signatures and perft.
fn signatures(problems: &mut Vec<String>) -> (Vec<Value>, Vec<Value>) {
    let mut sigs = Vec::new();
    for s in SIGNATURES {
        let job = spec(s.game, s.params, s.position, s.algorithm, s.options);
        match run_here(&job, 1) {
            Ok((r, t)) => {
                let fp = fingerprint(&r);
                let ok = r.nodes == s.nodes && fp == s.fingerprint;
                if !ok {
                    problems.push(format!(
                        "signature of {}: nodes {} fingerprint {fp:#018x} (stored: nodes {} fingerprint {:#018x})",
                        s.kernel, r.nodes, s.nodes, s.fingerprint
                    ));
                }
                let secs = t.as_secs_f64().max(1e-9);
                sigs.push(json!({
                    "kernel": s.kernel,
                    "job": job,
                    "nodes": r.nodes,
                    "fingerprint": format!("{fp:#018x}"),
                    "expected_nodes": s.nodes,
                    "expected_fingerprint": format!("{:#018x}", s.fingerprint),
                    "ok": ok,
                    "value": r.value,
                    "best_move": r.best_move,
                    "wall_ms": t.as_secs_f64() * 1e3,
                    "nodes_per_s": r.nodes as f64 / secs,
                }));
            }
            Err(e) => {
                problems.push(format!("signature of {}: {e}", s.kernel));
                sigs.push(json!({"kernel": s.kernel, "ok": false, "error": e}));
            }
        }
    }
    let mut perfts = Vec::new();
    for &(game, depth, want) in PERFT {
        let t0 = Instant::now();
        let got = perft_named(game, depth);
        let secs = t0.elapsed().as_secs_f64();
        let ok = matches!(got, Ok(g) if g == want);
        if !ok {
            problems.push(format!(
                "perft of {game} at depth {depth}: {got:?} (published {want})"
            ));
        }
        perfts.push(json!({
            "game": game, "depth": depth, "leaves": got.ok(), "published": want, "ok": ok,
            "wall_ms": secs * 1e3,
        }));
    }
    (sigs, perfts)
}

/// Part 2: the service with each worker count.
fn service(
    suite: Suite,
    counts: &[usize],
    exe: &Path,
    worker: &Path,
    dir: &Path,
    problems: &mut Vec<String>,
) -> Value {
    let jobs = service_jobs(suite);
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    // times[j][k]: seconds of job type j with counts[k] workers (None: failed).
    let mut times: Vec<Vec<Option<f64>>> = vec![vec![None; counts.len()]; jobs.len()];
    let mut details: Vec<Vec<Value>> = vec![Vec::new(); jobs.len()];
    let mut first_results: Vec<Option<Vec<Value>>> = vec![None; jobs.len()];
    let mut overhead = Vec::new();
    let trivial = spec("tictactoe", &[], "15", "alphabeta", &[]);
    let trivial_runs = match suite {
        Suite::Quick => 9,
        Suite::Full => 41,
    };
    for (k, &w) in counts.iter().enumerate() {
        eprintln!("bench: service with {w} worker process(es)");
        let svc = match Service::start(exe, worker, dir, w) {
            Ok(s) => s,
            Err(e) => {
                problems.push(format!("service with {w} workers: {e}"));
                continue;
            }
        };
        // Dispatch overhead: a trivial job end to end, minus nothing (its search takes
        // microseconds); the median of several.
        let mut ms = Vec::new();
        for _ in 0..trivial_runs {
            match svc.run(&trivial) {
                Ok((_, t)) => ms.push(t.as_secs_f64() * 1e3),
                Err(e) => {
                    problems.push(format!("trivial job with {w} workers: {e}"));
                    break;
                }
            }
        }
        overhead.push(json!({"workers": w, "median_ms": median(ms.clone()), "runs": ms.len()}));
        for (j, sj) in jobs.iter().enumerate() {
            eprintln!("bench:   {} ({w} worker(s))", sj.kind);
            let mut nodes = 0u64;
            let mut values = Vec::new();
            let mut workers_used = std::collections::BTreeSet::new();
            let mut tasks = 0u64;
            let mut ok = true;
            // All jobs of the type are submitted at once; the time to result is from the
            // first submission to the last job's end.
            let (coord0, work0) = svc.cpu();
            let t0 = Instant::now();
            let ids: Result<Vec<u64>, String> = sj.jobs.iter().map(|job| svc.submit(job)).collect();
            let ended = ids.and_then(|ids| svc.wait(&ids, t0));
            let total = t0.elapsed().as_secs_f64();
            let (coord1, work1) = svc.cpu();
            let mut job_seconds = Vec::new();
            match ended {
                Ok(ended) => {
                    for (i, (st, t)) in ended.iter().enumerate() {
                        let job = &sj.jobs[i];
                        job_seconds.push(t.as_secs_f64());
                        let r = &st["result"];
                        nodes += r["nodes"].as_u64().unwrap_or(0);
                        tasks += st["tasks"]["done"].as_u64().unwrap_or(0);
                        for task in st["task_list"].as_array().into_iter().flatten() {
                            for wk in task["workers"].as_array().into_iter().flatten() {
                                workers_used.insert(wk.to_string());
                            }
                        }
                        if let Some(want) = &sj.expected[i] {
                            if r["value"].as_f64() != want.as_f64() {
                                problems.push(format!(
                                    "{} with {w} workers: value {} for {} (published {want})",
                                    sj.kind, r["value"], job.position
                                ));
                                ok = false;
                            }
                        }
                        // What must not depend on the number of workers (run scores are
                        // listed in the order the runs ended, so they are compared sorted).
                        let mut scores: Vec<f64> = r["run_scores"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_f64)
                            .collect();
                        scores.sort_by(|a, b| a.total_cmp(b));
                        values.push(json!({
                            "value": r["value"],
                            "visits": r.get("visits"),
                            "run_scores": scores,
                        }));
                    }
                }
                Err(e) => {
                    problems.push(format!("{} with {w} workers: {e}", sj.kind));
                    ok = false;
                }
            }
            if ok {
                match &first_results[j] {
                    None => first_results[j] = Some(values.clone()),
                    Some(first) if *first != values => {
                        problems.push(format!(
                            "{}: the result with {w} workers differs from the one with {} ({} vs {})",
                            sj.kind,
                            counts[0],
                            json!(values),
                            json!(first)
                        ));
                        ok = false;
                    }
                    Some(_) => {}
                }
            }
            if ok {
                times[j][k] = Some(total);
            }
            let worker_cpu = work1 - work0;
            let coord_cpu = coord1 - coord0;
            // A progress line per measurement, so that a run stopped early still shows what
            // it measured.
            eprintln!(
                "bench:   {total:.2} s, {tasks} tasks, workers' CPU {worker_cpu:.2} s, coordinator CPU {coord_cpu:.2} s, load {:?}",
                load()
            );
            details[j].push(json!({
                "workers": w,
                "cores": w.min(cpus),
                "seconds": ok.then_some(total),
                "job_seconds": job_seconds,
                "nodes": nodes,
                "nodes_per_s": if total > 0.0 { nodes as f64 / total } else { 0.0 },
                "worker_cpu_s": worker_cpu,
                "nodes_per_worker_cpu_s": if worker_cpu > 0.0 { nodes as f64 / worker_cpu } else { 0.0 },
                // Share of the time the workers' cores were busy: what is left is dispatch,
                // waiting for the slowest task or round, and (with more workers than cores)
                // waiting for a core.
                "worker_busy": if total > 0.0 { worker_cpu / (w.min(cpus) as f64 * total) } else { 0.0 },
                "coordinator_cpu_s": coord_cpu,
                "coordinator_ms_per_task": if tasks > 0 { coord_cpu * 1e3 / tasks as f64 } else { 0.0 },
                "tasks": tasks,
                "distinct_workers": workers_used.len(),
                "results": values,
                "ok": ok,
            }));
        }
    }
    let mut out = Vec::new();
    for (j, sj) in jobs.iter().enumerate() {
        let base = times[j][0];
        let base_w = counts[0] as f64;
        let base_cores = counts[0].min(cpus) as f64;
        let rows: Vec<Value> = details[j]
            .iter()
            .map(|d| {
                let mut d = d.clone();
                let w = d["workers"].as_u64().unwrap_or(1) as f64;
                let cores = d["cores"].as_u64().unwrap_or(1) as f64;
                if let (Some(b), Some(t)) = (base, d["seconds"].as_f64()) {
                    let speedup = b / t;
                    d["speedup"] = json!(speedup);
                    d["efficiency"] = json!(speedup / (w / base_w));
                    // Over the cores the workers can use: 4 workers on 2 cores have 2.
                    d["efficiency_per_core"] = json!(speedup / (cores / base_cores));
                }
                d
            })
            .collect();
        out.push(json!({"type": sj.kind, "jobs": sj.jobs, "expected": sj.expected, "runs": rows}));
    }
    json!({"job_types": out, "dispatch_overhead": overhead, "cpus": cpus})
}

/// Runs `cmd` with `input` on stdin, with a timeout; returns (stdout, wall seconds).
fn run_peer(mut cmd: Command, input: &str, timeout: Duration) -> Result<(String, f64), String> {
    use std::io::Write;
    let t0 = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input.as_bytes());
    }
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let mut child = Proc(child);
    loop {
        if let Ok(Some(_)) = child.0.try_wait() {
            break;
        }
        if t0.elapsed() > timeout {
            drop(child);
            return Err(format!("no answer within {} s", timeout.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let secs = t0.elapsed().as_secs_f64();
    drop(child);
    Ok((reader.join().unwrap_or_default(), secs))
}

/// The first `n` lines of a Pons Connect Four set in the data folder: (moves, score).
fn pons_lines(set: &str, n: usize) -> Result<Vec<(String, i64)>, String> {
    let text = gamesolver_shared::games::data::read(&format!("connect4/{set}"))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(n)
        .map(|l| {
            let mut it = l.split_whitespace();
            let moves = it.next().unwrap_or("").to_string();
            let score = it
                .next()
                .and_then(|x| x.parse().ok())
                .ok_or_else(|| format!("{set}: bad line '{l}'"))?;
            Ok((moves, score))
        })
        .collect()
}

/// Our side on Pons positions, in this process, one thread: the first position once untimed
/// (a running worker's steady state: the engine's table pool is warm, as Pons' table is
/// allocated once), then every position timed; every value checked against the published
/// score. Returns (mean CPU µs, mean wall µs, mean nodes) per position.
fn ours_c4(positions: &[(String, i64)]) -> Result<(f64, f64, f64), String> {
    if let Some((p, _)) = positions.first() {
        run_here(&c4(p, "alphabeta"), 1)?;
    }
    let mut wall = 0.0;
    let mut nodes = 0u64;
    let cpu0 = self_cpu().0;
    for (p, want) in positions {
        let (r, t) = run_here(&c4(p, "alphabeta"), 1)?;
        if r.value.as_i64() != Some(*want) {
            return Err(format!("ours: {p} gave {} (published {want})", r.value));
        }
        wall += t.as_secs_f64();
        nodes += r.nodes;
    }
    let cpu = self_cpu().0 - cpu0;
    let n = positions.len().max(1) as f64;
    Ok((cpu * 1e6 / n, wall * 1e6 / n, nodes as f64 / n))
}

/// The number after `key` (`key` a word of `text`).
fn after(text: &str, key: &str) -> Option<f64> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .iter()
        .position(|w| *w == key)
        .and_then(|i| words.get(i + 1))
        .and_then(|v| v.trim_end_matches(',').parse().ok())
}

/// The number before `key`.
fn before(text: &str, key: &str) -> Option<f64> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .iter()
        .position(|w| *w == key)
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| words[i].parse().ok())
}

/// Runs a peer command and returns (stdout, wall s, CPU s of the child: user + system, from
/// this process's children counters, so nothing else may be waited for meanwhile).
fn run_peer_cpu(
    cmd: Command,
    input: &str,
    timeout: Duration,
) -> Result<(String, f64, f64), String> {
    let c0 = self_cpu().1;
    let (out, wall) = run_peer(cmd, input, timeout)?;
    Ok((out, wall, self_cpu().1 - c0))
}

/// One side-by-side row: `unit` is what `peer` and `ours` measure; `lower_is_better` says
/// which way the ratio ours / peer favours us.
#[allow(clippy::too_many_arguments)]
fn peer_row(
    peer: &str,
    input: &str,
    unit: &str,
    peer_v: f64,
    ours_v: f64,
    lower_is_better: bool,
    peer_result: Value,
    ours_result: Value,
    agree: bool,
    detail: Value,
) -> Value {
    json!({
        "peer": peer,
        "input": input,
        "unit": unit,
        "peer_value": peer_v,
        "ours_value": ours_v,
        "ratio_ours_over_peer": ours_v / peer_v,
        "lower_is_better": lower_is_better,
        "peer_result": peer_result,
        "ours_result": ours_result,
        "agree": agree,
        "detail": detail,
    })
}

/// Part 3: peers found under `dir`, each next to ours on the same input in this run. CPU
/// time, not wall time, is compared (the machine may be shared): the peer's from the child
/// process counters (Pons' driver reports its own per-position thread CPU, which is used), ours
/// from this process's counters around in-process runs on one thread.
fn peers(
    suite: Suite,
    dir: Option<&Path>,
    notes: &mut Vec<String>,
    problems: &mut Vec<String>,
) -> Vec<Value> {
    let Some(dir) = dir else {
        notes.push("no --peers directory given: peers skipped".into());
        return Vec::new();
    };
    let mut out = Vec::new();

    // Pons' solver through a driver: `DRIVER FILE N` solves the first N lines, the table reset
    // per position, and prints "positions N failed F mean wall X us cpu Y us nodes Z".
    let sets: &[(&str, usize)] = match suite {
        Suite::Quick => &[("Test_L2_R2", 20)],
        Suite::Full => &[
            ("Test_L1_R1", 1000),
            ("Test_L2_R2", 200),
            ("Test_L1_R2", 20),
        ],
    };
    let driver = ["driver/pons_driver", "pons/pons_driver"]
        .iter()
        .map(|p| dir.join(p))
        .find(|p| p.is_file());
    match driver {
        None => notes.push(format!(
            "Pons' solver: no driver at {0}/driver/pons_driver or {0}/pons/pons_driver: skipped",
            dir.display()
        )),
        Some(driver) => {
            for &(set, n) in sets {
                eprintln!("bench: peers: Pons' solver and ours on {set} ({n})");
                let lines = match pons_lines(set, n) {
                    Ok(l) => l,
                    Err(e) => {
                        notes.push(format!("Pons' solver on {set}: {e}: skipped"));
                        continue;
                    }
                };
                let file = gamesolver_shared::games::data::data_dir()
                    .join("connect4")
                    .join(set);
                let mut cmd = Command::new(&driver);
                cmd.arg(&file).arg(n.to_string());
                let peer = run_peer(cmd, "", Duration::from_secs(1800));
                let ours = ours_c4(&lines);
                match (peer, ours) {
                    (Ok((stdout, _)), Ok((cpu_us, wall_us, nodes))) => {
                        let peer_cpu = after(&stdout, "cpu");
                        let failed = after(&stdout, "failed");
                        match peer_cpu {
                            Some(pc) => out.push(peer_row(
                                "Pons' connect4 solver (driver, table reset per position)",
                                &format!("first {} of {set}", lines.len()),
                                "mean CPU µs per position",
                                pc,
                                cpu_us,
                                true,
                                json!({"failed": failed, "mean_nodes": after(&stdout, "nodes"),
                                       "mean_wall_us": after(&stdout, "wall")}),
                                json!({"failed": 0, "mean_nodes": nodes, "mean_wall_us": wall_us}),
                                failed == Some(0.0),
                                json!(stdout.trim()),
                            )),
                            None => notes.push(format!(
                                "Pons' solver: unreadable driver output '{}'",
                                stdout.trim()
                            )),
                        }
                    }
                    (Err(e), _) => notes.push(format!("Pons' solver: {e}")),
                    (_, Err(e)) => problems.push(format!("Pons' set {set}, our side: {e}")),
                }
            }
        }
    }

    // Fhourstones: `SearchGame` reads positions (columns 1..7) on stdin and solves each weakly
    // (win / draw / loss); ours with `weak=true` on the same positions. One process per input.
    // Its inputs are 45461667 (+), 35333571 (-), 13333111 (=) and the empty board (+); the last
    // takes minutes for both programs and is left to the ignored test (see BENCHMARKS.md).
    let fh_inputs: &[&str] = match suite {
        Suite::Quick => &["45461667"],
        Suite::Full => &["45461667", "35333571", "13333111"],
    };
    let fh = dir.join("fhourstones/SearchGame");
    if !fh.is_file() {
        notes.push(format!("Fhourstones: no {}: skipped", fh.display()));
    } else {
        for pos in fh_inputs {
            eprintln!("bench: peers: Fhourstones and ours on {pos}");
            let peer = run_peer_cpu(
                Command::new(&fh),
                &format!("{pos}\n"),
                Duration::from_secs(1800),
            );
            let cpu0 = self_cpu().0;
            let ours = run_here(
                &spec("connect4", &[], pos, "alphabeta", &[("weak", "true")]),
                1,
            );
            let ours_cpu = self_cpu().0 - cpu0;
            match (peer, ours) {
                (Ok((stdout, _, peer_cpu)), Ok((r, t))) => {
                    let outcome = stdout
                        .lines()
                        .find(|l| l.contains("score ="))
                        .unwrap_or("")
                        .trim()
                        .to_string();
                    let peer_sign = if outcome.contains("(+)") {
                        Some(1)
                    } else if outcome.contains("(-)") {
                        Some(-1)
                    } else if outcome.contains("(=)") {
                        Some(0)
                    } else {
                        None
                    };
                    let agree = peer_sign.is_some() && r.value.as_i64() == peer_sign;
                    if !agree {
                        problems.push(format!(
                            "Fhourstones input {pos}: peer '{outcome}', ours {}",
                            r.value
                        ));
                    }
                    out.push(peer_row(
                        "Fhourstones (SearchGame), weak solve",
                        pos,
                        "CPU s",
                        peer_cpu,
                        ours_cpu,
                        true,
                        json!({"outcome": outcome, "positions": before(&stdout, "pos"),
                               "search_user_ms": before(&stdout, "msec")}),
                        json!({"value": r.value, "nodes": r.nodes, "wall_s": t.as_secs_f64()}),
                        agree,
                        json!(null),
                    ))
                }
                (Err(e), _) => notes.push(format!("Fhourstones: {e}")),
                (_, Err(e)) => problems.push(format!("Fhourstones input {pos}, our side: {e}")),
            }
        }
    }

    // morpion-lpp's NRPA (anagorko/morpion-lpp `src/nrpa`): `nrpa -v V -l 3 -n N -s 1
    // --standard 1` (Rosin's Adapt, as ours) prints "Simulations: R (...)" and
    // "Best line: S"; ours is `nrpa level=3 iterations=N seed=1` on one thread, N^3 rollouts.
    let nrpa = [
        "morpion-lpp/src/nrpa/nrpa",
        "morpion-lpp/build/nrpa",
        "morpion-lpp/nrpa",
    ]
    .iter()
    .map(|p| dir.join(p))
    .find(|p| p.is_file());
    // Quick: 20^3 = 8,000 rollouts, tens of milliseconds, enough clock ticks (10 ms each in
    // /proc's counters) to measure; 10^3 once took under one tick on our side.
    let iterations = match suite {
        Suite::Quick => "20",
        Suite::Full => "60",
    };
    match nrpa {
        None => notes.push(format!(
            "morpion-lpp nrpa: no {}/morpion-lpp/src/nrpa/nrpa: skipped",
            dir.display()
        )),
        Some(p) => {
            for variant in ["5D", "5T"] {
                eprintln!("bench: peers: morpion-lpp and ours on {variant}");
                let mut cmd = Command::new(&p);
                cmd.args([
                    "-v",
                    variant,
                    "-l",
                    "3",
                    "-n",
                    iterations,
                    "-s",
                    "1",
                    "--standard",
                    "1",
                ]);
                let peer = run_peer_cpu(cmd, "", Duration::from_secs(1800));
                let cpu0 = self_cpu().0;
                let ours = run_here(
                    &spec(
                        "morpion",
                        &[("variant", variant)],
                        "",
                        "nrpa",
                        &[("level", "3"), ("iterations", iterations), ("seed", "1")],
                    ),
                    1,
                );
                // One thread: under one clock tick of CPU, its wall time is the better reading.
                let ours_cpu = match (self_cpu().0 - cpu0, &ours) {
                    (c, Ok((_, t))) if c.is_nan() || c <= 0.0 => t.as_secs_f64(),
                    (c, _) => c,
                };
                match (peer, ours) {
                    (Ok((stdout, _, peer_cpu)), Ok((r, t))) => {
                        let rollouts = after(&stdout, "Simulations:");
                        let best = stdout
                            .lines()
                            .find_map(|l| l.trim().strip_prefix("Best line:"))
                            .and_then(|x| x.trim().parse::<f64>().ok());
                        match rollouts {
                            Some(ro) if peer_cpu > 0.0 && ours_cpu > 0.0 => out.push(peer_row(
                                "morpion-lpp nrpa (--standard 1)",
                                &format!("Morpion {variant}, level 3, {iterations} iterations, seed 1"),
                                "rollouts per CPU s",
                                ro / peer_cpu,
                                r.nodes as f64 / ours_cpu,
                                false,
                                json!({"best": best, "rollouts": ro, "cpu_s": peer_cpu}),
                                json!({"best": r.value, "rollouts": r.nodes, "cpu_s": ours_cpu,
                                       "wall_s": t.as_secs_f64()}),
                                true,
                                json!(null),
                            )),
                            _ => notes.push(format!(
                                "morpion-lpp nrpa {variant}: no 'Simulations:' in its output or no CPU time measured"
                            )),
                        }
                    }
                    (Err(e), _) => notes.push(format!("morpion-lpp nrpa {variant}: {e}")),
                    (_, Err(e)) => problems.push(format!("NRPA {variant}, our side: {e}")),
                }
            }
        }
    }
    out
}

fn fmt_s(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.3}"))
}

fn markdown(report: &Value) -> String {
    let mut s = String::new();
    let load = |k: &str| {
        report[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|x| format!("{:.2}", x.as_f64().unwrap_or(0.0)))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_else(|| "-".into())
    };
    let m = &report["machine"];
    s += &format!(
        "### gamesolver-bench {}\n\n",
        report["suite"].as_str().unwrap_or("")
    );
    s += &format!(
        "Date: {} UTC. Machine: {} CPUs ({}), {} GiB, {} {}; load average before {} / after {}; total {:.1} s.\n\n",
        report["date"].as_str().unwrap_or("?"),
        m["cpus"],
        m["cpu_model"].as_str().unwrap_or("?"),
        m["memory_gib"],
        m["os"].as_str().unwrap_or(""),
        m["arch"].as_str().unwrap_or(""),
        load("load_before"),
        load("load_after"),
        report["seconds"].as_f64().unwrap_or(0.0)
    );
    s += &format!(
        "Command: `{}`\n\n",
        report["command"].as_str().unwrap_or("gamesolver-bench")
    );
    s += "#### Node-count signatures (one thread, in process)\n\n";
    s += "| kernel | nodes | fingerprint | stored | nodes/s | ok |\n|---|---|---|---|---|---|\n";
    for sig in report["signatures"].as_array().into_iter().flatten() {
        s += &format!(
            "| {} | {} | {} | {} / {} | {:.0} | {} |\n",
            sig["kernel"].as_str().unwrap_or(""),
            sig["nodes"],
            sig["fingerprint"].as_str().unwrap_or("-"),
            sig["expected_nodes"],
            sig["expected_fingerprint"].as_str().unwrap_or("-"),
            sig["nodes_per_s"].as_f64().unwrap_or(0.0),
            if sig["ok"] == true { "yes" } else { "**NO**" }
        );
    }
    s += "\n| perft | depth | leaves | published | ms | ok |\n|---|---|---|---|---|---|\n";
    for p in report["perft"].as_array().into_iter().flatten() {
        s += &format!(
            "| {} | {} | {} | {} | {:.1} | {} |\n",
            p["game"].as_str().unwrap_or(""),
            p["depth"],
            p["leaves"],
            p["published"],
            p["wall_ms"].as_f64().unwrap_or(0.0),
            if p["ok"] == true { "yes" } else { "**NO**" }
        );
    }
    if let Some(svc) = report.get("service").filter(|v| !v.is_null()) {
        s += "\n#### Through the service: time to result, speedup, efficiency\n\n";
        let cpus = svc["cpus"].as_u64().unwrap_or(0);
        s += &format!(
            "Each worker process has one slot; the coordinator is a separate process with an SQLite store. \
             The jobs of a type are submitted together; time: from the first submission to the last `done`. \
             Speedup: t(first worker count) / t(w); efficiency: speedup / (w / first count); per core: the same \
             over the cores the workers can use (this machine has {cpus}: {cpus} or more workers share {cpus} cores, \
             so more workers than cores cannot be faster, and their rows measure the cost of oversubscription). \
             Busy: workers' CPU time / (cores used x time), the rest being dispatch, waiting for the last task or \
             round, and other processes' load. Coordinator ms/task: its CPU time per task done (including \
             answering this command's status polls). Nodes per worker-CPU s: the kernels' rate inside the service.\n\n"
        );
        s += "| job type | workers | seconds | speedup | efficiency | per core | tasks | workers used | busy | coordinator ms/task | nodes/s | nodes per worker-CPU s |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
        let f2 = |v: &Value| v.as_f64().map_or("-".into(), |v| format!("{v:.2}"));
        for jt in svc["job_types"].as_array().into_iter().flatten() {
            for r in jt["runs"].as_array().into_iter().flatten() {
                s += &format!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {:.0} | {:.0} |\n",
                    jt["type"].as_str().unwrap_or(""),
                    r["workers"],
                    fmt_s(r["seconds"].as_f64()),
                    f2(&r["speedup"]),
                    f2(&r["efficiency"]),
                    f2(&r["efficiency_per_core"]),
                    r["tasks"],
                    r["distinct_workers"],
                    f2(&r["worker_busy"]),
                    r["coordinator_ms_per_task"].as_f64().unwrap_or(0.0),
                    r["nodes_per_s"].as_f64().unwrap_or(0.0),
                    r["nodes_per_worker_cpu_s"].as_f64().unwrap_or(0.0)
                );
            }
        }
        s += "\nDispatch overhead (median time of a trivial tic-tac-toe job through the service):\n\n";
        s += "| workers | median ms | runs |\n|---|---|---|\n";
        for o in svc["dispatch_overhead"].as_array().into_iter().flatten() {
            s += &format!(
                "| {} | {:.1} | {} |\n",
                o["workers"],
                o["median_ms"].as_f64().unwrap_or(f64::NAN),
                o["runs"]
            );
        }
        s += "\nJobs:\n\n";
        for jt in svc["job_types"].as_array().into_iter().flatten() {
            let jobs: Vec<String> = jt["jobs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|j| {
                    let opts: Vec<String> = j["options"]
                        .as_object()
                        .into_iter()
                        .flatten()
                        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                        .collect();
                    format!(
                        "`{} {} '{}' {}`",
                        j["game"].as_str().unwrap_or(""),
                        j["algorithm"].as_str().unwrap_or(""),
                        j["position"].as_str().unwrap_or(""),
                        opts.join(" ")
                    )
                })
                .collect();
            s += &format!(
                "- {}: {}\n",
                jt["type"].as_str().unwrap_or(""),
                jobs.join(", ")
            );
        }
    }
    s += "\n#### Peers (same inputs, same run)\n\n";
    let peers = report["peers"].as_array().cloned().unwrap_or_default();
    if peers.is_empty() {
        s += "No peer measured.\n";
    } else {
        s += "Each row: the peer, then ours on the same input, one thread each, in this run; CPU time (user + system) so that the machine's load matters less. Ours runs in this process (the Pons rows: after one untimed warm-up position, as a running worker).\n\n";
        s += "| peer | input | figure | peer | ours | ours / peer | results (peer; ours) | agree |\n|---|---|---|---|---|---|---|---|\n";
    }
    let num = |v: &Value| match v.as_f64() {
        Some(x) if x.fract() == 0.0 => format!("{x:.0}"),
        Some(x) if x.abs() >= 1000.0 => format!("{x:.0}"),
        Some(x) if x.abs() >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.3}"),
        None => "-".into(),
    };
    let brief = |v: &Value| {
        v.as_object()
            .map(|o| {
                o.iter()
                    .filter(|(_, x)| !x.is_null())
                    .map(|(k, x)| match x {
                        Value::String(t) => format!("{k} {t}"),
                        _ => format!("{k} {}", num(x)),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    for p in &peers {
        let ratio = p["ratio_ours_over_peer"].as_f64().unwrap_or(f64::NAN);
        s += &format!(
            "| {} | {} | {} | {} | {} | {:.2} ({}) | {}; {} | {} |\n",
            p["peer"].as_str().unwrap_or(""),
            p["input"].as_str().unwrap_or(""),
            p["unit"].as_str().unwrap_or(""),
            num(&p["peer_value"]),
            num(&p["ours_value"]),
            ratio,
            if p["lower_is_better"] == true {
                "lower is better for us"
            } else {
                "higher is better for us"
            },
            brief(&p["peer_result"]),
            brief(&p["ours_result"]),
            if p["agree"] == true { "yes" } else { "**NO**" }
        );
    }
    for n in report["notes"].as_array().into_iter().flatten() {
        s += &format!("- note: {}\n", n.as_str().unwrap_or(""));
    }
    if let Some(problems) = report["problems"].as_array().filter(|p| !p.is_empty()) {
        s += "\n#### Problems\n\n";
        for p in problems {
            s += &format!("- {}\n", p.as_str().unwrap_or(""));
        }
    }
    s
}

/// The binary `name` beside this executable (where `cargo build` puts every binary of the
/// workspace).
fn beside_me(name: &str) -> Result<PathBuf, BenchError> {
    let exe =
        std::env::current_exe().map_err(|e| bad(format!("cannot find this executable: {e}")))?;
    Ok(exe.with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX)))
}

/// `gamesolver-bench quick|full`: runs `suite` and writes the report.
pub fn run(suite: Suite, args: BenchArgs) -> Result<(), BenchError> {
    let counts = args.workers.clone();
    if counts.is_empty() || counts.iter().any(|&w| w == 0 || w > 64) {
        return Err(bad(
            "--workers must list counts between 1 and 64, e.g. 1,2,4",
        ));
    }
    let (exe, worker) = if args.no_service {
        // Kernel figures only: the binaries are neither needed nor checked.
        (PathBuf::new(), PathBuf::new())
    } else {
        args.binaries.resolve()?
    };
    if let Some(p) = &args.peers {
        if !p.is_dir() {
            return Err(bad(format!("--peers '{}' is not a directory", p.display())));
        }
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| bad(format!("cannot create --out '{}': {e}", args.out.display())))?;
    let scratch = std::env::temp_dir().join(format!("gamesolver-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)
        .map_err(|e| bad(format!("cannot create '{}': {e}", scratch.display())))?;

    let t0 = Instant::now();
    let load_before = load();
    let suite_name = match suite {
        Suite::Quick => "quick",
        Suite::Full => "full",
    };
    let mut problems = Vec::new();
    eprintln!("bench: signatures");
    let (sigs, perfts) = signatures(&mut problems);
    let service_report = if args.no_service {
        Value::Null
    } else {
        service(suite, &counts, &exe, &worker, &scratch, &mut problems)
    };
    let mut notes = Vec::new();
    eprintln!("bench: peers");
    let peer_report = peers(suite, args.peers.as_deref(), &mut notes, &mut problems);
    let _ = std::fs::remove_dir_all(&scratch);
    let mut command = format!(
        "gamesolver-bench {suite_name} --workers {}",
        counts
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    if let Some(p) = &args.peers {
        command += &format!(" --peers {}", p.display());
    }
    let report = json!({
        "suite": suite_name,
        "command": command,
        "date": utc_now(),
        "machine": machine(),
        "load_before": load_before,
        "load_after": load(),
        "seconds": t0.elapsed().as_secs_f64(),
        "signatures": sigs,
        "perft": perfts,
        "service": service_report,
        "peers": peer_report,
        "notes": notes,
        "problems": problems,
    });
    let md = markdown(&report);
    let write = |name: &str, text: &str| {
        std::fs::write(args.out.join(name), text).map_err(|e| {
            failed(format!(
                "cannot write '{}': {e}",
                args.out.join(name).display()
            ))
        })
    };
    write(
        "report.json",
        &serde_json::to_string_pretty(&report).expect("json"),
    )?;
    write("report.md", &md)?;
    print!("{md}");
    if problems.is_empty() {
        Ok(())
    } else {
        Err(failed(format!(
            "{} problem(s); first: {}",
            problems.len(),
            problems[0]
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against dates computed independently (Python's `datetime.utcfromtimestamp`), leap days
    /// and a century included.
    #[test]
    fn utc_text_matches_known_dates() {
        for (secs, text) in [
            (0, "1970-01-01 00:00"),
            (951_782_400, "2000-02-29 00:00"),
            (1_700_000_000, "2023-11-14 22:13"),
            (1_798_675_200, "2026-12-31 00:00"),
            (4_102_444_799, "2099-12-31 23:59"),
        ] {
            assert_eq!(utc_text(secs), text, "{secs}");
        }
    }

    /// The perft figures of [`PERFT`] are the published ones; at depth 1 every game has its
    /// number of opening moves.
    #[test]
    fn perft_of_the_first_ply_counts_the_opening_moves() {
        assert_eq!(perft_named("connect4", 1), Ok(7));
        assert_eq!(perft_named("tictactoe", 1), Ok(9));
        assert_eq!(perft_named("othello", 1), Ok(4));
        assert!(perft_named("chess", 1).is_err());
    }
}
