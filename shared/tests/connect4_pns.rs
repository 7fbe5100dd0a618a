//! The proof-number algorithms (`pns`, `dfpn`, `pn2`, `pdspn`) on Pons' Connect Four test sets, through
//! the same path as `gamesolver solve`: `registry::prepare` and `plan::run_local`.
//!
//! For every checked position, each algorithm must give the published exact score (the
//! planner's probes, i.e. Saffidine and Cazenave's multi-valued search) and the published win/not-win decision
//! with `target=1`. CI runs all of `Test_L3_R1` and all of `Test_L2_R1`: positions run in
//! parallel (rayon) and probes stay on possible scores, so the full L2 set takes 6.8 s of CPU
//! for the three algorithms (58.7 s wall at load average 20 on 2 cores, 2026-11-30; it was an
//! ignored test of about 4 minutes before).
//! Another board size (6 x 5) is checked against alpha-beta on positions of random games.

use gamesolver_shared::games::data::pons_set;
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::{JobResult, JobSpec};
use rayon::prelude::*;

fn read_set(name: &str) -> Vec<(String, i64)> {
    pons_set(name)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|l| (l.moves, l.score as i64))
        .collect()
}

fn run(
    params: &[(&str, &str)],
    position: &str,
    algorithm: &str,
    options: &[(&str, &str)],
) -> JobResult {
    let job = JobSpec::new("connect4", position, algorithm)
        .with_params(params)
        .with_options(options);
    let prepared = prepare(&job).unwrap_or_else(|e| panic!("{algorithm} '{position}': {e}"));
    run_local(prepared.as_ref(), &Control::unlimited())
        .unwrap_or_else(|e| panic!("{algorithm} '{position}': {e}"))
}

fn check_set(name: &str, step: usize) {
    let lines = read_set(name);
    assert_eq!(lines.len(), 1000, "{name} has 1000 lines");
    for algorithm in ["pns", "dfpn", "pn2", "pdspn"] {
        let t0 = std::time::Instant::now();
        // Positions are independent: spread them over the cores.
        let (nodes, checked) = lines
            .par_iter()
            .step_by(step)
            .map(|(moves, want)| {
                let r = run(&[], moves, algorithm, &[]);
                assert_eq!(
                    r.value,
                    serde_json::json!(want),
                    "{algorithm} {name} '{moves}'"
                );
                let mut nodes = r.nodes;
                let r = run(&[], moves, algorithm, &[("target", "1")]);
                assert_eq!(
                    r.extra.to_map()["proved"],
                    serde_json::json!(*want >= 1),
                    "{algorithm} {name} '{moves}' target 1"
                );
                nodes += r.nodes;
                (nodes, 1usize)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        eprintln!(
            "{algorithm} {name}: {checked} positions, {nodes} nodes, {:?}",
            t0.elapsed()
        );
    }
}

#[test]
fn pons_l3_r1_all() {
    check_set("Test_L3_R1", 1);
}

#[test]
fn pons_l2_r1_all() {
    check_set("Test_L2_R1", 1);
}

/// 6 x 5 Connect Four: positions of pseudo-random games, every algorithm against alpha-beta.
#[test]
fn another_board_size_agrees_with_alphabeta() {
    let params = [("width", "6"), ("height", "5")];
    let mut seed = 12345u64;
    for i in 0..12 {
        // A cheap LCG picks columns; illegal ones (full columns, moves after the end) are skipped.
        let mut position = String::new();
        let plies = 12 + i % 6;
        let mut attempts = 0;
        // Stops early if the game ended (no column is legal any more).
        while position.len() < plies && attempts < 100 {
            attempts += 1;
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let col = ((seed >> 33) % 6 + 1).to_string();
            let next = format!("{position}{col}");
            let probe = JobSpec::new("connect4", &next, "alphabeta").with_params(&params);
            if prepare(&probe).is_ok() {
                position = next;
            }
        }
        let want = run(&params, &position, "alphabeta", &[]).value;
        for algorithm in ["pns", "dfpn", "pn2", "pdspn"] {
            let r = run(&params, &position, algorithm, &[]);
            assert_eq!(r.value, want, "{algorithm} 6x5 '{position}'");
        }
    }
}

/// A proof written for Connect Four positions verifies with the game rules alone, and flipping
/// any single move of it (to any other column) makes verification fail.
#[test]
fn connect4_proofs_verify_and_every_flipped_move_fails() {
    use gamesolver_shared::proof::{Claim, ProofFile};
    use gamesolver_shared::registry::proof::{verify, verify_proof_value};
    let lines = read_set("Test_L3_R1");
    for (moves, score) in lines.iter().step_by(97).take(6) {
        // Prove the exact score from both sides: "value >= score" and "value < score + 1".
        for (target, claim, algorithm) in [
            (*score, Claim::AtLeast, "pns"),
            (score + 1, Claim::Below, "dfpn"),
        ] {
            let t = target.to_string();
            let r = run(&[], moves, algorithm, &[("target", &t), ("proof", "true")]);
            assert_eq!(
                r.extra.to_map()["proved"],
                serde_json::json!(claim == Claim::AtLeast),
                "'{moves}' {t}"
            );
            let certificate = r.proof.clone().expect("proof=true gives a certificate");
            let c =
                verify_proof_value(&certificate).unwrap_or_else(|e| panic!("'{moves}' {t}: {e}"));
            assert_eq!(c.claim, claim);
            match claim {
                Claim::AtLeast => assert_eq!(c.lower, Some(serde_json::json!(score)), "'{moves}'"),
                Claim::Below => {
                    assert_eq!(c.below, Some(serde_json::json!(score + 1)), "'{moves}'")
                }
            }
            let file: ProofFile = serde_json::from_value(certificate).unwrap();
            let mut flipped = 0;
            for (i, tok) in file.tree.iter().enumerate() {
                let Some(text) = tok.as_str() else { continue };
                if text.len() == 16 {
                    continue; // a position hash
                }
                for col in (1..=7).map(|c| c.to_string()).filter(|c| c != text) {
                    let mut bad = file.clone();
                    bad.tree[i] = col.clone().into();
                    assert!(
                        verify(&bad).is_err(),
                        "'{moves}': token {i} '{text}' -> '{col}' still verifies"
                    );
                    flipped += 1;
                }
            }
            assert!(flipped > 0);
        }
    }
}
