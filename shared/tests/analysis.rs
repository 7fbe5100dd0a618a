//! Analysis jobs (`analyse=all`) against the plain exact search: for every legal root move the
//! reported score equals minus the exact value of the position after it (the value itself when
//! the side to move does not change), each child solved by the plain exact alpha-beta job, and
//! `best_move` carries the top score. On 100 positions of Pons' sets (every set; the harder sets
//! by their latest positions, which are the cheap ones) and 20 Othello positions with 12 to 16
//! empty squares reached by random play with a fixed seed. Also: the proof-number family, a
//! time-limited analysis (bounds that hold), and MCTS's `moves` shape.

mod common;
use common::othello_positions;
use gamesolver_shared::games::connect4::Connect4;
use gamesolver_shared::games::data::pons_set;
use gamesolver_shared::games::othello::Othello;
use gamesolver_shared::model::{Game, ZeroSum};
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::{JobResult, JobSpec};
use serde_json::Value;

fn run(job: &JobSpec) -> JobResult {
    let prepared = prepare(job).unwrap_or_else(|e| panic!("{job:?}: {e}"));
    run_local(prepared.as_ref(), &Control::unlimited()).unwrap()
}

/// The score of each legal move of `position` by the plain exact job (`algorithm` on each
/// child; a finished child by its terminal value), from the root side's view, in move order.
fn reference<G: ZeroSum>(g: &G, game: &str, position: &str, algorithm: &str) -> Vec<(String, i64)> {
    let s = g.parse_position(position).unwrap();
    let mut moves = Vec::new();
    g.legal_moves(&s, &mut moves);
    moves
        .iter()
        .map(|&m| {
            let mut c = s.clone();
            g.apply(&mut c, m);
            let child = if g.is_terminal(&c) {
                g.value_to_json(&c, g.terminal_value(&c)).as_i64().unwrap()
            } else {
                let job = JobSpec::new(game, &g.format_position(&c), algorithm);
                run(&job).value.as_i64().unwrap()
            };
            let v = if g.side(&c) == g.side(&s) {
                child
            } else {
                -child
            };
            (g.format_move(&s, m), v)
        })
        .collect()
}

/// Checks an analysis result against the reference scores: every move exact and equal, the
/// value the best of them, the best move one with the top score.
fn check(what: &str, r: &JobResult, want: &[(String, i64)]) {
    let moves = r
        .extra
        .moves
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no moves"));
    assert_eq!(moves.len(), want.len(), "{what}: {moves:?}");
    for (mv, v) in want {
        let score = moves
            .get(mv)
            .unwrap_or_else(|| panic!("{what}: no score for move {mv}"));
        assert_eq!(score.value, Some(Value::from(*v)), "{what}: move {mv}");
        assert!(score.lower.is_none() && score.upper.is_none(), "{what}");
    }
    let top = want.iter().map(|(_, v)| *v).max().unwrap();
    assert_eq!(r.value, Value::from(top), "{what}: value");
    let best = r.best_move.as_ref().expect("a best move");
    assert_eq!(
        moves[best].value,
        Some(Value::from(top)),
        "{what}: best move {best}"
    );
    assert_eq!(r.extra["pv"][0], Value::from(best.as_str()), "{what}: pv");
}

fn analyse(game: &str, position: &str, algorithm: &str) -> JobResult {
    run(&JobSpec::new(game, position, algorithm).with_options(&[("analyse", "all")]))
}

/// `count` positions of a Pons set: spread over the set for the easy sets, the latest (fewest
/// empty cells, the cheap ones) for the hard ones.
fn pons_positions(name: &str, count: usize, latest: bool) -> Vec<String> {
    let mut lines: Vec<String> = pons_set(name)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|l| l.moves)
        .collect();
    assert_eq!(lines.len(), 1000, "{name}");
    if latest {
        // Stable: among equal lengths, the set's order.
        lines.sort_by_key(|m| std::cmp::Reverse(m.len()));
        lines.truncate(count);
        lines
    } else {
        lines
            .into_iter()
            .step_by(1000 / count)
            .take(count)
            .collect()
    }
}

#[test]
fn pons_sets_every_move_matches_the_plain_search() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let sets = [
        ("Test_L3_R1", 20, false),
        ("Test_L2_R1", 20, false),
        ("Test_L2_R2", 15, false),
        ("Test_L1_R1", 15, true),
        ("Test_L1_R2", 15, true),
        ("Test_L1_R3", 15, true),
    ];
    let mut checked = 0;
    for (name, count, latest) in sets {
        for position in pons_positions(name, count, latest) {
            let r = analyse("connect4", &position, "alphabeta");
            let want = reference(&g, "connect4", &position, "alphabeta");
            check(&format!("{name} '{position}'"), &r, &want);
            checked += 1;
        }
    }
    assert_eq!(checked, 100);
}

#[test]
fn othello_every_move_matches_the_plain_search() {
    let g = Othello::new(8).unwrap();
    let positions = othello_positions(&g, 20, 12, 27);
    assert_eq!(positions.len(), 20);
    for position in &positions {
        let r = analyse("othello", position, "alphabeta");
        let want = reference(&g, "othello", position, "alphabeta");
        check(&format!("othello '{position}'"), &r, &want);
    }
}

/// Othello with `depth` (every move's disc estimate, the hint of Othello programs): with a
/// depth that covers every empty square the estimates are the exact scores (each move by the
/// exact solver), and so is a plain depth-limited job's value.
#[test]
fn othello_depth_limited_analysis_covering_the_empties_is_exact() {
    let g = Othello::new(8).unwrap();
    // 10 to 14 empty squares: a depth of 14 covers them all (the root's and its children's).
    for position in othello_positions(&g, 10, 10, 45) {
        let r = run(&JobSpec::new("othello", &position, "alphabeta")
            .with_options(&[("analyse", "all"), ("depth", "14")]));
        let want = reference(&g, "othello", &position, "alphabeta");
        check(&format!("othello '{position}' depth 14"), &r, &want);
        let plain =
            run(&JobSpec::new("othello", &position, "alphabeta").with_options(&[("depth", "14")]));
        let top = want.iter().map(|(_, v)| *v).max().unwrap();
        assert_eq!(plain.value, Value::from(top), "othello '{position}'");
    }
}

/// Othello with a shallow `depth`: every move gets an integer disc estimate within the board's
/// values, the job's value is the best of them and its best move one with that score; on FFO
/// #40-#44 (from their `.obf` boards) the estimate of the best move has the sign of the exact
/// score where that is large (#40 +38, #44 -14), and the exact best move's estimate is
/// within a few discs of the best estimate.
#[test]
fn othello_depth_limited_analysis_gives_disc_estimates() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/othello/fforum-40-59.obf");
    let text = std::fs::read_to_string(&path).unwrap();
    for (i, line) in text.lines().filter(|l| l.contains(';')).take(5).enumerate() {
        let mut parts = line.split(';');
        let board = parts.next().unwrap().trim();
        let (best, exact) = parts.next().unwrap().trim().split_once(':').unwrap();
        let exact: i64 = exact.parse().unwrap();
        let r = run(&JobSpec::new("othello", board, "alphabeta")
            .with_options(&[("analyse", "all"), ("depth", "4")]));
        let moves = r.extra.moves.as_ref().unwrap();
        let scores: Vec<(String, i64)> = moves
            .iter()
            .map(|(m, s)| (m.clone(), s.value.as_ref().and_then(Value::as_i64).unwrap()))
            .collect();
        let top = scores.iter().map(|(_, v)| *v).max().unwrap();
        println!(
            "FFO #{}: exact {exact} ({best}); estimates {scores:?}",
            40 + i
        );
        assert!(scores.iter().all(|(_, v)| v.abs() <= 64), "{scores:?}");
        assert_eq!(r.value, Value::from(top));
        assert_eq!(
            moves[r.best_move.as_ref().unwrap()].value,
            Some(Value::from(top))
        );
        if exact.abs() >= 14 {
            assert_eq!(top.signum(), exact.signum(), "FFO #{}: {scores:?}", 40 + i);
        }
        let best_estimate = scores
            .iter()
            .find(|(m, _)| m.eq_ignore_ascii_case(best))
            .unwrap_or_else(|| panic!("FFO #{}: no score for {best}", 40 + i))
            .1;
        assert!(top - best_estimate <= 16, "FFO #{}: {scores:?}", 40 + i);
    }
}

/// The proof-number family analyses too: PNS, df-pn and PN² on tic-tac-toe agree with
/// alpha-beta's plain values of every child.
#[test]
fn proof_number_analysis_matches_the_plain_search() {
    use gamesolver_shared::games::mnk::Mnk;
    let t = Mnk::new(3, 3, 3).unwrap();
    for position in ["", "5", "5,1", "5,1,9"] {
        let want = reference(&t, "tictactoe", position, "alphabeta");
        for algorithm in ["dfpn", "pn2", "pns"] {
            let r = analyse("tictactoe", position, algorithm);
            check(&format!("tictactoe {algorithm} '{position}'"), &r, &want);
        }
    }
}

/// With a node limit that stops the moves' probes, every move still has a score, and each
/// score's range holds the exact value.
#[test]
fn stopped_analysis_reports_bounds_that_hold() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let position = "4453";
    let job = JobSpec {
        limits: gamesolver_shared::wire::Limits {
            node_limit: Some(20_000),
            time_ms: None,
        },
        ..JobSpec::new("connect4", position, "alphabeta").with_options(&[("analyse", "all")])
    };
    let r = run(&job);
    let moves = r.extra.moves.as_ref().expect("moves");
    assert_eq!(moves.len(), 7);
    assert!(r.extra.stopped.is_some(), "{r:?}");
    let s = g.parse_position(position).unwrap();
    let _ = s;
    let mut bounded = 0;
    for (mv, score) in moves.iter() {
        let (lo, hi) = match &score.value {
            Some(v) => (v.as_i64().unwrap(), v.as_i64().unwrap()),
            None => {
                bounded += 1;
                (
                    score.lower.as_ref().unwrap().as_i64().unwrap(),
                    score.upper.as_ref().unwrap().as_i64().unwrap(),
                )
            }
        };
        assert!(lo <= hi, "move {mv}: [{lo}, {hi}]");
        assert!((-21..=21).contains(&lo) && (-21..=21).contains(&hi));
        // The exact value, by the plain job with no limit.
        let child = run(&JobSpec::new(
            "connect4",
            &format!("{position}{mv}"),
            "alphabeta",
        ));
        let exact = -child.value.as_i64().unwrap();
        assert!(
            lo <= exact && exact <= hi,
            "move {mv}: {exact} not in [{lo}, {hi}]"
        );
    }
    assert!(bounded > 0, "the limit stopped no move: {moves:?}");
}

/// MCTS's `analyse=all`: every legal move with its visits, which sum to the playouts (the
/// root's visits), and a mean value on the job's scale; the best move is a visited one.
#[test]
fn mcts_analysis_has_the_moves_shape() {
    for (game, position) in [("connect4", "4453"), ("tictactoe", "5")] {
        let job = JobSpec::new(game, position, "mcts").with_options(&[
            ("analyse", "all"),
            ("playouts", "3000"),
            ("seed", "7"),
        ]);
        let r = run(&job);
        let moves = r.extra.moves.as_ref().expect("moves");
        let legal = if game == "connect4" { 7 } else { 8 };
        assert_eq!(moves.len(), legal, "{game}: {moves:?}");
        let visits: u64 = moves.values().map(|m| m.visits.unwrap()).sum();
        assert_eq!(visits, r.nodes, "{game}: visits sum to the root's playouts");
        for (mv, m) in moves.iter() {
            assert!(m.lower.is_none() && m.upper.is_none());
            match (&m.value, m.visits.unwrap()) {
                (None, 0) => {}
                (Some(v), n) if n > 0 => {
                    let q = v.as_f64().unwrap();
                    assert!((-1.0..=1.0).contains(&q), "{game} {mv}: {q}");
                }
                other => panic!("{game} {mv}: {other:?}"),
            }
        }
        let best = r.best_move.as_ref().unwrap();
        assert!(moves[best].visits.unwrap() > 0);
        // Without the option the result has no moves.
        let plain = run(&JobSpec::new(game, position, "mcts").with_options(&[("playouts", "300")]));
        assert!(plain.extra.moves.is_none());
    }
}

/// Bad uses are one-line input errors.
#[test]
fn analysis_refuses_other_questions() {
    for (algorithm, options) in [
        ("alphabeta", vec![("analyse", "some")]),
        ("dfpn", vec![("analyse", "all"), ("depth", "3")]),
        ("alphabeta", vec![("analyse", "all"), ("target", "1")]),
        ("alphabeta", vec![("analyse", "all"), ("weak", "true")]),
        ("minimax", vec![("analyse", "all")]),
        ("dfpn", vec![("analyse", "all"), ("target", "1")]),
    ] {
        let job = JobSpec::new("connect4", "44", algorithm).with_options(&options);
        match prepare(&job) {
            Err(e) => assert!(e.to_string().contains("analyse"), "{e}"),
            Ok(_) => panic!("{algorithm} {options:?} was accepted"),
        }
    }
    // `analyse=none` is the plain job.
    let r = run(&JobSpec::new("tictactoe", "5", "alphabeta").with_options(&[("analyse", "none")]));
    assert!(r.extra.moves.is_none());
    assert_eq!(r.value, Value::from(0));
}
