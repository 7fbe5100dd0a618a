//! The fast path against plain minimax (small boards), against the generic engine (7 x 6), and
//! against Pons' published scores; fail-soft windows through one shared table; mirror images;
//! threads.

use super::*;
use crate::model::ZeroSum;
use crate::search::engine::{Config, INF};
use crate::search::minimax::minimax;
use rand::{Rng, SeedableRng};

fn fast(g: &Connect4<u64>, s: &C4State<u64>, a: i32, b: i32, t: &Table, threads: usize) -> i32 {
    search(g, s, a, b, threads, t, None, &Control::unlimited())
        .unwrap()
        .value
}

/// Random non-terminal positions with a number of plies in `plies`.
fn random_positions(
    g: &Connect4<u64>,
    count: usize,
    plies: std::ops::Range<u32>,
    seed: u64,
) -> Vec<C4State<u64>> {
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
            let m = moves[rng.gen_range(0..moves.len())];
            let mut c = s;
            g.apply(&mut c, m);
            if g.is_terminal(&c) && moves.len() > 1 {
                continue;
            }
            s = c;
        }
        if !g.is_terminal(&s) {
            out.push(s);
        }
    }
    out
}

fn assert_fail_soft(v: i32, alpha: i32, beta: i32, truth: i32, what: &str) {
    if v <= alpha {
        assert!(
            truth <= v,
            "{what}: fail low {v} in ({alpha}, {beta}), value {truth}"
        );
    } else if v >= beta {
        assert!(
            truth >= v,
            "{what}: fail high {v} in ({alpha}, {beta}), value {truth}"
        );
    } else {
        assert_eq!(v, truth, "{what}: inside ({alpha}, {beta})");
    }
}

/// Exact value, every null window (shared table) and the best move against minimax.
fn against_minimax(w: u32, h: u32, count: usize, plies: std::ops::Range<u32>, seed: u64) {
    against_minimax_on(1 << 14, w, h, count, plies, seed);
}

/// As [`against_minimax`] on a table of `bytes`.
fn against_minimax_on(
    bytes: usize,
    w: u32,
    h: u32,
    count: usize,
    plies: std::ops::Range<u32>,
    seed: u64,
) {
    let g = Connect4::<u64>::new(w, h, 1).unwrap();
    assert!(applies(&g));
    for s in random_positions(&g, count, plies, seed) {
        let text = g.format_position(&s);
        let truth = minimax(&g, &s, None, &Control::unlimited()).unwrap().value;
        let table = Table::with_bytes(bytes).unwrap();
        let full = search(&g, &s, -INF, INF, 1, &table, None, &Control::unlimited()).unwrap();
        assert_eq!(full.value, truth, "{w}x{h} '{text}'");
        let (lo, hi) = g.value_bounds(&s);
        // Each move's exact value (from the root's side), by minimax, computed on demand.
        let mut move_values: Vec<Option<i32>> = vec![None; w as usize];
        let mut value_of = |m: u8| {
            *move_values[m as usize].get_or_insert_with(|| {
                let mut c = s;
                g.apply(&mut c, m);
                if g.is_terminal(&c) {
                    -g.terminal_value(&c)
                } else {
                    -minimax(&g, &c, None, &Control::unlimited()).unwrap().value
                }
            })
        };
        for t in (lo - 100..=hi + 100).step_by(50) {
            let o = search(&g, &s, t - 1, t, 1, &table, None, &Control::unlimited()).unwrap();
            let v = o.value;
            assert_fail_soft(v, t - 1, t, truth, &format!("{w}x{h} '{text}' target {t}"));
            // A fail high names a move that proves it (also when a child's table entry cut the
            // root without a search).
            if v >= t {
                let m = o.best_move.expect("a fail high names its move");
                assert!(
                    value_of(m) >= t,
                    "{w}x{h} '{text}' target {t}: move {m} does not reach {t}"
                );
            }
        }
        // Every non-terminal root has a move that reaches the value, also those the hints
        // decide (a double threat against us, a draw by the board filling up).
        let m = full
            .best_move
            .unwrap_or_else(|| panic!("{w}x{h} '{text}': no best move"));
        let mut c = s;
        g.apply(&mut c, m);
        let child = minimax(&g, &c, None, &Control::unlimited()).unwrap().value;
        let back = if g.is_terminal(&c) {
            -g.terminal_value(&c)
        } else {
            -child
        };
        assert_eq!(back, truth, "{w}x{h} '{text}' best move {m}");
        // The principal variation is a legal line starting with the best move.
        assert_eq!(full.pv.first(), Some(&m));
        let mut p = s;
        for &mv in &full.pv {
            assert!(!g.is_terminal(&p) && g.can_play(&p, mv), "'{text}' pv");
            g.apply(&mut p, mv);
        }
    }
}

#[test]
fn small_boards_match_minimax() {
    against_minimax(4, 4, 40, 5..11, 1);
    against_minimax(5, 4, 30, 8..13, 2);
    against_minimax(4, 5, 30, 8..13, 3);
    against_minimax(6, 5, 20, 18..24, 4);
    against_minimax(7, 6, 20, 32..38, 5);
    // Late roots: the board fills up (draws decided without search, forced last moves).
    against_minimax(4, 4, 40, 12..16, 8);
    against_minimax(5, 4, 30, 16..20, 9);
    against_minimax(7, 6, 20, 38..42, 10);
}

/// The early cuts (enhanced transposition cutoffs at nodes with at least 16 of 42 cells
/// empty, scaled: 6 of 4 x 4's 16, 7 of 5 x 4's 20) and claimeven one stone ahead (second player to move, even heights) on the
/// roots where they apply: every window against minimax, one shared table per position (so
/// the later windows find the earlier ones' entries to cut on); and early roots by bisection
/// on a shared table against a full window on a fresh one.
#[test]
fn transposition_and_claimeven_cuts_match_minimax() {
    against_minimax(4, 4, 24, 3..9, 31);
    // Many small roots where a child's entry often cuts the root itself (the named move must
    // be the child whose entry cut).
    against_minimax(4, 4, 400, 5..8, 36);
    against_minimax(5, 4, 24, 8..11, 34);
    against_minimax(6, 4, 8, 12..15, 32);
    against_minimax(4, 6, 8, 12..15, 33);
    // Early 5 x 4 roots (too big for minimax): the bisection's many null windows on one table
    // (where transposition cutoffs fire most) against one full window on a fresh table.
    let g = Connect4::<u64>::new(5, 4, 1).unwrap();
    let ctl = Control::unlimited();
    for s in random_positions(&g, 40, 2..8, 35) {
        let shared = Table::with_bytes(1 << 14).unwrap();
        let v = solve(&g, &s, 1, &shared, None, &ctl).unwrap();
        let fresh = Table::with_bytes(1 << 20).unwrap();
        let full = fast(&g, &s, -INF, INF, &fresh, 1);
        assert_eq!(v * VALUE_SCALE, full, "5x4 '{}'", g.format_position(&s));
    }
}

/// On 7 x 6 middle games the fast path and the generic engine agree on every null window.
#[test]
fn seven_by_six_matches_the_generic_engine() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    for s in random_positions(&g, 30, 16..28, 6) {
        let text = g.format_position(&s);
        let t1 = Table::with_bytes(1 << 20).unwrap();
        let truth = engine::search(
            &g,
            &s,
            -INF,
            INF,
            &Config::default(),
            &t1,
            &Control::unlimited(),
        )
        .unwrap()
        .value;
        let t2 = Table::with_bytes(1 << 20).unwrap();
        assert_eq!(fast(&g, &s, -INF, INF, &t2, 1), truth, "'{text}'");
        for t in [-300, -100, 0, 1, 100, 101, 300] {
            let v = fast(&g, &s, t - 1, t, &t2, 1);
            assert_fail_soft(v, t - 1, t, truth, &format!("'{text}' target {t}"));
        }
    }
}

/// A position and its mirror image have the same value, on a shared table (where they share
/// entries), and the best move found for either is legal and reaches the value.
#[test]
fn mirror_images_share_the_table_soundly() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let table = Table::with_bytes(1 << 20).unwrap();
    for s in random_positions(&g, 20, 20..30, 7) {
        let text = g.format_position(&s);
        let mirrored: String = text
            .chars()
            .map(|c| char::from(b'1' + (b'7' - c as u8)))
            .collect();
        let m = g.parse_position(&mirrored).unwrap();
        let v = fast(&g, &s, -INF, INF, &table, 1);
        let o = search(&g, &m, -INF, INF, 1, &table, None, &Control::unlimited()).unwrap();
        assert_eq!(o.value, v, "'{text}' and '{mirrored}'");
        if let Some(mv) = o.best_move {
            let mut c = m;
            g.apply(&mut c, mv);
            let fresh = Table::with_bytes(1 << 20).unwrap();
            let child = if g.is_terminal(&c) {
                g.terminal_value(&c)
            } else {
                fast(&g, &c, -INF, INF, &fresh, 1)
            };
            assert_eq!(-child, v, "'{mirrored}' best move {mv}");
        }
    }
}

/// Published scores (Pons' middle-game set) by the null-window bisection the planner runs,
/// with one and two threads.
#[test]
fn pons_middle_game_positions_with_one_and_two_threads() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let text = crate::games::data::read("connect4/Test_L2_R1").unwrap();
    for (i, line) in text.lines().take(40).enumerate() {
        let (moves, want) = line.split_once(' ').unwrap();
        let want: i32 = want.trim().parse().unwrap();
        let s = g.parse_position(moves).unwrap();
        let threads = 1 + i % 2;
        let table = Table::with_bytes(1 << 22).unwrap();
        let (mut lo, mut hi) = g.value_bounds(&s);
        while lo < hi {
            let t = lo + (hi - lo + 1) / 2;
            let v = fast(&g, &s, t - 1, t, &table, threads);
            if v >= t {
                lo = v;
            } else {
                hi = v;
            }
        }
        assert_eq!(lo, want * VALUE_SCALE, "'{moves}' threads {threads}");
    }
}

/// Every board whose bitboard fits a `u64` takes the fast path; boards of more than 50 bits
/// only with a table of buckets enough for their keys (1 MB for 64 bits).
#[test]
fn the_fast_path_takes_every_64_bit_board() {
    let c4 = |w, h| Connect4::<u64>::new(w, h, 1).unwrap();
    for (w, h) in [
        (7, 6),
        (6, 7),
        (8, 5),
        (9, 5),
        (7, 7),
        (8, 6),
        (6, 8),
        (8, 7),
        (4, 15),
    ] {
        assert!(applies(&c4(w, h)), "{w}x{h}");
    }
    // 65 and 66 bits: the generic engine on u128.
    assert!(Connect4::<u64>::new(5, 12, 1).is_err());
    let small = Table::with_bytes(1 << 14).unwrap();
    let mb = Table::with_bytes(1 << 20).unwrap();
    assert!(table_fits(&c4(7, 6), &small));
    assert!(table_fits(&c4(5, 9), &small));
    assert!(!table_fits(&c4(8, 7), &small));
    assert!(table_fits(&c4(8, 7), &mb));
    assert!(table_fits(&c4(7, 7), &mb));
}

/// On the boards of 51 to 64 bits (keys above `2^50`, the top sentinel bit 63 on 8 x 7), the
/// fast path against minimax near the end, every null window on one shared table.
#[test]
fn boards_of_51_to_64_bits_match_minimax() {
    // 5 to 9 empty cells: minimax (no table) stays fast on 6 to 10 columns.
    against_minimax_on(1 << 20, 9, 5, 12, 36..41, 41);
    against_minimax_on(1 << 20, 7, 7, 12, 40..45, 42);
    against_minimax_on(1 << 20, 8, 6, 12, 39..44, 43);
    against_minimax_on(1 << 20, 6, 8, 12, 39..44, 44);
    against_minimax_on(1 << 20, 8, 7, 12, 47..52, 45);
    against_minimax_on(1 << 20, 4, 12, 8, 39..44, 46);
    against_minimax_on(1 << 20, 10, 5, 8, 41..46, 47);
}

/// On the boards of 51 to 64 bits, middle-game positions: the fast path (one and two threads,
/// every null window on a shared table) against the generic engine, and the job's capability
/// on a table too small for the keys leaves the position to the generic engine.
#[test]
fn boards_of_51_to_64_bits_match_the_generic_engine() {
    use crate::games::Exact;
    for (i, (w, h, plies)) in [
        (9u32, 5u32, 26..30),
        (7, 7, 30..34),
        (8, 6, 30..34),
        (6, 8, 30..34),
        (8, 7, 38..42),
    ]
    .into_iter()
    .enumerate()
    {
        let g = Connect4::<u64>::new(w, h, 1).unwrap();
        for s in random_positions(&g, 6, plies.clone(), 50 + i as u64) {
            let text = g.format_position(&s);
            let t1 = Table::with_bytes(1 << 20).unwrap();
            let truth = engine::search(
                &g,
                &s,
                -INF,
                INF,
                &Config::default(),
                &t1,
                &Control::unlimited(),
            )
            .unwrap()
            .value;
            let threads = 1 + i % 2;
            let t2 = Table::with_bytes(1 << 20).unwrap();
            assert_eq!(
                fast(&g, &s, -INF, INF, &t2, threads),
                truth,
                "{w}x{h} '{text}'"
            );
            for t in [-300, -100, 0, 1, 100, 101, 300] {
                let v = fast(&g, &s, t - 1, t, &t2, threads);
                assert_fail_soft(v, t - 1, t, truth, &format!("{w}x{h} '{text}' target {t}"));
            }
            // 4 buckets: 2 bits of the key in the bucket, 49 or more left for 48 check bits.
            let small = Table::with_bytes(64).unwrap();
            assert!(!table_fits(&g, &small));
            let ctl = Control::unlimited();
            let none = g.exact_search(&s, -INF, INF, 1, &small, None, &ctl);
            assert!(
                none.is_none(),
                "{w}x{h}: a 64 B table is left to the engine"
            );
            let some = g.exact_search(&s, -INF, INF, 1, &t1, None, &ctl);
            assert_eq!(
                some.flatten().map(|o| o.value),
                Some(truth),
                "{w}x{h} '{text}'"
            );
        }
    }
}

/// A book built by the solver: every entry equals a fresh search (and minimax on a small
/// board), and searches that use the book give the same scores as searches without it.
#[test]
fn book_answers_equal_search_answers() {
    use crate::games::connect4::book::{self, Book};
    for (w, h, depth) in [(5u32, 4u32, 3u32), (4, 5, 2), (6, 4, 2)] {
        let g = Connect4::<u64>::new(w, h, 1).unwrap();
        let ctl = Control::unlimited();
        let text = book::build(&g, depth, 1, 4, &ctl, |_, _| {})
            .unwrap()
            .unwrap();
        let b = Book::parse(&g, &text).unwrap();
        assert_eq!(b.len(), book::positions(&g, depth).len());
        assert_eq!(b.depth(), depth);
        let small = w * h <= 20;
        // (Solver against minimax: `small_boards_match_minimax`.)
        for line in text.lines().skip(1) {
            let (moves, score) = line.split_once(' ').unwrap();
            let score: i32 = score.parse().unwrap();
            let s = g.parse_position(moves).unwrap();
            let table = Table::with_bytes(1 << 20).unwrap();
            let searched = solve(&g, &s, 1, &table, None, &ctl).unwrap();
            assert_eq!(score, searched, "{w}x{h} book '{moves}'");
            // The mirror image is answered from the same entry.
            let mirrored: String = moves
                .chars()
                .map(|c| char::from(b'1' + (b'0' + w as u8 - c as u8)))
                .collect();
            let m = g.parse_position(&mirrored).unwrap();
            let (key, _) = Geometry::new(&g).canonical(m.current, m.mask);
            assert_eq!(b.get(m.moves as u32, key), Some(score), "'{mirrored}'");
        }
        // Deeper positions: with and without the book (fresh tables), the same score.
        let plies = if small { depth + 1..depth + 6 } else { 12..20 };
        for s in random_positions(&g, 15, plies, 8) {
            let t1 = Table::with_bytes(1 << 20).unwrap();
            let t2 = Table::with_bytes(1 << 20).unwrap();
            let with = solve(&g, &s, 1, &t1, Some(&b), &ctl).unwrap();
            let without = solve(&g, &s, 1, &t2, None, &ctl).unwrap();
            assert_eq!(with, without, "{w}x{h} '{}'", g.format_position(&s));
        }
        // The root itself from the book, with a move that reaches its score.
        let root = g.initial_state();
        let table = Table::with_bytes(1 << 20).unwrap();
        let v = solve(&g, &root, 1, &table, Some(&b), &ctl).unwrap();
        assert_eq!(
            v,
            solve(
                &g,
                &root,
                1,
                &Table::with_bytes(1 << 22).unwrap(),
                None,
                &ctl
            )
            .unwrap()
        );
    }
}

#[test]
fn bad_books_are_refused_with_a_reason() {
    use crate::games::connect4::book::Book;
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let head = "# gamesolver connect4 book width=7 height=6 depth=2\n";
    assert!(Book::parse(&g, "hello\n")
        .unwrap_err()
        .contains("not a connect4 book"));
    assert!(
        Book::parse(&g, "# gamesolver connect4 book width=6 height=6 depth=2\n")
            .unwrap_err()
            .contains("6 x 6")
    );
    assert!(Book::parse(&g, &format!("{head}44 x\n"))
        .unwrap_err()
        .contains("line 2"));
    assert!(Book::parse(&g, &format!("{head}444 1\n"))
        .unwrap_err()
        .contains("deeper"));
    assert!(Book::parse(&g, &format!("{head}48 1\n"))
        .unwrap_err()
        .contains("column 8"));
    assert!(
        Book::parse(&g, "# gamesolver connect4 book width=7 height=6\n")
            .unwrap_err()
            .contains("depth")
    );
}

/// The claimeven bound never undercuts the exact value (first player to move, boards of even
/// height), and it does decide something on these boards.
#[test]
fn the_claimeven_bound_is_sound() {
    let ctl = Control::unlimited();
    let stop = AtomicBool::new(false);
    let mut decided = 0;
    for (w, h, plies, seed) in [
        (4u32, 4u32, 6..14, 21u64),
        (5, 4, 10..18, 22),
        (6, 4, 14..22, 23),
        (4, 6, 14..22, 24),
    ] {
        let g = Connect4::<u64>::new(w, h, 1).unwrap();
        let table = Table::with_bytes(1 << 12).unwrap();
        let (words, salt) = table.raw_words();
        let solver = Solver::new(&g, words, salt, None, &ctl, &stop);
        for s in random_positions(&g, 80, plies, seed) {
            if s.moves % 2 != 0 {
                continue;
            }
            let truth = minimax(&g, &s, None, &ctl).unwrap().value / VALUE_SCALE;
            let bound = solver.evens_bound(s.current, s.mask);
            let text = g.format_position(&s);
            assert!(
                truth <= bound,
                "{w}x{h} '{text}': value {truth}, bound {bound}"
            );
            decided += usize::from(bound < i32::MAX);
        }
    }
    assert!(decided > 20, "the bound decided only {decided} positions");
}

/// The claimeven bound where the first player's cells hold fours, each above a four of the
/// second player's: never under the exact value, on 7 x 6 and 6 x 4 positions found among many
/// random ones (the case is rare on small boards), each checked with plain minimax.
#[test]
fn the_claimeven_bound_over_beaten_fours_is_sound() {
    let ctl = Control::unlimited();
    let stop = AtomicBool::new(false);
    for (w, h, plies, seed, want) in [(7u32, 6u32, 30..37, 31u64, 25), (6, 4, 12..20, 32, 10)] {
        let g = Connect4::<u64>::new(w, h, 1).unwrap();
        let table = Table::with_bytes(1 << 12).unwrap();
        let (words, salt) = table.raw_words();
        let solver = Solver::new(&g, words, salt, None, &ctl, &stop);
        let geo = &solver.geo;
        let mut checked = 0;
        for s in random_positions(&g, 20_000, plies, seed) {
            if s.moves % 2 != 0 || checked == want {
                continue;
            }
            let theirs = geo.claimeven_cells(s.current, s.mask);
            let bound = solver.evens_bound(s.current, s.mask);
            if bound == i32::MAX || !geo.has_four(geo.board & !theirs) {
                continue;
            }
            let truth = minimax(&g, &s, None, &ctl).unwrap().value / VALUE_SCALE;
            let text = g.format_position(&s);
            assert!(
                truth <= bound,
                "{w}x{h} '{text}': value {truth}, bound {bound}"
            );
            checked += 1;
        }
        assert_eq!(
            checked, want,
            "{w}x{h}: too few positions with beaten fours"
        );
    }
}

/// Table entry layout: on tables of 4 buckets (the smallest) to 1 MB (7 x 6, 50-bit keys) and
/// of 1 MB to 3 MB (8 x 7, 64-bit keys: the smallest table it takes, and one of a bucket
/// count not a power of 2), every stored entry reads back as stored; keys never stored (many
/// share a bucket with stored ones) never match; a table written under another salt matches
/// nothing.
#[test]
fn table_entries_round_trip_and_never_match_another_key() {
    let cases = [
        (
            7,
            6,
            (1u64 << 50) - 1,
            vec![64usize, 128, 192, 1 << 12, 1 << 20],
        ),
        (8, 7, u64::MAX, vec![1 << 20, 3 << 20]),
    ];
    for (w, h, key_mask, sizes) in cases {
        round_trip_on(w, h, key_mask, &sizes);
    }
}

fn round_trip_on(w: u32, h: u32, key_mask: u64, sizes: &[usize]) {
    let g = Connect4::<u64>::new(w, h, 1).unwrap();
    let ctl = Control::unlimited();
    let stop = AtomicBool::new(false);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(77);
    for &bytes in sizes {
        let table = Table::with_bytes(bytes).unwrap();
        let (words, salt) = table.raw_words();
        let solver = Solver::new(&g, words, salt, None, &ctl, &stop);
        let other = Solver::new(&g, words, salt ^ 1 << 40, None, &ctl, &stop);
        let mut stored = std::collections::HashSet::new();
        for i in 0..5000u64 {
            // Keys of the board's bits, some in the low range where the mix leaves small values.
            let key = if i % 2 == 0 {
                rng.gen::<u64>() & key_mask
            } else {
                rng.gen_range(1..1u64 << 20)
            };
            let score = rng.gen_range(-SCORE_OFFSET..SCORE_OFFSET);
            let bound = rng.gen_range(1..=3u64);
            let mv = rng.gen_range(0..=15u32);
            let nodes = 1u64 << rng.gen_range(0..40);
            if i % 3 == 0 {
                // A key never stored: no entry may claim it.
                if !stored.contains(&key) {
                    assert!(
                        solver.probe(key).is_none(),
                        "{bytes} B: false match {key:#x}"
                    );
                }
                continue;
            }
            solver.store(key, score, bound, mv, nodes);
            stored.insert(key);
            let h = solver.probe(key).expect("the entry just stored");
            assert_eq!(
                (h.score, h.bound, h.mv),
                (score, bound, mv),
                "{bytes} B {key:#x}"
            );
            assert!(other.probe(key).is_none(), "another salt matched {key:#x}");
        }
    }
}

/// Replacement: on the smallest table the entry of the most work stays while a stream of
/// cheaper results passes through its bucket, and the latest cheap result is kept too.
#[test]
fn the_bucket_keeps_the_entry_of_most_work() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let ctl = Control::unlimited();
    let stop = AtomicBool::new(false);
    let table = Table::with_bytes(64).unwrap();
    let (words, salt) = table.raw_words();
    let solver = Solver::new(&g, words, salt, None, &ctl, &stop);
    let big = 0x1234_5678_9ABCu64;
    solver.store(big, 7, EXACT, 4, 1 << 30);
    let (bucket, _) = solver.locate(big);
    let mut same_bucket = 0;
    for key in 1..20_000u64 {
        if key == big {
            continue;
        }
        solver.store(key, -3, LOWER, 2, 1 + key % 1000);
        let h = solver.probe(big).expect("the big entry stays");
        assert_eq!((h.score, h.bound, h.mv), (7, EXACT, 4));
        assert!(solver.probe(key).is_some(), "the latest result is kept");
        same_bucket += usize::from(std::ptr::eq(solver.locate(key).0, bucket));
    }
    assert!(
        same_bucket > 1000,
        "only {same_bucket} keys shared the bucket"
    );
    // The same position again with less work replaces its entry in place.
    solver.store(big, 2, UPPER, 1, 1);
    let h = solver.probe(big).unwrap();
    assert_eq!((h.score, h.bound, h.mv), (2, UPPER, 1));
}

/// Forced collisions: every window against minimax on the smallest table (4 buckets), where
/// nearly every store replaces another position's entry.
#[test]
fn a_tiny_table_still_matches_minimax() {
    against_minimax_on(64, 4, 4, 40, 4..10, 41);
    against_minimax_on(64, 5, 4, 24, 8..12, 42);
    against_minimax_on(128, 4, 5, 24, 8..12, 43);
}

/// Threads share work through the busy table (ABDADA) and the transposition table: whatever
/// the timing, 2, 3 and 4 threads give the same answers as one thread, in every window of
/// interest (full, null windows around each score, windows that fail low and high), on 5x4
/// and 6x4 boards (whose middle-game nodes are inside the shared band) and on Pons' 7x6
/// positions.
#[test]
fn threads_give_the_one_thread_values_in_every_window() {
    let mut cases: Vec<(Connect4<u64>, C4State<u64>)> = Vec::new();
    for (w, h, seed) in [(5, 4, 11), (6, 4, 12)] {
        let g = Connect4::<u64>::new(w, h, 1).unwrap();
        for s in random_positions(&g, 12, 0..6, seed) {
            cases.push((g.clone(), s));
        }
    }
    let g7 = Connect4::<u64>::new(7, 6, 1).unwrap();
    let text = crate::games::data::read("connect4/Test_L2_R1").unwrap();
    for line in text.lines().take(12) {
        let (moves, _) = line.split_once(' ').unwrap();
        cases.push((g7.clone(), g7.parse_position(moves).unwrap()));
    }
    for (g, s) in &cases {
        let what = format!("{}x{} '{}'", g.width, g.height, g.format_position(s));
        let one = Table::with_bytes(1 << 20).unwrap();
        let truth = fast(g, s, -INF, INF, &one, 1);
        let v = truth / VALUE_SCALE;
        let mut windows = vec![(-INF, INF)];
        for d in [-2, -1, 0, 1, 2] {
            let t = (v + d) * VALUE_SCALE;
            windows.push((t - 1, t));
        }
        windows.push(((v + 1) * VALUE_SCALE, (v + 3) * VALUE_SCALE));
        windows.push(((v - 3) * VALUE_SCALE, (v - 1) * VALUE_SCALE));
        for threads in 2..=4 {
            // A fresh table and one shared by all windows (entries of earlier windows).
            let shared = Table::with_bytes(1 << 20).unwrap();
            for &(a, b) in &windows {
                let fresh = Table::with_bytes(1 << 20).unwrap();
                for t in [&fresh, &shared] {
                    let r = fast(g, s, a, b, t, threads);
                    assert_fail_soft(r, a, b, truth, &format!("{what} threads {threads}"));
                }
            }
        }
    }
}
