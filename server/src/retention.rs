//! Retention of finished jobs, and the store's disk quota (`serve --retain-hours`,
//! `--retain-mb`, `--max-store-mb`; the policy as users see it: docs/API.md, section 1.3).
//!
//! Policy: an ended job is kept `--retain-hours` after it ended, and while the store is over its
//! budget the jobs that ended first go first; the budget is `--retain-mb` of live SQLite pages,
//! lowered so the whole store (pages, WAL, file artifacts) stays under 90% of `--max-store-mb`. A
//! deleted job goes with its tasks, leases, results, proof, log lines and the artifacts only it
//! named; its id is never given again and answers 404 naming the retention policy. When retention
//! cannot free enough, `POST /v1/jobs` answers 429 `quota`.
//!
//! Never deleted: jobs in flight or still held by the scheduler; the newest finished build of each
//! retrograde set (what `tables=NAME` reads); artifacts an active job reads, a stored result names,
//! or a set manifest whose build is still stored.
//!
//! Work: a sweep every [`SWEEP_EVERY`] on the blocking pool, off the scheduler's lock but for two
//! questions; deletion on the store's pruning connection in transactions of about [`TXN_BYTES`]
//! (at most [`MAX_BATCH`] jobs, [`DELETE_BUDGET`] per sweep), then incremental vacuum steps of
//! [`VACUUM_PAGES`] pages ([`VACUUM_BUDGET`] per sweep). Between two transactions the sweep lets a
//! waiting scheduler call in, so the scheduler waits for at most one short transaction, never a
//! sweep. Details: docs/services.md, "Retention".

use crate::artifacts::ArtifactStore;
use crate::scheduler::SchedError;
use crate::store::{DbSize, Pruner};
use crate::Coordinator;
use gamesolver_shared::search::retrograde::artifacts::{is_name, SetManifest, MAX_MANIFEST_BYTES};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Default of `--retain-hours`: a week.
pub const DEFAULT_RETAIN_HOURS: f64 = 168.0;
/// Default of `--retain-mb`.
pub const DEFAULT_RETAIN_MB: u64 = 2048;
/// Default of `--max-store-mb`.
pub const DEFAULT_MAX_STORE_MB: u64 = 8192;
/// Largest `--retain-hours` (about 114 years).
pub const MAX_RETAIN_HOURS: f64 = 1_000_000.0;
/// Time between two sweeps (a quota refusal starts one at once).
pub const SWEEP_EVERY: Duration = Duration::from_secs(1);
/// Most jobs deleted in one transaction.
pub const MAX_BATCH: usize = 32;
/// Bytes one deletion transaction aims at (by the size of the jobs last deleted).
pub const TXN_BYTES: u64 = 2 << 20;
/// Longest a sweep spends deleting jobs.
pub const DELETE_BUDGET: Duration = Duration::from_millis(200);
/// Longest a sweep spends giving pages back.
pub const VACUUM_BUDGET: Duration = Duration::from_millis(200);
/// Pages one incremental vacuum step gives back (1 MiB of 4 KiB pages; some 0.1 ms each).
pub const VACUUM_PAGES: u32 = 256;
/// Free pages are given back once they pass this many bytes (below, new rows reuse them).
const VACUUM_ABOVE_BYTES: u64 = 4 << 20;
/// How long a set's newest build is remembered as kept before it is looked at again (a newer
/// build of the same name makes it deletable).
const KEPT_RECHECK: Duration = Duration::from_secs(3600);
/// Tenths of `--max-store-mb` that retention keeps the store under when it can, so that
/// submits find room between two sweeps.
const QUOTA_TARGET: u64 = 9;
/// Most old log lines and worker registrations deleted per sweep.
const LOG_BATCH: usize = 1000;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The policy (`serve` flags).
#[derive(Clone, Debug, PartialEq)]
pub struct RetentionConfig {
    /// Hours a finished job is kept after it ended; 0: no age limit.
    pub retain_hours: f64,
    /// MiB of live pages of the SQLite file that finished jobs may fill; 0: no budget.
    pub retain_mb: u64,
    /// MiB the whole store (live pages, WAL, file artifacts) may hold before `POST /v1/jobs`
    /// answers 429; 0: no quota.
    pub max_store_mb: u64,
}

impl Default for RetentionConfig {
    fn default() -> Self {
        RetentionConfig {
            retain_hours: DEFAULT_RETAIN_HOURS,
            retain_mb: DEFAULT_RETAIN_MB,
            max_store_mb: DEFAULT_MAX_STORE_MB,
        }
    }
}

impl RetentionConfig {
    /// A one-line error for a value out of bounds.
    pub fn check(&self) -> Result<(), String> {
        if !(self.retain_hours.is_finite() && (0.0..=MAX_RETAIN_HOURS).contains(&self.retain_hours))
        {
            return Err(format!(
                "--retain-hours must be between 0 and {MAX_RETAIN_HOURS}"
            ));
        }
        for (flag, v) in [
            ("--retain-mb", self.retain_mb),
            ("--max-store-mb", self.max_store_mb),
        ] {
            if v > u64::MAX >> 21 {
                return Err(format!("{flag} is too large"));
            }
        }
        Ok(())
    }

    fn retain_ms(&self) -> Option<u64> {
        (self.retain_hours > 0.0).then(|| (self.retain_hours * 3_600_000.0).ceil() as u64)
    }

    fn retain_bytes(&self) -> Option<u64> {
        (self.retain_mb > 0).then_some(self.retain_mb << 20)
    }

    fn max_store_bytes(&self) -> Option<u64> {
        (self.max_store_mb > 0).then_some(self.max_store_mb << 20)
    }

    /// The policy in words, for messages and the log.
    pub fn describe(&self) -> String {
        let age = match self.retain_ms() {
            Some(_) => format!("{} hours after they end", self.retain_hours),
            None => "without an age limit".into(),
        };
        let size = match self.retain_bytes() {
            Some(_) => format!("within {} MiB (--retain-mb)", self.retain_mb),
            None => "without a size budget".into(),
        };
        let quota = match self.max_store_bytes() {
            Some(_) => format!(
                "the store may hold {} MiB (--max-store-mb)",
                self.max_store_mb
            ),
            None => "no disk quota".into(),
        };
        format!("finished jobs are kept {age}, {size}; {quota}")
    }
}

/// The store's size as the last sweep measured it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreBytes {
    /// Live pages of the SQLite file.
    pub db_live: u64,
    /// The SQLite file on disk (live and free pages).
    pub db_file: u64,
    /// The WAL file.
    pub wal: u64,
    /// The file artifacts.
    pub artifacts: u64,
    /// Bytes of jobs accepted since the measure.
    pub accepted: u64,
}

impl StoreBytes {
    /// What the quota counts: live pages, WAL, artifacts, and jobs accepted since.
    pub fn total(&self) -> u64 {
        self.db_live
            .saturating_add(self.wal)
            .saturating_add(self.artifacts)
            .saturating_add(self.accepted)
    }
}

/// What one sweep did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Jobs deleted.
    pub jobs: u64,
    /// File artifacts deleted.
    pub artifacts: u64,
    /// Pages given back to the file system.
    pub pages: u64,
    /// Old log lines and worker registrations deleted.
    pub log_rows: u64,
}

/// Retention state of a coordinator: the policy, the pruning connection, the figures.
pub struct Retention {
    config: RetentionConfig,
    db: PathBuf,
    wal: PathBuf,
    artifacts: Arc<ArtifactStore>,
    sweeper: Mutex<Sweeper>,
    db_live: AtomicU64,
    db_file: AtomicU64,
    wal_bytes: AtomicU64,
    accepted: AtomicU64,
    /// Jobs deleted since start, by state: done, failed, cancelled.
    deleted: [AtomicU64; 3],
    artifacts_deleted: AtomicU64,
    pages_vacuumed: AtomicU64,
    refused: AtomicU64,
    /// The largest job id ever deleted (ids at most this that are not stored were deleted).
    max_deleted_job: AtomicU64,
    /// Wakes the sweep loop at once (a quota refusal).
    pub wake: tokio::sync::Notify,
}

struct Sweeper {
    pruner: Pruner,
    /// Newest builds of their set, kept (not looked at again until `kept_since` is old).
    kept: HashSet<u64>,
    kept_since: Instant,
    /// Live bytes one deleted job freed on average in the last batch (sizes the next batch
    /// when deleting for size, so a budget is not overshot by a whole batch of large jobs).
    per_job: u64,
}

const STATES: [&str; 3] = ["done", "failed", "cancelled"];

/// What the jobs a sweep deletes leave to check for orphans (see `delete_orphans`).
#[derive(Default)]
struct Leftovers {
    /// Artifacts their results name.
    named: Vec<String>,
    /// The sets they were pinned to.
    manifests: Vec<String>,
    /// The database builds among them.
    builds: HashSet<u64>,
}

impl Retention {
    /// Retention for the store at `db` through `pruner`, with the artifacts beside it.
    pub fn open(
        pruner: Pruner,
        db: &Path,
        artifacts: Arc<ArtifactStore>,
        config: RetentionConfig,
    ) -> anyhow::Result<Retention> {
        let mut wal = db.as_os_str().to_os_string();
        wal.push("-wal");
        let max_deleted = pruner.max_deleted_job()?;
        let r = Retention {
            config,
            db: db.to_path_buf(),
            wal: PathBuf::from(wal),
            artifacts,
            sweeper: Mutex::new(Sweeper {
                pruner,
                kept: HashSet::new(),
                kept_since: Instant::now(),
                per_job: 0,
            }),
            db_live: AtomicU64::new(0),
            db_file: AtomicU64::new(0),
            wal_bytes: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            deleted: Default::default(),
            artifacts_deleted: AtomicU64::new(0),
            pages_vacuumed: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            max_deleted_job: AtomicU64::new(max_deleted),
            wake: tokio::sync::Notify::new(),
        };
        r.measure(&r.sweeper.lock().pruner)?;
        Ok(r)
    }

    /// The policy.
    pub fn config(&self) -> &RetentionConfig {
        &self.config
    }

    /// Measures the store (page counts, the files' sizes); the bytes accepted since start
    /// again from 0.
    fn measure(&self, p: &Pruner) -> anyhow::Result<DbSize> {
        let size = p.size()?;
        let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        self.db_live.store(size.live_bytes(), Relaxed);
        self.db_file.store(len(&self.db), Relaxed);
        self.wal_bytes.store(len(&self.wal), Relaxed);
        self.accepted.store(0, Relaxed);
        Ok(size)
    }

    /// The store's size as last measured, with the jobs accepted since.
    pub fn store_bytes(&self) -> StoreBytes {
        StoreBytes {
            db_live: self.db_live.load(Relaxed),
            db_file: self.db_file.load(Relaxed),
            wal: self.wal_bytes.load(Relaxed),
            artifacts: self.artifacts.used_bytes(),
            accepted: self.accepted.load(Relaxed),
        }
    }

    /// The live bytes finished jobs may fill: `--retain-mb`, lowered so that the whole store
    /// stays under [`QUOTA_TARGET`] of `--max-store-mb` (room for new jobs); `None`: no bound.
    fn budget(&self) -> Option<u64> {
        let others = self
            .wal_bytes
            .load(Relaxed)
            .saturating_add(self.artifacts.used_bytes());
        let quota = self
            .config
            .max_store_bytes()
            .map(|m| (m / 10 * QUOTA_TARGET).saturating_sub(others));
        match (self.config.retain_bytes(), quota) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, None) => a,
            (None, b) => b,
        }
    }

    /// The disk quota: refuses a job of `incoming` bytes when the store would pass
    /// `--max-store-mb` (429 `quota`), and starts a sweep at once.
    pub fn check_quota(&self, incoming: u64) -> Result<(), SchedError> {
        let Some(max) = self.config.max_store_bytes() else {
            return Ok(());
        };
        let used = self.store_bytes().total();
        if used.saturating_add(incoming) <= max {
            return Ok(());
        }
        self.refused.fetch_add(1, Relaxed);
        self.wake.notify_one();
        Err(SchedError::Quota(format!(
            "the job store holds {:.1} MiB, the limit (max-store-mb) is {} MiB, and the retention \
             policy cannot free more now (jobs in flight and the newest build of each table set \
             are kept): try again later",
            used as f64 / (1u64 << 20) as f64,
            self.config.max_store_mb
        )))
    }

    /// A job of `bytes` was accepted: counted until the next measure.
    pub fn accepted(&self, bytes: u64) {
        self.accepted.fetch_add(bytes, Relaxed);
    }

    /// `e` for job `id`, saying that the retention policy removed the job when it did.
    pub fn explain(&self, id: u64, e: SchedError) -> SchedError {
        match e {
            SchedError::NotFound(m)
                if m == format!("no job {id}")
                    && id > 0
                    && id <= self.max_deleted_job.load(Relaxed) =>
            {
                SchedError::NotFound(format!(
                    "job {id} was removed by the retention policy ({})",
                    self.config.describe()
                ))
            }
            e => e,
        }
    }

    /// Jobs deleted since start by state.
    pub fn deleted_by_state(&self) -> [(&'static str, u64); 3] {
        std::array::from_fn(|i| (STATES[i], self.deleted[i].load(Relaxed)))
    }

    /// Lowers job counts by state (the scheduler's, which count every job that ended since
    /// the store was opened) by the jobs deleted since.
    pub fn adjust_counts<K: Ord + std::borrow::Borrow<str>>(&self, counts: &mut BTreeMap<K, u64>) {
        for (state, n) in self.deleted_by_state() {
            if let Some(v) = counts.get_mut(state) {
                *v = v.saturating_sub(n);
            }
        }
    }

    /// Figures for `/metrics`: (jobs deleted, artifacts deleted, pages given back, quota
    /// refusals).
    pub fn counters(&self) -> (u64, u64, u64, u64) {
        (
            self.deleted.iter().map(|d| d.load(Relaxed)).sum(),
            self.artifacts_deleted.load(Relaxed),
            self.pages_vacuumed.load(Relaxed),
            self.refused.load(Relaxed),
        )
    }

    /// One sweep (blocking: run it on the blocking pool): deletes the finished jobs the policy
    /// no longer keeps, oldest first, the artifacts only they named, gives freed pages back,
    /// and measures the store.
    pub fn sweep(&self, c: &Coordinator) -> anyhow::Result<Swept> {
        let start = Instant::now();
        let mut guard = self.sweeper.lock();
        let sw = &mut *guard;
        if sw.kept_since.elapsed() >= KEPT_RECHECK {
            sw.kept.clear();
            sw.kept_since = Instant::now();
        }
        let mut size = self.measure(&sw.pruner)?;
        let cutoff = self
            .config
            .retain_ms()
            .map(|ms| now_ms().saturating_sub(ms));
        let mut out = Swept::default();
        let mut left = Leftovers::default();
        // Held by the scheduler (ended, a task still on a worker): not this sweep.
        let mut held: HashSet<u64> = HashSet::new();
        while start.elapsed() < DELETE_BUDGET {
            let excess = self
                .budget()
                .map_or(0, |b| size.live_bytes().saturating_sub(b));
            let pick = Self::pick(sw, cutoff, excess, &held)?;
            if pick.is_empty() {
                break;
            }
            {
                // A job not resident now never is again: it ended, and only active jobs are
                // ever loaded.
                let s = c.sched.lock();
                for &id in &pick {
                    if s.resident_status(id).is_some() {
                        held.insert(id);
                    }
                }
            }
            let pick = pick.into_iter().filter(|id| !held.contains(id));
            let ids = Self::screen(sw, pick, &mut left)?;
            if ids.is_empty() {
                continue;
            }
            let (deleted, freed) = self.delete_batch(c, &mut sw.pruner, &ids)?;
            out.jobs += deleted;
            size = self.measure(&sw.pruner)?;
            if let Some(per_job) = freed.checked_div(deleted) {
                sw.per_job = per_job.max(size.page_size.max(1));
            }
        }
        if !left.named.is_empty() || !left.manifests.is_empty() || !left.builds.is_empty() {
            out.artifacts =
                self.delete_orphans(c, &sw.pruner, left.named, left.manifests, &left.builds)?;
            self.artifacts_deleted.fetch_add(out.artifacts, Relaxed);
        }
        out.pages = self.give_back_pages(c, &sw.pruner, size)?;
        self.pages_vacuumed.fetch_add(out.pages, Relaxed);
        if let Some(cut) = cutoff {
            out.log_rows = sw.pruner.prune_log(cut, LOG_BATCH)? as u64;
        }
        if out.jobs > 0 || out.artifacts > 0 {
            let b = self.store_bytes();
            tracing::info!(
                "retention: deleted {} jobs and {} artifacts in {} ms; store {:.1} MiB live \
                 (file {:.1} MiB, WAL {:.1} MiB, artifacts {:.1} MiB)",
                out.jobs,
                out.artifacts,
                start.elapsed().as_millis(),
                b.db_live as f64 / 1048576.0,
                b.db_file as f64 / 1048576.0,
                b.wal as f64 / 1048576.0,
                b.artifacts as f64 / 1048576.0,
            );
        }
        Ok(out)
    }

    /// The next batch of finished jobs to delete, oldest first: expired ones (finished before
    /// `cutoff`), or any while the store is `excess` bytes over its budget; not those kept or
    /// `held`. Its size bounds one transaction and, deleting for size, the overshoot.
    fn pick(
        sw: &Sweeper,
        cutoff: Option<u64>,
        excess: u64,
        held: &HashSet<u64>,
    ) -> anyhow::Result<Vec<u64>> {
        let want = match sw.per_job {
            0 => 1,
            per_job => {
                let by_size = (TXN_BYTES / per_job) as usize;
                let by_excess = match excess {
                    0 => usize::MAX,
                    e => e.div_ceil(per_job) as usize,
                };
                by_size.min(by_excess).clamp(1, MAX_BATCH)
            }
        };
        let mut pick = Vec::new();
        for (id, finished) in sw
            .pruner
            .oldest_finished(want + sw.kept.len() + held.len())?
        {
            if sw.kept.contains(&id) || held.contains(&id) {
                continue;
            }
            let expired = cutoff.is_some_and(|cut| finished.unwrap_or(0) < cut);
            if !expired && excess == 0 {
                // Oldest first: none after it has expired either.
                break;
            }
            pick.push(id);
            if pick.len() >= want {
                break;
            }
        }
        Ok(pick)
    }

    /// The picked jobs that go: a database build that is the newest of its set stays (kept,
    /// not looked at again for a while). What a going job leaves to check is added to `left`.
    fn screen(
        sw: &mut Sweeper,
        pick: impl Iterator<Item = u64>,
        left: &mut Leftovers,
    ) -> anyhow::Result<Vec<u64>> {
        let mut ids = Vec::new();
        for id in pick {
            let Some(f) = sw.pruner.job_facts(id)? else {
                continue;
            };
            let retro = f
                .algorithm
                .as_deref()
                .and_then(gamesolver_shared::registry::kernels::find)
                .is_some_and(|a| a.builds_databases());
            if let (true, "done", true, Some(name)) =
                (retro, f.state.as_str(), f.has_result, &f.set_name)
            {
                if !sw.pruner.newer_build_exists(id, name)? {
                    sw.kept.insert(id);
                    continue;
                }
            }
            if retro {
                left.named.extend(sw.pruner.job_artifacts(id)?);
                left.builds.insert(id);
            }
            if let Some((_, hash)) = f.tables.as_deref().and_then(|t| t.split_once('@')) {
                left.manifests.push(hash.trim().to_string());
            }
            ids.push(id);
        }
        Ok(ids)
    }

    /// Deletes jobs `ids` in one transaction and counts them by state. Returns how many were
    /// deleted and the live bytes that freed.
    fn delete_batch(
        &self,
        c: &Coordinator,
        p: &mut Pruner,
        ids: &[u64],
    ) -> anyhow::Result<(u64, u64)> {
        let t = Instant::now();
        let (deleted, freed) = p.delete_jobs(ids)?;
        tracing::debug!(
            "retention: {} jobs deleted in one transaction of {:.1} ms",
            deleted.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
        // A commit of the scheduler's that found the file locked goes first.
        drop(c.sched.lock());
        for d in &deleted {
            if let Some(i) = STATES.iter().position(|s| *s == d.state) {
                self.deleted[i].fetch_add(1, Relaxed);
            }
            self.max_deleted_job.fetch_max(d.id, Relaxed);
        }
        Ok((deleted.len() as u64, freed))
    }

    /// Gives free pages of the store back to the file system (within [`VACUUM_BUDGET`], while
    /// more than [`VACUUM_ABOVE_BYTES`] are free) and checkpoints them out of the file.
    /// Returns the pages given back.
    fn give_back_pages(
        &self,
        c: &Coordinator,
        p: &Pruner,
        mut size: DbSize,
    ) -> anyhow::Result<u64> {
        let mut pages = 0;
        let vacuum = Instant::now();
        while size.free_bytes() > VACUUM_ABOVE_BYTES && vacuum.elapsed() < VACUUM_BUDGET {
            let t = Instant::now();
            let n = p.incremental_vacuum(VACUUM_PAGES)?;
            tracing::debug!(
                "retention: {n} pages given back in {:.1} ms",
                t.elapsed().as_secs_f64() * 1e3
            );
            drop(c.sched.lock());
            size = self.measure(p)?;
            pages += n;
            if n == 0 {
                // A file without incremental vacuum: its free pages are reused, never given back.
                break;
            }
        }
        // Given-back pages leave the file at a checkpoint; one that found a reader in the way
        // (or came before the last step) is tried again by the next sweep.
        if pages > 0 || self.db_file.load(Relaxed) > size.pages * size.page_size {
            p.checkpoint()?;
            drop(c.sched.lock());
            self.measure(p)?;
        }
        Ok(pages)
    }

    /// Deletes the file artifacts named by deleted jobs (`named`: their results; `manifests`:
    /// the sets they were pinned to; the manifests of the deleted `builds`, found among the
    /// small artifacts) that nothing else needs. Kept: a manifest whose build is still stored
    /// (`tables=NAME` may pin it again) and the databases it lists; an artifact
    /// that a stored result names; and, checked under the scheduler's lock (as a worker's
    /// report is, so that no result can make an artifact live between the check and the
    /// deletion), what active jobs read: round chunks, pinned sets and their databases.
    fn delete_orphans(
        &self,
        c: &Coordinator,
        p: &Pruner,
        named: Vec<String>,
        mut manifests: Vec<String>,
        builds: &HashSet<u64>,
    ) -> anyhow::Result<u64> {
        let read_manifest = |hash: &str| -> Option<SetManifest> {
            if !is_name(hash) {
                return None;
            }
            let bytes = self.artifacts.get(hash).ok()?;
            serde_json::from_slice(&bytes).ok()
        };
        let mut doomed: HashSet<String> = named.into_iter().filter(|n| is_name(n)).collect();
        if !builds.is_empty() {
            // Manifests of a deleted build whose pinned jobs went before it.
            for hash in self.artifacts.names_up_to(MAX_MANIFEST_BYTES) {
                if read_manifest(&hash).is_some_and(|m| builds.contains(&m.job)) {
                    manifests.push(hash);
                }
            }
        }
        for hash in manifests {
            let Some(m) = read_manifest(&hash) else {
                continue;
            };
            if p.job_exists(m.job)? {
                continue;
            }
            doomed.insert(hash);
            doomed.extend(m.databases);
        }
        doomed.retain(|n| self.artifacts.has(n));
        if doomed.is_empty() {
            return Ok(0);
        }
        let (stored, seq) = p.results_naming(&doomed, 0)?;
        doomed.retain(|n| !stored.contains(n));
        if doomed.is_empty() {
            return Ok(0);
        }
        let s = c.sched.lock();
        let (mut keep, pinned) = s.artifacts_in_use();
        for hash in pinned {
            if let Some(m) = read_manifest(&hash) {
                keep.extend(m.databases);
            }
            keep.insert(hash);
        }
        let (since, _) = p.results_naming(&doomed, seq)?;
        keep.extend(since);
        let mut n = 0;
        for name in doomed.iter().filter(|n| !keep.contains(*n)) {
            match self.artifacts.remove(name) {
                Ok(()) => n += 1,
                Err(e) => tracing::warn!("retention: cannot delete artifact {name}: {e}"),
            }
        }
        drop(s);
        Ok(n)
    }
}

/// Runs sweeps until the task is aborted: every [`SWEEP_EVERY`], or at once when woken.
pub async fn run(coord: Arc<Coordinator>) {
    loop {
        // At most ten sweeps a second however often a refusal wakes it.
        tokio::time::sleep(Duration::from_millis(100)).await;
        tokio::select! {
            _ = tokio::time::sleep(SWEEP_EVERY) => {}
            _ = coord.retention.wake.notified() => {}
        }
        let c = coord.clone();
        match tokio::task::spawn_blocking(move || c.retention.sweep(&c)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::error!("retention sweep: {e}"),
            Err(e) if e.is_panic() => tracing::error!("retention sweep panicked"),
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gamesolver_shared::registry;
    use gamesolver_shared::wire::JobSpec;

    fn coordinator(name: &str, retention: RetentionConfig) -> (Arc<Coordinator>, PathBuf) {
        let dir = std::env::temp_dir().join(format!("gs-retention-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut config =
            crate::ServeConfig::from_env("127.0.0.1:0".into(), dir.join("db.sqlite"), 0);
        config.retention = retention;
        (Coordinator::open(&config).unwrap(), dir)
    }

    /// A tree of about `bytes` bytes (MAX over MIN nodes of 100 leaves).
    fn tree(bytes: usize, seed: u64) -> String {
        let mut s = String::from("{\"max\":[");
        let mut k = seed;
        while s.len() + 600 < bytes {
            if !s.ends_with('[') {
                s.push(',');
            }
            let leaves: Vec<String> = (0..100)
                .map(|_| {
                    k = k
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((k >> 33) % 1000).to_string()
                })
                .collect();
            s.push_str(&format!("{{\"min\":[{}]}}", leaves.join(",")));
        }
        s.push_str("]}");
        s
    }

    fn submit(c: &Coordinator, bytes: usize, seed: u64) -> u64 {
        let spec: JobSpec = serde_json::from_value(serde_json::json!({
            "game": "tree", "algorithm": "minimax", "position": tree(bytes, seed)
        }))
        .unwrap();
        let prepared = registry::prepare(&spec).unwrap();
        c.with(|s| s.submit(spec, prepared)).unwrap()
    }

    fn status(c: &Coordinator, id: u64) -> Result<crate::answers::JobStatus, SchedError> {
        crate::scheduler::stored_status(&c.reader.lock().queries(), id)
            .map_err(|e| c.retention.explain(id, e))
    }

    /// Over its size budget, a sweep deletes the jobs that ended first until the live pages
    /// are under it; jobs in flight stay whatever the budget; a deleted job's 404 says why,
    /// and it is no longer counted.
    #[test]
    fn a_sweep_deletes_the_oldest_finished_jobs_down_to_the_budget() {
        let (c, dir) = coordinator(
            "size",
            RetentionConfig {
                retain_hours: 0.0,
                retain_mb: 1,
                max_store_mb: 0,
            },
        );
        let ids: Vec<u64> = (0..12).map(|i| submit(&c, 100_000, i)).collect();
        for &id in &ids[..10] {
            c.with(|s| s.cancel(id)).unwrap();
        }
        let mut deleted = 0;
        for _ in 0..20 {
            let swept = c.retention.sweep(&c).unwrap();
            deleted += swept.jobs;
            if swept.jobs == 0 {
                break;
            }
        }
        let b = c.retention.store_bytes();
        assert!(b.db_live <= 1 << 20, "{b:?}");
        assert!((2..10).contains(&deleted), "{deleted} deleted");
        // Oldest first: the first `deleted` cancelled jobs went, the others stay.
        for (i, &id) in ids.iter().enumerate() {
            let st = status(&c, id);
            if (i as u64) < deleted {
                let e = st.unwrap_err();
                assert!(
                    matches!(&e, SchedError::NotFound(m) if m.contains("removed by the retention policy")),
                    "{e:?}"
                );
            } else {
                assert!(st.is_ok(), "job {id}: {st:?}");
            }
        }
        // A job id never given is not "removed".
        let e = status(&c, 1000).unwrap_err();
        assert_eq!(e, SchedError::NotFound("no job 1000".into()));
        let mut counts = c.with(|s| s.status()).jobs;
        c.retention.adjust_counts(&mut counts);
        assert_eq!(counts.get("cancelled"), Some(&(10 - deleted)));
        assert_eq!(counts.get("queued"), Some(&2));
        drop(c);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Past the age limit every finished job goes, in batches, however small the store; jobs
    /// in flight stay. The disk quota refuses a job that would pass it, naming the flag.
    #[test]
    fn expired_jobs_go_and_the_quota_refuses_past_its_limit() {
        let (c, dir) = coordinator(
            "age",
            RetentionConfig {
                retain_hours: 1e-7,
                retain_mb: 0,
                max_store_mb: 16,
            },
        );
        let ids: Vec<u64> = (0..20).map(|i| submit(&c, 1_000, i)).collect();
        for &id in &ids[..18] {
            c.with(|s| s.cancel(id)).unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
        let mut deleted = 0;
        for _ in 0..10 {
            deleted += c.retention.sweep(&c).unwrap().jobs;
        }
        assert_eq!(deleted, 18);
        assert!(status(&c, ids[18]).is_ok() && status(&c, ids[19]).is_ok());
        assert_eq!(c.retention.counters().0, 18);
        assert!(c.retention.check_quota(1_000).is_ok());
        let e = c.retention.check_quota(16 << 20).unwrap_err();
        assert!(
            matches!(&e, SchedError::Quota(m) if m.contains("max-store-mb") && m.contains("16 MiB")),
            "{e:?}"
        );
        assert_eq!(c.retention.counters().3, 1);
        // The ids of deleted jobs are not given again.
        let next = submit(&c, 1_000, 99);
        assert_eq!(next, ids[19] + 1);
        drop(c);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Files go with the jobs that alone named them: an older build's databases and chunks,
    /// the manifest of a finished job pinned to that build once the build is gone; a database
    /// that a kept build also names stays, and so does the newest build of each set.
    #[test]
    fn artifacts_go_with_the_jobs_that_alone_named_them() {
        use gamesolver_shared::search::retrograde::artifacts::sha256_hex;
        let dir = std::env::temp_dir().join(format!("gs-retention-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("db.sqlite");
        let files = ArtifactStore::open(&db, 64).unwrap();
        let put = |text: &str| files.put_bytes(text.as_bytes()).unwrap();
        let (only, shared, chunk, newer) = (
            put("db only"),
            put("db shared"),
            put("chunk"),
            put("db new"),
        );
        let manifest = SetManifest {
            name: "s".into(),
            job: 1,
            databases: vec![only.clone(), shared.clone()],
        };
        let pin = files.put_bytes(&manifest.to_bytes()).unwrap();
        assert_eq!(pin, sha256_hex(&manifest.to_bytes()));
        // A manifest of the same build whose pinned job is gone already.
        let orphan = SetManifest {
            databases: vec![only.clone()],
            ..manifest.clone()
        };
        let orphan = files.put_bytes(&orphan.to_bytes()).unwrap();
        {
            let s = crate::store::Store::open(&db).unwrap();
            drop(s);
            let c = rusqlite::Connection::open(&db).unwrap();
            let build = |name: &str| {
                format!(
                    r#"{{"game":"awari","algorithm":"retrograde","options":{{"name":"{name}"}}}}"#
                )
            };
            let out = |names: &[&String]| {
                let dbs: Vec<String> = names
                    .iter()
                    .map(|n| format!(r#"{{"artifact":"{n}","bytes":1}}"#))
                    .collect();
                format!(r#"{{"extra":{{"databases":[{}]}}}}"#, dbs.join(","))
            };
            let pinned = format!(
                r#"{{"game":"awari","algorithm":"alphabeta","options":{{"tables":"s@{pin}"}}}}"#
            );
            let jobs = [
                (1, build("s"), out(&[&only, &shared, &chunk])),
                (2, build("s"), out(&[&newer])),
                (3, pinned, "{}".to_string()),
                (4, build("u"), out(&[&shared])),
            ];
            for (id, spec, output) in jobs {
                c.execute(
                    "INSERT INTO jobs (id, spec, state, created_ms, finished_ms, result)
                     VALUES (?1, ?2, 'done', ?1, ?1, ?3)",
                    rusqlite::params![id, spec, output],
                )
                .unwrap();
                c.execute(
                    "INSERT INTO tasks (id, job_id, kind, state) VALUES (?1, ?1, '{}', 'done')",
                    [id],
                )
                .unwrap();
                c.execute(
                    "INSERT INTO results (task_id, lease_id, output) VALUES (?1, 'l', ?2)",
                    rusqlite::params![id, output],
                )
                .unwrap();
            }
        }
        let mut config = crate::ServeConfig::from_env("127.0.0.1:0".into(), db.clone(), 0);
        config.retention = RetentionConfig {
            retain_hours: 1e-7,
            retain_mb: 0,
            max_store_mb: 0,
        };
        let c = Coordinator::open(&config).unwrap();
        let swept = c.retention.sweep(&c).unwrap();
        assert_eq!(swept.jobs, 2, "{swept:?}");
        assert_eq!(
            status(&c, 2).map(|s| s.id),
            Ok(2),
            "the newest build of s is kept"
        );
        assert_eq!(
            status(&c, 4).map(|s| s.id),
            Ok(4),
            "the only build of u is kept"
        );
        for id in [1, 3] {
            assert!(status(&c, id).is_err());
        }
        assert_eq!(swept.artifacts, 4, "{swept:?}");
        for (name, kept) in [
            (&only, false),
            (&chunk, false),
            (&pin, false),
            (&orphan, false),
            (&shared, true),
            (&newer, true),
        ] {
            assert_eq!(c.artifacts.has(name), kept, "{name}");
        }
        // Kept builds stay kept.
        assert_eq!(c.retention.sweep(&c).unwrap().jobs, 0);
        drop(c);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
