//! The worker's view of the coordinator's file artifacts (retrograde databases and round
//! chunks): fetched over HTTP (`GET /v1/worker/artifacts/{sha256}`), uploaded with the worker's
//! token (`PUT`), and kept in a bounded local cache folder.
//!
//! Every blob is checked against its SHA-256 when it arrives and again when it is read from the
//! cache (a damaged cache file is dropped and fetched again). Files are written under a
//! temporary name and renamed, so workers that share a cache folder never see half a file. When
//! the folder holds more than its bound, the files used longest ago are removed (each read
//! touches its file). Requests are retried with backoff while the coordinator is away, so a
//! restarted coordinator costs a task nothing but the wait.

use gamesolver_shared::search::retrograde::artifacts::{is_name, sha256_hex, Artifacts};
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Default bound of the cache folder, in MiB.
pub const DEFAULT_CACHE_MB: u64 = 4096;
/// Largest artifact a worker accepts (as the coordinator's bound).
const MAX_ARTIFACT_BYTES: u64 = 512 << 20;
/// How long a transfer may try before the task fails (and is retried by the coordinator).
const GIVE_UP: Duration = Duration::from_secs(120);

/// Artifacts over HTTP with a local cache.
pub struct HttpArtifacts {
    agent: ureq::Agent,
    base: String,
    auth: Option<String>,
    dir: PathBuf,
    max_bytes: u64,
    /// Bytes the cache folder holds, as far as this process knows (counted at the start, then
    /// kept up by its own writes; recounted when it passes the bound), so that keeping a file
    /// does not list the folder.
    used: AtomicU64,
    shutdown: Arc<AtomicBool>,
}

impl HttpArtifacts {
    /// Artifacts of the coordinator at `base`, cached in `dir` (created) up to `cache_mb`.
    pub fn new(
        base: &str,
        token: Option<&str>,
        dir: PathBuf,
        cache_mb: u64,
        shutdown: Arc<AtomicBool>,
    ) -> std::io::Result<HttpArtifacts> {
        std::fs::create_dir_all(&dir)?;
        let used = cache_files(&dir).iter().map(|f| f.1).sum();
        Ok(HttpArtifacts {
            agent: ureq::AgentBuilder::new()
                .timeout_connect(Duration::from_secs(5))
                .timeout(Duration::from_secs(300))
                .build(),
            base: base.trim_end_matches('/').to_string(),
            auth: token.map(|t| format!("Bearer {t}")),
            dir,
            max_bytes: cache_mb.saturating_mul(1 << 20),
            used: AtomicU64::new(used),
            shutdown,
        })
    }

    fn url(&self, name: &str) -> String {
        format!("{}/v1/worker/artifacts/{name}", self.base)
    }

    /// Retries `f` with backoff while the coordinator is away, up to [`GIVE_UP`].
    fn retry<T>(
        &self,
        what: &str,
        mut f: impl FnMut() -> Result<T, Box<ureq::Error>>,
    ) -> Result<T, String> {
        let start = std::time::Instant::now();
        let mut wait = Duration::from_millis(100);
        loop {
            match f().map_err(|e| *e) {
                Ok(v) => return Ok(v),
                Err(ureq::Error::Status(code, resp)) if code < 500 => {
                    let text = resp.into_string().unwrap_or_default();
                    return Err(format!("{what}: refused ({code}): {text}"));
                }
                Err(e) => {
                    if start.elapsed() > GIVE_UP || self.shutdown.load(Ordering::Relaxed) {
                        return Err(format!("{what}: {e}"));
                    }
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_secs(1));
                }
            }
        }
    }

    /// The cached copy, if it is there and sound.
    fn cached(&self, name: &str) -> Option<Vec<u8>> {
        let path = self.dir.join(name);
        let bytes = std::fs::read(&path).ok()?;
        if sha256_hex(&bytes) != name {
            let _ = std::fs::remove_file(&path);
            return None;
        }
        // Mark it used (the eviction order).
        if let Ok(f) = std::fs::File::options().append(true).open(&path) {
            let _ = f.set_modified(std::time::SystemTime::now());
        }
        Some(bytes)
    }

    /// Keeps `bytes` as `name` in the cache (best effort), then trims the cache to its bound.
    fn keep(&self, name: &str, bytes: &[u8]) {
        if self.max_bytes == 0 || bytes.len() as u64 > self.max_bytes {
            return;
        }
        let tmp = self.dir.join(format!(
            "tmp-{}-{:016x}",
            std::process::id(),
            rand::random::<u64>()
        ));
        if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, self.dir.join(name)).is_ok()
        {
            let used = self.used.fetch_add(bytes.len() as u64, Ordering::Relaxed);
            if used + bytes.len() as u64 > self.max_bytes {
                self.trim();
            }
        } else {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    /// Removes the files used longest ago until the cache fits its bound.
    /// (Called when the count of bytes held passes the bound; recounts them.)
    fn trim(&self) {
        let mut files = cache_files(&self.dir);
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        files.sort();
        for (_, len, path) in files {
            if total <= self.max_bytes {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
        self.used.store(total, Ordering::Relaxed);
    }
}

/// The artifact files of a cache folder: (last use, size, path).
fn cache_files(dir: &std::path::Path) -> Vec<(std::time::SystemTime, u64, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| is_name(&e.file_name().to_string_lossy()))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some((m.modified().ok()?, m.len(), e.path()))
        })
        .collect()
}

impl Artifacts for HttpArtifacts {
    fn get(&self, name: &str) -> Result<Arc<Vec<u8>>, String> {
        if !is_name(name) {
            return Err(format!("'{name}' is not an artifact name"));
        }
        if let Some(b) = self.cached(name) {
            return Ok(Arc::new(b));
        }
        let bytes = self.retry(&format!("fetching artifact {name}"), || {
            let mut req = self.agent.get(&self.url(name));
            if let Some(a) = &self.auth {
                req = req.set("Authorization", a);
            }
            let resp = req.call().map_err(Box::new)?;
            let mut bytes = Vec::new();
            resp.into_reader()
                .take(MAX_ARTIFACT_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| Box::new(ureq::Error::from(e)))?;
            Ok(bytes)
        })?;
        if sha256_hex(&bytes) != name {
            return Err(format!(
                "artifact {name} arrived damaged (its hash differs)"
            ));
        }
        self.keep(name, &bytes);
        Ok(Arc::new(bytes))
    }

    fn put(&self, bytes: &[u8]) -> Result<String, String> {
        let name = sha256_hex(bytes);
        self.retry(&format!("uploading artifact {name}"), || {
            let mut req = self
                .agent
                .put(&self.url(&name))
                .set("Content-Type", "application/octet-stream");
            if let Some(a) = &self.auth {
                req = req.set("Authorization", a);
            }
            req.send_bytes(bytes).map_err(Box::new)
        })?;
        self.keep(&name, bytes);
        Ok(name)
    }
}
