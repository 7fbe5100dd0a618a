//! NRPA benchmark command (not a test): rollouts per second and scores over seeds.
//!
//! ```text
//! cargo run --release -p gamesolver-shared --example nrpa_bench -- morpion 5D 3 1 1 [iterations] [seconds]
//! cargo run --release -p gamesolver-shared --example nrpa_bench -- morpion 5T 2 1 10
//! cargo run --release -p gamesolver-shared --example nrpa_bench -- tsptw rc_206.1 3 1 5
//! cargo run --release -p gamesolver-shared --example nrpa_bench -- samegame 1 3 1 1
//! cargo run --release -p gamesolver-shared --example nrpa_bench -- samegame all 2 1 1
//! cargo run --release -p gamesolver-shared --example nrpa_bench -- weakschur 4 3 1 5
//! ```
//! Arguments: game, its parameter (variant, instance, board, k), level, first seed, number of
//! seeds, then optionally iterations (default 100) and a time limit per seed in seconds. Prints
//! one line per seed (score, rollouts, rollouts/s) and the best, mean and median score.

use gamesolver_shared::model::single::SinglePlayer;
use gamesolver_shared::model::Game;
use gamesolver_shared::search::nrpa::{nrpa, NrpaOptions};
use gamesolver_shared::search::Control;
use std::time::{Duration, Instant};

fn bench<G: SinglePlayer>(
    g: &G,
    level: u32,
    first: u64,
    seeds: u64,
    iterations: u32,
    secs: Option<f64>,
) {
    let mut scores = Vec::new();
    for seed in first..first + seeds {
        let opts = NrpaOptions {
            level,
            iterations,
            seed,
            ..NrpaOptions::default()
        };
        let ctl = Control::with_limits(secs.map(Duration::from_secs_f64), None);
        let t0 = Instant::now();
        let o = nrpa(g, &g.initial_state(), &opts, None, &ctl).expect("valid options");
        let dt = t0.elapsed().as_secs_f64();
        println!(
            "seed {seed}: score {} rollouts {} in {dt:.2} s = {:.1} k rollouts/s{}",
            o.score,
            o.rollouts,
            o.rollouts as f64 / dt / 1000.0,
            if o.stopped.is_some() {
                " (time limit)"
            } else {
                ""
            }
        );
        scores.push(o.score);
    }
    scores.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = scores.len();
    let median = if n % 2 == 1 {
        scores[n / 2]
    } else {
        (scores[n / 2 - 1] + scores[n / 2]) / 2.0
    };
    let mean = scores.iter().sum::<f64>() / n as f64;
    println!(
        "level {level}: best {} mean {mean:.2} median {median}",
        scores[n - 1]
    );
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 5 {
        eprintln!("usage: nrpa_bench GAME PARAM LEVEL FIRST_SEED SEEDS [ITERATIONS] [SECONDS]");
        std::process::exit(2);
    }
    let level: u32 = a[2].parse().expect("level");
    let first: u64 = a[3].parse().expect("first seed");
    let seeds: u64 = a[4].parse().expect("seeds");
    let iterations: u32 = a
        .get(5)
        .map(|x| x.parse().expect("iterations"))
        .unwrap_or(100);
    let secs: Option<f64> = a.get(6).map(|x| x.parse().expect("seconds"));
    use gamesolver_shared::games;
    match a[0].as_str() {
        "morpion" => {
            let v = games::morpion::Morpion::parse_variant(&a[1]).expect("variant");
            bench(
                &games::morpion::Morpion::new(v),
                level,
                first,
                seeds,
                iterations,
                secs,
            )
        }
        "samegame" => {
            if a[1] == "all" {
                // The 20 standard boards: total of the best scores.
                let mut total = 0.0;
                for n in 1..=20 {
                    let g = games::samegame::SameGame::standard(n).expect("board");
                    let opts = NrpaOptions {
                        level,
                        iterations,
                        seed: first,
                        ..NrpaOptions::default()
                    };
                    let ctl = Control::with_limits(secs.map(Duration::from_secs_f64), None);
                    let o = nrpa(&g, &g.initial_state(), &opts, None, &ctl).expect("valid options");
                    println!("board {n}: {}", o.score);
                    total += o.score;
                }
                println!("total over 20 boards: {total}");
                return;
            }
            let g =
                games::samegame::SameGame::standard(a[1].parse().expect("board")).expect("board");
            bench(&g, level, first, seeds, iterations, secs)
        }
        "tsptw" => {
            let g = games::tsptw::Tsptw::load(&a[1]).expect("instance");
            bench(&g, level, first, seeds, iterations, secs)
        }
        "weakschur" => {
            let g = games::weakschur::WeakSchur::new(a[1].parse().expect("k")).expect("k");
            bench(&g, level, first, seeds, iterations, secs)
        }
        other => {
            eprintln!("unknown game {other}");
            std::process::exit(2);
        }
    }
}
