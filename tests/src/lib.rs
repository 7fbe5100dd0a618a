//! Harness for the end-to-end tests in `tests/tests/`: real `gamesolver` and `gamesolver-worker`
//! processes on 127.0.0.1, real HTTP.
//!
//! Binaries are found next to the test executable's profile directory (`target/<profile>/`),
//! where `cargo test --workspace` builds them: the `gamesolver` and `gamesolver-worker` packages
//! have integration tests of their own, which makes cargo build their binaries first. Set
//! `GAMESOLVER_BIN_DIR` to test other builds. Every process is killed when its handle drops, so
//! a failing test leaves nothing running; every wait is bounded.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Directory of the binaries under test.
pub fn bin_dir() -> PathBuf {
    if let Ok(d) = std::env::var("GAMESOLVER_BIN_DIR") {
        return PathBuf::from(d);
    }
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/deps/<test binary>
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

/// Path of binary `name`, checked to exist.
pub fn bin(name: &str) -> PathBuf {
    let p = bin_dir().join(name);
    assert!(
        p.exists(),
        "{} not found: run `cargo test --workspace` (which builds it) or `cargo build -p gamesolver -p gamesolver-worker` with the same profile, or set GAMESOLVER_BIN_DIR",
        p.display()
    );
    p
}

/// Runs the `gamesolver` binary with `args` to its end: exit code, stdout, stderr.
pub fn gamesolver(args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(bin("gamesolver"))
        .args(args)
        .output()
        .expect("the gamesolver binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gamesolver-e2e-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// A free port on 127.0.0.1 (bound and released; the coordinator binds it right after).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// A child process, killed (SIGKILL) when dropped.
pub struct Proc {
    child: Child,
    name: String,
}

impl Proc {
    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
    /// `kill -9`.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
    /// SIGTERM, then waits up to `timeout` for the exit; returns the exit code.
    pub fn terminate(&mut self, timeout: Duration) -> Option<i32> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if let Ok(Some(st)) = self.child.try_wait() {
                return st.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            eprintln!("[harness] killing {} (pid {})", self.name, self.child.id());
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// A running coordinator (`gamesolver serve`).
pub struct Coordinator {
    pub proc: Proc,
    pub url: String,
    pub port: u16,
    /// When this test read the coordinator's `listening on` line.
    pub listening_at: Instant,
}

/// Options of a coordinator under test.
#[derive(Clone, Debug, Default)]
pub struct CoordOpts {
    pub port: Option<u16>,
    pub local_workers: usize,
    pub lease_ms: Option<u64>,
    pub max_attempts: Option<u32>,
    pub parallelism: Option<usize>,
    pub worker_token: Option<String>,
    pub api_token: Option<String>,
    /// Without a worker token the tests pass `--insecure-workers` so that plain worker
    /// processes can join; `secure_default` starts the coordinator as a user would, without it.
    pub secure_default: bool,
    /// More arguments for `gamesolver serve` (limits, quotas).
    pub extra_args: Vec<String>,
    /// Extra environment of the coordinator (its local worker children inherit it).
    pub env: Vec<(String, String)>,
}

impl Coordinator {
    /// Starts `gamesolver serve` on `db` and waits until it answers `/healthz`.
    pub fn start(db: &Path, o: &CoordOpts) -> Coordinator {
        let port = o.port.unwrap_or_else(free_port);
        let mut cmd = Command::new(bin("gamesolver"));
        cmd.arg("serve")
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .arg("--db")
            .arg(db)
            .args(["--local-workers", &o.local_workers.to_string()]);
        if let Some(l) = o.lease_ms {
            cmd.args(["--lease-ms", &l.to_string()]);
        }
        if let Some(a) = o.max_attempts {
            cmd.args(["--max-attempts", &a.to_string()]);
        }
        if let Some(p) = o.parallelism {
            cmd.args(["--parallelism", &p.to_string()]);
        }
        cmd.args(&o.extra_args);
        if o.worker_token.is_none() && !o.secure_default {
            cmd.arg("--insecure-workers");
        }
        cmd.env_remove("GAMESOLVER_WORKER_TOKEN")
            .env_remove("GAMESOLVER_API_TOKEN");
        if let Some(t) = &o.worker_token {
            cmd.env("GAMESOLVER_WORKER_TOKEN", t);
        }
        if let Some(t) = &o.api_token {
            cmd.env("GAMESOLVER_API_TOKEN", t);
        }
        cmd.env("RUST_LOG", "error");
        for (k, v) in &o.env {
            cmd.env(k, v);
        }
        cmd.stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("spawn gamesolver serve");
        // Drain stdout so the process never blocks on a full pipe.
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let proc = Proc {
            child,
            name: format!("coordinator :{port}"),
        };
        let url = format!("http://127.0.0.1:{port}");
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("coordinator printed no 'listening' line");
        let c = Coordinator {
            proc,
            url,
            port,
            listening_at: Instant::now(),
        };
        assert!(
            line.contains("listening on"),
            "unexpected first line: {line}"
        );
        wait_until(Duration::from_secs(30), "coordinator healthy", || {
            http("GET", &format!("{}/healthz", c.url), None, None).0 == 200
        });
        c
    }

    /// Starts a coordinator on a fresh database in the scratch directory `name` ([`scratch`]).
    pub fn fresh(name: &str, o: &CoordOpts) -> Coordinator {
        Coordinator::start(&scratch(name).join("db.sqlite"), o)
    }

    /// Starts `n` worker processes of `threads` slots each and waits until the coordinator
    /// lists them all (with the workers it listed before).
    pub fn start_workers(&self, n: usize, threads: usize) -> Vec<Proc> {
        let before = self.workers();
        let procs: Vec<Proc> = (0..n)
            .map(|_| start_worker(&self.url, threads, &[]))
            .collect();
        wait_until(
            Duration::from_secs(30),
            &format!("{n} more workers registered"),
            || self.workers() >= before + n,
        );
        procs
    }

    /// GET `path` (with the API token `token`).
    pub fn get(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        http("GET", &format!("{}{path}", self.url), None, token)
    }

    /// POST `body` to `path`.
    pub fn post(&self, path: &str, body: &Value, token: Option<&str>) -> (u16, Value) {
        http("POST", &format!("{}{path}", self.url), Some(body), token)
    }

    /// Submits a job; panics unless it is accepted. Returns its id.
    pub fn submit(&self, job: &Value, token: Option<&str>) -> u64 {
        let (code, v) = self.post("/v1/jobs", job, token);
        assert_eq!(code, 201, "submit {job}: {v}");
        v["id"].as_u64().expect("id")
    }

    /// Waits until job `id` has ended; returns its status.
    pub fn wait_job(&self, id: u64, timeout: Duration) -> Value {
        self.wait_job_polling(id, timeout, Duration::from_millis(50))
    }

    /// [`Coordinator::wait_job`], polling the status every `every`.
    pub fn wait_job_polling(&self, id: u64, timeout: Duration, every: Duration) -> Value {
        let mut last = Value::Null;
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            let (code, v) = self.get(&format!("/v1/jobs/{id}"), None);
            if code == 200 && matches!(v["state"].as_str(), Some("done" | "failed" | "cancelled")) {
                return v;
            }
            last = v;
            std::thread::sleep(every);
        }
        panic!("job {id} did not end within {timeout:?}; last status: {last}");
    }

    /// Number of workers in `/v1/status`.
    pub fn workers(&self) -> usize {
        self.get("/v1/status", None).1["workers"]
            .as_array()
            .map_or(0, |w| w.len())
    }

    /// Value of a Prometheus sample.
    pub fn metric(&self, name: &str) -> f64 {
        let text = raw("GET", &format!("{}/metrics", self.url), None, None).1;
        text.lines()
            .find_map(|l| {
                l.strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix(' '))
                    .and_then(|v| v.trim().parse().ok())
            })
            .unwrap_or_else(|| panic!("metric {name} missing"))
    }
}

/// Starts `gamesolver-worker` against `url` with `threads` slots and extra environment.
pub fn start_worker(url: &str, threads: usize, env: &[(&str, &str)]) -> Proc {
    start_worker_with(url, threads, env, &[])
}

/// [`start_worker`] with more command-line arguments (`--memory-mb`, ...).
pub fn start_worker_with(url: &str, threads: usize, env: &[(&str, &str)], args: &[&str]) -> Proc {
    let mut cmd = Command::new(bin("gamesolver-worker"));
    cmd.args(["--coordinator", url, "--threads", &threads.to_string()])
        .args(args)
        .env("RUST_LOG", "error")
        .env("RUST_BACKTRACE", "0")
        .env_remove("GAMESOLVER_TEST_PANIC_POSITION")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("spawn gamesolver-worker");
    Proc {
        name: format!("worker pid {}", child.id()),
        child,
    }
}

/// The ids of the live processes whose parent is `pid` (from `/proc`; Linux).
pub fn child_pids(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| proc_stat(p).is_some_and(|(state, ppid)| ppid == pid && state != 'Z'))
        .collect()
}

/// Whether process `pid` exists and is not a zombie (a killed child that nobody reaped yet).
pub fn process_alive(pid: u32) -> bool {
    proc_stat(pid).is_some_and(|(state, _)| state != 'Z')
}

/// State letter and parent id of `pid`, from `/proc/PID/stat`.
fn proc_stat(pid: u32) -> Option<(char, u32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let mut it = rest.split_whitespace();
    let state = it.next()?.chars().next()?;
    let ppid = it.next()?.parse().ok()?;
    Some((state, ppid))
}

/// An HTTP request; returns (status, body text). Status 0: no connection.
pub fn raw(method: &str, url: &str, body: Option<&str>, token: Option<&str>) -> (u16, String) {
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(60))
        .build();
    let mut req = agent.request(method, url);
    if let Some(t) = token {
        req = req.set("Authorization", &format!("Bearer {t}"));
    }
    let r = match body {
        Some(b) => req.set("Content-Type", "application/json").send_string(b),
        None => req.call(),
    };
    match r {
        Ok(resp) => {
            let code = resp.status();
            (code, resp.into_string().unwrap_or_default())
        }
        Err(ureq::Error::Status(code, resp)) => (code, resp.into_string().unwrap_or_default()),
        Err(_) => (0, String::new()),
    }
}

/// A `POST` that declares a `Content-Length` of `declared` bytes and `Expect: 100-continue`,
/// as curl does for large bodies, and sends no body unless the server answers `100 Continue`
/// (then it sends `declared` bytes of spaces). Returns the first final status and its body text.
pub fn post_expecting_continue(url: &str, declared: usize, token: Option<&str>) -> (u16, String) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut s = std::net::TcpStream::connect(host).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{auth}\
         Content-Length: {declared}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
        let text = String::from_utf8_lossy(&got);
        if text.starts_with("HTTP/1.1 100") && text.contains("\r\n\r\n") {
            // The server wants the body: send it, and read the answer that follows.
            got.clear();
            let chunk = vec![b' '; 64 << 10];
            let mut left = declared;
            while left > 0 {
                let n = left.min(chunk.len());
                if s.write_all(&chunk[..n]).is_err() {
                    break;
                }
                left -= n;
            }
        }
    }
    split_response(&got)
}

/// An HTTP/1.1 answer read to its end: its status (0 if there is none) and its body.
pub fn split_response(raw: &[u8]) -> (u16, String) {
    let text = String::from_utf8_lossy(raw);
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (code, body)
}

/// An HTTP request with a JSON body and answer; a non-JSON answer becomes `Value::String`.
pub fn http(method: &str, url: &str, body: Option<&Value>, token: Option<&str>) -> (u16, Value) {
    let text = body.map(|b| b.to_string());
    let (code, answer) = raw(method, url, text.as_deref(), token);
    let v = serde_json::from_str(&answer).unwrap_or(Value::String(answer));
    (code, v)
}

/// Polls `cond` every 20 ms until it holds; panics after `timeout` naming `what`.
pub fn wait_until(timeout: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + timeout;
    while Instant::now() < end {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("timed out after {timeout:?} waiting for: {what}");
}

/// The value of `job` computed in this process through the same registry and planner
/// (`plan::run_local`): the reference the service must agree with.
pub fn local_value(job: &Value) -> Value {
    local_result(job)["value"].clone()
}

/// The whole result of `job` computed in this process (as [`local_value`]), as JSON.
pub fn local_result(job: &Value) -> Value {
    let spec: gamesolver_shared::wire::JobSpec =
        serde_json::from_value(job.clone()).expect("job spec");
    let prepared = gamesolver_shared::registry::prepare(&spec).expect("valid job");
    let ctl = gamesolver_shared::search::Control::unlimited();
    let r = gamesolver_shared::plan::run_local(&*prepared, &ctl).expect("local run");
    serde_json::to_value(r).expect("a result is JSON")
}

/// Latency samples of one kind of request.
#[derive(Clone, Debug, Default)]
pub struct Latencies {
    /// Each answered request's round trip, in milliseconds.
    pub ms: Vec<f64>,
    /// Requests that got no answer (no connection, or a status other than the expected).
    pub failed: usize,
}

impl Latencies {
    /// The `p` quantile (0..=1) in milliseconds; 0 with no sample.
    pub fn quantile(&self, p: f64) -> f64 {
        let mut v = self.ms.clone();
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            return 0.0;
        }
        v[((v.len() as f64 - 1.0) * p).round() as usize]
    }
    fn add(&mut self, t: Instant, ok: bool) {
        if ok {
            self.ms.push(t.elapsed().as_secs_f64() * 1e3);
        } else {
            self.failed += 1;
        }
    }
}

/// Opens `n` TCP connections to `url`'s host that never send a byte (a slow or idle client
/// holding sockets), giving up on the first that cannot be opened. Dropping them closes them.
pub fn idle_connections(url: &str, n: usize) -> Vec<std::net::TcpStream> {
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        match std::net::TcpStream::connect_timeout(
            &host.parse().expect("a host:port URL"),
            Duration::from_secs(2),
        ) {
            Ok(s) => out.push(s),
            Err(_) => break,
        }
    }
    out
}

/// `clients` threads each GET `path` in a loop until `stop` is set; returns their handles
/// (each yields how many requests it made).
pub fn pollers(
    url: &str,
    path: &str,
    clients: usize,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Vec<std::thread::JoinHandle<usize>> {
    (0..clients)
        .map(|_| {
            let (url, path, stop) = (url.to_string(), path.to_string(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = raw("GET", &format!("{url}{path}"), None, None);
                    n += 1;
                }
                n
            })
        })
        .collect()
}

/// `count` GETs of `path`, one every `every`, each timed.
pub fn time_gets(url: &str, path: &str, count: usize, every: Duration) -> Latencies {
    let mut l = Latencies::default();
    for _ in 0..count {
        let t = Instant::now();
        let (code, _) = raw("GET", &format!("{url}{path}"), None, None);
        l.add(t, code == 200);
        std::thread::sleep(every);
    }
    l
}

/// Acts as a worker holding `token`: registers, leases one task (one must be queued), and
/// times `count` heartbeats on it, one every `every`; then releases the lease.
pub fn time_heartbeats(url: &str, token: &str, count: usize, every: Duration) -> Latencies {
    let post =
        |path: &str, body: Value| http("POST", &format!("{url}{path}"), Some(&body), Some(token));
    let (code, reg) = post(
        "/v1/worker/register",
        serde_json::json!({"host": "latency-probe", "threads": 1}),
    );
    assert_eq!(code, 200, "register: {reg}");
    let wid = reg["worker_id"].clone();
    let (code, lease) = post(
        "/v1/worker/lease",
        serde_json::json!({"worker_id": wid, "wait_ms": 10_000}),
    );
    assert_eq!(code, 200, "no task to lease: {lease}");
    let lid = lease["lease_id"].clone();
    let mut l = Latencies::default();
    for _ in 0..count {
        let t = Instant::now();
        let (code, _) = post(
            "/v1/worker/heartbeat",
            serde_json::json!({"worker_id": wid, "lease_id": lid}),
        );
        l.add(t, code == 200);
        std::thread::sleep(every);
    }
    let _ = post(
        "/v1/worker/release",
        serde_json::json!({"worker_id": wid, "lease_id": lid}),
    );
    l
}

/// Resident memory of a process in MiB (`VmRSS` of `/proc/PID/status`).
pub fn rss_mib(pid: u32) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// Peak resident memory (KiB) and CPU seconds of process `pid`, from /proc.
pub fn usage(pid: u32) -> (u64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command (which may hold spaces): utime and stime are 14 and 15.
    let rest = stat.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    (hwm, ticks / 100.0)
}

/// For the examples (`cargo run --example ...`): they live in `target/<profile>/examples`, so
/// the binaries under test are one level up, unless `GAMESOLVER_BIN_DIR` says otherwise.
pub fn use_binaries_beside_examples() {
    if std::env::var("GAMESOLVER_BIN_DIR").is_err() {
        let exe = std::env::current_exe().expect("current exe");
        let dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>")
            .to_path_buf();
        std::env::set_var("GAMESOLVER_BIN_DIR", dir);
    }
}

/// A job of `tasks` cheap tasks: NRPA level 1 on Weak Schur with shared top-level iterations,
/// each iteration a task (rounds of two). For load tests of jobs with many tasks.
pub fn many_task_job(tasks: u32) -> Value {
    serde_json::json!({"game": "weakschur", "algorithm": "nrpa",
        "options": {"level": 1, "iterations": tasks, "across": "shared", "runs": 2, "seed": 1}})
}

/// An explicit tree (the `tree` game's JSON) of about `bytes` bytes: MAX over MIN nodes of 200
/// pseudo-random leaves in 0..1000 each, different for each `seed`. For jobs of a given size.
pub fn big_tree(bytes: usize, seed: u64) -> String {
    let mut s = String::from("{\"max\":[");
    let mut k = seed;
    while s.len() + 1200 < bytes {
        if !s.ends_with('[') {
            s.push(',');
        }
        s.push_str("{\"min\":[");
        for i in 0..200 {
            k = k
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if i > 0 {
                s.push(',');
            }
            s.push_str(&((k >> 33) % 1000).to_string());
        }
        s.push_str("]}");
    }
    s.push_str("]}");
    s
}
