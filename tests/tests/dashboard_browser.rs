//! End-to-end: the dashboard in a real headless Chromium against a real coordinator.
//!
//! Starts the coordinator (`gamesolver serve --local-workers 2` on a free loopback port, through
//! the e2e harness) and Chromium with `--remote-debugging-pipe`, driven by the DevTools protocol
//! (JSON messages separated by NUL bytes on file descriptors 3 and 4, which a shell `exec` maps
//! onto our pipes: no WebSocket client). The tests:
//! - through the page's form, an invalid job (the API's message on the page), then a real one
//!   followed to its result, with the plot and the board picture in the DOM and screenshots
//!   under `target/artifacts/`;
//! - the analysis board: a column of a Connect Four position near the end clicked with real
//!   mouse events; every move's score of the `analyse=all` job the page submits equals the
//!   API's answer and minus the plain exact value of the position after the move;
//! - a coordinator with an API token: the page asks for it after the first 401, shows the API's
//!   message for a wrong one, keeps the right one in `sessionStorage` and runs a job with it.
//!
//! Each fails on a console error, an uncaught exception, a failed request, or a request to
//! anything but the coordinator (the pages must work offline). Chromium is `$GAMESOLVER_CHROMIUM`,
//! else `chromium`, `chromium-browser`, `google-chrome` or `headless_shell` on `PATH` (Debian:
//! `apt-get install -y chromium`); without one the test prints a `SKIPPED` line and passes.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Longest wait for any one page condition (the machine may be loaded).
const WAIT: Duration = Duration::from_secs(60);

fn find_chromium() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("GAMESOLVER_CHROMIUM") {
        if !p.is_empty() {
            return Some(PathBuf::from(p));
        }
    }
    let path = std::env::var_os("PATH")?;
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "headless_shell",
    ] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

fn artifacts_dir() -> PathBuf {
    // tests/ is a workspace member: the workspace's target/ is one level up.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("artifacts");
    std::fs::create_dir_all(&dir).expect("create target/artifacts");
    dir
}

/// A real `gamesolver serve --local-workers 2` (the e2e harness's coordinator), requiring
/// `api_token` on the job endpoints when given.
fn start_coordinator(dir: &Path, api_token: Option<&str>) -> gamesolver_e2e::Coordinator {
    let opts = gamesolver_e2e::CoordOpts {
        local_workers: 2,
        api_token: api_token.map(str::to_string),
        ..Default::default()
    };
    gamesolver_e2e::Coordinator::start(&dir.join("dash.db"), &opts)
}

/// A DevTools protocol connection over Chromium's debugging pipe.
struct Browser {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    next_id: u64,
    session: String,
    /// Events seen so far (console, exceptions, network), in order.
    events: Vec<Value>,
}

impl Browser {
    fn launch(exe: &Path, profile: &Path) -> Browser {
        let flags = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--metrics-recording-only",
            "--hide-scrollbars",
            "--window-size=1280,1000",
            "--remote-debugging-pipe",
        ];
        // fd 3: what Chromium reads (our stdin pipe); fd 4: what it writes (our stdout pipe).
        let script = format!(
            "exec \"$0\" {} --user-data-dir=\"$1\" about:blank 3<&0 4>&1 </dev/null >/dev/null",
            flags.join(" ")
        );
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(exe)
            .arg(profile)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        let to = child.stdin.take().expect("stdin");
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(out);
            loop {
                let mut buf = Vec::new();
                match r.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if buf.last() == Some(&0) {
                            buf.pop();
                        }
                        if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                            if tx.send(v).is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        });
        let mut b = Browser {
            child,
            to,
            from: rx,
            next_id: 0,
            session: String::new(),
            events: Vec::new(),
        };
        let target = b.call("Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().expect("targetId").to_string();
        let attached = b.call(
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        );
        b.session = attached["sessionId"]
            .as_str()
            .expect("sessionId")
            .to_string();
        for domain in ["Runtime", "Log", "Network", "Page"] {
            b.call(&format!("{domain}.enable"), json!({}));
        }
        b
    }

    /// Sends a command (to the page's session once attached) and waits for its answer.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        let mut bytes = serde_json::to_vec(&msg).expect("json");
        bytes.push(0);
        self.to.write_all(&bytes).expect("write to chromium");
        self.to.flush().expect("flush");
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from.recv_timeout(left) {
                Ok(v) if v["id"].as_u64() == Some(id) => {
                    if let Some(e) = v.get("error") {
                        panic!("{method} failed: {e}");
                    }
                    return v["result"].clone();
                }
                Ok(v) => {
                    if v.get("method").is_some() {
                        self.events.push(v);
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("{method}: no answer from chromium"),
                Err(RecvTimeoutError::Disconnected) => panic!("{method}: chromium went away"),
            }
        }
    }

    /// Evaluates `expr` in the page (promises awaited) and returns its JSON value.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(ex) = r.get("exceptionDetails") {
            panic!("page script failed: {expr}: {ex}");
        }
        r["result"]["value"].clone()
    }

    /// Waits until `expr` is truthy; panics with `what` and the last value after [`WAIT`].
    fn wait_for(&mut self, what: &str, expr: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        // While a page loads, its document may be half there: a throw means "not yet".
        let guarded =
            format!("(() => {{ try {{ return ({expr}); }} catch (e) {{ return null; }} }})()");
        loop {
            let v = self.eval(&guarded);
            let truthy =
                !matches!(v, Value::Null | Value::Bool(false)) && v != json!(0) && v != json!("");
            if truthy {
                return v;
            }
            if Instant::now() > deadline {
                let body = self.eval("document.body.innerText.slice(0, 2000)");
                panic!("timed out waiting for {what}; page says: {body}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn screenshot(&mut self, path: &Path) {
        let r = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        );
        let data = decode_base64(r["data"].as_str().expect("screenshot data"));
        assert!(data.starts_with(b"\x89PNG"), "screenshot is a PNG");
        std::fs::write(path, data).expect("write screenshot");
        println!("screenshot: {}", path.display());
    }

    /// Drains pending events (so that late console messages are seen).
    fn settle(&mut self) {
        self.eval("new Promise(ok => setTimeout(() => ok(true), 300))");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn decode_base64(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => continue,
        } as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// Problems the page's events show: console errors, uncaught exceptions, failed requests,
/// and requests to anything but `base`. `expected_400` are URL fragments whose 400 answers
/// are part of the test (the invalid submission and its preview).
fn problems(events: &[Value], base: &str, expected_400: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut urls: HashMap<String, String> = HashMap::new();
    for e in events {
        let p = &e["params"];
        match e["method"].as_str().unwrap_or("") {
            "Runtime.consoleAPICalled" if p["type"] == "error" || p["type"] == "assert" => {
                out.push(format!("console.{}: {}", p["type"], p["args"]))
            }
            "Runtime.exceptionThrown" => out.push(format!("exception: {}", p["exceptionDetails"])),
            "Log.entryAdded" if p["entry"]["level"] == "error" => {
                let entry = &p["entry"];
                let url = entry["url"].as_str().unwrap_or("");
                // The browser logs every 4xx answer; the expected ones are not problems.
                let expected = entry["source"] == "network"
                    && expected_400.iter().any(|f| url.contains(f))
                    && entry["text"].as_str().unwrap_or("").contains("400");
                if !expected {
                    out.push(format!("log: {} {}", entry["text"], url));
                }
            }
            "Network.requestWillBeSent" => {
                let url = p["request"]["url"].as_str().unwrap_or("").to_string();
                if !(url.starts_with(base) || url.starts_with("data:") || url == "about:blank") {
                    out.push(format!("request outside the coordinator: {url}"));
                }
                urls.insert(p["requestId"].as_str().unwrap_or("").to_string(), url);
            }
            "Network.responseReceived" => {
                let status = p["response"]["status"].as_u64().unwrap_or(0);
                let url = p["response"]["url"].as_str().unwrap_or("");
                let expected = status == 400 && expected_400.iter().any(|f| url.contains(f));
                if status >= 400 && !expected {
                    out.push(format!("HTTP {status} for {url}"));
                }
            }
            "Network.loadingFailed" if p["canceled"] != true => {
                let id = p["requestId"].as_str().unwrap_or("");
                out.push(format!(
                    "request failed: {} {}",
                    urls.get(id).map(String::as_str).unwrap_or("?"),
                    p["errorText"]
                ));
            }
            _ => {}
        }
    }
    out
}

fn set_field(b: &mut Browser, id: &str, value: &str) {
    let expr = format!(
        "(() => {{ const el = document.getElementById({id}); el.value = {value}; \
         el.dispatchEvent(new Event('input', {{bubbles: true}})); \
         el.dispatchEvent(new Event('change', {{bubbles: true}})); return el.value; }})()",
        id = json!(id),
        value = json!(value)
    );
    let got = b.eval(&expr);
    assert_eq!(got, json!(value), "field {id} took the value");
}

/// A headless Chromium on a fresh coordinator with two local workers, the coordinator's
/// address, the screenshot folder and a scratch folder.
type Setup = (
    Browser,
    gamesolver_e2e::Coordinator,
    String,
    PathBuf,
    PathBuf,
);

/// [`Setup`] for test `what` (`tag` names its scratch folder), or `None` after a `SKIPPED`
/// line when there is no Chromium.
fn setup(what: &str, tag: &str, api_token: Option<&str>) -> Option<Setup> {
    let Some(exe) = find_chromium() else {
        println!(
            "SKIPPED {what}: no chromium (apt-get install -y chromium, or set GAMESOLVER_CHROMIUM)"
        );
        return None;
    };
    let tmp = std::env::temp_dir().join(format!("gamesolver-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let coordinator = start_coordinator(&tmp, api_token);
    let base = coordinator.url.clone();
    let b = Browser::launch(&exe, &tmp.join("profile"));
    Some((b, coordinator, base, artifacts_dir(), tmp))
}

/// Fails on the `found` problems of `what`, else closes the browser and removes `tmp`.
fn close(b: Browser, tmp: &Path, found: &[String], what: &str) {
    assert!(
        found.is_empty(),
        "{what} had problems:\n{}",
        found.join("\n")
    );
    drop(b);
    let _ = std::fs::remove_dir_all(tmp);
}

#[test]
fn dashboard_submits_follows_and_draws_in_chromium() {
    let Some(setup) = setup("dashboard browser test", "dash", None) else {
        return;
    };
    let (mut b, _coordinator, base, art, tmp) = setup;

    // The home page: form filled from the registry, workers listed, a preview of the start.
    b.call("Page.navigate", json!({"url": format!("{base}/")}));
    b.wait_for(
        "the home page with its form",
        "document.body.dataset.view === 'home' && document.querySelectorAll('#f-game option').length > 0 \
         && document.querySelectorAll('#f-algorithm option').length > 0",
    );
    b.wait_for(
        "the local workers in the worker list",
        "document.querySelectorAll('#workers tr[data-worker]').length >= 1",
    );
    set_field(&mut b, "f-game", "connect4");
    set_field(&mut b, "f-params", "width=5, height=4");
    set_field(&mut b, "f-algorithm", "alphabeta");

    // An illegal position: the preview and the submission both show the API's message.
    set_field(&mut b, "f-position", "3333333");
    b.wait_for(
        "the preview's error",
        "document.getElementById('preview-note').textContent.includes('full')",
    );
    b.eval("document.getElementById('submit-form').requestSubmit(), true");
    let msg = b.wait_for(
        "the API's validation message under the form",
        "(() => { const e = document.getElementById('submit-error'); return !e.hidden && e.textContent; })()",
    );
    let msg = msg.as_str().unwrap_or("").to_string();
    assert!(
        msg.contains("column 3 is full"),
        "validation message: {msg}"
    );
    assert_eq!(b.eval("document.body.dataset.view"), json!("home"));

    // A legal position: the preview draws it, the submission opens the job page.
    set_field(&mut b, "f-position", "3322");
    b.wait_for(
        "the preview board with four stones",
        "document.querySelectorAll('#preview svg.gs-board .gs-stone').length === 4",
    );
    b.screenshot(&art.join("dashboard-home.png"));
    b.eval("document.getElementById('submit-form').requestSubmit(), true");
    b.wait_for("the job page", "document.body.dataset.view === 'job'");
    let state = b.wait_for(
        "the job to end",
        "['done', 'failed', 'cancelled'].includes(document.body.dataset.jobState) && document.body.dataset.jobState",
    );
    let result_text = b.eval("document.getElementById('job-result').textContent");
    assert_eq!(state, json!("done"), "job result: {result_text}");
    let result: Value =
        serde_json::from_str(result_text.as_str().unwrap_or("")).expect("result JSON on the page");
    // The result on the page is the API's result.
    let id = b.eval("document.getElementById('job-id').textContent");
    let api: Value = ureq::get(&format!("{base}/v1/jobs/{}", id.as_str().unwrap()))
        .call()
        .expect("job status")
        .into_json()
        .expect("json");
    assert_eq!(result, api["result"]);
    assert!(result.get("value").is_some(), "{result}");

    // The plot: the bounds chart of the probe plan, with both bounds drawn.
    let plot = b.wait_for(
        "the bounds plot",
        "(() => { const s = document.querySelector('#job-plot svg.gs-plot'); \
         return s && s.querySelectorAll('.gs-series').length === 2 && s.textContent; })()",
    );
    assert!(
        plot.as_str().unwrap_or("").contains("bounds"),
        "plot text: {plot}"
    );
    let plot_box = b.eval(
        "(() => { const r = document.querySelector('#job-plot svg').getBoundingClientRect(); return [r.width, r.height]; })()",
    );
    assert!(
        plot_box[0].as_f64().unwrap_or(0.0) > 100.0 && plot_box[1].as_f64().unwrap_or(0.0) > 50.0,
        "plot size {plot_box}"
    );
    // The board: 5 x 4 with the four stones of the position and the principal variation's
    // stones after them, numbered 1, 2, ... in the order of the result's `pv`.
    let pv: Vec<Value> = result["pv"].as_array().cloned().unwrap_or_default();
    assert!(
        !pv.is_empty(),
        "an exact result has a principal variation: {result}"
    );
    let board = b.wait_for(
        "the board picture with the principal variation",
        "(() => { const s = document.querySelector('#job-board svg.gs-board'); \
         return s && s.querySelector('.gs-pv') && [s.dataset.cols, s.dataset.rows, \
         s.querySelectorAll('.gs-stone').length, \
         [...s.querySelectorAll('.gs-pv')].map(t => [t.textContent, t.dataset.move])]; })()",
    );
    let numbered: Vec<Value> = pv
        .iter()
        .enumerate()
        .map(|(i, m)| json!([(i + 1).to_string(), m]))
        .collect();
    assert_eq!(board, json!(["5", "4", 4 + pv.len(), numbered]));
    // The answer in words: the value and the best move, as the API says.
    let answer = b.eval(
        "Object.fromEntries([...document.querySelectorAll('#job-answer tr')].map(r => [r.dataset.key, r.cells[1].textContent]))",
    );
    let answer: HashMap<String, String> = serde_json::from_value(answer).expect("answer rows");
    assert_eq!(answer["value"], result["value"].to_string(), "{answer:?}");
    assert_eq!(
        answer["best move"],
        result["best_move"].as_str().unwrap_or("")
    );
    // The raw JSON is there but folded away.
    assert_eq!(
        b.eval("document.getElementById('job-raw').open"),
        json!(false)
    );
    b.settle();
    b.screenshot(&art.join("dashboard-job.png"));

    // Back home: the job is listed as done, the worker chart is drawn.
    b.eval("location.hash = '#/', true");
    b.wait_for(
        "the finished job in the list",
        &format!(
            "(() => {{ const r = document.querySelector('#jobs tr[data-job=\"{}\"]'); return r && r.textContent.includes('done'); }})()",
            id.as_str().unwrap()
        ),
    );
    b.wait_for(
        "the worker chart",
        "document.querySelector('#status-plot svg.gs-plot') !== null",
    );
    b.settle();
    b.screenshot(&art.join("dashboard-home-after.png"));

    // A Morpion Solitaire record, drawn by the preview endpoint (the page itself as an SVG).
    let data = gamesolver_shared::games::data::data_dir();
    if let Ok(record) = std::fs::read_to_string(data.join("nrpa/morpion/5T_178_rosin.psol")) {
        let mut q = String::new();
        for byte in record.bytes() {
            if byte.is_ascii_alphanumeric() {
                q.push(byte as char);
            } else {
                q.push_str(&format!("%{byte:02X}"));
            }
        }
        b.call(
            "Page.navigate",
            json!({"url": format!("{base}/v1/board.svg?game=morpion&variant=5T&position={q}")}),
        );
        let lines = b.wait_for(
            "the Morpion picture",
            "document.querySelectorAll('.gs-line').length",
        );
        assert_eq!(lines, json!(178));
        b.screenshot(&art.join("board-morpion-5T-178.png"));
    } else {
        println!(
            "no Morpion record under {}: that picture is not checked",
            data.display()
        );
    }

    let found = problems(&b.events, &base, &["/v1/jobs", "/v1/board.svg"]);
    assert!(
        found.is_empty(),
        "the pages had problems:\n{}",
        found.join("\n")
    );
    // The test would see an error: a deliberate console.error must be reported.
    b.eval("console.error('deliberate'), true");
    b.settle();
    assert!(problems(&b.events, &base, &[])
        .iter()
        .any(|p| p.contains("deliberate")));
    drop(b);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn base64_decoder_matches_known_values() {
    assert_eq!(decode_base64("aGVsbG8="), b"hello");
    assert_eq!(decode_base64("iVBORw0KGgo="), b"\x89PNG\r\n\x1a\n");
    let mut r = std::io::Cursor::new(decode_base64("AAEC"));
    let mut v = Vec::new();
    r.read_to_end(&mut v).unwrap();
    assert_eq!(v, vec![0, 1, 2]);
}

#[test]
fn dashboard_asks_for_the_api_token_and_uses_it_in_chromium() {
    const TOKEN: &str = "dash-api-secret";
    let Some(setup) = setup("dashboard token test", "dash-tok", Some(TOKEN)) else {
        return;
    };
    let (mut b, _coordinator, base, art, tmp) = setup;

    // No token yet: the job list is refused, the page asks for the token.
    b.call("Page.navigate", json!({"url": format!("{base}/")}));
    b.wait_for(
        "the token form after the first 401",
        "!document.getElementById('token-form').hidden && \
         document.getElementById('token-note').textContent.includes('API token')",
    );
    // A wrong token: the API's message on the page, and a submission is refused with it too.
    set_field(&mut b, "token", "wrong-token");
    b.eval("document.getElementById('token-form').requestSubmit(), true");
    let msg = b.wait_for(
        "the API's message for a wrong token",
        "(() => { const e = document.getElementById('global-error'); \
         return !e.hidden && e.textContent.includes('API token') && e.textContent; })()",
    );
    assert!(
        msg.as_str().unwrap_or("").contains("wrong API token"),
        "message: {msg}"
    );
    b.wait_for(
        "the form filled from the registry",
        "document.querySelectorAll('#f-game option').length > 0",
    );
    set_field(&mut b, "f-game", "tictactoe");
    set_field(&mut b, "f-params", "");
    set_field(&mut b, "f-position", "15");
    set_field(&mut b, "f-algorithm", "alphabeta");
    b.eval("document.getElementById('submit-form').requestSubmit(), true");
    b.wait_for(
        "the refusal under the form",
        "(() => { const e = document.getElementById('submit-error'); \
         return !e.hidden && e.textContent.includes('API token'); })()",
    );
    assert_eq!(b.eval("document.body.dataset.view"), json!("home"));
    let (code, _) = gamesolver_e2e::http("GET", &format!("{base}/v1/jobs"), None, None);
    assert_eq!(code, 401, "the coordinator requires the token");
    let (_, list) = gamesolver_e2e::http("GET", &format!("{base}/v1/jobs"), None, Some(TOKEN));
    assert_eq!(
        list["jobs"],
        json!([]),
        "nothing was submitted with a wrong token"
    );
    b.screenshot(&art.join("dashboard-token-wrong.png"));

    // The right token: kept for the session, the page works, a job runs to its result.
    set_field(&mut b, "token", TOKEN);
    b.eval("document.getElementById('token-form').requestSubmit(), true");
    b.wait_for(
        "the local workers listed with the token",
        "document.querySelectorAll('#workers tr[data-worker]').length >= 1 && \
         document.getElementById('global-error').hidden",
    );
    assert_eq!(
        b.eval("sessionStorage.getItem('gamesolver-api-token')"),
        json!(TOKEN)
    );
    // From here on every request carries the right token (earlier 401s were expected).
    b.settle();
    let from = b.events.len();
    b.eval("document.getElementById('submit-form').requestSubmit(), true");
    b.wait_for("the job page", "document.body.dataset.view === 'job'");
    let state = b.wait_for(
        "the job to end",
        "['done', 'failed', 'cancelled'].includes(document.body.dataset.jobState) && document.body.dataset.jobState",
    );
    assert_eq!(state, json!("done"));
    let result_text = b.eval("document.getElementById('job-result').textContent");
    let result: Value =
        serde_json::from_str(result_text.as_str().unwrap_or("")).expect("result JSON on the page");
    let local = gamesolver_e2e::local_value(
        &json!({"game": "tictactoe", "position": "15", "algorithm": "alphabeta"}),
    );
    assert_eq!(result["value"], local, "{result}");
    b.wait_for(
        "the board picture fetched with the token",
        "document.querySelector('#job-board svg.gs-board') !== null",
    );
    b.settle();
    b.screenshot(&art.join("dashboard-token-job.png"));
    // Once the token is right, nothing on the page fails.
    let found = problems(&b.events[from..], &base, &[]);
    close(b, &tmp, &found, "the pages with the right token");
}

/// The Connect Four position the analysis board starts from: a 7 x 6 game of Pons' set
/// `Test_L3_R1` with its last stone taken back (36 stones); the page plays that stone (column
/// 1) by a click, giving the set's position, whose value the set publishes.
const AB_START: &str = "225257625346224411156336534367135144";
const AB_MOVE: &str = "1";
const AB_PUBLISHED: i64 = -1;

/// The centre of column `col` (0-based) of the analysis board, in page coordinates.
fn column_point(b: &mut Browser, col: usize) -> (f64, f64) {
    let p = b.eval(&format!(
        "(() => {{ const svg = document.querySelector('#ab-board svg.gs-board'); \
         const r = svg.querySelector('rect'); const m = svg.getScreenCTM(); \
         const w = Number(r.getAttribute('width')) / Number(svg.dataset.cols); \
         const p = new DOMPoint(Number(r.getAttribute('x')) + ({col} + 0.5) * w, \
           Number(r.getAttribute('y')) + 10).matrixTransform(m); return [p.x, p.y]; }})()"
    ));
    (p[0].as_f64().expect("x"), p[1].as_f64().expect("y"))
}

/// A real left click (pointer down and up) at page point `(x, y)`.
fn click_at(b: &mut Browser, (x, y): (f64, f64)) {
    for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
        b.call(
            "Input.dispatchMouseEvent",
            json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
        );
    }
}

/// The scores written on the analysis board: move -> text, and the table's exact values.
fn page_scores(b: &mut Browser) -> (HashMap<String, String>, HashMap<String, i64>) {
    let on_board = b.eval(
        "Object.fromEntries([...document.querySelectorAll('#ab-board text.gs-score')]\
         .map(t => [t.dataset.move, t.textContent.replace('★', '')]))",
    );
    let in_table = b.eval(
        "Object.fromEntries([...document.querySelectorAll('#ab-moves tr[data-move]')]\
         .map(r => [r.dataset.move, Number(r.querySelector('.score').dataset.value)]))",
    );
    (
        serde_json::from_value(on_board).expect("board scores"),
        serde_json::from_value(in_table).expect("table scores"),
    )
}

#[test]
fn analysis_board_scores_equal_the_api_in_chromium() {
    let Some(setup) = setup("analysis board browser test", "dash-ab", None) else {
        return;
    };
    let (mut b, coordinator, base, art, tmp) = setup;

    // The board opens on the start position and analyses it.
    b.call(
        "Page.navigate",
        json!({"url": format!("{base}/#/analyse?game=connect4&position={AB_START}")}),
    );
    b.wait_for(
        "the analysis of the start position",
        &format!(
            "document.body.dataset.abState === 'done' && document.body.dataset.abPosition === '{AB_START}'"
        ),
    );
    // A click on column 1 plays it; the page analyses the new position.
    let played = format!("{AB_START}{AB_MOVE}");
    let point = column_point(&mut b, 0);
    click_at(&mut b, point);
    b.wait_for(
        "the analysis after the click",
        &format!(
            "document.body.dataset.abState === 'done' && document.body.dataset.abPosition === '{played}' \
             && document.querySelectorAll('#ab-board text.gs-score').length > 0"
        ),
    );
    let (on_board, in_table) = page_scores(&mut b);
    b.screenshot(&art.join("analysis-board.png"));

    // The API's answer for the same position, from a job of its own.
    let job = json!({"game": "connect4", "position": played, "algorithm": "alphabeta",
        "options": {"analyse": "all"}});
    let id = coordinator.submit(&job, None);
    let status = coordinator.wait_job(id, WAIT);
    assert_eq!(status["state"], "done", "{status}");
    let moves = status["result"]["moves"]
        .as_object()
        .expect("an analysis result has moves");
    assert!(!moves.is_empty());
    let mut api: HashMap<String, i64> = HashMap::new();
    for (mv, m) in moves {
        api.insert(mv.clone(), m["value"].as_i64().expect("exact scores"));
    }
    assert_eq!(in_table, api, "the table's scores are the API's");
    let written: HashMap<String, String> = api
        .iter()
        .map(|(m, v)| {
            (
                m.clone(),
                if *v > 0 {
                    format!("+{v}")
                } else {
                    v.to_string()
                },
            )
        })
        .collect();
    assert_eq!(on_board, written, "the board's scores are the API's");
    // Every score is minus the plain exact value after the move; the best is the set's value.
    for (mv, v) in &api {
        let after = json!({"game": "connect4", "position": format!("{played}{mv}"), "algorithm": "alphabeta"});
        assert_eq!(
            -gamesolver_e2e::local_value(&after)
                .as_i64()
                .expect("exact value"),
            *v,
            "move {mv}"
        );
    }
    assert_eq!(api.values().max(), Some(&AB_PUBLISHED));
    let best = b.eval(
        "[...document.querySelectorAll('#ab-moves tr.best')].map(r => r.dataset.move).sort()",
    );
    let mut top: Vec<&String> = api
        .iter()
        .filter(|(_, v)| **v == AB_PUBLISHED)
        .map(|(m, _)| m)
        .collect();
    top.sort();
    assert_eq!(best, json!(top), "best moves marked");

    // Back and forth along the line: the start's answer again, then the played position's.
    b.eval("document.getElementById('ab-back').click(), true");
    b.wait_for(
        "the start position again",
        &format!("document.body.dataset.abState === 'done' && document.body.dataset.abPosition === '{AB_START}'"),
    );
    b.eval("document.getElementById('ab-forward').click(), true");
    b.wait_for(
        "the played position again",
        &format!("document.body.dataset.abState === 'done' && document.body.dataset.abPosition === '{played}'"),
    );
    assert_eq!(page_scores(&mut b).1, api);

    b.settle();
    let found = problems(&b.events, &base, &[]);
    close(b, &tmp, &found, "the analysis board");
}

/// What is wrong with the job page shown, as the page's own DOM says: raw JSON (`{"` or `":`)
/// in the Answer or Progress sections, an empty Answer on a finished job, a chart that says it
/// has no data (finished jobs), or a chart axis whose tick labels take fewer than two values.
const PAGE_CHECK: &str = r#"(() => {
  const out = [];
  const finished = ['done', 'failed', 'cancelled'].includes(document.body.dataset.jobState);
  for (const id of ['job-answer-box', 'job-progress-box']) {
    const t = document.getElementById(id).innerText;
    if (t.includes('{"') || t.includes('":')) out.push(id + ' shows raw JSON: ' + t.slice(0, 300));
  }
  if (finished && document.body.dataset.jobState === 'done' &&
      !document.querySelector('#job-answer tr[data-key]')) out.push('finished job with an empty Answer');
  if (document.body.dataset.jobState === 'running' && !document.querySelector('#job-progress tr[data-key]'))
    out.push('running job with an empty Progress');
  // Every task that ran and ended says how long it ran; a running one its time so far.
  for (const r of document.querySelectorAll('#job-task-table tr[data-task]')) {
    const state = r.cells[2].textContent.trim();
    const time = r.cells[5];
    if (['done', 'failed'].includes(state) && r.cells[3].textContent !== '—' &&
        !(time.dataset.ms !== '' && /\d ?(ms|s|min|h)$/.test(time.textContent)))
      out.push('task ' + r.dataset.task + ' (' + state + ') without its run time: ' + time.textContent);
    if (state === 'running' && !/so far$/.test(time.textContent))
      out.push('running task ' + r.dataset.task + ' without its time so far: ' + time.textContent);
  }
  const plot = document.querySelector('#job-plot svg.gs-plot');
  if (!plot) out.push('no chart');
  else {
    if (finished && plot.querySelector('.gs-empty')) out.push('finished job whose chart says no data');
    if (!plot.querySelector('.gs-empty')) {
      const line = plot.dataset.kind === 'line';
      for (const axis of line ? ['x', 'y'] : ['y']) {
        const labels = [...plot.querySelectorAll('.gs-tick-' + axis)].map(t => t.textContent);
        if (new Set(labels).size < 2) out.push('chart axis ' + axis + ' has tick labels ' + JSON.stringify(labels));
      }
    }
  }
  return out;
})()"#;

/// The page of job `id` shown and (when `done`) finished, its checks run, its screenshot saved
/// as `name`; returns the problems found.
/// A running page is checked once it shows the figure `live` (a progress key) of its kernel.
fn check_job_page(
    b: &mut Browser,
    dir: &Path,
    id: u64,
    name: &str,
    live: Option<&str>,
) -> Vec<String> {
    let done = live.is_none();
    b.eval(&format!("location.hash = '#/jobs/{id}', true"));
    b.wait_for(
        "the job page",
        &format!("document.getElementById('job-id').textContent === '{id}' && document.body.dataset.jobState"),
    );
    if done {
        b.wait_for(
            &format!("job {id} ({name}) to end"),
            "['done', 'failed', 'cancelled'].includes(document.body.dataset.jobState)",
        );
        let state = b.eval("document.body.dataset.jobState");
        assert_eq!(state, json!("done"), "{name}: job {id}");
        b.wait_for(
            &format!("the final chart and tasks of {name}"),
            "document.querySelector('#job-plot svg.gs-plot') && \
             document.querySelectorAll('#job-task-table tr[data-task]').length > 0",
        );
    } else {
        // `*`: any figure of the kernel's.
        let row = match live.unwrap_or_default() {
            "*" => "#job-progress tr[data-key]".to_string(),
            key => format!("#job-progress tr[data-key=\"{key}\"]"),
        };
        b.wait_for(
            &format!("live figures of {name}"),
            &format!(
                "document.body.dataset.jobState === 'running' && \
                 document.querySelector('{row}') && \
                 document.querySelector('#job-plot svg.gs-plot')"
            ),
        );
        // Figures were reported: the chart draws them ("no data yet" only before any), over
        // a second of the job's life at least (a few heartbeats, not the first report alone).
        // (The chart is this job's: the previous page's stays until the new one loads.)
        b.wait_for(
            &format!("a chart with data on the running page of {name}"),
            &format!(
                "document.body.dataset.jobState === 'running' && \
                 (() => {{ const s = document.querySelector('#job-plot svg.gs-plot'); \
                 if (!s || !s.textContent.includes('job {id}:') || s.querySelector('.gs-empty')) return false; \
                 const ticks = (a) => [...s.querySelectorAll('.gs-tick-' + a)].map(t => t.textContent); \
                 const x = ticks('x').map(t => Number(t.replace(/,/g, ''))).filter(Number.isFinite); \
                 return s.dataset.kind !== 'line' || (new Set(ticks('y')).size >= 2 && Math.max(...x) >= 1); }})()"
            ),
        );
        // The task table follows the job while statuses stream in (a refresh after the first
        // fetch, which saw at most the first two tasks).
        b.wait_for(
            &format!("the tasks of the running page of {name}"),
            "(() => { const m = document.getElementById('job-tasks').textContent.match(/^([\\d,]+) tasks/); \
             const n = m ? Number(m[1].replace(/,/g, '')) : 0; \
             return n > 0 && document.querySelectorAll('#job-task-table tr[data-task]').length >= Math.min(n, 3); })()",
        );
    }
    b.settle();
    let found: Vec<String> = serde_json::from_value(b.eval(PAGE_CHECK)).expect("check list");
    b.screenshot(&dir.join(format!("{name}.png")));
    found
        .into_iter()
        .map(|p| format!("{name} (job {id}): {p}"))
        .collect()
}

/// Every task of job `id` that ran says when its latest lease started and ended, and how long
/// it ran: `run_ms` is their difference, and the lease ran within the job's life.
fn check_task_times(c: &gamesolver_e2e::Coordinator, id: u64, name: &str) {
    let (code, status) = c.get(&format!("/v1/jobs/{id}"), None);
    assert_eq!(code, 200, "{status}");
    let (code, page) = c.get(&format!("/v1/jobs/{id}/tasks?limit=1000"), None);
    assert_eq!(code, 200, "{page}");
    let created = status["created_ms"].as_u64().expect("created_ms");
    let finished = status["finished_ms"].as_u64().expect("finished_ms");
    let mut timed = 0;
    for t in page["tasks"].as_array().expect("tasks") {
        if t["workers"].as_array().is_none_or(|w| w.is_empty()) {
            assert!(
                t["started_ms"].is_null() && t["run_ms"].is_null(),
                "{name}: {t}"
            );
            continue;
        }
        let started = t["started_ms"]
            .as_u64()
            .unwrap_or_else(|| panic!("{name}: {t}"));
        let ended = t["ended_ms"]
            .as_u64()
            .unwrap_or_else(|| panic!("{name}: {t}"));
        assert!(created <= started && started <= ended, "{name}: {t}");
        if t["state"] == "done" {
            assert!(ended <= finished, "{name}: {t} after {finished}");
        }
        assert_eq!(t["run_ms"].as_u64(), Some(ended - started), "{name}: {t}");
        timed += 1;
    }
    assert!(timed > 0, "{name}: no task ran: {page}");
}

/// The principal line of an Awari lookup (`answer`, of the board `start` on `pits` pits):
/// every move legal in the position it is played from and leading to the next one, capturing
/// what it says, each value the captures minus the next value, the first value the score; and
/// played by the game's own rules (score and repetition) the line ends the game with the score.
fn check_line(pits: usize, start: &str, answer: &Value) {
    use gamesolver_shared::games::awari::Awari;
    use gamesolver_shared::model::{Game, ZeroSum};
    let g = Awari::new(pits).expect("board");
    let line = &answer["line"];
    let moves = line["moves"].as_array().expect("line moves");
    let score = answer["score"].as_i64().expect("score");
    let first = moves.first().map_or(&line["value"], |m| &m["value"]);
    assert_eq!(first.as_i64(), Some(score), "{answer}");
    let mut played = String::new();
    for (k, m) in moves.iter().enumerate() {
        let here = m["position"].as_str().expect("position");
        let s = g.parse_position(here).expect("a board");
        let mv = g
            .parse_move(&s, m["move"].as_str().expect("move"))
            .unwrap_or_else(|e| panic!("move {k} of {answer}: {e}"));
        let mut after = s.clone();
        g.apply(&mut after, mv);
        let next = moves.get(k + 1).unwrap_or(line);
        let next_board = g
            .parse_position(next["position"].as_str().unwrap())
            .unwrap();
        assert_eq!(g.board(&after), g.board(&next_board), "move {k}: {answer}");
        let captured = g.stones(&g.board(&s)) - g.stones(&g.board(&after));
        assert_eq!(m["captures"].as_u64(), Some(captured as u64), "{answer}");
        let (v, next_v) = (
            m["value"].as_i64().unwrap(),
            next["value"].as_i64().unwrap(),
        );
        assert_eq!(
            v,
            captured as i64 - next_v,
            "move {k} keeps the value: {answer}"
        );
        played.push_str(m["move"].as_str().unwrap());
    }
    let end = line["end"].as_str().unwrap_or_default();
    assert!(["game over", "repetition"].contains(&end), "{answer}");
    let s = g
        .parse_position(&format!("{start};{played}"))
        .expect("the line replays from the start");
    assert!(g.is_terminal(&s), "the line ends the game: {answer}");
    let v = g.terminal_value(&s) as i64;
    let v = if g.side(&s) == 0 { v } else { -v };
    assert_eq!(
        v, score,
        "the game's score at the end of the line: {answer}"
    );
}

#[test]
fn job_pages_of_every_kind_read_as_text_in_chromium() {
    let Some(exe) = find_chromium() else {
        println!("SKIPPED job pages browser test: no chromium");
        return;
    };
    let tmp = std::env::temp_dir().join(format!("gamesolver-dash-kinds-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    // Leases of 3 s: workers heartbeat (and so report a running task's figures) every second.
    let opts = gamesolver_e2e::CoordOpts {
        local_workers: 2,
        lease_ms: Some(3000),
        ..Default::default()
    };
    let coordinator = gamesolver_e2e::Coordinator::start(&tmp.join("dash.db"), &opts);
    let base = coordinator.url.clone();
    let mut b = Browser::launch(&exe, &tmp.join("profile"));
    let dir = artifacts_dir().join("job-pages");
    std::fs::create_dir_all(&dir).expect("screenshot folder");
    b.call("Page.navigate", json!({"url": format!("{base}/")}));
    b.wait_for("the home page", "document.body.dataset.view === 'home'");

    // Two jobs that run for a few seconds, one on each local worker: their running pages first.
    let mcts = coordinator.submit(
        &json!({"game": "connect4", "position": "4453", "algorithm": "mcts",
            "limits": {"time_ms": 5000}}),
        None,
    );
    let nrpa = coordinator.submit(
        &json!({"game": "morpion", "game_params": {"variant": "5D"}, "algorithm": "nrpa",
            "options": {"level": 3, "iterations": 100}, "limits": {"time_ms": 5000}}),
        None,
    );
    let mut found = Vec::new();
    found.extend(check_job_page(
        &mut b,
        &dir,
        mcts,
        "mcts-running",
        Some("visits"),
    ));
    found.extend(check_job_page(
        &mut b,
        &dir,
        nrpa,
        "nrpa-running",
        Some("best"),
    ));
    // The running NRPA page draws the best line so far.
    b.wait_for(
        "the best line so far on the running NRPA page",
        "document.querySelectorAll('#job-board svg.gs-board .gs-line').length > 0",
    );

    let jobs = [
        (
            "exact",
            json!({"game": "connect4", "game_params": {"width": 5, "height": 4},
            "position": "3322", "algorithm": "alphabeta"}),
        ),
        (
            "analyse",
            json!({"game": "connect4", "game_params": {"width": 5, "height": 4},
            "position": "3322", "algorithm": "alphabeta", "options": {"analyse": "all"}}),
        ),
        (
            "retrograde",
            json!({"game": "awari", "game_params": {"pits": 3},
            "algorithm": "retrograde", "options": {"stones": 9, "name": "dash3"}}),
        ),
        (
            "chance",
            json!({"game": "pig", "game_params": {"target": 10}, "algorithm": "star25",
                "options": {"depth": 6}}),
        ),
        (
            "multi-player",
            json!({"game": "rolit", "game_params": {"players": 3},
            "position": "f4", "algorithm": "maxn", "options": {"depth": 3}}),
        ),
    ];
    let ids: Vec<(String, u64)> = jobs
        .iter()
        .map(|(name, job)| (name.to_string(), coordinator.submit(job, None)))
        .collect();
    found.extend(check_job_page(&mut b, &dir, mcts, "mcts-done", None));
    // The MCTS win rate reads to three significant digits.
    let rate = b.eval(
        "(() => { const r = document.querySelector('#job-answer tr[data-key=\"win rate\"]'); return r ? r.cells[1].textContent : ''; })()",
    );
    let digits = rate
        .as_str()
        .unwrap_or("")
        .chars()
        .filter(char::is_ascii_digit)
        .count();
    assert!(
        (1..=4).contains(&digits),
        "MCTS win rate to 3 significant digits: {rate}"
    );
    found.extend(check_job_page(&mut b, &dir, nrpa, "nrpa-done", None));
    for (name, id) in &ids {
        found.extend(check_job_page(
            &mut b,
            &dir,
            *id,
            &format!("{name}-done"),
            None,
        ));
        check_task_times(&coordinator, *id, name);
        if name == "retrograde" {
            // What was built, per stone count, and a board looked up in it and drawn.
            let rows = b.eval("document.querySelectorAll('#job-db-table tr[data-stones]').length");
            assert_eq!(rows, json!(10), "databases 0..=9");
            let said = b.wait_for(
                "the lookup of the sample board",
                "(() => { const t = document.getElementById('lookup-answer').textContent; \
                 return t.includes('score') && document.querySelectorAll('#job-board svg .gs-pit').length === 6 && t; })()",
            );
            let position = b.eval("document.getElementById('lookup-position').value");
            let (code, api) = gamesolver_e2e::http(
                "GET",
                &format!(
                    "{base}/v1/tables/dash3/lookup?position={}",
                    position.as_str().unwrap_or("")
                ),
                None,
                None,
            );
            assert_eq!(code, 200, "{api}");
            let score = b.eval("Number(document.getElementById('lookup-answer').dataset.score)");
            assert_eq!(
                score, api["score"],
                "the page's lookup is the API's: {said}"
            );
            // Won, drawn and lost per database: they add up to its positions, and the page
            // shows the API's counts.
            let (_, status) = coordinator.get(&format!("/v1/jobs/{id}"), None);
            let dbs = status["result"]["databases"].as_array().expect("databases");
            let on_page = b.eval(
                "[...document.querySelectorAll('#job-db-table tr[data-stones]')].map(r => \
                 [2, 3, 4].map(i => Number(r.cells[i].textContent.split(' ')[0].replace(/,/g, ''))))",
            );
            for (d, db) in dbs.iter().enumerate() {
                let n = |k: &str| db[k].as_u64().unwrap_or_else(|| panic!("{k}: {db}"));
                assert_eq!(
                    n("won") + n("drawn") + n("lost"),
                    n("positions"),
                    "database {d}: {db}"
                );
                assert_eq!(
                    on_page[d],
                    json!([n("won"), n("drawn"), n("lost")]),
                    "database {d}"
                );
            }
            // The principal line: the API's is legal and keeps the value by the game's own
            // rules, and the page lists it move by move.
            let position = position.as_str().unwrap_or("").to_string();
            check_line(3, &position, &api);
            let listed = b.wait_for(
                "the principal line on the page",
                "(() => { const l = document.getElementById('lookup-line'); \
                 return !l.hidden && [[...l.querySelectorAll('li')].map(li => li.dataset.move), \
                 document.getElementById('lookup-line-end').dataset.end]; })()",
            );
            let moves: Vec<Value> = api["line"]["moves"]
                .as_array()
                .expect("line moves")
                .iter()
                .map(|m| m["move"].clone())
                .collect();
            assert_eq!(listed, json!([moves, api["line"]["end"]]));
            b.screenshot(&dir.join("retrograde-lookup.png"));
            // A longer line drawn from a board with more play in it.
            set_field(&mut b, "lookup-position", "3,0,2,1,0,3");
            b.eval("document.getElementById('lookup-form').requestSubmit(), true");
            b.wait_for(
                "the line of the second board",
                "document.querySelector('#lookup-line li[data-position=\"3,0,2,1,0,3\"]')",
            );
            let (code, api) = gamesolver_e2e::http(
                "GET",
                &format!("{base}/v1/tables/dash3/lookup?position=3,0,2,1,0,3"),
                None,
                None,
            );
            assert_eq!(code, 200, "{api}");
            check_line(3, "3,0,2,1,0,3", &api);
            b.eval("document.querySelector('#lookup-line li:last-child').click(), true");
            b.wait_for(
                "the line's last position drawn",
                "document.getElementById('job-board-note').textContent.startsWith('move ')",
            );
            b.settle();
            b.screenshot(&dir.join("retrograde-line.png"));
            // A board that is not one of the set's: the API's message on the page.
            set_field(&mut b, "lookup-position", "1,2");
            b.eval("document.getElementById('lookup-form').requestSubmit(), true");
            b.wait_for(
                "the lookup's error",
                "!document.getElementById('lookup-error').hidden",
            );
        }
    }
    // Running pages of the other kinds: instances far too big to finish while a page is
    // checked (the time limits only bound a test that goes wrong), one at a time on the two
    // workers, each cancelled once its running page is checked.
    let long = [
        (
            "exact",
            json!({"game": "connect4", "game_params": {"width": 8, "height": 7},
                "position": "", "algorithm": "alphabeta", "limits": {"time_ms": 600000}}),
        ),
        (
            "analyse",
            json!({"game": "connect4", "game_params": {"width": 8, "height": 7},
                "position": "4", "algorithm": "alphabeta", "options": {"analyse": "all"},
                "limits": {"time_ms": 600000}}),
        ),
        (
            "chance",
            json!({"game": "pig", "game_params": {"target": 100}, "algorithm": "star25",
                "options": {"depth": 60}, "limits": {"time_ms": 600000}}),
        ),
        (
            "multi-player",
            json!({"game": "rolit", "game_params": {"players": 3}, "position": "f4",
                "algorithm": "maxn", "options": {"depth": 12}, "limits": {"time_ms": 600000}}),
        ),
        // Last: its cancelled task may finish the database it builds whole before it stops.
        (
            "retrograde",
            json!({"game": "awari", "algorithm": "retrograde",
                "options": {"stones": 17, "name": "dashrun"}}),
        ),
    ];
    for (name, job) in &long {
        let id = coordinator.submit(job, None);
        found.extend(check_job_page(
            &mut b,
            &dir,
            id,
            &format!("{name}-running"),
            Some("*"),
        ));
        let (code, body) = coordinator.post(&format!("/v1/jobs/{id}/cancel"), &json!({}), None);
        assert!(code == 200 || code == 202, "cancel {name}: {code} {body}");
        let end = coordinator.wait_job(id, WAIT);
        assert_eq!(end["state"], "cancelled", "{name}: {end}");
    }
    println!("job page screenshots: {}", dir.display());

    b.eval("location.hash = '#/', true");
    b.wait_for(
        "the job list",
        "document.querySelectorAll('#jobs tr[data-job]').length >= 7",
    );
    let listed = b.eval("document.getElementById('jobs').innerText");
    assert!(
        !listed.as_str().unwrap_or("").contains("null"),
        "the job list says null: {listed}"
    );
    b.screenshot(&dir.join("home.png"));
    // The check would see raw JSON: a JSON text put into the Progress section is reported.
    b.eval(
        "document.getElementById('job-progress').insertAdjacentHTML('beforeend', \
         '<tr><td>{\"nodes\": 1}</td></tr>'), true",
    );
    let seen: Vec<String> = serde_json::from_value(b.eval(PAGE_CHECK)).expect("check list");
    assert!(
        seen.iter().any(|p| p.contains("raw JSON")),
        "the page check misses raw JSON: {seen:?}"
    );
    found.extend(problems(&b.events, &base, &["/lookup"]));
    close(b, &tmp, &found, "the job pages");
}
