//! Benchmark: Pons' Connect Four test sets, single-threaded, a fresh (reset) table per position,
//! through the same path as `gamesolver batch` (`registry::prepare` + `plan::run_local`).
//!
//! ```text
//! cargo run --release -p gamesolver-shared --example pons_bench -- [N] [SET...] [--threads T] [--weak]
//! ```
//! `N` (default 100) is how many positions of each set to run (from the top); sets default to
//! all six. Prints mean time and mean nodes per position, and checks every score.

use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn main() {
    let mut n = 100usize;
    let mut sets = Vec::new();
    let mut threads = 1usize;
    let mut weak = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--threads" {
            threads = args
                .next()
                .and_then(|t| t.parse().ok())
                .expect("--threads T");
        } else if a == "--weak" {
            weak = true;
        } else if let Ok(v) = a.parse() {
            n = v;
        } else {
            sets.push(a);
        }
    }
    if sets.is_empty() {
        sets = [
            "Test_L3_R1",
            "Test_L2_R1",
            "Test_L2_R2",
            "Test_L1_R1",
            "Test_L1_R2",
            "Test_L1_R3",
        ]
        .map(String::from)
        .to_vec();
    }
    let data = match std::env::var_os("GAMESOLVER_DATA") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"),
    };
    println!(
        "set          positions   mean time     mean nodes   (threads {threads}{})",
        if weak { ", weak" } else { "" }
    );
    for set in sets {
        let text = std::fs::read_to_string(data.join("connect4").join(&set)).expect("read set");
        let mut total = 0.0f64;
        let mut nodes = 0u64;
        let mut count = 0usize;
        for line in text.lines().filter(|l| !l.trim().is_empty()).take(n) {
            let (moves, want) = line.split_once(' ').expect("'<moves> <score>'");
            let want: i64 = want.trim().parse().expect("score");
            let mut options = std::collections::BTreeMap::new();
            options.insert("threads".to_string(), threads.to_string());
            if weak {
                options.insert("weak".to_string(), "true".to_string());
            }
            let job = JobSpec {
                game: "connect4".into(),
                position: moves.into(),
                algorithm: "alphabeta".into(),
                options,
                ..JobSpec::default()
            };
            let t0 = Instant::now();
            let prepared = prepare(&job).expect("prepare");
            let result = run_local(prepared.as_ref(), &Control::unlimited()).expect("run");
            total += t0.elapsed().as_secs_f64();
            let want = if weak { want.signum() } else { want };
            assert_eq!(result.value, serde_json::json!(want), "{set} '{moves}'");
            nodes += result.nodes;
            if std::env::var_os("PONS_VERBOSE").is_some() {
                println!(
                    "{moves} {want} nodes {} probes {}",
                    result.nodes, result.extra["probes"]
                );
            }
            count += 1;
        }
        let mean = total / count.max(1) as f64;
        let (v, unit) = if mean < 1e-3 {
            (mean * 1e6, "us")
        } else if mean < 1.0 {
            (mean * 1e3, "ms")
        } else {
            (mean, "s")
        };
        println!(
            "{set:<12} {count:>9}   {v:>8.2} {unit}   {:>12.0}",
            nodes as f64 / count.max(1) as f64
        );
    }
}
