//! Reads: a job's status, its task pages and proof, the job list, the service status and the
//! numbers for `/metrics`.
//!
//! [`Scheduler::resident_status`] builds a resident job's status from memory alone;
//! [`stored_status`], [`list`], [`task_page`] and [`proof`] read the store through any
//! connection, so the coordinator runs them on its read-only connection outside the lock. No
//! read prepares (validates) a job: tasks are named when they are made.

use super::{
    cut, describe, now_ms, store_error, Counters, JobState, SchedError, Scheduler, TaskState,
    STATUS_POSITION_BYTES, STATUS_RECENT_TASKS,
};
use crate::answers::{
    HeldTask, JobList, JobStatus, JobSummary, ServiceStatus, TaskCounts, TaskPage, TaskRow,
    TaskView, Throughput, WorkerView,
};
use crate::store::Queries;
use gamesolver_shared::wire::{JobSpec, TaskKind};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// Task counts by state: queued, running, done, failed, cancelled.
type Counts = [u64; 5];

fn count_index(s: TaskState) -> usize {
    match s {
        TaskState::Queued => 0,
        TaskState::Running => 1,
        TaskState::Done => 2,
        TaskState::Failed => 3,
        TaskState::Cancelled => 4,
    }
}

/// The job as a status shows it: a position (or option) longer than
/// [`STATUS_POSITION_BYTES`] is cut to its start, and `position_bytes` gives its length, so
/// polling a job never copies a megabyte tree into every answer.
fn spec_view(spec: &JobSpec) -> (JobSpec, Option<usize>) {
    let long = spec.position.len() > STATUS_POSITION_BYTES;
    let shown = JobSpec {
        game: spec.game.clone(),
        game_params: spec
            .game_params
            .iter()
            .map(|(k, v)| (k.clone(), cut(v, STATUS_POSITION_BYTES).to_string()))
            .collect(),
        position: if long {
            cut(&spec.position, 256).to_string()
        } else {
            spec.position.clone()
        },
        algorithm: spec.algorithm.clone(),
        options: spec
            .options
            .iter()
            .map(|(k, v)| (k.clone(), cut(v, STATUS_POSITION_BYTES).to_string()))
            .collect(),
        limits: spec.limits.clone(),
    };
    (shown, long.then_some(spec.position.len()))
}

/// The `tasks` of a job's status: each task once by its real state (`done` only for a result
/// that was accepted; obsolete probes and the leftovers of an ended job are `cancelled`).
fn task_counts(counts: Counts) -> TaskCounts {
    TaskCounts {
        total: counts.iter().sum(),
        queued: counts[0],
        running: counts[1],
        done: counts[2],
        failed: counts[3],
        cancelled: counts[4],
    }
}

impl Scheduler {
    /// Jobs and tasks held in memory (tests: finished jobs are evicted).
    pub fn resident(&self) -> (usize, usize) {
        (self.jobs.len(), self.tasks.len())
    }

    /// The status of a job (`GET /v1/jobs/{id}`): from memory while the job is resident, else
    /// from the store, in the same shape. The coordinator answers HTTP reads with
    /// [`Scheduler::resident_status`] under its lock and [`stored_status`] on a reader, outside it.
    pub fn job_status(&self, id: u64) -> Result<JobStatus, SchedError> {
        match self.resident_status(id) {
            Some(st) => Ok(st),
            None => stored_status(&self.store.queries(), id),
        }
    }

    /// The status of a resident job, from memory only (no store, no validation), bounded: the
    /// tasks in flight and the latest [`STATUS_RECENT_TASKS`] finished ones. `None` when the job
    /// is not resident.
    pub fn resident_status(&self, id: u64) -> Option<JobStatus> {
        let job = self.jobs.get(&id)?;
        let mut counts: Counts = [
            0,
            0,
            job.finished.done,
            job.finished.failed,
            job.finished.cancelled,
        ];
        let mut tasks: Vec<TaskView> = job.finished.recent.iter().cloned().collect();
        let now = now_ms();
        for t in job.tasks.iter().filter_map(|tid| self.tasks.get(tid)) {
            counts[count_index(t.state)] += 1;
            tasks.push(TaskView {
                row: TaskRow {
                    id: t.id,
                    what: t.what.clone(),
                    state: t.state,
                    attempts: t.attempts,
                    workers: t.workers.clone(),
                    last_error: t.last_error.clone(),
                    started_ms: None,
                    ended_ms: None,
                    run_ms: None,
                }
                .with_times(t.started_ms, t.ended_ms, now),
                progress: match t.state {
                    TaskState::Running => t.progress.clone(),
                    _ => None,
                },
            });
        }
        tasks.sort_by_key(|t| t.row.id);
        let mut progress = match (&job.planner, &job.prepared, &job.final_progress) {
            (Some(p), Some(j), _) => p.progress(&**j),
            (_, _, Some(p)) => p.clone(),
            _ => job.progress_at_rest.clone().unwrap_or_else(|| json!({})),
        };
        if let (n @ 1.., Some(obj)) = (job.proved.len(), progress.as_object_mut()) {
            // Positions the job's workers exchange (docs/API.md 5.3a, "Proved positions").
            obj.insert("proved_positions".into(), n.into());
            obj.insert("proved_bytes".into(), job.proved.bytes().into());
        }
        if let (Some(k), Some(obj)) = (&job.kernel_progress, progress.as_object_mut()) {
            if !job.state.is_final() {
                obj.insert("kernel".into(), k.clone());
            }
        }
        let resumable = job
            .tasks
            .iter()
            .filter_map(|tid| self.tasks.get(tid))
            .filter(|t| t.resume.is_some() && !matches!(t.state, TaskState::Done))
            .count();
        if let (true, Some(obj)) = (resumable > 0, progress.as_object_mut()) {
            if !job.state.is_final() {
                // Tasks that would continue from a stored checkpoint if leased again.
                obj.insert("checkpointed_tasks".into(), resumable.into());
            }
        }
        let (shown, position_bytes) = spec_view(&job.spec);
        Some(JobStatus {
            id: job.id,
            state: job.state,
            progress,
            tasks: task_counts(counts),
            task_list: tasks,
            result: job.result.clone(),
            error: job.error.clone(),
            created_ms: job.created_ms,
            finished_ms: job.finished_ms,
            job: shown,
            position_bytes,
        })
    }

    /// Whether a job has ended (`None`: no such job).
    pub fn job_final(&self, id: u64) -> Option<bool> {
        match self.jobs.get(&id) {
            Some(j) => Some(j.state.is_final()),
            None => self
                .store
                .queries()
                .job_state(id)
                .ok()
                .flatten()
                .map(|_| true),
        }
    }

    /// Jobs newest first (see [`list`]), from the writer's connection.
    pub fn list(&self, limit: usize, before: Option<u64>) -> Result<JobList, SchedError> {
        list(&self.store.queries(), limit, before)
    }

    /// The store's identity (put in every lease grant).
    pub fn store_identity(&self) -> &str {
        self.store.identity()
    }

    /// A read-only connection to the store, for reads outside the scheduler's lock.
    pub fn reader(&self) -> anyhow::Result<crate::store::Reader> {
        self.store.reader()
    }

    /// Jobs by state: resident ones and evicted ones.
    fn job_counts(&self) -> BTreeMap<&'static str, u64> {
        let mut states: BTreeMap<&'static str, u64> = BTreeMap::new();
        for s in ["queued", "running", "done", "failed", "cancelled"] {
            states.insert(s, self.evicted.get(s).copied().unwrap_or(0));
        }
        for j in self.jobs.values() {
            *states.entry(j.state.as_str()).or_insert(0) += 1;
        }
        states
    }

    /// Tasks done in the last minute (throughput).
    pub(super) fn tasks_last_minute(&mut self) -> usize {
        while self
            .done_times
            .front()
            .is_some_and(|t| t.elapsed() > Duration::from_secs(60))
        {
            self.done_times.pop_front();
        }
        self.done_times.len()
    }

    /// `GET /v1/status`: workers, queue depth, throughput.
    pub fn status(&mut self) -> ServiceStatus {
        let per_minute = self.tasks_last_minute();
        let now = now_ms();
        let workers: Vec<WorkerView> = self
            .workers
            .iter()
            .filter(|(_, w)| w.last_seen.is_some() || !w.leases.is_empty())
            .map(|(id, w)| {
                let current: Vec<HeldTask> = w
                    .leases
                    .iter()
                    .filter_map(|l| {
                        let lease = self.leases.get(l)?;
                        let task = self.tasks.get(&lease.task_id)?;
                        Some(HeldTask {
                            task: task.id,
                            job: task.job_id,
                            what: task.what.clone(),
                        })
                    })
                    .collect();
                WorkerView {
                    id: id.clone(),
                    host: w.host.clone(),
                    threads: w.threads,
                    last_seen_ms: w.last_seen_ms,
                    last_seen_ago_ms: w.last_seen_ms.map(|t| now.saturating_sub(t)),
                    current,
                }
            })
            .collect();
        let queue_depth = self.queue_depth();
        let mut states = self.job_counts();
        states.retain(|_, n| *n > 0);
        ServiceStatus {
            workers,
            queue_depth,
            running: self.leases.len(),
            jobs: states
                .into_iter()
                .map(|(k, n)| (k.to_string(), n))
                .collect(),
            throughput: Throughput {
                tasks_last_minute: per_minute,
                tasks_done_total: self.counters.tasks_done,
            },
        }
    }

    fn queue_depth(&self) -> usize {
        self.queue
            .iter()
            .filter(|t| {
                self.tasks
                    .get(t)
                    .is_some_and(|t| t.state == TaskState::Queued)
            })
            .count()
    }

    /// Numbers for `/metrics`: counters, jobs by state, queue depth, running leases, live
    /// worker slots.
    pub fn metrics(&self) -> (Counters, BTreeMap<&'static str, u64>, usize, usize, usize) {
        (
            self.counters.clone(),
            self.job_counts(),
            self.queue_depth(),
            self.leases.len(),
            self.live_worker_threads(),
        )
    }

    /// Stored results of a task (tests: "counted once").
    pub fn stored_results(&self, task_id: u64) -> Result<u64, SchedError> {
        self.store
            .result_count(task_id)
            .map_err(|e| SchedError::Store(e.to_string()))
    }
}

/// The status of a job that is not resident, from the store: the final status stored when it
/// settled (one query, whatever its task count); for a job settled by an older version, built
/// from its rows (a bounded task list, probe targets in the internal scale). Never prepares
/// the job.
pub fn stored_status(q: &Queries<'_>, id: u64) -> Result<JobStatus, SchedError> {
    match q.final_status(id).map_err(store_error)? {
        None => return Err(SchedError::NotFound(format!("no job {id}"))),
        Some(Some(text)) => {
            return serde_json::from_str(&text)
                .map_err(|e| SchedError::Store(format!("job {id}'s stored status: {e}")))
        }
        Some(None) => {}
    }
    let job = q
        .job(id)
        .map_err(store_error)?
        .ok_or_else(|| SchedError::NotFound(format!("no job {id}")))?;
    let mut counts: Counts = [0; 5];
    for (state, n) in q.task_counts(id).map_err(store_error)? {
        counts[count_index(TaskState::parse(&state))] += n;
    }
    let after = q
        .last_task_id_before(id, STATUS_RECENT_TASKS)
        .map_err(store_error)?;
    let tasks: Vec<TaskView> = q
        .tasks(id, after, STATUS_RECENT_TASKS)
        .map_err(store_error)?
        .into_iter()
        .map(|t| TaskView {
            row: stored_view(t),
            progress: None,
        })
        .collect();
    let parse = |text: &Option<String>| {
        text.as_deref()
            .and_then(|r| serde_json::from_str::<Value>(r).ok())
    };
    let spec: JobSpec = serde_json::from_str(&job.spec).unwrap_or_default();
    let (shown, position_bytes) = spec_view(&spec);
    Ok(JobStatus {
        id: job.id,
        state: JobState::parse(&job.state).unwrap_or(JobState::Failed),
        progress: parse(&job.progress).unwrap_or_else(|| json!({})),
        tasks: task_counts(counts),
        task_list: tasks,
        result: parse(&job.result),
        error: job.error.clone(),
        created_ms: job.created_ms,
        finished_ms: job.finished_ms,
        job: shown,
        position_bytes,
    })
}

fn stored_view((t, workers): (crate::store::StoredTask, Vec<String>)) -> TaskRow {
    let what = t.what.unwrap_or_else(|| {
        serde_json::from_str::<TaskKind>(&t.kind)
            .map(|k| describe(&k, None))
            .unwrap_or_else(|_| "?".into())
    });
    TaskRow {
        id: t.id,
        what,
        state: TaskState::parse(&t.state),
        attempts: t.attempts,
        workers,
        last_error: t.last_error,
        started_ms: None,
        ended_ms: None,
        run_ms: None,
    }
    .with_times(t.started_ms, t.ended_ms, now_ms())
}

/// `GET /v1/jobs/{id}/tasks`: up to `limit` tasks of job `id` with ids above `after`, by id,
/// from the store (every task of the job, finished or not), and `next_after` for the next page.
pub fn task_page(
    q: &Queries<'_>,
    id: u64,
    after: u64,
    limit: usize,
) -> Result<TaskPage, SchedError> {
    if q.job_state(id).map_err(store_error)?.is_none() {
        return Err(SchedError::NotFound(format!("no job {id}")));
    }
    let tasks: Vec<TaskRow> = q
        .tasks(id, after, limit)
        .map_err(store_error)?
        .into_iter()
        .map(stored_view)
        .collect();
    let next = if tasks.len() == limit && limit > 0 {
        tasks.last().map(|t| t.id)
    } else {
        None
    };
    Ok(TaskPage {
        tasks,
        next_after: next,
    })
}

/// `GET /v1/jobs/{id}/proof`: the job's proof certificate; 404 when it has none.
pub fn proof(q: &Queries<'_>, id: u64) -> Result<Value, SchedError> {
    let Some(state) = q.job_state(id).map_err(store_error)? else {
        return Err(SchedError::NotFound(format!("no job {id}")));
    };
    match q.proof(id).map_err(store_error)? {
        Some(text) => serde_json::from_str(&text)
            .map_err(|e| SchedError::Store(format!("job {id}'s stored proof: {e}"))),
        None => Err(SchedError::NotFound(format!(
            "job {id} ({state}) has no proof certificate (only proof-number jobs with option proof=true make one, once they are done)"
        ))),
    }
}

/// Jobs newest first, at most `limit`, with ids below `before` when given (paging: pass the
/// last id of a page to get the next), with a one-line summary each. Read from the store,
/// which holds every job (resident ones are written through before any answer); only the
/// columns a summary needs are read.
pub fn list(q: &Queries<'_>, limit: usize, before: Option<u64>) -> Result<JobList, SchedError> {
    let rows = q.list(limit, before).map_err(store_error)?;
    let jobs: Vec<JobSummary> = rows
        .into_iter()
        .map(|j| {
            let state = JobState::parse(&j.state).unwrap_or(JobState::Failed);
            let what = format!(
                "{} {}",
                j.game.as_deref().unwrap_or("?"),
                j.algorithm.as_deref().unwrap_or("?")
            );
            let value = j
                .value
                .as_deref()
                .and_then(|v| serde_json::from_str::<Value>(v).ok());
            let summary = match (state, &value, &j.error) {
                (JobState::Done, Some(v), _) => format!("{what}: value {v}"),
                (_, _, Some(e)) => format!("{what}: {e}"),
                (s, _, _) => format!("{what}: {}", s.as_str()),
            };
            JobSummary {
                id: j.id,
                state,
                summary,
                created_ms: j.created_ms,
            }
        })
        .collect();
    let next = if jobs.len() == limit && limit > 0 {
        jobs.last().map(|j| j.id)
    } else {
        None
    };
    Ok(JobList {
        jobs,
        next_before: next,
    })
}
