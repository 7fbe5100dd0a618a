//! A cache of task results for the simulator ([`super::simulate`]): a cached task is not run
//! again, its recorded output, nodes and CPU time are replayed, so a curve N = 1, 2, 4, ..., 256
//! costs about the work of its largest N, and a second run of the same job next to nothing.
//!
//! Key: the first 16 bytes of a SHA-256 of [`KEY_VERSION`], the job as the simulator sees it
//! (spec, kernel threads, shared tables, a caller's context such as the workers' memory) and the
//! task (for a `jlpns` leaf: threshold, path and budget divisor).
//!
//! The approximation: a kernel that keeps its table between tasks answers with a cost (and, when
//! unsolved, children's numbers) that depend on what its worker ran before; the key leaves that
//! state out, so a task replays its first run. The answers stay sound, so the value found never
//! changes; costs and later planner decisions may (docs/scaling.md, "Leaf cache", with the
//! error against uncached runs).
//!
//! On disk ([`LeafCache::open`]): [`MAGIC`], then records `len: u32 LE | checksum: 8 bytes of
//! SHA-256(payload) | payload`, the payload `key: 16 bytes | generation: u64 LE | nodes: u64 LE |
//! cpu_s: f64 LE bits | output JSON`. Another format version is ignored (replaced on save); a bad
//! record ends the reading (a file cut by a crash keeps what came before). Saving merges what the
//! file holds now, keeps the most recently used entries up to the size bound, and renames a
//! temporary file over the old one, so a reader never sees half a file.

use crate::wire::{TaskKind, TaskOutput};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the key hashes first: bump when a kernel's answers or costs change for the same task,
/// so old entries stop matching.
pub const KEY_VERSION: &str = "gamesolver leaf cache key v1";
/// The file's first bytes: name and format version.
pub const MAGIC: &[u8; 16] = b"GSLEAFCACHE\0v001";
/// Default bound on the file, bytes.
pub const DEFAULT_MAX_BYTES: u64 = 256 << 20;
/// Largest record read back (a length beyond it is corruption).
const MAX_RECORD: usize = 64 << 20;

/// A cache key.
pub type Key = [u8; 16];

/// One cached task result.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The task's output as the planner got it.
    pub output: TaskOutput,
    /// Nodes of the task, as measured.
    pub nodes: u64,
    /// CPU seconds of the task, as measured.
    pub cpu_s: f64,
}

struct Slot {
    entry: Entry,
    /// The load generation it was last used in (saving keeps the most recent).
    generation: u64,
}

/// Counts of one cache's use.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct CacheStats {
    /// Tasks answered from the cache.
    pub hits: u64,
    /// Tasks run for real (and recorded).
    pub misses: u64,
    /// CPU seconds of the tasks run for real.
    pub run_cpu_s: f64,
    /// CPU seconds the replayed tasks had taken when they ran.
    pub replayed_cpu_s: f64,
    /// Entries read from the file when it was opened.
    pub loaded: u64,
}

/// A task-result cache, in memory and optionally in one file (see the module doc).
pub struct LeafCache {
    path: Option<PathBuf>,
    max_bytes: u64,
    context: String,
    generation: u64,
    map: Mutex<HashMap<Key, Slot>>,
    stats: Mutex<CacheStats>,
    /// Something was added or used since the last save.
    dirty: Mutex<bool>,
    /// When it was last saved (or opened).
    saved_at: Mutex<std::time::Instant>,
}

/// How often a long run saves what it has so far ([`LeafCache::save_if_due`]): a run killed
/// part-way keeps its work.
pub const SAVE_EVERY: std::time::Duration = std::time::Duration::from_secs(120);

impl std::fmt::Debug for LeafCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeafCache")
            .field("path", &self.path)
            .field("entries", &self.len())
            .finish()
    }
}

impl LeafCache {
    /// A cache in memory only; `context` is added to every key (what the simulator cannot see
    /// that changes answers: the workers' memory, for instance).
    pub fn in_memory(context: &str) -> Self {
        LeafCache {
            path: None,
            max_bytes: DEFAULT_MAX_BYTES,
            context: context.to_string(),
            generation: 1,
            map: Mutex::new(HashMap::new()),
            stats: Mutex::new(CacheStats::default()),
            dirty: Mutex::new(false),
            saved_at: Mutex::new(std::time::Instant::now()),
        }
    }

    /// A cache backed by `path` (created on the first save), holding at most `max_bytes` there.
    /// A missing file is an empty cache; an unreadable, corrupt or other-version one gives what
    /// could be read before the damage, and a note saying so (the caller prints it).
    pub fn open(
        path: &Path,
        max_bytes: u64,
        context: &str,
    ) -> Result<(Self, Option<String>), String> {
        let (records, note) = read_file(path)?;
        let generation = records.iter().map(|r| r.1).max().unwrap_or(0) + 1;
        let loaded = records.len() as u64;
        let map = records
            .into_iter()
            .map(|(k, g, e)| {
                (
                    k,
                    Slot {
                        entry: e,
                        generation: g,
                    },
                )
            })
            .collect();
        let cache = LeafCache {
            path: Some(path.to_path_buf()),
            max_bytes,
            context: context.to_string(),
            generation,
            map: Mutex::new(map),
            stats: Mutex::new(CacheStats {
                loaded,
                ..CacheStats::default()
            }),
            dirty: Mutex::new(false),
            saved_at: Mutex::new(std::time::Instant::now()),
        };
        Ok((cache, note))
    }

    /// The key of `task` of the job described by `job` (the simulator's view of the job, see
    /// the module doc).
    pub fn key(&self, job: &str, task: &TaskKind) -> Key {
        let mut h = Sha256::new();
        for part in [
            KEY_VERSION.as_bytes(),
            self.context.as_bytes(),
            job.as_bytes(),
            serde_json::to_string(task)
                .expect("a task serialises")
                .as_bytes(),
        ] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        let d = h.finalize();
        let mut k = [0u8; 16];
        k.copy_from_slice(&d[..16]);
        k
    }

    /// The cached result of `key`, counted as a hit.
    pub fn get(&self, key: &Key) -> Option<Entry> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let slot = map.get_mut(key)?;
        slot.generation = self.generation;
        let e = slot.entry.clone();
        drop(map);
        let mut s = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        s.hits += 1;
        s.replayed_cpu_s += e.cpu_s;
        *self.dirty.lock().unwrap_or_else(|e| e.into_inner()) = true;
        Some(e)
    }

    /// Records the result of a task run for real, counted as a miss.
    pub fn put(&self, key: Key, entry: Entry) {
        {
            let mut s = self.stats.lock().unwrap_or_else(|e| e.into_inner());
            s.misses += 1;
            s.run_cpu_s += entry.cpu_s;
        }
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.insert(
            key,
            Slot {
                entry,
                generation: self.generation,
            },
        );
        *self.dirty.lock().unwrap_or_else(|e| e.into_inner()) = true;
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The counts so far.
    pub fn stats(&self) -> CacheStats {
        *self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Saves when [`SAVE_EVERY`] has passed since the last save.
    pub fn save_if_due(&self) -> Result<(), String> {
        let due = self
            .saved_at
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
            >= SAVE_EVERY;
        if due {
            self.save()?;
        }
        Ok(())
    }

    /// Writes the cache to its file (nothing for an in-memory cache or when nothing changed):
    /// merged with what the file holds now, the most recently used entries first up to the
    /// size bound, through a temporary file renamed over the old one.
    pub fn save(&self) -> Result<(), String> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        *self.saved_at.lock().unwrap_or_else(|e| e.into_inner()) = std::time::Instant::now();
        {
            let mut dirty = self.dirty.lock().unwrap_or_else(|e| e.into_inner());
            if !*dirty {
                return Ok(());
            }
            *dirty = false;
        }
        // What another run saved meanwhile stays, unless this run has the key.
        let (on_disk, _) = read_file(path).unwrap_or_default();
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<(Key, u64, Vec<u8>)> = Vec::with_capacity(map.len() + on_disk.len());
        for (k, s) in map.iter() {
            all.push((*k, s.generation, payload(k, s.generation, &s.entry)));
        }
        for (k, g, e) in on_disk {
            if !map.contains_key(&k) {
                all.push((k, g, payload(&k, g, &e)));
            }
        }
        drop(map);
        // Most recent first; ties by key, so the file is a function of the entries.
        all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
            f.write_all(MAGIC)?;
            let mut size = MAGIC.len() as u64;
            for (_, _, p) in &all {
                let len = 12 + p.len() as u64;
                if size + len > self.max_bytes {
                    break;
                }
                f.write_all(&(p.len() as u32).to_le_bytes())?;
                f.write_all(&Sha256::digest(p)[..8])?;
                f.write_all(p)?;
                size += len;
            }
            let f = f.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("leaf cache {}: {e}", path.display())
        })
    }
}

/// One record's payload (see the module doc).
fn payload(key: &Key, generation: u64, e: &Entry) -> Vec<u8> {
    let json = serde_json::to_vec(&e.output).expect("an output serialises");
    let mut p = Vec::with_capacity(40 + json.len());
    p.extend_from_slice(key);
    p.extend_from_slice(&generation.to_le_bytes());
    p.extend_from_slice(&e.nodes.to_le_bytes());
    p.extend_from_slice(&e.cpu_s.to_bits().to_le_bytes());
    p.extend_from_slice(&json);
    p
}

fn unpayload(p: &[u8]) -> Option<(Key, u64, Entry)> {
    if p.len() < 40 {
        return None;
    }
    let word = |i: usize| u64::from_le_bytes(p[i..i + 8].try_into().expect("8 bytes"));
    let mut key = [0u8; 16];
    key.copy_from_slice(&p[..16]);
    let output: TaskOutput = serde_json::from_slice(&p[40..]).ok()?;
    let cpu_s = f64::from_bits(word(32));
    if !(cpu_s.is_finite() && cpu_s >= 0.0) {
        return None;
    }
    Some((
        key,
        word(16),
        Entry {
            output,
            nodes: word(24),
            cpu_s,
        },
    ))
}

type Records = Vec<(Key, u64, Entry)>;

/// The records of the file at `path` and a note when not all of it could be read; a missing
/// file is empty, an unreadable one an error.
fn read_file(path: &Path) -> Result<(Records, Option<String>), String> {
    let mut bytes = Vec::new();
    match std::fs::File::open(path) {
        Ok(mut f) => {
            f.read_to_end(&mut bytes)
                .map_err(|e| format!("leaf cache {}: {e}", path.display()))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), None)),
        Err(e) => return Err(format!("leaf cache {}: {e}", path.display())),
    }
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Ok((
            Vec::new(),
            Some(format!(
                "leaf cache {}: not a cache file of this version; starting empty (it is \
                 replaced on save)",
                path.display()
            )),
        ));
    }
    let mut out = Vec::new();
    let mut at = MAGIC.len();
    while at < bytes.len() {
        let bad = || {
            Some(format!(
                "leaf cache {}: damaged at byte {at}; kept the {} entries before it",
                path.display(),
                out.len()
            ))
        };
        if bytes.len() - at < 12 {
            return Ok((out.clone(), bad()));
        }
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
        let body = at + 12;
        if len > MAX_RECORD || bytes.len() - body < len {
            return Ok((out.clone(), bad()));
        }
        let p = &bytes[body..body + len];
        if Sha256::digest(p)[..8] != bytes[at + 4..at + 12] {
            return Ok((out.clone(), bad()));
        }
        match unpayload(p) {
            Some(r) => out.push(r),
            None => return Ok((out.clone(), bad())),
        }
        at = body + len;
    }
    Ok((out, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: u64) -> Entry {
        Entry {
            output: TaskOutput {
                nodes: n,
                ..TaskOutput::default()
            },
            nodes: n,
            cpu_s: n as f64 / 1000.0,
        }
    }

    fn leaf(i: u32) -> TaskKind {
        TaskKind::Leaf {
            target: 1,
            path: vec![i.to_string()],
            budget_div: None,
        }
    }

    fn temp(name: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!(
            "gs-leaf-cache-{}-{name}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_file(&p);
        p
    }

    /// Keys differ by job, task and context; the same inputs give the same key.
    #[test]
    fn keys_separate_jobs_tasks_and_contexts() {
        let a = LeafCache::in_memory("mem=8");
        let b = LeafCache::in_memory("mem=16");
        assert_eq!(a.key("j", &leaf(1)), a.key("j", &leaf(1)));
        assert_ne!(a.key("j", &leaf(1)), a.key("j", &leaf(2)));
        assert_ne!(a.key("j", &leaf(1)), a.key("k", &leaf(1)));
        assert_ne!(a.key("j", &leaf(1)), b.key("j", &leaf(1)));
    }

    /// Saved, reopened: every entry back; a cut or scribbled file keeps what precedes the
    /// damage; another format is ignored; the size bound keeps the most recent entries.
    #[test]
    fn the_file_survives_damage_and_stays_bounded() {
        let path = temp("file");
        let (c, note) = LeafCache::open(&path, DEFAULT_MAX_BYTES, "").unwrap();
        assert!(note.is_none() && c.is_empty());
        for i in 0..10 {
            c.put(c.key("j", &leaf(i)), entry(i as u64 + 1));
        }
        c.save().unwrap();
        let (d, note) = LeafCache::open(&path, DEFAULT_MAX_BYTES, "").unwrap();
        assert!(note.is_none());
        assert_eq!(d.len(), 10);
        assert_eq!(d.get(&d.key("j", &leaf(3))), Some(entry(4)));
        assert_eq!(d.stats().hits, 1);

        // Cut in the middle of the last record.
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
        let (e, note) = LeafCache::open(&path, DEFAULT_MAX_BYTES, "").unwrap();
        assert_eq!(e.len(), 9);
        assert!(note.unwrap().contains("damaged"));
        // A flipped byte inside the first record: its checksum fails, nothing after is read.
        let mut bad = bytes.clone();
        bad[MAGIC.len() + 20] ^= 0xff;
        std::fs::write(&path, &bad).unwrap();
        let (e, note) = LeafCache::open(&path, DEFAULT_MAX_BYTES, "").unwrap();
        assert!(e.is_empty() && note.is_some());
        // Another version, or not a cache at all.
        let mut other = bytes.clone();
        other[15] = b'9';
        std::fs::write(&path, &other).unwrap();
        let (e, note) = LeafCache::open(&path, DEFAULT_MAX_BYTES, "").unwrap();
        assert!(e.is_empty() && note.unwrap().contains("version"));
        std::fs::write(&path, b"hello").unwrap();
        assert!(LeafCache::open(&path, DEFAULT_MAX_BYTES, "")
            .unwrap()
            .0
            .is_empty());

        // Bounded: room for about four records; the last used are kept.
        std::fs::write(&path, &bytes).unwrap();
        let one = (bytes.len() - MAGIC.len()) / 10;
        let (f, _) = LeafCache::open(&path, (MAGIC.len() + 4 * one + 2) as u64, "").unwrap();
        for i in [7, 8] {
            assert!(f.get(&f.key("j", &leaf(i))).is_some());
        }
        f.save().unwrap();
        let (g, _) = LeafCache::open(&path, DEFAULT_MAX_BYTES, "").unwrap();
        assert_eq!(g.len(), 4);
        for i in [7, 8] {
            assert!(g.get(&g.key("j", &leaf(i))).is_some(), "{i}");
        }
        let _ = std::fs::remove_file(&path);
    }
}
