//! The coordinator's quotas and job reads over HTTP, against a real `gamesolver serve` on
//! loopback with a real SQLite file: quotas answer 429 (or 400) with a JSON error naming the
//! limit, a big position is not copied into every status, a finished job's tasks are paged, and
//! a job without a proof certificate answers 404 at `/proof`.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Serve {
    child: Child,
    url: String,
    dir: std::path::PathBuf,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts `gamesolver serve` on a free loopback port with a fresh store and `args`.
fn serve(name: &str, args: &[&str]) -> Serve {
    let dir = std::env::temp_dir().join(format!("gs-limits-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gamesolver"))
        .args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(dir.join("gs.db"))
        .args(args)
        .env("RUST_LOG", "error")
        .env_remove("GAMESOLVER_API_TOKEN")
        .env_remove("GAMESOLVER_WORKER_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start gamesolver serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_string();
    Serve { child, url, dir }
}

/// `(status, body as JSON)` of a request; error statuses are answers too.
fn call(method: &str, url: &str, body: Option<&Value>) -> (u16, Value) {
    let req = ureq::request(method, url).timeout(Duration::from_secs(30));
    let res = match body {
        Some(b) => req.send_json(b.clone()),
        None => req.call(),
    };
    let resp = match res {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{method} {url}: {e}"),
    };
    let code = resp.status();
    let text = resp.into_string().unwrap();
    (
        code,
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}")),
    )
}

/// The resident set of process `pid` in kB (Linux).
fn rss_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// A min-max tree as JSON of about `bytes` bytes: a MAX root over MIN nodes of 100 leaves.
fn tree(bytes: usize) -> String {
    let mut out = String::from("{\"max\":[");
    let mut i = 0u64;
    while out.len() < bytes {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"min\":[");
        for j in 0..100 {
            if j > 0 {
                out.push(',');
            }
            out.push_str(&((i * 7 + j * 13) % 1000).to_string());
        }
        out.push_str("]}");
        i += 1;
    }
    out.push_str("]}");
    out
}

fn assert_quota(code: u16, body: &Value, limit: &str) {
    assert_eq!(code, 429, "{body}");
    assert_eq!(body["error"]["code"], "quota", "{body}");
    let m = body["error"]["message"].as_str().unwrap();
    assert!(m.contains(limit), "{m}");
}

/// Jobs past `--max-queued-jobs` get 429 naming it; a plan past `--max-tasks-per-job` gets 400
/// naming it. Nothing is stored for a refused job.
#[test]
fn quotas_answer_with_the_limit_named() {
    let s = serve(
        "queued",
        &["--max-queued-jobs", "2", "--max-tasks-per-job", "10"],
    );
    let jobs = format!("{}/v1/jobs", s.url);
    let job = json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"});
    for _ in 0..2 {
        assert_eq!(call("POST", &jobs, Some(&job)).0, 201);
    }
    let (code, body) = call("POST", &jobs, Some(&job));
    assert_quota(code, &body, "max-queued-jobs");
    let mcts = json!({"game": "tictactoe", "algorithm": "mcts",
                      "options": {"tasks": 11, "trees": 11, "playouts": 100}});
    let (code, body) = call("POST", &jobs, Some(&mcts));
    assert_eq!(code, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max-tasks-per-job"),
        "{body}"
    );
    let (_, list) = call("GET", &jobs, None);
    assert_eq!(list["jobs"].as_array().unwrap().len(), 2, "{list}");
}

/// Twenty queued 0.93 MB tree jobs: each status shows the position cut with its length (not
/// the megabyte), the coordinator's memory grows by a bounded amount (printed), and a job past
/// `--max-position-bytes` gets 429 naming it.
#[test]
fn big_positions_are_held_once_and_within_the_byte_quota() {
    let position = tree(930_000);
    let budget = 21 * position.len();
    let s = serve("bytes", &["--max-position-bytes", &budget.to_string()]);
    let pid = s.child.id();
    let jobs = format!("{}/v1/jobs", s.url);
    let job = json!({"game": "tree", "position": position, "algorithm": "minimax"});
    let before = rss_kb(pid);
    let mut ids = Vec::new();
    for _ in 0..20 {
        let (code, body) = call("POST", &jobs, Some(&job));
        assert_eq!(code, 201, "{body}");
        ids.push(body["id"].as_u64().unwrap());
    }
    let after = rss_kb(pid);
    let t0 = Instant::now();
    for id in &ids {
        let (code, st) = call("GET", &format!("{jobs}/{id}"), None);
        assert_eq!(code, 200);
        assert_eq!(st["position_bytes"], position.len(), "{}", st["job"]);
        assert!(
            st.to_string().len() < 10_000,
            "the status copies the position"
        );
    }
    let polled = t0.elapsed() / ids.len() as u32;
    let polled_rss = rss_kb(pid);
    eprintln!(
        "coordinator RSS: {before:?} kB at start, {after:?} kB with 20 queued {} byte tree jobs, {polled_rss:?} kB after polling each; status GET {polled:?}",
        position.len()
    );
    // Held: each spec once, no prepared tree while queued (they cost 26 MB each, 580 MB for
    // the twenty before); what remains is mostly the allocator keeping request buffers.
    if let (Some(a), Some(b)) = (before, after) {
        assert!(b - a < 300_000, "{a} kB -> {b} kB for 20 queued jobs");
    }
    let (code, body) = call("POST", &jobs, Some(&job));
    assert_eq!(code, 201, "the 21st fits: {body}");
    let (code, body) = call("POST", &jobs, Some(&job));
    assert_quota(code, &body, "max-position-bytes");
}

/// A job that ends through a local worker: its status, every task paged at
/// `/v1/jobs/{id}/tasks`, a 404 JSON error at `/proof` (no certificate asked for), and JSON
/// errors for a missing job or a bad page query.
#[test]
fn a_finished_job_pages_its_tasks_and_has_no_proof() {
    let s = serve("finished", &["--local-workers", "1", "--parallelism", "2"]);
    let jobs = format!("{}/v1/jobs", s.url);
    let job = json!({"game": "connect4", "position": "4453", "algorithm": "alphabeta",
                     "options": {"depth": 6}});
    let (code, body) = call("POST", &jobs, Some(&job));
    assert_eq!(code, 201, "{body}");
    let id = body["id"].as_u64().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let st = loop {
        let (_, st) = call("GET", &format!("{jobs}/{id}"), None);
        if matches!(st["state"].as_str(), Some("done" | "failed" | "cancelled")) {
            break st;
        }
        assert!(Instant::now() < deadline, "the job did not end: {st}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(st["state"], "done", "{st}");
    let total = st["tasks"]["total"].as_u64().unwrap();
    assert!(total >= 1, "{st}");
    // Pages of one task: each task once, in id order, as many as the status counts.
    let mut after = 0u64;
    let mut seen = Vec::new();
    for _ in 0..=total {
        let (code, page) = call(
            "GET",
            &format!("{jobs}/{id}/tasks?limit=1&after={after}"),
            None,
        );
        assert_eq!(code, 200, "{page}");
        for t in page["tasks"].as_array().unwrap() {
            seen.push(t["id"].as_u64().unwrap());
            assert!(t["what"].as_str().is_some_and(|w| !w.is_empty()), "{t}");
        }
        match page["next_after"].as_u64() {
            Some(n) => after = n,
            None => break,
        }
    }
    assert_eq!(seen.len() as u64, total, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    let (code, body) = call("GET", &format!("{jobs}/{id}/proof"), None);
    assert_eq!(code, 404, "{body}");
    assert_eq!(body["error"]["code"], "not_found", "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no proof"));
    let (code, body) = call("GET", &format!("{jobs}/999/tasks"), None);
    assert_eq!(code, 404, "{body}");
    let (code, body) = call("GET", &format!("{jobs}/{id}/tasks?after=x"), None);
    assert_eq!(code, 400, "{body}");
    // The finished status answers the same result again (from the store once evicted).
    let (_, again) = call("GET", &format!("{jobs}/{id}"), None);
    assert_eq!(again["result"], st["result"]);
    assert_eq!(again["tasks"]["total"], st["tasks"]["total"]);
}

/// The memory figure for many small jobs (`cargo test --release -p gamesolver --test limits --
/// --ignored --nocapture`): 10,000 queued tic-tac-toe jobs.
#[test]
#[ignore = "a figure for the report, about half a minute"]
fn memory_with_ten_thousand_queued_small_jobs() {
    let s = serve("many", &["--max-queued-jobs", "10000"]);
    let jobs = format!("{}/v1/jobs", s.url);
    let pid = s.child.id();
    let before = rss_kb(pid);
    let t0 = Instant::now();
    for i in 0..10_000 {
        let job = json!({"game": "tictactoe", "position": format!("{}", 1 + i % 9), "algorithm": "alphabeta"});
        let (code, body) = call("POST", &jobs, Some(&job));
        assert_eq!(code, 201, "{body}");
    }
    let after = rss_kb(pid);
    let (code, body) = call(
        "POST",
        &jobs,
        Some(&json!({"game": "tictactoe", "algorithm": "alphabeta"})),
    );
    assert_quota(code, &body, "max-queued-jobs");
    eprintln!(
        "coordinator RSS: {before:?} kB at start, {after:?} kB with 10,000 queued small jobs (submitted in {:?})",
        t0.elapsed()
    );
}

/// A proof certificate posted with a result is kept apart: the job's result has none and
/// `GET /v1/jobs/{id}/proof` returns it. The worker here is this test, over HTTP, running the
/// real kernel and attaching a certificate to its output.
#[test]
fn a_reported_proof_is_served_at_its_own_endpoint() {
    use gamesolver_shared::registry;
    use gamesolver_shared::search::Control;
    use gamesolver_shared::wire::protocol::Lease;
    let s = serve("proof", &["--insecure-workers"]);
    let jobs = format!("{}/v1/jobs", s.url);
    let job = json!({"game": "tictactoe", "position": "15", "algorithm": "pns",
                     "options": {"target": "0", "proof": true}});
    let (code, body) = call("POST", &jobs, Some(&job));
    assert_eq!(code, 201, "{body}");
    let id = body["id"].as_u64().unwrap();
    let (code, reg) = call(
        "POST",
        &format!("{}/v1/worker/register", s.url),
        Some(&json!({"host": "test", "threads": 1})),
    );
    assert_eq!(code, 200, "{reg}");
    let worker = reg["worker_id"].as_str().unwrap().to_string();
    let (code, lease) = call(
        "POST",
        &format!("{}/v1/worker/lease", s.url),
        Some(&json!({"worker_id": worker, "wait_ms": 1000})),
    );
    assert_eq!(code, 200, "{lease}");
    let lease: Lease = serde_json::from_value(lease).unwrap();
    assert!(!lease.store_id.is_empty(), "the lease names the store");
    // The kernel's own certificate (the coordinator verifies it before storing the result).
    let output = registry::prepare(&lease.task.job)
        .unwrap()
        .run(&lease.task.kind, &Control::with_limits(None, None))
        .unwrap();
    let certificate = output
        .proof
        .clone()
        .expect("proof=true gives a certificate");
    let (code, body) = call(
        "POST",
        &format!("{}/v1/worker/result", s.url),
        Some(&json!({"worker_id": worker, "lease_id": lease.lease_id,
                     "outcome": {"status": "done", "output": output}})),
    );
    assert_eq!(code, 200, "{body}");
    // The plan's final step runs off the scheduler's lock, a moment after the last result.
    let mut st = json!(null);
    for _ in 0..200 {
        st = call("GET", &format!("{jobs}/{id}"), None).1;
        if st["state"] != "running" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(st["state"], "done", "{st}");
    assert!(st["result"].get("proof").is_none(), "{st}");
    let (code, proof) = call("GET", &format!("{jobs}/{id}/proof"), None);
    assert_eq!(code, 200, "{proof}");
    assert_eq!(proof, certificate);
}
