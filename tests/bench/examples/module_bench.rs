//! Game modules against native games (issue 48): the first load of the tic-tac-toe module
//! (text to binary, validation and compilation, the probe), then nodes per second of minimax and
//! alpha-beta and playouts per second of MCTS on the module and on the catalogue's native
//! tic-tac-toe, with the same jobs (the node counts are equal, tests/tests/game_modules.rs).
//!
//!   cargo run --release -p gamesolver-bench --example module_bench [-- REPEATS]

use gamesolver_shared::games::module;
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;
use std::time::Instant;

const TICTACTOE: &str = include_str!("../../../shared/modules/tictactoe.wat");

/// A job to time: algorithm, position, options, and the unit of work it counts.
type Timed = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

/// Runs `job` `repeats` times; (work units, seconds).
fn timed(job: &JobSpec, repeats: u32, unit: &str) -> (u64, f64) {
    let prepared = registry::prepare(job).expect("job");
    let start = Instant::now();
    let mut work = 0;
    for _ in 0..repeats {
        let r = run_local(prepared.as_ref(), &Control::unlimited()).expect("result");
        work += if unit == "nodes" {
            r.nodes
        } else {
            r.extra[unit].as_u64().unwrap_or(r.nodes)
        };
    }
    (work, start.elapsed().as_secs_f64())
}

fn main() {
    let repeats: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let start = Instant::now();
    let loaded = module::load(TICTACTOE.as_bytes()).expect("module");
    let load_ms = start.elapsed().as_secs_f64() * 1e3;
    println!(
        "first load of tictactoe.wat: {load_ms:.1} ms in all, of which compilation {:.1} ms",
        loaded.compile_ms
    );
    let name = format!("module:{}", loaded.sha256);
    println!("| kernel (job) | unit | native per s | module per s | native / module |");
    println!("|---|---|---:|---:|---:|");
    let jobs: [Timed; 4] = [
        ("minimax", "", &[], "nodes"),
        ("alphabeta", "", &[], "nodes"),
        ("alphabeta", "", &[("analyse", "all")], "nodes"),
        (
            "mcts",
            "",
            &[("playouts", "50000"), ("seed", "1"), ("solver", "false")],
            "playouts",
        ),
    ];
    for (algorithm, pos, options, unit) in jobs {
        let native = JobSpec::new("tictactoe", pos, algorithm).with_options(options);
        let wasm = JobSpec::new(&name, pos, algorithm).with_options(options);
        let (nw, nt) = timed(&native, repeats, unit);
        let (ww, wt) = timed(&wasm, repeats, unit);
        assert_eq!(nw, ww, "{algorithm}: the same work");
        let (n, w) = (nw as f64 / nt, ww as f64 / wt);
        println!(
            "| {algorithm} {options:?} | {unit} | {n:.0} | {w:.0} | {:.2} |",
            n / w
        );
    }
}
