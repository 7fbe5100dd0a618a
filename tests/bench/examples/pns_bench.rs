//! Benchmark of the proof-number family on Pons' Connect Four sets: per algorithm and setting,
//! mean nodes and time per position, bytes per node and the peak tree or table size, for the
//! exact score (the planner's threshold probes, Saffidine and Cazenave's multi-valued search) and for the
//! win/not-win decision (`target=1`, one threshold); each optimisation switched off in turn;
//! alpha-beta's exact solve on the same positions as the reference. Every answer is checked
//! against the published score. Positions run one after the other on one thread (except the
//! `threads=2` rows), so times are per position.
//!
//! ```text
//! cargo run --release -p gamesolver-bench --example pns_bench -- [N] [SET...]
//! ```
//! `N` (default 50) positions from the top of each set (default `Test_L3_R1 Test_L2_R1`).
//! The load average is printed first: times on a loaded machine are too high, node counts are
//! exact whatever the load.

use gamesolver_shared::games::data::pons_set;
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;
use std::time::Instant;

/// A benchmark configuration: label, algorithm, extra options (`target=1`: the decision;
/// without `target`: the exact score).
type Config = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

const CONFIGS: &[Config] = &[
    ("alphabeta exact", "alphabeta", &[]),
    ("pns exact", "pns", &[]),
    ("dfpn exact", "dfpn", &[]),
    ("pn2 exact", "pn2", &[]),
    ("pdspn exact", "pdspn", &[]),
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
    (
        "pns -all three",
        "pns",
        &[
            ("target", "1"),
            ("current_node", "false"),
            ("remember_best", "false"),
            ("delete_solved", "false"),
        ],
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
    ("pdspn", "pdspn", &[("target", "1")]),
];

/// A line of `/proc/self/status` (e.g. `VmHWM`), or "?" elsewhere.
fn proc_status(key: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_else(|| "?".into())
}

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
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at start: {}", load.trim());
    for set in sets {
        let lines: Vec<_> = match pons_set(&set) {
            Ok(l) => l.into_iter().take(n).collect(),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        };
        println!("{set}: {} positions", lines.len());
        println!(
            "  {:<20} {:>10} {:>12} {:>10} {:>11} {:>11} {:>7}",
            "configuration",
            "mean ms",
            "mean nodes",
            "bytes/node",
            "mean peak",
            "max peak",
            "probes"
        );
        for (label, algorithm, options) in CONFIGS {
            let (mut ms, mut nodes, mut peak, mut max_peak, mut bytes, mut probes) =
                (0.0f64, 0u64, 0u64, 0u64, 0u64, 0u64);
            for line in &lines {
                let job = JobSpec::new("connect4", &line.moves, algorithm).with_options(options);
                let prepared = prepare(&job).expect("prepare");
                let t0 = Instant::now();
                let r = run_local(prepared.as_ref(), &Control::unlimited()).expect("run");
                ms += t0.elapsed().as_secs_f64() * 1e3;
                nodes += r.nodes;
                if options.iter().any(|(k, _)| *k == "target") {
                    assert_eq!(
                        r.extra.to_map()["proved"],
                        serde_json::json!(line.score >= 1),
                        "{label} '{}'",
                        line.moves
                    );
                } else {
                    assert_eq!(
                        r.value,
                        serde_json::json!(line.score),
                        "{label} '{}'",
                        line.moves
                    );
                }
                let extra = r.extra.to_map();
                let get = |k: &str| extra.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
                peak += get("peak_nodes");
                max_peak = max_peak.max(get("peak_nodes"));
                bytes = bytes.max(get("bytes_per_node"));
                probes += get("probes");
            }
            let k = lines.len().max(1) as f64;
            println!(
                "  {:<20} {:>10.3} {:>12.0} {:>10} {:>11.0} {:>11} {:>7.1}",
                label,
                ms / k,
                nodes as f64 / k,
                bytes,
                peak as f64 / k,
                max_peak,
                probes as f64 / k
            );
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at end: {}", load.trim());
    println!(
        "peak resident memory of the process (VmHWM): {}",
        proc_status("VmHWM")
    );
}
