//! Carcassonne benchmark (issue 9): the *-Minimax family against expectimax, and Star2.5
//! against MCTS.
//!
//! ```text
//! cargo run --release -p gamesolver-bench --example carcassonne_bench -- nodes [POSITIONS] [DEPTH]
//! cargo run --release -p gamesolver-bench --example carcassonne_bench -- match [GAMES] [MS_PER_MOVE] [PROBING]
//! ```
//!
//! `nodes` (defaults 20 positions, depth 2): decision positions (a tile drawn) from seeded
//! random games, spread over the whole game (position i is taken after a random share of the
//! tiles). Every kernel searches each position to the same depth (players' plies; draws not
//! counted) with the game's bounds; the table gives mean nodes and milliseconds per move and
//! checks that every kernel returns expectimax's value. Kernels: expectimax without pruning, with
//! Ballard's chance cut, Star1, Star2, Star2.5 with probing factors 1..5, sequential and
//! cyclic (Heyden 2009 found Star2.5 with probing factor 5 the best).
//!
//! `match` (defaults 200 games, 200 ms per move, probing 5): Star2.5 (cyclic, iterative
//! deepening within the time per move) against MCTS (UCT with chance sampled from the bag, one
//! tree, the same time per move), colours alternating, the same seeded tile order for both
//! colours of a pair. Prints Star2.5's wins, draws and losses and its score rate.

use gamesolver_shared::games::carcassonne::{Carcassonne, State};
use gamesolver_shared::model::chance::ChanceZeroSum;
use gamesolver_shared::model::{Game, Stochastic, Turn};
use gamesolver_shared::search::expectimax::{expectimax, ChanceOutcome, Pruning};
use gamesolver_shared::search::mcts::{self, Config, Merge};
use gamesolver_shared::search::star1::star1;
use gamesolver_shared::search::star2::star2;
use gamesolver_shared::search::star25::{star25, ProbingMode};
use gamesolver_shared::search::Control;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

type Move = <Carcassonne as Game>::Move;

/// A decision position after a random share of the game, from seed `seed`.
fn position(game: &Carcassonne, seed: u64) -> State {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let stop_at_left = rng.gen_range(2..70u8);
    let mut s = game.initial_state();
    let mut moves = Vec::new();
    loop {
        if game.tiles_left(&s) <= stop_at_left && game.drawn(&s).is_some() {
            return s;
        }
        if game.is_terminal(&s) {
            s = game.initial_state();
            continue;
        }
        game.legal_moves(&s, &mut moves);
        let mv = moves[rng.gen_range(0..moves.len())];
        game.apply(&mut s, mv);
    }
}

fn nodes(positions: usize, depth: u32) {
    let game = Carcassonne::new();
    let roots: Vec<State> = (0..positions as u64)
        .map(|i| position(&game, 1000 + i))
        .collect();
    type Kernel<'a> = Box<dyn Fn(&State) -> ChanceOutcome<Move> + 'a>;
    let d = Some(depth);
    let mut kernels: Vec<(String, Kernel)> = vec![
        (
            "expectimax".into(),
            Box::new(|s: &State| {
                expectimax(&game, s, d, Pruning::None, None, &Control::unlimited()).unwrap()
            }),
        ),
        (
            "expectimax+cut".into(),
            Box::new(|s: &State| {
                expectimax(
                    &game,
                    s,
                    d,
                    Pruning::ChanceBounds,
                    None,
                    &Control::unlimited(),
                )
                .unwrap()
            }),
        ),
        (
            "star1".into(),
            Box::new(|s: &State| star1(&game, s, d, None, &Control::unlimited()).unwrap()),
        ),
        (
            "star2".into(),
            Box::new(|s: &State| star2(&game, s, d, None, &Control::unlimited()).unwrap()),
        ),
    ];
    for probing in 1..=5 {
        for mode in [ProbingMode::Sequential, ProbingMode::Cyclic] {
            let name = format!(
                "star25 p{probing} {}",
                if mode == ProbingMode::Cyclic {
                    "cyc"
                } else {
                    "seq"
                }
            );
            let g = &game;
            kernels.push((
                name,
                Box::new(move |s: &State| {
                    star25(g, s, d, probing, mode, None, &Control::unlimited()).unwrap()
                }),
            ));
        }
    }
    println!(
        "Carcassonne, {positions} decision positions, depth {depth}, bounds {:?}",
        game.utility_bounds()
    );
    println!("{:<18} {:>14} {:>12}", "kernel", "nodes/move", "ms/move");
    let mut reference: Vec<f64> = Vec::new();
    for (name, run) in &kernels {
        let (mut n, mut ms) = (0u64, 0.0);
        for (i, s) in roots.iter().enumerate() {
            let t0 = Instant::now();
            let out = run(s);
            ms += t0.elapsed().as_secs_f64() * 1e3;
            n += out.nodes;
            if reference.len() < roots.len() {
                reference.push(out.value);
            } else {
                assert!(
                    (out.value - reference[i]).abs() <= 1e-9 * reference[i].abs().max(1.0),
                    "{name}: value {} != expectimax {} at '{}'",
                    out.value,
                    reference[i],
                    game.format_position(s)
                );
            }
        }
        let k = roots.len() as f64;
        println!("{name:<18} {:>14.0} {:>12.2}", n as f64 / k, ms / k);
    }
}

/// Star2.5's move by iterative deepening within `budget`.
fn star_move(game: &Carcassonne, s: &State, budget: Duration, probing: u32) -> Move {
    let deadline = Instant::now() + budget;
    let mut best = None;
    for depth in 1..=8 {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let ctl = Control::with_limits(Some(left), None);
        match star25(
            game,
            s,
            Some(depth),
            probing,
            ProbingMode::Cyclic,
            None,
            &ctl,
        ) {
            Some(out) => best = out.best_move.or(best),
            None => break,
        }
    }
    best.unwrap_or_else(|| {
        let mut moves = Vec::new();
        game.legal_moves(s, &mut moves);
        moves[0]
    })
}

fn mcts_move(game: &Carcassonne, s: &State, budget: Duration, seed: u64) -> Move {
    let mut cfg = Config::new(None);
    cfg.seed = seed;
    cfg.solver = false;
    let ctl = Control::with_limits(Some(budget), None);
    let summary = mcts::mcts_stochastic(game, s, &cfg, &ctl);
    let i = summary.best(Merge::Sum).expect("a decision root has moves");
    summary.moves[i]
}

fn play_match(games: usize, ms: u64, probing: u32) {
    let game = Carcassonne::new();
    let budget = Duration::from_millis(ms);
    let (mut wins, mut draws, mut losses) = (0, 0, 0);
    let mut outcomes = Vec::new();
    for g in 0..games {
        // Games 2k and 2k + 1 share the tile order; Star2.5 plays first in the even ones.
        let mut draw_rng = ChaCha8Rng::seed_from_u64(5000 + g as u64 / 2);
        let star = (g % 2) as u8;
        let mut s = game.initial_state();
        while let turn @ (Turn::Chance | Turn::Player(_)) = game.turn(&s) {
            let mv = match turn {
                Turn::Chance => {
                    game.chance_outcomes(&s, &mut outcomes);
                    let mut x: f64 = draw_rng.gen();
                    let mut pick = outcomes[outcomes.len() - 1].0;
                    for &(m, p) in &outcomes {
                        if x < p {
                            pick = m;
                            break;
                        }
                        x -= p;
                    }
                    pick
                }
                Turn::Player(p) if p == star => star_move(&game, &s, budget, probing),
                _ => mcts_move(&game, &s, budget, g as u64),
            };
            game.apply(&mut s, mv);
        }
        let sc = game.scores(&s);
        let (me, other) = (sc[star as usize], sc[1 - star as usize]);
        match me.cmp(&other) {
            std::cmp::Ordering::Greater => wins += 1,
            std::cmp::Ordering::Equal => draws += 1,
            std::cmp::Ordering::Less => losses += 1,
        }
        println!("game {g}: Star2.5 {me} - MCTS {other}");
    }
    let rate = (wins as f64 + 0.5 * draws as f64) / games as f64;
    println!(
        "Star2.5 (probing {probing}, cyclic) vs MCTS at {ms} ms/move: {wins} wins, {draws} draws, {losses} losses, score rate {rate:.3}"
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, default: u64| -> u64 {
        args.get(i)
            .map(|a| {
                a.parse()
                    .unwrap_or_else(|_| panic!("'{a}' is not a number"))
            })
            .unwrap_or(default)
    };
    match args.first().map(String::as_str) {
        Some("nodes") | None => nodes(num(1, 20) as usize, num(2, 2) as u32),
        Some("match") => play_match(num(1, 200) as usize, num(2, 200), num(3, 5) as u32),
        Some(other) => {
            eprintln!("unknown mode '{other}' (nodes, match)");
            std::process::exit(2);
        }
    }
}
