//! Distributed retrograde builds through the service (algorithm `retrograde`): real
//! coordinator and worker processes, a real SQLite file and real artifact files.
//!
//! - An undisturbed build by 2 workers gives databases with the checksums of the in-process
//!   build (`gamesolver solve` into a data folder), and the coordinator serves the set
//!   (`GET /v1/tables/NAME`, `/v1/tables/NAME/STONES`) byte for byte as the data folder holds it.
//! - A worker killed (SIGKILL) in the middle, and separately the coordinator killed and
//!   restarted on its store: the same checksums, the same tasks as the plan of an undisturbed
//!   build (a restart issues nothing twice), and every task that needed a second attempt
//!   belongs to one round: the round in flight.
//! - A build cancelled in the middle leaves its sealed databases and no round chunks but those
//!   of tasks still running.

use gamesolver_e2e::{bin, scratch, start_worker_with, wait_until, CoordOpts, Coordinator, Proc};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::Duration;

/// A build small enough to be quick and large enough to be caught in the middle: Awari with 4
/// pits a side, databases of 0..=11 stones, small ranges so that every round has several
/// tasks.
fn job(name: &str) -> Value {
    json!({
        "game": "awari",
        "game_params": {"pits": 4},
        "algorithm": "retrograde",
        "options": {"stones": 11, "name": name, "split": 2048},
    })
}

/// The checksums of the in-process build (`gamesolver solve --json` with the data folder in
/// `data`), by stone count.
fn in_process(data: &std::path::Path, name: &str) -> Vec<String> {
    let out = std::process::Command::new(bin("gamesolver"))
        .args([
            "solve",
            "--game",
            "awari",
            "--game-param",
            "pits=4",
            "--algorithm",
            "retrograde",
            "--option",
            "stones=11",
            "--option",
            &format!("name={name}"),
            "--json",
        ])
        .env("GAMESOLVER_DATA", data)
        .output()
        .expect("gamesolver solve runs");
    assert!(
        out.status.success(),
        "solve: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON result");
    checksums(&r)
}

fn checksums(result: &Value) -> Vec<String> {
    result["databases"]
        .as_array()
        .expect("databases")
        .iter()
        .map(|d| d["sha256"].as_str().expect("sha256").to_string())
        .collect()
}

/// Workers with a cache folder of their own.
fn workers(c: &Coordinator, dir: &std::path::Path, n: usize) -> Vec<Proc> {
    let before = c.workers();
    let procs = (0..n)
        .map(|i| {
            let cache = dir.join(format!("cache-{i}-{}", rand_tag()));
            start_worker_with(
                &c.url,
                1,
                &[],
                &["--cache-dir", cache.to_str().unwrap(), "--memory-mb", "512"],
            )
        })
        .collect();
    wait_until(Duration::from_secs(30), "workers registered", || {
        c.workers() >= before + n
    });
    procs
}

fn rand_tag() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// Every task of job `id`: (what, state, attempts).
fn tasks(c: &Coordinator, id: u64) -> Vec<(String, String, u64)> {
    let mut all = Vec::new();
    let mut after = 0;
    loop {
        let (code, page) = c.get(
            &format!("/v1/jobs/{id}/tasks?after={after}&limit=1000"),
            None,
        );
        assert_eq!(code, 200, "{page}");
        for t in page["tasks"].as_array().unwrap() {
            all.push((
                t["what"].as_str().unwrap().to_string(),
                t["state"].as_str().unwrap().to_string(),
                t["attempts"].as_u64().unwrap(),
            ));
        }
        match page["next_after"].as_u64() {
            Some(a) => after = a,
            None => return all,
        }
    }
}

/// The round ("N stones, round R") of a round task's description.
fn round_of(what: &str) -> Option<String> {
    what.find(", entries").map(|i| what[..i].to_string())
}

/// Waits until the build of job `id` has sealed `k` databases.
fn wait_databases(c: &Coordinator, id: u64, k: u64) {
    wait_until(Duration::from_secs(60), "databases sealed", || {
        let (_, s) = c.get(&format!("/v1/jobs/{id}"), None);
        s["progress"]["databases_done"].as_u64().unwrap_or(0) >= k || s["state"] == "done"
    });
}

/// Files in the artifact folder of the coordinator on `db`.
fn artifact_files(db: &std::path::Path) -> usize {
    let mut name = db.file_name().unwrap().to_os_string();
    name.push(".artifacts");
    std::fs::read_dir(db.with_file_name(name))
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            !n.to_string_lossy().starts_with("tmp-")
        })
        .count()
}

/// Alpha-beta on a 4-stone position of the 4-pit board with `tables=small` (the set the
/// coordinator built, 0..=11 stones) and without: the same value, fewer nodes with the
/// databases, and the job records the build it read as `small@MANIFEST`. A name nobody built
/// and a forged manifest are refused with 400.
fn tables_from_the_coordinator(c: &Coordinator) {
    let search = |tables: Option<&str>| {
        let mut j = json!({
            "game": "awari",
            "game_params": {"pits": 4},
            "position": "1,1,0,0,1,0,1,0",
            "algorithm": "alphabeta",
        });
        if let Some(t) = tables {
            j["options"] = json!({ "tables": t });
        }
        j
    };
    let plain = c.wait_job(c.submit(&search(None), None), Duration::from_secs(120));
    assert_eq!(plain["state"], "done", "{plain}");
    let with = c.wait_job(
        c.submit(&search(Some("small")), None),
        Duration::from_secs(120),
    );
    assert_eq!(with["state"], "done", "{with}");
    assert_eq!(with["result"]["value"], plain["result"]["value"], "{with}");
    let (n_with, n_plain) = (
        with["result"]["nodes"].as_u64().unwrap(),
        plain["result"]["nodes"].as_u64().unwrap(),
    );
    assert!(
        n_with < n_plain,
        "{n_with} nodes with the databases, {n_plain} without"
    );
    let pinned = with["job"]["options"]["tables"]
        .as_str()
        .unwrap()
        .to_string();
    let hash = pinned.strip_prefix("small@").expect("pinned as small@HASH");
    assert!(
        gamesolver_shared::search::retrograde::artifacts::is_name(hash),
        "{pinned}"
    );
    // Naming the pinned form again reads the same build.
    let again = c.wait_job(
        c.submit(&search(Some(&pinned)), None),
        Duration::from_secs(120),
    );
    assert_eq!(
        again["result"]["value"], plain["result"]["value"],
        "{again}"
    );
    assert_eq!(again["job"]["options"]["tables"], pinned.as_str());
    for (bad, says) in [
        (
            "nothing".to_string(),
            "no finished retrograde build named 'nothing'",
        ),
        (format!("small@{}", "0".repeat(64)), "no database set"),
        // A database file is an artifact, but not a set's manifest.
        (
            format!("small@{}", with_db_artifact(c)),
            "is not a database set",
        ),
        ("../small".to_string(), "not a plain data name"),
    ] {
        let (code, body) = c.post("/v1/jobs", &search(Some(&bad)), None);
        assert_eq!(code, 400, "{bad}: {body}");
        let msg = body["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains(says), "{bad}: {msg}");
    }
    // The 6-pit board cannot read a 4-pit set.
    let mut six = search(Some("small"));
    six["game_params"] = json!({});
    six["position"] = json!("1,1,1,1,1,1,1,1,1,1,1,1");
    let (code, body) = c.post("/v1/jobs", &six, None);
    assert_eq!(code, 400, "{body}");
}

/// `GET /v1/tables/small/lookup?position=P` (entries read from the coordinator's artifact
/// files) against `gamesolver tables lookup` on the in-process build in `data`: the same score
/// and best moves; a board above the set's top count is a 400.
fn lookups_match_the_data_folder(c: &Coordinator, data: &std::path::Path) {
    for p in [
        "1,1,0,0,1,0,1,0",
        "2,0,3,1,0,2,1,2",
        "0,0,0,0,2,1,0,0",
        "3,0,0,0,0,0,0,0",
        "0,0,0,0,0,0,0,0",
        "5,0,1,1,1,1,1,1",
    ] {
        let out = std::process::Command::new(bin("gamesolver"))
            .args(["tables", "lookup", "small", p, "--game-param", "pits=4"])
            .env("GAMESOLVER_DATA", data)
            .output()
            .expect("gamesolver tables lookup runs");
        assert!(
            out.status.success(),
            "{p}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let score: i64 = text
            .lines()
            .find_map(|l| l.strip_prefix("score "))
            .expect("a score line")
            .parse()
            .unwrap();
        let best = text.lines().find_map(|l| l.strip_prefix("best ")).unwrap();
        // The same command against the coordinator prints the same lines.
        let remote = std::process::Command::new(bin("gamesolver"))
            .args(["tables", "lookup", "small", p, "--coordinator", &c.url])
            .output()
            .expect("gamesolver tables lookup --coordinator runs");
        assert!(
            remote.status.success(),
            "{p}: {}",
            String::from_utf8_lossy(&remote.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&remote.stdout), text, "{p}");
        let (code, got) = c.get(&format!("/v1/tables/small/lookup?position={p}"), None);
        assert_eq!(code, 200, "{p}: {got}");
        assert_eq!(got["score"], score, "{p}: {got}");
        let moves: Vec<&str> = got["best"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        if moves.is_empty() {
            assert!(best.starts_with("none"), "{p}: {best} / {got}");
        } else {
            assert_eq!(moves.join(" "), best, "{p}: {got}");
        }
    }
    for (p, says) in [
        ("3,1,3,0,2,2,1,1", "covers 0 to 11 stones"),
        ("1,1,1", "position"),
        ("1,1,0,0,1,0,1,0;a", "not moves"),
    ] {
        let (code, got) = c.get(&format!("/v1/tables/small/lookup?position={p}"), None);
        assert_eq!(code, 400, "{p}: {got}");
        let msg = got["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains(says), "{p}: {msg}");
    }
    // A set the coordinator does not have, or a board above the set: exit 2, one line.
    for (name, p) in [("nothing", "1,1,0,0,0,0,0,0"), ("small", "3,1,3,0,2,2,1,1")] {
        let out = std::process::Command::new(bin("gamesolver"))
            .args(["tables", "lookup", name, p, "--coordinator", &c.url])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name} {p}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("tables:"), "{err}");
    }
    let (code, _) = c.get("/v1/tables/small/lookup", None);
    assert_eq!(code, 400);
    let (code, _) = c.get("/v1/tables/nothing/lookup?position=1,1,0,0,0,0,0,0", None);
    assert_eq!(code, 404);
}

/// The artifact of database 3 of the set `small`.
fn with_db_artifact(c: &Coordinator) -> String {
    let (_, set) = c.get("/v1/tables/small", None);
    set["databases"][3]["artifact"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn builds_through_the_service_match_the_in_process_build_through_kills() {
    let dir = scratch("retro");
    let reference = in_process(&dir.join("data"), "small");
    assert_eq!(reference.len(), 12);

    // Undisturbed, 2 workers.
    let opts = CoordOpts {
        lease_ms: Some(1500),
        ..CoordOpts::default()
    };
    let c = Coordinator::start(&dir.join("calm.sqlite"), &opts);
    let mut ws = workers(&c, &dir, 2);
    let id = c.submit(&job("small"), None);
    let done = c.wait_job(id, Duration::from_secs(120));
    assert_eq!(done["state"], "done", "{done}");
    assert_eq!(checksums(&done["result"]), reference);
    // The round chunks were deleted as their rounds were spent: the 12 databases are left.
    assert_eq!(artifact_files(&dir.join("calm.sqlite")), 12);
    let calm_tasks: BTreeSet<String> = tasks(&c, id).into_iter().map(|t| t.0).collect();
    assert!(calm_tasks.len() > 12 * 3, "{} tasks", calm_tasks.len());
    // The set as the coordinator serves it: the files of the in-process build, byte for byte.
    let (code, set) = c.get("/v1/tables/small", None);
    assert_eq!(code, 200, "{set}");
    assert_eq!(set["job"], id);
    let resp = ureq::get(&format!("{}/v1/tables/small/9", c.url))
        .call()
        .expect("download");
    let mut body = Vec::new();
    std::io::Read::read_to_end(&mut resp.into_reader(), &mut body).unwrap();
    let file = std::fs::read(dir.join("data/tables/small/awari4-09.rdb")).unwrap();
    assert!(
        body == file,
        "the served file differs from the in-process one"
    );
    let (code, _) = c.get("/v1/tables/..%2Fetc/1", None);
    assert!(code == 400 || code == 404, "{code}");
    let (code, _) = c.get("/v1/tables/nothing", None);
    assert_eq!(code, 404);
    // A search job naming the set reads this build: the coordinator pins it (its data folder
    // has no set of that name), the workers fetch it, and the value is the search's without it.
    tables_from_the_coordinator(&c);
    lookups_match_the_data_folder(&c, &dir.join("data"));
    // A forged upload (content that does not hash to its name) is refused.
    let forged = format!("{}/v1/worker/artifacts/{}", c.url, "0".repeat(64));
    let (code, _) = gamesolver_e2e::raw("PUT", &forged, Some("not this"), None);
    assert_eq!(code, 400);
    for w in &mut ws {
        w.kill9();
    }
    drop(c);

    // A worker killed in the middle.
    let c = Coordinator::start(&dir.join("worker-kill.sqlite"), &opts);
    let mut ws = workers(&c, &dir, 2);
    let id = c.submit(&job("small"), None);
    wait_databases(&c, id, 8);
    let before_kill = artifact_files(&dir.join("worker-kill.sqlite"));
    ws[0].kill9();
    let done = c.wait_job(id, Duration::from_secs(120));
    assert_eq!(done["state"], "done", "{done}");
    assert_eq!(checksums(&done["result"]), reference);
    // At most the chunk the killed worker uploaded and never reported is left over.
    let left = artifact_files(&dir.join("worker-kill.sqlite"));
    assert!(
        (12..=13).contains(&left),
        "{left} artifacts ({} when the worker was killed)",
        before_kill
    );
    let ts = tasks(&c, id);
    let names: BTreeSet<String> = ts.iter().map(|t| t.0.clone()).collect();
    assert_eq!(names, calm_tasks, "the same plan as the undisturbed build");
    let redone: BTreeSet<String> = ts
        .iter()
        .filter(|t| t.2 > 1)
        .filter_map(|t| round_of(&t.0))
        .collect();
    assert!(redone.len() <= 1, "rounds redone: {redone:?}");
    ws[1].kill9();
    drop(c);

    // The coordinator killed in the middle and restarted on its store.
    let db = dir.join("coord-kill.sqlite");
    let mut c = Coordinator::start(&db, &opts);
    let mut ws = workers(&c, &dir, 2);
    let id = c.submit(&job("small"), None);
    wait_databases(&c, id, 8);
    c.proc.kill9();
    let c = Coordinator::start(
        &db,
        &CoordOpts {
            port: Some(c.port),
            ..opts.clone()
        },
    );
    let done = c.wait_job(id, Duration::from_secs(120));
    assert_eq!(done["state"], "done", "{done}");
    assert_eq!(checksums(&done["result"]), reference);
    // Chunks uploaded while the coordinator was down never reach it; the rest were deleted,
    // those spent before the kill included (the restart replays their retirement).
    let left = artifact_files(&db);
    assert!((12..=14).contains(&left), "{left} artifacts");
    let ts = tasks(&c, id);
    assert_eq!(ts.len(), calm_tasks.len(), "a restart issues no task twice");
    let names: BTreeSet<String> = ts.iter().map(|t| t.0.clone()).collect();
    assert_eq!(names, calm_tasks);
    let redone: BTreeSet<String> = ts
        .iter()
        .filter(|t| t.2 > 1)
        .filter_map(|t| round_of(&t.0))
        .collect();
    assert!(redone.len() <= 1, "rounds redone: {redone:?}");
    for w in &mut ws {
        w.kill9();
    }
    drop(c);

    // A build cancelled in the middle keeps its sealed databases; its round chunks go, but for
    // those a task still running uploads after the cancellation (one per worker at most).
    let db = dir.join("cancel.sqlite");
    let c = Coordinator::start(&db, &opts);
    let mut ws = workers(&c, &dir, 2);
    let id = c.submit(&job("small"), None);
    wait_databases(&c, id, 8);
    let (code, body) = c.post(&format!("/v1/jobs/{id}/cancel"), &json!({}), None);
    assert_eq!(code, 200, "{body}");
    let (_, st) = c.get(&format!("/v1/jobs/{id}"), None);
    assert_eq!(st["state"], "cancelled", "{st}");
    let sealed = st["progress"]["databases_done"].as_u64().unwrap() as usize;
    wait_until(
        Duration::from_secs(30),
        "tasks of the cancelled build ended",
        || {
            let (_, s) = c.get(&format!("/v1/jobs/{id}"), None);
            s["tasks"]["running"].as_u64() == Some(0)
        },
    );
    let left = artifact_files(&db);
    assert!(
        (sealed..=sealed + 2).contains(&left),
        "{left} artifacts after a cancel with {sealed} databases sealed"
    );
    for w in &mut ws {
        w.kill9();
    }
}

/// A set in the data folder (coordinator and workers share it here): a job naming it keeps the
/// plain name (nothing to pin) and agrees with the search without it. The coordinator checks the
/// files without holding the entries: a set with one damaged entry passes its check (the sizes
/// and database 0 are right), and the worker, which reads every file whole, refuses it.
#[test]
fn a_data_folder_set_is_checked_by_the_coordinator_and_read_by_the_workers() {
    let dir = scratch("retro-data");
    let data = dir.join("data");
    in_process(&data, "local");
    let sets = data.join("tables");
    std::fs::create_dir_all(sets.join("damaged")).unwrap();
    for e in std::fs::read_dir(sets.join("local")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), sets.join("damaged").join(e.file_name())).unwrap();
    }
    let file = sets.join("damaged").join("awari4-07.rdb");
    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    let c = Coordinator::start(
        &dir.join("data.sqlite"),
        &CoordOpts {
            local_workers: 1,
            env: vec![("GAMESOLVER_DATA".into(), data.to_str().unwrap().into())],
            ..CoordOpts::default()
        },
    );
    let search = |tables: &str| {
        json!({
            "game": "awari",
            "game_params": {"pits": 4},
            "position": "1,1,0,0,1,0,1,0",
            "algorithm": "alphabeta",
            "options": {"tables": tables},
        })
    };
    let mut plain = search("x");
    plain["options"] = json!({});
    let plain = c.wait_job(c.submit(&plain, None), Duration::from_secs(120));
    let with = c.wait_job(c.submit(&search("local"), None), Duration::from_secs(120));
    assert_eq!(with["state"], "done", "{with}");
    assert_eq!(with["result"]["value"], plain["result"]["value"], "{with}");
    assert_eq!(with["job"]["options"]["tables"], "local");
    let damaged = c.wait_job(c.submit(&search("damaged"), None), Duration::from_secs(120));
    assert_eq!(damaged["state"], "failed", "{damaged}");
    let error = damaged["error"].as_str().unwrap_or_default();
    assert!(error.contains("checksum"), "{error}");
}

/// `gamesolver tables build` and `verify` (the game through its catalogue hook) write the same
/// databases as a retrograde job (the same SHA-256 per stone count), and verify finds no
/// mismatch; a build past the board's stones is refused with one line.
#[test]
fn the_tables_command_builds_what_a_job_builds_and_verifies_it() {
    let data = scratch("tables-cli");
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(bin("gamesolver"))
            .args(args)
            .env("GAMESOLVER_DATA", &data)
            .output()
            .expect("gamesolver runs");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        (
            out.status.code(),
            text,
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, out, err) = cli(&[
        "tables",
        "build",
        "cli",
        "--stones",
        "11",
        "--game-param",
        "pits=4",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let built: Vec<String> = out
        .lines()
        .filter_map(|l| l.split_once("sha256 ").map(|(_, h)| h.trim().to_string()))
        .collect();
    assert_eq!(built.len(), 12, "{out}");
    assert!(out.starts_with("0 stones: "), "{out}");
    assert_eq!(
        built,
        in_process(&data, "job"),
        "tables build and the job differ"
    );
    let (code, out, err) = cli(&["tables", "verify", "cli", "--game-param", "pits=4"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(out.matches(", 0 mismatches").count(), 12, "{out}");
    let (code, _, err) = cli(&[
        "tables",
        "build",
        "big",
        "--stones",
        "40",
        "--game-param",
        "pits=3",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("--stones must be at most 24"), "{err}");
}
