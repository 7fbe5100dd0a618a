//! Pons' Connect Four test sets through the same path as `gamesolver batch`: every line goes
//! through `registry::prepare` and `plan::run_local`, and the exact score must match.
//!
//! L3_R1 and L2_R1 run in full (a few seconds in the test profile); L2_R2 and L1_R1 run a
//! sample. The long sets (L1_R2, L1_R3) are for the benchmark (`examples/pons_bench.rs`).

use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;
use std::path::{Path, PathBuf};

fn data_dir() -> PathBuf {
    match std::env::var_os("GAMESOLVER_DATA") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"),
    }
}

/// Reads `(moves, score)` lines of a Pons set.
fn read_set(name: &str) -> Vec<(String, i64)> {
    let path = data_dir().join("connect4").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (moves, score) = l.split_once(' ').expect("'<moves> <score>'");
            (moves.to_string(), score.trim().parse().expect("score"))
        })
        .collect()
}

fn job(position: &str, options: &[(&str, &str)]) -> JobSpec {
    JobSpec {
        game: "connect4".into(),
        position: position.into(),
        algorithm: "alphabeta".into(),
        options: options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..JobSpec::default()
    }
}

/// Runs `lines` (every `step`-th line) and checks each score; returns total nodes.
fn check_set(name: &str, step: usize, limit: usize) -> u64 {
    let lines = read_set(name);
    assert_eq!(lines.len(), 1000, "{name} has 1000 lines");
    let mut nodes = 0;
    let mut checked = 0;
    for (moves, want) in lines.iter().step_by(step).take(limit) {
        let prepared =
            prepare(&job(moves, &[])).unwrap_or_else(|e| panic!("{name} '{moves}': {e}"));
        let result = run_local(prepared.as_ref(), &Control::unlimited()).unwrap();
        assert_eq!(result.value, serde_json::json!(want), "{name} '{moves}'");
        assert!(result.best_move.is_some(), "{name} '{moves}': no best move");
        nodes += result.nodes;
        checked += 1;
    }
    eprintln!("{name}: {checked} positions, {nodes} nodes");
    nodes
}

#[test]
fn pons_l3_r1_all() {
    check_set("Test_L3_R1", 1, 1000);
}

#[test]
fn pons_l2_r1_all() {
    check_set("Test_L2_R1", 1, 1000);
}

#[test]
fn pons_l2_r2_sample() {
    check_set("Test_L2_R2", 20, 50);
}

#[test]
fn pons_l1_r1_sample() {
    check_set("Test_L1_R1", 20, 50);
}

/// Weak solving gives the sign of the exact score.
#[test]
fn weak_gives_the_sign() {
    for (moves, want) in read_set("Test_L2_R1").iter().step_by(50) {
        let prepared = prepare(&job(moves, &[("weak", "true")])).unwrap();
        let result = run_local(prepared.as_ref(), &Control::unlimited()).unwrap();
        assert_eq!(result.value, serde_json::json!(want.signum()), "'{moves}'");
    }
}
