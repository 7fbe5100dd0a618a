//! The OpenAPI 3.1 document of the HTTP API (`GET /openapi.json`) and a self-contained docs page
//! (`GET /docs`) that renders it and lets one try the endpoints, with no request to the
//! internet.
//!
//! Generated, not written: paths come from the handlers' `#[utoipa::path]` annotations
//! ([`crate::api`], [`crate::dashboard`]), bodies from the answer and wire types
//! ([`crate::answers`], `gamesolver_shared::wire`), and one schema per kernel family (and one
//! for the game parameters) from the declared option specs (`registry::spec::families`), the
//! same specs that check a job, print `solve --help` and fill the README's tables. A test
//! checks that the document lists exactly the routes the router serves.

use crate::answers::{self, OptionInfo, OptionType};
use crate::api::Json;
use axum::response::Html;
use gamesolver_shared::registry::spec::{self, Kind, Spec};
use gamesolver_shared::wire::{self, protocol};
use serde_json::{json, Map, Value};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// The derived part of the document: every annotated handler and the types they name.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "gamesolver coordinator",
        description = "Submit game-solving jobs, follow them, and serve workers. Errors are {\"error\": {\"code\", \"message\"}}. Job endpoints need `Authorization: Bearer $GAMESOLVER_API_TOKEN` when that token is set; worker endpoints need `Authorization: Bearer $GAMESOLVER_WORKER_TOKEN` (without it they accept only the coordinator's own local workers, unless it runs with --insecure-workers). `GET /v1/jobs` pages with `limit` and `before` (the previous page's `next_before`). The options a job accepts are listed per kernel family in the `*Options` schemas and per game and algorithm by `GET /v1/options`."
    ),
    paths(
        crate::api::submit_job,
        crate::api::list_jobs,
        crate::api::job_status,
        crate::api::job_events,
        crate::api::cancel_job,
        crate::api::job_tasks,
        crate::api::job_proof,
        crate::api::table_set,
        crate::api::table_lookup,
        crate::api::table_file,
        crate::api::status,
        crate::api::options,
        crate::games_api::upload_game,
        crate::games_api::list_games,
        crate::games_api::get_game,
        crate::api::healthz,
        crate::api::metrics,
        openapi_json,
        docs_page,
        crate::api::worker_register,
        crate::api::worker_lease,
        crate::api::worker_heartbeat,
        crate::api::worker_cancels,
        crate::api::worker_result,
        crate::api::worker_release,
        crate::api::worker_put_artifact,
        crate::api::worker_get_artifact,
        crate::dashboard::index_page,
        crate::dashboard::app_js,
        crate::dashboard::app_css,
        crate::dashboard::meta_json,
        crate::dashboard::favicon,
        crate::dashboard::job_plot,
        crate::dashboard::job_board,
        crate::dashboard::status_plot,
        crate::dashboard::board_preview,
        crate::dashboard::score_words,
    ),
    components(schemas(
        answers::ErrorBody,
        wire::JobSpec,
        wire::Limits,
        wire::TaskKind,
        wire::TaskSpec,
        protocol::Outcome,
        answers::OptionInfo,
        crate::games_api::GameEntry,
        crate::games_api::GameList,
    )),
    modifiers(&Tokens),
    tags(
        (name = "jobs", description = "Submit and follow jobs (API token)"),
        (name = "games", description = "Upload and list game modules (API token; docs/GAME_MODULES.md)"),
        (name = "worker", description = "The worker protocol (worker token)"),
        (name = "service", description = "Liveness, metrics, this document"),
        (name = "dashboard", description = "The web dashboard and its pictures"),
    )
)]
struct ApiDoc;

/// The two bearer tokens.
struct Tokens;

impl Modify for Tokens {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        for (name, variable) in [
            ("apiToken", "GAMESOLVER_API_TOKEN"),
            ("workerToken", "GAMESOLVER_WORKER_TOKEN"),
        ] {
            components.add_security_scheme(
                name,
                SecurityScheme::Http(
                    HttpBuilder::new()
                        .scheme(HttpAuthScheme::Bearer)
                        .description(Some(variable))
                        .build(),
                ),
            );
        }
    }
}

/// The schema name of a family's table, from its title: the words before the parenthesis,
/// capitalised and joined (`Two-player zero-sum (...)` -> `TwoPlayerZeroSumOptions`); the game
/// parameters' table is `GameParameters`.
pub fn family_schema_name(title: &str) -> String {
    let words = title.split('(').next().unwrap_or(title);
    let mut name: String = words
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect();
    if !name.ends_with("Parameters") {
        name += "Options";
    }
    name
}

/// A JSON schema of one declared setting: its type, bounds and default, and its meaning.
pub fn setting_schema(spec: &Spec, param: bool) -> Value {
    let info = OptionInfo::of(spec, param);
    let mut s = Map::new();
    let ty = match info.kind {
        OptionType::Integer => "integer",
        OptionType::Number => "number",
        OptionType::Boolean => "boolean",
        OptionType::String => "string",
    };
    s.insert("type".into(), ty.into());
    for (key, bound) in [("minimum", info.minimum), ("maximum", info.maximum)] {
        if let Some(b) = bound {
            s.insert(key.into(), serde_json::to_value(b).unwrap_or_default());
        }
    }
    if let Kind::Choice(words) = spec.kind {
        s.insert("enum".into(), json!(words));
    }
    // Defaults that are values are stated as such; the others ("the runner's threads") are
    // words for people and go in the description.
    let default = spec.default.json();
    let mut description = info.description.clone();
    match default {
        Some(d) => {
            s.insert("default".into(), d);
        }
        None => description += &format!(" (default: {})", info.default),
    }
    if !info.why.is_empty() {
        description += &format!(". Bound: {}", info.why);
    }
    s.insert("description".into(), description.into());
    Value::Object(s)
}

/// One object schema per kernel family (and one for the game parameters): its options as
/// properties, from the declared specs.
pub fn option_schemas() -> Vec<(String, Value)> {
    spec::families()
        .into_iter()
        .map(|(title, specs)| {
            let param = title == "Game parameters";
            let mut props = Map::new();
            for s in &specs {
                let mut schema = setting_schema(s, param);
                if !s.only.is_empty() {
                    let d = schema["description"].as_str().unwrap_or("").to_string();
                    schema["description"] = format!("{d} (only {})", s.only.join(", ")).into();
                }
                // Two games may name different parameters alike (`k` of mnk and weakschur).
                let schema = match props.remove(s.name) {
                    Some(prev) => json!({"anyOf": [prev, schema]}),
                    None => schema,
                };
                props.insert(s.name.into(), schema);
            }
            let title_text = title.replace('`', "");
            let what = if param {
                "`game_params` of a job (per game: GET /v1/options)".to_string()
            } else {
                format!("`options` of a job of the family {title_text}")
            };
            (
                family_schema_name(&title),
                json!({"type": "object", "title": title_text, "description": what,
                       "additionalProperties": false, "properties": props}),
            )
        })
        .collect()
}

/// The OpenAPI document as served.
pub fn document() -> Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or(Value::Null);
    doc["info"]["version"] = env!("CARGO_PKG_VERSION").into();
    if let Some(schemas) = doc["components"]["schemas"].as_object_mut() {
        for (name, schema) in option_schemas() {
            schemas.insert(name, schema);
        }
    }
    doc
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

/// `GET /openapi.json`.
#[utoipa::path(get, path = "/openapi.json", tag = "service",
    summary = "This document (OpenAPI 3.1, generated from the types and the option specs)",
    responses((status = 200, description = "OpenAPI 3.1", body = serde_json::Value)))]
pub(crate) async fn openapi_json() -> Json<serde_json::Value> {
    Json(document())
}

/// `GET /docs`.
#[utoipa::path(get, path = "/docs", tag = "service",
    summary = "Interactive documentation (no internet needed)",
    responses((status = 200, description = "HTML", content_type = "text/html")))]
pub(crate) async fn docs_page() -> Html<&'static str> {
    Html(DOCS_PAGE)
}

#[cfg(test)]
mod tests {
    /// A job's `game_params` and `options` take strings, numbers and booleans, as the API
    /// accepts them.
    #[test]
    fn settings_values_are_strings_numbers_or_booleans() {
        let doc = super::document();
        let schemas = &doc["components"]["schemas"];
        for field in ["game_params", "options"] {
            let values = &schemas["JobSpec"]["properties"][field]["additionalProperties"];
            let target = match values["$ref"].as_str() {
                Some(r) => &schemas[r.rsplit('/').next().unwrap()],
                None => values,
            };
            let text = target.to_string();
            for ty in ["string", "number", "boolean"] {
                assert!(text.contains(&format!("\"{ty}\"")), "{field}: {text}");
            }
        }
    }

    /// `(path, method)` of every route the router source declares: the first string literal
    /// after each `.route(` and the `get(`/`post(`/`put(` calls up to the next `.route(`.
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
            for method in ["get", "post", "put"] {
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
        let doc = super::document();
        let mut routes = declared_routes(include_str!("routes.rs"));
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
