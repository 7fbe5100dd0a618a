//! Scaling by simulation: a job's real plan and real kernels, its tasks scheduled in virtual time
//! on N workers ([`simulate`], [`curve`]); the virtual-time sibling of [`super::run_local`].
//!
//! The planner makes exactly the decisions the coordinator makes with N one-slot workers
//! (parallelism `min(N, max_parallelism)`; after every accepted result the obsolete tasks are
//! cancelled, then new tasks asked for; the leaf each free worker searched last is passed to
//! [`Planner::prefer_near`] unless `locality: false`). Every task runs for real, one at a time, in
//! this process; its completion is scheduled at `start + dispatch + cost` in virtual time, the cost
//! by [`CostModel`]: `Nodes` (nodes / rate; with a given rate a report is reproducible on any
//! machine) or `Cpu` (measured, noisy).
//!
//! Determinism: completions at one virtual time are taken in issue order, a queued task goes to the
//! free worker of lowest index. Each virtual worker prepares the job once and keeps it, as a real
//! worker caches its prepared job. A cancelled task frees its worker at once, or with `heartbeat`
//! at its next heartbeat tick; what it ran until then is wasted work. `shared_tables` runs every
//! worker on one prepared job: an upper bound on what shared tables could give, not a model of a
//! deployment. [`curve`] reuses the run of the smallest worker count beyond what ever ran at once.
//!
//! The rules in full: docs/scaling.md, "Scaling by simulation".

use super::job::{PreparedJob, SolveError};
use super::leaf_cache::{Entry, LeafCache};
use super::local::job_result;
use super::planner::Planner;
use crate::search::Control;
use crate::wire::{JobResult, StopReason, TaskKind, TaskOutput};
use std::collections::{BTreeSet, VecDeque};

/// What builds the job: called once for the plan and once per virtual worker.
pub type Prepare<'a> = dyn Fn() -> Result<Box<dyn PreparedJob>, SolveError> + Sync + 'a;

/// Largest number of virtual workers.
pub const MAX_WORKERS: usize = 4096;
/// Default dispatch latency per task in milliseconds: the median time of a trivial job through
/// the service with one to four idle workers (docs/BENCHMARKS.md, `dispatch_latency`: 2.3 ms).
pub const DEFAULT_DISPATCH_MS: f64 = 2.3;

/// How a task's virtual duration is derived from its measured cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CostModel {
    /// Nodes at a rate (deterministic).
    Nodes,
    /// Measured CPU time.
    Cpu,
}

/// The settings of one simulated run.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Virtual workers, one task slot each (1..=[`MAX_WORKERS`]).
    pub workers: usize,
    /// The coordinator's cap on the tasks one job keeps in flight.
    pub max_parallelism: usize,
    /// How a task's duration is derived.
    pub model: CostModel,
    /// Nodes per second for [`CostModel::Nodes`]; `None`: measured on the N = 1 run ([`curve`]).
    pub rate: Option<f64>,
    /// Seconds added to every task (lease, report, planning).
    pub dispatch_s: f64,
    /// Heartbeat period in seconds: a cancelled running task frees its worker at its next
    /// heartbeat tick. `None`: at once.
    pub heartbeat_s: Option<f64>,
    /// Threads each task's kernel may use.
    pub threads: usize,
    /// The resident set this process may reach: every virtual worker keeps its prepared job
    /// and tables here, so a run of many workers can outgrow the machine; a run that passes the
    /// limit stops with an error (checked after each worker's first task and every
    /// [`MEMORY_CHECK_EVERY`] tasks; Linux only). `None`: no check.
    pub memory_limit: Option<u64>,
    /// Every virtual worker runs its tasks on one prepared job, so on one set of tables (see
    /// the module doc): what perfect sharing of the kernels' tables among workers would give.
    pub shared_tables: bool,
    /// Workers exchange proved positions through the coordinator, as the service's do: a
    /// finished task's [`PreparedJob::take_proved`] entries reach every other worker's tables
    /// before its next task that starts at or after the finish (virtual time). Tasks are not
    /// taken from the cache with it (their cost depends on what their worker learnt).
    pub exchange: bool,
    /// Job-level plans pick a freed worker's next leaf near the one it searched last, as the
    /// coordinator does (see the module doc); `false` turns that off, to see what it buys.
    pub locality: bool,
    /// Task results recorded by earlier runs (other worker counts, earlier invocations): a
    /// task found there is not run, its output, nodes and CPU time are replayed
    /// ([`super::leaf_cache`], which says what the key leaves out).
    pub cache: Option<std::sync::Arc<LeafCache>>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            workers: 1,
            max_parallelism: MAX_WORKERS,
            model: CostModel::Nodes,
            rate: None,
            dispatch_s: DEFAULT_DISPATCH_MS / 1000.0,
            heartbeat_s: None,
            threads: 1,
            memory_limit: None,
            shared_tables: false,
            exchange: false,
            locality: true,
            cache: None,
        }
    }
}

/// One task of a simulated run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TaskRecord {
    /// The task.
    pub task: TaskKind,
    /// The virtual worker that ran it.
    pub worker: usize,
    /// Virtual start and end, seconds.
    pub start: f64,
    /// End: its completion, or when its worker was freed (cancelled or cut).
    pub end: f64,
    /// Nodes of the whole task, as measured.
    pub nodes: u64,
    /// CPU seconds of the whole task, as measured.
    pub cpu_s: f64,
    /// Its share of `nodes` spent before `end`.
    pub spent_nodes: f64,
    /// Cancelled as obsolete, cut when the job ended, or its result not taken.
    pub wasted: bool,
}

/// The outcome of one simulated run.
#[derive(Clone, Debug)]
pub struct SimRun {
    /// Virtual workers.
    pub workers: usize,
    /// The planner's parallelism, `min(workers, max_parallelism)`.
    pub parallelism: usize,
    /// Virtual time to the result, seconds.
    pub time_s: f64,
    /// The job's result (its `elapsed_ms` is the virtual time).
    pub result: JobResult,
    /// Every task started, in start order.
    pub tasks: Vec<TaskRecord>,
    /// Tasks the planner issued (some never started: cancelled while queued).
    pub issued: usize,
    /// Issued tasks cancelled, queued or running, or whose result was not taken.
    pub cancelled: usize,
    /// Whether a task ever waited for a free worker (if not, more workers change nothing).
    pub waited: bool,
    /// Largest number of workers busy at once.
    pub peak_busy: usize,
}

impl SimRun {
    /// Worker-seconds spent on tasks (wasted ones up to when they were freed).
    pub fn busy_s(&self) -> f64 {
        self.tasks.iter().map(|t| t.end - t.start).sum()
    }
    /// Worker-seconds spent on wasted tasks.
    pub fn wasted_s(&self) -> f64 {
        self.tasks
            .iter()
            .filter(|t| t.wasted)
            .map(|t| t.end - t.start)
            .sum::<f64>()
            + 0.0 // an empty sum is -0.0
    }
    /// Nodes spent, wasted work included.
    pub fn spent_nodes(&self) -> f64 {
        self.tasks.iter().map(|t| t.spent_nodes).sum()
    }
    /// CPU seconds of the tasks that ran to completion.
    pub fn cpu_s(&self) -> f64 {
        self.tasks
            .iter()
            .filter(|t| !t.wasted)
            .map(|t| t.cpu_s)
            .sum()
    }
    /// Idle worker-time over `workers * time`.
    pub fn idle_share(&self) -> f64 {
        let all = self.workers as f64 * self.time_s;
        if all > 0.0 {
            (1.0 - self.busy_s() / all).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
    /// The same run seen with `workers` workers, when more workers change nothing (no task
    /// ever waited and the parallelism is the same): only idle time grows.
    fn with_workers(&self, workers: usize) -> SimRun {
        SimRun {
            workers,
            ..self.clone()
        }
    }
}

/// CPU seconds of this thread (`threads == 1`) or this process, monotonic.
fn cpu_now(threads: usize) -> f64 {
    #[cfg(target_os = "linux")]
    {
        let clock = if threads <= 1 {
            libc::CLOCK_THREAD_CPUTIME_ID
        } else {
            libc::CLOCK_PROCESS_CPUTIME_ID
        };
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid, writable timespec; clock_gettime only writes it.
        if unsafe { libc::clock_gettime(clock, &mut t) } == 0 {
            return t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9;
        }
    }
    let _ = threads;
    // Elsewhere: wall-clock time since the first call (the process is otherwise idle).
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}

/// This process's resident set in bytes (Linux's `VmRSS`; `None` elsewhere).
fn resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// Tasks between two looks at the resident set (and after every worker's first task).
const MEMORY_CHECK_EVERY: u64 = 64;

/// A task running on a virtual worker.
struct Running {
    seq: u64,
    task: TaskKind,
    worker: usize,
    start: f64,
    /// When its worker is freed (completion, or the cancellation taking effect).
    end: f64,
    /// Its natural completion.
    done_at: f64,
    nodes: u64,
    cpu_s: f64,
    output: TaskOutput,
    cancelled: bool,
}

/// Simulates `cfg.workers` workers running the job that `prepare` builds (called once for the
/// plan and once per virtual worker that runs a task). With [`CostModel::Nodes`] and no rate, only
/// a sequential run (parallelism 1) can be simulated; its times are then in CPU seconds (see
/// [`curve`], which derives the rate from it).
pub fn simulate(prepare: &Prepare<'_>, cfg: &SimConfig) -> Result<SimRun, SolveError> {
    crate::search::run_on_kernel_stack(|| simulate_here(prepare, cfg))
}

fn simulate_here(prepare: &Prepare<'_>, cfg: &SimConfig) -> Result<SimRun, SolveError> {
    if !(1..=MAX_WORKERS).contains(&cfg.workers) {
        return Err(SolveError::bad(format!(
            "workers must be between 1 and {MAX_WORKERS}"
        )));
    }
    let parallelism = cfg.workers.min(cfg.max_parallelism.max(1));
    let rate = match (cfg.model, cfg.rate) {
        (CostModel::Nodes, Some(r)) if r.is_finite() && r > 0.0 => Some(r),
        (CostModel::Nodes, Some(_)) => {
            return Err(SolveError::bad("the node rate must be a positive number"))
        }
        (CostModel::Nodes, None) if parallelism > 1 => {
            return Err(SolveError::bad(
                "the node model needs a rate to simulate more than one task in flight",
            ))
        }
        _ => None,
    };
    let cost = |nodes: u64, cpu_s: f64| match rate {
        Some(r) => nodes as f64 / r,
        None => cpu_s,
    };
    let dispatch = if cfg.dispatch_s.is_finite() {
        cfg.dispatch_s.max(0.0)
    } else {
        0.0
    };
    let root = prepare()?;
    let limits = root.job().limits.clone();
    // What a cached answer must have been run with (see `leaf_cache`): the job as given, the
    // kernel threads, one table for all workers or one each.
    let job_text = format!(
        "{} threads={} shared_tables={}",
        serde_json::to_string(root.job()).expect("a job serialises"),
        cfg.threads,
        cfg.shared_tables
    );
    // Jobs that pass artifacts between tasks (retrograde builds) share one store in memory:
    // the transfers a real build makes cost nothing here.
    let ctl = Control::unlimited()
        .with_threads(cfg.threads)
        .with_artifacts(std::sync::Arc::new(
            crate::search::retrograde::artifacts::MemoryArtifacts::default(),
        ));
    let mut planner = Planner::new(root.plan_shape(), parallelism);
    let mut prepared: Vec<Option<Box<dyn PreparedJob>>> = Vec::new();
    let mut free: BTreeSet<usize> = (0..cfg.workers).collect();
    // The path of the leaf each worker searched last (job-level plans' locality hint).
    let mut last_leaf: Vec<Vec<String>> = vec![Vec::new(); cfg.workers];
    let mut queue: VecDeque<TaskKind> = VecDeque::new();
    // Proved positions: published (finish time, publisher, entries) not yet reached by the
    // virtual clock, those reached in order of reaching, and how far each worker has read.
    let mut unpublished: Vec<(f64, usize, Vec<crate::wire::Proved>)> = Vec::new();
    let mut published: Vec<(usize, Vec<crate::wire::Proved>)> = Vec::new();
    let mut read_to: Vec<usize> = vec![0; cfg.workers];
    let exchange = cfg.exchange && !cfg.shared_tables;
    let mut running: Vec<Running> = Vec::new();
    let mut records: Vec<TaskRecord> = Vec::new();
    let (mut issued, mut cancelled, mut seq) = (0usize, 0usize, 0u64);
    let (mut waited, mut peak_busy) = (false, 0usize);
    let mut now = 0.0f64;
    let record = |r: &Running, wasted: bool| {
        let whole = r.done_at - r.start;
        let share = if whole > 0.0 {
            ((r.end - r.start) / whole).clamp(0.0, 1.0)
        } else {
            1.0
        };
        TaskRecord {
            task: r.task.clone(),
            worker: r.worker,
            start: r.start,
            end: r.end,
            nodes: r.nodes,
            cpu_s: r.cpu_s,
            spent_nodes: if wasted {
                r.nodes as f64 * share
            } else {
                r.nodes as f64
            },
            wasted,
        }
    };
    loop {
        // The coordinator's `advance`: forget and cancel the obsolete, then ask for more.
        for kind in planner.obsolete() {
            planner.forget(&kind);
            if let Some(pos) = queue.iter().position(|t| *t == kind) {
                queue.remove(pos);
                cancelled += 1;
            }
            for r in running
                .iter_mut()
                .filter(|r| r.task == kind && !r.cancelled)
            {
                r.cancelled = true;
                cancelled += 1;
                let at = match cfg.heartbeat_s {
                    Some(h) if h > 0.0 => {
                        let ticks = ((now - r.start) / h).ceil().max(1.0);
                        r.start + ticks * h
                    }
                    _ => now,
                };
                r.end = at.min(r.done_at).max(now);
            }
        }
        if !planner.is_done() {
            planner.set_parallelism(parallelism);
            // The free workers that will not take a task already queued take the new ones,
            // lowest index first: the leaves they searched last are the planner's hints (one
            // per slot the planner will fill).
            if cfg.locality {
                let slots = parallelism.saturating_sub(planner.pending().len());
                let hints = free
                    .iter()
                    .skip(queue.len())
                    .take(slots)
                    .map(|w| last_leaf[*w].clone())
                    .collect();
                planner.prefer_near(hints);
            }
            for kind in planner.next_tasks() {
                issued += 1;
                queue.push_back(kind);
            }
        }
        if planner.is_done() {
            break;
        }
        // Free workers lease queued tasks, lowest index first; each task runs now, for real.
        while let Some(task) = queue.front().cloned() {
            let Some(worker) = free.pop_first() else {
                waited = true;
                break;
            };
            queue.pop_front();
            if let TaskKind::Leaf { path, .. } = &task {
                last_leaf[worker] = path.clone();
            }
            let key = (!exchange)
                .then(|| cfg.cache.as_ref().map(|c| c.key(&job_text, &task)))
                .flatten();
            let hit = match (&cfg.cache, &key) {
                (Some(c), Some(k)) => c.get(k),
                _ => None,
            };
            let Entry {
                output,
                nodes,
                cpu_s,
            } = match hit {
                Some(e) => e,
                None => {
                    let slot = if cfg.shared_tables { 0 } else { worker };
                    if prepared.len() <= slot {
                        prepared.resize_with(slot + 1, || None);
                    }
                    let first_task = prepared[slot].is_none();
                    if first_task {
                        prepared[slot] = Some(prepare()?);
                    }
                    let job = prepared[slot].as_deref().expect("prepared above");
                    if exchange {
                        unpublished.sort_by(|a, b| a.0.total_cmp(&b.0));
                        let reached = unpublished.partition_point(|p| p.0 <= now);
                        published.extend(unpublished.drain(..reached).map(|p| (p.1, p.2)));
                        for (from, entries) in &published[read_to[worker]..] {
                            if *from != worker {
                                job.learn_proved(entries);
                            }
                        }
                        read_to[worker] = published.len();
                    }
                    let task_ctl = ctl.for_task(None, limits.node_limit);
                    let c0 = cpu_now(cfg.threads);
                    let out = job.run(&task, &task_ctl);
                    let cpu_s = (cpu_now(cfg.threads) - c0).max(0.0);
                    let output = match (out, task_ctl.should_stop()) {
                        (Ok(out), _) => out,
                        (Err(_), Some(r @ StopReason::Nodes)) if planner.ends_on_stop(&task) => {
                            TaskOutput {
                                nodes: task_ctl.nodes(),
                                ..TaskOutput::stopped(r)
                            }
                        }
                        (Err(e), _) => return Err(e),
                    };
                    if let Some(limit) = cfg.memory_limit {
                        if first_task || seq % MEMORY_CHECK_EVERY == 0 {
                            let held = resident().unwrap_or(0);
                            if held > limit {
                                return Err(SolveError::bad(format!(
                                    "the run of {} workers holds {} MiB in this process, past \
                                     the {} MiB this machine can give ({} virtual workers \
                                     prepared so far): bound each worker's tables \
                                     (--memory-mb) or simulate fewer workers",
                                    cfg.workers,
                                    held >> 20,
                                    limit >> 20,
                                    prepared.iter().filter(|p| p.is_some()).count()
                                )));
                            }
                        }
                    }
                    let entry = Entry {
                        nodes: output.nodes.max(task_ctl.nodes()),
                        output,
                        cpu_s,
                    };
                    if let (Some(c), Some(k)) = (&cfg.cache, key) {
                        c.put(k, entry.clone());
                        c.save_if_due().map_err(SolveError::Internal)?;
                    }
                    entry
                }
            };
            let done_at = now + dispatch + cost(nodes, cpu_s);
            if exchange {
                if let Some(job) = prepared.get(worker).and_then(|p| p.as_deref()) {
                    let entries = job.take_proved();
                    if !entries.is_empty() {
                        unpublished.push((done_at, worker, entries));
                    }
                }
            }
            running.push(Running {
                seq,
                task,
                worker,
                start: now,
                end: done_at,
                done_at,
                nodes,
                cpu_s,
                output,
                cancelled: false,
            });
            seq += 1;
        }
        peak_busy = peak_busy.max(running.len());
        // The earliest event: a completion, or a cancellation taking effect (issue order on ties).
        let Some(next) = running
            .iter()
            .enumerate()
            .min_by(|(_, a), (_, b)| a.end.total_cmp(&b.end).then(a.seq.cmp(&b.seq)))
            .map(|(i, _)| i)
        else {
            return Err(SolveError::Internal(
                "the plan ended without a result".into(),
            ));
        };
        let r = running.swap_remove(next);
        now = now.max(r.end);
        free.insert(r.worker);
        if r.cancelled {
            records.push(record(&r, true));
            continue;
        }
        let taken = planner.on_result(&r.task, r.output.clone());
        if !taken {
            cancelled += 1;
        }
        records.push(record(&r, !taken));
    }
    // The job ended: what still runs is cut here.
    for mut r in running {
        r.end = r.end.min(now).max(r.start);
        if !r.cancelled {
            cancelled += 1;
        }
        records.push(record(&r, true));
    }
    records.sort_by(|a, b| a.start.total_cmp(&b.start));
    let out = planner.finish(root.as_ref());
    let mut result = job_result(root.as_ref(), out, (now * 1000.0).round() as u64);
    result.nodes = records.iter().map(|t| t.spent_nodes.round() as u64).sum();
    Ok(SimRun {
        workers: cfg.workers,
        parallelism,
        time_s: now,
        result,
        tasks: records,
        issued,
        cancelled,
        waited,
        peak_busy,
    })
}

/// One row of a scaling curve.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CurveRow {
    /// Virtual workers.
    pub workers: usize,
    /// The planner's parallelism.
    pub parallelism: usize,
    /// Virtual time to the result, seconds.
    pub time_s: f64,
    /// T(1) / T(N).
    pub speedup: f64,
    /// Speedup / N.
    pub efficiency: f64,
    /// Nodes spent (wasted work included) over the nodes of the N = 1 run.
    pub work_inflation: f64,
    /// Idle worker-time over N * T(N).
    pub idle_share: f64,
    /// Worker-time on wasted tasks over all busy worker-time.
    pub wasted_share: f64,
    /// Tasks issued by the planner.
    pub tasks_issued: usize,
    /// Tasks cancelled (obsolete, or cut when the job ended).
    pub tasks_cancelled: usize,
    /// Nodes spent.
    pub nodes: u64,
    /// Largest number of workers busy at once.
    pub peak_busy: usize,
    /// The job's value.
    pub value: serde_json::Value,
}

/// A scaling curve: one row per worker count, and what it was measured with.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Curve {
    /// The duration model.
    pub model: CostModel,
    /// Nodes per CPU second used by the node model (given, or measured on the N = 1 run).
    pub rate: f64,
    /// Dispatch latency per task, milliseconds.
    pub dispatch_ms: f64,
    /// The cap on the planner's parallelism.
    pub max_parallelism: usize,
    /// Every virtual worker ran on one set of tables ([`SimConfig::shared_tables`]).
    pub shared_tables: bool,
    /// Leaves were picked near the freed worker's last one ([`SimConfig::locality`]).
    pub locality: bool,
    /// Whether every row found the same value.
    pub same_value: bool,
    /// The rows, by worker count.
    pub rows: Vec<CurveRow>,
    /// The result at N = 1.
    pub result: JobResult,
    /// The task-result cache's counts over the whole curve, when one was used.
    pub cache: Option<super::leaf_cache::CacheStats>,
    /// Every task of every row's run, by worker count (not serialised with the curve: the
    /// `simulate --trace` file holds them).
    #[serde(skip)]
    pub tasks: Vec<(usize, Vec<TaskRecord>)>,
}

/// The sequential run `run` (parallelism 1, times in CPU seconds) retimed with the node model at
/// `rate`: with one task in flight the order of events does not depend on durations, so this is
/// the run the node model gives.
fn retime_sequential(run: &mut SimRun, rate: f64, dispatch: f64) {
    let mut now = 0.0;
    for t in &mut run.tasks {
        let whole = t.end - t.start;
        t.start = now;
        now += if t.wasted {
            whole
        } else {
            dispatch + t.nodes as f64 / rate
        };
        t.end = now;
    }
    run.time_s = now;
    run.result.elapsed_ms = (now * 1000.0).round() as u64;
}

/// Simulates the job for every worker count in `workers` (sorted, deduplicated; N = 1 is always
/// run, as the baseline of speedup and work inflation) with the settings of `base`.
pub fn curve(
    prepare: &Prepare<'_>,
    workers: &[usize],
    base: &SimConfig,
) -> Result<Curve, SolveError> {
    let mut counts: Vec<usize> = workers.to_vec();
    counts.push(1);
    counts.sort_unstable();
    counts.dedup();
    if let Some(&n) = counts.iter().find(|&&n| !(1..=MAX_WORKERS).contains(&n)) {
        return Err(SolveError::bad(format!(
            "worker count {n} is outside 1..={MAX_WORKERS}"
        )));
    }
    let dispatch = base.dispatch_s.max(0.0);
    // N = 1, the baseline; with the node model and no rate, measured in CPU time first.
    let first = SimConfig {
        workers: 1,
        model: if base.rate.is_none() {
            CostModel::Cpu
        } else {
            base.model
        },
        ..base.clone()
    };
    let save = || match &base.cache {
        Some(c) => c.save().map_err(SolveError::Internal),
        None => Ok(()),
    };
    let mut one = simulate(prepare, &first)?;
    save()?;
    let measured = {
        let cpu = one.cpu_s();
        let nodes: u64 = one
            .tasks
            .iter()
            .filter(|t| !t.wasted)
            .map(|t| t.nodes)
            .sum();
        if cpu > 0.0 && nodes > 0 {
            nodes as f64 / cpu
        } else {
            1.0e6
        }
    };
    let rate = base.rate.unwrap_or(measured);
    if base.model == CostModel::Nodes && base.rate.is_none() {
        retime_sequential(&mut one, rate, dispatch);
    }
    let cfg = SimConfig {
        rate: Some(rate),
        ..base.clone()
    };
    let mut runs: Vec<SimRun> = Vec::new();
    for &n in &counts {
        let parallelism = n.min(cfg.max_parallelism.max(1));
        let run = if n == 1 {
            one.clone()
        } else if let Some(prev) = runs
            .iter()
            .rev()
            .find(|r| r.parallelism == parallelism && !r.waited && r.workers > 1)
        {
            prev.with_workers(n)
        } else {
            let run = simulate(
                prepare,
                &SimConfig {
                    workers: n,
                    ..cfg.clone()
                },
            )?;
            save()?;
            run
        };
        runs.push(run);
    }
    let t1 = one.time_s;
    let nodes1 = one.spent_nodes().max(1.0);
    let rows: Vec<CurveRow> = runs
        .iter()
        .filter(|r| workers.contains(&r.workers) || r.workers == 1)
        .map(|r| {
            let speedup = if r.time_s > 0.0 { t1 / r.time_s } else { 1.0 };
            let busy = r.busy_s();
            CurveRow {
                workers: r.workers,
                parallelism: r.parallelism,
                time_s: r.time_s,
                speedup,
                efficiency: speedup / r.workers as f64,
                work_inflation: r.spent_nodes() / nodes1,
                idle_share: r.idle_share(),
                wasted_share: if busy > 0.0 { r.wasted_s() / busy } else { 0.0 },
                tasks_issued: r.issued,
                tasks_cancelled: r.cancelled,
                nodes: r.spent_nodes().round() as u64,
                peak_busy: r.peak_busy,
                value: r.result.value.clone(),
            }
        })
        .collect();
    let same_value = rows.iter().all(|r| r.value == one.result.value);
    let tasks = runs
        .iter()
        .filter(|r| workers.contains(&r.workers) || r.workers == 1)
        .map(|r| (r.workers, r.tasks.clone()))
        .collect();
    Ok(Curve {
        model: base.model,
        rate,
        dispatch_ms: dispatch * 1000.0,
        max_parallelism: base.max_parallelism,
        shared_tables: base.shared_tables,
        locality: base.locality,
        same_value,
        rows,
        result: one.result,
        cache: base.cache.as_ref().map(|c| c.stats()),
        tasks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PlanShape;
    use crate::wire::{JobSpec, RawBounds};

    /// A fake job: probes of a value `v` over a shape's bounds, each probe costing
    /// `probe_cost(target)` nodes; runs costing `(index + 1) * 1000` nodes and scoring `index`.
    struct Fake {
        spec: JobSpec,
        shape: PlanShape,
        v: i32,
        probe_cost: fn(i32) -> u64,
    }

    impl PreparedJob for Fake {
        fn job(&self) -> &JobSpec {
            &self.spec
        }
        fn plan_shape(&self) -> PlanShape {
            self.shape.clone()
        }
        fn run(&self, task: &TaskKind, _ctl: &Control) -> Result<TaskOutput, SolveError> {
            Ok(match task {
                TaskKind::Probe { target } => TaskOutput {
                    nodes: (self.probe_cost)(*target),
                    raw: Some(if self.v >= *target {
                        RawBounds {
                            lower: *target,
                            upper: i32::MAX,
                        }
                    } else {
                        RawBounds {
                            lower: i32::MIN,
                            upper: target - 1,
                        }
                    }),
                    ..TaskOutput::default()
                },
                TaskKind::Run { index, .. } => TaskOutput {
                    nodes: (*index as u64 + 1) * 1000,
                    value: (*index).into(),
                    ..TaskOutput::default()
                },
                _ => TaskOutput {
                    nodes: 500,
                    value: 7.into(),
                    ..TaskOutput::default()
                },
            })
        }
    }

    fn fake(
        shape: PlanShape,
        v: i32,
        probe_cost: fn(i32) -> u64,
    ) -> impl Fn() -> Result<Box<dyn PreparedJob>, SolveError> + Sync {
        move || {
            Ok(Box::new(Fake {
                spec: JobSpec::new("tictactoe", "", "minimax"),
                shape: shape.clone(),
                v,
                probe_cost,
            }) as Box<dyn PreparedJob>)
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_run_past_the_memory_limit_stops_with_one_line() {
        let prep = fake(
            PlanShape::Runs {
                count: 4,
                base_seed: 1,
            },
            0,
            |_| 0,
        );
        let run = |limit: u64| {
            simulate(
                &prep,
                &SimConfig {
                    memory_limit: Some(limit),
                    ..cfg(2)
                },
            )
        };
        // The process holds more than a MiB, so the first task's check stops the run.
        let e = run(1 << 20).expect_err("stopped");
        let m = e.to_string();
        assert!(matches!(e, SolveError::BadInput(_)), "{m}");
        assert!(m.contains("2 workers") && m.contains("--memory-mb"), "{m}");
        assert!(!m.contains('\n'), "{m}");
        // Far above what it holds: the same run completes.
        let ok = run(1 << 50).expect("runs");
        assert_eq!(ok.tasks.len(), 4);
    }

    /// 1,000 nodes a second, no dispatch latency: a task of k thousand nodes takes k seconds.
    fn cfg(workers: usize) -> SimConfig {
        SimConfig {
            workers,
            rate: Some(1000.0),
            dispatch_s: 0.0,
            ..SimConfig::default()
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// With shared tables every virtual worker runs on one prepared job (the plan's own and
    /// one more), while the schedule, worker by worker, stays the same.
    #[test]
    fn shared_tables_run_every_worker_on_one_prepared_job() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let made = AtomicUsize::new(0);
        let inner = fake(
            PlanShape::Runs {
                count: 5,
                base_seed: 1,
            },
            0,
            |_| 0,
        );
        let job = || {
            made.fetch_add(1, Ordering::Relaxed);
            inner()
        };
        let apart = simulate(&job, &cfg(4)).unwrap();
        assert_eq!(made.swap(0, Ordering::Relaxed), 1 + 4);
        let shared = simulate(
            &job,
            &SimConfig {
                shared_tables: true,
                ..cfg(4)
            },
        )
        .unwrap();
        assert_eq!(made.load(Ordering::Relaxed), 2);
        let schedule = |r: &SimRun| -> Vec<(usize, f64, f64)> {
            r.tasks.iter().map(|t| (t.worker, t.start, t.end)).collect()
        };
        assert_eq!(schedule(&apart), schedule(&shared));
        assert_eq!(shared.result.value, apart.result.value);
    }

    /// Five runs of 1..5 s: 15 s on one worker; on two, greedy in issue order: run 0 (0-1),
    /// run 1 (0-2), run 2 (1-4), run 3 (2-6), run 4 (4-9): 9 s, idle 3 of 18 worker-seconds;
    /// on eight, the longest run: 5 s.
    #[test]
    fn known_durations_give_the_known_makespan() {
        let job = fake(
            PlanShape::Runs {
                count: 5,
                base_seed: 1,
            },
            0,
            |_| 0,
        );
        let one = simulate(&job, &cfg(1)).unwrap();
        assert!(close(one.time_s, 15.0), "{}", one.time_s);
        assert!(close(one.idle_share(), 0.0));
        let two = simulate(&job, &cfg(2)).unwrap();
        assert!(close(two.time_s, 9.0), "{}", two.time_s);
        assert!(close(two.idle_share(), 3.0 / 18.0));
        let starts: Vec<(usize, f64)> = two.tasks.iter().map(|t| (t.worker, t.start)).collect();
        assert_eq!(
            starts,
            vec![(0, 0.0), (1, 0.0), (0, 1.0), (1, 2.0), (0, 4.0)]
        );
        let eight = simulate(&job, &cfg(8)).unwrap();
        assert!(close(eight.time_s, 5.0));
        assert_eq!(eight.peak_busy, 5);
        assert_eq!((eight.issued, eight.cancelled), (5, 0));
        // The result is the merge of all runs whatever the worker count (the best: run 4).
        for r in [&one, &two, &eight] {
            assert_eq!(r.result.value, serde_json::json!(4));
            assert_eq!(r.result.nodes, 15_000);
        }
        // A dispatch latency is paid once per task.
        let slow = simulate(
            &job,
            &SimConfig {
                dispatch_s: 0.5,
                ..cfg(1)
            },
        )
        .unwrap();
        assert!(close(slow.time_s, 17.5));
        // The coordinator's cap on the parallelism holds whatever the workers.
        let capped = simulate(
            &job,
            &SimConfig {
                max_parallelism: 2,
                ..cfg(8)
            },
        )
        .unwrap();
        assert!(close(capped.time_s, 9.0));
        assert_eq!(capped.parallelism, 2);
    }

    /// Probes over [0, 6] of the value 0 on two workers: "value >= 2" (1 s) and "value >= 4"
    /// (10 s) go out; the first answer makes the second obsolete at 1 s: it is cancelled, its
    /// worker freed at once (one second and a tenth of its nodes wasted), and "value >= 1" (1 s)
    /// ends the job at 2 s.
    #[test]
    fn a_cancelled_task_frees_its_worker_at_the_cancellation() {
        let job = fake(
            PlanShape::Probes {
                lower: 0,
                upper: 6,
                step: 1,
                guess: None,
            },
            0,
            |t| if t >= 4 { 10_000 } else { 1000 },
        );
        let two = simulate(&job, &cfg(2)).unwrap();
        assert!(close(two.time_s, 2.0), "{}", two.time_s);
        assert_eq!((two.issued, two.cancelled), (3, 1));
        let wasted: Vec<&TaskRecord> = two.tasks.iter().filter(|t| t.wasted).collect();
        assert_eq!(wasted.len(), 1);
        assert_eq!(wasted[0].task, TaskKind::Probe { target: 4 });
        assert!(close(wasted[0].end, 1.0));
        assert!(close(wasted[0].spent_nodes, 1000.0));
        assert!(close(two.spent_nodes(), 3000.0));
        assert!(close(two.wasted_s(), 1.0));
        assert_eq!(two.result.value, serde_json::json!(0));
        // The next task went to the freed worker of lowest index, while the other was busy.
        let third = two.tasks.iter().find(|t| t.start > 0.5).unwrap();
        assert_eq!(
            (third.worker, third.task.clone()),
            (0, TaskKind::Probe { target: 1 })
        );
        // With a heartbeat of 3 s the cancelled probe holds its worker until the job ends.
        let hb = simulate(
            &job,
            &SimConfig {
                heartbeat_s: Some(3.0),
                ..cfg(2)
            },
        )
        .unwrap();
        assert!(close(hb.time_s, 2.0));
        assert_eq!(hb.cancelled, 1);
        assert!(close(hb.wasted_s(), 2.0));
        // With one worker there is nothing to cancel: bisection, every probe in turn.
        let one = simulate(&job, &cfg(1)).unwrap();
        assert_eq!(one.cancelled, 0);
        assert_eq!(one.result.value, serde_json::json!(0));
    }

    /// The same job twice gives the same timeline, task for task; so does the curve.
    #[test]
    fn simulation_is_deterministic() {
        let job = fake(
            PlanShape::Probes {
                lower: -20,
                upper: 20,
                step: 1,
                guess: None,
            },
            3,
            |t| 1000 + (t.unsigned_abs() as u64 % 7) * 300,
        );
        for n in [1, 2, 3, 5, 16] {
            let a = simulate(&job, &cfg(n)).unwrap();
            let b = simulate(&job, &cfg(n)).unwrap();
            let view = |r: &SimRun| {
                r.tasks
                    .iter()
                    .map(|t| (t.task.clone(), t.worker, t.start.to_bits(), t.end.to_bits()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(view(&a), view(&b));
            assert_eq!(a.result, b.result);
            assert_eq!(a.result.value, serde_json::json!(3));
        }
        let c = curve(&job, &[1, 2, 4, 8, 64, 1024], &cfg(1)).unwrap();
        assert!(c.same_value);
        assert_eq!(
            c.rows.iter().map(|r| r.workers).collect::<Vec<_>>(),
            vec![1, 2, 4, 8, 64, 1024]
        );
        assert!(close(c.rows[0].speedup, 1.0) && close(c.rows[0].work_inflation, 1.0));
        // Beyond the useful parallelism only idle time grows: 64 and 1,024 workers take as long.
        assert!(close(c.rows[4].time_s, c.rows[5].time_s));
        assert!(c.rows[5].idle_share > c.rows[4].idle_share);
        for r in &c.rows {
            assert!(close(r.efficiency, r.speedup / r.workers as f64));
        }
    }

    /// The task cache changes nothing in a run: a real `jlpns` job (alpha-beta leaves of 2,000
    /// nodes) gives the same timeline, task for task, and the same result uncached, with an
    /// empty cache (every task run and recorded) and with the cache that run filled (every task
    /// replayed, none run); through a file too. Worker counts that share one cache find the
    /// same value (their timelines may differ: a leaf is replayed with the cost it had on the
    /// table of the run that recorded it, see `leaf_cache`).
    #[test]
    fn the_task_cache_replays_the_same_decisions() {
        use crate::plan::leaf_cache::LeafCache;
        use std::sync::Arc;
        let job = JobSpec::new("connect4", "335662333565", "jlpns").with_options(&[
            ("leaf", "alphabeta"),
            ("budget", "2000"),
            ("memory_mb", "16"),
        ]);
        let res = crate::registry::Resources {
            threads: 1,
            memory_mb: 16,
        };
        let prep = || crate::registry::prepare_with(&job, &res);
        let view = |r: &SimRun| {
            let tasks: Vec<_> = r
                .tasks
                .iter()
                .map(|t| (t.task.clone(), t.worker, t.start.to_bits(), t.end.to_bits()))
                .collect();
            (tasks, r.result.clone(), r.issued, r.cancelled)
        };
        let at = |n: usize, cache: &Option<Arc<LeafCache>>| SimConfig {
            rate: Some(1.0e6),
            cache: cache.clone(),
            ..cfg(n)
        };
        let path = std::env::temp_dir().join(format!("gs-sim-cache-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut shared_value = None;
        let shared = Some(Arc::new(LeafCache::in_memory("")));
        for n in [1, 2, 4] {
            let plain = simulate(&prep, &at(n, &None)).unwrap();
            assert!(plain.tasks.len() > 5, "{} tasks", plain.tasks.len());
            let cold = Some(Arc::new(LeafCache::open(&path, 1 << 20, "").unwrap().0));
            let first = simulate(&prep, &at(n, &cold)).unwrap();
            let k = cold.as_ref().unwrap().stats();
            assert_eq!(k.hits + k.misses, first.tasks.len() as u64);
            assert_eq!(view(&first), view(&plain), "N = {n}, empty cache");
            let second = simulate(&prep, &at(n, &cold)).unwrap();
            assert_eq!(
                cold.as_ref().unwrap().stats().misses,
                k.misses,
                "nothing run"
            );
            assert_eq!(view(&second), view(&plain), "N = {n}, full cache");
            cold.as_ref().unwrap().save().unwrap();
            let reread = Some(Arc::new(LeafCache::open(&path, 1 << 20, "").unwrap().0));
            let third = simulate(&prep, &at(n, &reread)).unwrap();
            assert_eq!(reread.as_ref().unwrap().stats().misses, 0, "nothing run");
            assert_eq!(view(&third), view(&plain), "N = {n}, from the file");
            let _ = std::fs::remove_file(&path);
            let across = simulate(&prep, &at(n, &shared)).unwrap();
            assert_eq!(across.result.value, plain.result.value);
            assert_eq!(
                *shared_value.get_or_insert(plain.result.value.clone()),
                plain.result.value
            );
        }
        assert_eq!(shared_value, Some(serde_json::json!(-2)));
    }

    /// Bad worker counts are refused with a message, never a panic.
    #[test]
    fn worker_counts_are_bounded() {
        let job = fake(PlanShape::Single, 0, |_| 0);
        assert!(simulate(&job, &cfg(0)).is_err());
        assert!(simulate(&job, &cfg(MAX_WORKERS + 1)).is_err());
        assert!(curve(&job, &[2, MAX_WORKERS + 1], &cfg(1)).is_err());
        let single = simulate(&job, &cfg(4)).unwrap();
        assert!(close(single.time_s, 0.5));
        assert_eq!(single.result.value, serde_json::json!(7));
        // The node model without a rate runs only one task at a time.
        let no_rate = SimConfig {
            rate: None,
            ..cfg(2)
        };
        assert!(simulate(&job, &no_rate).is_err());
    }
}
