//! Differential tests of the engine against plain minimax, and its promises (fail-soft bounds
//! for every window, a shared table across windows, iterative deepening under limits).

use super::*;
use crate::games::connect4::{Connect4, Wide, Word};
use crate::games::{
    mnk::Mnk,
    tree::{random_tree, Tree},
};
use crate::model::{Game, Hashed, Tactics, ZeroSum};
use crate::search::minimax::minimax;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

fn exact<G: ZeroSum + Hashed + Tactics>(
    g: &G,
    s: &G::State,
    alpha: i32,
    beta: i32,
    t: &Table,
) -> Outcome<G::Move> {
    search(
        g,
        s,
        alpha,
        beta,
        &Config::default(),
        t,
        &Control::unlimited(),
    )
    .unwrap()
}

/// Checks the fail-soft contract of `v` for the window against the true value.
pub(crate) fn assert_fail_soft(v: i32, alpha: i32, beta: i32, truth: i32, what: &str) {
    if v <= alpha {
        assert!(
            truth <= v,
            "{what}: fail low {v} in ({alpha}, {beta}) but the value is {truth}"
        );
    } else if v >= beta {
        assert!(
            truth >= v,
            "{what}: fail high {v} in ({alpha}, {beta}) but the value is {truth}"
        );
    } else {
        assert_eq!(v, truth, "{what}: inside ({alpha}, {beta})");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Every window on a random tree, all through one shared table: the fail-soft contract holds
    /// against minimax, and the full window gives the minimax value.
    #[test]
    fn engine_equals_minimax_on_random_trees(seed in any::<u64>()) {
        let t = Tree::parse(&random_tree(seed, 6, 20)).unwrap();
        let truth = minimax(&t, &0, None, &Control::unlimited()).unwrap().value;
        let table = Table::with_bytes(1 << 12).unwrap();
        let (lo, hi) = t.value_bounds(&0);
        prop_assert_eq!(exact(&t, &0, -INF, INF, &table).value, truth);
        for alpha in lo - 1..=hi {
            for beta in [alpha + 1, alpha + 3, hi + 1] {
                if beta > alpha {
                    let v = exact(&t, &0, alpha, beta, &table).value;
                    assert_fail_soft(v, alpha, beta, truth, &format!("seed {seed}"));
                }
            }
        }
        // Depth-limited on a tree (evaluate = 0 at the cut) equals minimax at that depth.
        for d in 1..4 {
            let cfg = Config { depth: Some(d), ..Config::default() };
            let m = minimax(&t, &0, Some(d), &Control::unlimited()).unwrap().value;
            let e = search(&t, &0, -INF, INF, &cfg, &table, &Control::unlimited()).unwrap();
            prop_assert_eq!(e.value, m, "depth {} tree {}", d, random_tree(seed, 6, 20));
            prop_assert_eq!(e.depth, if t.is_terminal(&0) { 0 } else { d });
        }
    }
}

/// Random positions of `g` with `min_stones..` plies played (not terminal).
fn random_positions<G: Game>(
    g: &G,
    count: usize,
    plies: std::ops::Range<usize>,
    seed: u64,
) -> Vec<G::State> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut moves = Vec::new();
    while out.len() < count {
        let mut s = g.initial_state();
        let n = rng.gen_range(plies.clone());
        for _ in 0..n {
            g.legal_moves(&s, &mut moves);
            if moves.is_empty() {
                break;
            }
            // Prefer moves that do not end the game, so deep positions are reachable.
            let first = rng.gen_range(0..moves.len());
            let pick = (0..moves.len())
                .map(|i| moves[(first + i) % moves.len()])
                .find(|&m| {
                    let mut c = s.clone();
                    g.apply(&mut c, m);
                    !g.is_terminal(&c)
                })
                .unwrap_or(moves[first]);
            g.apply(&mut s, pick);
        }
        if !g.is_terminal(&s) {
            out.push(s);
        }
    }
    out
}

/// Exact Connect Four scores against minimax, with every null window through one table (the way
/// the probes of a job share it).
fn c4_exact_vs_minimax<W: Word>(
    w: u32,
    h: u32,
    count: usize,
    empty: std::ops::Range<usize>,
    seed: u64,
) {
    let g = Connect4::<W>::new(w, h, 1).unwrap();
    let cells = (w * h) as usize;
    let plies = cells - empty.end + 1..cells - empty.start + 1;
    for s in random_positions(&g, count, plies, seed) {
        let text = g.format_position(&s);
        let truth = minimax(&g, &s, None, &Control::unlimited()).unwrap().value;
        let table = Table::with_bytes(1 << 16).unwrap();
        let full = exact(&g, &s, -INF, INF, &table);
        assert_eq!(full.value, truth, "{w}x{h} '{text}'");
        let (lo, hi) = g.value_bounds(&s);
        for t in (lo..=hi + 1).step_by(50) {
            let v = exact(&g, &s, t - 1, t, &table).value;
            assert_fail_soft(v, t - 1, t, truth, &format!("{w}x{h} '{text}'"));
        }
        // The best move reaches the value.
        if let Some(m) = full.best_move {
            let mut c = s;
            g.apply(&mut c, m);
            let child = minimax(&g, &c, None, &Control::unlimited()).unwrap().value;
            assert_eq!(
                to_parent(g.side(&s), g.side(&c), child),
                truth,
                "{w}x{h} '{text}' best move"
            );
        }
    }
}

#[test]
fn connect4_small_boards_match_minimax() {
    c4_exact_vs_minimax::<u64>(4, 4, 40, 6..11, 1);
    c4_exact_vs_minimax::<u64>(5, 4, 30, 6..11, 2);
    c4_exact_vs_minimax::<u64>(7, 6, 30, 4..10, 3);
}

#[test]
fn connect4_wide_boards_match_minimax() {
    // 9 x 7 needs 72 bits (u128); 11 x 11 needs 132 (four 64-bit limbs).
    c4_exact_vs_minimax::<u128>(9, 7, 20, 4..9, 4);
    c4_exact_vs_minimax::<Wide<4>>(11, 11, 10, 4..8, 5);
}

/// With quiescence and extensions off, depth-limited search equals minimax at the same depth
/// with the same (threat-counting) evaluator.
#[test]
fn depth_limited_equals_minimax_with_the_same_evaluator() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let cfg = |d| Config {
        depth: Some(d),
        quiescence: false,
        extensions: false,
        ..Config::default()
    };
    for s in random_positions(&g, 15, 2..20, 6) {
        let table = Table::with_bytes(1 << 16).unwrap();
        for d in [1, 2, 3, 5] {
            let m = minimax(&g, &s, Some(d), &Control::unlimited())
                .unwrap()
                .value;
            let e = search(&g, &s, -INF, INF, &cfg(d), &table, &Control::unlimited()).unwrap();
            assert_eq!(e.value, m, "'{}' depth {d}", g.format_position(&s));
        }
    }
    let g = Mnk::tictactoe();
    for s in random_positions(&g, 30, 0..5, 7) {
        let table = Table::with_bytes(1 << 12).unwrap();
        for d in 1..5 {
            let m = minimax(&g, &s, Some(d), &Control::unlimited())
                .unwrap()
                .value;
            let e = search(
                &g,
                &s,
                -1,
                1 + 1,
                &Config {
                    depth: Some(d),
                    ..Config::default()
                },
                &table,
                &Control::unlimited(),
            );
            assert_fail_soft(e.unwrap().value, -1, 2, m, "tictactoe");
        }
    }
}

/// m,n,k 4,4,3 is a first-player win and 4,4,4 a draw (plain minimax is too slow here).
#[test]
fn mnk_values_through_the_engine() {
    for ((m, n, k), want) in [((3, 3, 3), 0), ((4, 4, 3), 1), ((4, 4, 4), 0)] {
        let g = Mnk::new(m, n, k).unwrap();
        let table = Table::with_bytes(16 << 20).unwrap();
        let o = exact(&g, &g.initial_state(), -INF, INF, &table);
        assert_eq!(o.value, want, "{m},{n},{k}");
    }
}

/// A tiny node limit: iterative deepening still returns a legal move from a finished iteration.
#[test]
fn iterative_deepening_under_a_tiny_node_limit() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let s = g.parse_position("4453").unwrap();
    let table = Table::with_bytes(1 << 20).unwrap();
    let cfg = at_depth(30);
    let ctl = Control::with_limits(None, Some(1));
    let o = search(&g, &s, -INF, INF, &cfg, &table, &ctl).unwrap();
    assert!(o.depth >= 1 && o.depth < 30, "depth {}", o.depth);
    assert_eq!(o.stopped, Some(StopReason::Nodes));
    let mut moves = Vec::new();
    g.legal_moves(&s, &mut moves);
    assert!(moves.contains(&o.best_move.unwrap()));
    // The result is the finished iteration's: the same as searching that depth alone.
    let alone = search(
        &g,
        &s,
        -INF,
        INF,
        &Config {
            depth: Some(o.depth),
            ..cfg.clone()
        },
        &Table::with_bytes(1 << 20).unwrap(),
        &Control::unlimited(),
    )
    .unwrap();
    assert_eq!(o.value, alone.value);
    // An exact search that is stopped says so (None) instead of guessing.
    let ctl = Control::with_limits(None, Some(1));
    assert!(search(
        &g,
        &g.initial_state(),
        -INF,
        INF,
        &Config::default(),
        &table,
        &ctl
    )
    .is_none());
}

/// Lazy SMP: two threads on one table give the single-threaded values.
#[test]
fn two_threads_give_the_same_values() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let cfg = Config {
        threads: 2,
        ..Config::default()
    };
    for s in random_positions(&g, 10, 18..26, 8) {
        let one = exact(&g, &s, -1, 0, &Table::with_bytes(1 << 20).unwrap()).value;
        let two = search(
            &g,
            &s,
            -1,
            0,
            &cfg,
            &Table::with_bytes(1 << 20).unwrap(),
            &Control::unlimited(),
        )
        .unwrap();
        assert_eq!(one >= 0, two.value >= 0, "'{}'", g.format_position(&s));
    }
}

/// The principal variation is legal and starts with the best move.
#[test]
fn principal_variation_is_legal() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let s = g
        .parse_position("2252576253462244111563365343671351441")
        .unwrap();
    let o = exact(&g, &s, -INF, INF, &Table::with_bytes(1 << 20).unwrap());
    assert_eq!(o.value, -100);
    assert_eq!(o.pv.first(), o.best_move.as_ref());
    let mut c = s;
    let mut moves = Vec::new();
    for &m in &o.pv {
        g.legal_moves(&c, &mut moves);
        assert!(moves.contains(&m));
        g.apply(&mut c, m);
    }
}
