//! Benchmark: exact Awari positions solved by alpha-beta with endgame databases against the same
//! search without them (issue #26: "positions of 21+ stones solved by alpha-beta with the
//! databases agree with the same search without them, with far fewer nodes").
//!
//! ```text
//! GAMESOLVER_DATA=DIR cargo run --release -p gamesolver-bench --example awari_tables_bench -- \
//!     --set NAME [--stones 21,22,24] [--count K] [--tries T] [--node-limit N] [--seed S]
//! ```
//! NAME is a set in DIR/tables (`gamesolver tables build NAME --stones 20`). For each stone
//! count the bench draws positions (random games from the start, taken the first time the board
//! holds exactly that many stones with the side to move to play), solves each with plain
//! alpha-beta (the job `alphabeta` through `registry::prepare` and `plan::run_local`, as
//! `gamesolver solve` does) under a node limit, and solves those it finishes again with
//! `tables=NAME`. Values must agree (the run panics otherwise). Plain search only finishes where
//! the rest of the game is short or forced (every line reaches an end without a long
//! no-capture cycle); the bench prints how many of the `T` draws those were, so the sample is
//! what plain search can check, not a random sample of positions. Prints per position the
//! value, both node counts and the ratio; per stone count the sums.

use gamesolver_shared::games::awari::Awari;
use gamesolver_shared::model::Game;
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;
use rand::{Rng, SeedableRng};
use std::time::Instant;

/// A random game from the start until the board holds exactly `stones` stones; `None` when a
/// capture jumps past it or the game ends first.
fn draw(game: &Awari, stones: usize, rng: &mut impl Rng) -> Option<String> {
    let mut s = game.initial_state();
    let mut moves = Vec::new();
    for _ in 0..400 {
        let board = game.board(&s);
        let n = game.stones(&board);
        if n == stones {
            return Some(game.format_position(&game.state_of(board)));
        }
        if n < stones {
            return None;
        }
        moves.clear();
        game.legal_moves(&s, &mut moves);
        if moves.is_empty() {
            return None;
        }
        let m = moves[rng.gen_range(0..moves.len())];
        game.apply(&mut s, m);
    }
    None
}

/// Value and nodes of exact alpha-beta on `position`, or `None` past the node limit.
fn solve(position: &str, tables: Option<&str>, node_limit: Option<u64>) -> Option<(i64, u64)> {
    let mut job = JobSpec::new("awari", position, "alphabeta");
    if let Some(t) = tables {
        job = job.with_options(&[("tables", t)]);
    }
    let prepared = prepare(&job).unwrap_or_else(|e| panic!("{position}: {e}"));
    let control = Control::with_limits(None, node_limit);
    let r = run_local(prepared.as_ref(), &control).unwrap_or_else(|e| panic!("{position}: {e}"));
    let v = r.value.as_i64()?;
    // A stopped plan reports its bounds, not an exact value.
    if r.extra.to_map().contains_key("stopped") {
        return None;
    }
    Some((v, r.nodes))
}

fn main() {
    let mut set = None;
    let mut stones = vec![21usize, 22, 24];
    let mut count = 10usize;
    let mut tries = 2000usize;
    let mut node_limit = 20_000_000u64;
    let mut seed = 1u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--set" => set = Some(val()),
            "--stones" => {
                stones = val()
                    .split(',')
                    .map(|s| s.parse().expect("--stones N,M"))
                    .collect()
            }
            "--count" => count = val().parse().expect("--count K"),
            "--tries" => tries = val().parse().expect("--tries T"),
            "--node-limit" => node_limit = val().parse().expect("--node-limit N"),
            "--seed" => seed = val().parse().expect("--seed S"),
            other => panic!("unknown argument {other}"),
        }
    }
    let set = set.expect("--set NAME (a set in GAMESOLVER_DATA/tables)");
    let game = Awari::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    println!("stones position value plain_nodes tables_nodes ratio plain_s tables_s");
    let mut summary = Vec::new();
    for &n in &stones {
        let (mut drawn, mut finished) = (0usize, 0usize);
        let (mut plain_sum, mut tables_sum) = (0u64, 0u64);
        let mut seen = std::collections::HashSet::new();
        while drawn < tries && finished < count {
            let Some(p) = draw(&game, n, &mut rng) else {
                continue;
            };
            if !seen.insert(p.clone()) {
                continue;
            }
            drawn += 1;
            let t0 = Instant::now();
            let Some((v, plain)) = solve(&p, None, Some(node_limit)) else {
                continue;
            };
            let t1 = Instant::now();
            let (w, with) = solve(&p, Some(&set), None).expect("no limit");
            let t2 = Instant::now();
            assert_eq!(v, w, "{p}: plain {v}, with tables {w}");
            finished += 1;
            plain_sum += plain;
            tables_sum += with;
            println!(
                "{n} {p} {v} {plain} {with} {:.1} {:.3} {:.3}",
                plain as f64 / with.max(1) as f64,
                (t1 - t0).as_secs_f64(),
                (t2 - t1).as_secs_f64()
            );
        }
        summary.push((n, drawn, finished, plain_sum, tables_sum));
    }
    println!("\nstones drawn finished plain_nodes tables_nodes ratio");
    for (n, drawn, finished, p, t) in summary {
        println!(
            "{n} {drawn} {finished} {p} {t} {:.1}",
            p as f64 / t.max(1) as f64
        );
    }
}
