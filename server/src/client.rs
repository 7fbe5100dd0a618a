//! The client side of the HTTP API, for `gamesolver solve --coordinator URL`: submit a job,
//! follow it until it ends, return its result.
//!
//! Errors keep the CLI's distinction: a job the coordinator refuses as invalid (400) is
//! [`RemoteError::BadInput`] (exit status 2); an unreachable coordinator, a refused token or a
//! job that failed or was cancelled is [`RemoteError::NoResult`] (exit status 1).

use gamesolver_shared::wire::{JobResult, JobSpec};
use serde_json::Value;
use std::time::Duration;

/// How often the client polls the job's status (progress updates and the end).
pub const POLL_EVERY: Duration = Duration::from_millis(100);

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
    match r {
        Ok(resp) => resp
            .into_json()
            .map_err(|e| RemoteError::NoResult(format!("bad answer from coordinator: {e}"))),
        Err(ureq::Error::Status(code, resp)) => {
            let v: Value = resp.into_json().unwrap_or(Value::Null);
            let msg = v["error"]["message"]
                .as_str()
                .unwrap_or("no message")
                .to_string();
            if code == 400 {
                Err(RemoteError::BadInput(msg))
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

/// Submits `job` to the coordinator at `url` (with `GAMESOLVER_API_TOKEN` when set) and waits
/// for its end, passing each new progress report to `on_progress`.
pub fn solve_remote(
    url: &str,
    job: &JobSpec,
    on_progress: &dyn Fn(Value),
) -> Result<JobResult, RemoteError> {
    let base = url.trim_end_matches('/');
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(RemoteError::BadInput(format!(
            "--coordinator '{url}' must be an http:// URL"
        )));
    }
    let token = std::env::var("GAMESOLVER_API_TOKEN")
        .ok()
        .filter(|t| !t.is_empty());
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(30))
        .build();
    let with_auth = |r: ureq::Request| match &token {
        Some(t) => r.set("Authorization", &format!("Bearer {t}")),
        None => r,
    };
    let submitted = call(
        &agent,
        with_auth(agent.post(&format!("{base}/v1/jobs"))),
        Some(job),
    )?;
    let id = submitted["id"].as_u64().ok_or_else(|| {
        RemoteError::NoResult(format!("the coordinator gave no job id: {submitted}"))
    })?;
    let mut last_progress = Value::Null;
    loop {
        let st = call(
            &agent,
            with_auth(agent.get(&format!("{base}/v1/jobs/{id}"))),
            None,
        )?;
        if st["progress"] != last_progress && !st["progress"].is_null() {
            last_progress = st["progress"].clone();
            on_progress(last_progress.clone());
        }
        match st["state"].as_str() {
            Some("done") => {
                return serde_json::from_value(st["result"].clone()).map_err(|e| {
                    RemoteError::NoResult(format!("job {id}: unreadable result: {e}"))
                })
            }
            Some("failed") | Some("cancelled") => {
                let why = st["error"].as_str().unwrap_or("no reason given");
                return Err(RemoteError::NoResult(format!(
                    "job {id} {}: {why}",
                    st["state"].as_str().unwrap_or("")
                )));
            }
            _ => std::thread::sleep(POLL_EVERY),
        }
    }
}
