//! Benchmark of the proof-number family on Pons' Connect Four sets: per algorithm and setting,
//! mean nodes and time per position for the win/not-win decision (`target=1`, one threshold, so
//! the figures are per decision, not per exact value), bytes per node and the peak tree or table
//! size; alpha-beta's exact solve as the reference. Every decision is checked against the score.
//!
//! ```text
//! cargo run --release -p gamesolver-shared --example pns_bench -- [N] [SET...]
//! ```
//! `N` (default 50) positions from the top of each set (default `Test_L3_R1 Test_L2_R1`).

use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// (label, algorithm, options) of every configuration measured.
/// A benchmark configuration: label, algorithm, extra options.
type Config = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

const CONFIGS: &[Config] = &[
    ("alphabeta exact", "alphabeta", &[]),
    ("pns", "pns", &[("target", "1")]),
    (
        "pns -current_node",
        "pns",
        &[("target", "1"), ("current_node", "false")],
    ),
    (
        "pns -remember_best",
        "pns",
        &[("target", "1"), ("remember_best", "false")],
    ),
    (
        "pns -delete_solved",
        "pns",
        &[("target", "1"), ("delete_solved", "false")],
    ),
    ("pns threads=2", "pns", &[("target", "1"), ("threads", "2")]),
    ("dfpn", "dfpn", &[("target", "1")]),
    (
        "dfpn epsilon=0",
        "dfpn",
        &[("target", "1"), ("epsilon", "0")],
    ),
    (
        "dfpn threads=2",
        "dfpn",
        &[("target", "1"), ("threads", "2")],
    ),
    ("pn2", "pn2", &[("target", "1")]),
    ("pn2 threads=2", "pn2", &[("target", "1"), ("threads", "2")]),
];

fn main() {
    let mut n = 50usize;
    let mut sets = Vec::new();
    for a in std::env::args().skip(1) {
        match a.parse() {
            Ok(v) => n = v,
            Err(_) => sets.push(a),
        }
    }
    if sets.is_empty() {
        sets = vec!["Test_L3_R1".to_string(), "Test_L2_R1".to_string()];
    }
    let data = match std::env::var_os("GAMESOLVER_DATA") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"),
    };
    for set in sets {
        let text = std::fs::read_to_string(data.join("connect4").join(&set)).expect("read set");
        let lines: Vec<(String, i64)> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(n)
            .map(|l| {
                let (m, s) = l.split_once(' ').expect("'<moves> <score>'");
                (m.to_string(), s.trim().parse().expect("score"))
            })
            .collect();
        println!("{set}: {} positions", lines.len());
        println!(
            "  {:<22} {:>12} {:>14} {:>10} {:>12}",
            "configuration", "mean ms", "mean nodes", "bytes/node", "mean peak"
        );
        for (label, algorithm, options) in CONFIGS {
            let (mut ms, mut nodes, mut peak, mut bytes) = (0.0f64, 0u64, 0u64, 0u64);
            for (moves, score) in &lines {
                let job = JobSpec {
                    game: "connect4".into(),
                    position: moves.clone(),
                    algorithm: algorithm.to_string(),
                    options: options
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                    ..JobSpec::default()
                };
                let prepared = prepare(&job).expect("prepare");
                let t0 = Instant::now();
                let r = run_local(prepared.as_ref(), &Control::unlimited()).expect("run");
                ms += t0.elapsed().as_secs_f64() * 1e3;
                nodes += r.nodes;
                if *algorithm == "alphabeta" {
                    assert_eq!(r.value, serde_json::json!(score), "'{moves}'");
                } else {
                    assert_eq!(
                        r.extra["proved"],
                        serde_json::json!(*score >= 1),
                        "{label} '{moves}'"
                    );
                    peak += r
                        .extra
                        .get("peak_nodes")
                        .and_then(|v| v.as_u64())
                        .unwrap_or(0);
                    bytes = r
                        .extra
                        .get("bytes_per_node")
                        .and_then(|v| v.as_u64())
                        .unwrap_or(0);
                }
            }
            let k = lines.len().max(1) as f64;
            println!(
                "  {:<22} {:>12.3} {:>14.0} {:>10} {:>12.0}",
                label,
                ms / k,
                nodes as f64 / k,
                bytes,
                peak as f64 / k
            );
        }
    }
}
