//! Game modules through the service (docs/GAME_MODULES.md): `POST /v1/games` uploads a
//! WebAssembly game, checked as the command line checks one (compiled, no imports, a sane
//! declaration, random games played within its limits) before it is kept; `GET /v1/games`
//! lists what was uploaded. A module is a file artifact named by its SHA-256, which workers
//! fetch and check like any other; its name is a row of the store. A job names a module as
//! `module:<sha256>`, or `module:<name>`, which submission pins to the name's hash of the moment
//! (`api::pin_module`).

use crate::answers::ErrorBody;
use crate::api::{stored_game as find, ApiError, Shared, MAX_MODULE_UPLOAD_BYTES};
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use gamesolver_shared::search::retrograde::artifacts::is_name;

/// The prefix of a module game in a job's `game`.
const PREFIX: &str = "module:";
/// Largest upload: the size a module may have (the text format included).
pub(crate) const MAX_UPLOAD_BYTES: usize = MAX_MODULE_UPLOAD_BYTES;
/// Most modules `GET /v1/games` lists.
const LIST_LIMIT: usize = 1000;

/// Query of `POST /v1/games`.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct UploadQuery {
    /// The name jobs may use (`module:<name>`): letters, digits, `_`, `-` and `.`, 1 to 64
    /// characters; default, the name the module declares.
    name: Option<String>,
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
}

fn internal(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
}

/// A name an upload may take: not a hash (those name modules by content).
fn check_name(name: &str) -> Result<(), ApiError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
        && !name.starts_with('.');
    if !ok {
        return Err(bad(format!(
            "name '{}': letters, digits, '_', '-' and '.', 1 to 64 characters",
            gamesolver_shared::model::excerpt(name)
        )));
    }
    if is_name(name) {
        return Err(bad(
            "a name of 64 hex digits would read as a module's hash; choose another",
        ));
    }
    Ok(())
}

/// An uploaded game module.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub(crate) struct GameEntry {
    /// The name jobs may use (`module:<name>`).
    name: String,
    /// SHA-256 of the module's binary bytes.
    sha256: String,
    /// What a job names: `module:<sha256>`.
    game: String,
    /// When it was uploaded under this name (Unix ms); absent in the upload's own answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    uploaded_ms: Option<u64>,
    /// What the module declares: `name`, `players`, `zero_sum`, `chance`, `min_value`,
    /// `max_value`, `max_moves`, `max_plies`, `params` (and, on upload, `abi_version`,
    /// `compile_ms`).
    #[schema(value_type = Object)]
    info: serde_json::Value,
}

/// `GET /v1/games`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub(crate) struct GameList {
    /// By name.
    games: Vec<GameEntry>,
}

/// One uploaded module as the API shows it.
fn entry(g: &crate::store::StoredGame) -> GameEntry {
    GameEntry {
        name: g.name.clone(),
        sha256: g.sha256.clone(),
        game: format!("{PREFIX}{}", g.sha256),
        uploaded_ms: Some(g.uploaded_ms),
        info: serde_json::from_str(&g.info).unwrap_or_default(),
    }
}

/// `POST /v1/games`: uploads a game module.
#[utoipa::path(post, path = "/v1/games", tag = "games", security(("apiToken" = []), ()),
    summary = "Upload a game module (WebAssembly, binary or text format)",
    params(UploadQuery),
    request_body(content = Vec<u8>, content_type = "application/wasm",
        description = "The module: binary WebAssembly or the text format, at most 4 MiB"),
    responses(
        (status = 201, description = "Checked and kept: its name, hash, the job game name (`module:<sha256>`) and what it declares", body = GameEntry),
        (status = 400, description = "Not a valid game module: the message names the problem", body = ErrorBody),
        (status = 401, description = "Missing or wrong API token", body = ErrorBody),
        (status = 413, description = "Larger than 4 MiB", body = ErrorBody),
        (status = 429, description = "Another module is being checked, or the disk quota is full; try again later", body = ErrorBody),
        (status = 501, description = "This coordinator was built without game modules", body = ErrorBody),
    ))]
pub(crate) async fn upload_game(
    State(c): State<Shared>,
    Query(q): Query<UploadQuery>,
    body: Bytes,
) -> Result<Response, ApiError> {
    if let Some(n) = &q.name {
        check_name(n)?;
    }
    if body.len() > MAX_UPLOAD_BYTES {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("a module is at most {MAX_UPLOAD_BYTES} bytes"),
        ));
    }
    c.retention.check_quota(body.len() as u64)?;
    let (wasm, info, sha256) = check_module(body).await?;
    let name = q
        .name
        .unwrap_or_else(|| info["name"].as_str().unwrap_or("game").to_string());
    let me = c.clone();
    let stored = tokio::task::spawn_blocking(move || me.artifacts.put_bytes(&wasm))
        .await
        .map_err(|_| internal("write failed"))??;
    if stored != sha256 {
        return Err(internal(format!(
            "the module was stored as {stored}, not its hash {sha256}"
        )));
    }
    let info_text = info.to_string();
    let (n, h) = (name.clone(), sha256.clone());
    c.call(move |s| s.record_game(n, h, info_text)).await?;
    let body = GameEntry {
        name,
        game: format!("{PREFIX}{sha256}"),
        sha256,
        uploaded_ms: None,
        info,
    };
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// Checks an upload as `--game-module` does; its binary bytes, its declaration and its hash.
#[cfg(feature = "modules")]
async fn check_module(body: Bytes) -> Result<(Vec<u8>, serde_json::Value, String), ApiError> {
    use gamesolver_shared::games::module;
    // One module is compiled and probed at a time: a compile takes a core for up to seconds,
    // and the uploads of one user must not take every core from the others.
    static CHECKING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);
    let _permit = CHECKING.try_acquire().map_err(|_| {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "busy",
            "another game module is being checked; try again in a few seconds",
        )
    })?;
    tokio::task::spawn_blocking(move || {
        let wasm = module::binary(&body).map_err(bad)?.into_owned();
        let loaded = module::load(&wasm).map_err(bad)?;
        let info = loaded.info.summary();
        let mut info = info;
        info["abi_version"] = loaded.version.into();
        info["compile_ms"] = (loaded.compile_ms.round() as u64).into();
        Ok((wasm, info, loaded.sha256.clone()))
    })
    .await
    .map_err(|_| internal("the module check panicked"))?
}

#[cfg(not(feature = "modules"))]
async fn check_module(_: Bytes) -> Result<(Vec<u8>, serde_json::Value, String), ApiError> {
    Err(ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "not_implemented",
        "game modules are not in this build (cargo feature `modules`, docs/GAME_MODULES.md)",
    ))
}

/// `GET /v1/games`: the uploaded modules by name.
#[utoipa::path(get, path = "/v1/games", tag = "games", security(("apiToken" = []), ()),
    summary = "List the uploaded game modules",
    responses(
        (status = 200, description = "The uploaded modules by name", body = GameList),
        (status = 401, description = "Missing or wrong API token", body = ErrorBody),
    ))]
pub(crate) async fn list_games(State(c): State<Shared>) -> Result<Response, ApiError> {
    let games = c
        .query(|q| q.games(None, LIST_LIMIT))
        .await
        .map_err(|e| internal(format!("the job store failed: {e}")))?;
    let games = games.iter().map(entry).collect();
    Ok(Json(GameList { games }).into_response())
}

/// `GET /v1/games/{name}`: one uploaded module, by name or hash.
#[utoipa::path(get, path = "/v1/games/{name}", tag = "games", security(("apiToken" = []), ()),
    summary = "One uploaded game module",
    params(("name" = String, Path, description = "The name it was uploaded under, or its SHA-256")),
    responses(
        (status = 200, description = "Its name, sha256, job game name and declaration", body = GameEntry),
        (status = 404, description = "No module of that name or hash", body = ErrorBody),
    ))]
pub(crate) async fn get_game(
    State(c): State<Shared>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    match find(&c, &name).await? {
        Some(g) => Ok(Json(entry(&g)).into_response()),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!(
                "no game module '{}'",
                gamesolver_shared::model::excerpt(&name)
            ),
        )),
    }
}
