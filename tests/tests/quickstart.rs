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

/// docs/API.md's "Examples with curl" run as written against a coordinator with two local
/// workers (only the port differs): every request succeeds and answers what its comment says.
#[test]
fn the_api_curl_examples_run_as_written() {
    if Command::new("curl").arg("--version").output().is_err() {
        println!("SKIPPED: no curl on this machine");
        return;
    }
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/API.md"))
        .expect("docs/API.md");
    let (_, rest) = text
        .split_once("\n### 6.0 Examples with curl\n")
        .expect("API.md has '### 6.0 Examples with curl'");
    let (_, rest) = rest.split_once("```sh\n").expect("a sh block in it");
    let (block, _) = rest.split_once("```").expect("the block ends");
    assert!(block.contains("8080"), "{block}");
    let c = Coordinator::fresh(
        "api-curl",
        &CoordOpts {
            local_workers: 2,
            ..Default::default()
        },
    );
    let script = block.replace("8080", &c.port.to_string());
    let dir = scratch("api-curl-run");
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(&dir)
        .env_remove("GAMESOLVER_API_TOKEN")
        .output()
        .expect("bash");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    // curl prints each body as it comes, without a newline: a stream of JSON values, then the
    // metrics lines.
    let lines: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&stdout)
        .into_iter::<serde_json::Value>()
        .map_while(Result::ok)
        .collect();
    // Submitted 1, its status (done, with every move's score), its tasks, submitted 2, cancelled
    // 2, the job list, the options, the status.
    assert_eq!(lines[0]["id"], 1, "{stdout}");
    assert_eq!(lines[1]["state"], "done", "{stdout}");
    assert!(lines[1]["result"]["moves"].is_object(), "{stdout}");
    assert!(lines[2]["tasks"].is_array(), "{stdout}");
    assert_eq!(lines[3]["id"], 2, "{stdout}");
    assert_eq!(lines[4]["id"], 2, "{stdout}");
    assert!(lines[5]["jobs"].is_array(), "{stdout}");
    assert!(lines[6].is_object() && lines[7].is_object(), "{stdout}");
    for svg in ["board.svg", "plot.svg"] {
        let text = std::fs::read_to_string(dir.join(svg)).unwrap_or_default();
        assert!(text.contains("<svg"), "{svg}: {text}");
    }
    assert!(stdout.contains("gamesolver_jobs"), "{stdout}");
}
