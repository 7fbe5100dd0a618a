//! `gamesolver simulate`: scaling by simulation (`gamesolver_shared::plan::simulate`). The job's
//! real plan and kernels, its tasks scheduled in virtual time on N one-slot workers, with the
//! coordinator's decisions (its parallelism follows the workers up to
//! [`gamesolver::scheduler::MAX_PARALLELISM`], obsolete tasks are cancelled); one row per worker
//! count: time to result, speedup, efficiency, work inflation, idle share, tasks issued and
//! cancelled. Every task runs for real in this process, one at a time.
//!
//! Exit statuses: 0 the curve; 1 the job gave no result, or the value differs between worker
//! counts (the table is printed first); 2 bad input, with one line.

use crate::cli::{job_spec, Failure, JobArgs, PositionArgs};
use clap::Args;
use gamesolver_shared::plan::leaf_cache::LeafCache;
use gamesolver_shared::plan::simulate::{self, CostModel, Curve, SimConfig};
use gamesolver_shared::registry;
use gamesolver_shared::wire::Limits;
use std::sync::Arc;

/// Most worker counts in one `--workers` list.
pub const MAX_COUNTS: usize = 64;
/// Largest dispatch latency and heartbeat period, milliseconds (an hour).
pub const MAX_MS: f64 = 3_600_000.0;

/// `gamesolver simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub job: JobArgs,
    #[command(flatten)]
    pub position: PositionArgs,
    /// Node limit of each task.
    #[arg(long, value_name = "N")]
    pub node_limit: Option<u64>,
    /// Worker counts, comma-separated (each 1..=4096, at most 64 of them; N = 1 is always run,
    /// as the baseline).
    #[arg(
        long,
        value_name = "N,N,...",
        default_value = "1,2,4,8,16,32,64,128,256,512,1024"
    )]
    pub workers: String,
    /// Duration of a task: `nodes` (its nodes at the rate; deterministic) or `cpu` (its
    /// measured CPU time).
    #[arg(long, value_name = "nodes|cpu", default_value = "nodes")]
    pub model: String,
    /// Nodes per second of the node model [default: measured on the N = 1 run].
    #[arg(long, value_name = "NODES_PER_S")]
    pub rate: Option<f64>,
    /// Milliseconds added to every task (lease, report, planning); the default is the measured
    /// dispatch latency of the service.
    #[arg(long, value_name = "MS", default_value_t = simulate::DEFAULT_DISPATCH_MS)]
    pub dispatch_ms: f64,
    /// A cancelled task frees its worker at its next heartbeat tick, this many milliseconds
    /// apart (the coordinator's default is a third of the 15 s lease) [default: at once].
    #[arg(long, value_name = "MS")]
    pub heartbeat_ms: Option<f64>,
    /// Cap on the tasks the job keeps in flight [default: the coordinator's, 16, or for `jlpns`
    /// its `--max-job-level-parallelism` default, 256].
    #[arg(long, value_name = "N")]
    pub max_parallelism: Option<usize>,
    /// Memory of each virtual worker in MiB, as a worker's `--memory-mb`: the job's tables are
    /// cut to it [default: not cut]. Every virtual worker keeps its prepared job, tables
    /// included, in this process: the largest worker count times this must fit the machine.
    #[arg(long, value_name = "MB")]
    pub memory_mb: Option<u64>,
    /// Every virtual worker runs on one copy of the job and its tables: an upper bound on what
    /// sharing the kernels' tables among workers would give (not a real deployment).
    #[arg(long)]
    pub shared_tables: bool,
    /// Workers exchange proved positions through the coordinator, as the service's do (a
    /// finished task's entries reach the other workers' tables before their next task);
    /// tasks are then always run, never replayed from `--cache`.
    #[arg(long)]
    pub exchange: bool,
    /// Job-level plans: pick a freed worker's next leaf where the plan finds it, not near the
    /// leaf the worker searched last (the coordinator always picks near it): what that
    /// locality buys.
    #[arg(long)]
    pub no_locality: bool,
    /// Keep task results in FILE and replay those found there instead of running them: the
    /// worker counts of one curve and later runs of the same job share them (a leaf's cost is
    /// the first run's; docs/API.md, `simulate`). Created if missing; a damaged or
    /// other-version file is read as far as it is sound and rewritten.
    #[arg(long, value_name = "FILE")]
    pub cache: Option<std::path::PathBuf>,
    /// Bound on the `--cache` file, MiB; the least recently used results go first.
    #[arg(long, value_name = "MB", default_value_t = 256)]
    pub cache_mb: u64,
    /// Keep task results in memory for the worker counts of this run only (no file).
    #[arg(long, conflicts_with = "cache")]
    pub memory_cache: bool,
    /// Write every task of every worker count's run to FILE, one JSON object a line (workers,
    /// task, virtual worker, start, end, nodes, cpu_s, spent_nodes, wasted): what the curve's
    /// inflation and waste are made of.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<std::path::PathBuf>,
}

/// Largest `--cache-mb`.
pub const MAX_CACHE_MB: u64 = 1 << 20;

/// Parses and bounds a `--workers` list.
pub fn parse_workers(text: &str) -> Result<Vec<usize>, Failure> {
    let mut out = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        let n: usize = item.parse().map_err(|_| {
            Failure::bad_input(format!(
                "--workers: '{item}' is not a worker count (a list like 1,2,4)"
            ))
        })?;
        if !(1..=simulate::MAX_WORKERS).contains(&n) {
            return Err(Failure::bad_input(format!(
                "--workers: {n} is outside 1..={}",
                simulate::MAX_WORKERS
            )));
        }
        out.push(n);
    }
    if out.len() > MAX_COUNTS {
        return Err(Failure::bad_input(format!(
            "--workers: at most {MAX_COUNTS} worker counts"
        )));
    }
    Ok(out)
}

/// The simulation settings of the arguments, bounded.
fn config(args: &SimulateArgs) -> Result<SimConfig, Failure> {
    let model = match args.model.trim() {
        "nodes" => CostModel::Nodes,
        "cpu" => CostModel::Cpu,
        other => {
            return Err(Failure::bad_input(format!(
                "--model '{other}': nodes or cpu"
            )))
        }
    };
    if let Some(r) = args.rate {
        if !(r.is_finite() && r > 0.0 && r <= 1e12) {
            return Err(Failure::bad_input(
                "--rate must be a positive number of nodes per second (at most 1e12)",
            ));
        }
    }
    if !(args.dispatch_ms.is_finite() && (0.0..=MAX_MS).contains(&args.dispatch_ms)) {
        return Err(Failure::bad_input(format!(
            "--dispatch-ms must be between 0 and {MAX_MS}"
        )));
    }
    if let Some(h) = args.heartbeat_ms {
        if !(h.is_finite() && (1.0..=MAX_MS).contains(&h)) {
            return Err(Failure::bad_input(format!(
                "--heartbeat-ms must be between 1 and {MAX_MS}"
            )));
        }
    }
    // Without the flag, the scheduler's cap for the job's plan (`run` raises it for a
    // job-level plan, as the scheduler does).
    let max_parallelism = args
        .max_parallelism
        .unwrap_or(gamesolver::scheduler::MAX_PARALLELISM);
    if !(1..=simulate::MAX_WORKERS).contains(&max_parallelism) {
        return Err(Failure::bad_input(format!(
            "--max-parallelism must be between 1 and {}",
            simulate::MAX_WORKERS
        )));
    }
    Ok(SimConfig {
        workers: 1,
        max_parallelism,
        model,
        rate: args.rate,
        dispatch_s: args.dispatch_ms / 1000.0,
        heartbeat_s: args.heartbeat_ms.map(|h| h / 1000.0),
        threads: args.job.threads,
        // A tenth is left to the rest of the machine.
        memory_limit: available_memory().map(|b| b / 10 * 9),
        shared_tables: args.shared_tables,
        exchange: args.exchange,
        locality: !args.no_locality,
        cache: None,
    })
}

/// The task-result cache the arguments ask for; its key's context is the virtual workers'
/// memory (it bounds the tables, so it changes the answers).
fn cache(args: &SimulateArgs) -> Result<Option<Arc<LeafCache>>, Failure> {
    let context = format!("memory_mb={:?}", args.memory_mb);
    if args.memory_cache {
        return Ok(Some(Arc::new(LeafCache::in_memory(&context))));
    }
    let Some(path) = &args.cache else {
        return Ok(None);
    };
    if !(1..=MAX_CACHE_MB).contains(&args.cache_mb) {
        return Err(Failure::bad_input(format!(
            "--cache-mb must be between 1 and {MAX_CACHE_MB}"
        )));
    }
    let (c, note) = LeafCache::open(path, args.cache_mb << 20, &context)
        .map_err(|e| Failure::bad_input(e.chars().take(300).collect::<String>()))?;
    if let Some(note) = note {
        eprintln!("{note}");
    }
    Ok(Some(Arc::new(c)))
}

/// `gamesolver simulate`.
pub fn run(args: SimulateArgs) -> Result<(), Failure> {
    let workers = parse_workers(&args.workers)?;
    let mut cfg = config(&args)?;
    cfg.cache = cache(&args)?;
    let position = args.position.text(args.job.game.name())?;
    if args.node_limit == Some(0) {
        return Err(Failure::bad_input("--node-limit must be at least 1"));
    }
    let job = job_spec(
        &args.job,
        position,
        Limits {
            time_ms: None,
            node_limit: args.node_limit,
        },
    )?;
    // Checked once here, so that a bad job is exit 2 before anything runs.
    let res = resources(args.memory_mb)?;
    let checked = registry::prepare_with(&job, &res)?;
    if args.max_parallelism.is_none()
        && matches!(checked.plan_shape(), registry::PlanShape::JobLevel { .. })
    {
        cfg.max_parallelism = gamesolver::scheduler::DEFAULT_MAX_JOB_LEVEL_PARALLELISM;
    }
    drop(checked);
    let prepare = || registry::prepare_with(&job, &res);
    // Created before the runs, so that a path that cannot be written fails at once.
    let trace = match &args.trace {
        Some(path) => Some((
            path,
            std::fs::File::create(path).map_err(|e| trace_error(path, e))?,
        )),
        None => None,
    };
    let curve = simulate::curve(&prepare, &workers, &cfg)?;
    if let Some((path, file)) = trace {
        write_trace(file, &curve).map_err(|e| trace_error(path, e))?;
    }
    if args.job.json {
        println!(
            "{}",
            serde_json::to_string(&curve).expect("a curve serialises")
        );
    } else {
        print!("{}", render(&job.game, &job.algorithm, &curve));
    }
    if !curve.same_value {
        return Err(Failure::no_result(
            "the value differs between worker counts (see the table)",
        ));
    }
    Ok(())
}

/// The `--trace` file: one line per task of each row's run.
fn write_trace(file: std::fs::File, curve: &Curve) -> std::io::Result<()> {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(file);
    for (workers, tasks) in &curve.tasks {
        for t in tasks {
            let mut line = serde_json::to_value(t).expect("a task record serialises");
            line["workers"] = (*workers).into();
            writeln!(w, "{line}")?;
        }
    }
    w.flush()
}

fn trace_error(path: &std::path::Path, e: std::io::Error) -> Failure {
    Failure::bad_input(format!("--trace {}: {e}", path.display()))
}

/// The curve as a table for people.
pub fn render(game: &str, algorithm: &str, c: &Curve) -> String {
    let model = match c.model {
        CostModel::Nodes => format!("nodes at {:.3} M nodes/s", c.rate / 1e6),
        CostModel::Cpu => "CPU time".to_string(),
    };
    let mut s = format!(
        "{game} {algorithm}: task durations from {model}, dispatch {} ms, parallelism cap {}{}{}\n",
        c.dispatch_ms,
        c.max_parallelism,
        if c.shared_tables {
            ", one set of tables for all workers (--shared-tables)"
        } else {
            ""
        },
        if c.locality {
            ""
        } else {
            ", no locality (--no-locality)"
        }
    );
    s += &format!(
        "value {} ({}), {} nodes at N = 1\n",
        c.result.value,
        if c.same_value {
            "the same for every N"
        } else {
            "NOT the same for every N"
        },
        c.result.nodes
    );
    if let Some(k) = &c.cache {
        s += &format!(
            "task cache: {} hits, {} run ({} read from the file); {:.1} CPU s run, {:.1} CPU s \
             replayed\n",
            k.hits, k.misses, k.loaded, k.run_cpu_s, k.replayed_cpu_s
        );
    }
    s += "workers  par       time s   speedup  effic.  inflation  idle   wasted  tasks  cancelled  value\n";
    for r in &c.rows {
        s += &format!(
            "{:>7}  {:>3}  {:>11.4}  {:>8.2}  {:>6.3}  {:>9.3}  {:>5.3}  {:>6.3}  {:>5}  {:>9}  {}\n",
            r.workers,
            r.parallelism,
            r.time_s,
            r.speedup,
            r.efficiency,
            r.work_inflation,
            r.idle_share,
            r.wasted_share,
            r.tasks_issued,
            r.tasks_cancelled,
            r.value
        );
    }
    s
}

/// What each virtual worker offers the job: every thread, and `--memory-mb` (default all).
/// The memory this machine can give without swapping (Linux's `MemAvailable`), which bounds the
/// virtual workers' state; `None` where it is not known (no check).
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

fn resources(memory_mb: Option<u64>) -> Result<registry::Resources, Failure> {
    let mut res = registry::Resources::MAX;
    if let Some(mb) = memory_mb {
        if !(1..=res.memory_mb).contains(&mb) {
            return Err(Failure::bad_input(format!(
                "--memory-mb must be between 1 and {}",
                res.memory_mb
            )));
        }
        res.memory_mb = mb;
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_lists_are_bounded() {
        assert_eq!(parse_workers("1, 2,4").unwrap(), vec![1, 2, 4]);
        for bad in ["", "0", "4097", "1,x", "-1", "1,,2"] {
            let e = parse_workers(bad).expect_err(bad);
            assert_eq!(e.status, 2);
            assert!(!e.message.contains('\n'));
        }
        let long = vec!["1"; MAX_COUNTS + 1].join(",");
        assert!(parse_workers(&long).is_err());
    }

    #[test]
    fn worker_memory_is_bounded_and_a_larger_request_is_cut() {
        for bad in [0, (1 << 20) + 1] {
            let e = resources(Some(bad)).expect_err("out of range");
            assert_eq!(e.status, 2);
            assert!(e.message.contains("--memory-mb"), "{}", e.message);
        }
        assert_eq!(resources(None).unwrap(), registry::Resources::MAX);
        let res = resources(Some(8)).unwrap();
        assert_eq!(res.memory_mb, 8);
        // A job that asks for more than a virtual worker has is cut down, not refused.
        let job = gamesolver_shared::wire::JobSpec::new("tictactoe", "", "alphabeta")
            .with_options(&[("memory_mb", "64")]);
        assert!(registry::prepare_with(&job, &res).is_ok());
    }
}
