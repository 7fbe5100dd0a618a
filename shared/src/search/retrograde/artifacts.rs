//! Artifacts: immutable byte blobs named by the SHA-256 of their content (64 lowercase hex
//! digits), the way a distributed retrograde build passes databases and round chunks between
//! the coordinator and its workers. A kernel sees them through [`Artifacts`], which its runner
//! installs in the task's `Control` (a worker: the coordinator over HTTP with a local cache);
//! every implementation checks the hash of what it returns, so a damaged or forged blob is an
//! error, never data.

use sha2::{Digest, Sha256};
use std::sync::Arc;

/// Where a task gets and puts artifacts.
pub trait Artifacts: Send + Sync {
    /// The bytes named `hash`, checked against it.
    fn get(&self, hash: &str) -> Result<Arc<Vec<u8>>, String>;
    /// Stores `bytes`; returns their name (the SHA-256 in hex).
    fn put(&self, bytes: &[u8]) -> Result<String, String>;
    /// The size in bytes of the artifact `hash` without reading it, when this store can tell
    /// cheaply (`None`: missing, or a store that cannot tell).
    fn size(&self, _hash: &str) -> Option<u64> {
        None
    }
}

/// How this process treats the database sets that jobs name by manifest (`tables=NAME@HASH`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceMode {
    /// Read every database (a worker: its searches use them).
    Read,
    /// Check the manifest, that every database is held with the right size and the smallest
    /// one's header, but keep no entries (the coordinator: it validates and plans jobs, it never
    /// searches, and must not hold a set's gigabytes for a job it only checks).
    Check,
}

/// Where this process gets the artifacts that jobs name (the coordinator's own folder in the
/// coordinator, the coordinator over HTTP with the local cache in a worker); none elsewhere.
static SOURCE: std::sync::RwLock<Option<(Arc<dyn Artifacts>, SourceMode)>> =
    std::sync::RwLock::new(None);

/// Installs the source of the artifacts that jobs name, for the rest of the process.
pub fn install_source(artifacts: Arc<dyn Artifacts>, mode: SourceMode) {
    *SOURCE.write().unwrap_or_else(|e| e.into_inner()) = Some((artifacts, mode));
}

/// The source installed by [`install_source`], if any.
pub fn source() -> Option<(Arc<dyn Artifacts>, SourceMode)> {
    SOURCE.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Largest manifest of a database set: a few hundred bytes for any real set; anything bigger
/// is refused before it is read.
pub const MAX_MANIFEST_BYTES: u64 = 64 << 10;

/// A database set built through the service, pinned: what the coordinator stores as an
/// artifact when a job names the set by its name (`tables=NAME` becomes `tables=NAME@HASH`,
/// HASH this manifest's name), so that every task of the job reads the same build even if the
/// set is built again meanwhile.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetManifest {
    /// The set's name (the build's option `name`).
    pub name: String,
    /// The build job.
    pub job: u64,
    /// The artifact of each database, by stone count from 0.
    pub databases: Vec<String>,
}

impl SetManifest {
    /// The manifest `hash` from `store`, checked: its size, its form, its name (`name`) and
    /// that every database is named by an artifact name.
    pub fn fetch(store: &dyn Artifacts, name: &str, hash: &str) -> Result<SetManifest, String> {
        if !is_name(hash) {
            return Err(format!(
                "'{hash}' after '@' is not a set's manifest (64 lowercase hex digits)"
            ));
        }
        if store.size(hash).is_some_and(|n| n > MAX_MANIFEST_BYTES) {
            return Err(format!("{name}@{hash} is not a database set"));
        }
        let bytes = store
            .get(hash)
            .map_err(|_| format!("no database set {name}@{hash} at the coordinator"))?;
        if bytes.len() as u64 > MAX_MANIFEST_BYTES {
            return Err(format!("{name}@{hash} is not a database set"));
        }
        let m: SetManifest = serde_json::from_slice(&bytes)
            .map_err(|_| format!("{name}@{hash} is not a database set"))?;
        if m.name != name {
            return Err(format!(
                "the set {hash} is named '{}', not '{name}'",
                crate::model::excerpt(&m.name)
            ));
        }
        if m.databases.is_empty() || !m.databases.iter().all(|d| is_name(d)) {
            return Err(format!("{name}@{hash} is not a database set"));
        }
        Ok(m)
    }

    /// The manifest's bytes as stored (compact JSON: the same set gives the same artifact).
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a manifest serialises")
    }
}

/// The SHA-256 of `bytes` in lowercase hex: an artifact's name.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Bytes in lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `name` can name an artifact (64 lowercase hex digits): the check that keeps
/// anything else, a path above all, out of the artifact folders.
pub fn is_name(name: &str) -> bool {
    name.len() == 64
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Checks that `bytes` are the artifact `hash`.
pub fn check(hash: &str, bytes: &[u8]) -> Result<(), String> {
    let got = sha256_hex(bytes);
    if got == hash {
        Ok(())
    } else {
        Err(format!(
            "artifact {hash} does not match its content (sha256 {got})"
        ))
    }
}

/// Artifacts in memory (tests, and runners that keep everything in one process).
#[derive(Default)]
pub struct MemoryArtifacts {
    blobs: parking_lot::Mutex<std::collections::HashMap<String, Arc<Vec<u8>>>>,
}

impl Artifacts for MemoryArtifacts {
    fn get(&self, hash: &str) -> Result<Arc<Vec<u8>>, String> {
        self.blobs
            .lock()
            .get(hash)
            .cloned()
            .ok_or_else(|| format!("no artifact {hash}"))
    }
    fn put(&self, bytes: &[u8]) -> Result<String, String> {
        let hash = sha256_hex(bytes);
        self.blobs
            .lock()
            .entry(hash.clone())
            .or_insert_with(|| Arc::new(bytes.to_vec()));
        Ok(hash)
    }
}
