//! Benchmark: exact Awari positions solved by alpha-beta with endgame databases against the same
//! search without them: where both finish the values must agree, with far fewer nodes with them.
//!
//! ```text
//! GAMESOLVER_DATA=DIR cargo run --release -p gamesolver-bench --example awari_tables_bench -- \
//!     --set NAME [--reference REF] [--stones 21,22,24] [--count K] [--tries T] \
//!     [--node-limit N] [--time-limit SECONDS] [--uniform | --skew K | --extreme D] [--seed S]
//! ```
//! NAME is a set in DIR/tables (`gamesolver tables build NAME --stones 20`). Per stone count the
//! bench draws positions (by default from random games; `--uniform` from the database's index
//! range; `--skew K` where one side holds at most K stones; `--extreme D` from the reference set,
//! values within `D` of all the stones) and solves each with the `alphabeta` job, as `gamesolver
//! solve` does, twice under the node limit: plain and with `tables=NAME`. Where both finish the
//! values must agree (the run panics otherwise). Plain search only finishes where the rest of the
//! game is short or forced, so the pairs compared are what plain search can check, not a random
//! sample. `--reference REF` (a set covering the drawn counts too) checks every value found with
//! the databases against REF. Prints per position the value and both node counts (`-` when
//! stopped), and per stone count the sums over positions both finished.

use gamesolver_shared::games::awari::Awari;
use gamesolver_shared::model::{Game, Retrograde};
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::retrograde::{store, Tables};
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

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

/// A board of exactly `stones` stones drawn uniformly from the database's index range (the side
/// to move may be without a move: such a board is skipped by the caller as terminal).
fn draw_uniform(game: &Awari, stones: usize, rng: &mut impl Rng) -> Option<String> {
    let board = game.unrank(stones, rng.gen_range(0..game.db_len(stones)));
    let s = game.state_of(board);
    (!game.is_terminal(&s)).then(|| game.format_position(&s))
}

/// `m` stones spread over six pits, every spread equally likely (bars drawn among `m + 5`
/// slots: stars and bars).
fn spread(m: usize, rng: &mut impl Rng) -> [usize; 6] {
    let mut bars = rand::seq::index::sample(rng, m + 5, 5).into_vec();
    bars.sort_unstable();
    let mut pits = [0usize; 6];
    let mut last = 0usize;
    for (i, &b) in bars.iter().enumerate() {
        pits[i] = b - last;
        last = b + 1;
    }
    pits[5] = m + 5 - last;
    pits
}

/// A board of exactly `stones` stones on which one side, the side to move or its opponent (even
/// odds), holds at most `k` stones (each count up to `k` equally likely, each spread of a side
/// equally likely): the endgames where one player is nearly starved. `None` when the side to
/// move has no move.
fn draw_skewed(game: &Awari, stones: usize, k: usize, rng: &mut impl Rng) -> Option<String> {
    let small = rng.gen_range(0..=k.min(stones));
    let (a, b) = (spread(small, rng), spread(stones - small, rng));
    let (mover, other) = if rng.gen_bool(0.5) { (a, b) } else { (b, a) };
    let text = mover
        .iter()
        .chain(other.iter())
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let s = game.parse_position(&text).expect("a board of 12 pits");
    (!game.is_terminal(&s)).then(|| game.format_position(&s))
}

/// A board of exactly `stones` stones drawn uniformly from `reference`'s database of that count
/// whose value `v` has `|v| >= stones - d` (one side takes all but at most `d` of the stones
/// left); `None` when the draw misses or the side to move has no move.
fn draw_extreme(
    game: &Awari,
    reference: &Tables,
    stones: usize,
    d: usize,
    rng: &mut impl Rng,
) -> Option<String> {
    let index = rng.gen_range(0..game.db_len(stones));
    let v = reference
        .value(stones, index)
        .expect("the reference covers the count");
    if (v.unsigned_abs() as usize) + d < stones {
        return None;
    }
    let s = game.state_of(game.unrank(stones, index));
    (!game.is_terminal(&s)).then(|| game.format_position(&s))
}

/// Value and nodes of exact alpha-beta on `position`, or `None` past the node or time limit.
fn solve(
    position: &str,
    tables: Option<&str>,
    node_limit: Option<u64>,
    seconds: Option<f64>,
) -> Option<(i64, u64)> {
    let mut job = JobSpec::new("awari", position, "alphabeta");
    if let Some(t) = tables {
        job = job.with_options(&[("tables", t)]);
    }
    let prepared = prepare(&job).unwrap_or_else(|e| panic!("{position}: {e}"));
    let control = Control::with_limits(seconds.map(Duration::from_secs_f64), node_limit);
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
    let mut reference = None;
    let mut stones = vec![21usize, 22, 24];
    let mut count = 10usize;
    let mut tries = 200usize;
    let mut node_limit = 5_000_000u64;
    let mut seed = 1u64;
    let mut uniform = false;
    let mut skew = None;
    let mut extreme = None;
    let mut seconds = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--set" => set = Some(val()),
            "--reference" => reference = Some(val()),
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
            "--uniform" => uniform = true,
            "--skew" => skew = Some(val().parse().expect("--skew K")),
            "--extreme" => extreme = Some(val().parse().expect("--extreme D")),
            "--time-limit" => seconds = Some(val().parse().expect("--time-limit SECONDS")),
            other => panic!("unknown argument {other}"),
        }
    }
    let set = set.expect("--set NAME (a set in GAMESOLVER_DATA/tables)");
    let game = Awari::default();
    let reference: Option<Tables> = reference.map(|r| {
        let dir = gamesolver_shared::games::data::data_dir()
            .join("tables")
            .join(&r);
        store::load_tables(&game, &game.table_tag(), &dir, game.max_stones())
            .unwrap_or_else(|e| panic!("reference set {r}: {e}"))
    });
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    println!("stones position value plain_nodes tables_nodes plain_s tables_s");
    let mut summary = Vec::new();
    let show = |r: &Option<(i64, u64)>| r.map_or("-".to_string(), |(_, n)| n.to_string());
    for &n in &stones {
        let (mut drawn, mut plain_done, mut tables_done, mut both) = (0usize, 0, 0, 0);
        let (mut plain_sum, mut tables_sum, mut checked) = (0u64, 0u64, 0usize);
        let mut seen = std::collections::HashSet::new();
        // Draws that miss (a capture past the count, a terminal board, a value not extreme)
        // are retried, up to a bound so that a class with no member ends the loop.
        let mut attempts = 0u64;
        while drawn < tries && both < count && attempts < 1_000_000 * tries as u64 {
            attempts += 1;
            let drawn_position = if let Some(d) = extreme {
                let t = reference
                    .as_ref()
                    .filter(|t| n < t.len())
                    .expect("--extreme needs a --reference set that covers the stone count");
                draw_extreme(&game, t, n, d, &mut rng)
            } else if let Some(k) = skew {
                draw_skewed(&game, n, k, &mut rng)
            } else if uniform {
                draw_uniform(&game, n, &mut rng)
            } else {
                draw(&game, n, &mut rng)
            };
            let Some(p) = drawn_position else {
                continue;
            };
            if !seen.insert(p.clone()) {
                continue;
            }
            drawn += 1;
            let t0 = Instant::now();
            let plain = solve(&p, None, Some(node_limit), seconds);
            let t1 = Instant::now();
            let with = solve(&p, Some(&set), Some(node_limit), seconds);
            let t2 = Instant::now();
            plain_done += usize::from(plain.is_some());
            tables_done += usize::from(with.is_some());
            if let (Some((v, _)), Some(t)) = (with, &reference) {
                if n < t.len() {
                    let board = game.board(&game.parse_position(&p).expect("drawn"));
                    let (db, i) = game.rank(&board);
                    let want = t.value(db, i).expect("covered") as i64;
                    assert_eq!(v, want, "{p}: with tables {v}, reference {want}");
                    checked += 1;
                }
            }
            if let (Some((v, a)), Some((w, b))) = (plain, with) {
                assert_eq!(v, w, "{p}: plain {v}, with tables {w}");
                both += 1;
                plain_sum += a;
                tables_sum += b;
            }
            let value = plain
                .or(with)
                .map_or("-".to_string(), |(v, _)| v.to_string());
            println!(
                "{n} {p} {value} {} {} {:.3} {:.3}",
                show(&plain),
                show(&with),
                (t1 - t0).as_secs_f64(),
                (t2 - t1).as_secs_f64()
            );
        }
        summary.push((
            n,
            drawn,
            plain_done,
            tables_done,
            both,
            checked,
            plain_sum,
            tables_sum,
        ));
    }
    println!("\nstones drawn plain_finished tables_finished both checked_by_reference plain_nodes tables_nodes ratio");
    for (n, drawn, p, t, both, checked, a, b) in summary {
        println!(
            "{n} {drawn} {p} {t} {both} {checked} {a} {b} {:.1}",
            a as f64 / b.max(1) as f64
        );
    }
}
