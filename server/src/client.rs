//! The client side of the HTTP API, for `gamesolver solve --coordinator URL`: submit a job,
//! follow it until it ends, return its result.
//!
//! Following: the client reads the job's Server-Sent Events (`GET /v1/jobs/{id}/events`, one
//! `status` event per change, then `end`), so progress arrives as it happens and an idle job
//! costs no requests. When the stream drops (a proxy timeout, a coordinator restart), the client
//! reads the status once, waits [`POLL_EVERY`] (doubling up to [`POLL_MAX`]) and opens the stream
//! again; after [`STREAM_FAILURES`] streams in a row that end without any event, it polls the
//! status every [`POLL_EVERY`] instead (a proxy that does not pass event streams).
//!
//! Errors keep the CLI's distinction: a job the coordinator refuses as invalid (400) is
//! [`RemoteError::BadInput`] (exit status 2); an unreachable coordinator, a refused token or a
//! job that failed or was cancelled is [`RemoteError::NoResult`] (exit status 1).

use gamesolver_shared::wire::{JobResult, JobSpec};
use serde_json::Value;
use std::time::Duration;

/// Wait before reopening a dropped event stream, and the polling interval of the fallback.
pub const POLL_EVERY: Duration = Duration::from_millis(250);
/// Longest wait between attempts to reopen the stream.
pub const POLL_MAX: Duration = Duration::from_secs(4);
/// Streams in a row that give no event at all before the client falls back to polling.
pub const STREAM_FAILURES: u32 = 3;
/// Read timeout of the event stream: the coordinator sends a keep-alive every 15 s.
pub const STREAM_READ_TIMEOUT: Duration = Duration::from_secs(45);

/// Why a remote job gave no result.
#[derive(Debug)]
pub enum RemoteError {
    /// The coordinator refused the job as invalid; the message names the problem.
    BadInput(String),
    /// Anything else: unreachable, unauthorized, failed, cancelled.
    NoResult(String),
}

fn call(
    agent: &ureq::Agent,
    req: ureq::Request,
    body: Option<&JobSpec>,
) -> Result<Value, RemoteError> {
    let _ = agent;
    let r = match body {
        Some(b) => req.send_json(b),
        None => req.call(),
    };
    answer(r, None)
}

/// The JSON answer of a request (made for `what`, named in the messages when given): a 400 or
/// 413 is bad input (its message), anything else that is not a success is no result.
pub fn answer(
    r: Result<ureq::Response, ureq::Error>,
    what: Option<&str>,
) -> Result<Value, RemoteError> {
    match r {
        Ok(resp) => resp
            .into_json()
            .map_err(|e| RemoteError::NoResult(format!("bad answer from coordinator: {e}"))),
        Err(ureq::Error::Status(code, resp)) => {
            let v: Value = resp.into_json().unwrap_or(Value::Null);
            let msg = v["error"]["message"].as_str().unwrap_or("no message");
            match (code, what) {
                (400 | 413, None) => Err(RemoteError::BadInput(msg.to_string())),
                (400 | 413, Some(w)) => Err(RemoteError::BadInput(format!("{w}: {msg}"))),
                (_, None) => Err(RemoteError::NoResult(format!(
                    "coordinator answered {code}: {msg}"
                ))),
                (_, Some(w)) => Err(RemoteError::NoResult(format!(
                    "coordinator answered {code} to {w}: {msg}"
                ))),
            }
        }
        Err(e) => Err(RemoteError::NoResult(format!(
            "cannot reach the coordinator: {e}"
        ))),
    }
}

/// A client of the coordinator at `url`, with `GAMESOLVER_API_TOKEN` when set; a URL that is
/// not http(s) is bad input.
pub fn remote(url: &str) -> Result<Remote, RemoteError> {
    let base = url.trim_end_matches('/');
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(RemoteError::BadInput(format!(
            "--coordinator '{url}' must be an http:// URL"
        )));
    }
    let token = std::env::var("GAMESOLVER_API_TOKEN")
        .ok()
        .filter(|t| !t.is_empty());
    Ok(Remote::new(base, token))
}

/// Submits `job` to the coordinator at `url` (with `GAMESOLVER_API_TOKEN` when set) and follows
/// it until it ends, passing each new progress report to `on_progress`.
pub fn solve_remote(
    url: &str,
    job: &JobSpec,
    on_progress: &dyn Fn(Value),
) -> Result<JobResult, RemoteError> {
    solve_remote_job(url, job, on_progress).map(|(_, _, r)| r)
}

/// Like [`solve_remote`], also returning the client and the job's id (to fetch its proof
/// certificate with [`Remote::proof`]).
pub fn solve_remote_job(
    url: &str,
    job: &JobSpec,
    on_progress: &dyn Fn(Value),
) -> Result<(Remote, u64, JobResult), RemoteError> {
    let remote = remote(url)?;
    let base = remote.base.clone();
    let submitted = call(
        &remote.agent,
        remote.auth(remote.agent.post(&format!("{base}/v1/jobs"))),
        Some(job),
    )?;
    let id = submitted["id"].as_u64().ok_or_else(|| {
        RemoteError::NoResult(format!("the coordinator gave no job id: {submitted}"))
    })?;
    let result = follow(&remote, id, on_progress)?;
    Ok((remote, id, result))
}

/// A coordinator's address, token and HTTP agents.
pub struct Remote {
    base: String,
    token: Option<String>,
    /// Short requests (submit, status).
    agent: ureq::Agent,
    /// The event stream: no overall timeout, a read timeout above the keep-alive interval.
    stream_agent: ureq::Agent,
}

impl Remote {
    /// A client of the coordinator at `base` (no trailing slash).
    pub fn new(base: &str, token: Option<String>) -> Remote {
        Remote {
            base: base.to_string(),
            token,
            agent: ureq::AgentBuilder::new()
                .timeout(Duration::from_secs(30))
                .build(),
            stream_agent: ureq::AgentBuilder::new()
                .timeout_connect(Duration::from_secs(10))
                .timeout_read(STREAM_READ_TIMEOUT)
                .build(),
        }
    }

    /// A request to `path` of the coordinator, with the token.
    pub fn request(&self, method: &str, path: &str) -> ureq::Request {
        self.auth(self.agent.request(method, &format!("{}{path}", self.base)))
    }

    fn auth(&self, r: ureq::Request) -> ureq::Request {
        match &self.token {
            Some(t) => r.set("Authorization", &format!("Bearer {t}")),
            None => r,
        }
    }

    /// The proof certificate of job `id` (`GET /v1/jobs/{id}/proof`): `None` when the job has
    /// none (404).
    pub fn proof(&self, id: u64) -> Result<Option<Value>, RemoteError> {
        let url = format!("{}/v1/jobs/{id}/proof", self.base);
        match self.auth(self.agent.get(&url)).call() {
            Ok(resp) => resp.into_json().map(Some).map_err(|e| {
                RemoteError::NoResult(format!("job {id}: unreadable proof certificate: {e}"))
            }),
            Err(ureq::Error::Status(404, _)) => Ok(None),
            Err(ureq::Error::Status(code, resp)) => {
                let v: Value = resp.into_json().unwrap_or(Value::Null);
                let msg = v["error"]["message"].as_str().unwrap_or("no message");
                Err(RemoteError::NoResult(format!(
                    "coordinator answered {code} for the proof of job {id}: {msg}"
                )))
            }
            Err(e) => Err(RemoteError::NoResult(format!(
                "cannot reach the coordinator: {e}"
            ))),
        }
    }

    /// A board looked up in the set `name` that the coordinator built
    /// (`GET /v1/tables/{name}/lookup`): `{"score", "best", ...}`. A set it does not have is
    /// bad input, like a board it refuses.
    pub fn lookup(&self, name: &str, position: &str) -> Result<Value, RemoteError> {
        let url = format!("{}/v1/tables/{name}/lookup", self.base);
        match self
            .auth(self.agent.get(&url))
            .query("position", position)
            .call()
        {
            Ok(resp) => resp
                .into_json()
                .map_err(|e| RemoteError::NoResult(format!("bad answer from coordinator: {e}"))),
            Err(ureq::Error::Status(code, resp)) => {
                let v: Value = resp.into_json().unwrap_or(Value::Null);
                let msg = v["error"]["message"].as_str().unwrap_or("no message");
                if code == 400 || code == 404 {
                    Err(RemoteError::BadInput(format!("tables: {msg}")))
                } else {
                    Err(RemoteError::NoResult(format!(
                        "coordinator answered {code}: {msg}"
                    )))
                }
            }
            Err(e) => Err(RemoteError::NoResult(format!(
                "cannot reach the coordinator: {e}"
            ))),
        }
    }

    fn status(&self, id: u64) -> Result<Value, RemoteError> {
        call(
            &self.agent,
            self.auth(self.agent.get(&format!("{}/v1/jobs/{id}", self.base))),
            None,
        )
    }
}

/// What one status tells the follower.
// One value per status poll, matched and dropped: boxing the result would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Seen {
    Running,
    Ended(Result<JobResult, RemoteError>),
}

/// Handles one job status: reports new progress, and the result or the failure at the end.
fn seen(id: u64, st: &Value, last: &mut Value, on_progress: &dyn Fn(Value)) -> Seen {
    if st["progress"] != *last && !st["progress"].is_null() {
        *last = st["progress"].clone();
        on_progress(last.clone());
    }
    match st["state"].as_str() {
        Some("done") => Seen::Ended(
            serde_json::from_value(st["result"].clone())
                .map_err(|e| RemoteError::NoResult(format!("job {id}: unreadable result: {e}"))),
        ),
        Some(s @ ("failed" | "cancelled")) => {
            let why = st["error"].as_str().unwrap_or("no reason given");
            Seen::Ended(Err(RemoteError::NoResult(format!("job {id} {s}: {why}"))))
        }
        _ => Seen::Running,
    }
}

/// How a stream ended.
// One value per stream, matched and dropped: boxing the result would buy nothing.
#[allow(clippy::large_enum_variant)]
enum StreamEnd {
    /// The job ended.
    Ended(Result<JobResult, RemoteError>),
    /// The stream closed or failed; `events` says how many events it carried.
    Dropped { events: usize },
}

/// Follows job `id` until it ends: the event stream, with the fallbacks of the module doc.
pub fn follow(
    remote: &Remote,
    id: u64,
    on_progress: &dyn Fn(Value),
) -> Result<JobResult, RemoteError> {
    let mut last = Value::Null;
    let mut failures = 0u32;
    let mut wait = POLL_EVERY;
    loop {
        if failures < STREAM_FAILURES {
            match stream(remote, id, &mut last, on_progress)? {
                StreamEnd::Ended(r) => return r,
                StreamEnd::Dropped { events } => {
                    if events > 0 {
                        failures = 0;
                        wait = POLL_EVERY;
                    } else {
                        failures += 1;
                    }
                }
            }
        }
        // Between streams (or instead of them): the status, so an end is never missed.
        if let Seen::Ended(r) = seen(id, &remote.status(id)?, &mut last, on_progress) {
            return r;
        }
        if failures < STREAM_FAILURES {
            std::thread::sleep(wait);
            wait = (wait * 2).min(POLL_MAX);
        } else {
            std::thread::sleep(POLL_EVERY);
        }
    }
}

/// Reads the event stream of job `id` until the job ends or the stream drops. A refused
/// request (401, 404) is an error: polling would be refused the same way.
fn stream(
    remote: &Remote,
    id: u64,
    last: &mut Value,
    on_progress: &dyn Fn(Value),
) -> Result<StreamEnd, RemoteError> {
    use std::io::BufRead;
    let req = remote
        .auth(
            remote
                .stream_agent
                .get(&format!("{}/v1/jobs/{id}/events", remote.base)),
        )
        .set("Accept", "text/event-stream");
    let resp = match req.call() {
        Ok(r) => r,
        Err(ureq::Error::Status(code @ (401 | 403 | 404), resp)) => {
            let v: Value = resp.into_json().unwrap_or(Value::Null);
            let msg = v["error"]["message"].as_str().unwrap_or("no message");
            return Err(RemoteError::NoResult(format!(
                "coordinator answered {code}: {msg}"
            )));
        }
        Err(_) => return Ok(StreamEnd::Dropped { events: 0 }),
    };
    let mut reader = std::io::BufReader::new(resp.into_reader());
    let mut events = 0;
    let mut data = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return Ok(StreamEnd::Dropped { events }),
            Ok(_) => {}
        }
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            // End of an event: its data is one job status.
            if data.is_empty() {
                continue;
            }
            let st: Value = serde_json::from_str(&data).unwrap_or(Value::Null);
            data.clear();
            if st.is_null() {
                continue;
            }
            events += 1;
            if let Seen::Ended(r) = seen(id, &st, last, on_progress) {
                return Ok(StreamEnd::Ended(r));
            }
        } else if let Some(d) = l.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(d.strip_prefix(' ').unwrap_or(d));
        }
        // `event:`, `id:` and `:` keep-alive comments need nothing: the status says it all.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    const RESULT: &str = r#"{"game":"tictactoe","algorithm":"alphabeta","value":0,"best_move":"5","nodes":9,"elapsed_ms":1}"#;

    /// A fake coordinator for job 7: the event stream sends one `status` event then drops (or
    /// answers 500 when `stream_broken`); the status says `running` until `done_after` reads.
    fn fake(
        stream_broken: bool,
        done_after: usize,
    ) -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (streams, reads) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (s2, r2) = (streams.clone(), reads.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                loop {
                    let mut l = String::new();
                    if reader.read_line(&mut l).unwrap_or(0) == 0 || l == "\r\n" {
                        break;
                    }
                }
                let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
                let reply = if path == "/v1/jobs/7/events" {
                    s2.fetch_add(1, Ordering::SeqCst);
                    if stream_broken {
                        "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string()
                    } else {
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n: keep-alive\n\nevent: status\ndata: {\"id\":7,\"state\":\"running\",\"progress\":{\"lower\":-1,\"upper\":1}}\n\n".to_string()
                    }
                } else {
                    let n = r2.fetch_add(1, Ordering::SeqCst) + 1;
                    let body = if n >= done_after {
                        format!(
                            r#"{{"id":7,"state":"done","progress":{{"lower":0,"upper":0}},"result":{RESULT}}}"#
                        )
                    } else {
                        r#"{"id":7,"state":"running","progress":{"lower":-1,"upper":1}}"#
                            .to_string()
                    };
                    format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
                };
                let _ = conn.write_all(reply.as_bytes());
            }
        });
        (base, streams, reads)
    }

    #[test]
    fn a_dropped_stream_is_reopened_and_the_end_is_read_from_the_status() {
        let (base, streams, reads) = fake(false, 2);
        let seen = Mutex::new(Vec::new());
        let r = follow(&Remote::new(&base, None), 7, &|p| {
            seen.lock().unwrap().push(p)
        });
        let r = r.unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(r.value, serde_json::json!(0));
        assert!(
            streams.load(Ordering::SeqCst) >= 2,
            "the stream was reopened"
        );
        assert_eq!(
            reads.load(Ordering::SeqCst),
            2,
            "one status read per dropped stream"
        );
        let seen = seen.into_inner().unwrap();
        assert_eq!(
            seen,
            vec![
                serde_json::json!({"lower": -1, "upper": 1}),
                serde_json::json!({"lower": 0, "upper": 0})
            ],
            "each new progress once"
        );
    }

    #[test]
    fn without_a_working_stream_the_client_falls_back_to_polling() {
        let (base, streams, reads) = fake(true, 6);
        let r = follow(&Remote::new(&base, None), 7, &|_| {});
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(streams.load(Ordering::SeqCst), STREAM_FAILURES as usize);
        assert_eq!(reads.load(Ordering::SeqCst), 6);
    }
}

#[cfg(test)]
mod proof_tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    /// A fake coordinator that answers `GET /v1/jobs/7/proof` with a certificate and every
    /// other path with a 404 JSON error, for `answers` connections.
    fn fake(answers: usize) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for conn in listener.incoming().take(answers) {
                let Ok(mut conn) = conn else { return };
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                loop {
                    let mut l = String::new();
                    if reader.read_line(&mut l).unwrap_or(0) == 0 || l == "\r\n" {
                        break;
                    }
                }
                let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
                let (status, body) = if path == "/v1/jobs/7/proof" {
                    ("200 OK", r#"{"format":"gamesolver-proof/1","tree":[]}"#)
                } else {
                    (
                        "404 Not Found",
                        r#"{"error":{"code":"not_found","message":"no proof"}}"#,
                    )
                };
                let _ = write!(
                    conn,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        base
    }

    #[test]
    fn a_proof_is_fetched_and_a_missing_one_is_none() {
        let remote = Remote::new(&fake(2), None);
        let p = remote.proof(7).unwrap().expect("job 7 has a proof");
        assert_eq!(p["format"], "gamesolver-proof/1");
        assert!(remote.proof(8).unwrap().is_none());
    }
}
