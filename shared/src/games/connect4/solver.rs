//! The Connect Four fast path: an exact alpha-beta solver for boards whose bitboard fits a `u64`
//! ([`MAX_FAST_BITS`]), with the contract of [`engine::search`]'s exact mode (fail-soft value for a
//! window, side to move's view, internal scale; move, principal variation, nodes) on the same
//! [`engine::Table`] memory, so a job's null-window probes share what they learnt. It removes what
//! the generic engine costs per node here: move lists, the four-slot bucket scan, scaled values.
//!
//! Search: negamax, fail-soft, on unscaled scores; a non-losing move filter, bounds without search,
//! claimeven bounds (`Solver::evens_bound`, after Allis), enhanced transposition cutoffs, a
//! threat-based move order, a two-word bucket (most work / always replace) keyed by the smaller of
//! a position's and its mirror's key. docs/kernels.md, "Connect Four fast path", gives each rule.
//!
//! ## Table entry (one `AtomicU64`, so no read can ever be torn between threads)
//! ```text
//! | move+1:4 | bound:2 | score+32:6 | work:4 | (quotient ^ salt) & (2^48 - 1) : 48 |
//! ```
//! Bucket and quotient together are the whole key ([`table_fits`], `TableLayout`), so two live
//! positions never share an entry; `bound` 0 is empty, 1 Lower, 2 Upper, 3 Exact.
//!
//! Threads share one table and move order and hand children out by ABDADA (Weill 1996); `busy`
//! only orders children, so every answer stays exact. Helpers live in a process-wide pool (`search::pool`).

use super::book::Book;
use super::{C4State, Connect4, VALUE_SCALE};
use crate::model::Game;
use crate::search::engine::{self, Outcome, Table};
use crate::search::node::NodeCount;
use crate::search::{pool, Control};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub(crate) mod busy;

/// The threads' stop flag on a cache line of its own: every node reads it, and nothing else
/// written during the search may share its line.
#[repr(align(128))]
struct StopFlag(AtomicBool);

/// Largest bitboard (`width * (height + 1)`) the fast path takes: a `u64`.
pub const MAX_FAST_BITS: u32 = 64;
/// Widest board the fast path takes (the move field has 4 bits).
const MAX_FAST_WIDTH: u32 = 15;
/// Keys of boards of at most this many bits are hashed as `MIN_HASH_BITS`-bit keys, larger
/// boards' keys with all their bits (see "Table entry").
const MIN_HASH_BITS: u32 = 50;
/// Bits of the entry's check (the quotient and the salt's tag).
const CHECK_BITS: u32 = 48;
/// Odd, so `key * MIX mod 2^k` is a bijection of the keys.
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;
/// Entry fields (see the module doc): the check below `WORK_SHIFT`.
const CHECK_MASK: u64 = (1 << CHECK_BITS) - 1;
const WORK_SHIFT: u32 = 48;
const SCORE_SHIFT: u32 = 52;
const BOUND_SHIFT: u32 = 58;
const MOVE_SHIFT: u32 = 60;
const SCORE_OFFSET: i32 = 32;
const POLL_INTERVAL: u64 = 4096;
/// With threads, nodes with more than `SHARE_MIN_EMPTY` empty cells (of `BAND_OF_CELLS`,
/// scaled to the board) share their children out (ABDADA, see the module doc): 18 of 7 x 6's
/// 42: sharing from the root down searches fewer nodes with two threads than a middle band, and
/// 18 did best of 12 to 20 on the empty board and Pons' L1 sets.
const SHARE_MIN_EMPTY: i32 = 18;
/// The board size (7 x 6) the empty-cell bands here were measured on.
const BAND_OF_CELLS: i32 = 42;
/// Enhanced transposition cutoffs are tried at nodes with at least `ETC_MIN_EMPTY` empty cells
/// of `BAND_OF_CELLS` (scaled to the board): 16 of 7 x 6's 42, ChristopheSteininger/c4's band
/// (plies below 27): fewer nodes at the same CPU time than half the board; a lower band cuts
/// more nodes but costs more CPU time per position than it saves.
const ETC_MIN_EMPTY: i32 = 16;
/// At nodes with at least `ETC_FIRST_MIN_EMPTY` empty cells (of `BAND_OF_CELLS`, scaled) the
/// enhanced transposition cutoff is tried before the first child, below that (down to
/// `ETC_MIN_EMPTY`) only once the first child has failed to cut: the probes of every child's
/// slot cost a wait on memory that most nodes deep in the tree do not need (their first child
/// cuts), while near the root a cut saves the first child's big subtree. 22 of 42 did best on
/// Pons' sets.
const ETC_FIRST_MIN_EMPTY: i32 = 22;
/// The move order weighs the threats to block at once above the threats right above a
/// playable cell at nodes whose window asks for a score of at least `QUICK_SCORE` (a win or a
/// loss, out of a `BAND_OF_CELLS` board, scaled like the bands), and the other way round
/// elsewhere (see `Solver::node`). 5 on 7 x 6: a win by the 34th stone.
const QUICK_SCORE: i32 = 5;
const LOWER: u64 = 1;
const UPPER: u64 = 2;
const EXACT: u64 = 3;
/// `empty` cells of [`BAND_OF_CELLS`], scaled to a board of `cells` cells.
fn scaled_band(cells: i32, empty: i32) -> i32 {
    cells * empty / BAND_OF_CELLS
}

/// Whether the fast path applies to `game` (with a table on which [`table_fits`]).
pub fn applies(game: &Connect4<u64>) -> bool {
    game.width * (game.height + 1) <= MAX_FAST_BITS
        && game.width <= MAX_FAST_WIDTH
        // Scores must fit the 6-bit field: |score| <= cells / 2 + 1 < 32.
        && game.width * game.height <= 60
}

/// The bits of the keys of `game` hashed into the table (see "Table entry").
fn hash_bits(game: &Connect4<u64>) -> u32 {
    (game.width * (game.height + 1)).max(MIN_HASH_BITS)
}

/// Whether `table` has buckets enough that an entry's check holds the rest of every key of
/// `game`, so no two positions can share an entry (see "Table entry"): always on boards of at
/// most 50 bits, from 1 MB on for 64-bit boards.
pub fn table_fits(game: &Connect4<u64>, table: &Table) -> bool {
    let buckets = (table.raw_words().0.len() / 2) as u64;
    buckets >= 4 && hash_bits(game) - buckets.ilog2() <= CHECK_BITS
}

/// Exact fail-soft search of `root` with the window `(alpha, beta)` on the game's internal
/// scale (see [`engine::search`]); `None` only when stopped. `threads` > 1 share the table
/// (ABDADA, see "Threads"). A `book` for the board answers positions of at most its depth.
#[allow(clippy::too_many_arguments)]
pub fn search(
    game: &Connect4<u64>,
    root: &C4State<u64>,
    alpha: i32,
    beta: i32,
    threads: usize,
    table: &Table,
    book: Option<&Book>,
    ctl: &Control,
) -> Option<Outcome<u8>> {
    assert!(alpha < beta, "the solver needs alpha < beta");
    assert!(applies(game), "the fast path does not apply to this board");
    assert!(
        table_fits(game, table),
        "the table is too small for this board"
    );
    if game.is_terminal(root) {
        return Some(Outcome::terminal(game, root));
    }
    // Unscaled window with the same answers: v <= alpha iff v/S <= floor(alpha/S), v >= beta
    // iff v/S >= ceil(beta/S) for every exact value v (a multiple of S).
    let a = alpha.max(-engine::INF).div_euclid(VALUE_SCALE);
    let b = (beta.min(engine::INF) as i64 + VALUE_SCALE as i64 - 1).div_euclid(VALUE_SCALE as i64)
        as i32;
    let (words, salt) = table.raw_words();
    let stop = StopFlag(AtomicBool::new(false));
    // Nodes with fewer stones than this share their children out (ABDADA). A root with at
    // least as many has no such node: more threads would only walk the same tree in step, so
    // one thread searches it (Pons' L3_R1 with two threads took 19 us a position against
    // 5.5 us with one).
    let cells = (game.width * game.height) as i32;
    let share_below = cells - scaled_band(cells, SHARE_MIN_EMPTY);
    let threads = if root.moves as i32 >= share_below {
        1
    } else {
        threads.max(1) as u64
    };
    let busy_slots = if threads > 1 {
        busy::table()
    } else {
        Vec::new()
    };
    let run = |_helper: u64| {
        let mut s = Solver::new(game, words, salt, book, ctl, &stop.0);
        if threads > 1 && threads <= busy::MAX_THREADS {
            s.busy = &busy_slots;
            s.share_below = share_below;
        }
        let r = s.root(root, a, b);
        s.count.flush(ctl);
        (r, s.count.nodes)
    };
    // Helpers report here; the first thread with an answer stops the others.
    let helper_results = std::sync::Mutex::new((None, 0u64));
    let helper_task = |i: u64| {
        let (r, n) = run(i);
        if r.is_some() {
            stop.0.store(true, Ordering::Relaxed);
        }
        let mut h = helper_results.lock().unwrap_or_else(|e| e.into_inner());
        h.1 += n;
        if h.0.is_none() {
            h.0 = r;
        }
    };
    let (found, nodes) = pool::run(threads - 1, &helper_task, || {
        let r = run(0);
        stop.0.store(true, Ordering::Relaxed);
        r
    });
    let (helper_found, helper_nodes) = helper_results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    let (found, nodes) = (found.or(helper_found), nodes + helper_nodes);
    let (score, best) = found?;
    let pv = principal_variation(game, root, words, salt, best);
    Some(Outcome {
        value: score * VALUE_SCALE,
        best_move: best,
        pv,
        nodes,
        depth: 0,
        stopped: None,
    })
}

/// The exact score (unscaled) of `root` by null-window bisection (Pons' order: from the middle
/// of the open interval, moved out to half of the bound on the same side of 0), all windows on
/// one table. `None` when stopped.
pub fn solve(
    game: &Connect4<u64>,
    root: &C4State<u64>,
    threads: usize,
    table: &Table,
    book: Option<&Book>,
    ctl: &Control,
) -> Option<i32> {
    let (mut lo, mut hi) = crate::model::ZeroSum::value_bounds(game, root);
    lo /= VALUE_SCALE;
    hi /= VALUE_SCALE;
    while lo < hi {
        let mut med = lo + (hi - lo) / 2;
        if med <= 0 && lo / 2 < med {
            med = lo / 2;
        } else if med >= 0 && hi / 2 > med {
            med = hi / 2;
        }
        let t = (med + 1).clamp(lo + 1, hi) * VALUE_SCALE;
        let v = search(game, root, t - 1, t, threads, table, book, ctl)?.value / VALUE_SCALE;
        if v * VALUE_SCALE >= t {
            lo = v;
        } else {
            hi = v;
        }
    }
    Some(lo)
}

/// The geometry of the board, copied into plain words.
#[derive(Clone, Copy)]
pub(super) struct Geometry {
    width: u32,
    h: u32,
    h1: u32,
    cells: i32,
    bottom: u64,
    board: u64,
    /// The cells of column 0 (shift by `c * h1` for column `c`).
    column0: u64,
    /// Column 0 with its sentinel row (a key's column).
    key_column0: u64,
    /// Per column, the left rotation that moves its cells to the mirror column.
    mirror_rot: [u32; MAX_FAST_WIDTH as usize],
    /// The board's height is even (claimeven applies, see `Solver::evens_bound`).
    claimeven: bool,
    /// The cells of rows 2, 4, .. (bits 1, 3, .. of each column).
    even_cells: u64,
}

impl Geometry {
    pub(super) fn new(g: &Connect4<u64>) -> Self {
        Geometry {
            width: g.width,
            h: g.height,
            h1: g.height + 1,
            cells: (g.width * g.height) as i32,
            bottom: g.bottom,
            board: g.board,
            column0: g.column[0],
            key_column0: (1u64 << (g.height + 1)) - 1,
            mirror_rot: std::array::from_fn(|c| {
                let shift = (g.width as i64 - 1 - 2 * c as i64) * (g.height as i64 + 1);
                shift.rem_euclid(64) as u32
            }),
            claimeven: g.height.is_multiple_of(2),
            even_cells: (0..g.height)
                .filter(|r| r % 2 == 1)
                .fold(0, |m, r| m | g.bottom << r),
        }
    }

    /// Whether `b` (cells of the board, no sentinel bits) holds four in a row.
    #[inline(always)]
    fn has_four(&self, b: u64) -> bool {
        [1, self.h1, self.h, self.h1 + 1]
            .into_iter()
            .any(|shift| Geometry::four_starts(b, shift) != 0)
    }

    /// The second player's cells under claimeven with the first player to move (see
    /// `Solver::evens_bound`): its stones and every empty even-row cell not playable now.
    #[inline(always)]
    fn claimeven_cells(&self, cur: u64, mask: u64) -> u64 {
        (cur ^ mask) | (self.even_cells & !mask & !self.possible(mask))
    }

    /// The lowest-numbered cell of every four in a row of `b` along `shift` (1 up, `h1`
    /// right, `h1 + 1` up-right, `h` down-right): its leftmost cell, or its lowest one up a
    /// column.
    #[inline(always)]
    fn four_starts(b: u64, shift: u32) -> u64 {
        let m = b & (b >> shift);
        m & (m >> (2 * shift))
    }

    /// The cells of `x` moved `k` rows up their columns (those moved off the top are lost).
    #[inline(always)]
    fn up(&self, mut x: u64, k: u32) -> u64 {
        for _ in 0..k {
            x = (x << 1) & self.board;
        }
        x
    }

    /// The cells strictly above some cell of `x` in the same column.
    #[inline(always)]
    fn above(&self, x: u64) -> u64 {
        let mut y = (x << 1) & self.board;
        for _ in 2..self.h {
            y |= (y << 1) & self.board;
        }
        y
    }

    /// Empty cells that would complete four for the owner of `pos`.
    #[inline(always)]
    fn winning_cells(&self, pos: u64, mask: u64) -> u64 {
        let mut r = (pos << 1) & (pos << 2) & (pos << 3);
        for shift in [self.h1, self.h, self.h1 + 1] {
            let p = (pos << shift) & (pos << (2 * shift));
            r |= p & (pos << (3 * shift));
            r |= p & (pos >> shift);
            let p = (pos >> shift) & (pos >> (2 * shift));
            r |= p & (pos << shift);
            r |= p & (pos >> (3 * shift));
        }
        r & (self.board ^ mask)
    }

    #[inline(always)]
    fn possible(&self, mask: u64) -> u64 {
        mask.wrapping_add(self.bottom) & self.board
    }

    /// The mirror image of a column-wise word (column c goes to column width-1-c).
    #[inline(always)]
    fn mirror(&self, w: u64) -> u64 {
        let mut out = 0;
        let last = (self.width - 1) * self.h1;
        for c in 0..self.width {
            let col = (w >> (c * self.h1)) & self.key_column0;
            out |= col << (last - c * self.h1);
        }
        out
    }

    /// The key of a position (unique, see the module doc of [`super`]), the smaller of its own
    /// and its mirror image's, and whether it is the mirror image's.
    #[inline(always)]
    pub(super) fn canonical(&self, cur: u64, mask: u64) -> (u64, bool) {
        let key = cur + mask + self.bottom;
        let m = self.mirror(key);
        if m < key {
            (m, true)
        } else {
            (key, false)
        }
    }

    #[inline(always)]
    fn column_of(&self, cell: u64) -> u32 {
        cell.trailing_zeros() / self.h1
    }
}

/// How the solver cuts the table's words into buckets and keys into (bucket, quotient).
///
/// The key is below `2^k`, `k` = the board's bits `width * (height + 1)` but at least
/// [`MIN_HASH_BITS`] (every board of at most 50 bits uses the same `k`). It is mixed by a
/// bijection, `h = key * MIX mod 2^k` (`MIX` odd); the bucket is `floor(h * B / 2^k)` for `B`
/// buckets and the entry stores the quotient `h mod 2^q`, `q = k - floor(log2 B)`, which must fit
/// the 48 check bits: always for `k = 50` (a [`Table`] has at least 4 buckets), and for a 64-bit
/// board from `2^16` buckets (1 MB) on; a smaller table leaves the board to the generic engine
/// ([`table_fits`]). Two keys with one bucket have `h` in one interval of length `2^k / B <=
/// 2^q`, so their quotients differ. The check bits above the quotient hold only the salt (the
/// tag): entries of another use of the memory (another salt or game layout) pass the check only
/// if 48 bits match by chance (2^-48 per probe), and are replaced as garbage.
#[derive(Clone, Copy)]
struct TableLayout {
    /// Buckets of two words.
    buckets: u64,
    /// Keys are hashed as keys of `hash_bits` bits (see "Table entry")...
    hash_bits: u32,
    /// ...the low `hash_bits` bits of `key * MIX`.
    hash_mask: u64,
    /// The quotient: the low `hash_bits - floor(log2 buckets)` bits of the mixed key (at most
    /// 48, [`table_fits`]).
    quotient_mask: u64,
    /// The check bits above the quotient: the salt's own bits in every live entry.
    tag_mask: u64,
}

impl TableLayout {
    fn new(words: usize, hash_bits: u32) -> Self {
        let buckets = (words / 2) as u64;
        assert!(buckets >= 4, "a table of at least 8 words");
        let quotient_bits = hash_bits - buckets.ilog2();
        assert!(
            quotient_bits <= CHECK_BITS,
            "a table too small for the board"
        );
        let quotient_mask = (1u64 << quotient_bits) - 1;
        TableLayout {
            buckets,
            hash_bits,
            hash_mask: u64::MAX >> (64 - hash_bits),
            quotient_mask,
            tag_mask: CHECK_MASK & !quotient_mask,
        }
    }
}

/// The work class of a search of `nodes` nodes: `floor(log2 nodes)`, at most 15.
#[inline(always)]
fn work_of(nodes: u64) -> u64 {
    (nodes | 1).ilog2().min(15) as u64
}

#[inline(always)]
fn unpack(w: u64) -> Hit {
    Hit {
        score: ((w >> SCORE_SHIFT) & 63) as i32 - SCORE_OFFSET,
        bound: (w >> BOUND_SHIFT) & 3,
        mv: ((w >> MOVE_SHIFT) & 15) as u32,
    }
}

struct Solver<'a> {
    geo: Geometry,
    words: &'a [AtomicU64],
    table: TableLayout,
    salt: u64,
    book: Option<&'a Book>,
    /// Stones up to which the book is asked (0 without a book: no position is asked).
    book_depth: i32,
    ctl: &'a Control,
    stop: &'a AtomicBool,
    /// Columns from the centre outwards.
    centre_first: [u8; MAX_FAST_WIDTH as usize],
    /// The threads' busy table (empty with one thread), see `busy`.
    busy: &'a [AtomicU64],
    /// Nodes with fewer than `share_below` stones share their children out (ABDADA);
    /// `i32::MIN` with one thread.
    share_below: i32,
    /// Nodes with at least this many empty cells try enhanced transposition cutoffs (once
    /// their first child failed to cut)...
    etc_min_empty: i32,
    /// ...and with at least this many, before any child.
    etc_first_min_empty: i32,
    /// Windows asking for at least this score (win or loss) order quick threats first.
    quick_score: i32,
    count: NodeCount,
    stopped: bool,
}

/// Unpacked table entry.
#[derive(Clone, Copy)]
struct Hit {
    score: i32,
    bound: u64,
    /// Column + 1 in the stored (canonical) orientation; 0 = none.
    mv: u32,
}

impl<'a> Solver<'a> {
    fn new(
        game: &Connect4<u64>,
        words: &'a [AtomicU64],
        salt: u64,
        book: Option<&'a Book>,
        ctl: &'a Control,
        stop: &'a AtomicBool,
    ) -> Self {
        let cells = (game.width * game.height) as i32;
        let mut centre_first = [0u8; MAX_FAST_WIDTH as usize];
        for (i, &c) in game.centre_first.iter().enumerate() {
            centre_first[i] = c;
        }
        Solver {
            geo: Geometry::new(game),
            words,
            table: TableLayout::new(words.len(), hash_bits(game)),
            salt,
            book,
            book_depth: book.map_or(-1, |b| b.depth() as i32),
            ctl,
            stop,
            centre_first,
            busy: &[],
            share_below: i32::MIN,
            etc_min_empty: scaled_band(cells, ETC_MIN_EMPTY),
            etc_first_min_empty: scaled_band(cells, ETC_FIRST_MIN_EMPTY),
            quick_score: scaled_band(cells, QUICK_SCORE),
            count: NodeCount::default(),
            stopped: false,
        }
    }

    #[cold]
    fn poll(&mut self) {
        self.count.flush(self.ctl);
        if self.stop.load(Ordering::Relaxed) || self.ctl.should_stop().is_some() {
            self.stopped = true;
        }
    }

    /// The bucket of `key` and the part of the key its entry stores (see "Table entry").
    #[inline(always)]
    fn locate(&self, key: u64) -> (&[AtomicU64; 2], u64) {
        let t = &self.table;
        let h = key.wrapping_mul(MIX) & t.hash_mask;
        let i = (((h << (64 - t.hash_bits)) as u128 * t.buckets as u128) >> 64) as usize;
        let pair = &self.words[2 * i..2 * i + 2];
        (
            pair.try_into().expect("two words"),
            h & self.table.quotient_mask,
        )
    }

    /// The word of `key`'s entry, if one of its bucket's two words holds it.
    fn probe_word(&self, key: u64) -> Option<u64> {
        let (pair, q) = self.locate(key);
        let check = (q ^ self.salt) & CHECK_MASK;
        pair.iter()
            .map(|w| w.load(Ordering::Relaxed))
            .find(|w| w & CHECK_MASK == check && (w >> BOUND_SHIFT) & 3 != 0)
    }

    /// The entry of `key`, if one of its bucket's two words holds it.
    #[inline(always)]
    fn probe(&self, key: u64) -> Option<Hit> {
        let (pair, q) = self.locate(key);
        let check = (q ^ self.salt) & CHECK_MASK;
        for w in pair {
            let w = w.load(Ordering::Relaxed);
            if w & CHECK_MASK == check && (w >> BOUND_SHIFT) & 3 != 0 {
                return Some(unpack(w));
            }
        }
        None
    }

    /// Asks the CPU to bring `key`'s bucket into cache (a hint: no effect on results).
    #[inline(always)]
    fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let p = self.locate(key).0 as *const [AtomicU64; 2] as *const i8;
            // SAFETY: a prefetch never faults and changes no memory; `p` points into `words`.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// Stores a result whose search took `nodes` nodes: in the bucket's first word if that
    /// word holds `key` already or took no more work, else in the second (see the module doc).
    #[inline(always)]
    fn store(&self, key: u64, score: i32, bound: u64, mv: u32, nodes: u64) {
        let t = &self.table;
        let (pair, q) = self.locate(key);
        let check = (q ^ self.salt) & CHECK_MASK;
        let mut work = work_of(nodes);
        let w0 = pair[0].load(Ordering::Relaxed);
        let old = (w0 >> WORK_SHIFT) & 15;
        let slot = if w0 & CHECK_MASK == check {
            // The same position again: it keeps the larger work.
            work = work.max(old);
            0
        } else if (w0 ^ self.salt) & t.tag_mask != 0 || work >= old {
            // Another use's word (its salt tag differs) is garbage: replace it.
            0
        } else {
            1
        };
        let w = check
            | work << WORK_SHIFT
            | ((score + SCORE_OFFSET) as u64) << SCORE_SHIFT
            | bound << BOUND_SHIFT
            | (mv as u64) << MOVE_SHIFT;
        pair[slot].store(w, Ordering::Relaxed);
    }

    /// An upper bound on the score of the first player to move (`n` even) on a board of even
    /// height, from the second player's claimeven strategy (Allis): the second player answers
    /// every stone on an odd row (1, 3, ..) right above it, and a stone on a playable even-row
    /// cell on another playable even-row cell (the columns of odd height come in pairs when
    /// the first player is to move). It only ever plays even rows, so it gets every empty
    /// even-row cell that is not playable now, each right after the cell below is filled; the
    /// first player gets at most the rest. If the rest holds no four (or only fours that each
    /// lie above a four of the second player's, see below), the first player never wins (bound
    /// 0); if the second player's cells then hold a four whose highest cell is on row `r`, that
    /// four is complete by stone `cells - (h - r)` at the latest (the cells above a cell come
    /// after it), so the first player loses by then.
    #[inline]
    fn evens_bound(&self, cur: u64, mask: u64) -> i32 {
        let geo = &self.geo;
        let theirs = geo.claimeven_cells(cur, mask);
        let ours = geo.board & !theirs;
        // Right, up-right, down-right: the shift and the row step per column.
        let dirs = [(geo.h1, 0), (geo.h1 + 1, 1), (geo.h, -1)];
        let mine = dirs.map(|(shift, _)| Geometry::four_starts(ours, shift));
        let mine_vertical = Geometry::four_starts(ours, 1);
        if mine_vertical != 0 || mine.iter().any(|&m| m != 0) {
            // The first player's fours do not help it if each one lies, cell for cell, above a
            // four of the second player's in the same columns (starting in the same column, each
            // cell below the first player's cell of its column): a column fills from the
            // bottom, so that four of the second player's is complete first (after
            // ChristopheSteininger/c4, which compares the fours of each direction this way; a
            // four of another direction counts here too). A vertical four is never beaten.
            if mine_vertical != 0 {
                return i32::MAX;
            }
            let starts = dirs.map(|(shift, _)| Geometry::four_starts(theirs, shift));
            for (&mine, (_, slope)) in mine.iter().zip(dirs) {
                if mine == 0 {
                    continue;
                }
                // A four of slope `slope` starting in column c lies above one of slope `s`
                // starting in column c on a row `3 * (s - slope)` (if positive) or more below.
                let mut lower = 0;
                for (&theirs4, (_, s)) in starts.iter().zip(dirs) {
                    lower |= geo.up(theirs4, 3 * (s - slope).max(0) as u32);
                }
                if mine & !geo.above(lower) != 0 {
                    return i32::MAX;
                }
            }
        } else if !geo.has_four(theirs) {
            return 0;
        }
        let mut rows = 0;
        for r in 1..=geo.h {
            rows |= geo.bottom << (r - 1);
            if geo.has_four(theirs & rows) {
                return -self.win_score(geo.cells - (geo.h - r) as i32);
            }
        }
        unreachable!("the whole board holds the four")
    }

    /// The first child (index into `keys`, the children's table keys) whose entry bounds its
    /// score at or below `-beta` (an upper bound or an exact score), with the parent's lower
    /// bound through it (`-score >= beta`): a move that makes the parent fail high.
    #[inline]
    fn etc_cut(&self, keys: &[u64], beta: i32) -> Option<(usize, i32)> {
        keys.iter().enumerate().find_map(|(i, &k)| {
            self.probe(k)
                .filter(|h| h.bound != LOWER && -h.score >= beta)
                .map(|h| (i, -h.score))
        })
    }

    /// Stores the fail-high `v` (at least beta) of a node cut by its move `c` without a search
    /// of that move (claimeven one stone ahead, enhanced transposition cutoff): exact if it
    /// meets the upper bound `hi` known before, else a lower bound. `first` is the node's
    /// first node number (see `node`).
    #[inline]
    fn store_cut(&self, key: u64, mirrored: bool, v: i32, hi: i32, c: u8, first: u64) {
        let c = c as u32;
        let stored = if mirrored { self.geo.width - 1 - c } else { c };
        let bound = if v >= hi { EXACT } else { LOWER };
        self.store(key, v, bound, stored + 1, self.count.nodes - first + 1);
    }

    /// Score of winning with the stone of ply `n`.
    #[inline(always)]
    fn win_score(&self, n: i32) -> i32 {
        1 + (self.geo.cells - n) / 2
    }

    /// The root: returns the score and a best move (a move reaching the score when the search
    /// failed high or was exact).
    fn root(&mut self, s: &C4State<u64>, alpha: i32, beta: i32) -> Option<(i32, Option<u8>)> {
        let geo = self.geo;
        let (cur, mask) = (s.current, s.mask);
        let n = s.moves as i32;
        let wins = geo.winning_cells(cur, mask) & geo.possible(mask);
        if wins != 0 {
            let c = geo.column_of(wins & wins.wrapping_neg());
            return Some((self.win_score(n + 1), Some(c as u8)));
        }
        let (mcur, mmask) = (geo.mirror(cur), geo.mirror(mask));
        let v = self.node::<true>(cur, mask, mcur, mmask, n, alpha, beta);
        if self.stopped {
            return None;
        }
        Some(v)
    }

    /// Negamax at a position where the side to move cannot win at once. Returns the fail-soft
    /// score and (at the root) the best move. `mcur` and `mmask` are the mirror images of `cur`
    /// and `mask`, kept up to date move by move (one rotation per move instead of a loop over
    /// the columns per node) for the mirror key.
    #[allow(clippy::too_many_arguments)]
    fn node<const ROOT: bool>(
        &mut self,
        cur: u64,
        mask: u64,
        mcur: u64,
        mmask: u64,
        n: i32,
        mut alpha: i32,
        mut beta: i32,
    ) -> (i32, Option<u8>) {
        self.count.nodes += 1;
        // This node's subtree is `self.count.nodes - first + 1` nodes when its result is stored.
        let first = self.count.nodes;
        if self.count.nodes & (POLL_INTERVAL - 1) == 0 {
            self.poll();
        }
        if self.stop.load(Ordering::Relaxed) {
            self.stopped = true;
        }
        if self.stopped {
            return (0, None);
        }
        let geo = self.geo;
        let possible = geo.possible(mask);
        let opp_wins = geo.winning_cells(cur ^ mask, mask);
        let forced = possible & opp_wins;
        let mut next = possible;
        // At the root the decided cases still name a move that reaches their value: with two
        // threats against us, or every move under one, all moves lose to the next stone alike;
        // in a draw by the board filling up, the move is a non-losing one.
        let any = |cells: u64| ROOT.then(|| geo.column_of(cells & cells.wrapping_neg()) as u8);
        if forced != 0 {
            if forced & (forced - 1) != 0 {
                return (-self.win_score(n + 2), any(possible));
            }
            next = forced;
        }
        next &= !(opp_wins >> 1);
        if next == 0 {
            return (-self.win_score(n + 2), any(possible));
        }
        if n + 2 >= geo.cells {
            // We cannot win now, the opponent cannot win with the last stone: a draw.
            return (0, any(next));
        }
        let lo = if n + 4 <= geo.cells {
            -self.win_score(n + 4)
        } else {
            0
        };
        let hi = if n + 3 <= geo.cells {
            self.win_score(n + 3)
        } else {
            0
        };
        let mut lo = lo.min(0);
        let mut hi = hi.max(0);
        // Bounds and the table narrow the window; the root keeps searching for a move. The
        // bounds known without search are tried before the table (no key, no memory access).
        if !ROOT {
            if lo >= beta {
                return (lo, None);
            }
            if hi <= alpha {
                return (hi, None);
            }
        }
        // A single move (a forced block, or the only move not under a threat): played at once,
        // without ordering and without a table entry of its own (the child has one).
        if !ROOT && next & (next - 1) == 0 {
            let c = geo.column_of(next);
            let mcell = next.rotate_left(geo.mirror_rot[c as usize]);
            let (v, _) = self.node::<false>(
                cur ^ mask,
                mask | next,
                mcur ^ mmask,
                mmask | mcell,
                n + 1,
                -beta,
                -alpha,
            );
            return (-v, None);
        }

        // The key and its mirror image's (the bottom row is its own mirror image).
        let (key, mirrored) = {
            let key = cur + mask + geo.bottom;
            let mkey = mcur + mmask + geo.bottom;
            if mkey < key {
                (mkey, true)
            } else {
                (key, false)
            }
        };
        let hit = self.probe(key);
        // Claimeven (the first player to move, an even board height): see `evens_bound`.
        if geo.claimeven && n & 1 == 0 && hi > alpha {
            hi = hi.min(self.evens_bound(cur, mask));
            if !ROOT && hi <= alpha {
                return (hi, None);
            }
        }
        let mut tt_col = u32::MAX;
        if n <= self.book_depth {
            if let Some(v) = self.book.and_then(|b| b.get(n as u32, key)) {
                lo = v;
                hi = v;
            }
        }
        if let Some(h) = hit {
            match h.bound {
                EXACT => {
                    lo = lo.max(h.score);
                    hi = hi.min(h.score);
                }
                LOWER => lo = lo.max(h.score),
                _ => hi = hi.min(h.score),
            }
            // An upper bound's move is only the least bad of moves that all failed low: not a
            // hint worth trying first.
            if h.mv != 0 && h.bound != UPPER {
                let c = h.mv - 1;
                tt_col = if mirrored { geo.width - 1 - c } else { c };
            }
        }
        if !ROOT {
            if lo >= hi || lo >= beta {
                return (lo, None);
            }
            if hi <= alpha {
                return (hi, None);
            }
        }
        alpha = alpha.max(lo);
        beta = beta.min(hi);
        if alpha >= beta {
            // Root only: the bounds decide; search just below them to find a move.
            alpha = beta - 1;
        }
        let alpha_w = alpha;

        // Move order: the most useful threats after the move (empty cells that would complete
        // four, not directly above an opponent's threat), the kinds of threat below and the
        // table's move (of a lower bound or exact entry) as a bonus; ties centre first. Each
        // child's table slot is prefetched here, so its probe does not wait for memory.
        let ccur = cur ^ mask;
        let cmcur = mcur ^ mmask;
        let useful = !(opp_wins << 1);
        let mut cols = [0u8; MAX_FAST_WIDTH as usize];
        let mut cells = [0u64; MAX_FAST_WIDTH as usize];
        let mut scores = [0u32; MAX_FAST_WIDTH as usize];
        let mut ckeys = [0u64; MAX_FAST_WIDTH as usize];
        let mut k = 0usize;
        // Claimeven one stone ahead (the second player to move, an even board height): a move
        // after which the first player's claimeven bound (`evens_bound`) is at most -beta makes
        // this node fail high at once.
        let ce_ahead = geo.claimeven && n & 1 == 1;
        // A window far from 0 asks for a quick win or loss: there the threats to block at once
        // lead, elsewhere the threats right above a playable cell (a long fight over the
        // board's cells).
        let far = if alpha >= 0 {
            alpha
        } else if beta <= 0 {
            -beta
        } else {
            0
        };
        let quick = far >= self.quick_score;
        for &c in &self.centre_first[..geo.width as usize] {
            let cell = next & (geo.column0 << (c as u32 * geo.h1));
            if cell == 0 {
                continue;
            }
            let mcell = cell.rotate_left(geo.mirror_rot[c as usize]);
            let child_mask = mask | cell;
            let ck = ccur + child_mask + geo.bottom;
            let cmk = cmcur + (mmask | mcell) + geo.bottom;
            let ckey = ck.min(cmk);
            self.prefetch(ckey);
            if ce_ahead {
                let b = self.evens_bound(ccur, child_mask);
                if b != i32::MAX && -b >= beta {
                    self.store_cut(key, mirrored, -b, hi, c, first);
                    return (-b, Some(c));
                }
            }
            let score = {
                // Beyond the count: the threats the opponent must block at once (on a playable
                // cell) and the threats right above a playable cell (the opponent cannot take
                // the cell below without giving us the threat) count one more, and one of the
                // two kinds once more again, by the window (`quick`); the table's move counts
                // one more (after ChristopheSteininger/c4, which weighs these kinds above the
                // rest and the table's move as a bonus, not first).
                // (`count_ones` is a dozen instructions without a popcount target feature: most
                // moves make no threat and skip all three.)
                let t = geo.winning_cells(cur | cell, child_mask) & useful;
                let threats = if t == 0 {
                    0
                } else {
                    let playable = geo.possible(child_mask);
                    let now = t & playable;
                    let above = t & (playable << 1);
                    let again = if quick { now } else { above };
                    4 * t.count_ones() + (now | above).count_ones() + again.count_ones()
                };
                threats + (c as u32 == tt_col) as u32
            };
            let mut i = k;
            while i > 0 && scores[i - 1] < score {
                cols[i] = cols[i - 1];
                cells[i] = cells[i - 1];
                scores[i] = scores[i - 1];
                ckeys[i] = ckeys[i - 1];
                i -= 1;
            }
            cols[i] = c;
            cells[i] = cell;
            scores[i] = score;
            ckeys[i] = ckey;
            k += 1;
        }

        // Enhanced transposition cutoff, at nodes with at least `etc_min_empty` empty cells
        // (where a subtree is big enough to pay for the extra probes; their slots were
        // prefetched above): a child whose entry already bounds its score at or below -beta
        // makes this node fail high at once. Tried here, before any child, near the root
        // (`etc_first_min_empty`), else once the first child has failed to cut (below).
        let empty = geo.cells - n;
        let etc_later = empty >= self.etc_min_empty && empty < self.etc_first_min_empty;
        if empty >= self.etc_first_min_empty {
            if let Some((i, v)) = self.etc_cut(&ckeys[..k], beta) {
                let c = cols[i];
                self.store_cut(key, mirrored, v, hi, c, first);
                return (v, Some(c));
            }
        }

        let mut best = i32::MIN;
        let mut best_i = 0;
        // ABDADA (threads > 1, nodes with more than `SHARE_MIN_EMPTY` empty cells): every child
        // but the first is left for later while another thread is inside it; the children left
        // are searched after the others (their table entries then often answer them at once).
        let share = n < self.share_below;
        let mut deferred = [0u8; MAX_FAST_WIDTH as usize];
        let mut nd = 0;
        let mut t = 0;
        while t < k + nd {
            let i = if t < k { t } else { deferred[t - k] as usize };
            if t == 1 && etc_later {
                if let Some((j, v)) = self.etc_cut(&ckeys[1..k], beta) {
                    let c = cols[1 + j];
                    self.store_cut(key, mirrored, v, hi, c, first);
                    return (v, Some(c));
                }
            }
            t += 1;
            let mut marked = false;
            if share {
                match busy::enter(self.busy, ckeys[i], t <= k && i > 0) {
                    busy::Entry::Busy => {
                        deferred[nd] = i as u8;
                        nd += 1;
                        continue;
                    }
                    e => marked = e == busy::Entry::Marked,
                }
            }
            // The opponent moves next: its stones are `cur ^ mask`.
            let cell = cells[i];
            let mcell = cell.rotate_left(geo.mirror_rot[cols[i] as usize]);
            let (v, _) = self.node::<false>(
                cur ^ mask,
                mask | cell,
                mcur ^ mmask,
                mmask | mcell,
                n + 1,
                -beta,
                -alpha,
            );
            if marked {
                busy::leave(self.busy, ckeys[i]);
            }
            let v = -v;
            if self.stopped {
                return (0, None);
            }
            if v > best {
                best = v;
                best_i = i;
                if v >= beta {
                    break;
                }
                if v > alpha {
                    alpha = v;
                }
            }
        }
        // A bound that meets a bound known before the search (the table's, the stones left,
        // claimeven) is the exact score.
        let bound = if best <= alpha_w {
            if best <= lo {
                EXACT
            } else {
                UPPER
            }
        } else if best >= beta {
            if best >= hi {
                EXACT
            } else {
                LOWER
            }
        } else {
            EXACT
        };
        let c = cols[best_i] as u32;
        let stored = if mirrored { geo.width - 1 - c } else { c };
        self.store(key, best, bound, stored + 1, self.count.nodes - first + 1);
        (best, Some(cols[best_i]))
    }
}

/// The entries of positions reachable from `root` (mirror images as one) whose search took at
/// least `2^min_work` nodes, as [`crate::wire::Proved`] (key, the entry's fields without its
/// check), at most `max`: a walk that enters a position's children only where the position has
/// such an entry (a search below it stored the larger ones on the way back up).
pub fn export_proved(
    game: &Connect4<u64>,
    root: &C4State<u64>,
    table: &Table,
    min_work: u32,
    max: usize,
) -> Vec<crate::wire::Proved> {
    let mut out = Vec::new();
    if !applies(game) || !table_fits(game, table) {
        return out;
    }
    let (words, salt) = table.raw_words();
    let stop = AtomicBool::new(false);
    let ctl = Control::unlimited();
    let probe = Solver::new(game, words, salt, None, &ctl, &stop);
    let geo = probe.geo;
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![*root];
    while let Some(s) = stack.pop() {
        if out.len() >= max {
            break;
        }
        if game.is_terminal(&s) {
            continue;
        }
        let (key, _) = geo.canonical(s.current, s.mask);
        if !seen.insert(key) {
            continue;
        }
        let Some(w) = probe.probe_word(key) else {
            continue;
        };
        if (w >> WORK_SHIFT) & 15 < min_work as u64 {
            continue;
        }
        out.push([key, w & !CHECK_MASK]);
        for c in 0..geo.width as u8 {
            if game.can_play(&s, c) {
                let mut child = s;
                game.apply(&mut child, c);
                stack.push(child);
            }
        }
    }
    out
}

/// Stores entries of [`export_proved`] (from any worker of the job) into `table`; entries
/// whose fields do not decode for this board (no bound, a score past the board's, a column
/// past its width) are skipped. Each keeps its work, so the replacement policy weighs it as a
/// search of that size.
pub fn import_proved(game: &Connect4<u64>, table: &Table, entries: &[crate::wire::Proved]) {
    if !applies(game) || !table_fits(game, table) {
        return;
    }
    let (words, salt) = table.raw_words();
    let stop = AtomicBool::new(false);
    let ctl = Control::unlimited();
    let solver = Solver::new(game, words, salt, None, &ctl, &stop);
    let cells = (game.width * game.height) as i32;
    let limit = cells / 2 + 1;
    let key_bits = hash_bits(game);
    for &[key, fields] in entries {
        let hit = unpack(fields);
        let work = (fields >> WORK_SHIFT) & 15;
        if fields & CHECK_MASK != 0
            || hit.bound == 0
            || hit.score.abs() > limit
            || hit.mv > game.width
            || (key_bits < 64 && key >> key_bits != 0)
        {
            continue;
        }
        solver.store(key, hit.score, hit.bound, hit.mv, 1 << work);
    }
}

/// The principal variation: `first`, then the table's moves while they are legal.
fn principal_variation(
    game: &Connect4<u64>,
    root: &C4State<u64>,
    words: &[AtomicU64],
    salt: u64,
    first: Option<u8>,
) -> Vec<u8> {
    let mut pv = Vec::new();
    let Some(first) = first else {
        return pv;
    };
    let stop = AtomicBool::new(false);
    let ctl = Control::unlimited();
    let probe = Solver::new(game, words, salt, None, &ctl, &stop);
    let geo = probe.geo;
    let mut s = *root;
    game.apply(&mut s, first);
    pv.push(first);
    while pv.len() < 64 && !game.is_terminal(&s) {
        let wins = geo.winning_cells(s.current, s.mask) & geo.possible(s.mask);
        let mv = if wins != 0 {
            Some(geo.column_of(wins & wins.wrapping_neg()) as u8)
        } else {
            let (key, mirrored) = geo.canonical(s.current, s.mask);
            probe.probe(key).and_then(|h| {
                (h.mv != 0).then(|| {
                    let c = h.mv - 1;
                    (if mirrored { geo.width - 1 - c } else { c }) as u8
                })
            })
        };
        let Some(mv) = mv else { break };
        if mv as u32 >= geo.width || !game.can_play(&s, mv) {
            break;
        }
        game.apply(&mut s, mv);
        pv.push(mv);
    }
    pv
}

#[cfg(test)]
mod tests;
