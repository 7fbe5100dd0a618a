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
