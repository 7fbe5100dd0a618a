//! The OpenAPI 3.1 document of the HTTP API (`GET /openapi.json`) and a self-contained docs page
//! (`GET /docs`) that renders it and lets one try the endpoints, with no request to the
//! internet. Hand-written, so it documents exactly the routes of `api::router`; the e2e tests
//! check that every documented path answers.

use serde_json::{json, Value};

fn error_response(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

fn json_body(schema: &str) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}})
}

fn ok(description: &str, schema: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}})
}

/// The OpenAPI document.
pub fn spec() -> Value {
    let id_param =
        json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}]);
    let worker_auth = json!([{"workerToken": []}]);
    let api_auth = json!([{"apiToken": []}, {}]);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "gamesolver coordinator",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Submit game-solving jobs, follow them, and serve workers. Errors are {\"error\": {\"code\", \"message\"}}. Job endpoints need `Authorization: Bearer $GAMESOLVER_API_TOKEN` when that token is set; worker endpoints need `Authorization: Bearer $GAMESOLVER_WORKER_TOKEN` (without it they accept only the coordinator's own local workers, unless it runs with --insecure-workers). `GET /v1/jobs` pages with `limit` and `before` (the previous page's `next_before`)."
        },
        "paths": {
            "/v1/jobs": {
                "post": {
                    "summary": "Submit a job", "security": api_auth,
                    "requestBody": json_body("JobSpec"),
                    "responses": {"201": ok("Accepted", "Submitted"), "400": error_response("Invalid job: the message names the problem"), "401": error_response("Missing or wrong API token"), "413": error_response("Body too large"), "429": error_response("A quota is full (max-queued-jobs, max-position-bytes): the message names it; try again later")}
                },
                "get": {
                    "summary": "List jobs, newest first", "security": api_auth,
                    "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer", "default": 100, "maximum": 1000}},
                        {"name": "before", "in": "query", "description": "Only jobs with smaller ids: the previous page's next_before", "schema": {"type": "integer"}}],
                    "responses": {"200": ok("Jobs", "JobList")}
                }
            },
            "/v1/jobs/{id}": {"get": {"summary": "Job status and result (task counts, the tasks in flight and the latest 50 finished ones)", "security": api_auth, "parameters": id_param,
                "responses": {"200": ok("Status", "JobStatus"), "404": error_response("No such job")}}},
            "/v1/jobs/{id}/events": {"get": {"summary": "Server-Sent Events: `status` events while the job runs, one `end` event when it ends", "security": api_auth, "parameters": id_param,
                "responses": {"200": {"description": "text/event-stream; each data line is a JobStatus", "content": {"text/event-stream": {}}}, "404": error_response("No such job"), "503": error_response("Too many event streams open (serve --max-event-streams): poll the status instead")}}},
            "/v1/jobs/{id}/cancel": {"post": {"summary": "Cancel a job; running tasks are told to stop", "security": api_auth, "parameters": id_param,
                "responses": {"200": ok("Status after the cancel", "JobStatus"), "404": error_response("No such job"), "409": error_response("The job has already ended")}}},
            "/v1/jobs/{id}/tasks": {"get": {"summary": "Every task of a job, by id, paged (the status lists only the tasks in flight and the latest finished ones)", "security": api_auth,
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "default": 100, "maximum": 1000}},
                    {"name": "after", "in": "query", "description": "Only tasks with larger ids: the previous page's next_after", "schema": {"type": "integer"}}],
                "responses": {"200": ok("Tasks", "TaskPage"), "404": error_response("No such job")}}},
            "/v1/jobs/{id}/proof": {"get": {"summary": "The job's proof certificate (proof-number jobs with option proof=true, once done); `gamesolver verify-proof` checks it", "security": api_auth, "parameters": id_param,
                "responses": {"200": {"description": "The certificate (JSON)", "content": {"application/json": {}}}, "404": error_response("No such job, or the job has no proof certificate")}}},
            "/v1/status": {"get": {"summary": "Workers, queue depth, throughput", "security": api_auth, "responses": {"200": {"description": "Status"}}}},
            "/healthz": {"get": {"summary": "Liveness", "responses": {"200": {"description": "{\"status\": \"ok\"}"}}}},
            "/metrics": {"get": {"summary": "Prometheus metrics (needs the API token when one is set, unless serve --open-metrics)", "security": api_auth, "responses": {"200": {"description": "text/plain exposition format", "content": {"text/plain": {}}}, "401": error_response("Missing or wrong API token")}}},
            "/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI 3.1"}}}},
            "/docs": {"get": {"summary": "Interactive documentation (no internet needed)", "responses": {"200": {"description": "HTML"}}}},
            "/v1/worker/register": {"post": {"summary": "Worker: register", "security": worker_auth, "requestBody": json_body("Register"),
                "responses": {"200": ok("Worker id and timings", "Registered"), "401": error_response("Missing or wrong worker token")}}},
            "/v1/worker/lease": {"post": {"summary": "Worker: long-poll for a task", "security": worker_auth, "requestBody": json_body("LeaseRequest"),
                "responses": {"200": ok("A lease", "Lease"), "204": {"description": "No task within wait_ms"}, "404": error_response("Unknown worker: register again")}}},
            "/v1/worker/heartbeat": {"post": {"summary": "Worker: the task still runs (with progress); the reply may say cancel", "security": worker_auth, "requestBody": json_body("Heartbeat"),
                "responses": {"200": {"description": "{\"cancel\": bool}"}, "409": error_response("The lease is expired, foreign or unknown: stop the task")}}},
            "/v1/worker/result": {"post": {"summary": "Worker: the outcome of a lease (idempotent per lease)", "security": worker_auth, "requestBody": json_body("Report"),
                "responses": {"200": {"description": "{\"duplicate\": bool}"}, "409": error_response("The lease is expired, foreign or unknown: the result is refused")}}},
            "/v1/worker/release": {"post": {"summary": "Worker: give a lease back (shutdown); the attempt does not count", "security": worker_auth, "requestBody": json_body("Release"),
                "responses": {"200": {"description": "{\"released\": true}"}, "409": error_response("Not this worker's active lease")}}}
        },
        "components": {
            "securitySchemes": {
                "apiToken": {"type": "http", "scheme": "bearer", "description": "GAMESOLVER_API_TOKEN"},
                "workerToken": {"type": "http", "scheme": "bearer", "description": "GAMESOLVER_WORKER_TOKEN"}
            },
            "schemas": {
                "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "object", "required": ["code", "message"], "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}}},
                "JobSpec": {"type": "object", "required": ["game", "algorithm"], "additionalProperties": false, "properties": {
                    "game": {"type": "string", "examples": ["tictactoe", "connect4"]},
                    "game_params": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}},
                    "position": {"type": "string", "examples": ["519"]},
                    "algorithm": {"type": "string", "examples": ["alphabeta"]},
                    "options": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}},
                    "limits": {"type": "object", "additionalProperties": false, "properties": {"time_ms": {"type": "integer", "minimum": 1}, "node_limit": {"type": "integer", "minimum": 1}}}}},
                "Submitted": {"type": "object", "properties": {"id": {"type": "integer"}, "state": {"type": "string"}}},
                "JobList": {"type": "object", "properties": {"jobs": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}, "state": {"type": "string"}, "summary": {"type": "string"}, "created_ms": {"type": "integer"}}}},
                    "next_before": {"type": ["integer", "null"], "description": "Pass as `before` for the next page; null on the last page"}}},
                "JobStatus": {"type": "object", "required": ["id", "state", "progress", "tasks", "result"], "properties": {
                    "id": {"type": "integer"},
                    "state": {"type": "string", "enum": ["queued", "running", "done", "failed", "cancelled"]},
                    "progress": {"type": "object"},
                    "tasks": {"type": "object", "properties": {"total": {"type": "integer"}, "queued": {"type": "integer"}, "running": {"type": "integer"}, "done": {"type": "integer"}, "failed": {"type": "integer"}, "cancelled": {"type": "integer"}}},
                    "task_list": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}, "what": {"type": "string", "description": "e.g. `probe value >= 1` (in the job's value scale) or `run 3`"},
                        "state": {"type": "string"}, "attempts": {"type": "integer"}, "workers": {"type": "array", "items": {"type": "string"}}, "last_error": {"type": ["string", "null"]},
                        "progress": {"description": "While the task runs: its worker's latest report (`nodes`, `elapsed_ms`, `nodes_per_s` for searches that publish nothing else, else the kernel's own report with `nodes` added); null otherwise"}}}},
                    "result": {"description": "Same keys as `solve --json` (game, algorithm, value, best_move, nodes, elapsed_ms, ...), null until done. An exact job stopped by a limit is done with value null, `bounds` [lower, upper] proved so far and `stopped` (time or nodes)"},
                    "error": {"type": ["string", "null"], "description": "Why the job failed or was cancelled"},
                    "created_ms": {"type": "integer"}, "finished_ms": {"type": ["integer", "null"]},
                    "job": {"$ref": "#/components/schemas/JobSpec"},
                    "position_bytes": {"type": "integer", "description": "Present when the position is longer than 4096 bytes: its length (`job.position` then shows only its start)"}}},
                "TaskPage": {"type": "object", "properties": {"tasks": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}, "what": {"type": "string"},
                        "state": {"type": "string"}, "attempts": {"type": "integer"}, "workers": {"type": "array", "items": {"type": "string"}}, "last_error": {"type": ["string", "null"]}}}},
                    "next_after": {"type": ["integer", "null"], "description": "Pass as `after` for the next page; null on the last"}}},
                "Register": {"type": "object", "required": ["host", "threads"], "properties": {"host": {"type": "string"}, "threads": {"type": "integer"}, "version": {"type": "string"}}},
                "Registered": {"type": "object", "properties": {"worker_id": {"type": "string"}, "lease_ms": {"type": "integer"}, "heartbeat_ms": {"type": "integer"}}},
                "LeaseRequest": {"type": "object", "required": ["worker_id"], "properties": {"worker_id": {"type": "string"}, "wait_ms": {"type": "integer"}}},
                "Lease": {"type": "object", "properties": {"lease_id": {"type": "string"}, "task_id": {"type": "integer"}, "job_id": {"type": "integer"}, "attempt": {"type": "integer"},
                    "task": {"type": "object", "description": "{job: JobSpec, kind: {kind: whole} | {kind: probe, target} | {kind: run, index, seed, input}}"}, "time_ms": {"type": "integer"}}},
                "Heartbeat": {"type": "object", "required": ["worker_id", "lease_id"], "properties": {"worker_id": {"type": "string"}, "lease_id": {"type": "string"}, "progress": {}}},
                "Report": {"type": "object", "required": ["worker_id", "lease_id", "outcome"], "properties": {"worker_id": {"type": "string"}, "lease_id": {"type": "string"},
                    "outcome": {"type": "object", "description": "{status: done, output} | {status: failed, message} | {status: rejected, message} | {status: stopped, reason} | {status: cancelled}"}}},
                "Release": {"type": "object", "required": ["worker_id", "lease_id"], "properties": {"worker_id": {"type": "string"}, "lease_id": {"type": "string"}}}
            }
        }
    })
}

/// The docs page: plain HTML and a little script that reads `/openapi.json` from the same
/// server and renders every path with a form to try it.
pub const DOCS_PAGE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gamesolver API</title>
<style>
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.6rem} .op{border:1px solid #ccc;border-radius:6px;margin:.8rem 0;padding:.6rem}
.m{display:inline-block;min-width:4rem;font-weight:bold;text-transform:uppercase}
.get{color:#1769aa}.post{color:#2e7d32} code,pre,textarea{font-family:ui-monospace,monospace;font-size:.85rem}
textarea{width:100%;height:5rem} pre{background:#f5f5f5;padding:.5rem;overflow:auto;max-height:20rem}
input{font-family:inherit} .d{color:#555;margin:.3rem 0}
</style></head><body>
<h1>gamesolver coordinator API</h1>
<p id="desc"></p>
<p>Token (sent as <code>Authorization: Bearer ...</code>): <input id="tok" size="40"></p>
<div id="ops">Loading <a href="/openapi.json">/openapi.json</a>...</div>
<script>
const examples = {
  "/v1/jobs": '{"game":"tictactoe","position":"","algorithm":"alphabeta"}',
};
fetch('/openapi.json').then(r => r.json()).then(spec => {
  document.getElementById('desc').textContent = spec.info.description;
  const ops = document.getElementById('ops'); ops.textContent = '';
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const div = document.createElement('div'); div.className = 'op';
      const hasId = path.includes('{id}');
      const hasBody = method === 'post' && !!op.requestBody;
      div.innerHTML = `<span class="m ${method}">${method}</span> <code>${path}</code>
        <div class="d"></div>
        ${hasId ? 'id: <input class="id" size="8"> ' : ''}
        ${hasBody ? '<textarea class="body"></textarea>' : ''}
        <button>Try</button><pre class="out" hidden></pre>`;
      div.querySelector('.d').textContent = op.summary || '';
      if (hasBody) div.querySelector('.body').value = examples[path] || '{}';
      div.querySelector('button').onclick = async () => {
        let url = path;
        if (hasId) url = url.replace('{id}', encodeURIComponent(div.querySelector('.id').value));
        const headers = {'Content-Type': 'application/json'};
        const tok = document.getElementById('tok').value; if (tok) headers['Authorization'] = 'Bearer ' + tok;
        const init = {method: method.toUpperCase(), headers};
        if (hasBody) init.body = div.querySelector('.body').value;
        const out = div.querySelector('.out'); out.hidden = false; out.textContent = '...';
        try {
          if (path.endsWith('/events')) { out.textContent = 'Open ' + url + ' in a new tab to follow the stream.'; return; }
          const r = await fetch(url, init); const t = await r.text();
          out.textContent = r.status + ' ' + r.statusText + '\n' + t;
        } catch (e) { out.textContent = String(e); }
      };
      ops.appendChild(div);
    }
  }
});
</script></body></html>
"#;

#[cfg(test)]
mod tests {
    /// `(path, method)` of every route the router source declares: the first string literal
    /// after each `.route(` and the `get(`/`post(` calls up to the next `.route(`.
    fn declared_routes(source: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let parts: Vec<&str> = source.split(".route(").skip(1).collect();
        for part in parts {
            let Some(start) = part.find('"') else {
                continue;
            };
            let rest = &part[start + 1..];
            let Some(end) = rest.find('"') else { continue };
            let path = rest[..end].to_string();
            let body = &rest[end..];
            // Only this route's own call: stop at the end of the statement or of the chain.
            let body = &body[..body.find(";\n").unwrap_or(body.len())];
            for method in ["get", "post"] {
                let needle = format!("{method}(");
                let hit = body.match_indices(&needle).any(|(i, _)| {
                    i == 0
                        || !body[..i]
                            .chars()
                            .last()
                            .is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                if hit {
                    out.push((path.clone(), method.to_string()));
                }
            }
        }
        out
    }

    /// The served document (the API's and the dashboard's paths) names every route the router
    /// declares, with its method, and no route that does not exist.
    #[test]
    fn the_served_spec_lists_every_route_and_only_those() {
        let doc = crate::dashboard::document(super::spec());
        let mut routes = declared_routes(include_str!("api.rs"));
        routes.extend(declared_routes(include_str!("dashboard.rs")));
        assert!(routes.len() >= 20, "parsed too few routes: {routes:?}");
        for (path, method) in &routes {
            assert!(
                doc["paths"][path][method].is_object(),
                "{} {path} is routed but not in /openapi.json",
                method.to_uppercase()
            );
        }
        for (path, item) in doc["paths"].as_object().unwrap() {
            for method in item.as_object().unwrap().keys() {
                assert!(
                    routes.iter().any(|(p, m)| p == path && m == method),
                    "{} {path} is in /openapi.json but not routed",
                    method.to_uppercase()
                );
            }
        }
    }
}
