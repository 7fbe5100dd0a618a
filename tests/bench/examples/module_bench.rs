//! Game modules against native games (issue 48): the first load of the tic-tac-toe module
//! (text to binary, validation and compilation, the probe), then nodes per second of minimax and
//! alpha-beta and playouts per second of MCTS on the module (ABI v2, and the same module
//! declaring ABI version 1, so without `gs_step`) and on the catalogue's native tic-tac-toe, and
//! rollouts per second of NRPA on the weak Schur module and the native `weakschur`; the same
//! jobs, interleaved, with equal work (asserted). Alpha-beta is timed twice: as a job from the
//! start (a few thousand nodes, so the job's set-up weighs), and as the engine's search alone
//! from each of the 82 positions of at most two plies, each with a fresh 64 KiB table made
//! before the clock starts.
//!
//!   cargo run --release -p gamesolver-bench --features modules --example module_bench [-- REPEATS [FILTER]]

use gamesolver_shared::games::mnk::Mnk;
use gamesolver_shared::games::module::{self, ModuleGame};
use gamesolver_shared::model::{Hashed, Tactics, ZeroSum};
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry;
use gamesolver_shared::search::engine::{self, Config, Table};
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;
use std::time::Instant;

const TICTACTOE: &str = include_str!("../../../shared/modules/tictactoe.wat");
const WEAKSCHUR: &str = include_str!("../../../shared/modules/weakschur.wat");

/// A job to time: native game, module, algorithm, options, and the unit of work it counts.
type Timed = (
    &'static str,
    usize,
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

/// Engine searches from `roots` (position texts) on `game`, each with a fresh 64 KiB table
/// made before the clock starts; (nodes, seconds).
fn engine_searches<G: ZeroSum + Hashed + Tactics>(game: &G, roots: &[String]) -> (u64, f64) {
    let states: Vec<G::State> = roots
        .iter()
        .map(|r| game.parse_position(r).expect("a position"))
        .collect();
    let tables: Vec<Table> = roots
        .iter()
        .map(|_| Table::with_bytes(1 << 16).expect("a table"))
        .collect();
    let ctl = Control::unlimited();
    let start = Instant::now();
    let mut nodes = 0;
    for (s, t) in states.iter().zip(&tables) {
        let o = engine::search(game, s, -1000, 1000, &Config::default(), t, &ctl).expect("done");
        nodes += o.nodes;
    }
    (nodes, start.elapsed().as_secs_f64())
}

fn main() {
    let repeats: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let filter = std::env::args().nth(2).unwrap_or_default();
    let mut names = Vec::new();
    let v1 = TICTACTOE.replacen(
        "(result i32)\n    (i32.const 2))",
        "(result i32)\n    (i32.const 1))",
        1,
    );
    for (file, text) in [
        ("tictactoe.wat", TICTACTOE),
        ("tictactoe.wat as ABI v1", &v1),
        ("weakschur.wat", WEAKSCHUR),
    ] {
        let start = Instant::now();
        let loaded = module::load(text.as_bytes()).expect("module");
        let load_ms = start.elapsed().as_secs_f64() * 1e3;
        println!(
            "first load of {file}: {load_ms:.1} ms in all, of which validation and compilation \
             {:.1} ms",
            loaded.compile_ms
        );
        names.push(format!("module:{}", loaded.sha256));
    }
    println!(
        "| kernel (job) | unit | native per s | module v2 per s | native / v2 | module v1 per s | \
         native / v1 |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    if "alphabeta-search".contains(&filter) {
        let mut roots = vec![String::new()];
        for a in 1..=9 {
            roots.push(format!("{a}"));
            for b in (1..=9).filter(|&b| b != a) {
                roots.push(format!("{a}{b}"));
            }
        }
        let native = Mnk::tictactoe();
        let game = |i: usize| {
            let hash = names[i].strip_prefix("module:").expect("a module name");
            ModuleGame::new(module::cached(hash).expect("loaded"), &Default::default())
                .expect("the game")
        };
        let (v2, v1) = (game(0), game(1));
        let (mut nw, mut nt, mut w2, mut t2, mut w1, mut t1) = (0, 0.0, 0, 0.0, 0, 0.0);
        for _ in 0..repeats {
            let (w, t) = engine_searches(&native, &roots);
            (nw, nt) = (nw + w, nt + t);
            let (w, t) = engine_searches(&v2, &roots);
            (w2, t2) = (w2 + w, t2 + t);
            let (w, t) = engine_searches(&v1, &roots);
            (w1, t1) = (w1 + w, t1 + t);
        }
        assert_eq!((nw, nw), (w2, w1), "alpha-beta: the same nodes");
        let (n, m2, m1) = (nw as f64 / nt, w2 as f64 / t2, w1 as f64 / t1);
        println!(
            "| alphabeta search alone, 82 roots on tictactoe | nodes | {n:.0} | {m2:.0} | {:.2} | \
             {m1:.0} | {:.2} |",
            n / m2,
            n / m1
        );
    }
    let jobs: [Timed; 5] = [
        ("tictactoe", 0, "minimax", &[], "nodes"),
        ("tictactoe", 0, "alphabeta", &[], "nodes"),
        ("tictactoe", 0, "alphabeta", &[("analyse", "all")], "nodes"),
        (
            "tictactoe",
            0,
            "mcts",
            &[("playouts", "50000"), ("seed", "1"), ("solver", "false")],
            "playouts",
        ),
        (
            "weakschur",
            2,
            "nrpa",
            &[("level", "2"), ("iterations", "100"), ("seed", "1")],
            "rollouts",
        ),
    ];
    for (game, module, algorithm, options, unit) in jobs {
        if !algorithm.contains(&filter) {
            continue;
        }
        let spec = |name: &str| {
            JobSpec::new(name, "", algorithm)
                .with_options(options)
                .with_params(if game == "weakschur" {
                    &[("k", "4")]
                } else {
                    &[]
                })
        };
        let native = spec(game);
        let v2 = spec(&names[module]);
        let v1 = (module == 0).then(|| spec(&names[1]));
        // Interleaved, so that the machine's load falls on all alike.
        let (mut nw, mut nt, mut w2, mut t2, mut w1, mut t1) = (0, 0.0, 0, 0.0, 0, 0.0);
        for _ in 0..repeats {
            let (w, t) = timed(&native, 1, unit);
            (nw, nt) = (nw + w, nt + t);
            let (w, t) = timed(&v2, 1, unit);
            (w2, t2) = (w2 + w, t2 + t);
            if let Some(v1) = &v1 {
                let (w, t) = timed(v1, 1, unit);
                (w1, t1) = (w1 + w, t1 + t);
            }
        }
        assert_eq!(nw, w2, "{algorithm}: the same work");
        let (n, m2) = (nw as f64 / nt, w2 as f64 / t2);
        let v1_cols = if v1.is_some() {
            assert_eq!(nw, w1, "{algorithm}: the same work");
            let m1 = w1 as f64 / t1;
            format!("{m1:.0} | {:.2}", n / m1)
        } else {
            "- | -".into()
        };
        println!(
            "| {algorithm} {options:?} on {game} | {unit} | {n:.0} | {m2:.0} | {:.2} | {v1_cols} |",
            n / m2
        );
    }
}
