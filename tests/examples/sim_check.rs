//! The simulator (`plan::simulate`, `gamesolver simulate`) against reality: the same jobs through
//! a real coordinator and 1, 2 and 4 real worker processes of one slot each (a fresh coordinator
//! and fresh workers per run, so every worker's table starts cold as in the simulation), beside
//! the simulator's prediction for the same worker counts, by both duration models.
//!
//! Real time is the job's `elapsed_ms` (coordinator, from submission to the result); real CPU
//! is the workers' processes' user + system time over the run (`/proc`). The simulated CPU-model
//! run gives the time on N free cores and the busy worker-time (the CPU the workers should
//! spend); the cancellation delay of the service (a worker hears of it in a heartbeat reply, a
//! third of the 15 s lease) is simulated too. On a machine with fewer cores than workers (4 on
//! 2) compare CPU, not wall time. Prints one JSON line per job and worker count with the ratios
//! real / simulated.
//!
//! Run: `cargo build --release -p gamesolver -p gamesolver-worker && cargo run --release -p
//! gamesolver-e2e --example sim_check [POSITION...]` (default: the first three positions of Pons'
//! Test_L1_R3, exact alphabeta). Not a test.

use gamesolver_e2e::*;
use gamesolver_shared::plan::simulate::{simulate, CostModel, SimConfig, SimRun};
use gamesolver_shared::registry;
use gamesolver_shared::wire::JobSpec;
use serde_json::json;
use std::time::Duration;

/// User + system CPU seconds of a process (`/proc/PID/stat`, fields 14 and 15).
fn cpu_s(pid: u32) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name (field 2) may hold spaces; the fields after it follow its ')'.
    let rest = text.rsplit_once(')').map_or("", |x| x.1);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // After ')': state is index 0, so utime (field 14) is index 11 and stime index 12.
    let hz = 100.0;
    (ticks(11) + ticks(12)) / hz
}

fn main() {
    use_binaries_beside_examples();
    let mut positions: Vec<String> = std::env::args().skip(1).collect();
    if positions.is_empty() {
        positions = ["13712", "3246313", "573154743"].map(String::from).to_vec();
    }
    for position in &positions {
        let job = json!({"game": "connect4", "position": position, "algorithm": "alphabeta"});
        let spec = JobSpec::new("connect4", position, "alphabeta");
        let prepare = || registry::prepare(&spec);
        for workers in [1usize, 2, 4] {
            // The simulation, both models, the service's heartbeat period for cancellations.
            let sim = |model: CostModel, rate: Option<f64>| -> SimRun {
                simulate(
                    &prepare,
                    &SimConfig {
                        workers,
                        max_parallelism: 16,
                        model,
                        rate,
                        heartbeat_s: Some(5.0),
                        ..SimConfig::default()
                    },
                )
                .expect("the simulation runs")
            };
            let cpu_run = sim(CostModel::Cpu, None);
            let rate = {
                let nodes: u64 = cpu_run.tasks.iter().map(|t| t.nodes).sum();
                nodes as f64 / cpu_run.tasks.iter().map(|t| t.cpu_s).sum::<f64>().max(1e-9)
            };
            let node_run = sim(CostModel::Nodes, Some(rate));
            // The real run.
            let c = Coordinator::fresh(
                &format!("sim-check-{position}-{workers}"),
                &CoordOpts::default(),
            );
            let procs = c.start_workers(workers, 1);
            let before: f64 = procs.iter().map(|p| cpu_s(p.pid())).sum();
            let id = c.submit(&job, None);
            let st = c.wait_job_polling(id, Duration::from_secs(3600), Duration::from_millis(5));
            let after: f64 = procs.iter().map(|p| cpu_s(p.pid())).sum();
            assert_eq!(st["state"], "done", "{st}");
            let real_s = st["result"]["elapsed_ms"].as_f64().unwrap_or(0.0) / 1000.0;
            let real_cpu = after - before;
            let tasks = &st["tasks"];
            let ratio = |a: f64, b: f64| {
                if b > 0.0 {
                    (a / b * 1000.0).round() / 1000.0
                } else {
                    0.0
                }
            };
            println!(
                "{}",
                json!({
                    "position": position,
                    "workers": workers,
                    "value": st["result"]["value"],
                    "sim_value": cpu_run.result.value,
                    "real_s": real_s,
                    "real_worker_cpu_s": (real_cpu * 1000.0).round() / 1000.0,
                    "real_tasks": tasks,
                    "sim_cpu_model_s": (cpu_run.time_s * 1000.0).round() / 1000.0,
                    "sim_cpu_model_busy_s": (cpu_run.busy_s() * 1000.0).round() / 1000.0,
                    "sim_nodes_model_s": (node_run.time_s * 1000.0).round() / 1000.0,
                    "sim_tasks": {"issued": cpu_run.issued, "cancelled": cpu_run.cancelled},
                    "real_over_sim_time": ratio(real_s, cpu_run.time_s),
                    "real_over_sim_cpu": ratio(real_cpu, cpu_run.busy_s()),
                    "real_over_sim_nodes_model_time": ratio(real_s, node_run.time_s),
                })
            );
            drop(procs);
        }
    }
}
