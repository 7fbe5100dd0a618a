//! The store is the truth: opening the scheduler on it, committing each change, and rebuilding
//! memory from it.
//!
//! Every change is written to the [`Store`] in one transaction before the call returns; after a
//! restart [`Scheduler::open`] rebuilds the active jobs, queue, leases (given a fresh `lease_ms`
//! so their workers can still report) and planners (by replaying the stored results,
//! [`Planner::restore`]). A call changes memory, then commits; when the commit fails, memory is
//! rebuilt from the store the same way (the store is the truth), so no failed call leaves a
//! trace in memory, and the call answers [`SchedError::Store`].
//!
//! Memory: only active jobs are resident, and of their tasks only those in flight: a finished
//! task is summarised (counts, and the latest [`STATUS_RECENT_TASKS`] as shown), its rows stay
//! in the store. A job that has ended and has no task left on a worker has settled: its
//! complete status is written with the change that settled it, and it is evicted as soon as
//! that call returns ([`Scheduler::take_effects`]); from then on its status (one stored row),
//! the job list, a duplicate report on one of its leases and the job counts are answered from
//! the store, with the same answers as before eviction. Memory thus grows with the jobs in
//! flight, not with history or task counts.

use super::{
    describe, now_ms, spec_bytes, to_json, Counters, Job, JobState, Lease, SchedConfig, SchedError,
    Scheduler, Task, TaskState, Worker, STATUS_RECENT_TASKS,
};
use crate::answers::{TaskRow, TaskView};
use crate::store::{Snapshot, Store, StoredJob, StoredLease, StoredTask, Write};
use gamesolver_shared::plan::Planner;
use gamesolver_shared::registry::{self, PreparedJob};
use gamesolver_shared::wire::{JobSpec, TaskKind, TaskOutput};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the stored leases say, by task id, gathered before the tasks are rebuilt.
#[derive(Default)]
struct StoredLeases {
    /// The active lease: (lease id, worker id). What is left once every task is rebuilt
    /// belongs to no running task.
    active: HashMap<u64, (String, String)>,
    /// The workers that held a lease on the task, in order.
    workers: HashMap<u64, Vec<String>>,
    /// The ids of its leases, in order.
    ids: HashMap<u64, Vec<String>>,
    /// When its latest lease was handed out and when it ended.
    times: HashMap<u64, (u64, Option<u64>)>,
}

/// The stored results that parse: the output by task id, and the task ids in the order the
/// results came (the order a planner takes them again).
#[derive(Default)]
struct StoredResults {
    outputs: HashMap<u64, TaskOutput>,
    order: Vec<u64>,
}

impl StoredResults {
    /// Reads the stored `(task id, lease id, output)` rows, in arrival order.
    fn read(results: Vec<(u64, String, String)>) -> StoredResults {
        let mut out = StoredResults::default();
        for (task_id, _lease, output) in results {
            if let Ok(o) = serde_json::from_str::<TaskOutput>(&output) {
                out.outputs.insert(task_id, o);
                out.order.push(task_id);
            }
        }
        out
    }
}

impl Scheduler {
    /// Opens the scheduler on `store`, rebuilding every job, task and lease it holds.
    pub fn open(store: Store, config: SchedConfig) -> anyhow::Result<Scheduler> {
        let mut s = Scheduler {
            config,
            store,
            jobs: BTreeMap::new(),
            held_bytes: 0,
            tasks: HashMap::new(),
            queue: VecDeque::new(),
            leases: HashMap::new(),
            ended: HashMap::new(),
            evicted: BTreeMap::new(),
            retired: Vec::new(),
            workers: BTreeMap::new(),
            next_job: 1,
            next_task: 1,
            counters: Counters::default(),
            done_times: VecDeque::new(),
            changed: BTreeSet::new(),
            queued_new: false,
            passed_hold: None,
            background: false,
            to_background: Vec::new(),
            next_token: 1,
            cancels_new: false,
        };
        let snap = s.store.load()?;
        let w = s.load(snap);
        if let Err(e) = s.store.commit(&w) {
            anyhow::bail!("the job store failed: {e}");
        }
        s.settled_written();
        let ids: Vec<u64> = s.jobs.keys().copied().collect();
        for id in ids {
            s.maybe_evict(id);
        }
        Ok(s)
    }

    /// Replaces the in-memory state (jobs, tasks, queue, leases, counts) by what `snap` holds;
    /// returns the writes that settle it (jobs that cannot resume, final statuses).
    fn load(&mut self, snap: Snapshot) -> Vec<Write> {
        // What a failed commit retired is not in the store: the replay retires it again if it is.
        self.retired.clear();
        self.jobs.clear();
        self.held_bytes = 0;
        self.tasks.clear();
        self.queue.clear();
        self.leases.clear();
        self.ended.clear();
        self.evicted.clear();
        self.workers.clear();
        self.changed.clear();
        // Work handed out before is for the jobs as they were: its results are dropped (their
        // tokens are no job's any more) and the replay below hands out what is still needed.
        self.to_background.clear();
        self.next_job = snap.max_job_id + 1;
        self.next_task = snap.max_task_id + 1;
        for (state, n) in &snap.finished {
            if let Some(st) = JobState::parse(state) {
                *self.evicted.entry(st.as_str()).or_insert(0) += n;
            }
        }
        let mut w = Vec::new();
        self.restore(snap, &mut w);
        self.changed.extend(self.jobs.keys().copied());
        self.settle(&mut w);
        let ids: Vec<u64> = self.jobs.keys().copied().collect();
        for id in ids {
            self.rest(id);
        }
        w
    }

    /// After a failed commit: the store is the truth, so memory is rebuilt from it as
    /// [`Scheduler::open`] would (what the failed call changed in memory is gone). Workers keep
    /// the liveness this process saw.
    fn rebuild(&mut self) {
        let snap = match self.store.load() {
            Ok(s) => s,
            Err(e) => {
                tracing::error!("cannot reload the job store after a failed commit: {e}");
                return;
            }
        };
        let old_workers = std::mem::take(&mut self.workers);
        let w = self.load(snap);
        for (id, old) in old_workers {
            if let Some(nw) = self.workers.get_mut(&id) {
                nw.last_seen = old.last_seen;
                nw.last_seen_ms = old.last_seen_ms;
                nw.alive_until = nw.alive_until.max(old.alive_until);
            }
        }
        match self.store.commit(&w) {
            Ok(()) => self.settled_written(),
            Err(e) => tracing::error!("the job store failed again while reloading: {e}"),
        }
        self.queued_new |= !self.queue.is_empty();
    }

    /// Rebuilds memory from `snap` (cleared by [`Scheduler::load`]): the workers, what the
    /// leases say, then job by job its planner and tasks; then each active job's planner goes
    /// on. `w` gets the end of each job that cannot resume and what the planners' next step
    /// issues, cancels or ends.
    fn restore(&mut self, snap: Snapshot, w: &mut Vec<Write>) {
        let now = Instant::now();
        self.restore_workers(snap.workers, now);
        let mut leases = self.restore_leases(snap.leases);
        let results = StoredResults::read(snap.results);
        let mut by_job = self.tasks_by_job(snap.tasks);
        for sj in snap.jobs {
            let stored_tasks = by_job.remove(&sj.id).unwrap_or_default();
            self.restore_job(sj, stored_tasks, &mut leases, &results, now, w);
        }
        // Leases of tasks that ended meanwhile (cannot happen with one transaction per change,
        // but a hand-edited file should not wedge anything).
        for (_, (lease_id, worker_id)) in leases.active {
            self.ended.insert(lease_id, (worker_id, "expired"));
        }
        let active: Vec<u64> = self
            .jobs
            .values()
            .filter(|j| !j.state.is_final())
            .map(|j| j.id)
            .collect();
        for id in active {
            self.advance(id, w);
        }
        if !self.queue.is_empty() {
            self.queued_new = true;
        }
    }

    /// The registered workers, none seen yet by this process.
    fn restore_workers(&mut self, workers: Vec<(String, String, u32)>, now: Instant) {
        for (id, host, threads) in workers {
            self.workers.insert(
                id,
                Worker {
                    host,
                    threads,
                    last_seen: None,
                    last_seen_ms: None,
                    leases: BTreeSet::new(),
                    // A grace period to come back after the coordinator's restart.
                    alive_until: now + self.worker_horizon(),
                },
            );
        }
    }

    /// The stored leases by task; how each ended lease ended goes to `self.ended`.
    fn restore_leases(&mut self, stored: Vec<StoredLease>) -> StoredLeases {
        let mut leases = StoredLeases::default();
        for l in stored {
            // In order: the last one is the latest.
            leases.times.insert(l.task_id, (l.created_ms, l.ended_ms));
            leases
                .workers
                .entry(l.task_id)
                .or_default()
                .push(l.worker_id.clone());
            leases.ids.entry(l.task_id).or_default().push(l.id.clone());
            match l.state.as_str() {
                "active" => {
                    leases.active.insert(l.task_id, (l.id, l.worker_id));
                }
                "done" => {
                    self.ended.insert(l.id, (l.worker_id, "done"));
                }
                "expired" => {
                    self.ended.insert(l.id, (l.worker_id, "expired"));
                }
                _ => {
                    self.ended.insert(l.id, (l.worker_id, "released"));
                }
            }
        }
        leases
    }

    /// The stored tasks by job; new task ids start past every stored one.
    fn tasks_by_job(&mut self, tasks: Vec<StoredTask>) -> BTreeMap<u64, Vec<StoredTask>> {
        let mut by_job: BTreeMap<u64, Vec<StoredTask>> = BTreeMap::new();
        for t in tasks {
            self.next_task = self.next_task.max(t.id + 1);
            by_job.entry(t.job_id).or_default().push(t);
        }
        by_job
    }

    /// Rebuilds stored job `sj` and its tasks: an active job gets its planner back, and its tasks
    /// go back to the queue or to their workers. Jobs are rebuilt one after the other: a job's
    /// parallelism counts the workers that the leases of the jobs before it made busy.
    fn restore_job(
        &mut self,
        sj: StoredJob,
        stored_tasks: Vec<StoredTask>,
        leases: &mut StoredLeases,
        results: &StoredResults,
        now: Instant,
        w: &mut Vec<Write>,
    ) {
        self.next_job = self.next_job.max(sj.id + 1);
        let mut job = self.stored_job(sj);
        if !job.state.is_final() {
            self.restore_planner(&mut job, &stored_tasks, results, w);
        }
        for t in stored_tasks {
            self.restore_task(&mut job, t, leases, now);
        }
        self.jobs.insert(job.id, job);
    }

    /// A stored job as memory holds it, without its prepared form and planner; its spec's bytes
    /// are counted as held.
    fn stored_job(&mut self, sj: StoredJob) -> Job {
        let spec: JobSpec = serde_json::from_str(&sj.spec).unwrap_or_default();
        let state = JobState::parse(&sj.state).unwrap_or(JobState::Failed);
        let bytes = spec_bytes(&spec);
        self.held_bytes += bytes;
        Job {
            finished_ms: sj.finished_ms,
            result: sj
                .result
                .as_deref()
                .and_then(|r| serde_json::from_str(r).ok()),
            error: sj.error,
            ..Job::new(sj.id, spec, bytes, state, sj.created_ms)
        }
    }

    /// Prepares active job `job` again and gives it its planner, rebuilt from its stored tasks
    /// and results; a job that cannot be prepared any more fails, its end written to `w`.
    fn restore_planner(
        &mut self,
        job: &mut Job,
        stored_tasks: &[StoredTask],
        results: &StoredResults,
        w: &mut Vec<Write>,
    ) {
        match registry::prepare(&job.spec) {
            Ok(p) => {
                let p: Arc<dyn PreparedJob> = Arc::from(p);
                let planner = self.replayed_planner(&*p, stored_tasks, results);
                job.prepared = Some(p);
                job.planner = Some(planner);
            }
            Err(e) => {
                self.changed.insert(job.id);
                job.state = JobState::Failed;
                job.error = Some(format!("cannot resume the job: {e}"));
                job.finished_ms = Some(now_ms());
                w.push(self.job_write(job));
            }
        }
    }

    /// The planner of a job prepared as `p`, replayed ([`Planner::restore`]): the tasks it issued,
    /// the results it took in the order they came, and the tasks it dropped without a result.
    fn replayed_planner(
        &self,
        p: &dyn PreparedJob,
        stored_tasks: &[StoredTask],
        results: &StoredResults,
    ) -> Planner {
        let mut issued = Vec::new();
        let mut dropped = Vec::new();
        let mut kinds: HashMap<u64, TaskKind> = HashMap::new();
        for t in stored_tasks {
            if let Ok(kind) = serde_json::from_str::<TaskKind>(&t.kind) {
                issued.push(kind.clone());
                if t.state == "cancelled" && !results.outputs.contains_key(&t.id) {
                    dropped.push(kind.clone());
                }
                kinds.insert(t.id, kind);
            }
        }
        let replay: Vec<(TaskKind, TaskOutput)> = results
            .order
            .iter()
            .filter_map(|tid| Some((kinds.get(tid)?.clone(), results.outputs.get(tid)?.clone())))
            .collect();
        let shape = p.plan_shape();
        Planner::restore(
            shape.clone(),
            self.parallelism(&shape),
            &issued,
            &replay,
            &dropped,
        )
    }

    /// Rebuilds stored task `t` of `job` with its lease history; a task of an active job goes
    /// back where it was ([`Scheduler::reinstate`]). A task of unknown kind is left out.
    fn restore_task(
        &mut self,
        job: &mut Job,
        t: StoredTask,
        leases: &mut StoredLeases,
        now: Instant,
    ) {
        let Ok(kind) = serde_json::from_str::<TaskKind>(&t.kind) else {
            return;
        };
        let what = t
            .what
            .unwrap_or_else(|| describe(&kind, job.prepared.as_deref()));
        let mut task = Task {
            id: t.id,
            job_id: t.job_id,
            kind,
            what,
            state: TaskState::parse(&t.state),
            attempts: t.attempts,
            lease: None,
            last_error: t.last_error,
            cancel: false,
            workers: leases.workers.remove(&t.id).unwrap_or_default(),
            lease_ids: leases.ids.remove(&t.id).unwrap_or_default(),
            started_ms: leases.times.get(&t.id).map(|l| l.0),
            ended_ms: leases.times.get(&t.id).and_then(|l| l.1),
            resume: t
                .resume
                .as_deref()
                .and_then(|r| serde_json::from_str::<TaskKind>(r).ok()),
            progress: None,
            held_for: None,
        };
        if !job.state.is_final() {
            self.reinstate(&mut task, &mut leases.active, now);
        }
        job.tasks.push(task.id);
        self.tasks.insert(task.id, task);
    }

    /// Puts a task of an active job back where the store has it: in the queue, or on its worker
    /// under its active lease, which lives `lease_ms` from `now` so that the worker can still
    /// report. A running task whose lease is not active is queued again.
    fn reinstate(
        &mut self,
        task: &mut Task,
        active: &mut HashMap<u64, (String, String)>,
        now: Instant,
    ) {
        match task.state {
            TaskState::Queued => self.queue.push_back(task.id),
            TaskState::Running => match active.remove(&task.id) {
                Some((lease_id, worker_id)) => {
                    if let Some(wk) = self.workers.get_mut(&worker_id) {
                        wk.leases.insert(lease_id.clone());
                    }
                    self.leases.insert(
                        lease_id.clone(),
                        Lease {
                            task_id: task.id,
                            worker_id,
                            expires: now + Duration::from_millis(self.config.lease_ms),
                        },
                    );
                    task.lease = Some(lease_id);
                }
                None => {
                    task.state = TaskState::Queued;
                    self.queue.push_back(task.id);
                }
            },
            _ => {}
        }
    }

    /// Commits `w` with the final statuses of the jobs it settles; a store failure becomes
    /// [`SchedError::Store`] and memory is rebuilt from the store ([`Scheduler::rebuild`]), so
    /// memory never holds a change the store does not.
    pub(super) fn commit(&mut self, mut w: Vec<Write>) -> Result<(), SchedError> {
        self.settle(&mut w);
        match self.store.commit(&w) {
            Ok(()) => {
                self.settled_written();
                Ok(())
            }
            Err(e) => {
                tracing::error!("store commit failed: {e}");
                self.rebuild();
                Err(SchedError::Store(format!("the job store failed: {e}")))
            }
        }
    }

    /// For each changed job: summarises its finished tasks and, once it has settled (ended,
    /// nothing on a worker), adds its final status to `w`, written with the change that settled
    /// it.
    fn settle(&mut self, w: &mut Vec<Write>) {
        let changed: Vec<u64> = self.changed.iter().copied().collect();
        for id in changed {
            self.summarise(id);
            if self.is_settled(id) && !self.jobs[&id].final_stored {
                if let Some(st) = self.resident_status(id) {
                    w.push(Write::FinalStatus {
                        id,
                        status: to_json(&st),
                    });
                }
            }
        }
    }

    /// Marks the final statuses of settled jobs as stored (after a commit succeeded).
    fn settled_written(&mut self) {
        let changed: Vec<u64> = self.changed.iter().copied().collect();
        for id in changed {
            if self.is_settled(id) {
                if let Some(j) = self.jobs.get_mut(&id) {
                    j.final_stored = true;
                }
            }
        }
    }

    /// Whether resident job `id` has ended and none of its tasks is on a worker.
    fn is_settled(&self, id: u64) -> bool {
        self.jobs.get(&id).is_some_and(|job| {
            job.state.is_final()
                && !job
                    .tasks
                    .iter()
                    .any(|t| self.tasks.get(t).is_some_and(|t| t.lease.is_some()))
        })
    }

    /// Moves the finished tasks of job `id` (final state, not on a worker) out of memory into
    /// its summary, so memory holds the tasks in flight, not a big job's history.
    fn summarise(&mut self, id: u64) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        let mut keep = Vec::with_capacity(job.tasks.len());
        for &tid in &job.tasks {
            let finished = self.tasks.get(&tid).is_some_and(|t| {
                t.lease.is_none()
                    && matches!(
                        t.state,
                        TaskState::Done | TaskState::Failed | TaskState::Cancelled
                    )
            });
            if !finished {
                keep.push(tid);
                continue;
            }
            let t = self.tasks.remove(&tid).expect("checked");
            for l in &t.lease_ids {
                self.ended.remove(l);
            }
            match t.state {
                TaskState::Done => job.finished.done += 1,
                TaskState::Failed => job.finished.failed += 1,
                _ => job.finished.cancelled += 1,
            }
            if job.finished.recent.len() == STATUS_RECENT_TASKS {
                job.finished.recent.pop_front();
            }
            job.finished.recent.push_back(TaskView {
                row: TaskRow {
                    id: t.id,
                    what: t.what,
                    state: t.state,
                    attempts: t.attempts,
                    workers: t.workers,
                    last_error: t.last_error,
                    started_ms: None,
                    ended_ms: None,
                    run_ms: None,
                }
                .with_times(t.started_ms, t.ended_ms, 0),
                progress: None,
            });
        }
        job.tasks = keep;
    }

    /// Drains the effects of the calls so far: (jobs whose status changed, whether new tasks
    /// were queued).
    ///
    /// Evicts the changed jobs that have settled (see the module doc): a caller that needs the
    /// status of a job from before the eviction reads it before this call; after it, the same
    /// status comes from the store.
    pub fn take_effects(&mut self) -> (Vec<u64>, usize) {
        let changed: Vec<u64> = std::mem::take(&mut self.changed).into_iter().collect();
        for &id in &changed {
            self.maybe_evict(id);
        }
        let queued = if std::mem::replace(&mut self.queued_new, false) {
            self.queue.len()
        } else {
            0
        };
        (changed, queued)
    }

    /// Evicts job `id` when it has settled and its final status is stored.
    fn maybe_evict(&mut self, id: u64) {
        if !self.is_settled(id) || !self.jobs.get(&id).is_some_and(|j| j.final_stored) {
            return;
        }
        let job = self.jobs.remove(&id).expect("checked");
        for tid in &job.tasks {
            if let Some(task) = self.tasks.remove(tid) {
                for l in &task.lease_ids {
                    self.ended.remove(l);
                }
            }
        }
        self.held_bytes = self.held_bytes.saturating_sub(job.spec_bytes);
        *self.evicted.entry(job.state.as_str()).or_insert(0) += 1;
    }
}
