//! The durable store: one SQLite file (WAL, one writer) holding jobs, tasks, leases, results,
//! progress, workers and an event log.
//!
//! Contract: the coordinator keeps its working state in memory and writes every change here
//! before it answers the request that caused it. Each change is one [`Store::commit`] of a batch
//! of [`Write`]s in a single transaction, so a job and its first tasks, or a result and the tasks
//! it caused, are stored together or not at all. [`Store::load`] reads the active jobs back after
//! a restart; the coordinator rebuilds their planners from it. Finished jobs live only here: the
//! coordinator answers for them from [`Store::job`], [`Store::job_tasks`] and [`Store::list`].
//!
//! Durability: WAL with `synchronous = NORMAL`. A committed transaction survives the death of
//! the coordinator process at any moment (`kill -9`): the WAL frames are in the operating
//! system's cache before `commit` returns. A power loss or kernel crash may lose the last
//! transactions committed before the WAL was synced (at checkpoints), but never corrupts the
//! file. `GAMESOLVER_DB_SYNC=full` switches to `synchronous = FULL` (an fsync per commit) for
//! the power-loss guarantee as well.
//!
//! Bad input: a file that is not a gamesolver database, or a newer schema, is an error on open
//! naming the file; nothing is overwritten.

use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;

/// Schema version written in `PRAGMA user_version`. Version 2 added `jobs.progress` (the
/// planner's last progress, so a finished job's status can be answered from the file alone).
/// Version 3 added `tasks.resume` (the input that resumes a task from its latest checkpoint).
const SCHEMA_VERSION: i64 = 3;

/// Job states after which nothing about a job changes but its leftover tasks.
const FINAL_STATES: &str = "('done', 'failed', 'cancelled')";

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
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id INTEGER,
    at_ms INTEGER NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL
);
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
    /// A new task (its kind as JSON).
    InsertTask { id: u64, job_id: u64, kind: String },
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
    /// A line in the event log.
    Event {
        job_id: Option<u64>,
        at_ms: u64,
        kind: &'static str,
        detail: String,
    },
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
}

/// A lease as stored.
#[derive(Clone, Debug)]
pub struct StoredLease {
    pub id: String,
    pub task_id: u64,
    pub worker_id: String,
    pub state: String,
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
const TASK_COLUMNS: &str = "id, job_id, kind, state, attempts, last_error, resume";

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
    })
}

/// The SQLite store (one connection: the one writer).
pub struct Store {
    conn: Connection,
}

impl Store {
    /// Opens (or creates) the database file at `path`; `:memory:` gives a throw-away store.
    pub fn open(path: &Path) -> anyhow::Result<Store> {
        let conn = Connection::open(path)
            .map_err(|e| anyhow::anyhow!("cannot open database '{}': {e}", path.display()))?;
        let sync = match std::env::var("GAMESOLVER_DB_SYNC").as_deref() {
            Ok("full") => "FULL",
            _ => "NORMAL",
        };
        let setup = format!(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = {sync}; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;"
        );
        conn.execute_batch(&setup)
            .map_err(|e| anyhow::anyhow!("database '{}' is not usable: {e}", path.display()))?;
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
        // Version 1 files lack jobs.progress (CREATE TABLE IF NOT EXISTS kept the old table).
        let has_progress: bool = conn
            .prepare("SELECT 1 FROM pragma_table_info('jobs') WHERE name = 'progress'")?
            .exists([])?;
        if !has_progress {
            conn.execute_batch("ALTER TABLE jobs ADD COLUMN progress TEXT;")?;
        }
        // Version 1 and 2 files lack tasks.resume.
        let has_resume: bool = conn
            .prepare("SELECT 1 FROM pragma_table_info('tasks') WHERE name = 'resume'")?
            .exists([])?;
        if !has_resume {
            conn.execute_batch("ALTER TABLE tasks ADD COLUMN resume TEXT;")?;
        }
        conn.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};"))?;
        Ok(Store { conn })
    }

    /// Commits `writes` in one transaction (nothing when empty).
    pub fn commit(&mut self, writes: &[Write]) -> rusqlite::Result<()> {
        if writes.is_empty() {
            return Ok(());
        }
        let tx = self.conn.transaction()?;
        for w in writes {
            match w {
                Write::InsertJob {
                    id,
                    spec,
                    created_ms,
                } => {
                    tx.prepare_cached("INSERT INTO jobs (id, spec, state, created_ms) VALUES (?1, ?2, 'queued', ?3)")?
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
                Write::InsertTask { id, job_id, kind } => {
                    tx.prepare_cached(
                        "INSERT INTO tasks (id, job_id, kind, state) VALUES (?1, ?2, ?3, 'queued')",
                    )?
                    .execute(params![*id as i64, *job_id as i64, kind])?;
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
            }
        }
        tx.commit()
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
            "SELECT id, task_id, worker_id, state FROM leases WHERE task_id IN
                 (SELECT id FROM tasks WHERE job_id IN ({active})) ORDER BY rowid"
        ))?;
        snap.leases = q
            .query_map([], |r| {
                Ok(StoredLease {
                    id: r.get(0)?,
                    task_id: r.get::<_, i64>(1)? as u64,
                    worker_id: r.get(2)?,
                    state: r.get(3)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        let mut q = self.conn.prepare("SELECT id, host, threads FROM workers")?;
        snap.workers = q
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        snap.max_job_id = self
            .conn
            .query_row("SELECT COALESCE(MAX(id), 0) FROM jobs", [], |r| {
                r.get::<_, i64>(0)
            })? as u64;
        snap.max_task_id =
            self.conn
                .query_row("SELECT COALESCE(MAX(id), 0) FROM tasks", [], |r| {
                    r.get::<_, i64>(0)
                })? as u64;
        let mut q = self.conn.prepare(&format!(
            "SELECT state, COUNT(*) FROM jobs WHERE state IN {FINAL_STATES} GROUP BY state"
        ))?;
        snap.finished = q
            .query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?
            .collect::<Result<_, _>>()?;
        Ok(snap)
    }

    /// One job, if stored.
    pub fn job(&self, id: u64) -> rusqlite::Result<Option<StoredJob>> {
        self.conn
            .prepare_cached(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"))?
            .query_row([id as i64], job_row)
            .optional()
    }

    /// A job's tasks by id, each with the workers that held a lease on it, in order.
    pub fn job_tasks(&self, job_id: u64) -> rusqlite::Result<Vec<(StoredTask, Vec<String>)>> {
        let tasks: Vec<StoredTask> = self
            .conn
            .prepare_cached(&format!(
                "SELECT {TASK_COLUMNS} FROM tasks WHERE job_id = ?1 ORDER BY id"
            ))?
            .query_map([job_id as i64], task_row)?
            .collect::<Result<_, _>>()?;
        let mut out = Vec::with_capacity(tasks.len());
        let mut q = self
            .conn
            .prepare_cached("SELECT worker_id FROM leases WHERE task_id = ?1 ORDER BY rowid")?;
        for t in tasks {
            let workers = q
                .query_map([t.id as i64], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            out.push((t, workers));
        }
        Ok(out)
    }

    /// Jobs newest first: at most `limit`, with ids below `before` when given.
    pub fn list(&self, limit: usize, before: Option<u64>) -> rusqlite::Result<Vec<StoredJob>> {
        let before = before.map_or(i64::MAX, |b| b.min(i64::MAX as u64) as i64);
        self.conn
            .prepare_cached(&format!(
                "SELECT {JOB_COLUMNS} FROM jobs WHERE id < ?1 ORDER BY id DESC LIMIT ?2"
            ))?
            .query_map(params![before, limit as i64], job_row)?
            .collect()
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
        drop(s);
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
}
