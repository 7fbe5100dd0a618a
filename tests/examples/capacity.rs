//! Coordinator capacity: W simulated workers over HTTP on loopback against a real coordinator.
//!
//! Each simulated worker is a cheap async client (one keep-alive connection, one slot) that
//! registers, long-polls for leases, heartbeats each task once (timed) and reports the task's
//! real output, computed with the library's kernel (`registry::prepare` and `PreparedJob::run`:
//! the coordinator checks outputs, so nothing is forged). The tasks are runs of root-parallel
//! MCTS on tic-tac-toe with one playout per tree, so a task costs microseconds and the
//! coordinator is what is measured. For each W it prints durable tasks per second (results
//! stored, from the first submission to the last job's end), heartbeat latency p50/p99, the
//! coordinator's CPU time per task (`/proc/PID/stat`), the SQLite file's growth per task (with
//! its WAL), and then opens the file with rusqlite to check that every task of every job ran to
//! exactly one stored result.
//!
//! Run: `cargo build --release -p gamesolver -p gamesolver-worker && cargo run --release -p
//! gamesolver-e2e --example capacity [W ...]` (default 10 100 1000). `CAPACITY_TASKS` sets the
//! tasks per W (default 2,000 / 5,000 / 10,000). Not a test: the numbers depend on the machine.
//! Every loop is bounded (a run gives up after two minutes) and only 127.0.0.1 is contacted.

use gamesolver_e2e::*;
use gamesolver_shared::registry::{prepare, PreparedJob};
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::protocol::{
    Heartbeat, Lease, LeaseRequest, Outcome, Register, Registered, Report,
};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;

/// Tasks per job (MCTS `tasks`, at most 1,024).
const TASKS_PER_JOB: u32 = 100;
/// Longest run of one W.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// One keep-alive HTTP/1.1 connection with just enough of the protocol for JSON POSTs (the
/// coordinator always answers with `Content-Length`).
struct Conn {
    addr: String,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
}

impl Conn {
    fn new(addr: &str) -> Conn {
        Conn {
            addr: addr.to_string(),
            stream: None,
            buf: Vec::new(),
        }
    }

    async fn write_all(s: &TcpStream, mut data: &[u8]) -> std::io::Result<()> {
        while !data.is_empty() {
            s.writable().await?;
            match s.try_write(data) {
                Ok(n) => data = &data[n..],
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    async fn read_some(s: &TcpStream, buf: &mut Vec<u8>) -> std::io::Result<usize> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            s.readable().await?;
            match s.try_read(&mut chunk) {
                Ok(0) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "closed",
                    ))
                }
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// POSTs `body` to `path`; returns the status and the body (null when empty).
    async fn post(&mut self, path: &str, body: &Value) -> std::io::Result<(u16, Value)> {
        for attempt in 0..2 {
            if self.stream.is_none() {
                let s = TcpStream::connect(&self.addr).await?;
                s.set_nodelay(true)?;
                self.stream = Some(s);
            }
            match self.exchange(path, body).await {
                Ok(r) => return Ok(r),
                // The server may close an idle keep-alive connection: reconnect once.
                Err(_) if attempt == 0 => self.stream = None,
                Err(e) => return Err(e),
            }
        }
        unreachable!()
    }

    async fn exchange(&mut self, path: &str, body: &Value) -> std::io::Result<(u16, Value)> {
        let s = self.stream.as_ref().expect("connected");
        let text = body.to_string();
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}",
            self.addr,
            text.len()
        );
        Self::write_all(s, req.as_bytes()).await?;
        self.buf.clear();
        let head_end = loop {
            if let Some(i) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            Self::read_some(s, &mut self.buf).await?;
        };
        let head = String::from_utf8_lossy(&self.buf[..head_end]).to_string();
        let status: u16 = head
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let len: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())
                    .flatten()
            })
            .unwrap_or(0);
        while self.buf.len() < head_end + len {
            Self::read_some(s, &mut self.buf).await?;
        }
        let body = &self.buf[head_end..head_end + len];
        let v = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(body).unwrap_or(Value::Null)
        };
        Ok((status, v))
    }
}

/// What the simulated workers share.
struct Shared {
    addr: String,
    stop: AtomicBool,
    /// Prepared jobs by job id (every task of a job runs on the same prepared job).
    prepared: Mutex<HashMap<u64, Arc<dyn PreparedJob>>>,
    /// Heartbeat latencies in microseconds.
    heartbeats: Mutex<Vec<u64>>,
    results_ok: AtomicU64,
    refused: AtomicU64,
    errors: AtomicU64,
    /// Long polls that ended without a task (204).
    empty_polls: AtomicU64,
}

async fn simulated_worker(sh: Arc<Shared>, n: usize) {
    let mut c = Conn::new(&sh.addr);
    let reg = Register {
        host: format!("sim-{n}"),
        threads: 1,
        version: String::new(),
    };
    let wid = match c.post("/v1/worker/register", &json!(reg)).await {
        Ok((200, v)) => {
            serde_json::from_value::<Registered>(v)
                .expect("registered")
                .worker_id
        }
        other => {
            eprintln!("register {n}: {other:?}");
            sh.errors.fetch_add(1, Ordering::Relaxed);
            return;
        }
    };
    while !sh.stop.load(Ordering::Relaxed) {
        let req = LeaseRequest {
            worker_id: wid.clone(),
            // As gamesolver-worker polls (its LONG_POLL_MS).
            wait_ms: 10_000,
        };
        let lease = match c.post("/v1/worker/lease", &json!(req)).await {
            Ok((200, v)) => serde_json::from_value::<Lease>(v).expect("lease"),
            Ok((204, _)) => {
                sh.empty_polls.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            other => {
                eprintln!("lease {n}: {other:?}");
                sh.errors.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        // One timed heartbeat per task.
        let hb = Heartbeat {
            worker_id: wid.clone(),
            lease_id: lease.lease_id.clone(),
            progress: None,
        };
        let t = Instant::now();
        let r = c.post("/v1/worker/heartbeat", &json!(hb)).await;
        let us = t.elapsed().as_micros() as u64;
        match r {
            Ok((200, _)) => sh.heartbeats.lock().unwrap().push(us),
            other => {
                eprintln!("heartbeat {n}: {other:?}");
                sh.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        let prepared = {
            let mut m = sh.prepared.lock().unwrap();
            m.entry(lease.job_id)
                .or_insert_with(|| Arc::from(prepare(&lease.task.job).expect("prepare")))
                .clone()
        };
        let output = prepared
            .run(&lease.task.kind, &Control::unlimited())
            .expect("kernel");
        let report = Report {
            worker_id: wid.clone(),
            lease_id: lease.lease_id.clone(),
            outcome: Outcome::Done { output },
            proved: Vec::new(),
        };
        match c.post("/v1/worker/result", &json!(report)).await {
            Ok((200, _)) => {
                sh.results_ok.fetch_add(1, Ordering::Relaxed);
            }
            Ok((409, _)) => {
                sh.refused.fetch_add(1, Ordering::Relaxed);
            }
            other => {
                eprintln!("result {n}: {other:?}");
                sh.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// User plus system CPU seconds of a process.
fn cpu_seconds(pid: u32) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which ends with the last ')'): utime and stime are the
    // 12th and 13th of them.
    let rest = text.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    let ticks = 100.0; // USER_HZ on Linux
    (f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0)) / ticks
}

fn db_bytes(db: &Path) -> u64 {
    ["", "-wal", "-shm"]
        .iter()
        .map(|s| {
            std::fs::metadata(format!("{}{s}", db.display()))
                .map(|m| m.len())
                .unwrap_or(0)
        })
        .sum()
}

fn job_spec(seed: u64) -> Value {
    let t = TASKS_PER_JOB.to_string();
    json!({"game": "tictactoe", "algorithm": "mcts",
        "options": {"playouts": t, "trees": t, "tasks": t, "seed": seed.to_string()}})
}

fn quantile(v: &mut [u64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_unstable();
    let i = ((v.len() - 1) as f64 * p).round() as usize;
    v[i] as f64 / 1000.0
}

/// Every task of the jobs ran to exactly one stored result; returns (tasks, results).
fn check_store(db: &Path, jobs: &[u64]) -> (u64, u64) {
    let conn = rusqlite::Connection::open(db).expect("open the store");
    let mut tasks = 0;
    let mut results = 0;
    for &id in jobs {
        let (n, done): (u64, u64) = conn
            .query_row(
                "SELECT COUNT(*), SUM(state = 'done') FROM tasks WHERE job_id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("count tasks");
        assert_eq!(n, TASKS_PER_JOB as u64, "job {id}: {n} tasks stored");
        assert_eq!(done, n, "job {id}: {done} of {n} tasks done");
        let per_task: Vec<(u64, u64)> = conn
            .prepare(
                "SELECT t.id, (SELECT COUNT(*) FROM results r WHERE r.task_id = t.id) \
                 FROM tasks t WHERE t.job_id = ?1",
            )
            .expect("prepare")
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .map(Result::unwrap)
            .collect();
        for (task, count) in &per_task {
            assert_eq!(*count, 1, "task {task} of job {id} has {count} results");
        }
        // Each stored result names a lease of its task that ended done.
        let bad: u64 = conn
            .query_row(
                "SELECT COUNT(*) FROM results r JOIN tasks t ON t.id = r.task_id \
                 LEFT JOIN leases l ON l.id = r.lease_id AND l.task_id = r.task_id \
                 WHERE t.job_id = ?1 AND l.id IS NULL",
                [id],
                |r| r.get(0),
            )
            .expect("leases");
        assert_eq!(bad, 0, "job {id}: results without their lease");
        let state: String = conn
            .query_row("SELECT state FROM jobs WHERE id = ?1", [id], |r| r.get(0))
            .expect("job");
        assert_eq!(state, "done", "job {id}");
        tasks += n;
        results += per_task.len() as u64;
    }
    (tasks, results)
}

fn run(w: usize, total_tasks: u64) -> Value {
    let jobs = total_tasks.div_ceil(TASKS_PER_JOB as u64);
    let name = format!("capacity-{w}");
    let db = scratch(&name).join("db.sqlite");
    let mut c = Coordinator::start(
        &db,
        &CoordOpts {
            extra_args: vec!["--max-queued-jobs".into(), (jobs + 10).to_string()],
            ..Default::default()
        },
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let sh = Arc::new(Shared {
        addr: format!("127.0.0.1:{}", c.port),
        stop: AtomicBool::new(false),
        prepared: Mutex::new(HashMap::new()),
        heartbeats: Mutex::new(Vec::new()),
        results_ok: AtomicU64::new(0),
        refused: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        empty_polls: AtomicU64::new(0),
    });
    let handles: Vec<_> = (0..w)
        .map(|n| rt.spawn(simulated_worker(sh.clone(), n)))
        .collect();
    wait_until(
        Duration::from_secs(60),
        "simulated workers registered",
        || c.workers() >= w,
    );
    eprintln!("capacity: W={w}, coordinator pid {}", c.proc.pid());
    let (cpu0, bytes0) = (cpu_seconds(c.proc.pid()), db_bytes(&db));
    let t0 = Instant::now();
    let ids: Vec<u64> = (0..jobs)
        .map(|j| c.submit(&job_spec(j + 1), None))
        .collect();
    let submitted = t0.elapsed();
    let mut ended = 0;
    while t0.elapsed() < RUN_LIMIT {
        let (_, st) = c.get("/v1/status", None);
        ended = ["done", "failed", "cancelled"]
            .iter()
            .map(|k| st["jobs"][k].as_u64().unwrap_or(0))
            .sum::<u64>();
        if ended >= jobs {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let elapsed = t0.elapsed().as_secs_f64();
    let (cpu1, bytes1) = (cpu_seconds(c.proc.pid()), db_bytes(&db));
    sh.stop.store(true, Ordering::Relaxed);
    rt.block_on(async {
        for h in handles {
            let _ = tokio::time::timeout(Duration::from_secs(5), h).await;
        }
    });
    drop(rt);
    c.proc.terminate(Duration::from_secs(10));
    let bytes_closed = db_bytes(&db);
    assert_eq!(ended, jobs, "not every job ended within {RUN_LIMIT:?}");
    let (tasks, results) = check_store(&db, &ids);
    let mut hb = std::mem::take(&mut *sh.heartbeats.lock().unwrap());
    let out = json!({
        "workers": w,
        "jobs": jobs,
        "tasks": tasks,
        "stored_results": results,
        "results_accepted": sh.results_ok.load(Ordering::Relaxed),
        "results_refused_409": sh.refused.load(Ordering::Relaxed),
        "client_errors": sh.errors.load(Ordering::Relaxed),
        "empty_long_polls": sh.empty_polls.load(Ordering::Relaxed),
        "submit_s": (submitted.as_secs_f64() * 1e3).round() / 1e3,
        "elapsed_s": (elapsed * 1e3).round() / 1e3,
        "durable_tasks_per_s": (tasks as f64 / elapsed).round(),
        "heartbeat_ms_p50": quantile(&mut hb, 0.5),
        "heartbeat_ms_p99": quantile(&mut hb, 0.99),
        "heartbeats": hb.len(),
        "coordinator_cpu_ms_per_task": ((cpu1 - cpu0) * 1e3 / tasks as f64 * 1e3).round() / 1e3,
        "db_bytes_per_task_running": ((bytes1 as f64 - bytes0 as f64) / tasks as f64).round(),
        "db_bytes_per_task_closed": ((bytes_closed as f64 - bytes0 as f64) / tasks as f64).round(),
    });
    println!("{out}");
    out
}

fn main() {
    use_binaries_beside_examples();
    let ws: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let ws = if ws.is_empty() {
        vec![10, 100, 1000]
    } else {
        ws
    };
    let fixed: Option<u64> = std::env::var("CAPACITY_TASKS")
        .ok()
        .and_then(|v| v.parse().ok());
    for w in ws {
        let tasks = fixed.unwrap_or(match w {
            0..=10 => 2_000,
            11..=100 => 5_000,
            _ => 10_000,
        });
        run(w, tasks);
    }
}
