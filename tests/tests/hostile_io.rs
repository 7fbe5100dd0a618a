//! Issue 43, items 2, 5 and 8, against real processes: a tree position that took seconds to
//! validate, a hostile worker's forged outputs, malformed HTTP, and `gamesolver book` asked
//! for a book that does not fit anywhere.

use gamesolver_e2e::*;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

const LONG: Duration = Duration::from_secs(60);

/// The tree of the issue: one MAX node of 70,000 leaves, each labelled (about 770 KB).
fn tree_of_labels(n: usize) -> String {
    let leaves: Vec<String> = (0..n).map(|i| (i % 9).to_string()).collect();
    let names: Vec<String> = (0..n).map(|i| format!("\"L{i:05}\"")).collect();
    format!(
        "{{\"max\":[{}],\"labels\":[{}]}}",
        leaves.join(","),
        names.join(",")
    )
}

/// (a) The 70,000-label tree is refused at once with a 400 naming the cap; a tree at the cap
/// is accepted as fast.
#[test]
fn the_70000_label_tree_is_refused_at_once() {
    let c = Coordinator::fresh("hostile-tree", &CoordOpts::default());
    let t = Instant::now();
    let (code, v) = c.post(
        "/v1/jobs",
        &json!({"game": "tree", "algorithm": "minimax", "position": tree_of_labels(70_000)}),
        None,
    );
    let took = t.elapsed();
    eprintln!("70,000 labels: {code} in {took:?}: {v}");
    assert_eq!(code, 400, "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains("more than the 4096 a node may have"), "{msg}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    let t = Instant::now();
    let id = c.submit(
        &json!({"game": "tree", "algorithm": "minimax", "position": tree_of_labels(4096)}),
        None,
    );
    eprintln!("4,096 labels: accepted in {:?}", t.elapsed());
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    let (code, _) = c.post(&format!("/v1/jobs/{id}/cancel"), &json!({}), None);
    assert!(code == 200 || code == 409, "cancel: {code}");
}

/// A fake worker holding `token`.
struct Forger<'a> {
    c: &'a Coordinator,
    token: &'a str,
    id: String,
}

impl<'a> Forger<'a> {
    fn register(c: &'a Coordinator, token: &'a str) -> Self {
        let (code, reg) = c.post(
            "/v1/worker/register",
            &json!({"host": "forger", "threads": 1}),
            Some(token),
        );
        assert_eq!(code, 200, "{reg}");
        let id = reg["worker_id"].as_str().unwrap().to_string();
        Forger { c, token, id }
    }

    /// Leases the next task and reports `output` as its result.
    fn report(&self, output: &Value) {
        let (code, lease) = self.c.post(
            "/v1/worker/lease",
            &json!({"worker_id": self.id, "wait_ms": 5000}),
            Some(self.token),
        );
        assert_eq!(code, 200, "lease: {lease}");
        let (code, v) = self.c.post(
            "/v1/worker/result",
            &json!({"worker_id": self.id, "lease_id": lease["lease_id"],
                    "outcome": {"status": "done", "output": output}}),
            Some(self.token),
        );
        assert_eq!(code, 200, "{code} {v}");
    }
}

/// The one task of job `id` (its status row).
fn only_task(c: &Coordinator, id: u64) -> Value {
    let (code, st) = c.get(&format!("/v1/jobs/{id}"), None);
    assert_eq!(code, 200, "{st}");
    assert!(
        matches!(st["state"].as_str(), Some("queued" | "running")),
        "a forged result settled the job: {st}"
    );
    assert_eq!(st["tasks"]["done"], 0, "{st}");
    st["task_list"][0].clone()
}

/// (b) A hostile worker reports forged outputs for real tasks: each is refused as a failed
/// attempt (the task says why, in one short line), nothing of it is stored, and the jobs end
/// with the true values once an honest worker runs them.
#[test]
fn a_hostile_workers_outputs_are_refused_and_not_stored() {
    let token = "hostile-io-token";
    let dir = scratch("hostile-worker");
    let db = dir.join("db.sqlite");
    let c = Coordinator::start(
        &db,
        &CoordOpts {
            worker_token: Some(token.into()),
            max_attempts: Some(40),
            ..Default::default()
        },
    );
    let w = Forger::register(&c, token);
    let junk = "x".repeat(900_000);
    let base =
        |value: Value| json!({"value": value, "best_move": null, "nodes": 10, "elapsed_ms": 1});
    let with = |mut o: Value, key: &str, v: Value| {
        o["extra"][key] = v;
        o
    };
    // Weak Schur k = 2: its maximum is 8 ({1, 2, 4, 8} and {3, 5, 6, 7}: a finished sequence).
    let schur = json!({"game": "weakschur", "game_params": {"k": 2}, "algorithm": "nmcs",
                       "options": {"level": 1}});
    let seq8 = json!(["1", "1", "2", "1", "2", "2", "2", "1"]);
    let legal_but = |v: Value| with(base(v), "sequence", seq8.clone());
    // Tic-tac-toe, depth-limited alpha-beta: a pv and a depth.
    let ttt = json!({"game": "tictactoe", "algorithm": "alphabeta", "options": {"depth": 2}});
    let ttt_out = |pv: Value| {
        let mut o = base(json!(0));
        o["best_move"] = json!("5");
        o["raw"] = json!({"lower": 0, "upper": 0});
        with(o, "pv", pv)
    };
    // Proof-number decision: bounds as the game shows them.
    let pns = json!({"game": "tictactoe", "position": "5", "algorithm": "pns",
                     "options": {"target": 0}});
    let pns_out = |bounds: Value| {
        let mut o = base(json!(null));
        o["raw"] = json!({"lower": 0, "upper": 1});
        o["extra"] = json!({"proved": true, "bounds": bounds});
        o
    };
    // MCTS: visits of legal root moves.
    let mcts = json!({"game": "tictactoe", "algorithm": "mcts", "options": {"playouts": 200}});
    let cases: Vec<(Value, Vec<(&str, Value)>)> = vec![
        (
            schur.clone(),
            vec![
                ("score 1e300", legal_but(json!(1e300))),
                ("score -5", legal_but(json!(-5))),
                ("score 999", legal_but(json!(999))),
                ("score without a sequence", base(json!(8))),
                (
                    "illegal sequence",
                    with(base(json!(8)), "sequence", json!(["1", "1", "1", "1"])),
                ),
                ("junk keys", with(legal_but(json!(8)), "junk", json!(junk))),
                (
                    "stopped, illegal sequence",
                    with(
                        with(base(json!(null)), "stopped", json!("time")),
                        "sequence",
                        json!(["7", "7"]),
                    ),
                ),
                (
                    "oversized sequence",
                    with(base(json!(8)), "sequence", json!(vec!["1"; 20_000])),
                ),
            ],
        ),
        (
            ttt.clone(),
            vec![
                ("illegal pv", ttt_out(json!(["5", "5"]))),
                ("pv off the board", ttt_out(json!(["5", "10"]))),
                ("oversized pv", ttt_out(json!(vec!["1"; 50_000]))),
                (
                    "junk keys",
                    with(ttt_out(json!(["5"])), "junk", json!(junk)),
                ),
                (
                    "deeper than asked",
                    with(ttt_out(json!(["5"])), "depth", json!(1_000_000)),
                ),
            ],
        ),
        (
            pns.clone(),
            vec![
                ("bounds outside the game", pns_out(json!([-1000, 1e300]))),
                ("bounds of text", pns_out(json!(junk))),
            ],
        ),
        (
            mcts.clone(),
            vec![
                (
                    "visits of an illegal move",
                    with(
                        with(base(json!(0.5)), "visits", json!({"10": 5})),
                        "playouts",
                        json!(10),
                    ),
                ),
                ("value out of range", base(json!(7))),
                ("junk keys", with(base(json!(0)), "junk", json!(junk))),
            ],
        ),
    ];
    let stored = || -> (usize, String) {
        let conn =
            rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .unwrap();
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM results", [], |r| r.get(0))
            .unwrap();
        let all: String = conn
            .query_row(
                "SELECT COALESCE(GROUP_CONCAT(output, ' '), '') FROM results",
                [],
                |r| r.get(0),
            )
            .unwrap();
        (n as usize, all)
    };
    for (done, (job, forgeries)) in cases.iter().enumerate() {
        let id = c.submit(job, None);
        for (n, (what, forged)) in forgeries.iter().enumerate() {
            let t = Instant::now();
            w.report(forged);
            let task = only_task(&c, id);
            let err = task["last_error"].as_str().unwrap_or_default();
            eprintln!("{what}: refused in {:?}: {err}", t.elapsed());
            assert!(err.contains("was refused"), "{what}: {task}");
            assert!(err.len() < 600, "{what}: a long error: {} bytes", err.len());
            assert_eq!(task["attempts"], n as u64 + 1, "{what}: {task}");
        }
        assert_eq!(stored().0, done, "a forged result was stored");
        // An honest worker ends the job with its true value.
        let honest = start_worker(&c.url, 1, &[("GAMESOLVER_WORKER_TOKEN", token)]);
        let st = c.wait_job(id, LONG);
        drop(honest);
        assert_eq!(st["state"], "done", "{st}");
        if job["algorithm"] != "mcts" {
            assert_eq!(st["result"]["value"], local_value(job), "{st}");
        }
    }
    assert!(c.metric("gamesolver_results_invalid_total") >= 18.0);
    let (n, all) = stored();
    assert_eq!(n, cases.len(), "one result per job");
    for forged in ["junk", "1e300", "999", "xxxx"] {
        assert!(!all.contains(forged), "'{forged}' is in the store");
    }
}

/// Sends `request` on a fresh connection and reads the answer to its end: status, body.
fn raw_http(c: &Coordinator, request: &[u8]) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", c.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // The head may be refused before it is all sent: a write error is not the answer.
    let _ = s.write_all(request);
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    split_response(&got)
}

/// (c) Request heads hyper cannot read get the usual JSON error, not an empty body.
#[test]
fn malformed_http_gets_a_json_error() {
    let c = Coordinator::fresh("hostile-http", &CoordOpts::default());
    let many: String = (0..150).map(|i| format!("X-Header-{i}: v\r\n")).collect();
    let long = format!("X-Long: {}\r\n", "a".repeat(600_000));
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        (
            "bad request line",
            b"GARBAGE\r\n\r\n".to_vec(),
            400,
            "bad_request",
        ),
        (
            "bad header line",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n".to_vec(),
            400,
            "bad_request",
        ),
        (
            "bad method",
            b"G(T /healthz HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            400,
            "bad_request",
        ),
        (
            "150 header fields",
            format!("GET /healthz HTTP/1.1\r\nHost: x\r\n{many}\r\n").into_bytes(),
            431,
            "header_too_large",
        ),
        (
            "a 600 KB header field",
            format!("GET /healthz HTTP/1.1\r\nHost: x\r\n{long}\r\n").into_bytes(),
            431,
            "header_too_large",
        ),
    ];
    for (what, request, status, code) in cases {
        let (got, body) = raw_http(&c, &request);
        eprintln!("{what}: {got} {body}");
        assert_eq!(got, status, "{what}: {body}");
        let v: Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{what}: {e}: {body:?}"));
        assert_eq!(v["error"]["code"], code, "{what}: {v}");
        assert!(v["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
    }
    // A good request on a fresh connection is answered as before.
    let (got, body) = raw_http(
        &c,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(got, 200, "{body}");
    let (code, v) = c.post("/v1/jobs", &json!({"game": "nope", "algorithm": "x"}), None);
    assert_eq!(code, 400);
    assert_eq!(v["error"]["code"], "bad_request", "{v}");
}

/// (d) A book that cannot fit is refused at once: exit 2, one line.
#[test]
fn a_book_deeper_than_the_board_exits_2_with_one_line() {
    let out = scratch("hostile-book").join("book.txt");
    for depth in ["100", "30"] {
        let t = Instant::now();
        let (code, stdout, stderr) =
            gamesolver(&["book", "--depth", depth, "--out", out.to_str().unwrap()]);
        eprintln!(
            "book --depth {depth}: {code:?} in {:?}: {stderr}",
            t.elapsed()
        );
        assert_eq!(code, Some(2), "{stdout}{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
        assert!(!out.exists());
    }
}

/// `book` goes through the game catalogue's book hook: games without one, unknown games and
/// parameters the builder refuses exit 2 with one line; a small board's book is written.
#[test]
fn book_takes_the_game_and_its_parameters_from_the_catalogue() {
    let out = scratch("book-games").join("book.txt");
    let path = out.to_str().unwrap();
    for (args, says) in [
        (vec!["--game", "othello"], "othello has no opening book"),
        (vec!["--game", "nope"], "unknown game 'nope'"),
        (vec!["--game-param", "width=99"], "width"),
        (vec!["--game-param", "colour=red"], "colour"),
    ] {
        let mut all = vec!["book", "--depth", "2", "--out", path];
        all.extend(args.iter().copied());
        let (code, stdout, stderr) = gamesolver(&all);
        assert_eq!(code, Some(2), "{all:?}: {stdout}{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{all:?}: {stderr}");
        if args[0] == "--game" {
            assert!(stderr.contains("games with a book: connect4"), "{stderr}");
        }
        assert!(!out.exists());
    }
    let (code, stdout, stderr) = gamesolver(&[
        "book",
        "--game",
        "connect4",
        "--game-param",
        "width=4",
        "--game-param",
        "height=4",
        "--depth",
        "2",
        "--out",
        path,
    ]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("# gamesolver connect4 book width=4 height=4 depth=2")
    );
    // One line per position up to the mirror: the empty board, 2 of 1 stone and 8 of 2 stones
    // (4 x 4 columns for the two stones, no position its own mirror on an even width).
    let scored: Vec<&str> = lines.collect();
    assert_eq!(scored.len(), 11, "{text}");
    assert!(
        stdout.contains("book: 11 positions up to 2 moves"),
        "{stdout}"
    );
    for line in &scored {
        let (_, score) = line.rsplit_once(' ').unwrap();
        score
            .parse::<i32>()
            .unwrap_or_else(|e| panic!("{line}: {e}"));
    }
    // 4 x 4 Connect Four is a draw (Tromp's table of board sizes).
    assert!(scored.contains(&" 0"), "{text}");
}

/// `tables` reaches a game's databases through its catalogue hook: a game without them, an
/// unknown game and a bad parameter exit 2 with one line naming the games that have them.
#[test]
fn tables_take_the_game_from_the_catalogue() {
    for (args, says) in [
        (
            vec!["--game", "connect4"],
            "connect4 has no endgame databases",
        ),
        (vec!["--game", "nope"], "unknown game 'nope'"),
        (vec!["--game-param", "pits=9"], "pits"),
    ] {
        let mut all = vec!["tables", "lookup", "hostile-none", ""];
        all.extend(args.iter().copied());
        let (code, stdout, stderr) = gamesolver(&all);
        assert_eq!(code, Some(2), "{all:?}: {stdout}{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{all:?}: {stderr}");
        if args[0] == "--game" {
            assert!(stderr.contains("games with databases: awari"), "{stderr}");
        }
    }
}

/// Without the `modules` feature (the default build), `--game-module` and a job naming a module
/// game are refused with one line that says how to get them.
#[cfg(not(feature = "modules"))]
#[test]
fn game_modules_say_they_are_not_in_the_default_build() {
    let file = scratch("no-modules").join("game.wat");
    std::fs::write(&file, "(module)").unwrap();
    let (code, stdout, stderr) = gamesolver(&[
        "solve",
        "--game-module",
        file.to_str().unwrap(),
        "--algorithm",
        "minimax",
    ]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("not in this build"), "{stderr}");
    let (code, stdout, stderr) = gamesolver(&[
        "solve",
        "--game",
        &format!("module:{}", "0".repeat(64)),
        "--algorithm",
        "minimax",
    ]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("not in this build"), "{stderr}");
}
