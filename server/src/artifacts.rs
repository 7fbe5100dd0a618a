//! File artifacts beside the store: immutable blobs named by the SHA-256 of their content
//! (retrograde databases and the chunks of their rounds), never rows in SQLite.
//!
//! Layout: the folder `<store file>.artifacts/` holds one file per artifact, named by its hash
//! (64 lowercase hex digits; no other name is ever turned into a path). A blob is written to
//! `tmp-<random>` while its hash is computed and renamed to its name only when the hash is the
//! one the uploader claimed, so a reader never sees half a file, and a crash leaves at most a
//! temporary file (removed at the next start). Every read checks the hash again: a damaged file
//! is an error (500), never data. Sizes are bounded: one artifact at most
//! [`MAX_ARTIFACT_BYTES`], all of them at most the configured total (`serve
//! --max-artifacts-mb`); an upload past either is refused with 413 before it is kept.

use gamesolver_shared::search::retrograde::artifacts::{is_name, sha256_hex};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Largest artifact: the file of the 24-stone Awari database (417 million entries) and its
/// header fit.
pub const MAX_ARTIFACT_BYTES: u64 = 512 << 20;
/// Bytes of an artifact read from its file at a time when it is streamed to a client.
pub const STREAM_CHUNK: usize = 256 << 10;
/// Default of the total bound (`serve --max-artifacts-mb`), in MiB.
pub const DEFAULT_MAX_ARTIFACTS_MB: u64 = 64 << 10;

/// Why an artifact could not be stored or read.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// Not a SHA-256 in hex.
    #[error("'{0}' is not an artifact name (64 lowercase hex digits)")]
    BadName(String),
    /// The content does not hash to the name.
    #[error("the upload does not match its name {name} (its sha256 is {got})")]
    Mismatch { name: String, got: String },
    /// Over a size bound.
    #[error("{0}")]
    TooLarge(String),
    /// No such artifact.
    #[error("no artifact {0}")]
    Missing(String),
    /// The file system failed, or a stored file is damaged.
    #[error("{0}")]
    Io(String),
}

/// The artifact folder of a coordinator.
#[derive(Debug)]
pub struct ArtifactStore {
    dir: PathBuf,
    max_total: u64,
    used: AtomicU64,
    /// Artifacts whose whole file was checked against its hash in this process: single reads
    /// ([`ArtifactStore::read_at`]) trust them. The lock is held while a file is checked, so
    /// concurrent readers check it once and hold one copy.
    checked: parking_lot::Mutex<std::collections::HashSet<String>>,
}

impl ArtifactStore {
    /// Opens (creating) the artifact folder beside the store file `db`, removing temporary
    /// files a crash left, and counts the bytes held.
    pub fn open(db: &Path, max_total_mb: u64) -> anyhow::Result<ArtifactStore> {
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push(".artifacts");
        let dir = db.with_file_name(name);
        std::fs::create_dir_all(&dir)?;
        let mut used = 0;
        for e in std::fs::read_dir(&dir)? {
            let e = e?;
            let n = e.file_name().to_string_lossy().to_string();
            if n.starts_with("tmp-") {
                let _ = std::fs::remove_file(e.path());
            } else if is_name(&n) {
                used += e.metadata()?.len();
            }
        }
        Ok(ArtifactStore {
            dir,
            max_total: max_total_mb.saturating_mul(1 << 20),
            used: AtomicU64::new(used),
            checked: Default::default(),
        })
    }

    fn path(&self, name: &str) -> Result<PathBuf, ArtifactError> {
        if !is_name(name) {
            return Err(ArtifactError::BadName(
                gamesolver_shared::model::excerpt(name).to_string(),
            ));
        }
        Ok(self.dir.join(name))
    }

    /// Bytes of all artifacts held (a running total, no directory is read).
    pub fn used_bytes(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// The names of the artifacts of at most `max` bytes (reads the folder: for rare work,
    /// such as finding the set manifests of a build that retention deletes).
    pub fn names_up_to(&self, max: u64) -> Vec<String> {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        dir.filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_str()?.to_string();
            (is_name(&name) && e.metadata().ok()?.len() <= max).then_some(name)
        })
        .collect()
    }

    /// Whether the artifact `name` is stored.
    pub fn has(&self, name: &str) -> bool {
        self.path(name).is_ok_and(|p| p.is_file())
    }

    /// Stores the body as the artifact `name`, streaming it to a temporary file while hashing;
    /// keeps it only when it hashes to `name`. Returns whether it was new (an artifact that is
    /// already there is not written again).
    pub async fn put(
        &self,
        name: &str,
        body: axum::body::Body,
        declared: Option<u64>,
    ) -> Result<bool, ArtifactError> {
        use futures_util::StreamExt;
        let path = self.path(name)?;
        let too_large = |n: u64| {
            ArtifactError::TooLarge(format!(
                "an artifact of {n} bytes is over the limit of {MAX_ARTIFACT_BYTES} bytes"
            ))
        };
        if path.is_file() {
            // Already kept (the last round of a database repeats the chunks of the one before):
            // read the body to its end all the same, so the uploader still sending gets this
            // answer rather than a broken pipe.
            let mut stream = body.into_data_stream();
            let mut size = 0u64;
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|e| ArtifactError::Io(format!("upload: {e}")))?;
                size += chunk.len() as u64;
                if size > MAX_ARTIFACT_BYTES {
                    return Err(too_large(size));
                }
            }
            return Ok(false);
        }
        if let Some(n) = declared {
            if n > MAX_ARTIFACT_BYTES {
                return Err(too_large(n));
            }
            self.reserve_check(n)?;
        }
        let io = |e: std::io::Error| ArtifactError::Io(format!("artifact store: {e}"));
        let tmp = self.dir.join(format!("tmp-{:016x}", rand::random::<u64>()));
        // Plain file writes: they land in the page cache, a chunk at a time.
        let mut file = std::fs::File::create(&tmp).map_err(io)?;
        let mut hasher = Sha256::new();
        let mut size = 0u64;
        let mut stream = body.into_data_stream();
        let result = async {
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|e| ArtifactError::Io(format!("upload: {e}")))?;
                size += chunk.len() as u64;
                if size > MAX_ARTIFACT_BYTES {
                    return Err(too_large(size));
                }
                hasher.update(&chunk);
                file.write_all(&chunk).map_err(io)?;
            }
            file.flush().map_err(io)?;
            file.sync_all().map_err(io)?;
            let got = gamesolver_shared::search::retrograde::artifacts::hex(&hasher.finalize());
            if got != name {
                return Err(ArtifactError::Mismatch {
                    name: name.to_string(),
                    got,
                });
            }
            self.reserve_check(size)?;
            std::fs::rename(&tmp, &path).map_err(io)?;
            self.used.fetch_add(size, Ordering::Relaxed);
            Ok(true)
        }
        .await;
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    fn reserve_check(&self, n: u64) -> Result<(), ArtifactError> {
        let used = self.used.load(Ordering::Relaxed);
        if used.saturating_add(n) > self.max_total {
            return Err(ArtifactError::TooLarge(format!(
                "the artifact store holds {used} bytes; {n} more would pass its limit of {} bytes (max-artifacts-mb)",
                self.max_total
            )));
        }
        Ok(())
    }

    /// Deletes artifact `name` (blocking); one that is not there is no error.
    pub fn remove(&self, name: &str) -> Result<(), ArtifactError> {
        let path = self.path(name)?;
        let size = match std::fs::metadata(&path) {
            Ok(m) => m.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(ArtifactError::Io(format!("artifact store: {e}"))),
        };
        match std::fs::remove_file(&path) {
            Ok(()) => {
                let _ = self
                    .used
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                        Some(u.saturating_sub(size))
                    });
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(ArtifactError::Io(format!("artifact store: {e}"))),
        }
    }

    /// Stores `bytes` (a small artifact the coordinator makes itself: a set's manifest) and
    /// returns its name; blocking.
    pub fn put_bytes(&self, bytes: &[u8]) -> Result<String, ArtifactError> {
        let name = sha256_hex(bytes);
        let path = self.path(&name)?;
        if path.is_file() {
            return Ok(name);
        }
        let n = bytes.len() as u64;
        if n > MAX_ARTIFACT_BYTES {
            return Err(ArtifactError::TooLarge(format!(
                "an artifact of {n} bytes is over the limit of {MAX_ARTIFACT_BYTES} bytes"
            )));
        }
        self.reserve_check(n)?;
        let io = |e: std::io::Error| ArtifactError::Io(format!("artifact store: {e}"));
        let tmp = self.dir.join(format!("tmp-{:016x}", rand::random::<u64>()));
        let written = (|| {
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(bytes)?;
            file.sync_all()?;
            std::fs::rename(&tmp, &path)
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(e));
        }
        self.used.fetch_add(n, Ordering::Relaxed);
        Ok(name)
    }

    /// `len` bytes of artifact `name` from `offset` (blocking): the first read of an artifact in
    /// this process checks its whole file against its hash (streamed), later ones read only
    /// those bytes.
    pub fn read_at(&self, name: &str, offset: u64, len: usize) -> Result<Vec<u8>, ArtifactError> {
        use std::io::{Read, Seek, SeekFrom};
        let path = self.path(name)?;
        let io = |e: std::io::Error| ArtifactError::Io(format!("artifact store: {e}"));
        let open = || match std::fs::File::open(&path) {
            Ok(f) => Ok(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(ArtifactError::Missing(name.to_string()))
            }
            Err(e) => Err(io(e)),
        };
        {
            let mut checked = self.checked.lock();
            if !checked.contains(name) {
                // Streamed: a database of hundreds of MB is never held to be checked.
                let mut file = open()?;
                let mut hasher = Sha256::new();
                let mut buf = vec![0u8; 1 << 20];
                loop {
                    let n = file.read(&mut buf).map_err(io)?;
                    if n == 0 {
                        break;
                    }
                    hasher.update(&buf[..n]);
                }
                let got = gamesolver_shared::search::retrograde::artifacts::hex(&hasher.finalize());
                if got != name {
                    return Err(ArtifactError::Io(format!(
                        "artifact {name} is damaged on disk (its sha256 is {got})"
                    )));
                }
                checked.insert(name.to_string());
            }
        }
        let mut file = open()?;
        file.seek(SeekFrom::Start(offset)).map_err(io)?;
        let mut out = vec![0; len];
        file.read_exact(&mut out).map_err(io)?;
        Ok(out)
    }

    /// The size of artifact `name` in bytes, if it is stored.
    pub fn size(&self, name: &str) -> Option<u64> {
        let m = std::fs::metadata(self.path(name).ok()?).ok()?;
        m.is_file().then_some(m.len())
    }

    /// Artifact `name` as an answer body streamed from its file, a chunk of [`STREAM_CHUNK`]
    /// bytes at a time (never the whole file in memory), with its size. The first read in this
    /// process hashes the file as it goes and ends the body with an error when the file does not
    /// match its name, so a damaged file never arrives as a whole answer (the size is declared:
    /// a cut body is seen as cut); later reads trust it, as [`ArtifactStore::read_at`] does.
    /// Opens the file at once (blocking: call from a blocking context), so that a missing one
    /// is an error here, not in the body.
    pub fn stream(self: &Arc<Self>, name: &str) -> Result<(u64, axum::body::Body), ArtifactError> {
        let path = self.path(name)?;
        let io = |e: std::io::Error| ArtifactError::Io(format!("artifact store: {e}"));
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ArtifactError::Missing(name.to_string()))
            }
            Err(e) => return Err(io(e)),
        };
        let size = file.metadata().map_err(io)?.len();
        let trusted = self.checked.lock().contains(name);
        let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Vec<u8>>>(4);
        let (store, name) = (self.clone(), name.to_string());
        tokio::task::spawn_blocking(move || store.pump(file, &name, trusted, &tx));
        let chunks = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|chunk| (chunk, rx))
        });
        Ok((size, axum::body::Body::from_stream(chunks)))
    }

    /// Sends `file` in chunks to `tx` (blocking), hashing it unless `trusted`; an error (or a
    /// file that does not hash to `name`) ends the stream with an error.
    fn pump(
        &self,
        mut file: std::fs::File,
        name: &str,
        trusted: bool,
        tx: &tokio::sync::mpsc::Sender<std::io::Result<Vec<u8>>>,
    ) {
        use std::io::Read;
        let mut hasher = (!trusted).then(Sha256::new);
        loop {
            let mut chunk = vec![0u8; STREAM_CHUNK];
            let n = match file.read(&mut chunk) {
                Ok(n) => n,
                Err(e) => {
                    let _ = tx.blocking_send(Err(e));
                    return;
                }
            };
            if n == 0 {
                break;
            }
            chunk.truncate(n);
            if let Some(h) = hasher.as_mut() {
                h.update(&chunk);
            }
            if tx.blocking_send(Ok(chunk)).is_err() {
                return; // The client went away.
            }
        }
        if let Some(h) = hasher {
            let got = gamesolver_shared::search::retrograde::artifacts::hex(&h.finalize());
            if got != name {
                tracing::error!(
                    "artifacts: artifact {name} is damaged on disk (its sha256 is {got})"
                );
                let _ = tx.blocking_send(Err(std::io::Error::other("artifact damaged on disk")));
                return;
            }
            self.checked.lock().insert(name.to_string());
        }
    }

    /// The bytes of artifact `name`, checked against it (blocking: call from a blocking
    /// context).
    pub fn get(&self, name: &str) -> Result<Vec<u8>, ArtifactError> {
        let path = self.path(name)?;
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ArtifactError::Missing(name.to_string()))
            }
            Err(e) => return Err(ArtifactError::Io(format!("artifact store: {e}"))),
        };
        let got = sha256_hex(&bytes);
        if got != name {
            return Err(ArtifactError::Io(format!(
                "artifact {name} is damaged on disk (its sha256 is {got})"
            )));
        }
        Ok(bytes)
    }
}

/// The coordinator's folder as the source of the artifacts jobs name (a pinned database set is
/// checked against it when a job is submitted or reloaded).
impl gamesolver_shared::search::retrograde::artifacts::Artifacts for ArtifactStore {
    fn get(&self, hash: &str) -> Result<std::sync::Arc<Vec<u8>>, String> {
        ArtifactStore::get(self, hash)
            .map(std::sync::Arc::new)
            .map_err(|e| e.to_string())
    }
    fn put(&self, bytes: &[u8]) -> Result<String, String> {
        self.put_bytes(bytes).map_err(|e| e.to_string())
    }
    fn size(&self, hash: &str) -> Option<u64> {
        ArtifactStore::size(self, hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    /// A body of `parts` chunks of 64 KiB that counts the chunks read from it.
    fn body(parts: usize, read: Arc<AtomicUsize>) -> (axum::body::Body, String) {
        let chunk: Vec<u8> = (0..1 << 16).map(|i| (i % 251) as u8).collect();
        let all: Vec<u8> = chunk.repeat(parts);
        let stream = futures_util::stream::iter((0..parts).map(move |_| {
            read.fetch_add(1, Ordering::Relaxed);
            Ok::<_, std::io::Error>(chunk.clone())
        }));
        (axum::body::Body::from_stream(stream), sha256_hex(&all))
    }

    /// An upload of an artifact already kept is read to its end (an uploader still sending
    /// must get the answer, not a broken pipe) and keeps the file as it was.
    #[test]
    fn a_second_upload_of_the_same_artifact_is_read_through() {
        let dir = std::env::temp_dir().join(format!("gs-artifacts-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let store = ArtifactStore::open(&dir.join("db.sqlite"), 64).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let read = Arc::new(AtomicUsize::new(0));
        let (b, name) = body(32, read.clone());
        assert!(rt.block_on(store.put(&name, b, None)).unwrap());
        assert_eq!(read.load(Ordering::Relaxed), 32);
        let (b, again) = body(32, read.clone());
        assert_eq!(again, name);
        assert!(!rt.block_on(store.put(&name, b, None)).unwrap());
        assert_eq!(
            read.load(Ordering::Relaxed),
            64,
            "the second body was not read through"
        );
        assert_eq!(store.get(&name).unwrap().len(), 32 << 16);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An artifact streams from its file in chunks with its size; a file damaged on disk ends
    /// the first stream of a process with an error (never a whole answer).
    #[test]
    fn artifacts_stream_from_disk_and_damage_cuts_the_stream() {
        let dir = std::env::temp_dir().join(format!("gs-artifacts-stream-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("db.sqlite");
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let store = Arc::new(ArtifactStore::open(&db, 64).unwrap());
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let name = store.put_bytes(&bytes).unwrap();
        let read = |store: &Arc<ArtifactStore>| {
            let (size, body) = rt.block_on(async { store.stream(&name) }).unwrap();
            (size, rt.block_on(axum::body::to_bytes(body, usize::MAX)))
        };
        for _ in 0..2 {
            let (size, got) = read(&store);
            assert_eq!(size, bytes.len() as u64);
            assert_eq!(got.unwrap(), bytes, "streamed whole, checked then trusted");
        }
        assert!(matches!(
            rt.block_on(async { store.stream(&"0".repeat(64)) }),
            Err(ArtifactError::Missing(_))
        ));
        let mut damaged = bytes.clone();
        damaged[2_000_000] ^= 1;
        std::fs::write(store.path(&name).unwrap(), &damaged).unwrap();
        let fresh = Arc::new(ArtifactStore::open(&db, 64).unwrap());
        let (_, got) = read(&fresh);
        assert!(got.is_err(), "a damaged file is not a whole answer");
        drop(rt);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Small artifacts the coordinator writes itself read back whole and in part; a file damaged
    /// on disk is refused by the first partial read of a process (the whole file is checked),
    /// and by every whole read.
    #[test]
    fn put_bytes_and_read_at_check_the_hash() {
        let dir = std::env::temp_dir().join(format!("gs-artifacts-at-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("db.sqlite");
        let store = ArtifactStore::open(&db, 64).unwrap();
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i % 253) as u8).collect();
        let name = store.put_bytes(&bytes).unwrap();
        assert_eq!(name, sha256_hex(&bytes));
        assert_eq!(store.put_bytes(&bytes).unwrap(), name, "kept once");
        assert_eq!(store.size(&name), Some(bytes.len() as u64));
        assert_eq!(
            store.read_at(&name, 2_999_990, 10).unwrap(),
            &bytes[2_999_990..]
        );
        assert!(store.read_at(&name, 2_999_995, 10).is_err(), "past the end");
        assert!(matches!(
            store.read_at(&"0".repeat(64), 0, 1),
            Err(ArtifactError::Missing(_))
        ));
        assert!(matches!(
            store.read_at("../x", 0, 1),
            Err(ArtifactError::BadName(_))
        ));
        // Damaged on disk: a fresh process (store) refuses it.
        let path = store.path(&name).unwrap();
        let mut damaged = bytes.clone();
        damaged[1_000_000] ^= 1;
        std::fs::write(&path, &damaged).unwrap();
        let fresh = ArtifactStore::open(&db, 64).unwrap();
        let err = fresh.read_at(&name, 0, 1).unwrap_err();
        assert!(err.to_string().contains("damaged"), "{err}");
        assert!(fresh.get(&name).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
