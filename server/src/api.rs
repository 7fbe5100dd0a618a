//! The HTTP API: the route table in one place, thin handlers, typed errors.
//!
//! Contract (docs/API.md, section 6): bodies are JSON; every error, including a malformed or
//! oversized body, an unknown path or a wrong method, is a 4xx/5xx with
//! `{"error": {"code", "message"}}`. A job is validated by `registry::prepare` before anything is
//! stored (400 naming the problem). Job endpoints (`/v1/jobs...`, `/v1/status`) require
//! `Authorization: Bearer <GAMESOLVER_API_TOKEN>` when that token is set; the worker protocol
//! (`/v1/worker/...`) always requires the worker token, compared in constant time: the one set
//! in `GAMESOLVER_WORKER_TOKEN`, or else a random one that only the local workers know
//! ([`crate::WorkerAuth`]); only `serve --insecure-workers` leaves it open. `/metrics` follows
//! the API token unless `serve --open-metrics`; `/healthz`, `/openapi.json` and `/docs` are open.
//! Bodies, answers and event streams are bounded in time and number (the route table and its
//! layers: `crate::routes`; [`crate::http`]); no error message shows the server's folders
//! ([`redact_paths`]).

use crate::answers::{
    ErrorBody, ErrorDetail, Health, JobList, JobStatus, OptionList, Released, ServiceStatus,
    Submitted, TaskPage,
};
use crate::artifacts::ArtifactStore;
use crate::http::HttpStats;
use crate::scheduler::{self, SchedError, Scheduler};
use crate::Coordinator;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use gamesolver_shared::registry;
use gamesolver_shared::wire::protocol::{
    CancelList, CancelWatch, Heartbeat, HeartbeatReply, Lease, LeaseRequest, Outcome, Register,
    Registered, Release, Report, ReportReply,
};
use gamesolver_shared::wire::JobSpec;
use serde::de::DeserializeOwned;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use subtle::ConstantTimeEq;

/// Longest a lease request waits for a task (workers ask again after it).
pub const MAX_LONG_POLL_MS: u64 = 30_000;
/// Most jobs `GET /v1/jobs` lists at once.
pub const MAX_LIST: usize = 1000;

/// The coordinator as the handlers share it.
pub(crate) type Shared = Arc<Coordinator>;

/// An error answer: `{"error": {"code", "message"}}`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    /// An error with a status, a stable code and a one-line message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let message = redact_paths(&self.message);
        (
            self.status,
            axum::Json(ErrorBody {
                error: ErrorDetail {
                    code: self.code.into(),
                    message,
                },
            }),
        )
            .into_response()
    }
}

/// The server's own folders as they may appear in a message (the data folder, the working
/// folder, the temporary folder, the executable's folder, the home folder), longest first, each
/// with what an HTTP client is shown instead.
fn server_paths() -> &'static [(String, &'static str)] {
    static PATHS: std::sync::OnceLock<Vec<(String, &'static str)>> = std::sync::OnceLock::new();
    PATHS.get_or_init(|| {
        let data = gamesolver_shared::games::data::data_dir();
        let user = gamesolver_shared::games::data::user_dir();
        let mut dirs = vec![
            (Some(data.clone()), "<data>"),
            (data.canonicalize().ok(), "<data>"),
            (Some(user.clone()), "<data>"),
            (user.canonicalize().ok(), "<data>"),
            (std::env::current_dir().ok(), "<server>"),
            (Some(std::env::temp_dir()), "<tmp>"),
            (
                std::env::current_exe()
                    .ok()
                    .and_then(|e| e.parent().map(|p| p.to_path_buf())),
                "<server>",
            ),
            (std::env::var_os("HOME").map(Into::into), "<server>"),
        ];
        dirs.retain(|(d, _)| d.as_ref().is_some_and(|d| d.components().count() > 1));
        let mut paths: Vec<(String, &'static str)> = dirs
            .into_iter()
            .filter_map(|(d, name)| Some((d?.to_str()?.trim_end_matches('/').to_string(), name)))
            .filter(|(d, _)| d.len() > 1)
            .collect();
        paths.sort_by_key(|(d, _)| std::cmp::Reverse(d.len()));
        paths
    })
}

/// `message` with the server's own folders replaced by placeholders: whatever a kernel or a
/// data loader puts in an error, an HTTP client never learns where the server keeps its files.
pub fn redact_paths(message: &str) -> String {
    let mut out = message.to_string();
    for (dir, name) in server_paths() {
        if out.contains(dir.as_str()) {
            out = out.replace(dir.as_str(), name);
        }
    }
    out
}

impl From<SchedError> for ApiError {
    fn from(e: SchedError) -> Self {
        match e {
            SchedError::BadInput(m) => ApiError::new(StatusCode::BAD_REQUEST, "bad_request", m),
            SchedError::NotFound(m) => ApiError::new(StatusCode::NOT_FOUND, "not_found", m),
            SchedError::UnknownWorker(m) => {
                ApiError::new(StatusCode::NOT_FOUND, "unknown_worker", m)
            }
            SchedError::Conflict(m) => ApiError::new(StatusCode::CONFLICT, "conflict", m),
            SchedError::Quota(m) => ApiError::new(StatusCode::TOO_MANY_REQUESTS, "quota", m),
            SchedError::Store(m) => {
                // The store's messages may name its file: they go to the operator's log only.
                tracing::error!("store: {m}");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "store",
                    "the coordinator's store failed (details in its log)",
                )
            }
        }
    }
}

/// A JSON body whose rejections (malformed, wrong type, too large, wrong content type) are
/// [`ApiError`]s.
pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(Json(v)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

impl<T: serde::Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

fn json_rejection(r: JsonRejection) -> ApiError {
    if body_timed_out(&r) {
        return ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            "the request body did not arrive within the server's body timeout",
        );
    }
    let status = r.status();
    let code = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        _ => "bad_request",
    };
    // 422 (valid JSON, wrong shape) is reported as 400 like every other malformed body.
    let status = if status == StatusCode::UNPROCESSABLE_ENTITY {
        StatusCode::BAD_REQUEST
    } else {
        status
    };
    let message = r.body_text().replace('\n', " ");
    ApiError::new(status, code, message)
}

/// Whether reading the body failed because [`RequestBodyDeadlineLayer`]'s time ran out.
fn body_timed_out(r: &JsonRejection) -> bool {
    let mut e: Option<&(dyn std::error::Error + 'static)> = Some(r);
    while let Some(err) = e {
        if err.is::<tower_http::timeout::TimeoutError>() {
            return true;
        }
        e = err.source();
    }
    false
}

/// Whether `headers` carry `Authorization: Bearer <token>`, compared in constant time.
fn bearer_ok(headers: &HeaderMap, token: &str) -> bool {
    let Some(given) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some(given) = given.strip_prefix("Bearer ") else {
        return false;
    };
    given.as_bytes().ct_eq(token.as_bytes()).into()
}

/// Passes `req` on when no `token` is set or it bears the token; a 401 that names `what`
/// otherwise.
async fn require_token(token: Option<&str>, what: &str, req: Request, next: Next) -> Response {
    match token {
        Some(t) if !bearer_ok(req.headers(), t) => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            format!("missing or wrong {what}"),
        )
        .into_response(),
        _ => next.run(req).await,
    }
}

pub(crate) async fn require_api_token(
    State(c): State<Shared>,
    req: Request,
    next: Next,
) -> Response {
    let token = c.api_token.as_deref();
    require_token(token, "API token (GAMESOLVER_API_TOKEN)", req, next).await
}

/// A request whose `Content-Length` already exceeds the body limit gets its 413 before any of
/// the body is read. A client that sent `Expect: 100-continue` (curl does for large bodies) then
/// never sends the body and reads a clean answer; without this, the limit is only noticed while
/// reading, and a client still sending may see the connection reset instead of the 413.
pub(crate) async fn refuse_declared_oversize(
    State(limit): State<usize>,
    req: Request,
    next: Next,
) -> Response {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    // Artifact uploads have their own bounds (`crate::artifacts`), game modules theirs.
    let artifact = req.uri().path().starts_with("/v1/worker/artifacts/");
    let limit = match req.uri().path() {
        "/v1/games" => limit.max(MAX_MODULE_UPLOAD_BYTES),
        _ => limit,
    };
    match declared {
        Some(n) if n > limit as u64 && !artifact => {
            let mut r = ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
                format!("request body of {n} bytes is over the limit of {limit} bytes"),
            )
            .into_response();
            r.headers_mut().insert(
                header::CONNECTION,
                header::HeaderValue::from_static("close"),
            );
            r
        }
        _ => next.run(req).await,
    }
}

pub(crate) async fn require_worker_token(
    State(c): State<Shared>,
    req: Request,
    next: Next,
) -> Response {
    let token = c.worker_token.as_deref();
    require_token(token, "worker token (GAMESOLVER_WORKER_TOKEN)", req, next).await
}

/// The query string of a request; a malformed one (`?before=x`) is a 400 JSON error like every
/// other.
fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(q)| q)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "bad_request", e.body_text()))
}

/// The job id of the path (`{id}`); not a number: 404, as for an unknown job. A path that
/// does not decode is answered as `Path` answers it.
pub(crate) struct JobId(pub u64);

impl<S: Send + Sync> FromRequestParts<S> for JobId {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let Path(id) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let id = id.parse::<u64>().map_err(|_| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("no job '{id}' (ids are numbers)"),
            )
            .into_response()
        })?;
        Ok(JobId(id))
    }
}

/// `POST /v1/jobs`: checks the job (400 naming the problem) and queues it.
#[utoipa::path(post, path = "/v1/jobs", tag = "jobs", security(("apiToken" = []), ()),
    summary = "Submit a job",
    request_body = JobSpec,
    responses(
        (status = 201, description = "Accepted", body = Submitted),
        (status = 400, description = "Invalid job: the message names the problem", body = ErrorBody),
        (status = 401, description = "Missing or wrong API token", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
        (status = 415, description = "The body is not declared as application/json", body = ErrorBody),
        (status = 429, description = "A quota is full (max-queued-jobs, max-position-bytes, max-store-mb): the message names it; try again later", body = ErrorBody),
    ))]
pub(crate) async fn submit_job(
    State(c): State<Shared>,
    Json(spec): Json<JobSpec>,
) -> Result<Response, ApiError> {
    // The disk quota first: a store that is full refuses before a large job is parsed.
    let bytes = (spec.position.len()
        + spec
            .options
            .iter()
            .chain(spec.game_params.iter())
            .map(|(k, v)| k.len() + v.len())
            .sum::<usize>()) as u64;
    c.retention.check_quota(bytes)?;
    // Validation before anything is stored; prepare is cheap (no search) but may parse a large
    // tree, so it runs outside the scheduler's lock.
    let spec = pin_tables(&c, spec).await?;
    let spec = pin_module(&c, spec).await?;
    let (spec, prepared) =
        tokio::task::spawn_blocking(move || registry::prepare(&spec).map(|p| (spec, p)))
            .await
            .map_err(|_| {
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "job validation panicked",
                )
            })?
            .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "bad_request", e.to_string()))?;
    let (id, state) = c
        .call(move |s| {
            let id = s.submit(spec, prepared)?;
            Ok::<_, SchedError>((id, s.job_status(id)?.state))
        })
        .await?;
    c.retention.accepted(bytes);
    Ok((StatusCode::CREATED, Json(Submitted { id, state })).into_response())
}

/// A job's option `tables=NAME` naming a set that is not in the coordinator's data folder but
/// that this coordinator built (the newest finished `retrograde` job with `name=NAME`) becomes
/// `tables=NAME@HASH`: HASH names a manifest of that build's databases, stored as an artifact,
/// so that every task of the job reads the same build (a worker fetches and caches the
/// databases) even if the set is built again meanwhile. A name that is neither is a 400 here.
async fn pin_tables(c: &Shared, mut spec: JobSpec) -> Result<JobSpec, ApiError> {
    use gamesolver_shared::search::retrograde::artifacts::SetManifest;
    let Some(name) = spec.options.get("tables").map(|v| v.trim().to_string()) else {
        return Ok(spec);
    };
    let bad = |m: String| ApiError::new(StatusCode::BAD_REQUEST, "bad_request", m);
    if name.contains('@') {
        return Ok(spec);
    }
    let plain = gamesolver_shared::games::data::plain_name(&name)
        .map_err(|e| bad(format!("option tables: {e}")))?;
    if gamesolver_shared::games::data::user_dir()
        .join("tables")
        .join(plain)
        .is_dir()
    {
        return Ok(spec);
    }
    let (job, dbs) = match built_set(c, name.clone()).await {
        Ok(found) => found,
        Err(e) if e.status == StatusCode::NOT_FOUND => {
            return Err(bad(format!(
                "option tables: no set '{name}' in the data folder and no finished retrograde build named '{name}'"
            )))
        }
        Err(e) => return Err(e),
    };
    let databases = dbs
        .iter()
        .map(|d| d["artifact"].as_str().map(str::to_string))
        .collect::<Option<Vec<String>>>()
        .filter(|d| !d.is_empty())
        .ok_or_else(|| {
            ApiError::from(SchedError::Store(format!(
                "the build of '{name}' (job {job}) lists no database artifacts"
            )))
        })?;
    let manifest = SetManifest {
        name: name.clone(),
        job,
        databases,
    };
    let me = c.clone();
    let hash = tokio::task::spawn_blocking(move || me.artifacts.put_bytes(&manifest.to_bytes()))
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "write failed",
            )
        })??;
    spec.options
        .insert("tables".into(), format!("{name}@{hash}"));
    Ok(spec)
}

/// Query of `GET /v1/jobs`.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ListQuery {
    /// Most jobs in the page (default 100, at most 1000).
    limit: Option<usize>,
    /// Only jobs with smaller ids: the previous page's `next_before`.
    before: Option<u64>,
}

/// `GET /v1/jobs`: jobs newest first, paged.
#[utoipa::path(get, path = "/v1/jobs", tag = "jobs", security(("apiToken" = []), ()),
    summary = "List jobs, newest first",
    params(ListQuery),
    responses(
        (status = 200, description = "Jobs", body = JobList),
        (status = 400, description = "Malformed query", body = ErrorBody),
    ))]
pub(crate) async fn list_jobs(
    State(c): State<Shared>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<JobList>, ApiError> {
    let q = query(q)?;
    let limit = q.limit.unwrap_or(100).min(MAX_LIST);
    // From the store's reader: no scheduler lock.
    Ok(Json(
        c.query(move |r| crate::scheduler::list(r, limit, q.before))
            .await?,
    ))
}

/// `GET /v1/jobs/{id}`.
#[utoipa::path(get, path = "/v1/jobs/{id}", tag = "jobs", security(("apiToken" = []), ()),
    summary = "Job status and result (task counts, the tasks in flight and the latest 50 finished ones)",
    params(("id" = u64, Path, description = "The job's id")),
    responses(
        (status = 200, description = "Status", body = JobStatus),
        (status = 404, description = "No such job, or removed by the retention policy (the message says which)", body = ErrorBody),
    ))]
pub(crate) async fn job_status(
    State(c): State<Shared>,
    JobId(id): JobId,
) -> Result<Json<JobStatus>, ApiError> {
    c.status_reads.fetch_add(1, Ordering::Relaxed);
    Ok(Json(c.job_status(id).await?))
}

/// Query of `GET /v1/jobs/{id}/tasks`.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct TasksQuery {
    /// Most tasks in the page (default 100, at most 1000).
    limit: Option<usize>,
    /// Only tasks with larger ids: the previous page's `next_after`.
    after: Option<u64>,
}

/// `GET /v1/jobs/{id}/tasks`: every task of a job, paged, from the store's reader.
#[utoipa::path(get, path = "/v1/jobs/{id}/tasks", tag = "jobs", security(("apiToken" = []), ()),
    summary = "Every task of a job, by id, paged (the status lists only the tasks in flight and the latest finished ones)",
    params(("id" = u64, Path, description = "The job's id"), TasksQuery),
    responses(
        (status = 200, description = "Tasks", body = TaskPage),
        (status = 404, description = "No such job, or removed by the retention policy (the message says which)", body = ErrorBody),
    ))]
pub(crate) async fn job_tasks(
    State(c): State<Shared>,
    JobId(id): JobId,
    q: Result<Query<TasksQuery>, QueryRejection>,
) -> Result<Json<TaskPage>, ApiError> {
    let q = query(q)?;
    let limit = q.limit.unwrap_or(100).min(MAX_LIST);
    let after = q.after.unwrap_or(0);
    Ok(Json(
        c.query(move |r| crate::scheduler::task_page(r, id, after, limit))
            .await
            .map_err(|e| c.retention.explain(id, e))?,
    ))
}

/// `GET /v1/jobs/{id}/proof`: the job's proof certificate (404 when it has none).
#[utoipa::path(get, path = "/v1/jobs/{id}/proof", tag = "jobs", security(("apiToken" = []), ()),
    summary = "The job's proof certificate (proof-number jobs with option proof=true, once done); `gamesolver verify-proof` checks it",
    params(("id" = u64, Path, description = "The job's id")),
    responses(
        (status = 200, description = "The certificate (JSON)", body = serde_json::Value),
        (status = 404, description = "No such job (or removed by the retention policy), or the job has no proof certificate", body = ErrorBody),
    ))]
pub(crate) async fn job_proof(
    State(c): State<Shared>,
    JobId(id): JobId,
) -> Result<Json<serde_json::Value>, ApiError> {
    Ok(Json(
        c.query(move |r| crate::scheduler::proof(r, id))
            .await
            .map_err(|e| c.retention.explain(id, e))?,
    ))
}

/// `POST /v1/jobs/{id}/cancel`.
#[utoipa::path(post, path = "/v1/jobs/{id}/cancel", tag = "jobs", security(("apiToken" = []), ()),
    summary = "Cancel a job; running tasks are told to stop",
    params(("id" = u64, Path, description = "The job's id")),
    responses(
        (status = 200, description = "Status after the cancel", body = JobStatus),
        (status = 404, description = "No such job, or removed by the retention policy (the message says which)", body = ErrorBody),
        (status = 409, description = "The job has already ended", body = ErrorBody),
    ))]
pub(crate) async fn cancel_job(
    State(c): State<Shared>,
    JobId(id): JobId,
) -> Result<Json<JobStatus>, ApiError> {
    let me = c.clone();
    c.call(move |s| {
        s.cancel(id)?;
        // Committed: a retrograde build's round chunks go (as after a result).
        delete_spent_artifacts(s, &me.artifacts);
        Ok::<(), SchedError>(())
    })
    .await
    .map_err(|e| c.retention.explain(id, e))?;
    Ok(Json(c.job_status(id).await?))
}

/// `GET /v1/status`.
#[utoipa::path(get, path = "/v1/status", tag = "service", security(("apiToken" = []), ()),
    summary = "Workers, queue depth, throughput",
    responses((status = 200, description = "Status", body = ServiceStatus)))]
pub(crate) async fn status(State(c): State<Shared>) -> Json<ServiceStatus> {
    let mut st = c.call(|s| s.status()).await;
    // Jobs the retention policy deleted are no longer counted.
    c.retention.adjust_counts(&mut st.jobs);
    st.jobs.retain(|_, n| *n > 0);
    Json(st)
}

/// Query of `GET /v1/options`.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct OptionsQuery {
    /// A game name (`connect4`, ...).
    game: String,
    /// An algorithm name (`alphabeta`, ...).
    algorithm: String,
}

/// `GET /v1/options?game=G&algorithm=A`: the declared options and game parameters of a pair,
/// the same specs that check a job; 404 when the registry does not run `algorithm` on `game`.
#[utoipa::path(get, path = "/v1/options", tag = "jobs", security(("apiToken" = []), ()),
    summary = "The options and game parameters a job of this algorithm on this game accepts: type, bounds, default, meaning",
    params(OptionsQuery),
    responses(
        (status = 200, description = "Options, then game parameters", body = OptionList),
        (status = 400, description = "game or algorithm missing", body = ErrorBody),
        (status = 404, description = "The registry does not run this algorithm on this game", body = ErrorBody),
    ))]
pub(crate) async fn options(
    q: Result<Query<OptionsQuery>, QueryRejection>,
) -> Result<Json<OptionList>, ApiError> {
    let q = query(q)?;
    let list = OptionList::of(&q.game, &q.algorithm);
    if list.options.is_empty() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no algorithm '{}' for game '{}'", q.algorithm, q.game),
        ));
    }
    Ok(Json(list))
}

/// `GET /healthz`.
#[utoipa::path(get, path = "/healthz", tag = "service", summary = "Liveness",
    responses((status = 200, description = "Alive", body = Health)))]
pub(crate) async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok".into(),
    })
}

/// `GET /metrics`.
#[utoipa::path(get, path = "/metrics", tag = "service", security(("apiToken" = []), ()),
    summary = "Prometheus metrics (needs the API token when one is set, unless serve --open-metrics)",
    responses(
        (status = 200, description = "Exposition format", body = String, content_type = "text/plain"),
        (status = 401, description = "Missing or wrong API token", body = ErrorBody),
    ))]
pub(crate) async fn metrics(
    State(c): State<Shared>,
    Extension(http): Extension<Arc<HttpStats>>,
) -> Response {
    let deleted = c.retention.deleted_by_state();
    let mut text = c.read(move |s| crate::metrics::render(s, &deleted)).await;
    crate::metrics::render_store(&mut text, &c.retention);
    crate::metrics::render_http(
        &mut text,
        c.event_streams.load(Ordering::Relaxed),
        c.status_reads.load(Ordering::Relaxed),
    );
    crate::metrics::render_server(&mut text, &http);
    crate::metrics::render_lock(
        &mut text,
        c.lock_hold_max_us.load(Ordering::Relaxed),
        c.lock_hold_total_us.load(Ordering::Relaxed),
        c.lock_work_max_us.load(Ordering::Relaxed),
    );
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}

/// SSE: a `status` event with the job's status whenever it changes, then `end` when the job has
/// ended (the stream closes). Each open stream holds one of the `--max-event-streams` slots
/// (503 when none is free); streams close when the coordinator shuts down.
#[utoipa::path(get, path = "/v1/jobs/{id}/events", tag = "jobs", security(("apiToken" = []), ()),
    summary = "Server-Sent Events: `status` events while the job runs, one `end` event when it ends",
    params(("id" = u64, Path, description = "The job's id")),
    responses(
        (status = 200, description = "text/event-stream; each data line is a JobStatus", body = JobStatus, content_type = "text/event-stream"),
        (status = 404, description = "No such job, or removed by the retention policy (the message says which)", body = ErrorBody),
        (status = 503, description = "Too many event streams open (serve --max-event-streams): poll the status instead", body = ErrorBody),
    ))]
pub(crate) async fn job_events(
    State(c): State<Shared>,
    Extension(http): Extension<Arc<HttpStats>>,
    JobId(id): JobId,
) -> Result<Response, ApiError> {
    // A semaphore, not tower's concurrency limit: the slot must live as long as the stream's
    // body, not just until the handler returns.
    let Ok(slot) = http.event_slots.clone().try_acquire_owned() else {
        http.event_streams_refused.fetch_add(1, Ordering::Relaxed);
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "too_many_streams",
            format!(
                "{} event streams are open, the limit (--max-event-streams); poll \
                 GET /v1/jobs/{id} instead",
                http.max_event_streams
            ),
        ));
    };
    // Subscribe before reading the first status, so no change falls between the two.
    let rx = c.job_changed.subscribe();
    let first = c.job_status(id).await?;
    c.event_streams.fetch_add(1, Ordering::Relaxed);
    struct St {
        c: Shared,
        rx: tokio::sync::broadcast::Receiver<u64>,
        id: u64,
        last: Option<JobStatus>,
        pending_first: Option<JobStatus>,
        ended: bool,
        closing: tokio::sync::watch::Receiver<bool>,
        _slot: tokio::sync::OwnedSemaphorePermit,
    }
    let closing = c.closing.subscribe();
    let st = St {
        c,
        rx,
        id,
        last: None,
        pending_first: Some(first),
        ended: false,
        closing,
        _slot: slot,
    };
    let stream = futures_util::stream::unfold(st, |mut st| async move {
        if st.ended {
            return None;
        }
        loop {
            let status = match st.pending_first.take() {
                Some(s) => s,
                None => {
                    let changed = tokio::select! {
                        r = st.rx.recv() => r,
                        _ = st.closing.wait_for(|c| *c) => return None,
                    };
                    match changed {
                        Ok(changed) if changed != st.id => continue,
                        Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
                    }
                    match st.c.job_status(st.id).await {
                        Ok(s) => s,
                        Err(_) => return None,
                    }
                }
            };
            if st.last.as_ref() == Some(&status) {
                continue;
            }
            let ended = status.state.is_final();
            let event = Event::default()
                .event(if ended { "end" } else { "status" })
                .data(serde_json::to_string(&status).unwrap_or_default());
            st.last = Some(status);
            st.ended = ended;
            return Some((Ok::<Event, std::convert::Infallible>(event), st));
        }
    });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
}

/// `POST /v1/worker/register`.
#[utoipa::path(post, path = "/v1/worker/register", tag = "worker", security(("workerToken" = [])),
    summary = "Worker: register",
    request_body = Register,
    responses(
        (status = 200, description = "Worker id and timings", body = Registered),
        (status = 401, description = "Missing or wrong worker token", body = ErrorBody),
    ))]
pub(crate) async fn worker_register(
    State(c): State<Shared>,
    Json(r): Json<Register>,
) -> Result<Json<Registered>, ApiError> {
    Ok(Json(c.call(move |s| s.register(r)).await?))
}

/// Long poll: a lease as soon as a task is queued, or 204 after `wait_ms`.
#[utoipa::path(post, path = "/v1/worker/lease", tag = "worker", security(("workerToken" = [])),
    summary = "Worker: long-poll for a task",
    request_body = LeaseRequest,
    responses(
        (status = 200, description = "A lease", body = Lease),
        (status = 204, description = "No task within wait_ms"),
        (status = 404, description = "Unknown worker: register again", body = ErrorBody),
    ))]
pub(crate) async fn worker_lease(
    State(c): State<Shared>,
    Json(r): Json<LeaseRequest>,
) -> Result<Response, ApiError> {
    let grant = long_poll(&c, &c.tasks_ready, r.wait_ms, |deadline| {
        let (c, worker, until) = (c.clone(), r.worker_id.clone(), deadline.into_std());
        async move {
            let leased = c
                .call(move |s| {
                    s.lease_or_wait(&worker, until)
                        .map(|g| (g, s.passed_hold_until()))
                })
                .await;
            match leased {
                Ok((Some(grant), _)) => Ok(Look::Found(grant)),
                // A task held for another worker (its next leaf near its last one) is this
                // worker's once the hold ends, which wakes nobody: look again then.
                Ok((None, recheck)) => Ok(Look::Wait(recheck.map(Into::into))),
                Err(e) => {
                    // This poll may have taken a wake-up meant for a queued task: pass it on.
                    c.wake_workers(1);
                    Err(e.into())
                }
            }
        }
    })
    .await?;
    Ok(match grant {
        Some(grant) => Json(grant).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}

/// What one look of a [`long_poll`] found.
enum Look<T> {
    Found(T),
    /// Nothing yet; look again when woken, or at this instant at the latest.
    Wait(Option<tokio::time::Instant>),
}

/// A long poll: looks (given the poll's deadline), and until a look finds something, waits
/// for `notify`, the look's recheck instant, the deadline (`wait_ms`, at most
/// [`MAX_LONG_POLL_MS`]) or the service's closing, then looks again. `None`: nothing was found
/// in time. The wake-up is armed before each look, so one that comes during it is not lost.
async fn long_poll<T, F>(
    c: &Coordinator,
    notify: &tokio::sync::Notify,
    wait_ms: u64,
    mut look: impl FnMut(tokio::time::Instant) -> F,
) -> Result<Option<T>, ApiError>
where
    F: std::future::Future<Output = Result<Look<T>, ApiError>>,
{
    let deadline =
        tokio::time::Instant::now() + Duration::from_millis(wait_ms.min(MAX_LONG_POLL_MS));
    let mut closing = c.closing.subscribe();
    loop {
        let notified = notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let recheck = match look(deadline).await? {
            Look::Found(x) => return Ok(Some(x)),
            Look::Wait(recheck) => recheck,
        };
        if tokio::time::Instant::now() >= deadline || *closing.borrow() {
            return Ok(None);
        }
        let wake = recheck.map_or(deadline, |t| deadline.min(t));
        tokio::select! {
            _ = &mut notified => {}
            _ = tokio::time::sleep_until(wake) => {}
            _ = closing.changed() => {}
        }
    }
}

/// `POST /v1/worker/heartbeat`.
#[utoipa::path(post, path = "/v1/worker/heartbeat", tag = "worker", security(("workerToken" = [])),
    summary = "Worker: the task still runs (with progress); the reply may say cancel",
    request_body = Heartbeat,
    responses(
        (status = 200, description = "Whether to stop the task", body = HeartbeatReply),
        (status = 409, description = "The lease is expired, foreign or unknown: stop the task", body = ErrorBody),
    ))]
pub(crate) async fn worker_heartbeat(
    State(c): State<Shared>,
    Json(h): Json<Heartbeat>,
) -> Result<Json<HeartbeatReply>, ApiError> {
    Ok(Json(c.call_now(move |s| s.heartbeat(h))?))
}

/// Long poll: the worker's leases whose tasks should stop, as soon as there is one, or an
/// empty list after `wait_ms`.
#[utoipa::path(post, path = "/v1/worker/cancels", tag = "worker", security(("workerToken" = [])),
    summary = "Worker: long-poll for cancelled tasks (a cancel reaches a running task at once)",
    request_body = CancelWatch,
    responses(
        (status = 200, description = "Leases to stop (empty: none within wait_ms)", body = CancelList),
        (status = 404, description = "Unknown worker: register again", body = ErrorBody),
    ))]
pub(crate) async fn worker_cancels(
    State(c): State<Shared>,
    Json(r): Json<CancelWatch>,
) -> Result<Json<CancelList>, ApiError> {
    let found = long_poll(&c, &c.cancels, r.wait_ms, |_| {
        let worker = r.worker_id.clone();
        let found = c.call_now(move |s| s.cancels_for(&worker)).map(|cancel| {
            if cancel.is_empty() {
                Look::Wait(None)
            } else {
                Look::Found(cancel)
            }
        });
        std::future::ready(found.map_err(ApiError::from))
    })
    .await?;
    Ok(Json(CancelList {
        cancel: found.unwrap_or_default(),
    }))
}

/// `POST /v1/worker/result`.
#[utoipa::path(post, path = "/v1/worker/result", tag = "worker", security(("workerToken" = [])),
    summary = "Worker: the outcome of a lease (idempotent per lease)",
    request_body = Report,
    responses(
        (status = 200, description = "Accepted, or a duplicate", body = ReportReply),
        (status = 409, description = "The lease is expired, foreign or unknown: the result is refused", body = ErrorBody),
    ))]
pub(crate) async fn worker_result(
    State(c): State<Shared>,
    Json(mut r): Json<Report>,
) -> Result<Json<ReportReply>, ApiError> {
    // The output's check (a proof certificate's verification, every move list) may cost as
    // much as the output is large: it runs here, off the scheduler's lock, on the blocking
    // pool; the locked call below only takes its verdict (or checks again if the lease moved).
    let pre = match &mut r.outcome {
        Outcome::Done { output } => {
            let (w, l) = (r.worker_id.clone(), r.lease_id.clone());
            let context = c
                .read(move |s| s.check_context(&w, &l).map(|x| (x, s.max_proof_bytes())))
                .await;
            match context {
                Some((context, max_proof_bytes)) => {
                    let mut out = std::mem::take(output);
                    let lease_id = r.lease_id.clone();
                    let (out, pre) = tokio::task::spawn_blocking(move || {
                        let pre =
                            scheduler::precheck(context, &lease_id, &mut out, max_proof_bytes);
                        (out, pre)
                    })
                    .await
                    .map_err(|_| {
                        ApiError::new(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            "internal",
                            "the result's check panicked",
                        )
                    })?;
                    *output = out;
                    Some(pre)
                }
                None => None,
            }
        }
        _ => None,
    };
    let me = c.clone();
    let reply = c
        .call(move |s| {
            // A retrograde task's output names an artifact the worker uploaded: one that is not
            // in the artifact store makes the attempt a failure (the task runs again), never a
            // result. Checked under the scheduler's lock, like the deletions below, so that a
            // chunk cannot be deleted between the check and the result that makes it live.
            if let Outcome::Done { output } = &r.outcome {
                if let Some(a) = output.extra.retro.as_deref() {
                    if !me.artifacts.has(&a.artifact) {
                        r.outcome = Outcome::Failed {
                            message: format!(
                                "its output names artifact {} that was never uploaded",
                                a.artifact
                            ),
                        };
                    }
                }
            }
            let reply = s.report_checked(r, pre);
            // Committed with the report: old round chunks that no job reads any more go.
            if reply.is_ok() {
                delete_spent_artifacts(s, &me.artifacts);
            }
            reply
        })
        .await;
    Ok(Json(reply?))
}

/// Deletes the artifacts the scheduler says no job reads any more
/// ([`Scheduler::take_deletable_artifacts`]); call under the scheduler's lock, after the commit
/// that retired them.
fn delete_spent_artifacts(s: &mut Scheduler, artifacts: &ArtifactStore) {
    for name in s.take_deletable_artifacts() {
        if let Err(e) = artifacts.remove(&name) {
            tracing::warn!("cannot delete spent artifact {name}: {e}");
        }
    }
}

/// `POST /v1/worker/release`.
#[utoipa::path(post, path = "/v1/worker/release", tag = "worker", security(("workerToken" = [])),
    summary = "Worker: give a lease back (shutdown); the attempt does not count",
    request_body = Release,
    responses(
        (status = 200, description = "Released", body = Released),
        (status = 409, description = "Not this worker's active lease", body = ErrorBody),
    ))]
pub(crate) async fn worker_release(
    State(c): State<Shared>,
    Json(r): Json<Release>,
) -> Result<Json<Released>, ApiError> {
    c.call(move |s| s.release(r)).await?;
    Ok(Json(Released { released: true }))
}

impl From<crate::artifacts::ArtifactError> for ApiError {
    fn from(e: crate::artifacts::ArtifactError) -> Self {
        use crate::artifacts::ArtifactError as E;
        match e {
            E::BadName(_) | E::Mismatch { .. } => {
                ApiError::new(StatusCode::BAD_REQUEST, "bad_request", e.to_string())
            }
            E::TooLarge(m) => ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", m),
            E::Missing(m) => ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("no artifact {m}"),
            ),
            E::Io(m) => {
                tracing::error!("artifacts: {m}");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "store",
                    "the coordinator's artifact store failed (details in its log)",
                )
            }
        }
    }
}

/// `PUT /v1/worker/artifacts/{name}`: a worker uploads an artifact under its SHA-256.
#[utoipa::path(put, path = "/v1/worker/artifacts/{name}", tag = "worker", security(("workerToken" = [])),
    summary = "Worker: upload a file artifact (a database or a round chunk) named by its SHA-256; idempotent",
    params(("name" = String, Path, description = "SHA-256 of the content, 64 lowercase hex digits")),
    responses(
        (status = 200, description = "Stored (or already there)", body = serde_json::Value),
        (status = 400, description = "Not a SHA-256, or the content does not match it", body = ErrorBody),
        (status = 413, description = "Over the artifact or store size limit", body = ErrorBody),
    ))]
pub(crate) async fn worker_put_artifact(
    State(c): State<Shared>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Result<Json<serde_json::Value>, ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let new = c.artifacts.put(&name, body, declared).await?;
    Ok(Json(serde_json::json!({"sha256": name, "new": new})))
}

/// `GET /v1/worker/artifacts/{name}`: a worker fetches an artifact (checked on read).
#[utoipa::path(get, path = "/v1/worker/artifacts/{name}", tag = "worker", security(("workerToken" = [])),
    summary = "Worker: fetch a file artifact by its SHA-256",
    params(("name" = String, Path, description = "SHA-256 of the content")),
    responses(
        (status = 200, description = "The bytes", content_type = "application/octet-stream"),
        (status = 404, description = "No such artifact", body = ErrorBody),
    ))]
pub(crate) async fn worker_get_artifact(
    State(c): State<Shared>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    artifact_file(&c, name).await
}

/// Artifact `name` streamed from its file (see [`ArtifactStore::stream`]): a database of
/// hundreds of MB is never held in memory to be sent.
async fn artifact_file(c: &Shared, name: String) -> Result<Response, ApiError> {
    let store = c.artifacts.clone();
    let (size, body) = tokio::task::spawn_blocking(move || store.stream(&name))
        .await
        .map_err(|_| {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "read failed")
        })??;
    let mut r = ([(header::CONTENT_TYPE, "application/octet-stream")], body).into_response();
    r.headers_mut()
        .insert(header::CONTENT_LENGTH, header::HeaderValue::from(size));
    Ok(r)
}

/// The newest finished build of the set `name`: its job id and its databases.
async fn built_set(c: &Shared, name: String) -> Result<(u64, Vec<serde_json::Value>), ApiError> {
    built_set_spec(c, name)
        .await
        .map(|(job, _, dbs)| (job, dbs))
}

/// [`built_set`] with the build's job spec.
async fn built_set_spec(
    c: &Shared,
    name: String,
) -> Result<(u64, JobSpec, Vec<serde_json::Value>), ApiError> {
    gamesolver_shared::games::data::plain_name(&name)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "bad_request", e))?;
    let shown = name.clone();
    let found = c
        .query(move |q| q.table_set(&name))
        .await
        .map_err(|e| ApiError::from(SchedError::Store(e.to_string())))?;
    let Some((job, spec, result)) = found else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no finished retrograde build named '{shown}'"),
        ));
    };
    let spec: JobSpec = serde_json::from_str(&spec)
        .map_err(|e| ApiError::from(SchedError::Store(e.to_string())))?;
    let result: serde_json::Value = serde_json::from_str(&result)
        .map_err(|e| ApiError::from(SchedError::Store(e.to_string())))?;
    let dbs = result["databases"].as_array().cloned().unwrap_or_default();
    Ok((job, spec, dbs))
}

/// Query of `GET /v1/tables/{name}/lookup`.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct LookupQuery {
    /// The board: the pit counts separated by commas, the side to move's first (no moves).
    position: String,
}

/// The databases' game of set `name`, built by `spec`.
fn built_set_game(
    spec: &JobSpec,
    name: &str,
) -> Result<Box<dyn gamesolver_shared::search::retrograde::tool::EndgameTables>, ApiError> {
    let hook = gamesolver_shared::registry::catalogue::info(&spec.game)
        .and_then(|i| i.tables)
        .ok_or_else(|| {
            ApiError::from(SchedError::Store(format!(
                "the build of '{name}' is of game '{}', which has no databases",
                spec.game
            )))
        })?;
    hook(&gamesolver_shared::model::settings::Opts::new(
        &spec.game_params,
        "game parameter",
    ))
    .map_err(|e| ApiError::from(SchedError::Store(e.to_string())))
}

/// `GET /v1/tables/{name}/lookup?position=P`: the score, best moves and principal line of a
/// board from the set's databases, read entry by entry from the artifact files (no database is
/// loaded).
#[utoipa::path(get, path = "/v1/tables/{name}/lookup", tag = "jobs", security(("apiToken" = []), ()),
    summary = "Look a board up in a retrograde build: its score and its best moves",
    params(("name" = String, Path, description = "The set's name"), LookupQuery),
    responses(
        (status = 200, description = "The board's score as the databases give it (stones the side to move captures from here on minus the opponent's), the moves that keep it, and the principal variation", body = crate::answers::TableLookup),
        (status = 400, description = "Not a board of the set's game, or more stones than the set covers", body = ErrorBody),
        (status = 404, description = "No finished build of that name", body = ErrorBody),
    ))]
pub(crate) async fn table_lookup(
    State(c): State<Shared>,
    Path(name): Path<String>,
    q: Result<Query<LookupQuery>, QueryRejection>,
) -> Result<Json<crate::answers::TableLookup>, ApiError> {
    use gamesolver_shared::search::retrograde::{store, tool::LineLimits};
    let bad = |m: String| ApiError::new(StatusCode::BAD_REQUEST, "bad_request", m);
    let q = query(q)?;
    let (job, spec, dbs) = built_set_spec(&c, name.clone()).await?;
    let game = built_set_game(&spec, &name)?;
    let artifacts: Vec<String> = dbs
        .iter()
        .map(|d| d["artifact"].as_str().unwrap_or_default().to_string())
        .collect();
    let me = c.clone();
    let header = store::header_len(&game.tag());
    let covered = artifacts.len();
    let position = q.position.clone();
    let looked = tokio::task::spawn_blocking(move || {
        // Entries read once each (the line reads many twice); the first artifact error is
        // kept to answer with its status.
        let mut read: std::collections::HashMap<(usize, u64), i32> = Default::default();
        let mut failed: Option<crate::artifacts::ArtifactError> = None;
        let mut entry = |db: usize, index: u64| {
            if let Some(&v) = read.get(&(db, index)) {
                return Ok(v);
            }
            match me.artifacts.read_at(&artifacts[db], header + index, 1) {
                Ok(b) => {
                    read.insert((db, index), b[0] as i8 as i32);
                    Ok(b[0] as i8 as i32)
                }
                Err(e) => {
                    let text = e.to_string();
                    failed.get_or_insert(e);
                    Err(text)
                }
            }
        };
        let limits = LineLimits {
            plies: LINE_MAX_PLIES,
            nodes: LINE_MAX_NODES,
        };
        let looked = game.lookup(&position, covered, &mut entry, Some(limits));
        let here = looked
            .as_ref()
            .map_or(String::new(), |l| game.db_label(l.db));
        let labels = (game.db_label(covered.max(1) - 1), here);
        (looked, failed, labels)
    })
    .await
    .map_err(|_| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "lookup failed",
        )
    })?;
    let (looked, failed, (last, here)) = looked;
    if let Some(e) = failed {
        return Err(ApiError::from(e));
    }
    let looked = looked.map_err(|e| match e {
        Ok(text) => bad(text),
        Err(io) => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", io),
    })?;
    let Some(found) = looked.found else {
        return Err(bad(format!(
            "'{name}' covers 0 to {last}, this board has {here}"
        )));
    };
    let line = found.line.expect("a covered board has a line");
    Ok(Json(crate::answers::TableLookup {
        name,
        job,
        position: q.position,
        stones: looked.db as u64,
        score: found.score.into(),
        best: found.best,
        line: crate::answers::LookupLine {
            moves: line
                .moves
                .into_iter()
                .map(|(position, mv, value, gain)| crate::answers::LookupMove {
                    position,
                    mv,
                    value: value.into(),
                    captures: gain.max(0) as u64,
                })
                .collect(),
            position: line.position,
            value: line.value.into(),
            end: line.end.to_string(),
        },
    }))
}

/// Most moves of a lookup's principal line.
const LINE_MAX_PLIES: usize = 400;
/// Most positions a lookup's line visits to find the distances that make it progress (each
/// costs a read of every move's entry).
const LINE_MAX_NODES: usize = 20_000;

/// `GET /v1/tables/{name}`: the databases of the newest finished build named `name`.
#[utoipa::path(get, path = "/v1/tables/{name}", tag = "jobs", security(("apiToken" = []), ()),
    summary = "The databases of a retrograde build (the newest finished job with option name=NAME)",
    params(("name" = String, Path, description = "The set's name")),
    responses(
        (status = 200, description = "The job and its databases (stones, positions, rounds, bytes, sha256, artifact)", body = serde_json::Value),
        (status = 400, description = "Not a plain data name", body = ErrorBody),
        (status = 404, description = "No finished build of that name", body = ErrorBody),
    ))]
pub(crate) async fn table_set(
    State(c): State<Shared>,
    Path(name): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let (job, dbs) = built_set(&c, name.clone()).await?;
    Ok(Json(
        serde_json::json!({"name": name, "job": job, "databases": dbs}),
    ))
}

/// `GET /v1/tables/{name}/{stones}`: one database file of the set.
#[utoipa::path(get, path = "/v1/tables/{name}/{stones}", tag = "jobs", security(("apiToken" = []), ()),
    summary = "Download one database file of a retrograde build (the format of tables/NAME in the data folder)",
    params(("name" = String, Path, description = "The set's name"), ("stones" = u32, Path, description = "The database")),
    responses(
        (status = 200, description = "The database file", content_type = "application/octet-stream"),
        (status = 404, description = "No such build or database", body = ErrorBody),
    ))]
pub(crate) async fn table_file(
    State(c): State<Shared>,
    Path((name, stones)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let (_, dbs) = built_set(&c, name).await?;
    let db = stones
        .parse::<usize>()
        .ok()
        .and_then(|d| dbs.get(d).cloned())
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("the set has databases 0 to {}", dbs.len() as i64 - 1),
            )
        })?;
    let artifact = db["artifact"].as_str().unwrap_or_default().to_string();
    artifact_file(&c, artifact).await
}

/// Largest game module upload (`POST /v1/games`, `crate::games_api`), the text format included.
pub(crate) const MAX_MODULE_UPLOAD_BYTES: usize = 4 << 20;

/// The prefix of a module game in a job's `game`.
const MODULE_PREFIX: &str = "module:";

/// The module uploaded under `name`, or (a hash) the latest upload of that hash.
pub(crate) async fn stored_game(
    c: &Shared,
    name: &str,
) -> Result<Option<crate::store::StoredGame>, ApiError> {
    let key = name.to_string();
    c.query(
        move |q| match gamesolver_shared::search::retrograde::artifacts::is_name(&key) {
            true => q.game_with_hash(&key),
            false => q.games(Some(&key), 1).map(|g| g.into_iter().next()),
        },
    )
    .await
    .map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the job store failed: {e}"),
        )
    })
}

/// A job whose game is `module:<name>` gets the hash uploaded under that name, so that its
/// tasks all run one module even if the name is uploaded again meanwhile. A hash stays as it
/// is (the job's preparation finds the module or says it is missing).
pub(crate) async fn pin_module(c: &Shared, mut spec: JobSpec) -> Result<JobSpec, ApiError> {
    let Some(name) = spec.game.strip_prefix(MODULE_PREFIX) else {
        return Ok(spec);
    };
    if gamesolver_shared::search::retrograde::artifacts::is_name(name) {
        return Ok(spec);
    }
    let Some(g) = stored_game(c, name).await? else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            format!(
                "no game module named '{}' at this coordinator (upload it with POST /v1/games)",
                gamesolver_shared::model::excerpt(name)
            ),
        ));
    };
    spec.game = format!("{MODULE_PREFIX}{}", g.sha256);
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_do_not_show_the_servers_folders() {
        let data = gamesolver_shared::games::data::data_dir();
        let cwd = std::env::current_dir().unwrap();
        let tmp = std::env::temp_dir();
        let raw = format!(
            "cannot read {}/connect4/book.bin; also {}/gs.db and {}/x",
            data.display(),
            cwd.display(),
            tmp.display()
        );
        let shown = redact_paths(&raw);
        for dir in [&data, &cwd, &tmp] {
            assert!(!shown.contains(dir.to_str().unwrap()), "{shown}");
        }
        assert!(shown.contains("<data>/connect4/book.bin"), "{shown}");
        // A job's own text is left alone.
        assert_eq!(redact_paths("no move 'a/b' here"), "no move 'a/b' here");
    }
}
