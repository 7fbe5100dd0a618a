//! The route table of the coordinator's HTTP API and its layers: which handler answers which
//! path ([`crate::api`] for jobs, workers and tables, [`crate::dashboard`] for the pages and
//! their data, [`crate::openapi`] for the document), under which token, within which limits.
//! Kept apart from the handlers so that the handlers, the dashboard and the OpenAPI document
//! import one another in one direction only.

use crate::api::{
    cancel_job, healthz, job_events, job_proof, job_status, job_tasks, list_jobs, metrics, options,
    refuse_declared_oversize, require_api_token, require_worker_token, status, submit_job,
    table_file, table_lookup, table_set, worker_cancels, worker_get_artifact, worker_heartbeat,
    worker_lease, worker_put_artifact, worker_register, worker_release, worker_result, ApiError,
    Shared,
};
use crate::games_api::{self, get_game, list_games, upload_game};
use crate::http::{HttpLimits, HttpStats};
use crate::openapi::{docs_page, openapi_json};
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use std::sync::Arc;
use tower_http::timeout::{RequestBodyDeadlineLayer, TimeoutLayer};

/// The route table with the default [`HttpLimits`] (tests and embedding; `serve` uses
/// [`router_with`]).
pub fn router(coord: Shared) -> Router {
    let limits = HttpLimits::default();
    let stats = HttpStats::new(&limits);
    router_with(coord, &limits, stats)
}

/// The route table and its layers: a body must arrive within `limits.body_timeout` (408), an
/// answer within `limits.request_timeout` (503), except event streams (capped at
/// `limits.event_streams()` open at once, 503 past it) and worker long polls (at most
/// [`MAX_LONG_POLL_MS`]); `/metrics` follows the API token unless `limits.open_metrics`.
pub fn router_with(coord: Shared, limits: &HttpLimits, stats: Arc<HttpStats>) -> Router {
    let timeout =
        TimeoutLayer::with_status_code(StatusCode::SERVICE_UNAVAILABLE, limits.request_timeout);
    let api_auth = middleware::from_fn_with_state(coord.clone(), require_api_token);
    let jobs = Router::new()
        .route("/v1/jobs", post(submit_job).get(list_jobs))
        .route("/v1/jobs/{id}", get(job_status))
        .route("/v1/jobs/{id}/cancel", post(cancel_job))
        .route("/v1/jobs/{id}/tasks", get(job_tasks))
        .route("/v1/jobs/{id}/proof", get(job_proof))
        .route("/v1/status", get(status))
        .route("/v1/options", get(options))
        .route(
            "/v1/games",
            post(upload_game)
                .layer(DefaultBodyLimit::max(
                    games_api::MAX_UPLOAD_BYTES.max(coord.body_limit),
                ))
                .get(list_games),
        )
        .route("/v1/games/{name}", get(get_game))
        .route("/v1/tables/{name}", get(table_set))
        .route("/v1/tables/{name}/lookup", get(table_lookup))
        .route("/v1/tables/{name}/{stones}", get(table_file))
        .merge(crate::dashboard::api_routes(&coord))
        .layer(timeout)
        // Added after the timeout layer: a stream lasts as long as its job.
        .route("/v1/jobs/{id}/events", get(job_events))
        .route_layer(api_auth.clone());
    let worker = Router::new()
        .route("/v1/worker/register", post(worker_register))
        .route("/v1/worker/heartbeat", post(worker_heartbeat))
        .route("/v1/worker/cancels", post(worker_cancels))
        .route("/v1/worker/result", post(worker_result))
        .route("/v1/worker/release", post(worker_release))
        .route("/v1/worker/artifacts/{name}", get(worker_get_artifact))
        .layer(timeout)
        // Uploads of databases are streamed to disk, bounded by the artifact store's limits
        // rather than the JSON body limit or the request timeout.
        .route(
            "/v1/worker/artifacts/{name}",
            axum::routing::put(worker_put_artifact).layer(DefaultBodyLimit::disable()),
        )
        // A long poll ends by itself within MAX_LONG_POLL_MS.
        .route("/v1/worker/lease", post(worker_lease))
        .route_layer(middleware::from_fn_with_state(
            coord.clone(),
            require_worker_token,
        ));
    let metrics_route = Router::new().route("/metrics", get(metrics));
    let metrics_route = if limits.open_metrics {
        metrics_route
    } else {
        metrics_route.route_layer(api_auth)
    };
    let open = Router::new()
        .route("/healthz", get(healthz))
        .route("/openapi.json", get(openapi_json))
        .route("/docs", get(docs_page))
        .merge(crate::dashboard::pages())
        .merge(metrics_route)
        .layer(timeout);
    let limit = coord.body_limit;
    jobs.merge(worker)
        .merge(open)
        .fallback(|| async {
            ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "method not allowed on this endpoint",
            )
        })
        .layer(DefaultBodyLimit::max(limit))
        .layer(middleware::from_fn_with_state(
            limit,
            refuse_declared_oversize,
        ))
        .layer(RequestBodyDeadlineLayer::new(limits.body_timeout))
        .layer(Extension(stats))
        .layer(middleware::map_response(json_errors))
        .with_state(coord)
}

/// Layers that answer on their own (the request timeout) send an empty body: it becomes the
/// usual JSON error.
async fn json_errors(resp: Response) -> Response {
    let status = resp.status();
    if !(status.is_client_error() || status.is_server_error())
        || http_body::Body::size_hint(resp.body()).exact() != Some(0)
    {
        return resp;
    }
    let (code, message) = match status {
        StatusCode::SERVICE_UNAVAILABLE => (
            "timeout",
            "no answer within the server's request timeout".to_string(),
        ),
        s => (
            "error",
            s.canonical_reason().unwrap_or("error").to_ascii_lowercase(),
        ),
    };
    ApiError::new(status, code, message).into_response()
}
