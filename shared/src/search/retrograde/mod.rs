//! Retrograde analysis: exact multi-valued databases of every position of a game that offers
//! [`Retrograde`], built bottom-up (database 0 first; Awari: by stone count), each by rounds of
//! a parallel sweep over index ranges that run until nothing changes.
//!
//! Entries: an `i8` from the side to move's view. During a build, `e > 0` reads "the side to move
//! can force a result `>= e`", `e < 0` "the opponent can force `<= e`", `0` "nothing proven yet";
//! after the last round it is the exact value, endless play inside the database worth 0.
//!
//! A round computes from the previous round's entries (`w = max(e, 0)`, `l = max(-e, 0)`)
//! `w' = max(0, max over moves of (exit value | l(child)))` and
//! `l' = max(0, min over moves of (-exit value | w(child)))`, and writes `w'` if positive, else
//! `-l'`: one step of the attractor iteration for every threshold at once, so entries rise
//! monotonically to the least fixed point. It is the threshold scheme of J. W. Romein and H. E. Bal
//! ("Solving Awari with Parallel Retrograde Analysis", 2003), run for all thresholds in one sweep
//! and with successors instead of predecessors, so a game needs no unmove generator. The proof:
//! docs/kernels.md, "Retrograde analysis".
//!
//! A round reads only the previous round and the lower databases and writes only its own range:
//! [`run_round`] on `[a, b)` is the unit a service hands out (any split, any order, the same
//! bytes); [`build_database`] is the in-process driver (rayon over ranges).

use crate::model::{Retrograde, Successor};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

pub mod artifacts;
pub mod line;
pub mod probe;
pub mod store;
#[cfg(test)]
mod tests;
pub mod tool;

/// Positions per task of the in-process driver: small enough to balance two threads, large
/// enough that the per-task set-up is nothing.
pub const CHUNK: u64 = 1 << 14;

/// The solved databases of a game, `dbs[d]` for `d` in `0..len()`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tables {
    dbs: Vec<Vec<i8>>,
}

impl Tables {
    /// No databases.
    pub fn new() -> Self {
        Tables::default()
    }
    /// Appends the next database (`db == len()`).
    pub fn push(&mut self, entries: Vec<i8>) {
        self.dbs.push(entries);
    }
    /// Number of solved databases (0..len).
    pub fn len(&self) -> usize {
        self.dbs.len()
    }
    /// No databases solved.
    pub fn is_empty(&self) -> bool {
        self.dbs.is_empty()
    }
    /// The entries of database `db`.
    pub fn db(&self, db: usize) -> &[i8] {
        &self.dbs[db]
    }
    /// The exact value of entry `index` of database `db`, if that database is solved.
    #[inline]
    pub fn value(&self, db: usize, index: u64) -> Option<i32> {
        self.dbs.get(db).map(|d| d[index as usize] as i32)
    }
}

/// Statistics of one database build.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildStats {
    /// Positions in the database.
    pub positions: u64,
    /// Rounds run, the last one changing nothing.
    pub rounds: u32,
    /// Entries changed in each round.
    pub changed: Vec<u64>,
}

/// Value of a move from the mover's point of view when it leaves the database (or `None` when
/// it stays in).
#[inline]
fn exit_value(below: &Tables, to: &Successor) -> Option<i32> {
    match *to {
        Successor::Inside(_) => None,
        Successor::Below { db, index, gain } => Some(
            gain - below
                .value(db, index)
                .expect("a lower database is solved before the ones above it"),
        ),
    }
}

/// The entry of position `index` after one round: its value from its successors' entries in
/// `prev` and the lower databases (the round of the module doc).
#[inline]
fn evaluate<G: Retrograde>(
    game: &G,
    db: usize,
    index: u64,
    below: &Tables,
    prev: &[i8],
    succ: &mut Vec<(G::Move, Successor)>,
) -> i8 {
    let board = game.unrank(db, index);
    game.successors(db, &board, succ);
    let e = if succ.is_empty() {
        game.end_value(db, &board)
    } else {
        let mut win = 0i32;
        let mut lose = i32::MAX;
        for (_, to) in succ.iter() {
            let (w, l) = match exit_value(below, to) {
                Some(v) => (v, -v),
                None => {
                    let Successor::Inside(c) = *to else {
                        unreachable!()
                    };
                    let child = prev[c as usize] as i32;
                    // The child's proven loss is the mover's win, and the reverse.
                    ((-child).max(0), child.max(0))
                }
            };
            win = win.max(w);
            lose = lose.min(l);
        }
        if win > 0 {
            win
        } else {
            -lose.max(0)
        }
    };
    debug_assert!(e.abs() <= game.value_limit(db));
    e as i8
}

/// One round on the index range `range` of database `db`: reads `prev` (the whole database as
/// the previous round left it; all zeros before the first round) and the lower databases in
/// `below`, and writes the new entries of `range` to `out` (`out.len() == range` length).
/// Returns how many entries differ from `prev`. Every entry is re-evaluated; see
/// [`run_round_since`] for the same round at the cost of the entries that can change.
pub fn run_round<G: Retrograde>(
    game: &G,
    db: usize,
    range: Range<u64>,
    below: &Tables,
    prev: &[i8],
    out: &mut [i8],
) -> u64 {
    assert_eq!(out.len() as u64, range.end - range.start);
    assert_eq!(prev.len() as u64, game.db_len(db));
    assert!(below.len() >= db, "databases below {db} are not all solved");
    let mut succ = Vec::new();
    let mut changed = 0;
    for (slot, index) in out.iter_mut().zip(range) {
        let e = evaluate(game, db, index, below, prev, &mut succ);
        if e != prev[index as usize] {
            changed += 1;
        }
        *slot = e;
    }
    changed
}

/// The indices where `a` and `b` differ (equal lengths), in order, to `f`.
fn for_each_difference(a: &[i8], b: &[i8], mut f: impl FnMut(u64)) {
    const BLOCK: usize = 256;
    for (k, (x, y)) in a.chunks(BLOCK).zip(b.chunks(BLOCK)).enumerate() {
        // Whole blocks compare as slices (a memcmp); only differing ones are walked.
        if x != y {
            for (j, (u, v)) in x.iter().zip(y).enumerate() {
                if u != v {
                    f((k * BLOCK + j) as u64);
                }
            }
        }
    }
}

/// Unmoves generated per changed entry cost about as much as evaluating an entry: when more than
/// a quarter of a range's length changed, [`run_round_since`] re-evaluates the whole range.
const SWEEP_RATIO: u64 = 4;

/// The round of [`run_round`] (the same bytes in `out`, the same return value), given also
/// `before`: the whole database as the round before `prev` left it (`prev` is the round that
/// followed `before`), or `None` when `prev` is the all-zero start. An entry's round value is a
/// function of its successors' entries, so it can differ from `prev` only when a successor
/// inside the database changed from `before` to `prev`: only those entries of `range` (the
/// predecessors of the changed ones, [`Retrograde::predecessors`]) are re-evaluated, and every
/// other one is copied from `prev`. When too much changed for that to pay (early rounds) the
/// range is swept whole, which gives the same bytes.
pub fn run_round_since<G: Retrograde>(
    game: &G,
    db: usize,
    range: Range<u64>,
    below: &Tables,
    prev: &[i8],
    before: Option<&[i8]>,
    out: &mut [i8],
) -> u64 {
    let Some(before) = before else {
        return run_round(game, db, range, below, prev, out);
    };
    assert_eq!(out.len() as u64, range.end - range.start);
    assert_eq!(prev.len() as u64, game.db_len(db));
    assert_eq!(before.len(), prev.len(), "before and prev are one database");
    assert!(below.len() >= db, "databases below {db} are not all solved");
    let mut changed = Vec::new();
    let limit = (range.end - range.start) / SWEEP_RATIO;
    let mut too_many = false;
    for_each_difference(before, prev, |i| {
        if changed.len() as u64 <= limit {
            changed.push(i);
        } else {
            too_many = true;
        }
    });
    if too_many {
        return run_round(game, db, range, below, prev, out);
    }
    out.copy_from_slice(&prev[range.start as usize..range.end as usize]);
    let mut candidates = Bits::new(range.end - range.start);
    let mut preds = Vec::new();
    for &c in &changed {
        game.predecessors(db, &game.unrank(db, c), &mut preds);
        for &q in &preds {
            if range.contains(&q) {
                candidates.set(q - range.start);
            }
        }
    }
    let mut succ = Vec::new();
    let mut count = 0;
    candidates.for_each(|k| {
        let index = range.start + k;
        let e = evaluate(game, db, index, below, prev, &mut succ);
        if e != prev[index as usize] {
            count += 1;
        }
        out[k as usize] = e;
    });
    count
}

/// A plain bit set over `0..len`.
struct Bits {
    words: Vec<u64>,
}

impl Bits {
    fn new(len: u64) -> Self {
        Bits {
            words: vec![0; len.div_ceil(64) as usize],
        }
    }
    #[inline]
    fn set(&mut self, i: u64) {
        self.words[(i / 64) as usize] |= 1 << (i % 64);
    }
    fn for_each(&self, mut f: impl FnMut(u64)) {
        for_each_bit(&self.words, 0, &mut f);
    }
}

/// Calls `f` with `base + 64 * k + j` for every set bit `j` of every `words[k]`, in order.
#[inline]
fn for_each_bit(words: &[u64], base: u64, f: &mut impl FnMut(u64)) {
    for (k, &w) in words.iter().enumerate() {
        let mut w = w;
        while w != 0 {
            let j = w.trailing_zeros() as u64;
            w &= w - 1;
            f(base + 64 * k as u64 + j);
        }
    }
}

/// Builds database `db` in-process over rayon's pool, given every lower database, running
/// rounds until one changes nothing. `progress` is called after each round with its number
/// (from 1) and the entries it changed.
///
/// The rounds are those of [`run_round`] (the same entries after every round, the same counts)
/// but each evaluates only its candidates, as [`run_round_since`] does, without repeating work
/// across ranges: the entries a round changed are kept as a bit set; their predecessors are
/// marked in a candidate bit set (in parallel, atomically); the next round evaluates those
/// alone. Since the two round arrays differ exactly at the entries the last round changed, the
/// array about to be written is brought up to date by copying just those. Work per round is
/// proportional to what changed, not to the database, and memory is the two arrays plus three
/// bits per entry.
pub fn build_database<G: Retrograde>(
    game: &G,
    db: usize,
    below: &Tables,
    mut progress: impl FnMut(u32, u64),
) -> (Vec<i8>, BuildStats) {
    assert_values_fit(game, db);
    assert!(below.len() >= db, "databases below {db} are not all solved");
    let len = game.db_len(db);
    let words = len.div_ceil(64) as usize;
    let chunk_words = (CHUNK / 64) as usize;
    let (mut prev, mut next, mut stats) = round_arrays(len);
    // The entries the last round changed, and those the round before changed (reused).
    let mut changed: Vec<u64> = vec![0; words];
    let mut older: Vec<u64> = vec![0; words];
    let candidates: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(!0)).collect();
    loop {
        // Candidates of this round are marked (all of them in round 1); `changed` holds what
        // the last round changed: exactly where `next` (the round before it) differs from
        // `prev`. `older` is free and takes this round's changes.
        let count: u64 = next
            .par_chunks_mut(CHUNK as usize)
            .zip(older.par_chunks_mut(chunk_words))
            .zip(candidates.par_chunks(chunk_words))
            .zip(changed.par_chunks(chunk_words))
            .enumerate()
            .map(|(c, (((out, mine), cand), last))| {
                let start = c as u64 * CHUNK;
                let local = |i: u64| (i - start) as usize;
                for_each_bit(last, start, &mut |i| out[local(i)] = prev[i as usize]);
                let mut succ = Vec::new();
                let mut count = 0;
                mine.fill(0);
                for (k, word) in cand.iter().enumerate() {
                    let w = word.swap(0, Ordering::Relaxed);
                    for_each_bit(&[w], start + 64 * k as u64, &mut |i| {
                        if i >= len {
                            return;
                        }
                        let e = evaluate(game, db, i, below, &prev, &mut succ);
                        out[local(i)] = e;
                        if e != prev[i as usize] {
                            mine[k] |= 1 << (i % 64);
                            count += 1;
                        }
                    });
                }
                count
            })
            .sum();
        // `older` now holds this round's changes: it becomes `changed`.
        std::mem::swap(&mut older, &mut changed);
        if end_round(&mut stats, &mut progress, count, &mut prev, &mut next) {
            return (prev, stats);
        }
        // Mark the predecessors of what changed as the next round's candidates.
        changed
            .par_chunks(chunk_words)
            .enumerate()
            .for_each(|(c, words)| {
                let mut preds = Vec::new();
                for_each_bit(words, c as u64 * CHUNK, &mut |i| {
                    game.predecessors(db, &game.unrank(db, i), &mut preds);
                    for &q in &preds {
                        candidates[(q / 64) as usize].fetch_or(1 << (q % 64), Ordering::Relaxed);
                    }
                });
            });
    }
}

/// The plain driver: every round re-evaluates every entry ([`run_round`] over rayon). The
/// same result, rounds and counts as [`build_database`], at rounds x size evaluations: kept as
/// the reference that the tests and the benchmark compare the fast driver with.
pub fn build_database_sweep<G: Retrograde>(
    game: &G,
    db: usize,
    below: &Tables,
    mut progress: impl FnMut(u32, u64),
) -> (Vec<i8>, BuildStats) {
    assert_values_fit(game, db);
    let len = game.db_len(db);
    let (mut prev, mut next, mut stats) = round_arrays(len);
    loop {
        let changed: u64 = next
            .par_chunks_mut(CHUNK as usize)
            .enumerate()
            .map(|(i, out)| {
                let start = i as u64 * CHUNK;
                run_round(game, db, start..start + out.len() as u64, below, &prev, out)
            })
            .sum();
        if end_round(&mut stats, &mut progress, changed, &mut prev, &mut next) {
            return (prev, stats);
        }
    }
}

/// Panics unless the values of database `db` fit the byte a build stores per entry.
fn assert_values_fit<G: Retrograde>(game: &G, db: usize) {
    assert!(
        game.value_limit(db) <= i8::MAX as i32,
        "values of database {db} do not fit a byte"
    );
}

/// What a build of a database of `len` entries starts with: the array its rounds read and
/// the one they write (both zero), and its statistics.
fn round_arrays(len: u64) -> (Vec<i8>, Vec<i8>, BuildStats) {
    let stats = BuildStats {
        positions: len,
        ..BuildStats::default()
    };
    (vec![0i8; len as usize], vec![0i8; len as usize], stats)
}

/// Ends a build's round that changed `count` entries: counts and reports it, and makes what it
/// wrote (`next`) the array the next round reads (`prev`). Whether the build is done (nothing
/// changed).
fn end_round(
    stats: &mut BuildStats,
    progress: &mut impl FnMut(u32, u64),
    count: u64,
    prev: &mut Vec<i8>,
    next: &mut Vec<i8>,
) -> bool {
    stats.rounds += 1;
    stats.changed.push(count);
    progress(stats.rounds, count);
    std::mem::swap(prev, next);
    count == 0
}

/// Runs `f` on a rayon pool of `threads` threads (the builds and checks above use the pool they
/// are called on): for callers that size the work themselves.
pub fn with_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> Result<T, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| format!("thread pool: {e}"))?;
    Ok(pool.install(f))
}

/// Builds databases `0..=top` in order (or continues `tables` from its `len()`), returning the
/// statistics of each database built.
pub fn build_up_to<G: Retrograde>(game: &G, tables: &mut Tables, top: usize) -> Vec<BuildStats> {
    let mut all = Vec::new();
    while tables.len() <= top {
        let db = tables.len();
        let (entries, stats) = build_database(game, db, tables, |_, _| {});
        tables.push(entries);
        all.push(stats);
    }
    all
}

/// The value of `board` from its successors' entries, and its moves that reach it: the
/// database lookup API. Needs the databases of `board` and below.
pub fn best_moves<G: Retrograde>(
    game: &G,
    tables: &Tables,
    board: &G::Board,
) -> Option<BestMoves<G::Move>> {
    best_moves_by(game, tables.len(), board, |db, index| {
        Ok::<_, std::convert::Infallible>(tables.db(db)[index as usize] as i32)
    })
    .unwrap_or_else(|e| match e {})
}

/// A board's value and the moves that keep it ([`best_moves`]).
pub type BestMoves<M> = (i32, Vec<M>);

/// [`best_moves`] reading entries through `entry(db, index)` (the value of entry `index` of
/// database `db`, for `db < covered`): a lookup that reads single entries from files instead of
/// holding whole databases. `Ok(None)` when `board` is not covered.
pub fn best_moves_by<G: Retrograde, E>(
    game: &G,
    covered: usize,
    board: &G::Board,
    mut entry: impl FnMut(usize, u64) -> Result<i32, E>,
) -> Result<Option<BestMoves<G::Move>>, E> {
    let (db, _) = game.rank(board);
    if covered <= db {
        return Ok(None);
    }
    let mut succ = Vec::new();
    game.successors(db, board, &mut succ);
    if succ.is_empty() {
        return Ok(Some((game.end_value(db, board), Vec::new())));
    }
    let mut values: Vec<(G::Move, i32)> = Vec::with_capacity(succ.len());
    for (mv, to) in &succ {
        let v = match *to {
            Successor::Inside(c) => -entry(db, c)?,
            Successor::Below { db, index, gain } => gain - entry(db, index)?,
        };
        values.push((*mv, v));
    }
    let Some(best) = values.iter().map(|&(_, v)| v).max() else {
        return Ok(None);
    };
    let moves = values
        .into_iter()
        .filter(|&(_, v)| v == best)
        .map(|(m, _)| m)
        .collect();
    Ok(Some((best, moves)))
}

/// Romein and Bal's check of database `db`: recomputes every entry from its successors'
/// entries (the best move's value, or the terminal value) and returns the indices that
/// disagree. A correct database has none; a consistent one is not proven correct by it (values
/// on a cycle could agree with each other and still be wrong), which is why the tests also
/// compare with a forward search.
pub fn verify_database<G: Retrograde>(game: &G, tables: &Tables, db: usize) -> Vec<u64> {
    let len = game.db_len(db);
    assert_eq!(
        tables.db(db).len() as u64,
        len,
        "database {db} has the wrong size"
    );
    (0..len.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|chunk| {
            let range = chunk * CHUNK..((chunk + 1) * CHUNK).min(len);
            range.filter(|&i| {
                let board = game.unrank(db, i);
                let (v, _) = best_moves(game, tables, &board).expect("database is built");
                v != tables.db(db)[i as usize] as i32
            })
        })
        .collect()
}
