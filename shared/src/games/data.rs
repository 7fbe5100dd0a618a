//! Where data files (standard boards, benchmark instances) are read from at run time.
//!
//! The folder is `$GAMESOLVER_DATA` when set, otherwise the workspace's `../shared/data` as seen
//! at compile time. A missing file is a one-line error that names the path and the variable.

use std::path::PathBuf;

/// The data folder.
pub fn data_dir() -> PathBuf {
    std::env::var_os("GAMESOLVER_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"))
}

/// Reads `rel` under the data folder.
pub fn read(rel: &str) -> Result<String, String> {
    let path = data_dir().join(rel);
    std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "cannot read {} ({e}); set GAMESOLVER_DATA to the data folder",
            path.display()
        )
    })
}

/// Checks that `name` is a plain file name (no folders, no `..`), for names taken from jobs.
pub fn plain_name(name: &str) -> Result<&str, String> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(name)
    } else {
        Err(format!("'{name}' is not a valid data file name"))
    }
}
