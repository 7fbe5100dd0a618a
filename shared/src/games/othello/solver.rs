//! The Othello fast path: an exact alpha-beta solver on two `u64` bitboards, for every board the
//! game supports (up to 8 x 8; the board code also takes rectangles such as 4 x 6).
//!
//! It answers the same question as the generic engine's exact mode ([`engine::search`] with
//! `depth: None`) with the same contract: for a window `alpha < beta` the fail-soft value `v`
//! from the side to move's point of view (`v <= alpha`: the value is at most `v`; `v >= beta`: at
//! least `v`; otherwise exact), the best root move, a principal variation and the nodes, on the
//! same [`engine::Table`] memory so that a job's null-window probes share what they learnt.
//! Values are the game's: the final disc difference, the empty squares of an early end going to
//! the winner or to nobody as [`Board::empties`] says ([`Othello`]'s `terminal_value`); the rule
//! is mixed into the table's check word, so entries of the two rules never answer each other.
//!
//! ## Board
//! The layout of [`super`]: stride 8, bit `row * 8 + col`, squares outside the
//! `width x height` corner never set. Positions are `(me, opp)`: the discs of the side to move
//! and of the other side, so a position and its colour-swapped twin share everything (value,
//! table entry). Moves by shift-and-mask flood fill in the 8 directions: for the horizontal and
//! diagonal directions the opponent discs that can be jumped are masked to the inner columns, so
//! a shift can never wrap from one row into the next.
//!
//! ## Search
//! Negamax, fail-soft, principal-variation search (a null window is the usual call: the planner's
//! probes):
//! - `empties <= LEAF_EMPTIES`: a tight routine over the empty squares (flips computed per
//!   square, no move generation, no table), odd-parity regions first; the last empty square is
//!   scored from its flip count alone;
//! - `empties >= TABLE_EMPTIES`: the transposition table (below), its move first; from
//!   `ETC_EMPTIES` each child is probed first (enhanced transposition cut-off);
//! - move order: at `empties >= MOBILITY_EMPTIES` fastest-first (fewest opponent replies after
//!   the move, from a full move generation per child) with a corner bonus, from `SORT_EMPTIES`
//!   plus a shallow search of each child on a mobility-and-corners evaluation; below that, moves
//!   in regions (board quadrants) with an odd number of empties first, corners first;
//! - a side without a move passes; two passes end the game;
//! - threads: Young Brothers Wait split points at null-window nodes of `SPLIT_EMPTIES` or more
//!   ([`run`]), on the shared table.
//!
//! ## Table entry (two words of [`Table::raw_words`], two entries per 32-byte bucket)
//! ```text
//! data:  | empties:7 | move:7 | bound:2 | score+128:8 |       check = key ^ data ^ salt
//!          23..17      16..10   9..8      7..0
//! ```
//! `key` is a 64-bit mix of `(me, opp)`; an entry counts only if `check ^ data ^ salt == key`, so
//! a torn or foreign pair of words (another job's salt, the engine's layout) is a miss except by a
//! 2^-64 chance. `bound` 0 is an empty slot, 1 Lower, 2 Upper, 3 Exact (fail-soft). Slot 0 keeps
//! the entry with the most empties (the dearest to redo), slot 1 always takes the newest.

use super::{Empties, Othello, OthelloState, PASS};
use crate::games::fmix64;
use crate::model::Game;
use crate::search::engine::{Outcome, Table};
use crate::search::node::NodeCount;
use crate::search::pool;
use crate::search::Control;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// At or below this many empty squares: the table-free leaf routine (Edax's shallow search
/// starts at 7 empties too).
const LEAF_EMPTIES: u32 = 7;
/// At or above this many empty squares: the transposition table.
const TABLE_EMPTIES: u32 = 8;
/// At or above this many empty squares: fastest-first ordering.
const MOBILITY_EMPTIES: u32 = 8;
/// Move-ordering weights above [`LEAF_EMPTIES`] (higher first), in the proportions of Edax's
/// fast move evaluation: the opponent's mobility after the move (corners count twice) rules,
/// then the mover's stable corners, then the opponent's potential mobility (empty squares next
/// to the mover's discs), then the square's tier and the region's parity.
const W_MOBILITY: u64 = 1 << 15;
const W_CORNER_STABILITY: u64 = 1 << 11;
const W_POTENTIAL_MOBILITY: u64 = 1 << 5;
const W_PARITY: u64 = 1 << 2;
/// At or above this many empty squares the ordering adds, per move, the value of a shallow
/// search of the child ([`Solver::shallow`] on [`Board::evaluate`]) at depth
/// `(empties - SORT_BASE) / 2`, at most [`SORT_MAX_DEPTH`], weighted [`W_EVAL`] per unit (a
/// mobility unit of the evaluation, 12, weighs 1.5 `W_MOBILITY`).
const SORT_EMPTIES: u32 = 14;
const SORT_BASE: u32 = 12;
const SORT_MAX_DEPTH: u32 = 6;
const W_EVAL: u64 = 1 << 12;
/// The bound of shallow-search values: a finished game scores `+-(EVAL_WIN + 32 * |score|)`,
/// above any evaluation, at most `EVAL_MAX`.
const EVAL_WIN: i32 = 2048;
const EVAL_MAX: i32 = 4096;
/// The ordering evaluation's weights, in the units of [`super::eval`]'s (and its values for
/// all but material, which ordered worse): mobility (corners count twice), corner discs, discs
/// on the X and C squares of empty corners, frontier discs.
const E_MOBILITY: i32 = 12;
const E_CORNER: i32 = 60;
const E_X_SQUARE: i32 = -25;
const E_C_SQUARE: i32 = -8;
const E_FRONTIER: i32 = -4;
/// At or above this many empty squares (below the root): enhanced transposition cut-offs, a
/// table probe of each child before any is searched.
const ETC_EMPTIES: u32 = 12;
/// At or above this many empty squares: the stability bounds ([`Solver::stability_cut`]).
const STABILITY_EMPTIES: u32 = 8;
/// At or above this many empty squares, with more than one thread: a node may become a split
/// point once its first move is searched (Young Brothers Wait). Below it a subtree is too small
/// to pay for handing it over (a wake-up costs microseconds, 11 empties some 10^4 nodes).
const SPLIT_EMPTIES: u32 = 12;
/// Most search threads.
const MAX_THREADS: usize = 64;
/// Nodes between two polls of the limits.
const POLL_INTERVAL: u64 = 1 << 14;
/// Larger than any score (|score| <= 64).
const SCORE_INF: i32 = 100;
const LOWER: u64 = 1;
const UPPER: u64 = 2;
const EXACT: u64 = 3;
const NO_MOVE: u64 = 127;

const FILE_0: u64 = 0x0101_0101_0101_0101;

/// A board shape for the solver: its squares and the masks the search needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Board {
    /// Files (columns), 1..=8.
    pub width: u32,
    /// Ranks (rows), 1..=8.
    pub height: u32,
    /// The squares of the board.
    pub valid: u64,
    /// The board without its first and last file: the discs a horizontal or diagonal line may
    /// jump.
    inner: u64,
    /// The squares with a neighbour on their right (all but the last file) and on their left
    /// (all but the first file).
    right_open: u64,
    left_open: u64,
    /// The four corners.
    corners: u64,
    /// The squares in three tiers of how good a move there usually is: corners and the squares
    /// two away from them along an edge or the diagonal; the rest; the squares next to a
    /// corner (C and X squares). Leaf routines try them in this order.
    tiers: [u64; 3],
    /// The corners and their edge neighbours, for the stable-corner count of move ordering.
    corner_zone: u64,
    /// The squares diagonally next to a corner (X) and along an edge next to one (C).
    x_squares: u64,
    c_squares: u64,
    /// The four quadrants (parity regions).
    regions: [u64; 4],
    /// The lines of the board along each of the four axes (rows, columns, the two diagonal
    /// directions), for the full-line test of stability; empty masks pad the arrays.
    lines: [[u64; 16]; 4],
    /// Per direction (the 8 of [`STABLE_DIRS`]): the squares whose neighbour that way is on
    /// the board.
    has_next: [u64; 8],
    /// Per square, the squares of the board along each of the 8 [`RAY_DIRS`] from it (the
    /// square itself excluded), up to the edge: the flips of a move are read from these.
    rays: [[u64; 8]; 64],
    /// Per square, its neighbours on the board: a move there flips nothing unless one of them
    /// is the opponent's.
    neighbour: [u64; 64],
    /// Who gets the empty squares of an early end.
    pub empties: Empties,
}

/// The ray directions of [`Board::rays`] as (row step, column step): the first four go to
/// higher bit indices (+1, +8, +9, +7), the last four to lower ones (-1, -8, -9, -7).
const RAY_DIRS: [(i32, i32); 8] = [
    (0, 1),
    (1, 0),
    (1, 1),
    (1, -1),
    (0, -1),
    (-1, 0),
    (-1, -1),
    (-1, 1),
];

/// Directions as (row step, column step): pairs `2k, 2k + 1` are the two ways along axis `k`
/// (rows, columns, diagonal, anti-diagonal) as [`Board::lines`] orders them.
const STABLE_DIRS: [(i32, i32); 8] = [
    (0, 1),
    (0, -1),
    (1, 0),
    (-1, 0),
    (1, 1),
    (-1, -1),
    (1, -1),
    (-1, 1),
];

impl Board {
    /// A `width x height` board (1..=8 each).
    pub fn new(width: u32, height: u32) -> Board {
        assert!((1..=8).contains(&width) && (1..=8).contains(&height));
        let mut valid = 0u64;
        let mut regions = [0u64; 4];
        for r in 0..height {
            for c in 0..width {
                let bit = 1u64 << (r * 8 + c);
                valid |= bit;
                let q = (r >= height / 2) as usize * 2 + (c >= width / 2) as usize;
                regions[q] |= bit;
            }
        }
        let last_file = FILE_0 << (width - 1);
        let (w, h) = (width - 1, height - 1);
        let on = |r: i32, c: i32| r >= 0 && c >= 0 && r < height as i32 && c < width as i32;
        let mut has_next = [0u64; 8];
        for (d, &(dr, dc)) in STABLE_DIRS.iter().enumerate() {
            for r in 0..height as i32 {
                for c in 0..width as i32 {
                    if on(r + dr, c + dc) {
                        has_next[d] |= 1u64 << (r * 8 + c);
                    }
                }
            }
        }
        // Each line of an axis: from every square with no neighbour backwards along the axis.
        let mut lines = [[0u64; 16]; 4];
        for axis in 0..4 {
            let (dr, dc) = STABLE_DIRS[2 * axis];
            let mut k = 0;
            for r in 0..height as i32 {
                for c in 0..width as i32 {
                    if on(r - dr, c - dc) {
                        continue;
                    }
                    let (mut rr, mut cc, mut line) = (r, c, 0u64);
                    while on(rr, cc) {
                        line |= 1u64 << (rr * 8 + cc);
                        rr += dr;
                        cc += dc;
                    }
                    lines[axis][k] = line;
                    k += 1;
                }
            }
        }
        let mut rays = [[0u64; 8]; 64];
        for r in 0..height as i32 {
            for c in 0..width as i32 {
                for (d, &(dr, dc)) in RAY_DIRS.iter().enumerate() {
                    let (mut rr, mut cc) = (r + dr, c + dc);
                    while on(rr, cc) {
                        rays[(r * 8 + c) as usize][d] |= 1u64 << (rr * 8 + cc);
                        rr += dr;
                        cc += dc;
                    }
                }
            }
        }
        let corners: u64 = 1 | 1 << w | 1 << (h * 8) | 1 << (h * 8 + w);
        let mut near = 0u64;
        let mut two_away = 0u64;
        let mut corner_zone = corners;
        for (cr, cc) in [(0, 0), (0, w as i32), (h as i32, 0), (h as i32, w as i32)] {
            let (sr, sc) = (if cr == 0 { 1 } else { -1 }, if cc == 0 { 1 } else { -1 });
            for (dr, dc) in [(0, 1), (1, 0), (1, 1)] {
                let (r1, c1) = (cr + sr * dr, cc + sc * dc);
                if on(r1, c1) {
                    near |= 1u64 << (r1 * 8 + c1);
                    if dr + dc == 1 {
                        corner_zone |= 1u64 << (r1 * 8 + c1);
                    }
                }
                let (r2, c2) = (cr + 2 * sr * dr, cc + 2 * sc * dc);
                if on(r2, c2) {
                    two_away |= 1u64 << (r2 * 8 + c2);
                }
            }
        }
        let near = near & !corners;
        let good = (corners | two_away) & !near;
        let tiers = [good, valid & !good & !near, near];
        let mut neighbour = [0u64; 64];
        for (sq, r) in rays.iter().enumerate() {
            for (d, &ray) in r.iter().enumerate() {
                // The ray's first square: its lowest bit climbing, its highest falling.
                neighbour[sq] |= if d < 4 {
                    ray & ray.wrapping_neg()
                } else {
                    (1u64 << 63).checked_shr(ray.leading_zeros()).unwrap_or(0)
                };
            }
        }
        Board {
            width,
            height,
            rays,
            neighbour,
            tiers,
            corner_zone,
            x_squares: near & !corner_zone,
            c_squares: corner_zone & !corners,
            valid,
            inner: valid & !FILE_0 & !last_file,
            right_open: valid & !last_file,
            left_open: valid & !FILE_0,
            corners,
            regions,
            lines,
            has_next,
            empties: Empties::Winner,
        }
    }

    /// The same board with the rule `empties` for the empty squares of an early end.
    pub fn with_empties(mut self, empties: Empties) -> Board {
        self.empties = empties;
        self
    }

    /// The board of an Othello game (and its rule for the empty squares).
    pub fn of(game: &Othello) -> Board {
        let n = game.size() as u32;
        Board::new(n, n).with_empties(game.empties())
    }

    /// The final score of a finished game for the side owning `me`, under [`Board::empties`].
    #[inline(always)]
    fn end_score(&self, me: u64, opp: u64) -> i32 {
        self.empties
            .score(me.count_ones(), opp.count_ones(), self.valid.count_ones())
    }

    /// The empty squares where `me` may play (each brackets a line of `opp`).
    #[inline(always)]
    pub fn moves(&self, me: u64, opp: u64) -> u64 {
        let empty = self.valid & !(me | opp);
        let oi = opp & self.inner;
        let m = fill_up(me, oi, 1)
            | fill_down(me, oi, 1)
            | fill_up(me, opp, 8)
            | fill_down(me, opp, 8)
            | fill_up(me, oi, 9)
            | fill_down(me, oi, 9)
            | fill_up(me, oi, 7)
            | fill_down(me, oi, 7);
        m & empty
    }

    /// The discs of `opp` that flip when `me` plays on the empty square `sq` (0: illegal).
    ///
    /// Per direction, the first square of the ray that is not an `opp` disc ends the line: the
    /// lowest such bit on the rays that climb (bit indices grow away from `sq`), the highest on
    /// the others. When it is one of `me`'s discs, the ray squares before it flip. Branch-free
    /// and without loops: eight masks, two bit scans per pair of directions.
    #[inline(always)]
    pub fn flips(&self, me: u64, opp: u64, sq: u32) -> u64 {
        let r = &self.rays[sq as usize];
        let mut f = 0u64;
        for ray in &r[..4] {
            let o = ray & !opp;
            let first = o & o.wrapping_neg();
            let closed = 0u64.wrapping_sub((first & me != 0) as u64);
            f |= ray & first.wrapping_sub(1) & closed;
        }
        for ray in &r[4..] {
            let o = ray & !opp;
            let first = (1u64 << 63).checked_shr(o.leading_zeros()).unwrap_or(0);
            let closed = 0u64.wrapping_sub((first & me != 0) as u64);
            f |= ray & !(first.wrapping_mul(2).wrapping_sub(1)) & closed;
        }
        f
    }

    /// The squares of `filled` whose line along each axis is full (one mask per axis).
    #[inline]
    fn full_lines(&self, filled: u64) -> [u64; 4] {
        let mut full = [0u64; 4];
        for (axis, lines) in self.lines.iter().enumerate() {
            for &l in lines {
                if l & filled == l {
                    full[axis] |= l;
                }
            }
        }
        full
    }

    /// The squares whose neighbour in direction `d` ([`STABLE_DIRS`]) is in `set`.
    #[inline(always)]
    fn next_in(&self, set: u64, d: usize) -> u64 {
        let (dr, dc) = STABLE_DIRS[d];
        let n = dr * 8 + dc;
        let moved = if n > 0 { set >> n } else { set << -n };
        moved & self.has_next[d]
    }

    /// Discs of `mine` that can never be flipped, a subset found by the usual conservative
    /// rule: a disc is stable when along each of the four axes its line is full or one of its
    /// two neighbours is off the board or a stable disc of the same colour. `full` is
    /// [`Board::full_lines`] of the filled squares.
    pub fn stable(&self, mine: u64, full: [u64; 4]) -> u64 {
        let mut stable = 0u64;
        loop {
            let mut next = mine;
            for (axis, f) in full.iter().enumerate() {
                let (a, b) = (2 * axis, 2 * axis + 1);
                let anchored = !self.has_next[a]
                    | !self.has_next[b]
                    | self.next_in(stable, a)
                    | self.next_in(stable, b);
                next &= f | anchored;
            }
            if next == stable {
                return stable;
            }
            stable = next;
        }
    }

    /// `set` and the squares next to it (8 directions), on the board.
    #[inline(always)]
    fn neighbours(&self, set: u64) -> u64 {
        let side = ((set & self.right_open) << 1) | ((set & self.left_open) >> 1) | set;
        ((side << 8) | (side >> 8) | side) & self.valid
    }

    /// Corners of `mine` and their edge neighbours held with the corner: a cheap count of
    /// stable discs (Edax's corner stability).
    #[inline(always)]
    fn corner_stability(&self, mine: u64) -> u32 {
        let c = mine & self.corners;
        let held = c | (self.neighbours(c) & self.corner_zone & mine);
        held.count_ones()
    }

    /// A static estimate of `(me, opp)` for the side to move, for move ordering only: weighted
    /// mobility, corners, X and C squares of empty corners and frontier discs (the `E_`
    /// weights).
    #[inline]
    fn evaluate(&self, me: u64, opp: u64) -> i32 {
        let empty = self.valid & !(me | opp);
        let diff = |set: u64| (me & set).count_ones() as i32 - (opp & set).count_ones() as i32;
        let weighted = |m: u64| (m.count_ones() + (m & self.corners).count_ones()) as i32;
        let near_empty_corner = self.neighbours(self.corners & empty);
        E_MOBILITY * (weighted(self.moves(me, opp)) - weighted(self.moves(opp, me)))
            + E_CORNER * diff(self.corners)
            + E_X_SQUARE * diff(near_empty_corner & self.x_squares)
            + E_C_SQUARE * diff(near_empty_corner & self.c_squares)
            + E_FRONTIER * diff(self.neighbours(empty))
    }

    /// Empty squares of regions holding an odd number of empties.
    #[inline(always)]
    fn odd_regions(&self, empty: u64) -> u64 {
        let mut odd = 0;
        for r in self.regions {
            if (empty & r).count_ones() & 1 == 1 {
                odd |= r;
            }
        }
        odd & empty
    }
}

/// The squares reached from `from` over a line of `mask` discs (shifting left by `n`): the line
/// shifted once more. Six steps: a line on an 8-square side jumps at most six discs.
#[inline(always)]
fn fill_up(from: u64, mask: u64, n: u32) -> u64 {
    let mut x = mask & (from << n);
    x |= mask & (x << n);
    x |= mask & (x << n);
    x |= mask & (x << n);
    x |= mask & (x << n);
    x |= mask & (x << n);
    x << n
}

#[inline(always)]
fn fill_down(from: u64, mask: u64, n: u32) -> u64 {
    let mut x = mask & (from >> n);
    x |= mask & (x >> n);
    x |= mask & (x >> n);
    x |= mask & (x >> n);
    x |= mask & (x >> n);
    x |= mask & (x >> n);
    x >> n
}

/// The disc difference for the side owning `me` (the final score of a full board).
#[inline(always)]
fn disc_difference(me: u64, opp: u64) -> i32 {
    me.count_ones() as i32 - opp.count_ones() as i32
}

/// The table key of a position.
#[inline(always)]
fn key_of(me: u64, opp: u64) -> u64 {
    fmix64(me ^ fmix64(opp ^ 0x9E37_79B9_7F4A_7C15))
}

/// The fewest empty squares of an entry that [`export_proved`] sends for `min_work` (log2 of
/// the nodes its search took, which the entry does not record): a table-level search at `e`
/// empties costs about `3.6^(e - LEAF_EMPTIES)` nodes (FFO #40: 20 empties, 2 * 10^7 nodes),
/// so `2^14` nodes is about 15 empties.
fn export_empties(min_work: u32) -> u32 {
    let above = (f64::from(min_work) * std::f64::consts::LN_2 / 3.6f64.ln()).ceil() as u32;
    (LEAF_EMPTIES + above).max(TABLE_EMPTIES)
}

/// The entries of positions reachable from `root` whose search covered at least
/// [`export_empties`] empty squares (the bounds a search proved there: Othello has no
/// repetition, so they hold on every path), as [`crate::wire::Proved`] (the key mixed with the
/// end rule's salt, so that a solver of the other rule files them where it never looks; the
/// entry's data word), at most `max`: a walk that enters a position's children only where the
/// position has such an entry.
pub fn export_proved(
    game: &Othello,
    root: &OthelloState,
    table: &Table,
    min_work: u32,
    max: usize,
) -> Vec<crate::wire::Proved> {
    let board = Board::of(game);
    let (words, salt) = table.raw_words();
    let ctl = Control::unlimited();
    let probe = Solver::new(&board, words, salt, &ctl, &NO_STOP, None);
    let least = export_empties(min_work);
    let p = root.to_move as usize;
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![(root.discs[p], root.discs[1 - p])];
    while let Some((me, opp)) = stack.pop() {
        if out.len() >= max {
            break;
        }
        let empties = (board.valid & !(me | opp)).count_ones();
        let key = key_of(me, opp);
        if empties < least || !seen.insert(key) {
            continue;
        }
        let Some(data) = probe.probe_data(key) else {
            continue;
        };
        if (data >> 17 & 127) as u32 != empties {
            continue;
        }
        out.push([key ^ board.empties.key_salt(), data]);
        let mut moves = board.moves(me, opp);
        if moves == 0 {
            if board.moves(opp, me) != 0 {
                stack.push((opp, me));
            }
            continue;
        }
        while moves != 0 {
            let sq = moves.trailing_zeros();
            moves &= moves - 1;
            let f = board.flips(me, opp, sq);
            stack.push((opp & !f, me | f | 1 << sq));
        }
    }
    out
}

/// Stores entries of [`export_proved`] (from any worker of the job) into `table` under this
/// solver's replacement policy; entries whose data word does not decode for this board (no
/// bound, a score past the board's squares, a move off the board, too few empties, stray bits)
/// are skipped: they come over the network.
pub fn import_proved(game: &Othello, table: &Table, entries: &[crate::wire::Proved]) {
    let board = Board::of(game);
    let (words, salt) = table.raw_words();
    let ctl = Control::unlimited();
    let solver = Solver::new(&board, words, salt, &ctl, &NO_STOP, None);
    let squares = board.valid.count_ones();
    for &[key, data] in entries {
        let empties = (data >> 17 & 127) as u32;
        let mv = data >> 10 & 127;
        let bound = data >> 8 & 3;
        let score = (data & 0xff) as i32 - 128;
        let on_board = mv == NO_MOVE || mv == u64::from(PASS) || board.valid >> mv & 1 != 0;
        if data >> 24 != 0
            || bound == 0
            || score.unsigned_abs() > squares
            || !on_board
            || empties < TABLE_EMPTIES
            || empties > squares
        {
            continue;
        }
        solver.store(key ^ board.empties.key_salt(), empties, score, bound, mv);
    }
}

/// Exact fail-soft search of `root` with the window `(alpha, beta)` on the game's scale (see the
/// module doc) with `threads` threads on the shared table; `None` only when `ctl` stopped it.
pub fn search(
    game: &Othello,
    root: &OthelloState,
    alpha: i32,
    beta: i32,
    threads: usize,
    table: &Table,
    ctl: &Control,
) -> Option<Outcome<u8>> {
    assert!(alpha < beta, "the solver needs alpha < beta");
    if game.is_terminal(root) {
        return Some(Outcome::terminal(game, root));
    }
    let board = Board::of(game);
    let p = root.to_move as usize;
    let (me, opp) = (root.discs[p], root.discs[1 - p]);
    let (words, salt) = table.raw_words();
    let a = alpha.clamp(-SCORE_INF, SCORE_INF - 1);
    let b = beta.clamp(a + 1, SCORE_INF);
    let (found, stats) = run(&board, me, opp, a, b, words, salt, ctl, threads);
    let nodes = stats.nodes;
    let (value, best) = found?;
    let s = Solver::new(&board, words, salt, ctl, &NO_STOP, None);
    let pv = s.principal_variation(me, opp, best);
    Some(Outcome {
        value,
        best_move: best,
        pv,
        nodes,
        depth: 0,
        stopped: None,
    })
}

/// A stop flag that is never raised (searches without helpers).
static NO_STOP: AtomicBool = AtomicBool::new(false);

/// What a search cost: nodes of all threads, the time the threads spent waiting for work (idle
/// helpers, and owners of a split point waiting for its helpers with nothing to help at), and
/// the split points made.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Nodes of all threads.
    pub nodes: u64,
    /// Summed over the threads.
    pub idle: Duration,
    /// Split points made.
    pub splits: u64,
}

/// One search of `(me, opp)` with the window `(a, b)` by `threads` threads: the value and root
/// move (`None` when `ctl` stopped the search) and what it cost.
///
/// Threads (Young Brothers Wait, Feldmann 1993, as Edax and Crafty split): the caller's thread
/// searches the root; at a node of at least [`SPLIT_EMPTIES`] empties whose first move is done
/// and whose cut-off has not come, when some thread is idle, the remaining moves become a
/// [`Split`] that idle threads join, each taking the next move, searching it with the split
/// point's current alpha and merging its value under the split point's lock. A value at or above
/// beta marks the split point cut: every thread inside it (or below it) abandons its search and
/// stores nothing. The owner of a split point, once its moves are handed out, helps at split
/// points below its own until its helpers are done, and sleeps otherwise (no spinning). A thread
/// stopped by `ctl` raises `stop`, which halts every thread; the answer is then `None`.
#[allow(clippy::too_many_arguments)]
fn run(
    board: &Board,
    me: u64,
    opp: u64,
    a: i32,
    b: i32,
    words: &[AtomicU64],
    salt: u64,
    ctl: &Control,
    threads: usize,
) -> (Option<(i32, Option<u8>)>, Stats) {
    let threads = threads.clamp(1, MAX_THREADS);
    let stop = AtomicBool::new(false);
    let shared = Shared::new();
    let pool_ref = (threads > 1).then_some(&shared);
    let totals = Mutex::new(Stats::default());
    let add = |s: &Solver| {
        let mut t = totals.lock().unwrap_or_else(|e| e.into_inner());
        t.nodes += s.count.nodes;
        t.idle += s.idle;
        t.splits += s.splits;
    };
    let helper_task = |_i: u64| {
        let mut s = Solver::new(board, words, salt, ctl, &stop, pool_ref);
        s.help_until_done(&shared);
        s.count.flush(ctl);
        add(&s);
    };
    let found = pool::run(threads as u64 - 1, &helper_task, || {
        let mut s = Solver::new(board, words, salt, ctl, &stop, pool_ref);
        let v = s.node(me, opp, a, b, true);
        s.count.flush(ctl);
        let halted = s.halted();
        shared.finish();
        add(&s);
        (!halted).then_some((v, s.root_move))
    });
    let stats = totals.into_inner().unwrap_or_else(|e| e.into_inner());
    (found, stats)
}

/// A node whose remaining moves are shared out between threads (see [`run`]).
struct Split {
    me: u64,
    opp: u64,
    beta: i32,
    /// The moves left after the first, in search order (`key << 8 | square`).
    list: [u64; 64],
    len: usize,
    /// The next index of `list` to hand out.
    next: AtomicUsize,
    /// A value at or above beta was found: everything below is abandoned.
    cut: AtomicBool,
    /// (best value, best move) merged so far.
    merged: Mutex<(i32, u64)>,
    /// Threads other than the owner working here; changed under [`Shared`]'s lock only.
    helpers: AtomicUsize,
    /// The split point the owner was working for when it made this one.
    parent: Option<Arc<Split>>,
}

impl Split {
    /// This split point or one above it is cut.
    #[inline]
    fn abandoned(&self) -> bool {
        let mut at = Some(self);
        while let Some(s) = at {
            if s.cut.load(Ordering::Relaxed) {
                return true;
            }
            at = s.parent.as_deref();
        }
        false
    }

    /// Moves are left to hand out.
    fn has_work(&self) -> bool {
        self.next.load(Ordering::Relaxed) < self.len && !self.abandoned()
    }

    /// `ancestor` is this split point or one above it.
    fn below(&self, ancestor: &Split) -> bool {
        let mut at = Some(self);
        while let Some(s) = at {
            if std::ptr::eq(s, ancestor) {
                return true;
            }
            at = s.parent.as_deref();
        }
        false
    }
}

/// The locked list of open split points, and whether the search is over.
type OpenGuard<'s> = MutexGuard<'s, (Vec<Arc<Split>>, bool)>;

/// The split points open to helpers, and the sleeping threads.
struct Shared {
    open: Mutex<(Vec<Arc<Split>>, bool)>,
    wake: Condvar,
    /// Threads waiting for work: a node splits only when this is above 0.
    idle: AtomicUsize,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            open: Mutex::new((Vec::new(), false)),
            wake: Condvar::new(),
            idle: AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> OpenGuard<'_> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The search is over: helpers leave.
    fn finish(&self) {
        self.lock().1 = true;
        self.wake.notify_all();
    }
}

/// The exact value of `(me, opp)` on `board` by one full-window search on `table` (tests and
/// benchmarks), with the nodes searched.
pub fn solve(board: Board, me: u64, opp: u64, table: &Table) -> (i32, u64) {
    solve_threads(board, me, opp, table, 1)
}

/// [`solve`] with `threads` threads on the shared table.
pub fn solve_threads(board: Board, me: u64, opp: u64, table: &Table, threads: usize) -> (i32, u64) {
    solve_window_threads(board, me, opp, -SCORE_INF, SCORE_INF, table, threads)
}

/// The fail-soft value of `(me, opp)` for the window `(alpha, beta)` (tests).
pub fn solve_window(
    board: Board,
    me: u64,
    opp: u64,
    alpha: i32,
    beta: i32,
    table: &Table,
) -> (i32, u64) {
    solve_window_threads(board, me, opp, alpha, beta, table, 1)
}

/// [`solve_window`] with `threads` threads on the shared table.
pub fn solve_window_threads(
    board: Board,
    me: u64,
    opp: u64,
    alpha: i32,
    beta: i32,
    table: &Table,
    threads: usize,
) -> (i32, u64) {
    let (v, stats) = solve_window_stats(board, me, opp, alpha, beta, table, threads);
    (v, stats.nodes)
}

/// [`solve_threads`] with the search's [`Stats`] (benchmarks).
pub fn solve_stats(board: Board, me: u64, opp: u64, table: &Table, threads: usize) -> (i32, Stats) {
    solve_window_stats(board, me, opp, -SCORE_INF, SCORE_INF, table, threads)
}

fn solve_window_stats(
    board: Board,
    me: u64,
    opp: u64,
    alpha: i32,
    beta: i32,
    table: &Table,
    threads: usize,
) -> (i32, Stats) {
    let ctl = Control::unlimited();
    let (words, salt) = table.raw_words();
    let (found, stats) = run(&board, me, opp, alpha, beta, words, salt, &ctl, threads);
    (found.expect("an unlimited search finishes").0, stats)
}

/// A table hit.
struct Hit {
    score: i32,
    bound: u64,
    mv: u64,
}

/// The state of one search thread.
struct Solver<'a> {
    board: &'a Board,
    words: &'a [AtomicU64],
    salt: u64,
    buckets: u64,
    ctl: &'a Control,
    /// Raised when a thread was stopped by `ctl`: every thread halts.
    stop: &'a AtomicBool,
    /// The split points of a search with helpers (`None`: one thread).
    shared: Option<&'a Shared>,
    /// The split point this thread works for (its moves and those below it), if any.
    current: Option<Arc<Split>>,
    count: NodeCount,
    stopped: bool,
    root_move: Option<u8>,
    idle: Duration,
    splits: u64,
}

impl<'a> Solver<'a> {
    fn new(
        board: &'a Board,
        words: &'a [AtomicU64],
        salt: u64,
        ctl: &'a Control,
        stop: &'a AtomicBool,
        shared: Option<&'a Shared>,
    ) -> Self {
        Solver {
            board,
            words,
            salt: salt ^ board.empties.key_salt(),
            buckets: (words.len() / 4) as u64,
            ctl,
            stop,
            shared,
            current: None,
            count: NodeCount::default(),
            stopped: false,
            root_move: None,
            idle: Duration::ZERO,
            splits: 0,
        }
    }

    #[cold]
    fn poll(&mut self) {
        self.count.flush(self.ctl);
        if self.ctl.should_stop().is_some() {
            self.stopped = true;
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    /// The current search must be abandoned: a limit stopped some thread, or the split point
    /// this thread works for (or one above it) is cut. A halted search stores nothing.
    #[inline(always)]
    fn halted(&self) -> bool {
        self.stopped
            || (self.shared.is_some()
                && (self.stop.load(Ordering::Relaxed)
                    || self.current.as_deref().is_some_and(Split::abandoned)))
    }

    /// Searches the moves of `sp` one after the other as they are handed out, merging each
    /// value, until none is left or the split point is cut.
    fn work_at(&mut self, sp: &Split) {
        loop {
            if sp.cut.load(Ordering::Relaxed) {
                return;
            }
            let i = sp.next.fetch_add(1, Ordering::Relaxed);
            if i >= sp.len {
                return;
            }
            let sq = (sp.list[i] & 0xff) as u32;
            let f = self.board.flips(sp.me, sp.opp, sq);
            let (m2, o2) = (sp.me | f | 1 << sq, sp.opp & !f);
            // A null window: the split point's own (split points are null-window nodes).
            let a = sp.beta - 1;
            let v = -self.node(o2, m2, -sp.beta, -a, false);
            if self.halted() {
                return;
            }
            let mut m = sp.merged.lock().unwrap_or_else(|e| e.into_inner());
            if v > m.0 {
                m.0 = v;
                m.1 = sq as u64;
                if v >= sp.beta {
                    sp.cut.store(true, Ordering::Relaxed);
                }
            }
        }
    }

    /// Joins the open split point `sp` (its helper count was raised under the lock), works
    /// there, and leaves it.
    fn join(&mut self, shared: &Shared, sp: Arc<Split>) {
        let outer = self.current.replace(sp.clone());
        self.work_at(&sp);
        self.current = outer;
        let _open = shared.lock();
        sp.helpers.fetch_sub(1, Ordering::Relaxed);
        shared.wake.notify_all();
    }

    /// A helper's life: join split points as they open, sleep in between, until the search is
    /// over. The split point with the most empties is joined first (the biggest piece of work).
    fn help_until_done(&mut self, shared: &Shared) {
        let mut open = shared.lock();
        loop {
            if open.1 {
                return;
            }
            open = self.help_or_sleep(shared, open, |sp| sp.has_work());
        }
    }

    /// One wait for work, the lock `open` held: joins the open split point that `eligible`
    /// accepts with the most empties (the biggest piece of work), or else sleeps until woken.
    /// Gives the lock back.
    fn help_or_sleep<'s>(
        &mut self,
        shared: &'s Shared,
        open: OpenGuard<'s>,
        eligible: impl Fn(&Split) -> bool,
    ) -> OpenGuard<'s> {
        let pick = open
            .0
            .iter()
            .filter(|sp| eligible(sp))
            .max_by_key(|sp| (!(sp.me | sp.opp) & self.board.valid).count_ones())
            .cloned();
        if let Some(sp) = pick {
            sp.helpers.fetch_add(1, Ordering::Relaxed);
            drop(open);
            self.join(shared, sp);
            return shared.lock();
        }
        let t = Instant::now();
        shared.idle.fetch_add(1, Ordering::Relaxed);
        let open = shared.wake.wait(open).unwrap_or_else(|e| e.into_inner());
        shared.idle.fetch_sub(1, Ordering::Relaxed);
        self.idle += t.elapsed();
        open
    }

    /// Shares the moves `moves` of the node `(me, opp)` (the null window below `beta`, first
    /// move searched: `best` by `best_move`) with the idle threads; returns the merged best value
    /// and move once every move is searched or the node is cut.
    #[allow(clippy::too_many_arguments)]
    fn split(
        &mut self,
        shared: &Shared,
        me: u64,
        opp: u64,
        beta: i32,
        moves: &[u64],
        best: i32,
        best_move: u64,
    ) -> (i32, u64) {
        let mut list = [0u64; 64];
        list[..moves.len()].copy_from_slice(moves);
        let sp = Arc::new(Split {
            me,
            opp,
            beta,
            list,
            len: moves.len(),
            next: AtomicUsize::new(0),
            cut: AtomicBool::new(false),
            merged: Mutex::new((best, best_move)),
            helpers: AtomicUsize::new(0),
            parent: self.current.clone(),
        });
        self.splits += 1;
        shared.lock().0.push(sp.clone());
        shared.wake.notify_all();
        let outer = self.current.replace(sp.clone());
        self.work_at(&sp);
        // Closed to newcomers; then help below until the helpers are done.
        let mut open = shared.lock();
        open.0.retain(|x| !Arc::ptr_eq(x, &sp));
        while sp.helpers.load(Ordering::Relaxed) > 0 {
            open = self.help_or_sleep(shared, open, |x| x.has_work() && x.below(&sp));
        }
        drop(open);
        self.current = outer;
        let m = sp.merged.lock().unwrap_or_else(|e| e.into_inner());
        (m.0, m.1)
    }

    #[inline(always)]
    fn bucket(&self, key: u64) -> usize {
        (((key as u128 * self.buckets as u128) >> 64) as usize) * 4
    }

    /// The data word of `key`'s entry, if the table holds one.
    fn probe_data(&self, key: u64) -> Option<u64> {
        if self.buckets == 0 {
            return None;
        }
        let b = self.bucket(key);
        (0..2).find_map(|slot| {
            let check = self.words[b + 2 * slot].load(Ordering::Relaxed);
            let data = self.words[b + 2 * slot + 1].load(Ordering::Relaxed);
            (check ^ data ^ self.salt == key && data >> 8 & 3 != 0).then_some(data)
        })
    }

    #[inline]
    fn probe(&self, key: u64) -> Option<Hit> {
        if self.buckets == 0 {
            return None;
        }
        let b = self.bucket(key);
        for slot in 0..2 {
            let check = self.words[b + 2 * slot].load(Ordering::Relaxed);
            let data = self.words[b + 2 * slot + 1].load(Ordering::Relaxed);
            let bound = data >> 8 & 3;
            if check ^ data ^ self.salt == key && bound != 0 {
                return Some(Hit {
                    score: (data & 0xff) as i32 - 128,
                    bound,
                    mv: data >> 10 & 127,
                });
            }
        }
        None
    }

    #[inline]
    fn store(&self, key: u64, empties: u32, score: i32, bound: u64, mv: u64) {
        if self.buckets == 0 {
            return;
        }
        let b = self.bucket(key);
        let data = (empties as u64) << 17 | mv << 10 | bound << 8 | (score + 128) as u64;
        // Slot 0 keeps the deepest entry (or this position's own); else slot 1.
        let check0 = self.words[b].load(Ordering::Relaxed);
        let data0 = self.words[b + 1].load(Ordering::Relaxed);
        let own0 = check0 ^ data0 ^ self.salt == key;
        let deep0 = (data0 >> 17 & 127) as u32;
        let slot = if own0 || data0 >> 8 & 3 == 0 || deep0 <= empties {
            0
        } else {
            1
        };
        self.words[b + 2 * slot].store(key ^ data ^ self.salt, Ordering::Relaxed);
        self.words[b + 2 * slot + 1].store(data, Ordering::Relaxed);
    }

    /// Negamax, fail-soft, for `empties >= 1`; `root` records the best move.
    fn node(&mut self, me: u64, opp: u64, mut alpha: i32, beta: i32, root: bool) -> i32 {
        let empty = self.board.valid & !(me | opp);
        let n = empty.count_ones();
        if n <= LEAF_EMPTIES && !root {
            return self.leaf(me, opp, alpha, beta, empty, false);
        }
        self.count.nodes += 1;
        if self.count.nodes & (POLL_INTERVAL - 1) == 0 {
            self.poll();
        }
        if self.halted() {
            return 0;
        }
        if n >= STABILITY_EMPTIES && !root {
            if let Some(v) = self.stability_cut(me, opp, alpha, beta) {
                return v;
            }
        }
        let moves = self.board.moves(me, opp);
        if moves == 0 {
            if self.board.moves(opp, me) == 0 {
                return self.board.end_score(me, opp);
            }
            if root {
                self.root_move = Some(PASS);
            }
            return -self.node(opp, me, -beta, -alpha, false);
        }
        let use_table = n >= TABLE_EMPTIES || root;
        let key = key_of(me, opp);
        let mut table_move = NO_MOVE;
        if use_table {
            if let Some(h) = self.probe(key) {
                if !root {
                    match h.bound {
                        EXACT => return h.score,
                        LOWER if h.score >= beta => return h.score,
                        UPPER if h.score <= alpha => return h.score,
                        _ => {}
                    }
                }
                table_move = h.mv;
            }
        }
        // The moves, ordered: sort keys packed with the square (`key << 8 | square`), insertion
        // sort on the stack.
        let mut list = [0u64; 64];
        let mut len = 0;
        let odd = self.board.odd_regions(empty);
        let etc = n >= ETC_EMPTIES && !root;
        let sort_depth = (n >= SORT_EMPTIES).then(|| ((n - SORT_BASE) / 2).min(SORT_MAX_DEPTH));
        let mut rest = moves;
        while rest != 0 {
            let sq = rest.trailing_zeros();
            rest &= rest - 1;
            let bit = 1u64 << sq;
            let key: u64 = if sq as u64 == table_move {
                0
            } else if n >= MOBILITY_EMPTIES {
                let f = self.board.flips(me, opp, sq);
                let (m2, o2) = (me | f | bit, opp & !f);
                let empty2 = empty & !bit;
                if etc {
                    // A child whose value is known to be at most -beta: this node fails high.
                    if let Some(h) = self.probe(key_of(o2, m2)) {
                        if matches!(h.bound, UPPER | EXACT) && -h.score >= beta {
                            self.store(key, n, -h.score, LOWER, sq as u64);
                            return -h.score;
                        }
                    }
                }
                if o2 == 0 {
                    // A wipe-out: the best there is.
                    1
                } else {
                    let replies = self.board.moves(o2, m2);
                    let mobility =
                        replies.count_ones() + (replies & self.board.corners).count_ones();
                    let potential = (self.board.neighbours(m2) & empty2).count_ones();
                    let mut score = (64 - mobility as u64) * W_MOBILITY
                        + self.board.corner_stability(m2) as u64 * W_CORNER_STABILITY
                        + (64 - potential as u64) * W_POTENTIAL_MOBILITY;
                    score += if bit & self.board.tiers[0] != 0 {
                        3
                    } else if bit & self.board.tiers[1] != 0 {
                        2
                    } else {
                        0
                    };
                    if bit & odd != 0 {
                        score += W_PARITY;
                    }
                    if let Some(depth) = sort_depth {
                        let v = -self.shallow(o2, m2, depth, -EVAL_MAX, EVAL_MAX);
                        score += (v + EVAL_MAX) as u64 * W_EVAL;
                    }
                    (1 << 40) - score
                }
            } else {
                let mut k = 64;
                if bit & odd == 0 {
                    k += 16;
                }
                if bit & self.board.corners != 0 {
                    k -= 8;
                }
                k
            };
            let item = key << 8 | sq as u64;
            let mut i = len;
            while i > 0 && list[i - 1] > item {
                list[i] = list[i - 1];
                i -= 1;
            }
            list[i] = item;
            len += 1;
        }
        let alpha0 = alpha;
        let mut best = -SCORE_INF;
        let mut best_move = NO_MOVE;
        // Split points are null-window nodes: a wider window's alpha rises while helpers search
        // with the old one, and each of their fail-highs then costs a wide re-search.
        let can_split = self.shared.is_some() && n >= SPLIT_EMPTIES && beta - alpha == 1;
        for t in 0..len {
            if t > 0 && can_split {
                if let Some(shared) = self.shared.filter(|s| s.idle.load(Ordering::Relaxed) > 0) {
                    (best, best_move) =
                        self.split(shared, me, opp, beta, &list[t..len], best, best_move);
                    if self.halted() {
                        return 0;
                    }
                    break;
                }
            }
            let sq = (list[t] & 0xff) as u32;
            let bit = 1u64 << sq;
            let f = self.board.flips(me, opp, sq);
            let (m2, o2) = (me | f | bit, opp & !f);
            let v = if t == 0 {
                -self.node(o2, m2, -beta, -alpha, false)
            } else {
                let mut v = -self.node(o2, m2, -alpha - 1, -alpha, false);
                if v > alpha && v < beta && beta - alpha > 1 {
                    v = -self.node(o2, m2, -beta, -v, false);
                }
                v
            };
            if self.halted() {
                return 0;
            }
            if v > best {
                best = v;
                best_move = sq as u64;
                if v > alpha {
                    alpha = v;
                }
                if v >= beta {
                    break;
                }
            }
        }
        if root {
            self.root_move = Some(best_move as u8);
        }
        if use_table {
            let bound = if best <= alpha0 {
                UPPER
            } else if best >= beta {
                LOWER
            } else {
                EXACT
            };
            self.store(key, n, best, bound, best_move);
        }
        best
    }

    /// Depth-limited fail-soft negamax on [`Board::evaluate`], for move ordering (finished
    /// games: see [`EVAL_WIN`]). Its nodes count.
    fn shallow(&mut self, me: u64, opp: u64, depth: u32, mut alpha: i32, beta: i32) -> i32 {
        self.count.nodes += 1;
        if depth == 0 {
            return self.board.evaluate(me, opp);
        }
        let moves = self.board.moves(me, opp);
        if moves == 0 {
            if self.board.moves(opp, me) == 0 {
                let score = self.board.end_score(me, opp);
                return score.signum() * EVAL_WIN + 32 * score;
            }
            return -self.shallow(opp, me, depth, -beta, -alpha);
        }
        let mut best = -EVAL_MAX;
        for tier in self.board.tiers {
            let mut rest = moves & tier;
            while rest != 0 {
                let sq = rest.trailing_zeros();
                rest &= rest - 1;
                let f = self.board.flips(me, opp, sq);
                let v = -self.shallow(opp & !f, me | f | 1 << sq, depth - 1, -beta, -alpha);
                if v > best {
                    best = v;
                    if v >= beta {
                        return v;
                    }
                    alpha = alpha.max(v);
                }
            }
        }
        best
    }

    /// The stability bounds: the other side ends with at least its stable discs, so the side to
    /// move scores at most `squares - 2 * stable(opp)`; likewise at least `2 * stable(me) -
    /// squares`. A bound outside the window is returned (fail-soft). The stable discs are
    /// only computed when the disc counts leave a cut possible.
    #[inline]
    fn stability_cut(&self, me: u64, opp: u64, alpha: i32, beta: i32) -> Option<i32> {
        let squares = self.board.valid.count_ones() as i32;
        let up_possible = squares - 2 * opp.count_ones() as i32 <= alpha;
        let down_possible = 2 * me.count_ones() as i32 - squares >= beta;
        if !up_possible && !down_possible {
            return None;
        }
        let full = self.board.full_lines(me | opp);
        if up_possible {
            let upper = squares - 2 * self.board.stable(opp, full).count_ones() as i32;
            if upper <= alpha {
                return Some(upper);
            }
        }
        if down_possible {
            let lower = 2 * self.board.stable(me, full).count_ones() as i32 - squares;
            if lower >= beta {
                return Some(lower);
            }
        }
        None
    }

    /// The last few empties: no table, no move generation; `passed` when the other side just
    /// passed.
    fn leaf(&mut self, me: u64, opp: u64, alpha: i32, beta: i32, empty: u64, passed: bool) -> i32 {
        let rest = empty & empty.wrapping_sub(1);
        if rest & rest.wrapping_sub(1) == 0 {
            if rest != 0 {
                let (x1, x2) = (empty.trailing_zeros(), rest.trailing_zeros());
                return self.two(me, opp, alpha, beta, x1, x2, passed);
            }
            self.count.nodes += 1;
            if empty == 0 {
                return self.board.end_score(me, opp);
            }
            return self.last(me, opp, empty.trailing_zeros());
        }
        self.count.nodes += 1;
        let odd = self.board.odd_regions(empty);
        let mut best = -SCORE_INF;
        let mut a = alpha;
        let even = empty & !odd;
        let t = &self.board.tiers;
        for set in [
            odd & t[0],
            odd & t[1],
            odd & t[2],
            even & t[0],
            even & t[1],
            even & t[2],
        ] {
            let mut rest = set;
            while rest != 0 {
                let sq = rest.trailing_zeros();
                rest &= rest - 1;
                if self.board.neighbour[sq as usize] & opp == 0 {
                    continue;
                }
                let f = self.board.flips(me, opp, sq);
                if f == 0 {
                    continue;
                }
                let bit = 1u64 << sq;
                let v = -self.leaf(opp & !f, me | f | bit, -beta, -a, empty & !bit, false);
                if v > best {
                    best = v;
                    if v >= beta {
                        return v;
                    }
                    if v > a {
                        a = v;
                    }
                }
            }
        }
        if best == -SCORE_INF {
            if passed {
                return self.board.end_score(me, opp);
            }
            return -self.leaf(opp, me, -beta, -alpha, empty, true);
        }
        best
    }

    /// Two empty squares `x1`, `x2`: each move answered by [`Solver::last`]; `passed` when the
    /// other side just passed.
    #[allow(clippy::too_many_arguments)]
    fn two(
        &mut self,
        me: u64,
        opp: u64,
        alpha: i32,
        beta: i32,
        x1: u32,
        x2: u32,
        passed: bool,
    ) -> i32 {
        self.count.nodes += 1;
        let mut best = -SCORE_INF;
        let nb = &self.board.neighbour;
        let f = if nb[x1 as usize] & opp != 0 {
            self.board.flips(me, opp, x1)
        } else {
            0
        };
        if f != 0 {
            self.count.nodes += 1;
            best = -self.last(opp & !f, me | f | 1 << x1, x2);
            if best >= beta {
                return best;
            }
        }
        let f = if self.board.neighbour[x2 as usize] & opp != 0 {
            self.board.flips(me, opp, x2)
        } else {
            0
        };
        if f != 0 {
            self.count.nodes += 1;
            let v = -self.last(opp & !f, me | f | 1 << x2, x1);
            if v > best {
                best = v;
            }
        }
        if best == -SCORE_INF {
            if passed {
                return self.board.end_score(me, opp);
            }
            return -self.two(opp, me, -beta, -alpha, x1, x2, true);
        }
        best
    }

    /// The value of a position with one empty square `sq`: after a move there the board is
    /// full; when neither side can play, the game ends with `sq` empty.
    #[inline(always)]
    fn last(&mut self, me: u64, opp: u64, sq: u32) -> i32 {
        let d = disc_difference(me, opp);
        let f = self.board.flips(me, opp, sq);
        if f != 0 {
            return d + 1 + 2 * f.count_ones() as i32;
        }
        let g = self.board.flips(opp, me, sq);
        if g != 0 {
            return d - 1 - 2 * g.count_ones() as i32;
        }
        self.board.end_score(me, opp)
    }

    /// The line of table moves from the root (stops where the table has no legal move).
    fn principal_variation(&self, mut me: u64, mut opp: u64, first: Option<u8>) -> Vec<u8> {
        let mut pv = Vec::new();
        let mut next = first;
        while let Some(mv) = next {
            if pv.len() > 128 {
                break;
            }
            if mv == PASS {
                if self.board.moves(me, opp) != 0 {
                    break;
                }
            } else {
                let f = self.board.flips(me, opp, mv as u32);
                if mv >= 64 || (me | opp) >> mv & 1 != 0 || f == 0 {
                    break;
                }
                me |= f | 1 << mv;
                opp &= !f;
            }
            pv.push(mv);
            (me, opp) = (opp, me);
            next = if self.board.moves(me, opp) == 0 {
                if self.board.moves(opp, me) == 0 {
                    None
                } else {
                    Some(PASS)
                }
            } else {
                self.probe(key_of(me, opp))
                    .map(|h| h.mv)
                    .filter(|&m| m != NO_MOVE)
                    .map(|m| m as u8)
            };
        }
        pv
    }
}

#[cfg(test)]
mod tests;
