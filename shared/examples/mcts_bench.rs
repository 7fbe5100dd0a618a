//! MCTS benchmark (issue 7): playouts per second per thread, and best-move accuracy of root
//! parallelisation on Connect Four positions whose best moves are known.
//!
//! ```text
//! cargo run --release -p gamesolver-shared --example mcts_bench -- speed [SECONDS]
//! cargo run --release -p gamesolver-shared --example mcts_bench -- accuracy [FILE,...] [POSITIONS] [BUDGET...]
//! ```
//!
//! `speed`: one tree on one thread, for each game, playouts per second (with the tree, i.e. the
//! whole iteration, not bare playouts).
//!
//! `accuracy`: positions from Pons' test sets (default `Test_L2_R1`; data dir: `GAMESOLVER_DATA`
//! or `../shared/data` next to the workspace). Ground truth: the outcome class (win, draw,
//! loss) of every child, by the exact engine (transposition table) with the null window around a draw; a move is optimal
//! when it keeps the position's class, and positions where every move is optimal are skipped.
//! The class found is checked against the file's score. For each budget B: 1 tree with B
//! playouts, T trees with B/T each and T trees with B each (T = 2, 4, 8), merged by summing
//! and by voting; the share of optimal choices is printed. Positions whose ground truth needs
//! more than `TRUTH_NODES` engine nodes per move are skipped. Solver off (pure UCT), so the figure
//! measures the statistics, not the proofs.
//!
//! ## Preliminary figures (measured UNDER LOAD: 2 cores shared with ~6 compiling sessions,
//! `--profile test` build (opt-level 3, no LTO); to be re-measured in the quiet phase)
//!
//! `speed 2`, one thread, one tree, whole iterations from the start position:
//!
//! | game | playouts/s |
//! |---|---|
//! | connect4 7x6 | 330,000 |
//! | tictactoe | 499,000 |
//! | mnk 9,9,5 | 25,500 |
//!
//! `accuracy Test_L2_R1 60 30 300` (60 positions where some move loses the outcome; share of
//! outcome-keeping choices; B/T per tree vs B per tree):
//!
//! | B | T | per tree | sum | vote |
//! |---|---|---|---|---|
//! | 30 | 1 | 30 | 0.717 | 0.717 |
//! | 30 | 2 | 15 / 30 | 0.683 / 0.833 | 0.683 / 0.833 |
//! | 30 | 4 | 7 / 30 | 0.467 / 0.883 | 0.400 / 0.900 |
//! | 30 | 8 | 3 / 30 | 0.533 / 0.917 | 0.417 / 0.900 |
//! | 300 | 1 | 300 | 0.967 | 0.967 |
//! | 300 | 2 | 150 / 300 | 0.967 / 0.983 | 0.967 / 0.983 |
//! | 300 | 4 | 75 / 300 | 0.950 / 0.983 | 0.967 / 0.983 |
//! | 300 | 8 | 37 / 300 | 0.950 / 0.983 | 0.917 / 0.983 |
//!
//! With 100 positions of the same set and B = 100 / 1000 the 1-tree shares were 0.95 / 0.98:
//! these easy positions saturate early. Harder, `accuracy Test_L1_R2 40 100 1000` (opening
//! positions, 40 with a losing move; truth by the engine in 232 s under load):
//!
//! | B | T | per tree | sum | vote |
//! |---|---|---|---|---|
//! | 100 | 1 | 100 | 0.700 | 0.700 |
//! | 100 | 2 | 50 / 100 | 0.750 / 0.725 | 0.700 / 0.750 |
//! | 100 | 4 | 25 / 100 | 0.675 / 0.825 | 0.675 / 0.825 |
//! | 100 | 8 | 12 / 100 | 0.600 / 0.825 | 0.450 / 0.875 |
//! | 1000 | 1 | 1000 | 0.900 | 0.900 |
//! | 1000 | 2 | 500 / 1000 | 0.875 / 0.925 | 0.900 / 0.925 |
//! | 1000 | 4 | 250 / 1000 | 0.850 / 0.900 | 0.825 / 0.900 |
//! | 1000 | 8 | 125 / 1000 | 0.875 / 0.900 | 0.875 / 0.900 |
//!
//! (40 and 60 positions: one position is 2.5 and 1.7 points; differences below ~10 points are
//! noise at these sizes.)

use gamesolver_shared::games::connect4::Connect4;
use gamesolver_shared::games::mnk::Mnk;
use gamesolver_shared::games::othello::Othello;
use gamesolver_shared::model::{Game, Hashed, Tactics, ZeroSum};
use gamesolver_shared::search::engine::{self, Table};
use gamesolver_shared::search::mcts::{self, Config, Merge};
use gamesolver_shared::search::Control;
use std::path::PathBuf;
use std::time::Instant;

fn data_dir() -> PathBuf {
    std::env::var_os("GAMESOLVER_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"))
}

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
