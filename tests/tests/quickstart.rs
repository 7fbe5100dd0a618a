//! The README's "Run the service" block runs as written, with the binaries under test on PATH:
//! `serve` with local workers, curl submits a job, follows its event stream to the end and
//! reads the answer, then the coordinator is stopped. Only the port (a free one) and the folder
//! (a scratch one) differ from what a user types.

use gamesolver_e2e::*;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The first ```` ```sh ```` block after the heading `## Run the service`.
fn quick_start_block() -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let (_, rest) = text
        .split_once("\n## Run the service\n")
        .expect("README has a '## Run the service' section");
    let (_, rest) = rest.split_once("```sh\n").expect("a sh block in it");
    let (block, _) = rest.split_once("```").expect("the block ends");
    block.to_string()
}

#[test]
fn the_readme_quick_start_runs_as_written() {
    if Command::new("curl").arg("--version").output().is_err() {
        // The block is curl commands; a machine without curl cannot run it as written.
        println!("SKIPPED: no curl on this machine");
        return;
    }
    let block = quick_start_block();
    assert!(block.contains("8080"), "the block names port 8080: {block}");
    let port = free_port().to_string();
    let script = block.replace("8080", &port);
    let dir = scratch("quickstart");
    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(&dir)
        .env("PATH", path)
        .env_remove("GAMESOLVER_API_TOKEN")
        .env_remove("GAMESOLVER_WORKER_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the quick start did not end within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(
        status.success(),
        "exit {status}\nstdout:\n{out}\nstderr:\n{err}"
    );
    // What the README's comments say the user sees.
    assert!(out.contains("\"id\":1"), "{out}");
    assert!(
        out.contains("event:") || out.contains("data:"),
        "no events: {out}"
    );
    let last = out.lines().rev().find(|l| l.starts_with('{')).unwrap_or("");
    let status: serde_json::Value = serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("the last line is not the job's status ({e}): {out}"));
    assert_eq!(status["state"], "done", "{status}");
    assert_eq!(status["result"]["value"], -2, "{status}");
    // The coordinator said where its dashboard is.
    assert!(
        out.contains(&format!("dashboard: http://127.0.0.1:{port}/")),
        "{out}"
    );
    // `kill %1` stopped it: nothing listens any more.
    wait_until(Duration::from_secs(10), "the coordinator stopped", || {
        std::net::TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).is_err()
    });
}
