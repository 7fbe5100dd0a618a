//! Retention of finished jobs and the store's disk quota (issue #43 item 6), with real
//! `gamesolver serve` processes and a local worker: the store stays under `--retain-mb` while
//! jobs of about 1 MiB keep coming, the jobs that ended first are deleted first (their 404 says
//! so), new ones are kept; past `--retain-hours` finished jobs go and their ids are not given
//! again after a restart; `--max-store-mb` answers 429 `quota` when what is left cannot be
//! deleted (jobs in flight), and accepts again once retention could free room.

use gamesolver_e2e::*;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// The tests of this file measure the store's size as it shrinks: one at a time, so that each
/// coordinator's sweeps and vacuum steps are not starved by the others'.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A job of about 1 MiB (the body limit is 1 MiB).
fn big_job(seed: u64) -> Value {
    json!({"game": "tree", "algorithm": "minimax", "position": big_tree(1_000_000, seed)})
}

fn small_job(i: u64) -> Value {
    json!({"game": "tictactoe", "algorithm": "alphabeta", "position": (1 + i % 9).to_string()})
}

/// Bytes of the SQLite file and of its WAL.
fn files(db: &Path) -> (u64, u64) {
    let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let mut wal = db.as_os_str().to_os_string();
    wal.push("-wal");
    (len(db), len(Path::new(&wal)))
}

const MIB: f64 = 1048576.0;

fn assert_removed(c: &Coordinator, id: u64) {
    let (code, v) = c.get(&format!("/v1/jobs/{id}"), None);
    assert_eq!(code, 404, "job {id}: {v}");
    assert_eq!(v["error"]["code"], "not_found", "{v}");
    let m = v["error"]["message"].as_str().unwrap_or_default();
    assert!(m.contains("removed by the retention policy"), "{m}");
}

/// 100 jobs of 1 MiB through a coordinator with `--retain-mb 20`: the SQLite file stays near
/// the budget all along and ends under it, the first jobs are deleted (404 saying why, gone
/// from the list), the latest are kept and answered.
#[test]
fn the_store_stays_under_the_size_budget() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch("retention-size");
    let db = dir.join("db.sqlite");
    let budget_mb = 20u64;
    let c = Coordinator::start(
        &db,
        &CoordOpts {
            local_workers: 1,
            extra_args: vec![
                "--retain-mb".into(),
                budget_mb.to_string(),
                "--max-store-mb".into(),
                "0".into(),
            ],
            ..Default::default()
        },
    );
    let t0 = Instant::now();
    let small: Vec<u64> = (0..3).map(|i| c.submit(&small_job(i), None)).collect();
    for &id in &small {
        assert_eq!(c.wait_job(id, Duration::from_secs(30))["state"], "done");
    }
    let n = 100u64;
    let mut ids = Vec::new();
    let mut peak = (0u64, 0u64);
    for i in 0..n {
        ids.push(c.submit(&big_job(i), None));
        // A few in flight at a time: the worker keeps up, the store keeps filling.
        if i % 4 == 3 {
            let id = ids[ids.len() - 1];
            assert_eq!(c.wait_job(id, Duration::from_secs(60))["state"], "done");
        }
        let (f, w) = files(&db);
        peak = (peak.0.max(f), peak.1.max(w));
    }
    let last = *ids.last().unwrap();
    assert_eq!(c.wait_job(last, Duration::from_secs(60))["state"], "done");
    let written = t0.elapsed();
    let budget = budget_mb as f64 * MIB;
    wait_until(
        Duration::from_secs(20),
        "the store under its budget",
        || c.metric("gamesolver_store_bytes{part=\"db\"}") <= budget,
    );
    // The file itself shrinks to the live pages (incremental vacuum, then a checkpoint) within
    // a few sweeps: what stays is under 4 MiB of free pages (reused by new rows) plus the last
    // step's MiB.
    wait_until(Duration::from_secs(60), "the file given back", || {
        (files(&db).0 as f64) <= budget + 6.0 * MIB
    });
    let (file, wal) = files(&db);
    let deleted = c.metric("gamesolver_jobs_deleted_total");
    println!(
        "{n} jobs of 1 MiB (+3 small) in {:.1} s with --retain-mb {budget_mb}: SQLite file at \
         most {:.1} MiB during the run (WAL at most {:.1} MiB), {:.1} MiB at the end (WAL \
         {:.1} MiB, live pages {:.1} MiB); {deleted} jobs deleted",
        written.as_secs_f64(),
        peak.0 as f64 / MIB,
        peak.1 as f64 / MIB,
        file as f64 / MIB,
        wal as f64 / MIB,
        c.metric("gamesolver_store_bytes{part=\"db\"}") / MIB
    );
    // During the run the file grows at most a few sweeps' worth of jobs past the budget.
    assert!(
        (peak.0 as f64) < budget + 24.0 * MIB,
        "peak {:.1} MiB",
        peak.0 as f64 / MIB
    );
    assert!(deleted >= 70.0, "{deleted} deleted");
    // The first jobs went (oldest first), the newest stay.
    for &id in small.iter().chain(&ids[..10]) {
        assert_removed(&c, id);
    }
    for &id in &ids[ids.len() - 10..] {
        let (code, v) = c.get(&format!("/v1/jobs/{id}"), None);
        assert_eq!(code, 200, "job {id}: {v}");
        assert_eq!(v["state"], "done");
    }
    let (code, list) = c.get("/v1/jobs?limit=1000", None);
    assert_eq!(code, 200);
    let listed: Vec<u64> = list["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|j| j["id"].as_u64())
        .collect();
    assert!(
        listed.contains(&last) && !listed.contains(&small[0]),
        "{listed:?}"
    );
    assert!(listed.len() < 40, "{} jobs listed", listed.len());
    // Counts no longer include deleted jobs.
    let (_, status) = c.get("/v1/status", None);
    assert_eq!(
        status["jobs"]["done"].as_u64(),
        Some(listed.len() as u64),
        "{status}"
    );
    // Other endpoints of a deleted job say the same.
    let (code, v) = c.get(&format!("/v1/jobs/{}/tasks", small[0]), None);
    assert_eq!(code, 404, "{v}");
    let (code, v) = c.post(&format!("/v1/jobs/{}/cancel", small[0]), &json!({}), None);
    assert_eq!(code, 404, "{v}");
}

/// `--retain-hours` deletes finished jobs once they are old enough; after a restart on the
/// same file the next job gets an id past the deleted ones.
#[test]
fn old_jobs_go_and_their_ids_are_not_given_again() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch("retention-age");
    let db = dir.join("db.sqlite");
    let opts = CoordOpts {
        local_workers: 1,
        // 3.6 seconds.
        extra_args: vec!["--retain-hours".into(), "0.001".into()],
        ..Default::default()
    };
    let mut c = Coordinator::start(&db, &opts);
    let ids: Vec<u64> = (0..3).map(|i| c.submit(&small_job(i), None)).collect();
    for &id in &ids {
        assert_eq!(c.wait_job(id, Duration::from_secs(30))["state"], "done");
    }
    // Still there right after, gone within a few seconds more.
    assert_eq!(c.get(&format!("/v1/jobs/{}", ids[2]), None).0, 200);
    wait_until(Duration::from_secs(20), "the jobs deleted", || {
        c.get(&format!("/v1/jobs/{}", ids[2]), None).0 == 404
    });
    for &id in &ids {
        assert_removed(&c, id);
    }
    assert_eq!(c.metric("gamesolver_jobs_deleted_total"), 3.0);
    assert_eq!(c.proc.terminate(Duration::from_secs(10)), Some(0));
    let c = Coordinator::start(&db, &opts);
    let next = c.submit(&small_job(4), None);
    assert!(
        next > ids[2],
        "id {next} given again (deleted up to {})",
        ids[2]
    );
    // Deleted before the restart: the 404 still says why.
    assert_removed(&c, ids[0]);
}

/// With no worker, jobs stay queued and cannot be deleted: past `--max-store-mb` a submit
/// gets 429 `quota` naming the flag. Cancelled, they can be: retention frees room and
/// submits are accepted again.
#[test]
fn the_disk_quota_answers_429_when_retention_cannot_free_enough() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let c = Coordinator::fresh(
        "retention-quota",
        &CoordOpts {
            extra_args: vec!["--max-store-mb".into(), "20".into()],
            ..Default::default()
        },
    );
    let mut queued = Vec::new();
    // Submits until one is refused; returns the refusal.
    let fill = |queued: &mut Vec<u64>| loop {
        let (code, v) = c.post("/v1/jobs", &big_job(queued.len() as u64), None);
        match code {
            201 => queued.push(v["id"].as_u64().unwrap()),
            429 => break v,
            _ => panic!("submit: {code} {v}"),
        }
        assert!(
            queued.len() < 40,
            "no 429 after {} jobs of 1 MiB",
            queued.len()
        );
    };
    let refused = fill(&mut queued);
    assert_eq!(refused["error"]["code"], "quota", "{refused}");
    let m = refused["error"]["message"].as_str().unwrap().to_string();
    assert!(m.contains("max-store-mb") && m.contains("20 MiB"), "{m}");
    println!(
        "--max-store-mb 20: {} queued jobs of 1 MiB accepted, then 429: {m}",
        queued.len()
    );
    assert!(queued.len() >= 8, "only {} accepted", queued.len());
    // A moment later, with sweeps measuring the store again (the figure between two sweeps
    // is an estimate), at most one more fits: nothing can be deleted.
    std::thread::sleep(Duration::from_millis(1500));
    let before = queued.len();
    fill(&mut queued);
    assert!(
        queued.len() <= before + 1,
        "{} more accepted",
        queued.len() - before
    );
    assert!(c.metric("gamesolver_store_quota_refusals_total") >= 2.0);
    // Cancel the first half: they have ended, retention deletes them to make room.
    for &id in &queued[..queued.len() / 2] {
        assert_eq!(
            c.post(&format!("/v1/jobs/{id}/cancel"), &json!({}), None).0,
            200
        );
    }
    let mut accepted = None;
    wait_until(Duration::from_secs(20), "a submit accepted again", || {
        let (code, v) = c.post("/v1/jobs", &big_job(1000), None);
        accepted = v["id"].as_u64();
        code == 201
    });
    assert!(accepted.is_some());
    assert_removed(&c, queued[0]);
    // The jobs in flight were kept.
    let last = *queued.last().unwrap();
    let (code, v) = c.get(&format!("/v1/jobs/{last}"), None);
    assert_eq!((code, v["state"].as_str()), (200, Some("queued")), "{v}");
}
