//! Multi-player benchmark (issue 8): node counts of max^n, paranoid and best-reply search on
//! Rolit, 3 and 4 players, at fixed depths, from the same positions.
//!
//! ```text
//! cargo run --release -p gamesolver-bench --example multi_bench -- [POSITIONS] [MAX_DEPTH] [SIZE]
//! ```
//!
//! Defaults: 6 positions per player count, depths 1 to 4, the 8 x 8 board. Positions come from
//! random playouts of 4 to 24 plies with a fixed seed (`POSITION_SEED`), so every run measures
//! the same positions; node counts are exact and reproducible (times depend on the machine's
//! load). Depth is in plies: for max^n and paranoid one player's move, for BRS one layer (the
//! root player's move, or the best reply of all opponents), so at the same depth BRS sees
//! more of the root player's own moves and fewer of each opponent's.

use gamesolver_shared::games::rolit::Rolit;
use gamesolver_shared::model::Game;
use gamesolver_shared::search::bestreply::best_reply;
use gamesolver_shared::search::maxn::{maxn, TieBreak};
use gamesolver_shared::search::paranoid::paranoid;
use gamesolver_shared::search::Control;
use rand::{Rng, SeedableRng};
use std::time::Instant;

/// Seed of the random playouts that make the positions.
const POSITION_SEED: u64 = 2011;

fn positions(game: &Rolit, count: usize) -> Vec<<Rolit as Game>::State> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(POSITION_SEED);
    let mut moves = Vec::new();
    let max = (game.size() * game.size() - 4).min(24);
    (0..count)
        .map(|_| {
            let mut s = game.initial_state();
            for _ in 0..rng.gen_range(4.min(max)..=max) {
                game.legal_moves(&s, &mut moves);
                if moves.is_empty() {
                    break;
                }
                game.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
            }
            s
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg =
        |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (count, max_depth, size) = (arg(0, 6), arg(1, 4) as u32, arg(2, 8));
    let ctl = Control::unlimited();
    for players in [3, 4] {
        let game = Rolit::new(players, size).expect("board size");
        let states = positions(&game, count);
        println!("\nrolit {players} players, {size} x {size}, {count} positions");
        println!(
            "{:<6} {:>12} {:>12} {:>12} {:>10} {:>10} {:>10}",
            "depth", "maxn", "paranoid", "brs", "maxn ms", "par ms", "brs ms"
        );
        for depth in 1..=max_depth {
            let mut nodes = [0u64; 3];
            let mut ms = [0u128; 3];
            for s in &states {
                let t = Instant::now();
                nodes[0] += maxn(&game, s, Some(depth), TieBreak::First, &ctl)
                    .unwrap()
                    .nodes;
                ms[0] += t.elapsed().as_millis();
                let t = Instant::now();
                nodes[1] += paranoid(&game, s, Some(depth), &ctl).unwrap().nodes;
                ms[1] += t.elapsed().as_millis();
                let t = Instant::now();
                nodes[2] += best_reply(&game, s, Some(depth), &ctl).unwrap().nodes;
                ms[2] += t.elapsed().as_millis();
            }
            println!(
                "{:<6} {:>12} {:>12} {:>12} {:>10} {:>10} {:>10}",
                depth, nodes[0], nodes[1], nodes[2], ms[0], ms[1], ms[2]
            );
        }
    }
}
