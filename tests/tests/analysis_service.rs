//! Analysis jobs (`analyse=all`) through the service and the command line: a real coordinator
//! with two worker processes analyses a position of Pons' `Test_L1_R2` set; the moves' tasks run
//! on both workers, and every move's score equals the in-process analysis (itself checked
//! against the plain exact search in `shared/tests/analysis.rs`). `gamesolver analyse` prints
//! one line per move, best first, in-process and with `--coordinator`.

use gamesolver_e2e::*;
use serde_json::{json, Value};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(300);

/// The `Test_L1_R2` position with the most stones (the cheapest of the set to analyse).
fn l1_r2_position() -> String {
    gamesolver_shared::games::data::pons_set("Test_L1_R2")
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|l| l.moves)
        .max_by_key(|m| m.len())
        .expect("a line")
}

#[test]
fn an_analysis_spreads_its_moves_over_two_worker_processes() {
    let c = Coordinator::fresh(
        "analysis-two-workers",
        &CoordOpts {
            parallelism: Some(4),
            ..Default::default()
        },
    );
    let _workers = c.start_workers(2, 1);
    let position = l1_r2_position();
    let job = json!({"game": "connect4", "position": position, "algorithm": "alphabeta",
                     "options": {"analyse": "all"}});
    let id = c.submit(&job, None);
    let st = c.wait_job(id, LONG);
    assert_eq!(st["state"], "done", "{st}");
    let want = local_result(&job);
    assert_eq!(st["result"]["moves"], want["moves"], "{st}");
    assert_eq!(st["result"]["value"], want["value"]);
    let best = st["result"]["best_move"].as_str().expect("a best move");
    assert_eq!(st["result"]["moves"][best]["value"], want["value"]);
    // Every task is a move's task, and they ran on both workers.
    let tasks = st["task_list"].as_array().expect("task list");
    let mut workers = std::collections::BTreeSet::new();
    let mut moves = std::collections::BTreeSet::new();
    for t in tasks {
        let what = t["what"].as_str().unwrap_or_default();
        assert!(what.starts_with("move "), "{t}");
        if t["state"] == "done" {
            moves.insert(what.split(':').next().unwrap().to_string());
            for w in t["workers"].as_array().unwrap() {
                workers.insert(w.as_str().unwrap().to_string());
            }
        }
    }
    assert_eq!(
        workers.len(),
        2,
        "the moves' tasks ran on both workers: {st}"
    );
    assert_eq!(
        moves.len(),
        st["result"]["moves"].as_object().unwrap().len(),
        "every move had a task: {moves:?}"
    );
}

fn analyse_cli(position: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec![
        "analyse",
        "--game",
        "connect4",
        "--position",
        position,
        "--algorithm",
        "alphabeta",
    ];
    args.extend_from_slice(extra);
    gamesolver(&args)
}

#[test]
fn analyse_prints_one_line_per_move_best_first_here_and_through_a_coordinator() {
    let position = l1_r2_position();
    let (code, text, err) = analyse_cli(&position, &[]);
    assert_eq!(code, Some(0), "{err}");
    let (code, json_text, err) = analyse_cli(&position, &["--json"]);
    assert_eq!(code, Some(0), "{err}");
    let local: Value = serde_json::from_str(&json_text).unwrap();
    let moves = local["moves"].as_object().expect("moves");
    // The header, one line per move, then the summary.
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("move"), "{text}");
    let rows = &lines[1..=moves.len()];
    let mut last = i64::MAX;
    for row in rows {
        let mut words = row.split_whitespace();
        let mv = words.next().unwrap();
        let score: i64 = words.next().unwrap().parse().unwrap();
        assert_eq!(moves[mv]["value"], score, "{row}");
        assert!(score <= last, "best first: {text}");
        last = score;
        let meaning = words.collect::<Vec<_>>().join(" ");
        let ok = match score.signum() {
            1 => meaning.starts_with("win with your ") && meaning.ends_with(" stone from here"),
            -1 => meaning.starts_with("loss to the opponent's "),
            _ => meaning == "draw",
        };
        assert!(ok, "{row}");
    }
    assert_eq!(
        rows[0].split_whitespace().next(),
        local["best_move"].as_str()
    );

    let c = Coordinator::fresh(
        "analyse-cli",
        &CoordOpts {
            local_workers: 1,
            ..Default::default()
        },
    );
    let (code, remote, err) = analyse_cli(&position, &["--json", "--coordinator", &c.url]);
    assert_eq!(code, Some(0), "{err}");
    let remote: Value = serde_json::from_str(&remote).unwrap();
    assert_eq!(remote["moves"], local["moves"]);
    assert_eq!(remote["value"], local["value"]);

    // A contradicting option is bad input: exit 2, one line.
    let (code, _, err) = analyse_cli(&position, &["--option", "analyse=none"]);
    assert_eq!(code, Some(2));
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
