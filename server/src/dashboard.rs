//! The dashboard: a single-page web app served at `/`, and the pictures it shows (the routes,
//! their access and their answers: docs/API.md, 6.5 "Dashboard and pictures").
//!
//! Pages (open, like `/docs`): plain HTML, CSS and JavaScript embedded from `server/assets/` (no
//! build step, nothing fetched from the internet; the page talks only to this coordinator).
//! `/assets/meta.json` lists the registry's games and algorithms for the submit form, whose
//! option fields come from `GET /v1/options`. The job page answers the job's question from the
//! result for people (board with the principal variation, an analysis' move scores, MCTS bars,
//! the progress plot, the tasks, a retrograde build's databases with a lookup box); the analysis
//! board (`#/analyse`) submits an `analyse=all` alpha-beta job for each position played.
//!
//! Pictures are standalone SVG behind the client token ([`viz::progress_plot`],
//! [`viz::board::picture`], [`best_sequence`]); score words are [`viz::board::score_words`], the
//! wording `gamesolver analyse` prints too. History: the scheduler keeps only a job's latest
//! progress, so a recorder task listens to the job-changed broadcast and keeps in memory a
//! bounded history per job ([`MAX_POINTS`] snapshots, thinned by halves, for the [`MAX_JOBS`]
//! most recent jobs) and samples `/v1/status` every [`SAMPLE_MS`] for the worker chart; it is
//! lost on restart. Bad input is 404 (unknown job) or 400 in the API's `{"error": {...}}`; a
//! game without pictures is 204, not an error, so a page showing any job logs none.

use crate::answers::{ErrorBody, Names};
use crate::api::{ApiError, JobId};
use crate::Coordinator;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use gamesolver_shared::registry;
use gamesolver_shared::viz::{self, Series, Snapshot};
use gamesolver_shared::wire::Settings;
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Snapshots kept per job; when full, every other one is dropped (the shape of a curve
/// survives, its resolution halves).
pub const MAX_POINTS: usize = 2048;
/// Jobs whose history is kept (the most recent ids).
pub const MAX_JOBS: usize = 256;
/// Interval of the worker samples (one per second is what a person watching can see).
pub const SAMPLE_MS: u64 = 1000;
/// Worker samples kept (an hour at one per second, thinned like job histories).
pub const MAX_SAMPLES: usize = 3600;

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");
const FAVICON_SVG: &str = include_str!("../assets/favicon.svg");

type Shared = Arc<Coordinator>;

/// Worker samples: milliseconds since the recorder started, running tasks per worker id.
type WorkerSamples = Vec<(u64, BTreeMap<String, usize>)>;

/// What the recorder keeps.
pub struct Dash {
    coord: Shared,
    started: Instant,
    jobs: Mutex<HashMap<u64, Vec<Snapshot>>>,
    /// Each recorded job's latest node count per task: kernel reports are per task, so a job of
    /// several tasks charts their sum (its work so far), not whichever task reported last.
    task_nodes: Mutex<HashMap<u64, BTreeMap<u64, u64>>>,
    workers: Mutex<WorkerSamples>,
}

/// The open pages (`/`, `/assets/*`, `/favicon.ico`).
pub fn pages() -> Router<Shared> {
    Router::new()
        .route("/", get(index_page))
        .route("/assets/app.js", get(app_js))
        .route("/assets/app.css", get(app_css))
        .route("/assets/meta.json", get(meta_json))
        .route("/favicon.ico", get(favicon))
}

/// An embedded asset's handler with its OpenAPI entry (one per file, so `/docs` lists each).
macro_rules! asset_handler {
    ($name:ident, $path:tt, $summary:tt, $what:tt, $ctype:tt, $body:expr) => {
        #[doc = concat!("`GET ", $path, "`.")]
        #[utoipa::path(get, path = $path, tag = "dashboard", summary = $summary, responses((status = 200, description = $what, content_type = $ctype)))]
        pub(crate) async fn $name() -> Response {
            asset(concat!($ctype, "; charset=utf-8"), $body)
        }
    };
}

asset_handler!(
    index_page,
    "/",
    "The dashboard (HTML; no internet needed)",
    "HTML",
    "text/html",
    INDEX_HTML
);
asset_handler!(
    app_js,
    "/assets/app.js",
    "The dashboard's script (embedded)",
    "JavaScript",
    "text/javascript",
    APP_JS
);
asset_handler!(
    app_css,
    "/assets/app.css",
    "The dashboard's style sheet (embedded)",
    "CSS",
    "text/css",
    APP_CSS
);

/// `GET /assets/meta.json`.
#[utoipa::path(get, path = "/assets/meta.json", tag = "dashboard",
    summary = "Game and algorithm names for the submit form",
    responses((status = 200, description = "Names", body = Names)))]
pub(crate) async fn meta_json() -> axum::Json<Names> {
    axum::Json(meta())
}

/// `GET /favicon.ico`.
#[utoipa::path(get, path = "/favicon.ico", tag = "dashboard",
    summary = "The icon (SVG)",
    responses((status = 200, description = "SVG", content_type = "image/svg+xml")))]
pub(crate) async fn favicon() -> Response {
    asset("image/svg+xml", FAVICON_SVG)
}

/// The picture endpoints (mounted behind the client token); starts the history recorder when
/// called inside a tokio runtime.
pub fn api_routes(coord: &Shared) -> Router<Shared> {
    let dash = Arc::new(Dash {
        coord: coord.clone(),
        started: Instant::now(),
        jobs: Mutex::new(HashMap::new()),
        task_nodes: Mutex::new(HashMap::new()),
        workers: Mutex::new(Vec::new()),
    });
    if tokio::runtime::Handle::try_current().is_ok() {
        tokio::spawn(record(dash.clone()));
    }
    Router::new()
        .route("/v1/jobs/{id}/plot.svg", get(job_plot))
        .route("/v1/jobs/{id}/board.svg", get(job_board))
        .route("/v1/status/plot.svg", get(status_plot))
        .route("/v1/board.svg", get(board_preview))
        .route("/v1/score-words", get(score_words))
        .with_state(dash)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

fn svg(body: String) -> Response {
    (
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// Game and algorithm names for the form.
fn meta() -> Names {
    Names {
        games: registry::GAMES.iter().map(|g| g.to_string()).collect(),
        algorithms: registry::ALGORITHMS.iter().map(|a| a.to_string()).collect(),
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// One flat progress object from a job status: the planner's figures, completed by the latest
/// kernel report's (the planner's bounds win over a single probe's).
pub fn flat_progress(status: &Value) -> Value {
    let mut out = serde_json::Map::new();
    if let Some(p) = status.get("progress").and_then(Value::as_object) {
        for (k, v) in p {
            if k != "kernel" {
                out.insert(k.clone(), v.clone());
            }
        }
        if let Some(r) = p
            .get("kernel")
            .and_then(|k| k.get("report"))
            .and_then(Value::as_object)
        {
            for (k, v) in r {
                out.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    Value::Object(out)
}

/// A job's work so far for its chart: records in `per` the latest node count of the task whose
/// kernel report `status` carries and gives the sum over the job's tasks; `None` when the status
/// has no task's count, or the planner reports the job's own.
fn job_nodes(per: &mut BTreeMap<u64, u64>, status: &Value) -> Option<u64> {
    let kernel = &status["progress"]["kernel"];
    if status["progress"].get("nodes").is_some() {
        return None;
    }
    let (task, n) = (
        kernel["task"].as_u64()?,
        kernel["report"]["nodes"].as_u64()?,
    );
    per.insert(task, n);
    Some(per.values().sum())
}

/// A snapshot of a job status (time since the job was created).
fn snapshot(status: &Value) -> Snapshot {
    let created = status["created_ms"].as_u64().unwrap_or(0);
    let at = status["finished_ms"].as_u64().unwrap_or_else(now_ms);
    Snapshot {
        t_ms: at.saturating_sub(created),
        progress: flat_progress(status),
    }
}

/// Halves a full history, keeping the first and the last point.
fn thin<T>(v: &mut Vec<T>, max: usize) {
    if v.len() < max {
        return;
    }
    let last = v.len() - 1;
    let mut i = 0;
    v.retain(|_| {
        let keep = i % 2 == 0 || i == last;
        i += 1;
        keep
    });
}

impl Dash {
    fn push_job(&self, id: u64, status: &Value) {
        let mut snap = snapshot(status);
        if let Some(n) = job_nodes(self.task_nodes.lock().entry(id).or_default(), status) {
            snap.progress["nodes"] = n.into();
        }
        let mut jobs = self.jobs.lock();
        if !jobs.contains_key(&id) && jobs.len() >= MAX_JOBS {
            if let Some(&oldest) = jobs.keys().min() {
                if oldest > id {
                    return;
                }
                jobs.remove(&oldest);
                self.task_nodes.lock().remove(&oldest);
            }
        }
        let h = jobs.entry(id).or_default();
        if h.last().is_some_and(|l| l.progress == snap.progress) {
            return;
        }
        thin(h, MAX_POINTS);
        h.push(snap);
    }

    fn push_workers(&self, status: &Value) {
        let mut row = BTreeMap::new();
        for w in status["workers"].as_array().into_iter().flatten() {
            let id = w["id"].as_str().unwrap_or("?").to_string();
            let n = w["current"].as_array().map_or(0, Vec::len);
            row.insert(id, n);
        }
        let t = self.started.elapsed().as_millis() as u64;
        let mut all = self.workers.lock();
        thin(&mut all, MAX_SAMPLES);
        all.push((t, row));
    }
}

/// The recorder: job snapshots on every change, worker samples every [`SAMPLE_MS`].
async fn record(dash: Arc<Dash>) {
    let mut rx = dash.coord.job_changed.subscribe();
    let mut tick = tokio::time::interval(Duration::from_millis(SAMPLE_MS));
    loop {
        tokio::select! {
            changed = rx.recv() => match changed {
                Ok(id) => {
                    if let Ok(status) = job_status(&dash, id).await {
                        dash.push_job(id, &status);
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            },
            _ = tick.tick() => {
                let status = dash.coord.call(|s| s.status()).await;
                dash.push_workers(&serde_json::to_value(status).unwrap_or_default());
            }
        }
    }
}

/// A job's status as JSON, the shape the pictures read.
async fn job_status(dash: &Dash, id: u64) -> Result<Value, ApiError> {
    let status = dash.coord.job_status(id).await?;
    Ok(serde_json::to_value(status).unwrap_or_default())
}

/// `GET /v1/jobs/{id}/plot.svg`.
#[utoipa::path(get, path = "/v1/jobs/{id}/plot.svg", tag = "dashboard", security(("apiToken" = []), ()),
    summary = "Progress plot of a job: bounds over time (probes, PNS), best score over time (NRPA, NMCS), root visits (MCTS) or work done",
    params(("id" = u64, Path, description = "The job's id")),
    responses(
        (status = 200, description = "SVG", content_type = "image/svg+xml"),
        (status = 404, description = "No such job", body = ErrorBody),
    ))]
pub(crate) async fn job_plot(
    State(dash): State<Arc<Dash>>,
    JobId(id): JobId,
) -> Result<Response, ApiError> {
    let status = job_status(&dash, id).await?;
    // The recorder may not have seen the latest change yet: add it.
    dash.push_job(id, &status);
    let mut history = dash.jobs.lock().get(&id).cloned().unwrap_or_default();
    add_result_points(&status, &mut history);
    let spec = &status["job"];
    let title = format!(
        "job {id}: {} {}",
        spec["game"].as_str().unwrap_or("?"),
        spec["algorithm"].as_str().unwrap_or("?")
    );
    Ok(svg(viz::progress_plot(&title, &history)))
}

/// Completes a job's progress history with what only its result holds, so the plot shows the
/// job's answer rather than its task count: an MCTS root's visits per move (`visits`, or
/// `moves` entries with `visits`) as the last snapshot, and an NRPA run's improvements
/// (`history`, `[elapsed_ms, rollouts, score]`) as best-score points at their times.
pub fn add_result_points(status: &Value, history: &mut Vec<Snapshot>) {
    let result = &status["result"];
    let end = snapshot(status).t_ms;
    let visits: serde_json::Map<String, Value> = match (&result["visits"], &result["moves"]) {
        (Value::Object(v), _) => v.clone(),
        (_, Value::Object(m)) => m
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.get("visits")?.clone())))
            .collect(),
        _ => serde_json::Map::new(),
    };
    if !visits.is_empty() {
        history.push(Snapshot {
            t_ms: end,
            progress: serde_json::json!({ "visits": visits }),
        });
        return;
    }
    // With `across=shared` the first entry is a task number, not a time.
    let shared = status["job"]["options"]["across"].as_str() == Some("shared");
    let has = |h: &[Snapshot], k: &str| h.iter().any(|s| s.progress.get(k).is_some());
    // Every improvement is in the result; the live reports were only the heartbeats' samples.
    let improvements = result["history"].as_array().is_some_and(|h| !h.is_empty());
    if !shared && improvements {
        history.retain(|s| s.progress.get("best").is_none());
        for point in result["history"].as_array().into_iter().flatten() {
            if let (Some(t), Some(score)) = (point[0].as_u64(), point[2].as_f64()) {
                history.push(Snapshot {
                    t_ms: t,
                    progress: serde_json::json!({ "best": score }),
                });
            }
        }
        history.sort_by_key(|s| s.t_ms);
        // The best held until the job ended.
        let last = history
            .iter()
            .rev()
            .find_map(|s| Some((s.t_ms, s.progress.get("best")?.clone())));
        if let (Some((t, best)), false) = (last, status["finished_ms"].is_null()) {
            if t < end {
                history.push(Snapshot {
                    t_ms: end,
                    progress: serde_json::json!({ "best": best }),
                });
            }
        }
    }
    // A finished job whose history says nothing a chart can show (the recorder started after
    // it, or it only ever reported the same figures): its work from nothing at the start to
    // the result's count at the end, so that its chart is a line, never "no data yet".
    let charted = ["lower", "upper", "best", "best_score"]
        .iter()
        .any(|k| has(history, k));
    let work = status["job"]["algorithm"]
        .as_str()
        .and_then(gamesolver_shared::registry::kernels::find)
        .map_or("nodes", |a| a.work_key());
    if let (false, Some(n)) = (
        charted || status["result"].is_null(),
        result["nodes"].as_u64(),
    ) {
        let distinct = history
            .iter()
            .filter_map(|s| s.progress.get(work).map(Value::to_string))
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        if distinct < 2 {
            history.retain(|s| s.progress.get(work).is_none());
            history.insert(
                0,
                Snapshot {
                    t_ms: 0,
                    progress: serde_json::json!({ work: 0 }),
                },
            );
            history.push(Snapshot {
                t_ms: end.max(1),
                progress: serde_json::json!({ work: n }),
            });
        }
    }
}

fn board(game: &str, params: &Settings, position: &str) -> Result<Response, ApiError> {
    match viz::board::picture(game, params, position) {
        Ok(Some(s)) => Ok(svg(s)),
        // Not an error (a page asking for every job's picture would log one per such job).
        Ok(None) => Ok(StatusCode::NO_CONTENT.into_response()),
        Err(e) => Err(ApiError::new(StatusCode::BAD_REQUEST, "bad_request", e)),
    }
}

/// `GET /v1/jobs/{id}/board.svg`.
#[utoipa::path(get, path = "/v1/jobs/{id}/board.svg", tag = "dashboard", security(("apiToken" = []), ()),
    summary = "Picture of a job's position",
    params(("id" = u64, Path, description = "The job's id")),
    responses(
        (status = 200, description = "SVG", content_type = "image/svg+xml"),
        (status = 204, description = "The game has no picture"),
        (status = 404, description = "No such job", body = ErrorBody),
    ))]
pub(crate) async fn job_board(
    State(dash): State<Arc<Dash>>,
    JobId(id): JobId,
) -> Result<Response, ApiError> {
    let status = job_status(&dash, id).await?;
    let spec: gamesolver_shared::wire::JobSpec = serde_json::from_value(status["job"].clone())
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                format!("stored job: {e}"),
            )
        })?;
    // A running job's latest report may be a heartbeat without the line: the last line seen.
    let seen = || {
        let jobs = dash.jobs.lock();
        jobs.get(&id)?.iter().rev().find_map(|s| {
            s.progress
                .get("best_sequence")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
    };
    let position = best_sequence(&status)
        .or_else(seen)
        .unwrap_or(spec.position);
    board(&spec.game, &spec.game_params, &position)
}

/// For single-player jobs, the best sequence found so far, as a position: the result's
/// `position` (the text that replays its `sequence`, a list) or a `sequence` given as text,
/// else the latest progress's `best_sequence` or `sequence` (text in the game's notation,
/// which single-player games accept as a position).
pub fn best_sequence(status: &Value) -> Option<String> {
    let progress = flat_progress(status);
    for v in [
        &status["result"]["position"],
        &status["result"]["sequence"],
        &progress["best_sequence"],
        &progress["sequence"],
    ] {
        if let Some(text) = v.as_str() {
            return Some(text.to_string());
        }
    }
    None
}

/// `GET /v1/board.svg?game=G&position=P&KEY=VALUE...`.
#[utoipa::path(get, path = "/v1/board.svg", tag = "dashboard", security(("apiToken" = []), ()),
    summary = "Picture of any position; query keys other than game and position are game parameters",
    params(
        ("game" = String, Query, description = "The game"),
        ("position" = Option<String>, Query, description = "The position in the game's notation (default: the start)"),
    ),
    responses(
        (status = 200, description = "SVG", content_type = "image/svg+xml"),
        (status = 204, description = "The game has no picture"),
        (status = 400, description = "Bad game parameter or illegal position", body = ErrorBody),
    ))]
pub(crate) async fn board_preview(
    Query(mut q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let game = q.remove("game").ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "query parameter 'game' is missing",
        )
    })?;
    let position = q.remove("position").unwrap_or_default();
    let params: Settings = q.into_iter().collect();
    board(&game, &params, &position)
}

/// Most scores one `GET /v1/score-words` reads (a root has at most a few hundred moves and
/// their scores repeat; a page asks for one table's distinct scores).
pub const MAX_WORDS: usize = 64;

/// `GET /v1/score-words?game=G&position=P&values=V,V,...&KEY=VALUE...`.
#[utoipa::path(get, path = "/v1/score-words", tag = "dashboard", security(("apiToken" = []), ()),
    summary = "What exact scores of a position mean in the game's words (the CLI's and the dashboard's one wording)",
    params(
        ("game" = String, Query, description = "The game"),
        ("position" = Option<String>, Query, description = "The position in the game's notation (default: the start)"),
        ("values" = String, Query, description = "Up to 64 integer scores, from the side to move's point of view, separated by commas"),
    ),
    responses(
        (status = 200, description = "{\"words\": {score: words}}: the scores the game reads in words (none for a game whose numbers say it all)", body = serde_json::Value),
        (status = 400, description = "Bad game, parameter, position or scores", body = ErrorBody),
    ))]
pub(crate) async fn score_words(
    Query(mut q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let bad = |m: String| ApiError::new(StatusCode::BAD_REQUEST, "bad_request", m);
    let game = q
        .remove("game")
        .ok_or_else(|| bad("query parameter 'game' is missing".into()))?;
    let position = q.remove("position").unwrap_or_default();
    let values = q
        .remove("values")
        .ok_or_else(|| bad("query parameter 'values' is missing".into()))?;
    let values: Vec<i64> = values
        .split(',')
        .map(|v| {
            v.trim()
                .parse::<i32>()
                .map(i64::from)
                .map_err(|_| bad(format!("values: '{v}' is not an integer score")))
        })
        .collect::<Result<_, _>>()?;
    if values.len() > MAX_WORDS {
        return Err(bad(format!(
            "values: {} scores, at most {MAX_WORDS}",
            values.len()
        )));
    }
    if !registry::GAMES.contains(&game.as_str()) {
        return Err(bad(format!("unknown game '{game}'")));
    }
    let params: Settings = q.into_iter().collect();
    let mut words = serde_json::Map::new();
    for v in values {
        match viz::board::score_words(&game, &params, &position, v) {
            Ok(Some(w)) => {
                words.insert(v.to_string(), w.into());
            }
            Ok(None) => {}
            Err(e) => return Err(bad(e)),
        }
    }
    Ok(axum::Json(serde_json::json!({ "words": words })).into_response())
}

/// `GET /v1/status/plot.svg`.
#[utoipa::path(get, path = "/v1/status/plot.svg", tag = "dashboard", security(("apiToken" = []), ()),
    summary = "Running tasks per worker over time",
    responses((status = 200, description = "SVG", content_type = "image/svg+xml")))]
pub(crate) async fn status_plot(State(dash): State<Arc<Dash>>) -> Response {
    let samples = dash.workers.lock().clone();
    svg(worker_chart(&samples))
}

/// Running tasks per worker over time, one stepped line per worker.
pub fn worker_chart(samples: &[(u64, BTreeMap<String, usize>)]) -> String {
    let mut names: Vec<&String> = samples.iter().flat_map(|(_, r)| r.keys()).collect();
    names.sort();
    names.dedup();
    let series: Vec<Series> = names
        .iter()
        .enumerate()
        .map(|(i, name)| Series {
            name: (*name).clone(),
            color: viz::PALETTE[i % viz::PALETTE.len()],
            points: samples
                .iter()
                .map(|(t, r)| {
                    (
                        *t as f64 / 1000.0,
                        r.get(*name).copied().unwrap_or(0) as f64,
                    )
                })
                .collect(),
            steps: true,
        })
        .collect();
    viz::line_chart("running tasks per worker", "seconds", "tasks", &series)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flat_progress_prefers_the_planner() {
        let s = json!({"progress": {"lower": 0, "upper": 2, "kernel": {"task": 3, "report": {"lower": -5, "nodes": 77}}}});
        assert_eq!(
            flat_progress(&s),
            json!({"lower": 0, "upper": 2, "nodes": 77})
        );
        assert_eq!(flat_progress(&json!({})), json!({}));
    }

    #[test]
    fn best_sequence_prefers_the_result() {
        let running = json!({"progress": {"kernel": {"report": {"best_score": 80, "best_sequence": "(28,28)\n(1,2) - 0"}}}});
        assert_eq!(
            best_sequence(&running).as_deref(),
            Some("(28,28)\n(1,2) - 0")
        );
        let done = json!({"result": {"sequence": "S"}, "progress": {"best_sequence": "P"}});
        assert_eq!(best_sequence(&done).as_deref(), Some("S"));
        // A finished NRPA run: `sequence` is a list of moves, `position` replays them.
        let nrpa = json!({"result": {"sequence": ["(1,2) - 0"], "position": "(28,28)\n(1,2) - 0"}});
        assert_eq!(best_sequence(&nrpa).as_deref(), Some("(28,28)\n(1,2) - 0"));
        assert_eq!(best_sequence(&json!({"result": {"value": 1}})), None);
    }

    #[test]
    fn result_points_chart_the_answer() {
        // MCTS: the visits per move, from `visits` or from `moves`.
        for result in [
            json!({"visits": {"2": 10, "5": 8}}),
            json!({"moves": {"2": {"visits": 10, "value": 0.1}, "5": {"visits": 8, "value": -0.2}}}),
        ] {
            let status = json!({"created_ms": 0, "finished_ms": 50, "result": result,
                "progress": {"runs": 2, "runs_done": 2}});
            let mut h = vec![snapshot(&status)];
            add_result_points(&status, &mut h);
            assert_eq!(
                h.last().unwrap().progress,
                json!({"visits": {"2": 10, "5": 8}})
            );
            let svg = viz::progress_plot("m", &h);
            assert_eq!(svg.matches("class=\"gs-bar\"").count(), 2, "{svg}");
        }
        // NRPA: the improvements as best-score points, in time order.
        let status = json!({"created_ms": 0, "finished_ms": 90, "job": {"options": {}},
            "result": {"history": [[15, 1, 67], [58, 643, 91]]}, "progress": {"runs_done": 2}});
        let mut h = vec![snapshot(&status)];
        add_result_points(&status, &mut h);
        let best: Vec<(u64, f64)> = h
            .iter()
            .filter_map(|s| Some((s.t_ms, s.progress.get("best")?.as_f64()?)))
            .collect();
        // The improvements in time order, the best held to the end (90 ms).
        assert_eq!(best, vec![(15, 67.0), (58, 91.0), (90, 91.0)]);
        assert!(viz::progress_plot("n", &h).contains("best score"));
        // Exact jobs and shared NRPA rounds keep their own history.
        let exact =
            json!({"result": {"value": 1, "pv": ["4"]}, "progress": {"lower": 1, "upper": 1}});
        let mut h = vec![snapshot(&exact)];
        add_result_points(&exact, &mut h);
        assert_eq!(h.len(), 1);
        let shared =
            json!({"job": {"options": {"across": "shared"}}, "result": {"history": [[0, 1, 5]]}});
        let mut h = Vec::new();
        add_result_points(&shared, &mut h);
        assert!(h.is_empty());
        // A finished job whose history shows nothing (one snapshot of the same count, or none):
        // its work from 0 to the result's count, a line rather than "no data yet"; a
        // retrograde build counts the entries written.
        for (algorithm, key) in [("pns", "nodes"), ("retrograde", "entries_written")] {
            let done = json!({"created_ms": 0, "finished_ms": 1500, "job": {"algorithm": algorithm},
                "result": {"value": null, "nodes": 16_420_000}, "progress": {}});
            let mut h = vec![Snapshot {
                t_ms: 1400,
                progress: json!({ key: 16_420_000 }),
            }];
            add_result_points(&done, &mut h);
            let pts: Vec<(u64, u64)> = h
                .iter()
                .filter_map(|s| Some((s.t_ms, s.progress.get(key)?.as_u64()?)))
                .collect();
            assert_eq!(pts, vec![(0, 0), (1500, 16_420_000)], "{algorithm}");
            let svg = viz::progress_plot("w", &h);
            assert!(
                !svg.contains("no data yet") && svg.contains(">15M<"),
                "{svg}"
            );
        }
    }

    #[test]
    fn thinning_keeps_ends_and_halves() {
        let mut v: Vec<u32> = (0..10).collect();
        thin(&mut v, 10);
        assert_eq!(v, vec![0, 2, 4, 6, 8, 9]);
        let mut w: Vec<u32> = (0..5).collect();
        thin(&mut w, 10);
        assert_eq!(w.len(), 5);
    }

    /// Two tasks reporting in turn chart as one rising count (their sum), not a zigzag between
    /// their own counts; a planner's own count is left alone.
    #[test]
    fn a_jobs_nodes_are_the_sum_of_its_tasks() {
        let report = |task: u64, nodes: u64| json!({"progress": {"kernel": {"task": task, "report": {"nodes": nodes}}}});
        let mut per = BTreeMap::new();
        let seen: Vec<Option<u64>> = [(1, 100), (2, 10), (1, 200), (2, 20), (3, 5)]
            .into_iter()
            .map(|(t, n)| job_nodes(&mut per, &report(t, n)))
            .collect();
        assert_eq!(
            seen,
            [Some(100), Some(110), Some(210), Some(220), Some(225)]
        );
        let own = json!({"progress": {"nodes": 7, "kernel": {"task": 1, "report": {"nodes": 9}}}});
        assert_eq!(job_nodes(&mut per, &own), None);
        assert_eq!(job_nodes(&mut per, &json!({"progress": {}})), None);
    }

    #[test]
    fn worker_chart_has_one_series_per_worker() {
        let mut a = BTreeMap::new();
        a.insert("w-1".to_string(), 1);
        let mut b = a.clone();
        b.insert("w-2".to_string(), 2);
        let svg = worker_chart(&[(0, a), (1000, b)]);
        assert_eq!(svg.matches("class=\"gs-series\"").count(), 2, "{svg}");
        assert!(svg.contains("w-2"));
        assert!(worker_chart(&[]).contains("no data yet"));
    }

    #[test]
    fn assets_fetch_nothing_from_outside() {
        for (name, text) in [
            ("index.html", INDEX_HTML),
            ("app.js", APP_JS),
            ("app.css", APP_CSS),
        ] {
            for bad in ["http://", "https://", "//cdn", "@import"] {
                let hits: Vec<&str> = text
                    .lines()
                    .filter(|l| l.contains(bad) && !l.contains("www.w3.org"))
                    .collect();
                assert!(hits.is_empty(), "{name} refers outside: {hits:?}");
            }
        }
    }
}
