//! Database files: one file per database, written to and read from a folder, with a checksum
//! that a reader checks before it trusts an entry.
//!
//! Layout (integers little-endian):
//!
//! ```text
//!  offset  size  field
//!       0     8  magic "GSRETRO1"
//!       8     2  length L of the game name
//!      10     L  game name (UTF-8, `awari`)
//!   10+L      4  database number (Awari: stones on the board)
//!   14+L      8  entries N
//!   22+L     32  SHA-256 of the N entry bytes
//!   54+L      N  the entries, one i8 each, in index order
//! ```
//!
//! A file is named `GAME-DB.rdb` (`awari-07.rdb`); the set of a name is the files `0..` of its
//! folder up to the first one missing. Reading checks the magic, the game, the database number,
//! the entry count the game expects, the file length and the checksum, and names what is wrong.

use super::artifacts::{Artifacts, SetManifest, SourceMode};
use super::Tables;
use crate::model::Retrograde;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"GSRETRO1";

/// What can go wrong reading or writing a database file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file system failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not the database it should be, or is damaged.
    #[error("{path}: {what}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
}

/// The file of database `db` of `game` in `dir`.
pub fn file_name(dir: &Path, game: &str, db: usize) -> PathBuf {
    dir.join(format!("{game}-{db:02}.rdb"))
}

/// Bytes before the entries in a database file of `game` (the layout above): entry `i` is at
/// `header_len(game) + i`, and a file of `n` entries has `header_len(game) + n` bytes.
pub fn header_len(game: &str) -> u64 {
    54 + game.len() as u64
}

/// SHA-256 of a database's entries.
pub fn checksum(entries: &[i8]) -> [u8; 32] {
    let mut h = Sha256::new();
    for chunk in entries.chunks(1 << 16) {
        h.update(as_bytes(chunk));
    }
    h.finalize().into()
}

/// The entries as the bytes of the file (two's complement).
fn as_bytes(entries: &[i8]) -> Vec<u8> {
    entries.iter().map(|&e| e as u8).collect()
}

/// Writes database `db` of `game` to `dir` (created if missing); returns its checksum. The file
/// is written under a temporary name and renamed, so a reader never sees half a file.
pub fn write_database(
    dir: &Path,
    game: &str,
    db: usize,
    entries: &[i8],
) -> Result<[u8; 32], StoreError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let (out, sum) = encode(game, db, entries);
    let path = file_name(dir, game, db);
    let tmp = path.with_extension("rdb.tmp");
    std::fs::write(&tmp, &out).map_err(io(&tmp))?;
    std::fs::rename(&tmp, &path).map_err(io(&path))?;
    Ok(sum)
}

/// Reads database `db` of `game` from `dir`, checking it against `expected_len` entries.
pub fn read_database(
    dir: &Path,
    game: &str,
    db: usize,
    expected_len: u64,
) -> Result<Vec<i8>, StoreError> {
    let path = file_name(dir, game, db);
    let bytes = std::fs::read(&path).map_err(|source| StoreError::Io {
        path: path.clone(),
        source,
    })?;
    decode(&bytes, game, db, expected_len).map_err(|what| StoreError::Invalid { path, what })
}

/// The bytes of the file of database `db` of `game` (the layout above) and the entries'
/// checksum.
pub fn encode(game: &str, db: usize, entries: &[i8]) -> (Vec<u8>, [u8; 32]) {
    let sum = checksum(entries);
    let mut out = Vec::with_capacity(header_len(game) as usize + entries.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(game.len() as u16).to_le_bytes());
    out.extend_from_slice(game.as_bytes());
    out.extend_from_slice(&(db as u32).to_le_bytes());
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    out.extend_from_slice(&sum);
    out.extend_from_slice(&as_bytes(entries));
    (out, sum)
}

/// Reads the bytes of a database file (however they came: a file, an artifact), checking the
/// magic, the game, the database number, `expected_len` entries, the length and the checksum;
/// the error says what is wrong.
pub fn decode(bytes: &[u8], game: &str, db: usize, expected_len: u64) -> Result<Vec<i8>, String> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<&[u8], String> {
        let s = bytes
            .get(at..at.checked_add(n).ok_or("the file is cut short")?)
            .ok_or_else(|| "the file is cut short".to_string())?;
        at += n;
        Ok(s)
    };
    if take(8)? != MAGIC {
        return Err("not a database file (bad magic)".into());
    }
    let name_len = u16::from_le_bytes(take(2)?.try_into().expect("2 bytes")) as usize;
    let name = take(name_len)?;
    if name != game.as_bytes() {
        return Err(format!(
            "a database of {}, not {game}",
            String::from_utf8_lossy(name)
        ));
    }
    let number = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
    if number != db {
        return Err(format!("database {number}, not {db}"));
    }
    let len = u64::from_le_bytes(take(8)?.try_into().expect("8 bytes"));
    if len != expected_len {
        return Err(format!("{len} entries, the game has {expected_len}"));
    }
    let sum: [u8; 32] = take(32)?.try_into().expect("32 bytes");
    let body = take(usize::try_from(len).map_err(|_| "too many entries".to_string())?)?;
    let entries: Vec<i8> = body.iter().map(|&b| b as i8).collect();
    if at != bytes.len() {
        return Err("trailing bytes after the entries".into());
    }
    if checksum(&entries) != sum {
        return Err("checksum mismatch: the file is damaged".into());
    }
    Ok(entries)
}

/// Writes every database of `tables` to `dir`; returns their checksums in order.
pub fn write_tables(dir: &Path, game: &str, tables: &Tables) -> Result<Vec<[u8; 32]>, StoreError> {
    (0..tables.len())
        .map(|db| write_database(dir, game, db, tables.db(db)))
        .collect()
}

/// The databases of the pinned set `set` (a build held by the coordinator) from `artifacts`, at
/// most `0..=top`: each read and checked ([`SourceMode::Read`]), or ([`SourceMode::Check`])
/// each checked to be held with the size its file must have and database 0 read, which checks
/// the game's tag; then the tables returned are empty.
pub fn load_pinned<G: Retrograde>(
    game: &G,
    tag: &str,
    set: &SetManifest,
    artifacts: &dyn Artifacts,
    mode: SourceMode,
    top: usize,
) -> Result<Tables, String> {
    if set.databases.len() > top + 1 {
        return Err(format!(
            "the set has {} databases, the board at most {}",
            set.databases.len(),
            top + 1
        ));
    }
    let mut tables = Tables::new();
    for (db, hash) in set.databases.iter().enumerate() {
        let len = game.db_len(db);
        if mode == SourceMode::Check && db > 0 {
            let want = header_len(tag) + len;
            match artifacts.size(hash) {
                Some(n) if n == want => continue,
                Some(_) => return Err(format!("database {db} is not one of this board")),
                None => return Err(format!("database {db} ({hash}) is missing")),
            }
        }
        let bytes = artifacts
            .get(hash)
            .map_err(|e| format!("database {db}: {e}"))?;
        let entries = decode(&bytes, tag, db, len).map_err(|e| format!("database {db}: {e}"))?;
        if mode == SourceMode::Read {
            tables.push(entries);
        }
    }
    Ok(tables)
}

/// Checks the databases `0..` of `game` in `dir` up to the first missing file (at most
/// `0..=top`) without holding them: database 0 read and checked whole (the game's tag), every
/// other file the size its entries make. Returns how many there are. What a process that
/// never searches (the coordinator) does to check a job naming the set.
pub fn check_tables<G: Retrograde>(
    game: &G,
    name: &str,
    dir: &Path,
    top: usize,
) -> Result<usize, StoreError> {
    for db in 0..=top {
        let path = file_name(dir, name, db);
        let Ok(meta) = std::fs::metadata(&path) else {
            return Ok(db);
        };
        if db == 0 {
            read_database(dir, name, db, game.db_len(db))?;
        } else if meta.len() != header_len(name) + game.db_len(db) {
            return Err(StoreError::Invalid {
                path,
                what: format!("not a database of {name} with {db} stones (its size)"),
            });
        }
    }
    Ok(top + 1)
}

/// Reads the databases `0..` of `game` from `dir` up to the first missing file (at most
/// `0..=top`), each checked.
pub fn load_tables<G: Retrograde>(
    game: &G,
    name: &str,
    dir: &Path,
    top: usize,
) -> Result<Tables, StoreError> {
    let mut tables = Tables::new();
    for db in 0..=top {
        if !file_name(dir, name, db).exists() {
            break;
        }
        tables.push(read_database(dir, name, db, game.db_len(db))?);
    }
    Ok(tables)
}
