//! Benchmark: builds the Awari databases bottom-up in-process and prints, per stone count, the
//! positions (against C(n + 11, 11)), the rounds, the wall and process CPU time, the memory the
//! build holds and the peak resident size, and optionally verifies each database.
//!
//! ```text
//! cargo run --release -p gamesolver-shared --example retrograde_bench -- \
//!     [--stones N] [--threads T] [--verify] [--dir DIR]
//! ```
//! Defaults: up to 12 stones, 2 threads. `--dir` also writes the database files there.

use gamesolver_shared::games::awari::Awari;
use gamesolver_shared::model::Retrograde;
use gamesolver_shared::search::retrograde::{build_database, store, verify_database, Tables};
use std::time::Instant;

/// CPU time of the process in seconds (`CLOCK_PROCESS_CPUTIME_ID`).
fn process_cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; the call only writes it.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Peak resident set size in MB (`VmHWM` of /proc/self/status).
fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let mut stones = 12usize;
    let mut threads = 2usize;
    let mut verify = false;
    let mut dir = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--stones" => {
                stones = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--stones N")
            }
            "--threads" => {
                threads = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--threads T")
            }
            "--verify" => verify = true,
            "--dir" => dir = Some(std::path::PathBuf::from(args.next().expect("--dir DIR"))),
            other => panic!("unknown argument {other}"),
        }
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .expect("the global pool is set once");
    let game = Awari::default();
    let mut tables = Tables::new();
    println!(
        "stones positions C(n+11,11) rounds wall_s cpu_s build_MB held_MB peak_MB pos_per_s verify"
    );
    for n in 0..=stones {
        let (t0, c0) = (Instant::now(), process_cpu());
        let (entries, stats) = build_database(&game, n, &tables, |_, _| {});
        let (wall, cpu) = (t0.elapsed().as_secs_f64(), process_cpu() - c0);
        tables.push(entries);
        let mismatches = if verify {
            verify_database(&game, &tables, n).len().to_string()
        } else {
            "-".into()
        };
        if let Some(d) = &dir {
            store::write_database(d, "awari", n, tables.db(n)).expect("database file written");
        }
        let held: u64 = (0..=n).map(|d| game.db_len(d)).sum();
        let binom = (1..=11u64).fold(1u64, |c, k| c * (n as u64 + k) / k);
        println!(
            "{n:6} {:9} {binom:13} {:6} {wall:6.2} {cpu:5.2} {:8.1} {:7.1} {:7.1} {:9.0} {mismatches}",
            stats.positions,
            stats.rounds,
            2.0 * stats.positions as f64 / 1048576.0,
            held as f64 / 1048576.0,
            peak_rss_mb(),
            stats.positions as f64 * stats.rounds as f64 / wall.max(1e-9),
        );
    }
}
