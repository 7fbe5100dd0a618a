//! NRPA benchmark command (not a test): rollouts per second and scores over seeds.
//!
//! ```text
//! cargo run --release -p gamesolver-bench --example nrpa_bench -- morpion 5D 3 1 1 [iterations] [seconds]
//! cargo run --release -p gamesolver-bench --example nrpa_bench -- morpion 5T 2 1 10
//! cargo run --release -p gamesolver-bench --example nrpa_bench -- tsptw rc_206.1 3 1 5
//! cargo run --release -p gamesolver-bench --example nrpa_bench -- tsptw-pruned all 3 1 1
//! cargo run --release -p gamesolver-bench --example nrpa_bench -- samegame all 2 1 1
//! cargo run --release -p gamesolver-bench --example nrpa_bench -- weakschur 4 3 1 5
//! ```
//! Arguments: game, its parameter (variant, instance, board or `all`, k), level, first seed, number
//! of seeds, then optionally iterations (default 100), a time limit per seed in seconds (0: none),
//! a rollout limit per seed (0: none) and threads (the shared scheme with `batch` = threads).
//! `adapt=seed|layers` (default `seed`) and, for Morpion, `code=line|move` (default `line`),
//! anywhere, choose the Adapt and the move codes; `fingerprint=1` adds a line per seed hashing the
//! best sequence and the final top-level policy bit for bit, to check that a speed-up changes no
//! result. Prints one line per seed (score, rollouts, rollouts/s wall and per CPU second) and the
//! best, mean and median score.

use gamesolver_shared::model::single::SinglePlayer;
use gamesolver_shared::model::Game;
use gamesolver_shared::search::nrpa::{nrpa, AdaptRule, NrpaOptions};
use gamesolver_shared::search::Control;
use std::time::{Duration, Instant};

/// `println!` that exits quietly when stdout is gone (a closed pipe, e.g. `| head -1`) instead
/// of panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

/// CPU time of this process (all threads), from /proc (Linux); 0 elsewhere.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Limits of one run.
struct Budget {
    iterations: u32,
    secs: Option<f64>,
    rollouts: Option<u64>,
    threads: usize,
    adapt: AdaptRule,
    /// `fingerprint=1`: also print an FNV-1a hash of the best sequence and of the top-level
    /// policy's weights (bit patterns), to check that a speed-up leaves results unchanged.
    fingerprint: bool,
}

/// FNV-1a over the best sequence (its `Debug` text) and the checkpoints' policy weights.
fn fingerprint<M: std::fmt::Debug>(o: &gamesolver_shared::search::nrpa::NrpaOutcome<M>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    };
    eat(format!("{:?}", o.sequence).as_bytes());
    for c in &o.checkpoints {
        for &(code, w) in &c.policy {
            eat(&code.to_le_bytes());
            eat(&w.to_bits().to_le_bytes());
        }
    }
    h
}

fn bench<G: SinglePlayer>(g: &G, level: u32, first: u64, seeds: u64, b: &Budget) {
    let mut scores = Vec::new();
    for seed in first..first + seeds {
        let opts = NrpaOptions {
            level,
            iterations: b.iterations,
            seed,
            threads: b.threads,
            batch: b.threads,
            adapt: b.adapt,
            ..NrpaOptions::default()
        };
        let ctl = Control::with_limits(b.secs.map(Duration::from_secs_f64), b.rollouts);
        let (t0, c0) = (Instant::now(), cpu_seconds());
        let o = nrpa(g, &g.initial_state(), &opts, None, &ctl).expect("valid options");
        let (dt, dc) = (t0.elapsed().as_secs_f64(), cpu_seconds() - c0);
        out!(
            "seed {seed}: score {} rollouts {} in {dt:.2} s = {:.1} k rollouts/s, {dc:.2} CPU s = {:.1} k per CPU s{}",
            o.score,
            o.rollouts,
            o.rollouts as f64 / dt / 1000.0,
            o.rollouts as f64 / dc.max(1e-9) / 1000.0,
            if o.stopped.is_some() {
                " (stopped by a limit)"
            } else {
                ""
            }
        );
        if b.fingerprint {
            out!("seed {seed}: fingerprint {:016x}", fingerprint(&o));
        }
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
    out!(
        "level {level}: best {} mean {mean:.2} median {median}",
        scores[n - 1]
    );
}

fn main() {
    let all: Vec<String> = std::env::args().skip(1).collect();
    let named = |k: &str| {
        all.iter()
            .find_map(|x| x.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
            .map(str::to_string)
    };
    let adapt = named("adapt").map_or(AdaptRule::Seed, |t| {
        AdaptRule::parse(&t).expect("adapt=seed|layers")
    });
    let code = named("code").unwrap_or_else(|| "line".into());
    let a: Vec<String> = all.iter().filter(|x| !x.contains('=')).cloned().collect();
    if a.len() < 5 {
        eprintln!(
            "usage: nrpa_bench GAME PARAM LEVEL FIRST_SEED SEEDS [ITERATIONS] [SECONDS] [ROLLOUTS] [THREADS]"
        );
        std::process::exit(2);
    }
    let level: u32 = a[2].parse().expect("level");
    let first: u64 = a[3].parse().expect("first seed");
    let seeds: u64 = a[4].parse().expect("seeds");
    let iterations: u32 = a
        .get(5)
        .map(|x| x.parse().expect("iterations"))
        .unwrap_or(100);
    let secs: Option<f64> = a
        .get(6)
        .map(|x| x.parse().expect("seconds"))
        .filter(|&x| x > 0.0);
    let rollouts: Option<u64> = a
        .get(7)
        .map(|x| x.parse().expect("rollouts"))
        .filter(|&x| x > 0);
    let threads: usize = a.get(8).map(|x| x.parse().expect("threads")).unwrap_or(1);
    let budget = Budget {
        iterations,
        secs,
        rollouts,
        threads,
        adapt,
        fingerprint: named("fingerprint").is_some_and(|v| v == "1"),
    };
    use gamesolver_shared::games;
    match a[0].as_str() {
        "morpion" => {
            let v = games::morpion::Morpion::parse_variant(&a[1]).expect("variant");
            let c = games::morpion::Morpion::parse_codes(&code).expect("code=move|line");
            bench(
                &games::morpion::Morpion::new(v).with_codes(c),
                level,
                first,
                seeds,
                &budget,
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
                    out!("board {n}: {}", o.score);
                    total += o.score;
                }
                out!("total over 20 boards: {total}");
                return;
            }
            let g =
                games::samegame::SameGame::standard(a[1].parse().expect("board")).expect("board");
            bench(&g, level, first, seeds, &budget)
        }
        "tsptw" | "tsptw-pruned" if a[1] == "all" => {
            let prune = a[0] == "tsptw-pruned";
            // Every instance of BEST_KNOWN.tsv: best cost found and gap to the best-known cost.
            let table = games::data::read("nrpa/tsptw_solomon_potvin_bengio/BEST_KNOWN.tsv")
                .expect("BEST_KNOWN.tsv");
            let mut gaps = Vec::new();
            for line in table
                .lines()
                .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            {
                let mut f = line.split('\t');
                let (name, known) = (f.next().unwrap(), f.next().unwrap().parse::<f64>().unwrap());
                let g = games::tsptw::Tsptw::load(name)
                    .expect("instance")
                    .with_pruning(prune);
                let opts = NrpaOptions {
                    level,
                    iterations,
                    seed: first,
                    ..NrpaOptions::default()
                };
                let ctl = Control::with_limits(secs.map(Duration::from_secs_f64), None);
                let o = nrpa(&g, &g.initial_state(), &opts, None, &ctl).expect("valid options");
                let gap = 100.0 * (-o.score - known) / known;
                out!(
                    "{name}: {:.2} best-known {known:.2} gap {gap:.2}%",
                    -o.score
                );
                gaps.push(gap);
            }
            out!(
                "mean gap {:.2}%",
                gaps.iter().sum::<f64>() / gaps.len() as f64
            );
        }
        "tsptw" | "tsptw-pruned" => {
            let g = games::tsptw::Tsptw::load(&a[1])
                .expect("instance")
                .with_pruning(a[0] == "tsptw-pruned");
            bench(&g, level, first, seeds, &budget)
        }
        "weakschur" => {
            let g = games::weakschur::WeakSchur::new(a[1].parse().expect("k")).expect("k");
            bench(&g, level, first, seeds, &budget)
        }
        other => {
            eprintln!("unknown game {other}");
            std::process::exit(2);
        }
    }
}
