//! *-Minimax benchmark (issue 8): node counts and times of Star1, Star2 and Star2.5 (probing
//! factor 1 to 5, sequential and cyclic) against expectimax at the same depth, on backgammon and
//! Pig positions. Every kernel's value is checked against expectimax's (within 1e-9).
//!
//! ```text
//! cargo run --release -p gamesolver-bench --example star_bench -- [POSITIONS] [BG_DEPTH] [PIG_DEPTH]
//! ```
//!
//! Defaults: 6 positions per game, backgammon depth 2 from positions on roll (the mover's play,
//! the opponent's 21 rolls and play), Pig depth 8. Positions come from random playouts with a
//! fixed seed (`POSITION_SEED`), so every run measures the same positions. Depth counts the
//! players' plies; chance layers are not counted.
//!
//! Figures, with their machine and date: `docs/BENCHMARKS.md` (*-Minimax).

use gamesolver_shared::games::backgammon::Backgammon;
use gamesolver_shared::games::pig::Pig;
use gamesolver_shared::model::chance::ChanceZeroSum;
use gamesolver_shared::model::{Game, Turn};
use gamesolver_shared::search::expectimax::{expectimax, ChanceOutcome, Pruning};
use gamesolver_shared::search::star1::star1;
use gamesolver_shared::search::star25::{star25, ProbingMode};
use gamesolver_shared::search::Control;
use rand::{Rng, SeedableRng};
use std::time::Instant;

/// Seed of the random playouts that make the positions.
const POSITION_SEED: u64 = 2024;

/// Random positions where `want` holds, after 2..`max_plies` random plies.
fn positions<G: Game>(
    game: &G,
    count: usize,
    max_plies: usize,
    want: impl Fn(&G::State) -> bool,
) -> Vec<G::State> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(POSITION_SEED);
    let mut moves = Vec::new();
    let mut out = Vec::new();
    while out.len() < count {
        let mut s = game.initial_state();
        let plies = rng.gen_range(2..max_plies);
        for _ in 0..plies {
            game.legal_moves(&s, &mut moves);
            if moves.is_empty() {
                break;
            }
            game.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
        }
        if want(&s) {
            out.push(s);
        }
    }
    out
}

fn bench<G: ChanceZeroSum>(label: &str, game: &G, states: &[G::State], depth: u32) {
    let ctl = &Control::unlimited();
    type Run<'a, G> = (
        String,
        Box<dyn Fn(&<G as Game>::State) -> ChanceOutcome<<G as Game>::Move> + 'a>,
    );
    let mut kernels: Vec<Run<G>> = vec![
        (
            "expectimax".into(),
            Box::new(|s| expectimax(game, s, Some(depth), Pruning::None, None, ctl).unwrap()),
        ),
        (
            "expectimax+cut".into(),
            Box::new(|s| {
                expectimax(game, s, Some(depth), Pruning::ChanceBounds, None, ctl).unwrap()
            }),
        ),
        (
            "star1".into(),
            Box::new(|s| star1(game, s, Some(depth), None, ctl).unwrap()),
        ),
    ];
    for k in 1..=5u32 {
        for mode in [ProbingMode::Sequential, ProbingMode::Cyclic] {
            let name = if k == 1 {
                format!("star2 ({mode:?})")
            } else {
                format!("star2.5 k={k} {mode:?}")
            };
            if k == 1 && mode == ProbingMode::Cyclic {
                continue; // identical to sequential with one probe
            }
            kernels.push((
                name,
                Box::new(move |s| star25(game, s, Some(depth), k, mode, None, ctl).unwrap()),
            ));
        }
    }
    println!("\n{label}: {} positions, depth {depth}", states.len());
    println!(
        "{:<24} {:>14} {:>8} {:>10}",
        "kernel", "nodes", "vs exp", "ms"
    );
    let mut base_nodes = 0u64;
    let mut reference: Vec<f64> = Vec::new();
    for (i, (name, run)) in kernels.iter().enumerate() {
        let t0 = Instant::now();
        let mut nodes = 0u64;
        for (j, s) in states.iter().enumerate() {
            let o = run(s);
            nodes += o.nodes;
            if i == 0 {
                reference.push(o.value);
            } else {
                assert!(
                    (o.value - reference[j]).abs() < 1e-9,
                    "{name} position {j}: {} vs expectimax {}",
                    o.value,
                    reference[j]
                );
            }
        }
        if i == 0 {
            base_nodes = nodes;
        }
        println!(
            "{:<24} {:>14} {:>7.1}% {:>10}",
            name,
            nodes,
            100.0 * nodes as f64 / base_nodes as f64,
            t0.elapsed().as_millis()
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: u32| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let count = arg(0, 6) as usize;
    let bg_depth = arg(1, 2);
    let pig_depth = arg(2, 8);

    let bg = Backgammon;
    let on_roll = positions(&bg, count, 40, |s| matches!(bg.turn(s), Turn::Player(_)));
    bench("backgammon (on roll)", &bg, &on_roll, bg_depth);

    let pig = Pig::new(100, 6).unwrap();
    let pig_states = positions(&pig, count, 60, |s| matches!(pig.turn(s), Turn::Player(_)));
    bench("pig (target 100, d6)", &pig, &pig_states, pig_depth);
}
