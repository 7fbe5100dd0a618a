//! Every route's real answers against `/openapi.json`: a client generated from the document must
//! be able to read whatever the coordinator sends. Real jobs of every kind run on real worker
//! processes; this test then calls each documented route, success and error answers alike,
//! and checks each answer's status is declared for that route, its content type is the
//! declared one, and a JSON body (or each event of a stream) validates against the declared
//! schema (JSON Schema 2020-12, the dialect of OpenAPI 3.1). The worker protocol is driven by
//! the test itself acting as a worker. It fails when a documented route got no answer here, so
//! a new route must bring its case.

use gamesolver_e2e::*;
use gamesolver_shared::search::retrograde::artifacts::sha256_hex;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::time::{Duration, Instant};

const API: &str = "api-secret-for-schema-test";
const WORKER: &str = "worker-secret-for-schema-test";

/// One answer: status, content type (without parameters) and body.
struct Answer {
    code: u16,
    content_type: String,
    body: String,
}

fn request(method: &str, url: &str, body: Option<(&str, &[u8])>, token: Option<&str>) -> Answer {
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(60))
        .build();
    let mut req = agent.request(&method.to_uppercase(), url);
    if let Some(t) = token {
        req = req.set("Authorization", &format!("Bearer {t}"));
    }
    let r = match body {
        Some((ct, bytes)) => req.set("Content-Type", ct).send_bytes(bytes),
        None => req.call(),
    };
    let resp = match r {
        Ok(resp) => resp,
        Err(ureq::Error::Status(_, resp)) => resp,
        Err(e) => panic!("{method} {url}: {e}"),
    };
    let code = resp.status();
    let content_type = resp.content_type().to_string();
    let mut bytes = Vec::new();
    resp.into_reader()
        .take(64 << 20)
        .read_to_end(&mut bytes)
        .expect("read body");
    Answer {
        code,
        content_type,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// A `POST` that declares a body over the limit (`Expect: 100-continue`, as curl sends large
/// bodies) and sends none: the coordinator must answer from the headers alone.
fn declared_too_large(base: &str, path: &str, declared: usize, token: &str) -> Answer {
    use std::io::Write;
    let host = base.strip_prefix("http://").expect("http URL");
    let mut s = std::net::TcpStream::connect(host).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Authorization: Bearer {token}\r\nContent-Length: {declared}\r\n\
         Expect: 100-continue\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    let text = String::from_utf8_lossy(&got).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let content_type = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-type")
                .then(|| v.split(';').next().unwrap_or("").trim().to_string())
        })
        .unwrap_or_default();
    Answer {
        code,
        content_type,
        body: body.to_string(),
    }
}

/// The document, the routes answered so far and what did not match.
struct Checker {
    doc: Value,
    base: String,
    seen: BTreeSet<(String, String)>,
    failures: Vec<String>,
}

impl Checker {
    /// A validator for `schema`, which may `$ref` into the document's components.
    fn validate(&mut self, what: &str, schema: &Value, instance: &Value) {
        if schema.as_object().is_none_or(|o| o.is_empty()) {
            return; // declared as any JSON
        }
        let mut root = json!({ "components": self.doc["components"].clone() });
        root["allOf"] = json!([schema]);
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&root)
            .unwrap_or_else(|e| panic!("{what}: the document's schema does not compile: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .take(5)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        if !errors.is_empty() {
            let text = instance.to_string();
            let cut: String = text.chars().take(400).collect();
            self.failures
                .push(format!("{what}: {} (answer: {cut})", errors.join("; ")));
        }
    }

    /// Calls `method path` (the route `template`) and checks the answer against the document.
    /// `expect` is the status this case is meant to produce.
    fn call(
        &mut self,
        method: &str,
        template: &str,
        path: &str,
        body: Option<(&str, &[u8])>,
        token: Option<&str>,
        expect: u16,
    ) -> Answer {
        let a = request(method, &format!("{}{path}", self.base), body, token);
        self.check(method, template, path, &a, expect);
        a
    }

    fn check(&mut self, method: &str, template: &str, path: &str, a: &Answer, expect: u16) {
        let what = format!("{} {path} -> {}", method.to_uppercase(), a.code);
        let m = method.to_lowercase();
        self.seen.insert((m.clone(), template.to_string()));
        let Some(op) = self.doc["paths"][template].get(&m).cloned() else {
            self.failures
                .push(format!("{what}: {template} is not in the document"));
            return;
        };
        if a.code != expect {
            self.failures.push(format!(
                "{what}: this case expects {expect} (body: {})",
                a.body.chars().take(300).collect::<String>()
            ));
        }
        let Some(resp) = op["responses"].get(a.code.to_string()).cloned() else {
            self.failures.push(format!(
                "{what}: status {} is not declared for {template} (body: {})",
                a.code,
                a.body.chars().take(200).collect::<String>()
            ));
            return;
        };
        let content = resp["content"].as_object().cloned().unwrap_or_default();
        if content.is_empty() {
            if !a.body.is_empty() {
                self.failures
                    .push(format!("{what}: a body where the document declares none"));
            }
            return;
        }
        let Some(media) = content.get(&a.content_type) else {
            self.failures.push(format!(
                "{what}: content type {} where the document declares {:?}",
                a.content_type,
                content.keys().collect::<Vec<_>>()
            ));
            return;
        };
        let schema = media["schema"].clone();
        match a.content_type.as_str() {
            "application/json" => match serde_json::from_str::<Value>(&a.body) {
                Ok(v) => self.validate(&what, &schema, &v),
                Err(e) => self.failures.push(format!("{what}: not JSON: {e}")),
            },
            "text/event-stream" => {
                let mut events = 0;
                for line in a.body.lines() {
                    if let Some(data) = line.strip_prefix("data:") {
                        events += 1;
                        match serde_json::from_str::<Value>(data.trim()) {
                            Ok(v) => self.validate(&format!("{what} event {events}"), &schema, &v),
                            Err(e) => self.failures.push(format!("{what}: event not JSON: {e}")),
                        }
                    }
                }
                if events == 0 {
                    self.failures
                        .push(format!("{what}: a stream with no event"));
                }
            }
            "text/plain" => {
                if schema["type"] == "string" && a.body.is_empty() {
                    self.failures.push(format!("{what}: empty text"));
                }
            }
            ct if ct.starts_with("image/svg") => {
                if !a.body.contains("<svg") {
                    self.failures.push(format!("{what}: not an SVG picture"));
                }
            }
            "text/html" | "text/css" | "text/javascript" | "application/octet-stream" => {
                if a.body.is_empty() {
                    self.failures.push(format!("{what}: empty body"));
                }
            }
            other => self
                .failures
                .push(format!("{what}: no check for content type {other}")),
        }
    }

    /// Reads an event stream to its end (a finished job's stream closes after `end`).
    fn events(&mut self, id: u64) {
        let path = format!("/v1/jobs/{id}/events");
        let url = format!("{}{path}", self.base);
        let resp = ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(30))
            .build()
            .get(&url)
            .set("Authorization", &format!("Bearer {API}"))
            .call()
            .expect("events");
        let code = resp.status();
        let content_type = resp.content_type().to_string();
        let mut body = String::new();
        for line in BufReader::new(resp.into_reader()).lines() {
            let Ok(line) = line else { break };
            let end = line.starts_with("event: end");
            body.push_str(&line);
            body.push('\n');
            if end {
                // The data line of the `end` event follows.
                continue;
            }
            if body.contains("event: end\n") && line.starts_with("data:") {
                break;
            }
        }
        let a = Answer {
            code,
            content_type,
            body,
        };
        self.check("get", "/v1/jobs/{id}/events", &path, &a, 200);
    }
}

fn wait_done(c: &Coordinator, id: u64) -> Value {
    let end = Instant::now() + Duration::from_secs(300);
    loop {
        let st = c.get(&format!("/v1/jobs/{id}"), Some(API)).1;
        match st["state"].as_str() {
            Some("done") => return st,
            Some("failed" | "cancelled") => panic!("job {id}: {st}"),
            _ if Instant::now() > end => panic!("job {id} did not end: {st}"),
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

#[test]
fn every_route_answers_as_its_schema_says() {
    let c = Coordinator::fresh(
        "openapi-answers",
        &CoordOpts {
            api_token: Some(API.into()),
            worker_token: Some(WORKER.into()),
            extra_args: vec!["--max-queued-jobs".into(), "12".into()],
            ..Default::default()
        },
    );
    let spec = c.get("/openapi.json", None).1;
    assert_eq!(spec["openapi"], "3.1.0");
    let mut k = Checker {
        doc: spec,
        base: c.url.clone(),
        seen: BTreeSet::new(),
        failures: Vec::new(),
    };
    // The validator does reject: a number is not a JobStatus, a status without `state` neither.
    let status_schema = json!({"$ref": "#/components/schemas/JobStatus"});
    k.validate("self-check", &status_schema, &json!(42));
    k.validate("self-check", &status_schema, &json!({"id": 1}));
    assert_eq!(k.failures.len(), 2, "{:?}", k.failures);
    k.failures.clear();
    // A task row's times are declared integers (or null), and a lookup's line has its moves.
    let row = json!({"$ref": "#/components/schemas/TaskRow"});
    let mut task = json!({"id": 1, "what": "run 1", "state": "done", "attempts": 1,
        "workers": ["w"], "last_error": null, "started_ms": 5, "ended_ms": 9, "run_ms": 4});
    k.validate("self-check", &row, &task);
    assert!(k.failures.is_empty(), "{:?}", k.failures);
    task["run_ms"] = json!("4 ms");
    k.validate("self-check", &row, &task);
    let lookup = json!({"$ref": "#/components/schemas/TableLookup"});
    k.validate(
        "self-check",
        &lookup,
        &json!({"name": "x", "job": 1, "position": "1,1", "stones": 2, "score": 0,
            "best": ["a"], "line": {"position": "1,1", "value": 0, "end": "repetition"}}),
    );
    assert_eq!(k.failures.len(), 2, "{:?}", k.failures);
    k.failures.clear();
    let t = Some(API);
    let w = Some(WORKER);
    let post = |v: &Value| v.to_string().into_bytes();
    const JSON: &str = "application/json";

    // --- The worker protocol, driven by this test as a worker, before any real worker runs.
    let reg = post(&json!({"host": "schema-test", "threads": 1, "version": "test"}));
    k.call(
        "post",
        "/v1/worker/register",
        "/v1/worker/register",
        Some((JSON, &reg)),
        Some("wrong"),
        401,
    );
    let a = k.call(
        "post",
        "/v1/worker/register",
        "/v1/worker/register",
        Some((JSON, &reg)),
        w,
        200,
    );
    let worker_id = serde_json::from_str::<Value>(&a.body).unwrap_or_default()["worker_id"]
        .as_str()
        .unwrap_or_else(|| panic!("register: {} {}", a.code, a.body))
        .to_string();
    let lease_req = post(&json!({"worker_id": worker_id, "wait_ms": 0}));
    k.call(
        "post",
        "/v1/worker/lease",
        "/v1/worker/lease",
        Some((JSON, &lease_req)),
        w,
        204,
    );
    let unknown = post(&json!({"worker_id": "no-such-worker", "wait_ms": 0}));
    k.call(
        "post",
        "/v1/worker/lease",
        "/v1/worker/lease",
        Some((JSON, &unknown)),
        w,
        404,
    );
    // A trivial job, leased by this test.
    let job = c.submit(
        &json!({"game": "tictactoe", "position": "", "algorithm": "minimax"}),
        t,
    );
    let lease_req = post(&json!({"worker_id": worker_id, "wait_ms": 5000}));
    let a = k.call(
        "post",
        "/v1/worker/lease",
        "/v1/worker/lease",
        Some((JSON, &lease_req)),
        w,
        200,
    );
    let lease = serde_json::from_str::<Value>(&a.body).unwrap();
    let lease_id = lease["lease_id"].as_str().expect("lease_id").to_string();
    let hb = post(&json!({"worker_id": worker_id, "lease_id": lease_id, "progress": {"nodes": 1}}));
    k.call(
        "post",
        "/v1/worker/heartbeat",
        "/v1/worker/heartbeat",
        Some((JSON, &hb)),
        w,
        200,
    );
    let hb_bad = post(&json!({"worker_id": worker_id, "lease_id": "no-such-lease"}));
    k.call(
        "post",
        "/v1/worker/heartbeat",
        "/v1/worker/heartbeat",
        Some((JSON, &hb_bad)),
        w,
        409,
    );
    let watch = post(&json!({"worker_id": worker_id, "wait_ms": 0}));
    k.call(
        "post",
        "/v1/worker/cancels",
        "/v1/worker/cancels",
        Some((JSON, &watch)),
        w,
        200,
    );
    k.call(
        "post",
        "/v1/worker/cancels",
        "/v1/worker/cancels",
        Some((JSON, &unknown)),
        w,
        404,
    );
    // Give the lease back (200), then report on the lease that is no longer held (409).
    let rel = post(&json!({"worker_id": worker_id, "lease_id": lease_id}));
    k.call(
        "post",
        "/v1/worker/release",
        "/v1/worker/release",
        Some((JSON, &rel)),
        w,
        200,
    );
    let rel_bad = post(&json!({"worker_id": worker_id, "lease_id": "no-such-lease"}));
    k.call(
        "post",
        "/v1/worker/release",
        "/v1/worker/release",
        Some((JSON, &rel_bad)),
        w,
        409,
    );
    let report = |lease: &str| {
        post(&json!({"worker_id": worker_id, "lease_id": lease,
                     "outcome": {"status": "failed", "message": "schema test"}}))
    };
    k.call(
        "post",
        "/v1/worker/result",
        "/v1/worker/result",
        Some((JSON, &report(&lease_id))),
        w,
        409,
    );
    // Lease it again and report a failed attempt (retried later by a real worker).
    let a = k.call(
        "post",
        "/v1/worker/lease",
        "/v1/worker/lease",
        Some((JSON, &lease_req)),
        w,
        200,
    );
    let lease_id = serde_json::from_str::<Value>(&a.body).unwrap()["lease_id"]
        .as_str()
        .unwrap()
        .to_string();
    k.call(
        "post",
        "/v1/worker/result",
        "/v1/worker/result",
        Some((JSON, &report(&lease_id))),
        w,
        200,
    );
    k.call(
        "post",
        "/v1/worker/result",
        "/v1/worker/result",
        Some((JSON, &report(&lease_id))),
        w,
        200,
    );
    // Artifacts: stored by their SHA-256, read back; a wrong name and a missing one.
    let blob = b"an artifact of the schema test".to_vec();
    let sha = sha256_hex(&blob);
    let put = format!("/v1/worker/artifacts/{sha}");
    let octet = "application/octet-stream";
    k.call(
        "put",
        "/v1/worker/artifacts/{name}",
        &put,
        Some((octet, &blob)),
        w,
        200,
    );
    k.call(
        "put",
        "/v1/worker/artifacts/{name}",
        "/v1/worker/artifacts/not-a-hash",
        Some((octet, &blob)),
        w,
        400,
    );
    k.call("get", "/v1/worker/artifacts/{name}", &put, None, w, 200);
    let missing = format!("/v1/worker/artifacts/{}", "0".repeat(64));
    k.call("get", "/v1/worker/artifacts/{name}", &missing, None, w, 404);

    // --- Real workers for real jobs of every kind.
    let _workers: Vec<Proc> = (0..2)
        .map(|_| start_worker(&c.url, 1, &[("GAMESOLVER_WORKER_TOKEN", WORKER)]))
        .collect();
    let jobs = [
        json!({"game": "connect4", "position": "2252576253462244111563365343671351441",
               "algorithm": "alphabeta"}),
        json!({"game": "connect4", "position": "52753311433677442422121", "algorithm": "alphabeta",
               "options": {"analyse": "all"}}),
        json!({"game": "connect4", "position": "", "algorithm": "mcts",
               "options": {"playouts": "20000", "trees": "2"}}),
        json!({"game": "morpion", "game_params": {"variant": "5D"}, "algorithm": "nrpa",
               "options": {"level": "1", "iterations": "20", "runs": "2"}}),
        json!({"game": "tictactoe", "position": "", "algorithm": "pns",
               "options": {"target": "0", "proof": "true"}}),
        json!({"game": "awari", "algorithm": "retrograde",
               "options": {"stones": "4", "name": "schematest"}}),
        json!({"game": "pig", "algorithm": "expectimax", "options": {"depth": "3"}}),
        json!({"game": "rolit", "game_params": {"size": "6"}, "algorithm": "maxn",
               "options": {"depth": "2"}}),
    ];
    let mut ids = vec![job];
    for j in &jobs {
        let body = post(j);
        let a = k.call("post", "/v1/jobs", "/v1/jobs", Some((JSON, &body)), t, 201);
        ids.push(
            serde_json::from_str::<Value>(&a.body).unwrap()["id"]
                .as_u64()
                .unwrap_or_else(|| panic!("{j}: {}", a.body)),
        );
    }
    // While they run: status, the job list and a running job's pages.
    k.call("get", "/v1/status", "/v1/status", None, t, 200);
    k.call(
        "get",
        "/v1/jobs/{id}",
        &format!("/v1/jobs/{}", ids[1]),
        None,
        t,
        200,
    );
    for id in &ids {
        wait_done(&c, *id);
    }
    let proof_job = ids[5];
    let plain_job = ids[1];
    for id in &ids {
        k.call(
            "get",
            "/v1/jobs/{id}",
            &format!("/v1/jobs/{id}"),
            None,
            t,
            200,
        );
        let tasks = k.call(
            "get",
            "/v1/jobs/{id}/tasks",
            &format!("/v1/jobs/{id}/tasks"),
            None,
            t,
            200,
        );
        // A task that a worker ran says how long it ran.
        let tasks: Value = serde_json::from_str(&tasks.body).unwrap_or_default();
        for task in tasks["tasks"].as_array().into_iter().flatten() {
            if task["state"] == "done" && task["attempts"].as_u64() > Some(0) {
                assert!(task["run_ms"].is_u64(), "job {id}: {task}");
            }
        }
        k.events(*id);
        let board = request("GET", &format!("{}/v1/jobs/{id}/board.svg", c.url), None, t);
        let expect = board.code; // 200, or 204 for a game without pictures
        assert!(
            matches!(expect, 200 | 204),
            "board.svg of job {id}: {}",
            board.code
        );
        k.check(
            "get",
            "/v1/jobs/{id}/board.svg",
            &format!("/v1/jobs/{id}/board.svg"),
            &board,
            expect,
        );
        k.call(
            "get",
            "/v1/jobs/{id}/plot.svg",
            &format!("/v1/jobs/{id}/plot.svg"),
            None,
            t,
            200,
        );
    }
    k.call(
        "get",
        "/v1/jobs/{id}/proof",
        &format!("/v1/jobs/{proof_job}/proof"),
        None,
        t,
        200,
    );
    k.call(
        "get",
        "/v1/jobs/{id}/proof",
        &format!("/v1/jobs/{plain_job}/proof"),
        None,
        t,
        404,
    );
    k.call("get", "/v1/jobs/{id}", "/v1/jobs/999999", None, t, 404);
    k.call(
        "get",
        "/v1/jobs/{id}/tasks",
        "/v1/jobs/999999/tasks",
        None,
        t,
        404,
    );
    k.call(
        "get",
        "/v1/jobs/{id}/events",
        "/v1/jobs/999999/events",
        None,
        t,
        404,
    );
    k.call(
        "get",
        "/v1/jobs/{id}/board.svg",
        "/v1/jobs/999999/board.svg",
        None,
        t,
        404,
    );
    k.call(
        "get",
        "/v1/jobs/{id}/plot.svg",
        "/v1/jobs/999999/plot.svg",
        None,
        t,
        404,
    );
    // Cancel: a finished job (409), an unknown one (404), a long one (200).
    k.call(
        "post",
        "/v1/jobs/{id}/cancel",
        &format!("/v1/jobs/{plain_job}/cancel"),
        None,
        t,
        409,
    );
    k.call(
        "post",
        "/v1/jobs/{id}/cancel",
        "/v1/jobs/999999/cancel",
        None,
        t,
        404,
    );
    let long = c.submit(
        &json!({"game": "connect4", "position": "", "algorithm": "alphabeta"}),
        t,
    );
    k.call(
        "post",
        "/v1/jobs/{id}/cancel",
        &format!("/v1/jobs/{long}/cancel"),
        None,
        t,
        200,
    );
    // Lists and options.
    k.call("get", "/v1/jobs", "/v1/jobs", None, t, 200);
    k.call("get", "/v1/jobs", "/v1/jobs?limit=2", None, t, 200);
    k.call("get", "/v1/jobs", "/v1/jobs?limit=abc", None, t, 400);
    k.call(
        "get",
        "/v1/options",
        "/v1/options?game=connect4&algorithm=alphabeta",
        None,
        t,
        200,
    );
    k.call(
        "get",
        "/v1/options",
        "/v1/options?game=othello&algorithm=jlpns",
        None,
        t,
        200,
    );
    k.call("get", "/v1/options", "/v1/options", None, t, 400);
    k.call(
        "get",
        "/v1/options",
        "/v1/options?game=nosuchgame&algorithm=alphabeta",
        None,
        t,
        404,
    );
    // Submit errors: bad job, no token, too large, wrong media type, quota.
    let bad = post(&json!({"game": "connect4", "algorithm": "nosuch"}));
    k.call("post", "/v1/jobs", "/v1/jobs", Some((JSON, &bad)), t, 400);
    let ok = post(&json!({"game": "tictactoe", "position": "", "algorithm": "minimax"}));
    k.call("post", "/v1/jobs", "/v1/jobs", Some((JSON, &ok)), None, 401);
    let a = declared_too_large(&c.url, "/v1/jobs", 2 << 20, API);
    k.check("post", "/v1/jobs", "/v1/jobs", &a, 413);
    k.call(
        "post",
        "/v1/jobs",
        "/v1/jobs",
        Some(("text/plain", &ok)),
        t,
        415,
    );
    // Fill the queue (12 jobs at most) with jobs no worker can finish soon, then one more.
    let slow = post(&json!({"game": "connect4", "position": "", "algorithm": "alphabeta"}));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let a = request(
            "POST",
            &format!("{}/v1/jobs", c.url),
            Some((JSON, &slow)),
            t,
        );
        if a.code == 429 {
            k.check("post", "/v1/jobs", "/v1/jobs", &a, 429);
            break;
        }
        assert_eq!(a.code, 201, "{}", a.body);
        assert!(Instant::now() < deadline, "the queue never filled");
    }
    // Pictures, tables, the service's own pages.
    k.call(
        "get",
        "/v1/board.svg",
        "/v1/board.svg?game=connect4&position=4453",
        None,
        t,
        200,
    );
    k.call(
        "get",
        "/v1/board.svg",
        "/v1/board.svg?game=connect4&position=9",
        None,
        t,
        400,
    );
    k.call(
        "get",
        "/v1/board.svg",
        "/v1/board.svg?game=pig&position=",
        None,
        t,
        204,
    );
    k.call(
        "get",
        "/v1/status/plot.svg",
        "/v1/status/plot.svg",
        None,
        t,
        200,
    );
    let words = "/v1/score-words?game=connect4&position=4453&values=-2,0,3";
    k.call("get", "/v1/score-words", words, None, t, 200);
    let bad_words = "/v1/score-words?game=connect4&values=x";
    k.call("get", "/v1/score-words", bad_words, None, t, 400);
    k.call(
        "get",
        "/v1/tables/{name}",
        "/v1/tables/schematest",
        None,
        t,
        200,
    );
    // Game modules: no module is uploaded here (a build without the `modules` feature answers
    // an upload with 501, docs/API.md 6.2a); a name that cannot be is a 400 in every build.
    k.call("get", "/v1/games", "/v1/games", None, t, 200);
    k.call("get", "/v1/games/{name}", "/v1/games/nosuch", None, t, 404);
    let module = ("application/wasm", &b"(module)"[..]);
    k.call(
        "post",
        "/v1/games",
        "/v1/games?name=..",
        Some(module),
        t,
        400,
    );
    k.call(
        "get",
        "/v1/tables/{name}",
        "/v1/tables/nosuchset",
        None,
        t,
        404,
    );
    k.call(
        "get",
        "/v1/tables/{name}",
        "/v1/tables/..%2Fx",
        None,
        t,
        400,
    );
    let lookup = "/v1/tables/schematest/lookup?position=1,0,0,0,0,1,0,0,1,0,0,1";
    k.call("get", "/v1/tables/{name}/lookup", lookup, None, t, 200);
    let too_many = "/v1/tables/schematest/lookup?position=9,0,0,0,0,1,0,0,1,0,0,1";
    k.call("get", "/v1/tables/{name}/lookup", too_many, None, t, 400);
    k.call(
        "get",
        "/v1/tables/{name}/lookup",
        "/v1/tables/nosuchset/lookup?position=1,0,0,0,0,0,0,0,0,0,0,0",
        None,
        t,
        404,
    );
    k.call(
        "get",
        "/v1/tables/{name}/{stones}",
        "/v1/tables/schematest/3",
        None,
        t,
        200,
    );
    k.call(
        "get",
        "/v1/tables/{name}/{stones}",
        "/v1/tables/schematest/40",
        None,
        t,
        404,
    );
    k.call("get", "/metrics", "/metrics", None, t, 200);
    k.call("get", "/metrics", "/metrics", None, None, 401);
    k.call("get", "/healthz", "/healthz", None, None, 200);
    k.call("get", "/openapi.json", "/openapi.json", None, None, 200);
    k.call("get", "/docs", "/docs", None, None, 200);
    k.call("get", "/", "/", None, None, 200);
    k.call("get", "/assets/app.css", "/assets/app.css", None, None, 200);
    k.call("get", "/assets/app.js", "/assets/app.js", None, None, 200);
    k.call(
        "get",
        "/assets/meta.json",
        "/assets/meta.json",
        None,
        None,
        200,
    );
    k.call("get", "/favicon.ico", "/favicon.ico", None, None, 200);

    // Every documented route was answered here.
    let doc_routes: BTreeSet<(String, String)> = k.doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(p, ops)| {
            ops.as_object()
                .unwrap()
                .keys()
                .map(|m| (m.clone(), p.clone()))
                .collect::<Vec<_>>()
        })
        .collect();
    for (m, p) in doc_routes.difference(&k.seen) {
        k.failures.push(format!(
            "{} {p}: documented, but no answer was checked here",
            m.to_uppercase()
        ));
    }
    assert!(
        k.failures.is_empty(),
        "{} answers do not match /openapi.json:\n{}",
        k.failures.len(),
        k.failures.join("\n")
    );
}
