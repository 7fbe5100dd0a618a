//! The Connect Four evaluator: threats and features against a naive cell-by-cell reference on
//! several board sizes and word types, the clamp, and the engine with the evaluator.

use super::*;
use crate::games::connect4::Wide;
use crate::model::{Game, ZeroSum};
use crate::search::engine::{self, Config, Table};
use crate::search::minimax::minimax;
use crate::search::Control;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random_position<W: Word>(g: &Connect4<W>, rng: &mut ChaCha8Rng, plies: usize) -> C4State<W> {
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

/// `cell[c][r]`: 1 side to move, -1 opponent, 0 empty.
fn grid<W: Word>(g: &Connect4<W>, s: &C4State<W>) -> Vec<Vec<i32>> {
    let (me, mask) = s.bits();
    let h = g.height();
    (0..g.width())
        .map(|c| {
            (0..h)
                .map(|r| {
                    let i = c * (h + 1) + r;
                    if !mask.has(i) {
                        0
                    } else if me.has(i) {
                        1
                    } else {
                        -1
                    }
                })
                .collect()
        })
        .collect()
}

/// Threat cells of `who` as (column, row) pairs: an empty cell that would make four.
fn naive_threats(b: &[Vec<i32>], who: i32) -> Vec<(i32, i32)> {
    let (w, h) = (b.len() as i32, b[0].len() as i32);
    let at =
        |c: i32, r: i32| (c >= 0 && r >= 0 && c < w && r < h).then(|| b[c as usize][r as usize]);
    let mut out = Vec::new();
    for c in 0..w {
        for r in 0..h {
            if at(c, r) != Some(0) {
                continue;
            }
            let makes_four = [(1, 0), (0, 1), (1, 1), (1, -1)].iter().any(|&(dc, dr)| {
                let run = |sign: i32| {
                    (1..4)
                        .take_while(|&k| at(c + sign * k * dc, r + sign * k * dr) == Some(who))
                        .count()
                };
                run(1) + run(-1) >= 3
            });
            if makes_four {
                out.push((c, r));
            }
        }
    }
    out
}

fn check_size<W: Word>(w: u32, h: u32, seed: u64) {
    let g = Connect4::<W>::new(w, h, 1).unwrap();
    let e = evaluator::<W>();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..120 {
        let plies = rng.gen_range(0..(w * h) as usize);
        let s = random_position(&g, &mut rng, plies);
        let b = grid(&g, &s);
        let (me, mask) = s.bits();
        for (who, pos) in [(1, me), (-1, mask ^ me)] {
            let got = threat_cells(&g, pos, mask);
            let want = naive_threats(&b, who);
            assert_eq!(
                got.count_ones() as usize,
                want.len(),
                "{w}x{h} {}",
                g.format_position(&s)
            );
            for (c, r) in want {
                assert!(got.has(c as u32 * (h + 1) + r as u32));
            }
        }
        let mine = naive_threats(&b, 1);
        let theirs = naive_threats(&b, -1);
        // Rows from the bottom, 0-based: index 0, 2, 4 are Allis' odd rows, good for the first
        // player (who is to move when the stone count is even).
        let first_to_move = s.moves() % 2 == 0;
        let good = |r: i32, first: bool| (r % 2 == 0) == first;
        let parity = mine.iter().filter(|t| good(t.1, first_to_move)).count() as i32
            - theirs.iter().filter(|t| good(t.1, !first_to_move)).count() as i32;
        let centre_cols: Vec<usize> = vec![(w as usize - 1) / 2, w as usize / 2];
        let mut centre = 0;
        let mut seen = Vec::new();
        for c in centre_cols {
            if seen.contains(&c) {
                continue;
            }
            seen.push(c);
            centre += b[c].iter().sum::<i32>();
        }
        let want = vec![
            ("threats", mine.len() as i32 - theirs.len() as i32),
            ("parity_threats", parity),
            ("centre", centre),
        ];
        let got: Vec<(&str, i32)> = e.terms(&g, &s).iter().map(|t| (t.0, t.1)).collect();
        assert_eq!(got, want, "{w}x{h} {}", g.format_position(&s));
    }
}

#[test]
fn features_match_the_naive_reference() {
    check_size::<u64>(7, 6, 1);
    check_size::<u64>(4, 4, 2);
    check_size::<u64>(5, 4, 3);
    check_size::<u64>(8, 7, 4);
    check_size::<u128>(9, 7, 5);
    check_size::<Wide<4>>(11, 10, 6);
}

#[test]
fn estimates_stay_between_a_loss_and_a_win() {
    let g = connect4(Connect4::<u64>::new(7, 6, 1).unwrap());
    let loud = Evaluated::new(
        Connect4::<u64>::new(7, 6, 1).unwrap(),
        evaluator().with_weight("threats", 1 << 24),
        1,
        VALUE_SCALE,
    )
    .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    for _ in 0..300 {
        let plies = rng.gen_range(0..42);
        let s = random_position(g.inner(), &mut rng, plies);
        for game in [&g, &loud] {
            if game.is_terminal(&s) {
                assert_eq!(game.terminal_value(&s), g.inner().terminal_value(&s));
            } else {
                assert!(game.evaluate(&s).abs() < VALUE_SCALE);
            }
        }
    }
}

#[test]
fn engine_with_the_evaluator_agrees_with_minimax_and_plays_legal_games() {
    let g = connect4(Connect4::<u64>::new(6, 5, 1).unwrap());
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    // Agreement at a cut (quiescence and extensions off: Connect Four has noisy and forcing
    // moves, which plain minimax does not know).
    for _ in 0..6 {
        let plies = rng.gen_range(0..16);
        let s = random_position(g.inner(), &mut rng, plies);
        for d in 1..=4u32 {
            let want = minimax(&g, &s, Some(d), &Control::unlimited()).unwrap();
            let cfg = Config {
                depth: Some(d),
                quiescence: false,
                extensions: false,
                ..Config::default()
            };
            let got = engine::search_full(&g, &s, &cfg);
            assert_eq!(got.value, want.value, "depth {d}");
        }
    }
    // Depth 4 with the evaluator against random play: legal moves to the end, and it wins.
    let mut wins = 0;
    for seed in 0..6u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let engine_side = (seed % 2) as u8;
        let mut s = g.initial_state();
        let mut moves = Vec::new();
        let t = Table::with_bytes(1 << 18).unwrap();
        while !g.is_terminal(&s) {
            g.legal_moves(&s, &mut moves);
            let mv = if (s.moves() % 2) as u8 == engine_side {
                let cfg = engine::at_depth(4);
                engine::search(
                    &g,
                    &s,
                    -engine::INF,
                    engine::INF,
                    &cfg,
                    &t,
                    &Control::unlimited(),
                )
                .unwrap()
                .best_move
                .unwrap()
            } else {
                moves[rng.gen_range(0..moves.len())]
            };
            assert!(moves.contains(&mv));
            g.apply(&mut s, mv);
        }
        // The side to move at the end lost if the value is negative.
        let loser_to_move = g.terminal_value(&s) < 0;
        let engine_moved_last = (s.moves() % 2) as u8 != engine_side;
        wins += (loser_to_move && engine_moved_last) as u32;
    }
    assert!(wins >= 5, "only {wins} of 6 won against random play");
}
