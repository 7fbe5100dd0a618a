//! `gamesolver bench quick` end to end (issue 12): it starts its own coordinator and worker
//! processes, checks the node-count signatures and writes a report with every job type.

use gamesolver_e2e::*;
use serde_json::Value;
use std::process::Command;

const JOB_TYPES: [&str; 4] = [
    "exact Connect Four",
    "multi-valued PNS",
    "root-parallel MCTS",
    "parallel NRPA",
];

#[test]
fn bench_quick_checks_signatures_and_reports_every_job_type() {
    let dir = scratch("bench-quick");
    let out = Command::new(bin("gamesolver"))
        .args(["bench", "quick", "--workers", "1,2", "--out"])
        .arg(&dir)
        .env("RUST_LOG", "error")
        .output()
        .expect("run gamesolver bench");
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
}

#[test]
fn bench_refuses_bad_arguments_with_status_2() {
    for args in [
        vec!["bench", "quick", "--workers", "0"],
        vec!["bench", "slow"],
        vec!["bench", "quick", "--peers", "/nonexistent/peers"],
    ] {
        let out = Command::new(bin("gamesolver"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}
