//! The weighted-feature evaluator and the scaling adapter, on tic-tac-toe and 4 x 4 m,n,k
//! (features written with the game API only).

use super::*;
use crate::games::mnk::Mnk;
use crate::search::engine::{self, Config};
use crate::search::minimax::minimax;
use crate::search::Control;
use rand::{Rng, SeedableRng};

/// Moves that win at once for the side to move.
fn wins_now(g: &Mnk, s: &<Mnk as Game>::State) -> i32 {
    let mut moves = Vec::new();
    g.legal_moves(s, &mut moves);
    moves
        .iter()
        .filter(|&&m| {
            let mut c = s.clone();
            g.apply(&mut c, m);
            g.is_terminal(&c) && g.terminal_value(&c) < 0
        })
        .count() as i32
}

/// Legal moves (the same for both sides here: a feature that is not antisymmetric on purpose).
fn moves_left(g: &Mnk, s: &<Mnk as Game>::State) -> i32 {
    let mut moves = Vec::new();
    g.legal_moves(s, &mut moves);
    moves.len() as i32
}

fn eval() -> Weighted<Mnk> {
    Weighted::new(vec![
        Feature {
            name: "wins_now",
            weight: 7,
            value: wins_now,
        },
        Feature {
            name: "moves_left",
            weight: -1,
            value: moves_left,
        },
    ])
}

fn positions(g: &Mnk, n: usize, seed: u64) -> Vec<<Mnk as Game>::State> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut moves = Vec::new();
    for _ in 0..n {
        let mut s = g.initial_state();
        for _ in 0..rng.gen_range(0..9) {
            g.legal_moves(&s, &mut moves);
            if moves.is_empty() {
                break;
            }
            g.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
        }
        out.push(s);
    }
    out
}

#[test]
fn the_estimate_is_the_weighted_sum_of_the_terms() {
    let g = Mnk::tictactoe();
    let e = eval();
    for s in positions(&g, 50, 1) {
        if g.is_terminal(&s) {
            continue;
        }
        let t = e.terms(&g, &s);
        assert_eq!(t[0], ("wins_now", wins_now(&g, &s), 7));
        assert_eq!(t[1], ("moves_left", moves_left(&g, &s), -1));
        assert_eq!(
            e.score(&g, &s),
            7 * wins_now(&g, &s) as i64 - moves_left(&g, &s) as i64
        );
        assert_eq!(
            e.clone().with_weight("moves_left", 0).score(&g, &s),
            7 * wins_now(&g, &s) as i64
        );
    }
}

#[test]
#[should_panic(expected = "listed twice")]
fn feature_names_are_distinct() {
    let f = eval().features()[0].clone();
    Weighted::new(vec![f.clone(), f]);
}

#[test]
fn scaling_keeps_estimates_between_a_loss_and_a_win() {
    let g = Mnk::tictactoe();
    // Weights far beyond the room: the clamp holds them at the margin.
    let loud = Evaluated::new(
        Mnk::tictactoe(),
        eval().with_weight("wins_now", 1 << 30),
        10,
        1,
    )
    .unwrap();
    assert_eq!(loud.margin(), 9);
    for s in positions(&g, 200, 2) {
        if loud.is_terminal(&s) {
            let v = loud.terminal_value(&s);
            assert_eq!(v, 10 * g.terminal_value(&s));
            assert_eq!(loud.proven(v), Some(g.terminal_value(&s)));
            assert_eq!(loud.value_to_json(&s, v), g.value_to_json(&s, v / 10));
        } else {
            let e = loud.evaluate(&s);
            assert!((-9..=9).contains(&e), "{e}");
            if e != 0 {
                assert_eq!(loud.proven(e), None);
                assert_eq!(
                    loud.value_to_json(&s, e),
                    serde_json::json!(e as f64 / 10.0)
                );
            }
        }
        let (lo, hi) = loud.value_bounds(&s);
        assert_eq!((lo, hi), (-10, 10));
    }
    let s = g.initial_state();
    assert_eq!(loud.parse_target(&s, "1").unwrap(), 10);
    assert!(Evaluated::new(Mnk::tictactoe(), eval(), 0, 1).is_err());
    assert!(Evaluated::new(Mnk::tictactoe(), eval(), 1, 1).is_err());
    assert!(Evaluated::new(Mnk::tictactoe(), eval(), i32::MAX / 2, 3).is_err());
}

#[test]
fn the_engine_sees_the_evaluator_and_exact_values_scale() {
    // Tic-tac-toe: exhaustive minimax stays small (a 4 x 3 board is 12! leaves).
    let g = Evaluated::new(Mnk::tictactoe(), eval(), 100, 1).unwrap();
    for s in positions(g.inner(), 8, 3) {
        // Exact: scale times the game's value.
        let truth = minimax(g.inner(), &s, None, &Control::unlimited()).unwrap();
        let o = engine::search_full(&g, &s, &Config::default());
        assert_eq!(o.value, 100 * truth.value);
        // Depth-limited: the same as minimax over the wrapped game, so the evaluator is used.
        for d in 1..=3 {
            let want = minimax(&g, &s, Some(d), &Control::unlimited()).unwrap();
            let cfg = engine::at_depth(d);
            let o = engine::search_full(&g, &s, &cfg);
            assert_eq!(o.value, want.value, "depth {d}");
        }
    }
}
