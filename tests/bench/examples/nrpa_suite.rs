//! NRPA over a whole benchmark set (not a test): every TSPTW instance with its gap to the
//! best-known cost, or the 20 standard SameGame boards with their total.
//!
//! ```text
//! cargo run --release -p gamesolver-bench --example nrpa_suite -- tsptw LEVEL SEED [ITERATIONS] [SECONDS] [prune|noprune] [NAME ...]
//! cargo run --release -p gamesolver-bench --example nrpa_suite -- samegame LEVEL SEED [ITERATIONS] [SECONDS] [tabu] [BOARD ...]
//! ```
//! `SECONDS` (0 = none) is the time limit per instance or board, `ITERATIONS` is N (100). TSPTW
//! runs with pruning unless `noprune`; without names it runs all 30 instances of
//! `BEST_KNOWN.tsv`. Each line gives the score, the thread CPU time (the machine is shared, so
//! wall time is not the budget that matters) and the rollouts; the summary counts the feasible
//! tours and the best-known costs reached (TSPTW) or the total (SameGame).

use gamesolver_shared::games;
use gamesolver_shared::model::single::SinglePlayer;
use gamesolver_shared::model::Game;
use gamesolver_shared::search::nrpa::{nrpa, NrpaOptions};
use gamesolver_shared::search::Control;
use std::time::Duration;

/// CPU time of the calling thread in seconds.
fn thread_cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

struct Run<M> {
    score: f64,
    sequence: Vec<M>,
    rollouts: u64,
    cpu: f64,
    stopped: bool,
}

fn run<G: SinglePlayer>(g: &G, level: u32, seed: u64, iterations: u32, secs: f64) -> Run<G::Move> {
    let opts = NrpaOptions {
        level,
        iterations,
        seed,
        ..NrpaOptions::default()
    };
    let limit = (secs > 0.0).then(|| Duration::from_secs_f64(secs));
    let ctl = Control::with_limits(limit, None);
    let c0 = thread_cpu();
    let o = nrpa(g, &g.initial_state(), &opts, None, &ctl).expect("valid options");
    Run {
        score: o.score,
        sequence: o.sequence,
        rollouts: o.rollouts,
        cpu: thread_cpu() - c0,
        stopped: o.stopped.is_some(),
    }
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 3 {
        eprintln!("usage: nrpa_suite tsptw|samegame LEVEL SEED [ITERATIONS] [SECONDS] [...]");
        std::process::exit(2);
    }
    let level: u32 = a[1].parse().expect("level");
    let seed: u64 = a[2].parse().expect("seed");
    let iterations: u32 = a.get(3).map_or(100, |x| x.parse().expect("iterations"));
    let secs: f64 = a.get(4).map_or(0.0, |x| x.parse().expect("seconds"));
    let mut rest: Vec<&str> = a.iter().skip(5).map(String::as_str).collect();
    match a[0].as_str() {
        "tsptw" => {
            let prune = match rest.first() {
                Some(&"noprune") => {
                    rest.remove(0);
                    false
                }
                Some(&"prune") => {
                    rest.remove(0);
                    true
                }
                _ => true,
            };
            let table = games::data::read("nrpa/tsptw_solomon_potvin_bengio/BEST_KNOWN.tsv")
                .expect("BEST_KNOWN.tsv");
            let (mut n, mut feasible, mut reached, mut gaps, mut cpu) = (0, 0, 0, Vec::new(), 0.0);
            for line in table
                .lines()
                .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            {
                let mut f = line.split('\t');
                let name = f.next().expect("name");
                let known: f64 = f.next().expect("cost").parse().expect("cost");
                if !rest.is_empty() && !rest.contains(&name) {
                    continue;
                }
                let g = games::tsptw::Tsptw::load(name)
                    .expect("instance")
                    .with_pruning(prune);
                let r = run(&g, level, seed, iterations, secs);
                let mut s = g.initial_state();
                for &m in &r.sequence {
                    g.apply(&mut s, m);
                }
                let (cost, late) = g.cost(&s);
                n += 1;
                cpu += r.cpu;
                let gap = 100.0 * (cost - known) / known;
                let verdict = if late > 0 {
                    format!("{late} late")
                } else {
                    feasible += 1;
                    gaps.push(gap);
                    if format!("{cost:.2}") == format!("{known:.2}") {
                        reached += 1;
                    }
                    format!("gap {gap:.2}%")
                };
                println!(
                    "{name}: cost {cost:.2} best-known {known:.2} {verdict}; {:.1} s CPU, {} rollouts{}",
                    r.cpu,
                    r.rollouts,
                    if r.stopped { " (time limit)" } else { "" }
                );
            }
            let mean = gaps.iter().sum::<f64>() / gaps.len().max(1) as f64;
            println!(
                "level {level} seed {seed} N {iterations} {}: feasible {feasible} of {n}, best-known {reached}, mean gap of the feasible {mean:.2}%, {cpu:.0} s CPU",
                if prune { "pruned" } else { "unpruned" }
            );
        }
        "samegame" => {
            let tabu = rest.first() == Some(&"tabu");
            if tabu {
                rest.remove(0);
            }
            let boards: Vec<usize> = if rest.is_empty() {
                (1..=20).collect()
            } else {
                rest.iter().map(|b| b.parse().expect("board")).collect()
            };
            let (mut total, mut cpu) = (0.0, 0.0);
            for b in &boards {
                let g = games::samegame::SameGame::standard(*b)
                    .expect("board")
                    .with_tabu(tabu);
                let r = run(&g, level, seed, iterations, secs);
                total += r.score;
                cpu += r.cpu;
                println!(
                    "board {b}: {}; {:.1} s CPU, {} rollouts{}",
                    r.score,
                    r.cpu,
                    r.rollouts,
                    if r.stopped { " (time limit)" } else { "" }
                );
            }
            println!(
                "level {level} seed {seed} N {iterations}{}: total {total} over {} boards, {cpu:.0} s CPU",
                if tabu { " tabu" } else { "" },
                boards.len()
            );
        }
        other => {
            eprintln!("unknown suite {other}");
            std::process::exit(2);
        }
    }
}
