//! Pons' Connect Four test sets through the same path as `gamesolver batch`: every line goes
//! through `registry::prepare` and `plan::run_local`, and the exact score must match.
//!
//! L3_R1 and L2_R1 run in full (a few seconds in the test profile); L2_R2 and L1_R1 run a
//! sample. The long sets (L1_R2, L1_R3) are for the benchmark (`examples/pons_bench.rs`).

use gamesolver_shared::games::data::pons_set;
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;

/// Reads `(moves, score)` lines of a Pons set (the library's reader).
fn read_set(name: &str) -> Vec<(String, i64)> {
    pons_set(name)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|l| (l.moves, l.score as i64))
        .collect()
}

fn job(position: &str, options: &[(&str, &str)]) -> JobSpec {
    JobSpec::new("connect4", position, "alphabeta").with_options(options)
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

/// The job's best move reaches the job's value: play it, solve the child through the same job
/// path, negate (a win with the move itself counts as the win's score). Exact and weak, on a
/// sample of every short set, and on positions a few stones before the board is full (where the
/// solver decides the root by its hints, without searching a move).
#[test]
fn best_move_reaches_the_value() {
    use gamesolver_shared::games::connect4::{Connect4, VALUE_SCALE};
    use gamesolver_shared::model::{Game, ZeroSum};
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let mut roots: Vec<String> = Vec::new();
    for name in ["Test_L3_R1", "Test_L2_R1", "Test_L1_R1", "Test_L2_R2"] {
        let step = if name == "Test_L2_R2" { 100 } else { 50 };
        roots.extend(read_set(name).into_iter().step_by(step).map(|(m, _)| m));
    }
    // Late positions: Pons' end-game lines played on (first legal non-terminal move) to 2..4
    // empty cells.
    for (moves, _) in read_set("Test_L3_R1").into_iter().step_by(97) {
        let mut s = g.parse_position(&moves).unwrap();
        let mut text = moves.clone();
        'fill: while 42 - s.moves() as usize > 2 + moves.len() % 3 {
            let mut legal = Vec::new();
            g.legal_moves(&s, &mut legal);
            for m in legal {
                let mut c = s;
                g.apply(&mut c, m);
                if !g.is_terminal(&c) {
                    text.push_str(&g.format_move(&s, m));
                    s = c;
                    continue 'fill;
                }
            }
            break;
        }
        if !g.is_terminal(&s) {
            roots.push(text);
        }
    }
    let run = |position: &str, options: &[(&str, &str)]| {
        let prepared = prepare(&job(position, options)).unwrap();
        run_local(prepared.as_ref(), &Control::unlimited()).unwrap()
    };
    for weak in [false, true] {
        let options: &[(&str, &str)] = if weak { &[("weak", "true")] } else { &[] };
        for moves in &roots {
            let r = run(moves, options);
            let value = r.value.as_i64().unwrap();
            let best = r
                .best_move
                .unwrap_or_else(|| panic!("'{moves}' (weak {weak}): no best move"));
            let s = g.parse_position(moves).unwrap();
            let mut c = s;
            // Parsing checks legality (a full column is an error).
            let m = g
                .parse_move(&s, &best)
                .unwrap_or_else(|e| panic!("'{moves}': best move {best}: {e}"));
            g.apply(&mut c, m);
            let back = if g.is_terminal(&c) {
                let v = -(g.terminal_value(&c) / VALUE_SCALE) as i64;
                if weak {
                    v.signum()
                } else {
                    v
                }
            } else {
                -run(&format!("{moves}{best}"), options)
                    .value
                    .as_i64()
                    .unwrap()
            };
            assert_eq!(back, value, "'{moves}' (weak {weak}): best move {best}");
        }
    }
}

fn solve(
    game: &str,
    params: &[(&str, &str)],
    position: &str,
    algorithm: &str,
    options: &[(&str, &str)],
) -> serde_json::Value {
    let job = JobSpec::new(game, position, algorithm)
        .with_params(params)
        .with_options(options);
    let prepared = prepare(&job).unwrap_or_else(|e| panic!("{game} '{position}': {e}"));
    let result = run_local(prepared.as_ref(), &Control::unlimited()).unwrap();
    serde_json::to_value(result).unwrap()
}

/// Fhourstones' inputs (SOURCE.txt): the first is a win for the side to move. The others (a
/// loss after 8.7 M Fhourstones positions, a draw after 170 M, and the empty board, a win) take
/// minutes: `cargo test --release -p gamesolver-shared --test connect4_pons -- --ignored`.
#[test]
fn fhourstones_first_input() {
    assert_eq!(
        solve(
            "connect4",
            &[],
            "45461667",
            "alphabeta",
            &[("weak", "true")]
        )["value"],
        1
    );
}

#[test]
#[ignore = "minutes: Fhourstones' long inputs"]
fn fhourstones_long_inputs() {
    for (position, want) in [("35333571", -1), ("13333111", 0), ("", 1)] {
        let r = solve(
            "connect4",
            &[],
            position,
            "alphabeta",
            &[("weak", "true"), ("threads", "2")],
        );
        assert_eq!(r["value"], want, "'{position}'");
    }
}

/// Through the registry: m,n,k values, a board wider than 64 bits against the registry's own
/// minimax, and a depth-limited job.
#[test]
fn registry_paths() {
    assert_eq!(
        solve(
            "mnk",
            &[("m", "4"), ("n", "4"), ("k", "3")],
            "",
            "alphabeta",
            &[]
        )["value"],
        1
    );
    assert_eq!(
        solve(
            "mnk",
            &[("m", "4"), ("n", "4"), ("k", "4")],
            "",
            "alphabeta",
            &[]
        )["value"],
        0
    );
    let big = [("width", "9"), ("height", "7")];
    // A random game of 54 stones on 9 x 7 (72 bits: the u128 board), nobody having won yet.
    let position = {
        use gamesolver_shared::games::connect4::Connect4;
        use gamesolver_shared::model::Game;
        use rand::{Rng, SeedableRng};
        let g = Connect4::<u128>::new(9, 7, 1).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        'retry: loop {
            let mut s = g.initial_state();
            let mut moves = Vec::new();
            for _ in 0..54 {
                g.legal_moves(&s, &mut moves);
                let safe: Vec<u8> = moves
                    .iter()
                    .copied()
                    .filter(|&m| {
                        let mut c = s;
                        g.apply(&mut c, m);
                        !g.is_terminal(&c)
                    })
                    .collect();
                if safe.is_empty() {
                    continue 'retry;
                }
                g.apply(&mut s, safe[rng.gen_range(0..safe.len())]);
            }
            break g.format_position(&s);
        }
    };
    let position = position.as_str();
    let exact = solve("connect4", &big, position, "alphabeta", &[]);
    let reference = solve("connect4", &big, position, "minimax", &[]);
    assert_eq!(exact["value"], reference["value"], "{exact}");
    let r = solve("connect4", &[], "4453", "alphabeta", &[("depth", "6")]);
    assert_eq!(r["depth"], 6);
    assert!(
        r["best_move"]
            .as_str()
            .is_some_and(|m| ("1".."8").contains(&m)),
        "{r}"
    );
    let weak = solve(
        "connect4",
        &[("width", "4"), ("height", "4")],
        "",
        "alphabeta",
        &[("weak", "true")],
    );
    assert_eq!(
        weak["value"],
        solve(
            "connect4",
            &[("width", "4"), ("height", "4")],
            "",
            "alphabeta",
            &[]
        )["value"]
            .as_i64()
            .unwrap()
            .signum()
    );
}

#[test]
fn bad_input_is_one_clear_line() {
    let err = |params: &[(&str, &str)], position: &str, options: &[(&str, &str)]| {
        let job = JobSpec::new("connect4", position, "alphabeta")
            .with_params(params)
            .with_options(options);
        prepare(&job).err().expect("an error").to_string()
    };
    assert_eq!(
        err(&[], "4444444", &[]),
        "position: move 7 ('4'): column 4 is full"
    );
    assert!(err(&[("width", "0")], "", &[]).contains("'width=0' is out of bounds"));
    assert!(err(&[("width", "x")], "", &[]).contains("width=x"));
    assert!(err(&[], "", &[("threads", "0")]).contains("threads"));
    assert!(err(&[], "", &[("weak", "true"), ("depth", "3")]).contains("weak"));
    assert!(err(&[], "", &[("colour", "red")]).contains("colour"));
}
