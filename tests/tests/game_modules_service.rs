//! Game modules through the service (issue 48, docs/GAME_MODULES.md): a module uploaded with
//! `POST /v1/games` is checked, kept as a file artifact under its SHA-256 and a name, solved by
//! two worker processes that fetch it by hash (same values and best moves as the catalogue's
//! game through the same coordinator), still there after the coordinator is killed and
//! restarted; bad uploads are refused with one line and the service goes on. Needs the binaries
//! built with the feature: `cargo build --release -p gamesolver -p gamesolver-worker --features
//! gamesolver/modules,gamesolver-worker/modules && cargo test --release -p gamesolver-e2e
//! --features modules --test game_modules_service`.
#![cfg(feature = "modules")]

use gamesolver_e2e::{gamesolver, post_expecting_continue, scratch, CoordOpts, Coordinator};
use serde_json::{json, Value};
use std::time::Duration;

const TICTACTOE: &str = include_str!("../../shared/modules/tictactoe.wat");

/// `POST /v1/games[?name=NAME]` with `bytes`: the status and the JSON answer.
fn upload(c: &Coordinator, bytes: &[u8], name: Option<&str>) -> (u16, Value) {
    let mut req = ureq::post(&format!("{}/v1/games", c.url))
        .timeout(Duration::from_secs(60))
        .set("Content-Type", "application/wasm");
    if let Some(n) = name {
        req = req.query("name", n);
    }
    match req.send_bytes(bytes) {
        Ok(r) => (r.status(), r.into_json().unwrap_or(Value::Null)),
        Err(ureq::Error::Status(code, r)) => (code, r.into_json().unwrap_or(Value::Null)),
        Err(e) => panic!("upload: {e}"),
    }
}

/// The value and best move of a finished job.
fn answer(c: &Coordinator, job: &Value) -> (Value, Value) {
    let id = c.submit(job, None);
    let st = c.wait_job(id, Duration::from_secs(120));
    assert_eq!(st["state"], "done", "{job}: {st}");
    (
        st["result"]["value"].clone(),
        st["result"]["best_move"].clone(),
    )
}

#[test]
fn uploaded_modules_are_solved_by_workers_and_survive_a_restart() {
    let db = scratch("game_modules_service").join("db.sqlite");
    let mut c = Coordinator::start(&db, &CoordOpts::default());
    let workers = c.start_workers(2, 1);

    let (code, up) = upload(&c, TICTACTOE.as_bytes(), Some("ttt"));
    assert_eq!(code, 201, "{up}");
    let sha = up["sha256"].as_str().expect("sha256").to_string();
    assert_eq!(up["game"], format!("module:{sha}"));
    assert_eq!(up["info"]["players"], 2);
    // The same module again (another name) is the same artifact.
    let (code, again) = upload(&c, TICTACTOE.as_bytes(), None);
    assert_eq!(code, 201, "{again}");
    assert_eq!(again["sha256"], sha.as_str());
    let (code, list) = c.get("/v1/games", None);
    assert_eq!(code, 200);
    let names: Vec<&str> = list["games"]
        .as_array()
        .expect("games")
        .iter()
        .filter(|g| g["sha256"] == sha.as_str())
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert_eq!(names.len(), 2, "{list}");
    assert!(names.contains(&"ttt"), "{list}");

    // By name and by hash, under several kernels, against the catalogue's game.
    for (algorithm, position) in [
        ("alphabeta", ""),
        ("alphabeta", "51"),
        ("pns", "5"),
        ("jlpns", "1"),
    ] {
        let native = answer(
            &c,
            &json!({"game": "tictactoe", "position": position, "algorithm": algorithm}),
        );
        for game in ["module:ttt".to_string(), format!("module:{sha}")] {
            let module = answer(
                &c,
                &json!({"game": game, "position": position, "algorithm": algorithm}),
            );
            assert_eq!(module, native, "{algorithm} at '{position}' on {game}");
        }
    }
    // A job names the hash it was given: the status shows `module:<sha256>`.
    let id = c.submit(
        &json!({"game": "module:ttt", "position": "5", "algorithm": "alphabeta"}),
        None,
    );
    let st = c.wait_job(id, Duration::from_secs(60));
    assert_eq!(st["job"]["game"], format!("module:{sha}"), "{st}");

    // Refused, each with one line, and the coordinator goes on.
    let bad = [
        (b"not a module".to_vec(), None, 400),
        (
            b"(module (import \"env\" \"f\" (func)) (memory (export \"memory\") 1))".to_vec(),
            None,
            400,
        ),
        (TICTACTOE.as_bytes().to_vec(), Some("../x"), 400),
        (TICTACTOE.as_bytes().to_vec(), Some(sha.as_str()), 400),
    ];
    for (bytes, name, want) in bad {
        let (code, v) = upload(&c, &bytes, name);
        assert_eq!(code, want, "{v}");
        let msg = v["error"]["message"].as_str().expect("a message");
        assert!(!msg.contains('\n') && !msg.is_empty(), "{msg}");
    }
    // Over 4 MiB: refused from its Content-Length, before the body is read.
    let (code, text) = post_expecting_continue(&format!("{}/v1/games", c.url), 5 << 20, None);
    assert_eq!(code, 413, "{text}");
    for game in ["module:nosuch", &format!("module:{}", "0".repeat(64))] {
        let (code, v) = c.post(
            "/v1/jobs",
            &json!({"game": game, "position": "", "algorithm": "alphabeta"}),
            None,
        );
        assert_eq!(code, 400, "{game}: {v}");
    }

    // The coordinator killed and restarted on its store: the module is still there, by name.
    c.proc.kill9();
    drop(workers);
    let c = Coordinator::start(
        &db,
        &CoordOpts {
            port: Some(c.port),
            ..Default::default()
        },
    );
    let _workers = c.start_workers(1, 1);
    let module = answer(
        &c,
        &json!({"game": "module:ttt", "position": "", "algorithm": "alphabeta"}),
    );
    assert_eq!(module.0, 0, "tic-tac-toe is a draw");

    // The command line against the coordinator.
    let file = scratch("game_modules_service_cli").join("ttt.wat");
    std::fs::write(&file, TICTACTOE).unwrap();
    let path = file.to_str().unwrap();
    let (code, out, err) = gamesolver(&[
        "games",
        "upload",
        path,
        "--name",
        "cli-ttt",
        "--coordinator",
        &c.url,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("cli-ttt") && out.contains(&sha), "{out}");
    let (code, out, err) = gamesolver(&["games", "list", "--coordinator", &c.url]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("cli-ttt") && out.contains("ttt"), "{out}");
    let (code, _, err) = gamesolver(&[
        "games",
        "upload",
        "/nonexistent.wasm",
        "--coordinator",
        &c.url,
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
