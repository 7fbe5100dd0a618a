//! `gamesolver-bench quick` end to end: it starts its own coordinator and worker processes
//! (the `gamesolver` and `gamesolver-worker` binaries beside it in `target/<profile>`, which
//! `cargo test --workspace` builds), checks the node-count signatures and writes a report with
//! every job type.

use gamesolver_e2e::*;
use serde_json::Value;
use std::process::Command;

const JOB_TYPES: [&str; 4] = [
    "exact Connect Four",
    "multi-valued PNS",
    "root-parallel MCTS",
    "parallel NRPA",
];

/// The harness under test (cargo builds it for this test).
fn harness() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gamesolver-bench"))
}

#[test]
fn bench_quick_checks_signatures_and_reports_every_job_type() {
    let dir = scratch("bench-quick");
    // The service binaries must be there (the harness would exit 2 without them).
    for name in ["gamesolver", "gamesolver-worker"] {
        bin(name);
    }
    let out = harness()
        .args(["quick", "--workers", "1,2", "--out"])
        .arg(&dir)
        .env("RUST_LOG", "error")
        .output()
        .expect("run gamesolver-bench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();

    let sigs = report["signatures"].as_array().unwrap();
    assert!(sigs.len() >= 5, "{report}");
    for s in sigs {
        assert_eq!(s["ok"], true, "signature: {s}");
        assert!(s["nodes"].as_u64().unwrap() > 0, "{s}");
    }
    for p in report["perft"].as_array().unwrap() {
        assert_eq!(p["leaves"], p["published"], "{p}");
    }
    let types = report["service"]["job_types"].as_array().unwrap();
    for want in JOB_TYPES {
        let jt = types
            .iter()
            .find(|t| t["type"].as_str().unwrap().starts_with(want))
            .unwrap_or_else(|| panic!("no job type {want} in {report}"));
        let runs = jt["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{jt}");
        for r in runs {
            assert_eq!(r["ok"], true, "{r}");
            assert!(r["seconds"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["speedup"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["efficiency"].as_f64().is_some(), "{r}");
            assert!(r["efficiency_per_core"].as_f64().is_some(), "{r}");
            // The dispatch figures: the workers did the work, the coordinator's share is
            // measured.
            assert!(r["worker_cpu_s"].as_f64().unwrap() >= 0.0, "{r}");
            assert!(r["worker_busy"].as_f64().is_some(), "{r}");
            assert!(r["coordinator_ms_per_task"].as_f64().is_some(), "{r}");
        }
        assert!(md.contains(want), "report.md lacks {want}");
    }
    // Split jobs really ran on both worker processes.
    for want in ["root-parallel MCTS", "parallel NRPA"] {
        let jt = types
            .iter()
            .find(|t| t["type"].as_str().unwrap().starts_with(want))
            .unwrap();
        assert_eq!(jt["runs"][1]["distinct_workers"], 2, "{jt}");
    }
    let overhead = report["service"]["dispatch_overhead"].as_array().unwrap();
    assert_eq!(overhead.len(), 2);
    assert!(overhead[0]["median_ms"].as_f64().unwrap() > 0.0);
    assert!(
        report["problems"].as_array().unwrap().is_empty(),
        "{report}"
    );
    // The report says what produced it, where and when.
    assert!(
        report["command"]
            .as_str()
            .unwrap()
            .starts_with("gamesolver-bench quick --workers 1,2"),
        "{report}"
    );
    let date = report["date"].as_str().unwrap();
    assert_eq!(date.len(), "2026-01-01 00:00".len(), "{date}");
    assert!(md.contains(&format!("Date: {date} UTC")), "{md}");
}

#[test]
fn bench_refuses_bad_arguments_with_status_2() {
    for args in [
        vec!["quick", "--workers", "0"],
        vec!["slow"],
        vec!["quick", "--peers", "/nonexistent/peers"],
        vec!["quick", "--worker", "/nonexistent/gamesolver-worker"],
        vec!["full", "--gamesolver", "/nonexistent/gamesolver"],
    ] {
        let out = harness().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

/// The production binary does not carry the harness: `gamesolver bench ...` says where it is, in
/// one line, with status 2.
#[test]
fn gamesolver_bench_points_to_the_harness() {
    for args in [vec!["bench"], vec!["bench", "quick", "--workers", "1"]] {
        let out = Command::new(bin("gamesolver"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("cargo run --release -p gamesolver-bench -- quick"),
            "{err}"
        );
    }
}

/// Writes an executable shell script.
fn script(path: &std::path::Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The peers section with stand-in peers that print what the real ones print: every row is
/// parsed, ours is measured next to it, and a peer whose answer differs from ours (here a
/// Fhourstones stand-in that calls a won position lost) makes the run fail naming it.
#[test]
fn bench_peers_are_parsed_and_disagreements_fail() {
    let dir = scratch("bench-peers");
    let peers = dir.join("peers");
    script(
        &peers.join("driver/pons_driver"),
        "echo \"positions $2 failed 0 mean wall 120.5 us cpu 100.0 us nodes 4000\"",
    );
    script(
        &peers.join("fhourstones/SearchGame"),
        "read pos\necho \"Solving 8-ply position after $pos . . .\"\necho \"score = LOSS (-)  work = 14\"\necho \"51596 pos / 10 msec = 5159.6 Kpos/sec\"",
    );
    // Burns some CPU so that the children's CPU counters move.
    script(
        &peers.join("morpion-lpp/src/nrpa/nrpa"),
        "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done\necho \"  Simulations: 1000 (10517.18 per second)\"\necho \"  Best line: 61\"",
    );
    let out_dir = dir.join("out");
    let out = harness()
        .args(["quick", "--no-service", "--peers"])
        .arg(&peers)
        .arg("--out")
        .arg(&out_dir)
        .env("RUST_LOG", "error")
        .output()
        .expect("run gamesolver-bench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.json")).unwrap())
            .unwrap();
    let rows = report["peers"].as_array().unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["peer"].as_str().unwrap().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row in {report}"))
    };
    let pons = row("Pons");
    assert_eq!(pons["peer_value"], 100.0, "{pons}");
    assert_eq!(pons["agree"], true, "{pons}");
    assert!(pons["ours_value"].as_f64().unwrap() > 0.0, "{pons}");
    let fh = row("Fhourstones");
    assert_eq!(fh["agree"], false, "{fh}");
    assert_eq!(fh["ours_result"]["value"], 1, "{fh}");
    let nrpa: Vec<&Value> = rows
        .iter()
        .filter(|r| r["peer"].as_str().unwrap().starts_with("morpion-lpp"))
        .collect();
    assert_eq!(nrpa.len(), 2, "{report}");
    for r in nrpa {
        assert_eq!(r["peer_result"]["rollouts"], 1000.0, "{r}");
        assert_eq!(r["peer_result"]["best"], 61.0, "{r}");
        assert!(r["peer_value"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["ours_value"].as_f64().unwrap() > 0.0, "{r}");
    }
    let problems = report["problems"].as_array().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p.as_str().unwrap().contains("Fhourstones input 45461667")),
        "{report}"
    );
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(md.contains("| Pons' connect4 solver"), "{md}");
    assert!(md.contains("**NO**"), "{md}");
}
