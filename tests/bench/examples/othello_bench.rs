//! Benchmark: exact Othello on random openings, through the same path as `gamesolver batch`
//! (`registry::prepare` + `plan::run_local`: the planner's null-window probes on one table).
//!
//! ```text
//! cargo run --release -p gamesolver-bench --example othello_bench -- \
//!     [--size N] [--plies P] [--count K] [--seed S] [--memory MB] [--generic] [--position TEXT]
//! ```
//! Plays `P` random moves from the start of the `N x N` board (seeded; default 6 x 6, 10 plies,
//! 5 openings) and solves each position exactly. Prints per position the value, probes, nodes,
//! CPU time of this thread (the figure to trust on a loaded machine) and nodes per CPU second.
//! `--generic` also solves each position with the generic engine (`engine::search` called
//! directly, full window, its own table) right after, on the same thread, checks the value and
//! prints the CPU ratio: interleaved, so the machine's load hits both alike. `--direct` also
//! solves each position with one full-window search of the fast path on a fresh table of the
//! same size (no probes), to compare the planner's probes with a single search.

use gamesolver_shared::games::othello::solver::{self as othello_solver, Board};
use gamesolver_shared::games::othello::Othello;
use gamesolver_shared::model::Game;
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::engine::{self, Config, Table};
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;
use rand::{Rng, SeedableRng};

/// CPU time of the calling thread in seconds (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; the call only writes it.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn main() {
    let mut size = 6usize;
    let mut plies = 10usize;
    let mut count = 5usize;
    let mut seed = 1u64;
    let mut memory: Option<String> = None;
    let mut generic = false;
    let mut direct = false;
    let mut fixed: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--size" => size = val().parse().expect("--size N"),
            "--plies" => plies = val().parse().expect("--plies P"),
            "--count" => count = val().parse().expect("--count K"),
            "--seed" => seed = val().parse().expect("--seed S"),
            "--memory" => memory = Some(val()),
            "--position" => fixed = Some(val()),
            "--generic" => generic = true,
            "--direct" => direct = true,
            other => panic!("unknown argument {other}"),
        }
    }
    let g = Othello::new(size).expect("size");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (mut sum_nodes, mut sum_cpu) = (0u64, 0f64);
    for _ in 0..count {
        let position = match &fixed {
            Some(p) => p.clone(),
            None => {
                let mut s = g.initial_state();
                let mut moves = Vec::new();
                for _ in 0..plies {
                    g.legal_moves(&s, &mut moves);
                    if moves.is_empty() {
                        break;
                    }
                    g.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
                }
                g.format_position(&s)
            }
        };
        let mut job = JobSpec {
            game: "othello".into(),
            game_params: [("size".to_string(), size.to_string())]
                .into_iter()
                .collect(),
            position: position.clone(),
            algorithm: "alphabeta".into(),
            ..Default::default()
        };
        if let Some(m) = &memory {
            job.options.insert("memory_mb".into(), m.clone());
        }
        let p = prepare(&job).expect("job");
        let c0 = thread_cpu();
        let r = run_local(p.as_ref(), &Control::unlimited()).expect("solve");
        let cpu = thread_cpu() - c0;
        sum_nodes += r.nodes;
        sum_cpu += cpu;
        print!(
            "{position:<24} value {:>4} probes {:>2} nodes {:>12} cpu {:>9.3} s  {:>6.2} Mn/s",
            r.value,
            r.extra.get("probes").cloned().unwrap_or_default(),
            r.nodes,
            cpu,
            r.nodes as f64 / cpu / 1e6
        );
        if direct {
            let st = g.parse_position(&position).expect("position");
            let mb = memory.as_deref().map(|m| m.parse::<u64>().expect("MB"));
            let t = Table::with_bytes(engine::table_bytes(&g, &st, mb)).expect("table");
            let p = st.to_move as usize;
            let c1 = thread_cpu();
            let (v, nodes) = othello_solver::solve(Board::of(&g), st.discs[p], st.discs[1 - p], &t);
            let dcpu = thread_cpu() - c1;
            assert_eq!(serde_json::json!(v), r.value, "{position}");
            print!(" | direct nodes {nodes:>12} cpu {dcpu:>9.3} s");
        }
        if generic {
            // The generic engine in exact mode (full window, its own table).
            let s = g.parse_position(&position).expect("position");
            let mb = memory.as_deref().map(|m| m.parse::<u64>().expect("MB"));
            let t = Table::with_bytes(engine::table_bytes(&g, &s, mb)).expect("table");
            let c1 = thread_cpu();
            let e = engine::search(
                &g,
                &s,
                -engine::INF,
                engine::INF,
                &Config::default(),
                &t,
                &Control::unlimited(),
            )
            .expect("engine");
            let gcpu = thread_cpu() - c1;
            assert_eq!(serde_json::json!(e.value), r.value, "{position}");
            print!(
                " | generic nodes {:>12} cpu {:>9.3} s (x{:.1} cpu)",
                e.nodes,
                gcpu,
                gcpu / cpu
            );
        }
        println!();
    }
    println!(
        "total nodes {sum_nodes} cpu {sum_cpu:.3} s  {:.2} M nodes per CPU second",
        sum_nodes as f64 / sum_cpu / 1e6
    );
}
