//! The Othello evaluator: features checked against a naive square-by-square reference, the
//! win-above-estimate promise, and the engine with the evaluator (agreement with plain minimax,
//! full legal games, the 4 x 4 exact value, iterative deepening under a limit).

use super::*;
use crate::model::{to_parent, Game, ZeroSum};
use crate::search::engine::{self, Config, Table};
use crate::search::minimax::minimax;
use crate::search::{Control, StopReason};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A random non-terminal-or-terminal position reached by `plies` random moves.
fn random_position(g: &Othello, rng: &mut ChaCha8Rng, plies: usize) -> OthelloState {
    let mut s = g.initial_state();
    let mut moves = Vec::new();
    for _ in 0..plies {
        g.legal_moves(&s, &mut moves);
        if moves.is_empty() {
            break;
        }
        g.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
    }
    s
}

/// Naive board: `cell[r][c]` = 1 for the side to move, -1 for the opponent, 0 empty.
fn grid(g: &Othello, s: &OthelloState) -> Vec<Vec<i32>> {
    let n = g.size();
    let me = s.discs[s.to_move as usize];
    let other = s.discs[1 - s.to_move as usize];
    (0..n)
        .map(|r| {
            (0..n)
                .map(|c| {
                    let b = 1u64 << (r * 8 + c);
                    (me & b != 0) as i32 - (other & b != 0) as i32
                })
                .collect()
        })
        .collect()
}

const DIRS: [(i32, i32); 8] = [
    (0, 1),
    (0, -1),
    (1, 0),
    (-1, 0),
    (1, 1),
    (1, -1),
    (-1, 1),
    (-1, -1),
];

/// Legal placements of `who` (1 or -1) by walking every direction from every empty square.
fn naive_moves(b: &[Vec<i32>], who: i32) -> i32 {
    let n = b.len() as i32;
    let at =
        |r: i32, c: i32| (r >= 0 && c >= 0 && r < n && c < n).then(|| b[r as usize][c as usize]);
    let mut count = 0;
    for r in 0..n {
        for c in 0..n {
            if at(r, c) != Some(0) {
                continue;
            }
            let legal = DIRS.iter().any(|&(dr, dc)| {
                let (mut rr, mut cc, mut seen) = (r + dr, c + dc, 0);
                while at(rr, cc) == Some(-who) {
                    rr += dr;
                    cc += dc;
                    seen += 1;
                }
                seen > 0 && at(rr, cc) == Some(who)
            });
            count += legal as i32;
        }
    }
    count
}

/// The features of the module doc, square by square.
fn naive_features(g: &Othello, s: &OthelloState) -> Vec<(&'static str, i32)> {
    let b = grid(g, s);
    let n = b.len() as i32;
    let at =
        |r: i32, c: i32| (r >= 0 && c >= 0 && r < n && c < n).then(|| b[r as usize][c as usize]);
    let corners = [(0, 0), (0, n - 1), (n - 1, 0), (n - 1, n - 1)];
    let mut x = 0;
    let mut cs = 0;
    if n >= 6 {
        for &(r, c) in &corners {
            if at(r, c) != Some(0) {
                continue;
            }
            let (dr, dc) = (if r == 0 { 1 } else { -1 }, if c == 0 { 1 } else { -1 });
            x += at(r + dr, c + dc).unwrap();
            cs += at(r + dr, c).unwrap() + at(r, c + dc).unwrap();
        }
    }
    let mut frontier = 0;
    for r in 0..n {
        for c in 0..n {
            let near_empty = DIRS.iter().any(|&(dr, dc)| at(r + dr, c + dc) == Some(0));
            if near_empty {
                frontier += b[r as usize][c as usize];
            }
        }
    }
    vec![
        ("material", b.iter().flatten().sum()),
        ("mobility", naive_moves(&b, 1) - naive_moves(&b, -1)),
        (
            "corners",
            corners.iter().map(|&(r, c)| at(r, c).unwrap()).sum(),
        ),
        ("x_squares", x),
        ("c_squares", cs),
        ("frontier", frontier),
    ]
}

#[test]
fn features_match_the_naive_reference_on_every_size() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for size in [4, 6, 8] {
        let g = Othello::new(size).unwrap();
        let e = evaluator();
        for i in 0..150 {
            let plies = rng.gen_range(0..(size * size));
            let s = random_position(&g, &mut rng, plies);
            let want = naive_features(&g, &s);
            let got: Vec<(&str, i32)> = e.terms(&g, &s).iter().map(|t| (t.0, t.1)).collect();
            assert_eq!(
                got,
                want,
                "size {size}, position {i}: {}",
                g.format_position(&s)
            );
            let sum: i64 = e
                .terms(&g, &s)
                .iter()
                .map(|t| t.1 as i64 * t.2 as i64)
                .sum();
            assert_eq!(e.score(&g, &s), sum);
        }
    }
}

#[test]
fn features_are_antisymmetric_under_a_pass() {
    // The same discs with the other side to move: every feature changes sign.
    let g = Othello::new(8).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let e = evaluator();
    for _ in 0..100 {
        let s = {
            let plies = rng.gen_range(0..50);
            random_position(&g, &mut rng, plies)
        };
        let mut t = s.clone();
        t.to_move ^= 1;
        for (a, b) in e.terms(&g, &s).iter().zip(e.terms(&g, &t)) {
            assert_eq!(a.1, -b.1, "{}", a.0);
        }
    }
}

#[test]
fn real_wins_score_above_every_estimate() {
    // Absurd weights force the clamp.
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for size in [4, 6, 8] {
        let g = othello(Othello::new(size).unwrap());
        let loud = Evaluated::new(
            Othello::new(size).unwrap(),
            evaluator()
                .with_weight("mobility", 1 << 20)
                .with_weight("material", -(1 << 22)),
            SCALE,
            1,
        )
        .unwrap();
        for _ in 0..300 {
            let s = {
                let plies = rng.gen_range(0..70);
                random_position(g.inner(), &mut rng, plies)
            };
            for game in [&g, &loud] {
                if game.is_terminal(&s) {
                    let v = game.terminal_value(&s);
                    assert_eq!(v, SCALE * g.inner().terminal_value(&s));
                    assert_eq!(game.proven(v), Some(g.inner().terminal_value(&s)));
                    assert!(v == 0 || v.abs() > game.margin());
                } else {
                    let e = game.evaluate(&s);
                    assert!(e.abs() <= game.margin() && game.margin() < SCALE);
                    // Shown as a fraction of a disc unless it is exactly 0.
                    let j = game.value_to_json(&s, e);
                    assert!(j.as_f64().unwrap().abs() < 1.0, "{j}");
                }
            }
        }
    }
}

/// Depth-limited engine search with the evaluator equals plain minimax with it at every depth.
#[test]
fn engine_with_the_evaluator_agrees_with_minimax() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for size in [4, 6, 8] {
        let g = othello(Othello::new(size).unwrap());
        for _ in 0..6 {
            let s = {
                let plies = rng.gen_range(0..size * size - 8);
                random_position(g.inner(), &mut rng, plies)
            };
            for d in 1..=3u32 {
                let want = minimax(&g, &s, Some(d), &Control::unlimited()).unwrap();
                let cfg = engine::at_depth(d);
                let got = engine::search_full(&g, &s, &cfg);
                assert_eq!(got.value, want.value, "size {size} depth {d}");
                if let Some(m) = got.best_move {
                    let mut c = s.clone();
                    g.apply(&mut c, m);
                    let v = if d == 1 || g.is_terminal(&c) {
                        if g.is_terminal(&c) {
                            g.terminal_value(&c)
                        } else {
                            g.evaluate(&c)
                        }
                    } else {
                        minimax(&g, &c, Some(d - 1), &Control::unlimited())
                            .unwrap()
                            .value
                    };
                    assert_eq!(to_parent(g.side(&s), g.side(&c), v), want.value);
                }
            }
        }
    }
}

/// Plays one game; `players[side]` is `Some(depth)` for the engine, `None` for random moves.
/// Returns Black's final disc difference. Panics on an illegal move or a game that does not end.
fn play(size: usize, players: [Option<u32>; 2], seed: u64) -> i32 {
    let g = othello(Othello::new(size).unwrap());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = g.initial_state();
    let mut moves = Vec::new();
    let t = Table::with_bytes(1 << 18).unwrap();
    let mut plies = 0;
    while !g.is_terminal(&s) {
        plies += 1;
        assert!(
            plies <= crate::games::othello::MAX_PLIES,
            "the game does not end"
        );
        g.legal_moves(&s, &mut moves);
        let mv = match players[g.side(&s) as usize] {
            None => moves[rng.gen_range(0..moves.len())],
            Some(d) => {
                let cfg = engine::at_depth(d);
                let o = engine::search(
                    &g,
                    &s,
                    -engine::INF,
                    engine::INF,
                    &cfg,
                    &t,
                    &Control::unlimited(),
                )
                .unwrap();
                assert_eq!(o.depth, d);
                o.best_move.expect("a non-terminal position has a move")
            }
        };
        assert!(
            moves.contains(&mv),
            "illegal move {mv} at {}",
            g.format_position(&s)
        );
        // The notation round trip of the move holds too.
        let text = g.format_move(&s, mv);
        assert_eq!(g.parse_move(&s, &text).unwrap(), mv);
        g.apply(&mut s, mv);
    }
    g.inner().disc_difference(&s, 0)
}

#[test]
fn engine_plays_legal_games_to_the_end() {
    for size in [4, 6, 8] {
        // Engine against engine (different depths), both colours.
        play(size, [Some(2), Some(1)], 0);
        play(size, [Some(1), Some(3)], 0);
    }
    // Against a random player the evaluator wins nearly every game (fixed seeds: the same
    // games every run); material alone is the weaker baseline.
    let mut wins = 0;
    let games = 8;
    for seed in 0..games {
        let black = seed % 2 == 0;
        let players = if black {
            [Some(2), None]
        } else {
            [None, Some(2)]
        };
        let d = play(6, players, seed);
        wins += ((d > 0) == black && d != 0) as u32;
    }
    assert!(
        wins >= games as u32 - 1,
        "only {wins} of {games} won against random play"
    );
}

/// 4 x 4 under both rules for the empty squares: the engine in exact mode (plain and through the
/// evaluator's scaling) reproduces the exhaustive minimax value, and so does the registry's probe
/// plan with the game parameter `empties`.
#[test]
fn engine_reproduces_the_4x4_exact_value() {
    // Published: 4 x 4 Othello is won by White, 3-11 with two squares left empty (Black's view:
    // -8 on the board); the official rule gives White the empties: -10.
    for (rule, word, want) in [
        (crate::games::othello::Empties::Nobody, "none", -8),
        (crate::games::othello::Empties::Winner, "winner", -10),
    ] {
        let plain = Othello::new(4).unwrap().with_empties(rule);
        let root = plain.initial_state();
        let truth = minimax(&plain, &root, None, &Control::unlimited()).unwrap();
        assert_eq!(truth.value, want, "{word}");
        let o = engine::search_full(&plain, &root, &Config::default());
        assert_eq!(o.value, truth.value);
        let g = othello(plain.clone());
        let o = engine::search_full(&g, &root, &Config::default());
        assert_eq!(g.proven(o.value), Some(truth.value));
        // The best move reaches the value.
        let mut c = root.clone();
        plain.apply(&mut c, o.best_move.unwrap());
        let v = minimax(&plain, &c, None, &Control::unlimited())
            .unwrap()
            .value;
        assert_eq!(to_parent(0, plain.side(&c), v), truth.value);
        // Through the registry and the planner's null-window probes.
        let job = crate::wire::JobSpec {
            game: "othello".into(),
            game_params: [("size", "4"), ("empties", word)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            algorithm: "alphabeta".into(),
            ..Default::default()
        };
        let p = crate::registry::prepare(&job).unwrap();
        let r = crate::plan::run_local(p.as_ref(), &Control::unlimited()).unwrap();
        assert_eq!(r.value, serde_json::json!(truth.value), "{word}");
    }
    // A bad rule is a one-line error.
    let job = crate::wire::JobSpec {
        game: "othello".into(),
        game_params: [("empties".to_string(), "black".to_string())]
            .into_iter()
            .collect(),
        algorithm: "alphabeta".into(),
        ..Default::default()
    };
    let e = crate::registry::prepare(&job).err().unwrap().to_string();
    assert!(e.contains("winner") && !e.contains('\n'), "{e}");
}

/// Every position of a random game on 4 x 4: the engine's exact value equals minimax's.
#[test]
fn engine_exact_values_match_minimax_along_random_4x4_games() {
    let g = Othello::new(4).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let t = Table::with_bytes(1 << 16).unwrap();
    for _ in 0..4 {
        let mut s = g.initial_state();
        let mut moves = Vec::new();
        while !g.is_terminal(&s) {
            let want = minimax(&g, &s, None, &Control::unlimited()).unwrap().value;
            let got = engine::search(
                &g,
                &s,
                -engine::INF,
                engine::INF,
                &Config::default(),
                &t,
                &Control::unlimited(),
            )
            .unwrap();
            assert_eq!(got.value, want, "{}", g.format_position(&s));
            g.legal_moves(&s, &mut moves);
            g.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
        }
    }
}

/// Iterative deepening stopped by a node limit returns the deepest finished iteration: its
/// value is the fresh search's at that depth, and its move reaches that value.
#[test]
fn iterative_deepening_under_a_limit_keeps_the_deepest_finished_iteration() {
    // 6 x 6 and small limits: the check runs plain minimax at the depth reached.
    let g = othello(Othello::new(6).unwrap());
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for (i, limit) in [2_000u64, 6_000].into_iter().enumerate() {
        let s = random_position(g.inner(), &mut rng, 4 + 3 * i);
        let cfg = engine::at_depth(40);
        let ctl = Control::with_limits(None, Some(limit));
        let t = Table::with_bytes(1 << 18).unwrap();
        let o = engine::search(&g, &s, -engine::INF, engine::INF, &cfg, &t, &ctl).unwrap();
        assert_eq!(o.stopped, Some(StopReason::Nodes), "limit {limit}");
        assert!(o.depth >= 1 && o.depth < 40);
        let d = o.depth;
        let fresh = minimax(&g, &s, Some(d), &Control::unlimited()).unwrap();
        assert_eq!(o.value, fresh.value, "limit {limit}, depth {d}");
        let m = o.best_move.unwrap();
        let mut moves = Vec::new();
        g.legal_moves(&s, &mut moves);
        assert!(moves.contains(&m));
        let mut c = s.clone();
        g.apply(&mut c, m);
        let v = if d == 1 {
            g.evaluate(&c)
        } else {
            minimax(&g, &c, Some(d - 1), &Control::unlimited())
                .unwrap()
                .value
        };
        assert_eq!(to_parent(g.side(&s), g.side(&c), v), o.value);
    }
    // A time limit: always a legal move from a finished iteration.
    let s = g.initial_state();
    let cfg = engine::at_depth(60);
    let ctl = Control::with_limits(Some(std::time::Duration::from_millis(20)), None);
    let o = engine::search(
        &g,
        &s,
        -engine::INF,
        engine::INF,
        &cfg,
        &Table::with_bytes(1 << 18).unwrap(),
        &ctl,
    )
    .unwrap();
    assert!(o.depth >= 1);
    let mut moves = Vec::new();
    g.legal_moves(&s, &mut moves);
    assert!(moves.contains(&o.best_move.unwrap()));
}

/// Through the registry: `depth` uses the game's own evaluation (a disc estimate, an integer;
/// the same as `eval=game`), `eval=features` the scaled evaluator (fractions of a disc unless
/// proven), and bad `eval` values are one-line errors.
#[test]
fn registry_option_eval() {
    let job = |options: &[(&str, &str)], game: &str| {
        let params: &[(&str, &str)] = if game == "othello" {
            &[("size", "6")]
        } else {
            &[]
        };
        crate::wire::JobSpec::new(game, "", "alphabeta")
            .with_params(params)
            .with_options(options)
    };
    let run = |j: &crate::wire::JobSpec| {
        let p = crate::registry::prepare(j).unwrap_or_else(|e| panic!("{j:?}: {e}"));
        crate::plan::run_local(p.as_ref(), &Control::unlimited()).unwrap()
    };
    let g = Othello::new(6).unwrap();
    let s = g.initial_state();
    let features = run(&job(&[("depth", "3"), ("eval", "features")], "othello"));
    let direct = {
        let e = othello(Othello::new(6).unwrap());
        let cfg = engine::at_depth(3);
        let o = engine::search_full(&e, &s, &cfg);
        e.value_to_json(&s, o.value)
    };
    assert_eq!(features.value, direct);
    assert!(features.value.as_f64().unwrap().abs() < 1.0);
    let best = features.best_move.clone().unwrap();
    assert!(g.parse_move(&s, &best).is_ok());
    let plain = run(&job(&[("depth", "3"), ("eval", "game")], "othello"));
    let want = minimax(&g, &s, Some(3), &Control::unlimited())
        .unwrap()
        .value;
    assert_eq!(plain.value, serde_json::json!(want));
    assert!(plain.value.is_i64());
    let default = run(&job(&[("depth", "3")], "othello"));
    assert_eq!(default.value, plain.value);
    let c4 = run(&job(&[("depth", "4"), ("eval", "features")], "connect4"));
    assert!(c4.value.as_f64().unwrap().abs() < 1.0, "{:?}", c4.value);
    for (opts, game, needle) in [
        (
            vec![("depth", "2"), ("eval", "features")],
            "tictactoe",
            "no feature evaluator",
        ),
        (
            vec![("depth", "2"), ("eval", "best")],
            "othello",
            "eval=best",
        ),
        (vec![("eval", "features")], "othello", "with a 'depth'"),
    ] {
        let e = crate::registry::prepare(&job(&opts, game))
            .err()
            .expect("an error");
        assert!(matches!(e, crate::registry::SolveError::BadInput(_)));
        assert!(e.to_string().contains(needle), "{e}");
    }
}

/// The calibration of [`disc_estimate`]: the least-squares slope (through 0) of the exact final
/// margin on [`weighted_sum`] over random 8 x 8 positions of 14, 16 and 18 empties (seeded),
/// with the correlation and the mean error of the estimate with the current scale. Prints;
/// asserts only that the estimate has the sign of the margin more often than not.
#[test]
#[ignore = "calibration (a few seconds): cargo test --release -p gamesolver-shared calibrate_disc_scale -- --ignored --nocapture"]
fn calibrate_disc_scale() {
    let g = Othello::new(8).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(45);
    let table = Table::with_bytes(1 << 24).unwrap();
    let (mut sxy, mut sxx, mut syy, mut abs_err, mut same_sign, mut n) =
        (0f64, 0f64, 0f64, 0f64, 0u32, 0u32);
    for empties in [14u32, 16, 18] {
        let mut found = 0;
        while found < 100 {
            let s = random_position(&g, &mut rng, (60 - empties) as usize);
            let filled = (s.discs[0] | s.discs[1]).count_ones();
            if g.is_terminal(&s) || 64 - filled != empties {
                continue;
            }
            found += 1;
            let x = weighted_sum(&g, &s) as f64;
            let y = crate::games::othello::solver::search(
                &g,
                &s,
                -engine::INF,
                engine::INF,
                1,
                &table,
                &Control::unlimited(),
            )
            .unwrap()
            .value as f64;
            sxy += x * y;
            sxx += x * x;
            syy += y * y;
            abs_err += (disc_estimate(&g, &s) as f64 - y).abs();
            same_sign += (x * y > 0.0) as u32;
            n += 1;
        }
    }
    let slope = sxy / sxx;
    println!(
        "{n} positions: slope {slope:.4} discs per unit, r {:.3}, mean |estimate - exact| {:.2} discs at {DISC_SLOPE}/{DISC_UNITS}, same sign {same_sign}",
        sxy / (sxx * syy).sqrt(),
        abs_err / n as f64
    );
    assert!(same_sign > n / 2);
}
