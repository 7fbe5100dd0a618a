//! MCTS benchmark: playouts per second per thread, and best-move accuracy of root
//! parallelisation on Connect Four positions whose best moves are known.
//!
//! ```text
//! cargo run --release -p gamesolver-bench --example mcts_bench -- speed [SECONDS]
//! cargo run --release -p gamesolver-bench --example mcts_bench -- accuracy [FILE,...] [POSITIONS] [BUDGET...]
//! ```
//!
//! `speed`: one tree on one thread, per game, playouts per second of the whole iteration.
//!
//! `accuracy`: positions from Pons' test sets (default `Test_L2_R1`; data: `GAMESOLVER_DATA` or
//! `../shared/data`). Ground truth: every child's outcome class (win, draw, loss) by the exact
//! engine, checked against the file's score; a move is optimal when it keeps the position's class,
//! and positions where every move is optimal, or whose truth needs more than `TRUTH_NODES` nodes a
//! move, are skipped. For each budget B: 1 tree of B playouts, T trees of B/T and T trees of B
//! (T = 2, 4, 8), merged by sum and by vote; the share of optimal choices is printed. Solver off
//! (pure UCT), so the figure measures the statistics, not the proofs. Figures:
//! `docs/BENCHMARKS.md` (MCTS).

use gamesolver_shared::games::connect4::Connect4;
use gamesolver_shared::games::data::data_dir;
use gamesolver_shared::games::mnk::Mnk;
use gamesolver_shared::games::othello::Othello;
use gamesolver_shared::model::{Game, Hashed, Tactics, ZeroSum};
use gamesolver_shared::search::engine::{self, Table};
use gamesolver_shared::search::mcts::{self, Config, Merge};
use gamesolver_shared::search::Control;
use std::time::Instant;

fn speed_of<G: Game>(label: &str, game: &G, seconds: f64) {
    let root = game.initial_state();
    let mut cfg = Config::new(None);
    cfg.solver = false;
    let ctl = Control::with_limits(Some(std::time::Duration::from_secs_f64(seconds)), None);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let t0 = Instant::now();
    let s = pool.install(|| mcts::mcts(game, &root, &cfg, &ctl));
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "{label:<22} {:>10.0} playouts/s  ({} playouts, {} nodes, {secs:.2} s)",
        s.playouts as f64 / secs,
        s.playouts,
        s.nodes
    );
}

/// Node budget of one ground-truth search; positions that need more are skipped.
const TRUTH_NODES: u64 = 20_000_000;

/// The class (-1, 0, 1) of `s` for the side to move, by an exact null-window search of the
/// engine (transposition table shared by all calls) around 0, or `None` when it needs more than
/// [`TRUTH_NODES`].
fn class<G: ZeroSum + Hashed + Tactics>(g: &G, s: &G::State, table: &Table) -> Option<i32> {
    let ctl = Control::with_limits(None, Some(TRUTH_NODES));
    let cfg = engine::Config::default();
    Some(
        engine::search(g, s, -1, 1, &cfg, table, &ctl)?
            .value
            .signum(),
    )
}

/// Positions with their optimal moves (outcome-preserving), skipping positions where every
/// move is optimal.
fn cases(
    g: &Connect4,
    files: &[&str],
    count: usize,
) -> Vec<(<Connect4 as Game>::State, Vec<u8>, i32)> {
    // Ground truth is slow, so it is cached between runs: one line per
    // position, its moves and the class of each legal move ("-" when out of reach).
    let cache_path = std::env::temp_dir().join("gamesolver_mcts_bench_truth.txt");
    let mut cache: std::collections::HashMap<String, String> = std::fs::read_to_string(&cache_path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            l.split_once(' ')
                .map(|(a, b)| (a.to_string(), b.to_string()))
        })
        .collect();
    let table = Table::with_bytes(256 << 20).expect("a 256 MiB table");
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(data_dir().join("connect4").join(file))
            .unwrap_or_else(|e| panic!("cannot read {file}: {e}"));
        for line in text.lines() {
            if out.len() >= count {
                return out;
            }
            let mut parts = line.split_whitespace();
            let (Some(moves), Some(score)) = (parts.next(), parts.next()) else {
                continue;
            };
            let s = g.parse_position(moves).unwrap();
            let score: i32 = score.parse().unwrap();
            let mut kids = Vec::new();
            g.legal_moves(&s, &mut kids);
            let cached = cache.get(moves).map(|c| {
                (c != "-").then(|| {
                    c.split(',')
                        .map(|x| x.parse().unwrap())
                        .collect::<Vec<i32>>()
                })
            });
            let classes: Option<Vec<i32>> = match cached {
                Some(c) => c,
                None => {
                    let computed: Option<Vec<i32>> = kids
                        .iter()
                        .map(|&m| {
                            let mut c = s;
                            g.apply(&mut c, m);
                            if g.is_terminal(&c) {
                                Some(-g.terminal_value(&c).signum())
                            } else {
                                class(g, &c, &table).map(|v| -v)
                            }
                        })
                        .collect();
                    let text = computed.as_ref().map_or("-".to_string(), |c| {
                        c.iter()
                            .map(|x| x.to_string())
                            .collect::<Vec<_>>()
                            .join(",")
                    });
                    use std::io::Write;
                    if let Ok(mut f) = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&cache_path)
                    {
                        let _ = writeln!(f, "{moves} {text}");
                    }
                    cache.insert(moves.to_string(), text);
                    computed
                }
            };
            let Some(classes) = classes else { continue };
            let best = *classes.iter().max().unwrap();
            assert_eq!(
                best,
                score.signum(),
                "{moves}: ground truth disagrees with the file"
            );
            let good: Vec<u8> = kids
                .iter()
                .zip(&classes)
                .filter(|(_, &c)| c == best)
                .map(|(&m, _)| m)
                .collect();
            if good.len() < kids.len() {
                out.push((s, good, best));
            }
        }
    }
    out
}

fn share(
    g: &Connect4,
    cases: &[(<Connect4 as Game>::State, Vec<u8>, i32)],
    trees: u32,
    playouts: u64,
    merge: Merge,
) -> f64 {
    let mut right = 0;
    for (i, (s, good, _)) in cases.iter().enumerate() {
        let mut cfg = Config::new(Some(playouts));
        cfg.trees = trees;
        cfg.seed = i as u64;
        cfg.solver = false;
        let out = mcts::mcts(g, s, &cfg, &Control::unlimited());
        if let Some(b) = out.best(merge) {
            right += good.contains(&out.moves[b]) as usize;
        }
    }
    right as f64 / cases.len() as f64
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("speed") => {
            let secs: f64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3.0);
            speed_of(
                "connect4 7x6 (start)",
                &Connect4::<u64>::new(7, 6, 1).unwrap(),
                secs,
            );
            speed_of("tictactoe (start)", &Mnk::tictactoe(), secs);
            speed_of("mnk 9,9,5 (start)", &Mnk::new(9, 9, 5).unwrap(), secs);
            speed_of("othello 8x8 (start)", &Othello::new(8).unwrap(), secs);
            speed_of("othello 6x6 (start)", &Othello::new(6).unwrap(), secs);
        }
        Some("accuracy") => {
            let files: Vec<&str> = args
                .get(1)
                .map(|a| a.split(',').collect())
                .unwrap_or(vec!["Test_L2_R1"]);
            let count: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(100);
            let budgets: Vec<u64> = args.iter().skip(3).filter_map(|a| a.parse().ok()).collect();
            let budgets = if budgets.is_empty() {
                vec![1000, 10_000]
            } else {
                budgets
            };
            let g = Connect4::<u64>::new(7, 6, 1).unwrap();
            let t0 = Instant::now();
            let cases = cases(&g, &files, count);
            eprintln!(
                "{} positions with known optimal moves ({:.1} s)",
                cases.len(),
                t0.elapsed().as_secs_f64()
            );
            println!("budget  trees  per-tree  sum    vote");
            for &b in &budgets {
                println!(
                    "{b:>6}  {:>5}  {:>8}  {:.3}  {:.3}",
                    1,
                    b,
                    share(&g, &cases, 1, b, Merge::Sum),
                    share(&g, &cases, 1, b, Merge::Vote)
                );
                for t in [2u32, 4, 8] {
                    for total in [b, b * t as u64] {
                        println!(
                            "{b:>6}  {t:>5}  {:>8}  {:.3}  {:.3}",
                            total / t as u64,
                            share(&g, &cases, t, total, Merge::Sum),
                            share(&g, &cases, t, total, Merge::Vote)
                        );
                    }
                }
            }
        }
        _ => eprintln!(
            "usage: mcts_bench speed [SECONDS] | accuracy [FILE,...] [POSITIONS] [BUDGET...]"
        ),
    }
}
