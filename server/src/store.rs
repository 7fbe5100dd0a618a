//! The durable store: one SQLite file (WAL, one writer) holding jobs, tasks, leases, results,
//! progress, workers and an event log.
//!
//! Contract: the coordinator keeps its working state in memory and writes every change here
//! before it answers the request that caused it, each change one [`Store::commit`] of a batch of
//! [`Write`]s in one transaction (a result and the tasks it caused are stored together or not at
//! all). [`Store::load`] reads the active jobs back after a restart; finished jobs live only here
//! (their `jobs.final_status`, and [`Queries`] for lists, task pages and artifacts). The store has
//! an identity ([`Store::identity`]): a random id made with the file and kept in `meta`.
//!
//! Durability: WAL with `synchronous = NORMAL`: a committed transaction survives `kill -9` of the
//! coordinator; a power loss may lose the last transactions before a checkpoint but never corrupts
//! the file. `GAMESOLVER_DB_SYNC=full` makes it an fsync per commit.
//!
//! Connections: the writer; a [`Reader`] (read-only), so reads never wait for the scheduler's lock;
//! a [`Pruner`] for retention (`crate::retention`), deleting in short transactions and giving pages
//! back by incremental vacuum. The largest deleted job and task ids stay in `meta`, so ids are
//! never given twice. A file that is not a gamesolver database, or has a newer schema, is an error
//! on open naming the file; nothing is overwritten.

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Schema version written in `PRAGMA user_version`. Version 2 added `jobs.progress` (the
/// planner's last progress, so a finished job's status can be answered from the file alone).
/// Version 3 added `tasks.resume` (the input that resumes a task from its latest checkpoint).
/// Version 4 added `meta` (the store's identity), `artifacts` (proof certificates),
/// `tasks.what` (a task's description, made while its job was prepared) and
/// `jobs.final_status` (the complete status of a settled job, so reading it is one query).
/// Version 5 added `games` (uploaded game modules by name; the modules are file artifacts).
const SCHEMA_VERSION: i64 = 5;

/// Job states after which nothing about a job changes but its leftover tasks.
const FINAL_STATES: &str = "('done', 'failed', 'cancelled')";

/// A commit at least this long is logged (a slow disk, or a checkpoint in the way).
const SLOW_COMMIT: std::time::Duration = std::time::Duration::from_millis(20);

/// Size the WAL file is cut back to after a checkpoint (it may grow past it meanwhile).
const JOURNAL_SIZE_LIMIT: u64 = 32 << 20;

/// An older file without `auto_vacuum` is converted by a `VACUUM` on open up to this size; a
/// larger one reuses the pages of deleted jobs but does not shrink (the log says how to
/// convert it offline).
const VACUUM_ON_OPEN_BYTES: u64 = 512 << 20;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY,
    spec TEXT NOT NULL,
    state TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    finished_ms INTEGER,
    result TEXT,
    error TEXT,
    progress TEXT
);
CREATE TABLE IF NOT EXISTS tasks (
    id INTEGER PRIMARY KEY,
    job_id INTEGER NOT NULL REFERENCES jobs(id),
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    progress TEXT,
    resume TEXT
);
CREATE INDEX IF NOT EXISTS tasks_by_job ON tasks(job_id);
CREATE TABLE IF NOT EXISTS leases (
    id TEXT PRIMARY KEY,
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    worker_id TEXT NOT NULL,
    state TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    ended_ms INTEGER
);
CREATE INDEX IF NOT EXISTS leases_by_state ON leases(state);
CREATE INDEX IF NOT EXISTS leases_by_task ON leases(task_id);
CREATE TABLE IF NOT EXISTS results (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id INTEGER NOT NULL UNIQUE REFERENCES tasks(id),
    lease_id TEXT NOT NULL,
    output TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS workers (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    threads INTEGER NOT NULL,
    registered_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS artifacts (
    job_id INTEGER PRIMARY KEY REFERENCES jobs(id),
    proof TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id INTEGER,
    at_ms INTEGER NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_job ON events(job_id);
CREATE TABLE IF NOT EXISTS games (
    name TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    info TEXT NOT NULL,
    uploaded_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_finish ON jobs(finished_ms, state) WHERE state IN ('done', 'failed', 'cancelled');
";

/// One change to the store; a batch of them is committed in one transaction.
#[derive(Clone, Debug)]
pub enum Write {
    /// A new job (its spec as JSON).
    InsertJob {
        id: u64,
        spec: String,
        created_ms: u64,
    },
    /// A job's state changed; `result`/`error`/`progress` as they are now.
    JobState {
        id: u64,
        state: &'static str,
        finished_ms: Option<u64>,
        result: Option<String>,
        error: Option<String>,
        progress: Option<String>,
    },
    /// A new task (its kind as JSON, and how its job's status names it).
    InsertTask {
        id: u64,
        job_id: u64,
        kind: String,
        what: String,
    },
    /// A task's state changed.
    TaskState {
        id: u64,
        state: &'static str,
        attempts: u32,
        last_error: Option<String>,
    },
    /// A task's latest progress (from a heartbeat).
    TaskProgress { id: u64, progress: String },
    /// The input that resumes a task from its latest checkpoint (JSON).
    TaskResume { id: u64, input: String },
    /// A lease was granted.
    InsertLease {
        id: String,
        task_id: u64,
        worker_id: String,
        at_ms: u64,
    },
    /// A lease ended (`done`, `expired`, `released`, `cancelled`).
    LeaseState {
        id: String,
        state: &'static str,
        at_ms: u64,
    },
    /// A task's result (at most one per task: the table enforces it).
    InsertResult {
        task_id: u64,
        lease_id: String,
        output: String,
    },
    /// A worker registered.
    Worker {
        id: String,
        host: String,
        threads: u32,
        at_ms: u64,
    },
    /// The complete status of a job that has settled (ended, no task left on a worker), as
    /// `GET /v1/jobs/{id}` answers it from then on.
    FinalStatus { id: u64, status: String },
    /// A job's proof certificate (JSON), replacing any earlier one.
    Artifact { job_id: u64, proof: String },
    /// A line in the event log.
    Event {
        job_id: Option<u64>,
        at_ms: u64,
        kind: &'static str,
        detail: String,
    },
    /// An uploaded game module under its name (replacing the name's earlier module); `info` is
    /// what it declares (JSON).
    Game {
        name: String,
        sha256: String,
        info: String,
        at_ms: u64,
    },
}

/// An uploaded game module as stored (`games`).
#[derive(Clone, Debug)]
pub struct StoredGame {
    pub name: String,
    pub sha256: String,
    /// What the module declares (JSON).
    pub info: String,
    pub uploaded_ms: u64,
}

/// A job as stored.
#[derive(Clone, Debug)]
pub struct StoredJob {
    pub id: u64,
    pub spec: String,
    pub state: String,
    pub created_ms: u64,
    pub finished_ms: Option<u64>,
    pub result: Option<String>,
    pub error: Option<String>,
    /// The planner's progress when the job ended (JSON).
    pub progress: Option<String>,
}

/// A task as stored.
#[derive(Clone, Debug)]
pub struct StoredTask {
    pub id: u64,
    pub job_id: u64,
    pub kind: String,
    pub state: String,
    pub attempts: u32,
    pub last_error: Option<String>,
    /// The input that resumes it from its latest checkpoint (JSON), if one was stored.
    pub resume: Option<String>,
    /// How its job's status names it (`None` in files older than version 4).
    pub what: Option<String>,
    /// When its latest lease was handed out (ms since the Unix epoch; from `leases`).
    pub started_ms: Option<u64>,
    /// When that lease ended: the result came in, or it was released or expired.
    pub ended_ms: Option<u64>,
}

/// A lease as stored.
#[derive(Clone, Debug)]
pub struct StoredLease {
    pub id: String,
    pub task_id: u64,
    pub worker_id: String,
    pub state: String,
    /// When it was handed out (ms since the Unix epoch).
    pub created_ms: u64,
    /// When it ended.
    pub ended_ms: Option<u64>,
}

/// What [`Store::load`] reads back: the active jobs with their tasks, results and leases, the
/// workers, and figures about the rest.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Active jobs by id.
    pub jobs: Vec<StoredJob>,
    /// Their tasks by id.
    pub tasks: Vec<StoredTask>,
    /// `(task_id, lease_id, output)` in arrival order.
    pub results: Vec<(u64, String, String)>,
    /// All leases.
    pub leases: Vec<StoredLease>,
    /// `(id, host, threads)`.
    pub workers: Vec<(String, String, u32)>,
    /// Largest job id ever stored (0: none).
    pub max_job_id: u64,
    /// Largest task id ever stored (0: none).
    pub max_task_id: u64,
    /// Finished jobs (not loaded) by state.
    pub finished: Vec<(String, u64)>,
}

const JOB_COLUMNS: &str = "id, spec, state, created_ms, finished_ms, result, error, progress";
const TASK_COLUMNS: &str = "id, job_id, kind, state, attempts, last_error, resume, what";

fn job_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredJob> {
    Ok(StoredJob {
        id: r.get::<_, i64>(0)? as u64,
        spec: r.get(1)?,
        state: r.get(2)?,
        created_ms: r.get::<_, i64>(3)? as u64,
        finished_ms: r.get::<_, Option<i64>>(4)?.map(|v| v as u64),
        result: r.get(5)?,
        error: r.get(6)?,
        progress: r.get(7)?,
    })
}

fn task_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredTask> {
    Ok(StoredTask {
        id: r.get::<_, i64>(0)? as u64,
        job_id: r.get::<_, i64>(1)? as u64,
        kind: r.get(2)?,
        state: r.get(3)?,
        attempts: r.get(4)?,
        last_error: r.get(5)?,
        resume: r.get(6)?,
        what: r.get(7)?,
        started_ms: None,
        ended_ms: None,
    })
}

/// The SQLite store (one connection: the one writer).
pub struct Store {
    conn: Connection,
    path: PathBuf,
    identity: String,
    /// Test hook: the next commit fails (see [`Store::fail_next_commit`]).
    fail_next: AtomicBool,
}

/// Adds `column` to `table` when an older file lacks it (`CREATE TABLE IF NOT EXISTS` keeps the
/// old table as it was).
fn add_column(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<()> {
    let exists: bool = conn
        .prepare(&format!(
            "SELECT 1 FROM pragma_table_info('{table}') WHERE name = '{column}'"
        ))?
        .exists([])?;
    if !exists {
        conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} TEXT;"))?;
    }
    Ok(())
}

/// The per-connection settings of a connection that writes: `synchronous` (NORMAL, or FULL
/// with `GAMESOLVER_DB_SYNC=full`) and the size the WAL is cut back to.
fn connection_setup() -> String {
    let sync = match std::env::var("GAMESOLVER_DB_SYNC").as_deref() {
        Ok("full") => "FULL",
        _ => "NORMAL",
    };
    format!("PRAGMA synchronous = {sync}; PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT};")
}

/// A pragma that answers one number.
fn pragma_u64(conn: &Connection, name: &str) -> rusqlite::Result<u64> {
    conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0))
        .map(|v| v.max(0) as u64)
}

/// A number kept in `meta` (0 when absent).
fn meta_u64(conn: &Connection, key: &str) -> rusqlite::Result<u64> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| {
        r.get::<_, String>(0)
    })
    .optional()
    .map(|v| v.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// The meta keys of the largest job and task ids retention deleted.
const DELETED_JOB_KEY: &str = "max_deleted_job_id";
const DELETED_TASK_KEY: &str = "max_deleted_task_id";

/// A fresh random store identity (128 bits, hex).
fn new_identity() -> String {
    use rand::Rng;
    let mut rng = rand::thread_rng();
    format!("s-{:016x}{:016x}", rng.gen::<u64>(), rng.gen::<u64>())
}

impl Store {
    /// Opens (or creates) the database file at `path`.
    pub fn open(path: &Path) -> anyhow::Result<Store> {
        let conn = Connection::open(path)
            .map_err(|e| anyhow::anyhow!("cannot open database '{}': {e}", path.display()))?;
        let unusable = |e: rusqlite::Error| {
            anyhow::anyhow!("database '{}' is not usable: {e}", path.display())
        };
        // A new file gives the pages of deleted jobs back to the file system: auto_vacuum has
        // to be set before its first table (an older file is converted below).
        let fresh = pragma_u64(&conn, "page_count").map_err(unusable)? == 0;
        if fresh {
            conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL;")
                .map_err(unusable)?;
        }
        let setup = format!(
            "PRAGMA journal_mode = WAL; {} PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;",
            connection_setup()
        );
        conn.execute_batch(&setup).map_err(unusable)?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version > SCHEMA_VERSION {
            anyhow::bail!(
                "database '{}' has schema version {version}, newer than this gamesolver ({SCHEMA_VERSION})",
                path.display()
            );
        }
        conn.execute_batch(SCHEMA).map_err(|e| {
            anyhow::anyhow!(
                "database '{}' is not a gamesolver database: {e}",
                path.display()
            )
        })?;
        // Columns that older versions lack: jobs.progress (v1), tasks.resume (v1, v2),
        // tasks.what and jobs.final_status (v1 to v3).
        add_column(&conn, "jobs", "progress")?;
        add_column(&conn, "tasks", "resume")?;
        add_column(&conn, "tasks", "what")?;
        add_column(&conn, "jobs", "final_status")?;
        // The identity is made once, with the file (or on the first open of an older file),
        // and kept forever.
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('store_id', ?1)",
            [new_identity()],
        )?;
        let identity: String =
            conn.query_row("SELECT value FROM meta WHERE key = 'store_id'", [], |r| {
                r.get(0)
            })?;
        conn.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};"))?;
        if pragma_u64(&conn, "auto_vacuum")? != 2 {
            let bytes = pragma_u64(&conn, "page_count")? * pragma_u64(&conn, "page_size")?;
            if bytes <= VACUUM_ON_OPEN_BYTES {
                tracing::info!(
                    "converting the store '{}' ({} MiB) to incremental vacuum, once",
                    path.display(),
                    bytes >> 20
                );
                conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")?;
            } else {
                tracing::warn!(
                    "the store '{}' ({} MiB) was made without auto_vacuum: the space of deleted \
                     jobs is reused but the file does not shrink; to convert it, stop the \
                     coordinator and run: sqlite3 FILE 'PRAGMA auto_vacuum = INCREMENTAL; VACUUM;'",
                    path.display(),
                    bytes >> 20
                );
            }
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            identity,
            fail_next: AtomicBool::new(false),
        })
    }

    /// The store's identity: a random id made when the file was created, never changed. Job
    /// ids start again with a new store; this tells two stores apart.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// A second, read-only connection to the same file, for answers that need no writer (job
    /// status, lists, task pages, artifacts). With WAL, its reads neither wait for nor block the
    /// writer, and it sees every committed transaction.
    pub fn reader(&self) -> anyhow::Result<Reader> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .and_then(|c| {
            c.execute_batch("PRAGMA busy_timeout = 5000;")?;
            Ok(c)
        })
        .map_err(|e| anyhow::anyhow!("cannot open a reader on the job store: {e}"))?;
        Ok(Reader { conn })
    }

    /// A third connection, that writes: retention deletes finished jobs through it, in short
    /// transactions, without the scheduler's lock ([`Pruner`]).
    pub fn pruner(&self) -> anyhow::Result<Pruner> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .and_then(|c| {
            c.execute_batch(&format!(
                "{} PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;",
                connection_setup()
            ))?;
            Ok(c)
        })
        .map_err(|e| anyhow::anyhow!("cannot open a pruner on the job store: {e}"))?;
        Ok(Pruner { conn })
    }

    /// Test hook: makes the next [`Store::commit`] fail without writing anything, as a full
    /// disk or an I/O error would.
    #[doc(hidden)]
    pub fn fail_next_commit(&self) {
        self.fail_next.store(true, Ordering::SeqCst);
    }

    /// Commits `writes` in one transaction (nothing when empty).
    pub fn commit(&mut self, writes: &[Write]) -> rusqlite::Result<()> {
        if writes.is_empty() {
            return Ok(());
        }
        if self.fail_next.swap(false, Ordering::SeqCst) {
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR),
                Some("injected commit failure (test hook)".into()),
            ));
        }
        let t = std::time::Instant::now();
        let tx = self.conn.transaction()?;
        for w in writes {
            apply(&tx, w)?;
        }
        tx.commit()?;
        if t.elapsed() >= SLOW_COMMIT {
            tracing::warn!(
                "a commit of {} writes took {:.1} ms",
                writes.len(),
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        Ok(())
    }

    /// Reads the active jobs back (after a restart), with their tasks, results and leases.
    ///
    /// First settles what a crash may have left of finished jobs: their queued or running tasks
    /// become `cancelled` and their active leases `expired` (a worker still running such a task
    /// is refused when it reports, as it would have been had the coordinator stayed up), so a
    /// finished job never needs to be held in memory again.
    pub fn load(&mut self) -> rusqlite::Result<Snapshot> {
        let tx = self.conn.transaction()?;
        tx.execute_batch(&format!(
            "UPDATE leases SET state = 'expired' WHERE state = 'active' AND task_id IN
                 (SELECT t.id FROM tasks t JOIN jobs j ON t.job_id = j.id WHERE j.state IN {FINAL_STATES});
             UPDATE tasks SET state = 'cancelled' WHERE state IN ('queued', 'running') AND job_id IN
                 (SELECT id FROM jobs WHERE state IN {FINAL_STATES});"
        ))?;
        tx.commit()?;
        let active = format!("SELECT id FROM jobs WHERE state NOT IN {FINAL_STATES}");
        let mut snap = Snapshot::default();
        let mut q = self.conn.prepare(&format!(
            "SELECT {JOB_COLUMNS} FROM jobs WHERE state NOT IN {FINAL_STATES} ORDER BY id"
        ))?;
        snap.jobs = q.query_map([], job_row)?.collect::<Result<_, _>>()?;
        let mut q = self.conn.prepare(&format!(
            "SELECT {TASK_COLUMNS} FROM tasks WHERE job_id IN ({active}) ORDER BY id"
        ))?;
        snap.tasks = q.query_map([], task_row)?.collect::<Result<_, _>>()?;
        let mut q = self.conn.prepare(&format!(
            "SELECT task_id, lease_id, output FROM results WHERE task_id IN
                 (SELECT id FROM tasks WHERE job_id IN ({active})) ORDER BY seq"
        ))?;
        snap.results = q
            .query_map([], |r| {
                Ok((r.get::<_, i64>(0)? as u64, r.get(1)?, r.get(2)?))
            })?
            .collect::<Result<_, _>>()?;
        let mut q = self.conn.prepare(&format!(
            "SELECT id, task_id, worker_id, state, created_ms, ended_ms FROM leases WHERE task_id IN
                 (SELECT id FROM tasks WHERE job_id IN ({active})) ORDER BY rowid"
        ))?;
        snap.leases = q
            .query_map([], |r| {
                Ok(StoredLease {
                    id: r.get(0)?,
                    task_id: r.get::<_, i64>(1)? as u64,
                    worker_id: r.get(2)?,
                    state: r.get(3)?,
                    created_ms: r.get::<_, i64>(4)?.max(0) as u64,
                    ended_ms: r.get::<_, Option<i64>>(5)?.map(|v| v.max(0) as u64),
                })
            })?
            .collect::<Result<_, _>>()?;
        let mut q = self.conn.prepare("SELECT id, host, threads FROM workers")?;
        snap.workers = q
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        // Ids of deleted jobs and tasks are never given again (a client may still hold one).
        snap.max_job_id =
            (self
                .conn
                .query_row("SELECT COALESCE(MAX(id), 0) FROM jobs", [], |r| {
                    r.get::<_, i64>(0)
                })? as u64)
                .max(meta_u64(&self.conn, DELETED_JOB_KEY)?);
        snap.max_task_id =
            (self
                .conn
                .query_row("SELECT COALESCE(MAX(id), 0) FROM tasks", [], |r| {
                    r.get::<_, i64>(0)
                })? as u64)
                .max(meta_u64(&self.conn, DELETED_TASK_KEY)?);
        let mut q = self.conn.prepare(&format!(
            "SELECT state, COUNT(*) FROM jobs WHERE state IN {FINAL_STATES} GROUP BY state"
        ))?;
        snap.finished = q
            .query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?
            .collect::<Result<_, _>>()?;
        Ok(snap)
    }

    /// Read queries on the writer's connection (the scheduler's own reads, under its lock).
    pub fn queries(&self) -> Queries<'_> {
        Queries(&self.conn)
    }

    /// One job, if stored.
    pub fn job(&self, id: u64) -> rusqlite::Result<Option<StoredJob>> {
        self.queries().job(id)
    }

    /// A job's tasks by id, each with the workers that held a lease on it, in order.
    pub fn job_tasks(&self, job_id: u64) -> rusqlite::Result<Vec<(StoredTask, Vec<String>)>> {
        self.queries().tasks(job_id, 0, usize::MAX)
    }

    /// How a lease ended, as `(worker id, state)`; `None` when unknown or still active.
    pub fn lease_end(&self, id: &str) -> rusqlite::Result<Option<(String, String)>> {
        self.conn
            .prepare_cached(
                "SELECT worker_id, state FROM leases WHERE id = ?1 AND state != 'active'",
            )?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
    }

    /// The writer's connection (tests that edit a file as an older version left it).
    #[cfg(test)]
    pub(crate) fn conn_for_tests(&self) -> &Connection {
        &self.conn
    }

    /// Number of results stored for `task_id` (tests: "counted once").
    pub fn result_count(&self, task_id: u64) -> rusqlite::Result<u64> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM results WHERE task_id = ?1",
                [task_id as i64],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
    }

    /// The latest event of a job, if any (tests and debugging).
    pub fn last_event(&self, job_id: u64) -> rusqlite::Result<Option<(String, String)>> {
        self.conn
            .query_row(
                "SELECT kind, detail FROM events WHERE job_id = ?1 ORDER BY seq DESC LIMIT 1",
                [job_id as i64],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
    }
}

/// A read-only connection to the store (see [`Store::reader`]).
pub struct Reader {
    conn: Connection,
}

impl Reader {
    /// Its queries.
    pub fn queries(&self) -> Queries<'_> {
        Queries(&self.conn)
    }
}

/// Page counts of the store file, as SQLite sees it (the WAL's latest commit included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DbSize {
    pub page_size: u64,
    /// Pages of the file.
    pub pages: u64,
    /// Of them, pages free for reuse (deleted rows not yet given back to the file system).
    pub free_pages: u64,
}

impl DbSize {
    /// Bytes of the pages in use.
    pub fn live_bytes(&self) -> u64 {
        self.pages.saturating_sub(self.free_pages) * self.page_size
    }
    /// Bytes of the free pages.
    pub fn free_bytes(&self) -> u64 {
        self.free_pages * self.page_size
    }
}

/// What retention reads of a finished job before it deletes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobFacts {
    pub state: String,
    /// The spec's `algorithm`.
    pub algorithm: Option<String>,
    /// The spec's option `name` (a retrograde build's set name).
    pub set_name: Option<String>,
    /// The spec's option `tables` (`NAME@HASH` for a set the coordinator built).
    pub tables: Option<String>,
    /// Whether it has a result.
    pub has_result: bool,
}

/// A job that retention deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeletedJob {
    pub id: u64,
    /// Its final state (`done`, `failed` or `cancelled`).
    pub state: String,
}

/// The store's third connection, that deletes finished jobs for retention
/// (`crate::retention`). It writes only rows of jobs that have ended and are no longer held by
/// the scheduler (the caller checks that), which nothing writes again, so it needs no lock of
/// the scheduler's; each deletion is one short transaction of a few jobs, which the scheduler's
/// commits wait for at most that long (`busy_timeout`).
pub struct Pruner {
    conn: Connection,
}

/// The artifact names (64 lowercase hex digits under a key `artifact`) in a JSON value.
fn artifact_names(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                match v {
                    serde_json::Value::String(s) if k == "artifact" => {
                        if gamesolver_shared::search::retrograde::artifacts::is_name(s) {
                            out.push(s.clone());
                        }
                    }
                    _ => artifact_names(v, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| artifact_names(v, out)),
        _ => {}
    }
}

impl Pruner {
    /// The store file's page counts.
    pub fn size(&self) -> rusqlite::Result<DbSize> {
        Ok(DbSize {
            page_size: pragma_u64(&self.conn, "page_size")?,
            pages: pragma_u64(&self.conn, "page_count")?,
            free_pages: pragma_u64(&self.conn, "freelist_count")?,
        })
    }

    /// Up to `limit` jobs that have ended, oldest first by the time they ended (a job without
    /// one first): `(id, finished_ms)`. From an index: no job row is read.
    pub fn oldest_finished(&self, limit: usize) -> rusqlite::Result<Vec<(u64, Option<u64>)>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT id, finished_ms FROM jobs WHERE state IN {FINAL_STATES}
                 ORDER BY finished_ms, id LIMIT ?1"
            ))?
            .query_map([limit.min(i64::MAX as usize) as i64], |r| {
                Ok((
                    r.get::<_, i64>(0)? as u64,
                    r.get::<_, Option<i64>>(1)?.map(|v| v.max(0) as u64),
                ))
            })?
            .collect()
    }

    /// What retention needs to know of job `id` (`None`: no such job). A spec that is not
    /// JSON (never written by this version) reads as one without algorithm or options.
    pub fn job_facts(&self, id: u64) -> rusqlite::Result<Option<JobFacts>> {
        let Some((state, has_result)) = self
            .conn
            .prepare_cached("SELECT state, result IS NOT NULL FROM jobs WHERE id = ?1")?
            .query_row([id as i64], |r| Ok((r.get::<_, String>(0)?, r.get(1)?)))
            .optional()?
        else {
            return Ok(None);
        };
        let spec = self
            .conn
            .prepare_cached(
                "SELECT json_extract(spec, '$.algorithm'), json_extract(spec, '$.options.name'),
                        json_extract(spec, '$.options.tables')
                 FROM jobs WHERE id = ?1 AND json_valid(spec)",
            )?
            .query_row([id as i64], |r| {
                Ok((
                    r.get::<_, Option<String>>(0).unwrap_or(None),
                    r.get::<_, Option<String>>(1).unwrap_or(None),
                    r.get::<_, Option<String>>(2).unwrap_or(None),
                ))
            })
            .optional()?
            .unwrap_or_default();
        Ok(Some(JobFacts {
            state,
            algorithm: spec.0,
            set_name: spec.1,
            tables: spec.2,
            has_result,
        }))
    }

    /// Whether a `retrograde` build newer than job `id` finished with the set name `name`
    /// (then job `id` is no longer the build that `tables=NAME` reads).
    pub fn newer_build_exists(&self, id: u64, name: &str) -> rusqlite::Result<bool> {
        self.conn
            .prepare_cached(
                "SELECT 1 FROM jobs WHERE id > ?1 AND state = 'done' AND result IS NOT NULL
                   AND json_valid(spec) AND json_extract(spec, '$.algorithm') = 'retrograde'
                   AND json_extract(spec, '$.options.name') = ?2 LIMIT 1",
            )?
            .exists(params![id as i64, name])
    }

    /// Whether job `id` is stored.
    pub fn job_exists(&self, id: u64) -> rusqlite::Result<bool> {
        self.conn
            .prepare_cached("SELECT 1 FROM jobs WHERE id = ?1")?
            .exists([id as i64])
    }

    /// The artifacts the task results of job `id` name (a retrograde build's round chunks and
    /// sealed databases), each once.
    pub fn job_artifacts(&self, id: u64) -> rusqlite::Result<Vec<String>> {
        let mut q = self.conn.prepare_cached(
            "SELECT r.output FROM results r JOIN tasks t ON r.task_id = t.id
             WHERE t.job_id = ?1 AND instr(r.output, '\"artifact\"') > 0",
        )?;
        let mut out = Vec::new();
        for text in q.query_map([id as i64], |r| r.get::<_, String>(0))? {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text?) {
                artifact_names(&v, &mut out);
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Those of `names` that a stored result with a sequence number above `after` names, and
    /// the largest sequence number read (`after` when none): with the latter, a later call reads
    /// only the results stored since.
    pub fn results_naming(
        &self,
        names: &std::collections::HashSet<String>,
        after: i64,
    ) -> rusqlite::Result<(std::collections::HashSet<String>, i64)> {
        let mut found = std::collections::HashSet::new();
        let mut last = after;
        if names.is_empty() {
            return Ok((found, last));
        }
        let mut q = self.conn.prepare_cached(
            "SELECT seq, output FROM results WHERE seq > ?1 AND instr(output, '\"artifact\"') > 0",
        )?;
        let rows = q.query_map([after], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })?;
        for row in rows {
            let (seq, text) = row?;
            last = last.max(seq);
            for n in names {
                if !found.contains(n) && text.contains(n.as_str()) {
                    found.insert(n.clone());
                }
            }
        }
        let top: i64 =
            self.conn
                .query_row("SELECT COALESCE(MAX(seq), 0) FROM results", [], |r| {
                    r.get(0)
                })?;
        Ok((found, last.max(top)))
    }

    /// Deletes jobs `ids` with their tasks, leases, results, proof certificate and events, in
    /// one transaction, and keeps the largest deleted job and task ids in `meta`. Every job must
    /// have ended (the index it was found by says so): one that has not makes the whole call an
    /// error that deletes nothing. Ids not stored are skipped. Returns the jobs deleted and the
    /// bytes of the pages they freed (whatever other connections wrote meanwhile).
    pub fn delete_jobs(&mut self, ids: &[u64]) -> rusqlite::Result<(Vec<DeletedJob>, u64)> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let free_before = pragma_u64(&tx, "freelist_count")?;
        let mut deleted = Vec::with_capacity(ids.len());
        let (mut max_job, mut max_task) = (0u64, 0u64);
        for &id in ids {
            let id64 = id as i64;
            let top: i64 = tx
                .prepare_cached("SELECT COALESCE(MAX(id), 0) FROM tasks WHERE job_id = ?1")?
                .query_row([id64], |r| r.get(0))?;
            for sql in [
                "DELETE FROM leases WHERE task_id IN (SELECT id FROM tasks WHERE job_id = ?1)",
                "DELETE FROM results WHERE task_id IN (SELECT id FROM tasks WHERE job_id = ?1)",
                "DELETE FROM tasks WHERE job_id = ?1",
                "DELETE FROM artifacts WHERE job_id = ?1",
                "DELETE FROM events WHERE job_id = ?1",
            ] {
                tx.prepare_cached(sql)?.execute([id64])?;
            }
            let state: Option<String> = tx
                .prepare_cached(&format!(
                    "DELETE FROM jobs WHERE id = ?1 AND state IN {FINAL_STATES} RETURNING state"
                ))?
                .query_row([id64], |r| r.get(0))
                .optional()?;
            match state {
                Some(state) => {
                    max_job = max_job.max(id);
                    max_task = max_task.max(top.max(0) as u64);
                    deleted.push(DeletedJob { id, state });
                }
                None if tx
                    .prepare_cached("SELECT 1 FROM jobs WHERE id = ?1")?
                    .exists([id64])? =>
                {
                    // Not ended: the transaction rolls back when dropped.
                    return Err(rusqlite::Error::SqliteFailure(
                        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT),
                        Some(format!("retention: job {id} has not ended")),
                    ));
                }
                None => {}
            }
        }
        for (key, v) in [(DELETED_JOB_KEY, max_job), (DELETED_TASK_KEY, max_task)] {
            if v > 0 {
                tx.prepare_cached(
                    "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE
                     SET value = MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
                )?
                .execute(params![key, v.to_string()])?;
            }
        }
        let freed = pragma_u64(&tx, "freelist_count")?.saturating_sub(free_before)
            * pragma_u64(&tx, "page_size")?;
        tx.commit()?;
        Ok((deleted, freed))
    }

    /// The largest job id retention ever deleted (0: none).
    pub fn max_deleted_job(&self) -> rusqlite::Result<u64> {
        meta_u64(&self.conn, DELETED_JOB_KEY)
    }

    /// Gives up to `pages` free pages back to the file system (one short transaction; nothing
    /// in a file without incremental vacuum). Returns the pages given back.
    pub fn incremental_vacuum(&self, pages: u32) -> rusqlite::Result<u64> {
        let before = pragma_u64(&self.conn, "freelist_count")?;
        // One result row per page: the statement is stepped to its end.
        let mut q = self
            .conn
            .prepare(&format!("PRAGMA incremental_vacuum({})", pages.max(1)))?;
        let mut rows = q.query([])?;
        while rows.next()?.is_some() {}
        drop(rows);
        let after = pragma_u64(&self.conn, "freelist_count")?;
        Ok(before.saturating_sub(after))
    }

    /// Copies the WAL into the file without waiting for anyone (`wal_checkpoint(PASSIVE)`):
    /// pages given back by [`Pruner::incremental_vacuum`] leave the file only at a checkpoint,
    /// and SQLite's own comes after 1,000 WAL pages, which a quiet store may not write for
    /// hours.
    pub fn checkpoint(&self) -> rusqlite::Result<()> {
        let mut q = self.conn.prepare("PRAGMA wal_checkpoint(PASSIVE)")?;
        let mut rows = q.query([])?;
        while rows.next()?.is_some() {}
        Ok(())
    }

    /// Deletes up to `limit` log lines that belong to no job and up to `limit` worker
    /// registrations, older than `before_ms`. Returns how many rows went.
    pub fn prune_log(&self, before_ms: u64, limit: usize) -> rusqlite::Result<usize> {
        let (before, limit) = (
            before_ms.min(i64::MAX as u64) as i64,
            limit.min(i64::MAX as usize) as i64,
        );
        // Looked for first: a DELETE takes the write lock even when it deletes nothing.
        let stale: bool = self
            .conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM events WHERE job_id IS NULL AND at_ms < ?1)
                     OR EXISTS (SELECT 1 FROM workers WHERE registered_ms < ?1)",
            )?
            .query_row([before], |r| r.get(0))?;
        if !stale {
            return Ok(0);
        }
        let events = self
            .conn
            .prepare_cached(
                "DELETE FROM events WHERE seq IN
                     (SELECT seq FROM events WHERE job_id IS NULL AND at_ms < ?1 LIMIT ?2)",
            )?
            .execute(params![before, limit])?;
        let workers = self
            .conn
            .prepare_cached(
                "DELETE FROM workers WHERE id IN
                     (SELECT id FROM workers WHERE registered_ms < ?1 LIMIT ?2)",
            )?
            .execute(params![before, limit])?;
        Ok(events + workers)
    }

    /// The connection (tests).
    #[cfg(test)]
    pub(crate) fn conn_for_tests(&self) -> &Connection {
        &self.conn
    }
}

/// A job as `GET /v1/jobs` lists it (only the columns a summary needs: never the spec).
#[derive(Clone, Debug)]
pub struct ListedJob {
    pub id: u64,
    pub state: String,
    pub created_ms: u64,
    pub error: Option<String>,
    pub game: Option<String>,
    pub algorithm: Option<String>,
    /// The result's value (JSON), when there is a result.
    pub value: Option<String>,
}

/// The read queries, on either connection.
pub struct Queries<'a>(&'a Connection);

impl Queries<'_> {
    /// Uploaded game modules by name: all of them (`name: None`, at most `limit`), or the one
    /// of that name.
    pub fn games(&self, name: Option<&str>, limit: usize) -> rusqlite::Result<Vec<StoredGame>> {
        let row = Self::game_row;
        let cols = "SELECT name, sha256, info, uploaded_ms FROM games";
        match name {
            Some(n) => self
                .0
                .prepare_cached(&format!("{cols} WHERE name = ?1"))?
                .query_map([n], row)?
                .collect(),
            None => self
                .0
                .prepare_cached(&format!("{cols} ORDER BY name LIMIT ?1"))?
                .query_map([limit as i64], row)?
                .collect(),
        }
    }

    /// The latest upload of the module `sha256`, if any.
    pub fn game_with_hash(&self, sha256: &str) -> rusqlite::Result<Option<StoredGame>> {
        self.0
            .prepare_cached(
                "SELECT name, sha256, info, uploaded_ms FROM games WHERE sha256 = ?1 \
                 ORDER BY uploaded_ms DESC LIMIT 1",
            )?
            .query_row([sha256], Self::game_row)
            .optional()
    }

    fn game_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredGame> {
        Ok(StoredGame {
            name: r.get(0)?,
            sha256: r.get(1)?,
            info: r.get(2)?,
            uploaded_ms: r.get::<_, i64>(3)? as u64,
        })
    }

    /// One job, if stored.
    pub fn job(&self, id: u64) -> rusqlite::Result<Option<StoredJob>> {
        self.0
            .prepare_cached(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"))?
            .query_row([id as i64], job_row)
            .optional()
    }

    /// Whether job `id` is stored and, if so, its state.
    pub fn job_state(&self, id: u64) -> rusqlite::Result<Option<String>> {
        self.0
            .prepare_cached("SELECT state FROM jobs WHERE id = ?1")?
            .query_row([id as i64], |r| r.get(0))
            .optional()
    }

    /// The complete status stored when job `id` settled: `None` for no such job,
    /// `Some(None)` for a job without one (still active, or settled before version 4).
    pub fn final_status(&self, id: u64) -> rusqlite::Result<Option<Option<String>>> {
        self.0
            .prepare_cached("SELECT final_status FROM jobs WHERE id = ?1")?
            .query_row([id as i64], |r| r.get(0))
            .optional()
    }

    /// Up to `limit` tasks of a job with ids above `after`, by id, each with the workers that
    /// held a lease on it, in order, and the times of its latest lease. Two statements whatever
    /// the number of tasks.
    pub fn tasks(
        &self,
        job_id: u64,
        after: u64,
        limit: usize,
    ) -> rusqlite::Result<Vec<(StoredTask, Vec<String>)>> {
        let after = after.min(i64::MAX as u64) as i64;
        let limit = limit.min(i64::MAX as usize) as i64;
        let mut tasks: Vec<StoredTask> = self
            .0
            .prepare_cached(&format!(
                "SELECT {TASK_COLUMNS} FROM tasks WHERE job_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3"
            ))?
            .query_map(params![job_id as i64, after, limit], task_row)?
            .collect::<Result<_, _>>()?;
        let (Some(first), Some(last)) = (tasks.first(), tasks.last()) else {
            return Ok(Vec::new());
        };
        let mut workers: std::collections::HashMap<u64, Vec<String>> = Default::default();
        let mut times: std::collections::HashMap<u64, (u64, Option<u64>)> = Default::default();
        let mut q = self.0.prepare_cached(
            "SELECT task_id, worker_id, created_ms, ended_ms FROM leases WHERE task_id BETWEEN ?1 AND ?2 ORDER BY rowid",
        )?;
        let rows = q.query_map(params![first.id as i64, last.id as i64], |r| {
            Ok((
                r.get::<_, i64>(0)? as u64,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?.max(0) as u64,
                r.get::<_, Option<i64>>(3)?.map(|v| v.max(0) as u64),
            ))
        })?;
        for row in rows {
            let (task, worker, created, ended) = row?;
            workers.entry(task).or_default().push(worker);
            // Leases come in order: the last one seen is the latest.
            times.insert(task, (created, ended));
        }
        for t in &mut tasks {
            if let Some(&(created, ended)) = times.get(&t.id) {
                t.started_ms = Some(created);
                t.ended_ms = ended;
            }
        }
        Ok(tasks
            .into_iter()
            .map(|t| {
                let w = workers.remove(&t.id).unwrap_or_default();
                (t, w)
            })
            .collect())
    }

    /// A job's tasks counted by state.
    pub fn task_counts(&self, job_id: u64) -> rusqlite::Result<Vec<(String, u64)>> {
        self.0
            .prepare_cached("SELECT state, COUNT(*) FROM tasks WHERE job_id = ?1 GROUP BY state")?
            .query_map([job_id as i64], |r| {
                Ok((r.get(0)?, r.get::<_, i64>(1)? as u64))
            })?
            .collect()
    }

    /// The id just below a job's last `n` tasks (0 when it has `n` or fewer): with
    /// [`Queries::tasks`], its latest tasks.
    pub fn last_task_id_before(&self, job_id: u64, n: usize) -> rusqlite::Result<u64> {
        self.0
            .prepare_cached(
                "SELECT COALESCE(MIN(id), 1) - 1 FROM (SELECT id FROM tasks WHERE job_id = ?1 ORDER BY id DESC LIMIT ?2)",
            )?
            .query_row(params![job_id as i64, n as i64], |r| r.get::<_, i64>(0))
            .map(|v| v.max(0) as u64)
    }

    /// Jobs newest first: at most `limit`, with ids below `before` when given. Reads only what
    /// a summary line needs (the game, algorithm and value out of the JSON), never a whole spec;
    /// a value that is JSON null (a retrograde build, an exact job stopped by a limit) is none,
    /// so its summary says the state rather than "value null".
    pub fn list(&self, limit: usize, before: Option<u64>) -> rusqlite::Result<Vec<ListedJob>> {
        let before = before.map_or(i64::MAX, |b| b.min(i64::MAX as u64) as i64);
        self.0
            .prepare_cached(
                "SELECT id, state, created_ms, error, json_extract(spec, '$.game'),
                        json_extract(spec, '$.algorithm'),
                        CASE WHEN json_type(result, '$.value') = 'null' THEN NULL
                             ELSE result -> '$.value' END
                 FROM jobs WHERE id < ?1 ORDER BY id DESC LIMIT ?2",
            )?
            .query_map(params![before, limit.min(i64::MAX as usize) as i64], |r| {
                Ok(ListedJob {
                    id: r.get::<_, i64>(0)? as u64,
                    state: r.get(1)?,
                    created_ms: r.get::<_, i64>(2)? as u64,
                    error: r.get(3)?,
                    game: r.get(4)?,
                    algorithm: r.get(5)?,
                    value: r.get(6)?,
                })
            })?
            .collect()
    }

    /// The id, spec and result (JSON texts) of the newest finished `retrograde` job that built
    /// the set `name` (`GET /v1/tables/{name}`).
    pub fn table_set(&self, name: &str) -> rusqlite::Result<Option<(u64, String, String)>> {
        self.0
            .prepare_cached(
                "SELECT id, spec, result FROM jobs
                 WHERE state = 'done' AND json_extract(spec, '$.algorithm') = 'retrograde'
                   AND json_extract(spec, '$.options.name') = ?1 AND result IS NOT NULL
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row([name], |r| {
                Ok((r.get::<_, i64>(0)? as u64, r.get(1)?, r.get(2)?))
            })
            .optional()
    }

    /// A job's proof certificate (JSON text), if it has one.
    pub fn proof(&self, job_id: u64) -> rusqlite::Result<Option<String>> {
        self.0
            .prepare_cached("SELECT proof FROM artifacts WHERE job_id = ?1")?
            .query_row([job_id as i64], |r| r.get(0))
            .optional()
    }
}

/// Runs write `w` in transaction `tx`: the writes of jobs, workers and events here, those of
/// tasks, leases and results in [`apply_task_write`].
fn apply(tx: &rusqlite::Transaction, w: &Write) -> rusqlite::Result<()> {
    match w {
        Write::InsertJob {
            id,
            spec,
            created_ms,
        } => {
            tx.prepare_cached(
                "INSERT INTO jobs (id, spec, state, created_ms) VALUES (?1, ?2, 'queued', ?3)",
            )?
            .execute(params![*id as i64, spec, *created_ms as i64])?;
        }
        Write::JobState {
            id,
            state,
            finished_ms,
            result,
            error,
            progress,
        } => {
            tx.prepare_cached("UPDATE jobs SET state = ?2, finished_ms = ?3, result = ?4, error = ?5, progress = ?6 WHERE id = ?1")?
                .execute(params![*id as i64, state, finished_ms.map(|v| v as i64), result, error, progress])?;
        }
        Write::FinalStatus { id, status } => {
            tx.prepare_cached("UPDATE jobs SET final_status = ?2 WHERE id = ?1")?
                .execute(params![*id as i64, status])?;
        }
        Write::Artifact { job_id, proof } => {
            tx.prepare_cached("INSERT OR REPLACE INTO artifacts (job_id, proof) VALUES (?1, ?2)")?
                .execute(params![*job_id as i64, proof])?;
        }
        Write::Worker {
            id,
            host,
            threads,
            at_ms,
        } => {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO workers (id, host, threads, registered_ms) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![id, host, threads, *at_ms as i64])?;
        }
        Write::Event {
            job_id,
            at_ms,
            kind,
            detail,
        } => {
            tx.prepare_cached(
                "INSERT INTO events (job_id, at_ms, kind, detail) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![
                job_id.map(|v| v as i64),
                *at_ms as i64,
                kind,
                detail
            ])?;
        }
        Write::Game {
            name,
            sha256,
            info,
            at_ms,
        } => {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO games (name, sha256, info, uploaded_ms) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![name, sha256, info, *at_ms as i64])?;
        }
        _ => apply_task_write(tx, w)?,
    }
    Ok(())
}

/// Runs a write of a task, a lease or a result in transaction `tx` (others are [`apply`]'s).
fn apply_task_write(tx: &rusqlite::Transaction, w: &Write) -> rusqlite::Result<()> {
    match w {
        Write::InsertTask {
            id,
            job_id,
            kind,
            what,
        } => {
            tx.prepare_cached(
                "INSERT INTO tasks (id, job_id, kind, state, what) VALUES (?1, ?2, ?3, 'queued', ?4)",
            )?
            .execute(params![*id as i64, *job_id as i64, kind, what])?;
        }
        Write::TaskState {
            id,
            state,
            attempts,
            last_error,
        } => {
            tx.prepare_cached(
                "UPDATE tasks SET state = ?2, attempts = ?3, last_error = ?4 WHERE id = ?1",
            )?
            .execute(params![*id as i64, state, attempts, last_error])?;
        }
        Write::TaskProgress { id, progress } => {
            tx.prepare_cached("UPDATE tasks SET progress = ?2 WHERE id = ?1")?
                .execute(params![*id as i64, progress])?;
        }
        Write::TaskResume { id, input } => {
            tx.prepare_cached("UPDATE tasks SET resume = ?2 WHERE id = ?1")?
                .execute(params![*id as i64, input])?;
        }
        Write::InsertLease {
            id,
            task_id,
            worker_id,
            at_ms,
        } => {
            tx.prepare_cached(
                "INSERT INTO leases (id, task_id, worker_id, state, created_ms) VALUES (?1, ?2, ?3, 'active', ?4)",
            )?
            .execute(params![id, *task_id as i64, worker_id, *at_ms as i64])?;
        }
        Write::LeaseState { id, state, at_ms } => {
            tx.prepare_cached("UPDATE leases SET state = ?2, ended_ms = ?3 WHERE id = ?1")?
                .execute(params![id, state, *at_ms as i64])?;
        }
        Write::InsertResult {
            task_id,
            lease_id,
            output,
        } => {
            tx.prepare_cached(
                "INSERT INTO results (task_id, lease_id, output) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![*task_id as i64, lease_id, output])?;
        }
        _ => unreachable!("not a write of a task, lease or result"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version 1 file (no `jobs.progress`) is upgraded in place and keeps its jobs; a leftover
    /// running task of a finished job is settled on load, and only active jobs are loaded.
    #[test]
    fn a_version_1_file_is_upgraded_and_finished_jobs_are_not_loaded() {
        let path = std::env::temp_dir().join(format!("gs-store-v1-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        {
            let c = Connection::open(&path).unwrap();
            // The jobs table comes first: drop its progress column, keep the tasks' one.
            let v1 = SCHEMA.replacen(",\n    progress TEXT\n", "\n", 1);
            assert_eq!(v1.matches("progress TEXT").count(), 1);
            c.execute_batch(&v1).unwrap();
            c.execute_batch(
                "PRAGMA user_version = 1;
                 INSERT INTO jobs (id, spec, state, created_ms, result) VALUES (1, '{}', 'done', 5, '{\"value\":1}');
                 INSERT INTO jobs (id, spec, state, created_ms) VALUES (2, '{}', 'running', 6);
                 INSERT INTO tasks (id, job_id, kind, state) VALUES (1, 1, '{}', 'running');
                 INSERT INTO tasks (id, job_id, kind, state) VALUES (2, 2, '{}', 'running');
                 INSERT INTO leases (id, task_id, worker_id, state, created_ms) VALUES ('l1', 1, 'w', 'active', 5);
                 INSERT INTO leases (id, task_id, worker_id, state, created_ms) VALUES ('l2', 2, 'w', 'active', 6);",
            )
            .unwrap();
        }
        let mut s = Store::open(&path).unwrap();
        let snap = s.load().unwrap();
        assert_eq!(snap.jobs.iter().map(|j| j.id).collect::<Vec<_>>(), vec![2]);
        assert_eq!(snap.tasks.iter().map(|t| t.id).collect::<Vec<_>>(), vec![2]);
        assert_eq!(snap.leases.len(), 1);
        assert_eq!(snap.finished, vec![("done".to_string(), 1)]);
        assert_eq!((snap.max_job_id, snap.max_task_id), (2, 2));
        let done = s.job(1).unwrap().unwrap();
        assert_eq!(done.result.as_deref(), Some("{\"value\":1}"));
        assert_eq!(done.progress, None);
        let tasks = s.job_tasks(1).unwrap();
        assert_eq!(tasks[0].0.state, "cancelled");
        assert_eq!(tasks[0].1, vec!["w".to_string()]);
        assert_eq!(
            s.lease_end("l1").unwrap(),
            Some(("w".to_string(), "expired".to_string()))
        );
        assert_eq!(s.lease_end("l2").unwrap(), None, "still active");
        let version: i64 = s
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        // An older file gets an identity on its first open, and keeps it.
        let identity = s.identity().to_string();
        assert!(
            identity.starts_with("s-") && identity.len() == 34,
            "{identity}"
        );
        drop(s);
        assert_eq!(Store::open(&path).unwrap().identity(), identity);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_batch_is_all_or_nothing_and_results_are_unique() {
        let dir = std::env::temp_dir().join(format!("gs-store-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let mut s = Store::open(&dir).unwrap();
        s.commit(&[
            Write::InsertJob {
                id: 1,
                spec: "{}".into(),
                created_ms: 5,
            },
            Write::InsertTask {
                id: 1,
                job_id: 1,
                kind: "{}".into(),
                what: "the whole job".into(),
            },
        ])
        .unwrap();
        // A batch that fails half-way (duplicate task id) leaves nothing behind.
        let bad = s.commit(&[
            Write::InsertJob {
                id: 2,
                spec: "{}".into(),
                created_ms: 6,
            },
            Write::InsertTask {
                id: 1,
                job_id: 2,
                kind: "{}".into(),
                what: "the whole job".into(),
            },
        ]);
        assert!(bad.is_err());
        s.commit(&[Write::InsertResult {
            task_id: 1,
            lease_id: "a".into(),
            output: "{}".into(),
        }])
        .unwrap();
        assert!(s
            .commit(&[Write::InsertResult {
                task_id: 1,
                lease_id: "b".into(),
                output: "{}".into()
            }])
            .is_err());
        drop(s);
        let mut s = Store::open(&dir).unwrap();
        let snap = s.load().unwrap();
        assert_eq!(snap.jobs.len(), 1);
        assert_eq!(snap.tasks.len(), 1);
        assert_eq!((snap.max_job_id, snap.max_task_id), (1, 1));
        assert_eq!(s.result_count(1).unwrap(), 1);
        let _ = std::fs::remove_file(&dir);
    }

    fn temp_db(name: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("gs-store-{name}-{}", std::process::id()));
        for suffix in ["", "-wal", "-shm"] {
            let mut f = p.as_os_str().to_os_string();
            f.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(f));
        }
        p
    }

    fn count(c: &Connection, sql: &str) -> i64 {
        c.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    /// A job with a task, a lease, a result, a proof, events and a final state.
    fn finished_job(id: u64, state: &'static str, spec: &str, output: &str) -> Vec<Write> {
        vec![
            Write::InsertJob {
                id,
                spec: spec.into(),
                created_ms: id,
            },
            Write::InsertTask {
                id: id * 10,
                job_id: id,
                kind: "{}".into(),
                what: "the whole job".into(),
            },
            Write::InsertLease {
                id: format!("l{id}"),
                task_id: id * 10,
                worker_id: "w".into(),
                at_ms: id,
            },
            Write::InsertResult {
                task_id: id * 10,
                lease_id: format!("l{id}"),
                output: output.into(),
            },
            Write::Artifact {
                job_id: id,
                proof: "{\"proof\":1}".into(),
            },
            Write::Event {
                job_id: Some(id),
                at_ms: id,
                kind: "submitted",
                detail: String::new(),
            },
            Write::JobState {
                id,
                state,
                finished_ms: Some(1000 + id),
                result: Some("{\"value\":1}".into()),
                error: None,
                progress: None,
            },
            Write::FinalStatus {
                id,
                status: "{}".into(),
            },
        ]
    }

    /// Retention deletes a finished job with every row stored for it, in one transaction,
    /// refuses a job that has not ended (deleting nothing of the batch), and the ids it
    /// deleted are never given again, even when they were the largest.
    #[test]
    fn a_finished_job_is_deleted_with_all_its_rows_and_its_id_is_not_reused() {
        let path = temp_db("prune");
        let mut s = Store::open(&path).unwrap();
        let mut w = finished_job(1, "done", "{}", "{}");
        w.extend(finished_job(3, "cancelled", "{}", "{}"));
        w.push(Write::InsertJob {
            id: 2,
            spec: "{}".into(),
            created_ms: 2,
        });
        w.push(Write::InsertTask {
            id: 20,
            job_id: 2,
            kind: "{}".into(),
            what: "the whole job".into(),
        });
        s.commit(&w).unwrap();
        let mut p = s.pruner().unwrap();
        // Only finished jobs, oldest first by the time they ended.
        assert_eq!(
            p.oldest_finished(10).unwrap(),
            vec![(1, Some(1001)), (3, Some(1003))]
        );
        // A batch with a job in flight is refused whole.
        let err = p.delete_jobs(&[1, 2]).unwrap_err();
        assert!(err.to_string().contains("job 2 has not ended"), "{err}");
        assert!(p.job_exists(1).unwrap());
        // Small rows share their pages: no page need be freed.
        let (deleted, _freed) = p.delete_jobs(&[3, 1, 99]).unwrap();
        assert_eq!(
            deleted,
            vec![
                DeletedJob {
                    id: 3,
                    state: "cancelled".into()
                },
                DeletedJob {
                    id: 1,
                    state: "done".into()
                }
            ]
        );
        let c = p.conn_for_tests();
        for (table, left) in [
            ("jobs", 1),
            ("tasks", 1),
            ("leases", 0),
            ("results", 0),
            ("artifacts", 0),
            ("events", 0),
        ] {
            assert_eq!(
                count(c, &format!("SELECT COUNT(*) FROM {table}")),
                left,
                "{table}"
            );
        }
        assert_eq!(p.max_deleted_job().unwrap(), 3);
        assert!(p.oldest_finished(10).unwrap().is_empty());
        drop(p);
        drop(s);
        // After a restart the next ids are past the deleted ones.
        let mut s = Store::open(&path).unwrap();
        let snap = s.load().unwrap();
        assert_eq!((snap.max_job_id, snap.max_task_id), (3, 30));
        assert_eq!(snap.jobs.len(), 1);
        assert!(snap.finished.is_empty());
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// The oldest finished jobs are read from the partial index, never from the job rows
    /// (which hold megabyte specs).
    #[test]
    fn the_oldest_finished_jobs_come_from_an_index() {
        let path = temp_db("plan");
        let s = Store::open(&path).unwrap();
        let plan: Vec<String> = s
            .conn
            .prepare(&format!(
                "EXPLAIN QUERY PLAN SELECT id, finished_ms FROM jobs WHERE state IN {FINAL_STATES}
                 ORDER BY finished_ms, id LIMIT 5"
            ))
            .unwrap()
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            plan.iter()
                .any(|l| l.contains("COVERING INDEX jobs_by_finish")),
            "{plan:?}"
        );
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// A new file has incremental vacuum: deleted jobs' pages go back to the file system and
    /// the file shrinks. An older file without it is converted when it is opened.
    #[test]
    fn deleted_pages_go_back_and_older_files_are_converted() {
        let path = temp_db("vacuum");
        let mut s = Store::open(&path).unwrap();
        assert_eq!(pragma_u64(&s.conn, "auto_vacuum").unwrap(), 2);
        let spec = format!("{{\"position\":\"{}\"}}", "x".repeat(200_000));
        for id in 1..=20 {
            s.commit(&finished_job(id, "done", &spec, "{}")).unwrap();
        }
        let mut p = s.pruner().unwrap();
        let full = p.size().unwrap();
        assert!(full.live_bytes() > 4_000_000, "{full:?}");
        let ids: Vec<u64> = (1..=20).collect();
        let (deleted, bytes) = p.delete_jobs(&ids).unwrap();
        assert_eq!(deleted.len(), 20);
        let freed = p.size().unwrap();
        assert!(bytes > 4_000_000 && bytes <= freed.free_bytes(), "{bytes}");
        assert!(freed.live_bytes() < 200_000, "{freed:?}");
        assert!(freed.free_bytes() > 4_000_000, "{freed:?}");
        let mut given = 0;
        loop {
            let n = p.incremental_vacuum(256).unwrap();
            if n == 0 {
                break;
            }
            assert!(n <= 256);
            given += n;
        }
        let after = p.size().unwrap();
        assert_eq!(after.free_pages, 0);
        assert_eq!(given, freed.free_pages);
        // The file lost the free pages (and pointer-map pages that mapped them).
        assert!(after.pages <= freed.pages - freed.free_pages, "{after:?}");
        drop(p);
        drop(s);
        let _ = std::fs::remove_file(&path);

        // A file made without auto_vacuum (as before retention), with a job in it.
        let path = temp_db("convert");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch("PRAGMA journal_mode = WAL;").unwrap();
            c.execute_batch(SCHEMA).unwrap();
            c.execute_batch(
                "PRAGMA user_version = 4;
                 INSERT INTO jobs (id, spec, state, created_ms) VALUES (7, '{}', 'queued', 1);",
            )
            .unwrap();
            assert_eq!(pragma_u64(&c, "auto_vacuum").unwrap(), 0);
        }
        let mut s = Store::open(&path).unwrap();
        assert_eq!(pragma_u64(&s.conn, "auto_vacuum").unwrap(), 2);
        assert_eq!(s.load().unwrap().jobs[0].id, 7);
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// What retention reads before it deletes: a build's set name and the artifacts its
    /// results name, whether a newer build of the same set is stored, the set a job was pinned
    /// to, and which artifacts stored results still name.
    #[test]
    fn retention_reads_builds_pins_and_artifact_names() {
        let path = temp_db("facts");
        let mut s = Store::open(&path).unwrap();
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        let build = r#"{"game":"awari","algorithm":"retrograde","options":{"name":"small"}}"#;
        let out = format!(r#"{{"extra":{{"retro":{{"artifact":"{a}","bytes":5}}}}}}"#);
        s.commit(&finished_job(1, "done", build, &out)).unwrap();
        let pinned = format!(
            r#"{{"game":"awari","algorithm":"alphabeta","options":{{"tables":"small@{b}"}}}}"#
        );
        s.commit(&finished_job(2, "done", &pinned, "{}")).unwrap();
        s.commit(&[Write::InsertJob {
            id: 3,
            spec: "not json".into(),
            created_ms: 3,
        }])
        .unwrap();
        let p = s.pruner().unwrap();
        let f = p.job_facts(1).unwrap().unwrap();
        assert_eq!(
            (f.algorithm.as_deref(), f.set_name.as_deref(), f.has_result),
            (Some("retrograde"), Some("small"), true)
        );
        assert_eq!(
            p.job_facts(2).unwrap().unwrap().tables,
            Some(format!("small@{b}"))
        );
        let bad = p.job_facts(3).unwrap().unwrap();
        assert_eq!((bad.state.as_str(), bad.algorithm), ("queued", None));
        assert_eq!(p.job_facts(4).unwrap(), None);
        assert_eq!(p.job_artifacts(1).unwrap(), vec![a.clone()]);
        assert!(p.job_artifacts(2).unwrap().is_empty());
        assert!(!p.newer_build_exists(1, "small").unwrap());
        drop(p);
        s.commit(&finished_job(4, "done", build, "{}")).unwrap();
        let p = s.pruner().unwrap();
        assert!(p.newer_build_exists(1, "small").unwrap());
        assert!(!p.newer_build_exists(4, "small").unwrap());
        let names: std::collections::HashSet<String> = [a.clone(), b.clone()].into();
        let (found, seq) = p.results_naming(&names, 0).unwrap();
        assert_eq!(found, [a.clone()].into());
        assert!(seq >= 1);
        // Only results stored after `seq` are read by the second call.
        assert!(p.results_naming(&names, seq).unwrap().0.is_empty());
        drop(p);
        drop(s);
        let _ = std::fs::remove_file(&path);
    }

    /// Log lines of no job and worker registrations older than the cut are deleted, in
    /// bounded batches.
    #[test]
    fn old_log_lines_and_registrations_are_pruned() {
        let path = temp_db("log");
        let mut s = Store::open(&path).unwrap();
        let mut w = Vec::new();
        for i in 0..5u64 {
            w.push(Write::Event {
                job_id: None,
                at_ms: i * 100,
                kind: "worker",
                detail: String::new(),
            });
            w.push(Write::Worker {
                id: format!("w{i}"),
                host: "h".into(),
                threads: 1,
                at_ms: i * 100,
            });
        }
        s.commit(&w).unwrap();
        let p = s.pruner().unwrap();
        assert_eq!(p.prune_log(250, 2).unwrap(), 4);
        assert_eq!(p.prune_log(250, 2).unwrap(), 2);
        assert_eq!(p.prune_log(250, 2).unwrap(), 0);
        let c = p.conn_for_tests();
        assert_eq!(count(c, "SELECT COUNT(*) FROM events"), 2);
        assert_eq!(count(c, "SELECT COUNT(*) FROM workers"), 2);
        drop(p);
        drop(s);
        let _ = std::fs::remove_file(&path);
    }
}
