//! Morpion Solitaire, variants 5T (touching) and 5D (disjoint), from the 36-dot Greek cross.
//!
//! A move puts a new dot on an empty grid point and draws a line of 5 consecutive points through
//! it (horizontal, vertical or diagonal) whose other 4 points are dots. Lines in the same
//! direction may not overlap: in 5T they may share an end point (no shared unit segment), in 5D
//! they may share no point at all. Lines in different directions may cross. The game ends when
//! no move is left; the score is the number of moves (records: 5D 82, 5T 178).
//!
//! Board: a 64 x 64 grid around the cross, with bitboards per direction in lane coordinates so
//! that a line's 5 points are 5 consecutive bits of one word: a line test is a shift, a mask and a
//! popcount, and legal moves are kept incrementally (layout: docs/games.md, "Morpion Solitaire").
//!
//! Moves: `((start * 4 + dir) * 5 + pos)`, `start` the line's first point, `dir` 0..3 for
//! `-` (1,0), `|` (0,1), `\` (1,1), `/` (1,-1), `pos` 0..4 the new dot's index along the line.
//! NRPA codes, game parameter `code`: `line` (the default) codes the line only, `start * 4 + dir`
//! ([`LINE_CODE_SPACE`]), as anagorko's morpion-lpp NRPA does; `move` gives each move its own code
//! ([`CODE_SPACE`]). Line codes score clearly better (docs/nrpa.md, "Morpion scores").
//!
//! Notation: Pentasol `.psol` or an MSR JSON record (docs/API.md, section 4); output uses the
//! reference (28,28) of the published records; an illegal move is reported with its number.

use crate::games::entry::{self as catalogue, Family, Visitor};
use crate::model::settings::{DefaultValue, Opts, SolveError, Spec};
use crate::model::single::SinglePlayer;
use crate::model::{Game, MoveCodes, NotationError, Turn};

const SIZE: i32 = 64;
const POINTS: usize = (SIZE * SIZE) as usize;
/// Lanes per direction (127 used by the diagonals).
const LANES: usize = 128;
/// Grid coordinate of cross-local 0.
const OFF: i32 = 27;
/// Reference point written into `.psol` output (the one of the published records).
const OUT_REF: (i32, i32) = (28, 28);
/// Number of distinct moves (and NRPA codes).
pub const CODE_SPACE: usize = POINTS * 4 * 5;
/// Number of distinct lines (NRPA codes with `code=line`).
pub const LINE_CODE_SPACE: usize = POINTS * 4;
const DIRS: [(i32, i32); 4] = [(1, 0), (0, 1), (1, 1), (1, -1)];
const DIR_CHARS: [char; 4] = ['-', '|', '\\', '/'];
const MSR_DIRS: [&str; 4] = ["H", "V", "DN", "DP"];

/// The two rule variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Touching: same-direction lines may share an end point.
    T5,
    /// Disjoint: same-direction lines share no point.
    D5,
}

/// What an NRPA move code identifies (game parameter `code`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeKind {
    /// Line and new dot: the move itself (`code=move`).
    Move,
    /// The line only (`code=line`, the default): start point and direction.
    Line,
}

/// Morpion Solitaire in one variant.
#[derive(Clone, Debug)]
pub struct Morpion {
    variant: Variant,
    /// NRPA codes: the move, or its line only.
    line_codes: bool,
    start: MorpionState,
    /// Per direction and lane, the first and last bit where a line of 5 starts on the grid.
    bit_range: Box<[[(u8, u8); LANES]; 4]>,
    /// For the 9 points of a lane around a new dot (bit 4), given which of them are empty: the
    /// starts `j` (0..4, line bits j..j+4) whose line misses exactly one point.
    one_missing: Box<[u8; 512]>,
    /// The same 9 points' line-usage bits: the starts whose line uses nothing used.
    unused: Box<[u8; 512]>,
}

/// A position: dots, line usage per direction, legal moves, and the moves played.
#[derive(Debug)]
pub struct MorpionState {
    dots: [[u64; LANES]; 4],
    used: [[u64; LANES]; 4],
    /// Legal moves as [`Entry`] words.
    legal: Vec<u64>,
    history: Vec<u32>,
}

impl Clone for MorpionState {
    fn clone(&self) -> Self {
        MorpionState {
            dots: self.dots,
            used: self.used,
            legal: self.legal.clone(),
            history: self.history.clone(),
        }
    }
    /// Reuses the vectors' memory: kernels that restart from a root allocate nothing.
    fn clone_from(&mut self, o: &Self) {
        self.dots = o.dots;
        self.used = o.used;
        self.legal.clone_from(&o.legal);
        self.history.clone_from(&o.history);
    }
}

/// A legal move with what the incremental update needs, packed in one word:
///
/// ```text
/// bits  0..17  the move (its code)           bits 37..49  the new dot's grid point
/// bits 17..31  the line (`start * 4 + dir`,  bits 49..55  first bit of the line in its lane
///              the move's line code)         bits 55..57  direction, bits 57..64 lane
/// ```
///
/// Bits 49..64 are the line's place `bit | dir << 6 | lane << 8` ([`Entry::place`]): the lines
/// of one lane and direction that a new line overlaps have consecutive places. Dot and place
/// sit high so that the filter of every move tests them with few operations.
struct Entry;

impl Entry {
    const DOT_SHIFT: u32 = 37;
    const DOT_MASK: u64 = 0xFFF << Self::DOT_SHIFT;
    const PLACE_SHIFT: u32 = 49;

    #[inline(always)]
    fn pack(start: usize, dir: usize, pos: usize) -> u64 {
        let (sx, sy) = xy(start);
        let (l, b) = lane(dir, sx, sy);
        Self::make(start, dir, pos, l, b)
    }
    /// [`Entry::pack`] of the line from bit `b` of lane `l` in direction `dir`.
    #[inline(always)]
    fn pack_lane(dir: usize, l: usize, b: u32, pos: usize) -> u64 {
        let (sx, sy) = lane_point(dir, l, b);
        Self::make(point(sx, sy), dir, pos, l, b)
    }
    /// The entry of the line from `start` (lane `l`, bit `b`) in direction `dir` with new dot
    /// `pos`.
    #[inline(always)]
    fn make(start: usize, dir: usize, pos: usize, l: usize, b: u32) -> u64 {
        let q = (start as isize + pos as isize * STEP[dir & 3]) as u64;
        let line = (start * 4 + dir) as u64;
        (line * 5 + pos as u64)
            | line << 17
            | q << Self::DOT_SHIFT
            | Self::place(dir, l, b) << Self::PLACE_SHIFT
    }
    /// The place of the line from bit `b` of lane `l` in direction `dir`.
    #[inline(always)]
    fn place(dir: usize, l: usize, b: u32) -> u64 {
        b as u64 | (dir as u64) << 6 | (l as u64) << 8
    }
    #[inline(always)]
    fn mv(e: u64) -> u32 {
        (e & 0x1_FFFF) as u32
    }
    #[inline(always)]
    fn dot(e: u64) -> u64 {
        (e & Self::DOT_MASK) >> Self::DOT_SHIFT
    }
    #[inline(always)]
    fn place_of(e: u64) -> u64 {
        e >> Self::PLACE_SHIFT
    }
    #[inline(always)]
    fn line(e: u64) -> u64 {
        e >> 17 & 0x3FFF
    }
}

/// Grid steps of the four directions (`dy * SIZE + dx`).
const STEP: [isize; 4] = [1, SIZE as isize, SIZE as isize + 1, 1 - SIZE as isize];

/// Per direction, `lane` and `bit` of (x, y) as `(lx, ly, lc, bx, by)`: lane = lx * x + ly * y +
/// lc, bit = bx * x + by * y. Arithmetic instead of a `match` on the direction: the direction
/// varies from call to call, and a jump table on it was mispredicted about half the time.
const LANE_OF: [[i32; 5]; 4] = [
    [0, 1, 0, 1, 0],
    [1, 0, 0, 0, 1],
    [1, -1, 63, 0, 1],
    [1, 1, 0, 1, 0],
];
/// Per direction, (x, y) of lane `l`, bit `b` as `(xl, xb, xc, yl, yb)`: x = xl * l + xb * b +
/// xc, y = yl * l + yb * b (the inverse of [`LANE_OF`]).
const POINT_OF: [[i32; 5]; 4] = [
    [0, 1, 0, 1, 0],
    [1, 0, 0, 0, 1],
    [1, 1, -63, 0, 1],
    [0, 1, 0, 1, -1],
];

/// Grid point of lane `l`, bit `b` in direction `d` (inverse of [`lane`]).
#[inline(always)]
fn lane_point(d: usize, l: usize, b: u32) -> (i32, i32) {
    let (l, b) = (l as i32, b as i32);
    let k = &POINT_OF[d & 3];
    (k[0] * l + k[1] * b + k[2], k[3] * l + k[4] * b)
}

/// Lane and bit of grid point (x, y) for direction `d`.
#[inline(always)]
fn lane(d: usize, x: i32, y: i32) -> (usize, u32) {
    let k = &LANE_OF[d & 3];
    (
        (k[0] * x + k[1] * y + k[2]) as usize,
        (k[3] * x + k[4] * y) as u32,
    )
}
#[inline]
fn has_dot(s: &MorpionState, p: usize) -> bool {
    let (x, y) = xy(p);
    s.dots[0][y as usize] >> x & 1 == 1
}
#[inline]
fn set_dot(s: &mut MorpionState, p: usize) {
    let (x, y) = xy(p);
    for d in 0..4 {
        let (l, b) = lane(d, x, y);
        s.dots[d][l] |= 1 << b;
    }
}
#[inline]
fn point(x: i32, y: i32) -> usize {
    (y * SIZE + x) as usize
}
#[inline]
fn xy(p: usize) -> (i32, i32) {
    (p as i32 % SIZE, p as i32 / SIZE)
}

/// A move's parts: line start point, direction, new dot's index.
#[inline]
fn decode(mv: u32) -> (usize, usize, usize) {
    let pos = (mv % 5) as usize;
    let ld = mv / 5;
    ((ld / 4) as usize, (ld % 4) as usize, pos)
}
#[inline]
fn encode(start: usize, dir: usize, pos: usize) -> u32 {
    ((start * 4 + dir) * 5 + pos) as u32
}

/// The 36 dots of the Greek cross in cross-local coordinates.
fn cross() -> Vec<(i32, i32)> {
    let mut v = Vec::new();
    for y in 0..10 {
        let xs: Vec<i32> = match y {
            0 | 9 => (3..=6).collect(),
            1 | 2 | 7 | 8 => vec![3, 6],
            3 | 6 => vec![0, 1, 2, 3, 6, 7, 8, 9],
            _ => vec![0, 9],
        };
        v.extend(xs.into_iter().map(|x| (x, y)));
    }
    v
}

impl Morpion {
    /// The game in `variant`, with line codes ([`CodeKind::Line`]).
    pub fn new(variant: Variant) -> Self {
        let mut s = MorpionState {
            dots: [[0; LANES]; 4],
            used: [[0; LANES]; 4],
            legal: Vec::new(),
            history: Vec::new(),
        };
        for (x, y) in cross() {
            set_dot(&mut s, point(x + OFF, y + OFF));
        }
        let mut bit_range = Box::new([[(1u8, 0u8); LANES]; 4]);
        for (d, ranges) in bit_range.iter_mut().enumerate() {
            for p in 0..POINTS {
                if Self::on_grid(p, d) {
                    let (x, y) = xy(p);
                    let (l, b) = lane(d, x, y);
                    let r = &mut ranges[l];
                    if r.0 > r.1 {
                        *r = (b as u8, b as u8);
                    } else {
                        *r = (r.0.min(b as u8), r.1.max(b as u8));
                    }
                }
            }
        }
        let use_mask: u64 = if variant == Variant::T5 { 0xF } else { 0x1F };
        let mut one_missing = Box::new([0u8; 512]);
        let mut unused = Box::new([0u8; 512]);
        for w in 0..512u64 {
            for j in 0..5 {
                if ((w >> j) & 0x1F).count_ones() == 1 {
                    one_missing[w as usize] |= 1 << j;
                }
                if (w >> j) & use_mask == 0 {
                    unused[w as usize] |= 1 << j;
                }
            }
        }
        let mut g = Morpion {
            line_codes: true,
            bit_range,
            one_missing,
            unused,
            variant,
            start: s.clone(),
        };
        for p in 0..POINTS {
            for d in 0..4 {
                if let Some(pos) = g.line_move(&s, p, d) {
                    s.legal.push(Entry::pack(p, d, pos));
                }
            }
        }
        g.start = s;
        g
    }

    /// The same game with NRPA codes of `kind`.
    pub fn with_codes(mut self, kind: CodeKind) -> Self {
        self.line_codes = kind == CodeKind::Line;
        self
    }

    /// Parses the `code` parameter: `move` or `line`.
    pub fn parse_codes(text: &str) -> Result<CodeKind, String> {
        match text.trim() {
            "move" => Ok(CodeKind::Move),
            "line" => Ok(CodeKind::Line),
            other => Err(format!(
                "morpion code '{}' is not supported (move or line)",
                crate::model::excerpt(other)
            )),
        }
    }

    /// Parses `5T` or `5D`.
    pub fn parse_variant(text: &str) -> Result<Variant, String> {
        match text.trim().to_ascii_uppercase().as_str() {
            "5T" => Ok(Variant::T5),
            "5D" => Ok(Variant::D5),
            other => Err(format!(
                "morpion variant '{}' is not supported (5T or 5D)",
                crate::model::excerpt(other)
            )),
        }
    }

    /// The variant's name (`5T` or `5D`).
    pub fn variant_name(&self) -> &'static str {
        match self.variant {
            Variant::T5 => "5T",
            Variant::D5 => "5D",
        }
    }

    /// Whether the line of 5 from `start` in `dir` lies on the grid.
    #[inline]
    fn on_grid(start: usize, dir: usize) -> bool {
        let (x, y) = xy(start);
        let (dx, dy) = DIRS[dir];
        let (ex, ey) = (x + 4 * dx, y + 4 * dy);
        (0..SIZE).contains(&ex) && (0..SIZE).contains(&ey)
    }

    #[inline]
    fn step(dir: usize) -> isize {
        let (dx, dy) = DIRS[dir];
        (dy * SIZE + dx) as isize
    }

    /// Bits a line from bit 0 uses in its direction's board: 4 segments (5T) or 5 points (5D).
    #[inline(always)]
    fn use_mask(&self) -> u64 {
        if self.variant == Variant::T5 {
            0xF
        } else {
            0x1F
        }
    }

    /// Whether the line from `start` in `dir` avoids every earlier line in that direction.
    #[inline]
    fn free(&self, s: &MorpionState, start: usize, dir: usize) -> bool {
        let (x, y) = xy(start);
        let (l, b) = lane(dir, x, y);
        (s.used[dir][l] >> b) & self.use_mask() == 0
    }

    /// If the line from `start` in `dir` is a legal move, the index of its missing point.
    #[inline]
    fn line_move(&self, s: &MorpionState, start: usize, dir: usize) -> Option<usize> {
        if !Self::on_grid(start, dir) {
            return None;
        }
        let (x, y) = xy(start);
        let (l, b) = lane(dir, x, y);
        let m = (s.dots[dir][l] >> b) & 0x1F;
        if m.count_ones() != 4 || (s.used[dir][l] >> b) & self.use_mask() != 0 {
            return None;
        }
        Some((!m & 0x1F).trailing_zeros() as usize)
    }

    /// Plays move `mv` (new dot `q`, line at `place`, see [`Entry`]).
    #[inline(always)]
    fn play(&self, s: &mut MorpionState, mv: u32, q: usize, place: u64) {
        let (b, dir, l) = (
            (place & 63) as u32,
            (place >> 6 & 3) as usize,
            (place >> 8 & 127) as usize,
        );
        let (qx, qy) = (q as u32 & 63, (q as u32 >> 6) & 63);
        // The new dot in its four lanes (see the module doc for the lane coordinates).
        s.dots[0][qy as usize] |= 1 << qx;
        s.dots[1][qx as usize] |= 1 << qy;
        s.dots[2][(qx + 63 - qy) as usize & 127] |= 1 << qy;
        s.dots[3][(qx + qy) as usize & 127] |= 1 << qx;
        s.used[dir][l] |= self.use_mask() << b;
        s.history.push(mv);
        // Old moves stay legal unless their new dot is q or they now overlap the played line:
        // lines of its lane and direction starting within `reach` bits of it (5T: they may
        // share an end point), whose places are the interval [place - reach, place + reach].
        // Lines start at bits 0..59 only, so the interval's spill below bit 0 (into the
        // previous lane's bits 60..63) holds no line. (Branch-free compaction: which entries go
        // is unpredictable.)
        let legal = &mut s.legal;
        let reach: u64 = if self.variant == Variant::T5 { 3 } else { 4 };
        let lo = place.wrapping_sub(reach);
        let width = 2 * reach + 1;
        let qk = (q as u64) << Entry::DOT_SHIFT;
        let keep = |e: u64| {
            ((e ^ qk) & Entry::DOT_MASK != 0) & (Entry::place_of(e).wrapping_sub(lo) >= width)
        };
        let n = legal.len();
        let p = legal.as_mut_ptr();
        let mut kept = 0;
        // SAFETY: `kept <= i < n = legal.len()` (kept grows by at most 1 per entry read), so
        // every read and write is inside the vector; the new length `kept <= n` only drops
        // entries (plain `u64`s). Two entries per round.
        unsafe {
            let mut i = 0;
            while i + 2 <= n {
                let (e0, e1) = (*p.add(i), *p.add(i + 1));
                let (k0, k1) = (keep(e0), keep(e1));
                *p.add(kept) = e0;
                kept += k0 as usize;
                *p.add(kept) = e1;
                kept += k1 as usize;
                i += 2;
            }
            if i < n {
                let e = *p.add(i);
                *p.add(kept) = e;
                kept += keep(e) as usize;
            }
            legal.set_len(kept);
        }
        // New moves: lines through q with q as one of their 4 dots, by direction.
        // Away from the grid's edge (every game in practice) all 5 lines through q in every
        // direction lie on the grid and q's bit is at least 4 in every lane.
        if (4..=59).contains(&qx) && (4..=59).contains(&qy) {
            self.new_lines::<0>(s, q, qy as usize, qx);
            self.new_lines::<1>(s, q, qx as usize, qy);
            self.new_lines::<2>(s, q, (qx + 63 - qy) as usize, qy);
            self.new_lines::<3>(s, q, (qx + qy) as usize, qx);
        } else {
            self.new_lines_edge(s, q);
        }
    }

    /// The new legal moves through new dot `q` (bit `bq >= 4` of lane `l`) in direction `D`,
    /// all 5 lines through it on the grid: the 9 points of the lane around q (bit 4 of a window)
    /// decide all 5 lines at once, by two table look-ups (exactly one empty point; no used bit).
    #[inline(always)]
    fn new_lines<const D: usize>(&self, s: &mut MorpionState, q: usize, l: usize, bq: u32) {
        let l = l & 127;
        let sh = bq - 4;
        let empty = ((!s.dots[D][l] >> sh) & 0x1FF) as usize;
        let used = ((s.used[D][l] >> sh) & 0x1FF) as usize;
        let mut starts = self.one_missing[empty] & self.unused[used];
        while starts != 0 {
            let j = starts.trailing_zeros();
            starts &= starts - 1;
            let missing = ((empty >> j) & 0x1F).trailing_zeros() as usize;
            let start = (q as isize - (4 - j as isize) * STEP[D]) as usize;
            s.legal.push(Entry::make(start, D, missing, l, sh + j));
        }
    }

    /// [`Morpion::new_lines`] in every direction for a new dot `q` near the grid's edge, where
    /// some lines through it leave the grid (their starts are cut to the lane's grid range).
    #[cold]
    fn new_lines_edge(&self, s: &mut MorpionState, q: usize) {
        let (qx, qy) = xy(q);
        for d in 0..4 {
            let (l, bq) = lane(d, qx, qy);
            let (dots, used) = (s.dots[d][l], s.used[d][l]);
            let window = |x: u64| {
                (if bq >= 4 {
                    x >> (bq - 4)
                } else {
                    x << (4 - bq)
                } & 0x1FF) as usize
            };
            let empty = window(!dots);
            // Starts j = b - (bq - 4) with lo <= b <= hi (bits shifted in from outside the
            // word are outside this range).
            let (lo, hi) = self.bit_range[d][l];
            let first = (lo as i32 - (bq as i32 - 4)).max(0);
            let last = (hi as i32 - (bq as i32 - 4)).min(4);
            if first > last {
                continue;
            }
            let range = ((1u32 << (last + 1)) - (1u32 << first)) as u8;
            let mut starts = self.one_missing[empty] & self.unused[window(used)] & range;
            while starts != 0 {
                let j = starts.trailing_zeros();
                starts &= starts - 1;
                let b = bq + j - 4;
                let missing = (empty >> j) & 0x1F;
                s.legal
                    .push(Entry::pack_lane(d, l, b, missing.trailing_zeros() as usize));
            }
        }
    }

    /// Why a move (start, dir, new dot index) is illegal in `s`, in Pentasol coordinates.
    fn why_illegal(
        &self,
        s: &MorpionState,
        start: usize,
        dir: usize,
        pos: usize,
    ) -> Option<String> {
        if !Self::on_grid(start, dir) {
            return Some("the line leaves the 64 x 64 grid".into());
        }
        let st = Self::step(dir);
        let pt = |k: usize| (start as isize + k as isize * st) as usize;
        if has_dot(s, pt(pos)) {
            return Some(format!("{} is already a dot", fmt_point(pt(pos))));
        }
        for k in 0..5 {
            if k != pos && !has_dot(s, pt(k)) {
                return Some(format!("{} on the line is not a dot", fmt_point(pt(k))));
            }
        }
        if !self.free(s, start, dir) {
            return Some(match self.variant {
                Variant::T5 => format!(
                    "the line overlaps an earlier line in direction {}",
                    DIR_CHARS[dir]
                ),
                Variant::D5 => format!(
                    "the line touches an earlier line in direction {} (5D)",
                    DIR_CHARS[dir]
                ),
            });
        }
        None
    }

    /// Checks a move given by its parts; returns it or the reason.
    fn checked(
        &self,
        s: &MorpionState,
        start: usize,
        dir: usize,
        pos: usize,
    ) -> Result<u32, String> {
        match self.why_illegal(s, start, dir, pos) {
            Some(why) => Err(why),
            None => Ok(encode(start, dir, pos)),
        }
    }

    /// Reads a `.psol` move line with reference `r`.
    fn parse_psol_move(
        &self,
        s: &MorpionState,
        line: &str,
        r: (i32, i32),
    ) -> Result<u32, NotationError> {
        let bad = |msg: &str| NotationError::new(msg.to_string()).with_fragment(line.trim());
        let t = line.trim();
        let shape = "expected '(x,y) D k' with |x|, |y| <= 100000";
        let close = t.find(')').ok_or_else(|| bad(shape))?;
        let (x, y) = parse_pair(&t[..=close]).ok_or_else(|| bad(shape))?;
        let mut rest = t[close + 1..].split_whitespace();
        let d = rest
            .next()
            .and_then(|d| DIR_CHARS.iter().position(|c| d == c.to_string()));
        let d = d.ok_or_else(|| bad("direction must be one of - | \\ /"))?;
        let k: i32 = rest
            .next()
            .and_then(|k| k.trim_start_matches('+').parse().ok())
            .filter(|k: &i32| (-2..=2).contains(k))
            .ok_or_else(|| bad("offset k must be -2..+2"))?;
        if rest.next().is_some() {
            return Err(bad("unexpected text after the move"));
        }
        let (gx, gy) = (x - r.0 + 3 + OFF, y - r.1 + 3 + OFF);
        let pos = (2 - k) as usize;
        let (dx, dy) = DIRS[d];
        let (sx, sy) = (gx - pos as i32 * dx, gy - pos as i32 * dy);
        if !(0..SIZE).contains(&gx)
            || !(0..SIZE).contains(&gy)
            || !(0..SIZE).contains(&sx)
            || !(0..SIZE).contains(&sy)
        {
            return Err(bad("the move leaves the 64 x 64 grid"));
        }
        self.checked(s, point(sx, sy), d, pos).map_err(|e| bad(&e))
    }

    fn parse_msr(&self, text: &str) -> Result<MorpionState, NotationError> {
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| NotationError::new(format!("MSR record is not valid JSON: {e}")))?;
        if let Some(var) = v.get("variant").and_then(|x| x.as_str()) {
            if !var.eq_ignore_ascii_case(self.variant_name()) {
                return Err(NotationError::new(format!(
                    "record is variant {var}, the game is {}",
                    self.variant_name()
                )));
            }
        }
        let moves = v
            .get("moves")
            .and_then(|m| m.as_array())
            .ok_or_else(|| NotationError::new("MSR record has no 'moves' list"))?;
        let mut s = self.start.clone();
        for (i, m) in moves.iter().enumerate() {
            let err = |msg: String| {
                NotationError::new(msg)
                    .with_fragment(m.to_string())
                    .at_move(i + 1)
            };
            let num = |k: &str| {
                m.get(k)
                    .and_then(|x| x.as_i64())
                    .filter(|v| v.abs() <= COORD_LIMIT as i64)
                    .map(|x| x as i32)
            };
            let (Some(x), Some(y), Some(pos)) = (num("x"), num("y"), num("pos")) else {
                return Err(err("a move needs integer x, y and pos".into()));
            };
            let d = m
                .get("dir")
                .and_then(|d| d.as_str())
                .and_then(|d| MSR_DIRS.iter().position(|n| *n == d));
            let Some(d) = d else {
                return Err(err("dir must be one of H V DN DP".into()));
            };
            if !(0..5).contains(&pos) {
                return Err(err("pos must be 0..4".into()));
            }
            let (dx, dy) = DIRS[d];
            let (gx, gy) = (x + OFF, y + OFF);
            let (sx, sy) = (gx - pos * dx, gy - pos * dy);
            if ![gx, gy, sx, sy].iter().all(|c| (0..SIZE).contains(c)) {
                return Err(err("the move leaves the 64 x 64 grid".into()));
            }
            let mv = self
                .checked(&s, point(sx, sy), d, pos as usize)
                .map_err(err)?;
            self.apply(&mut s, mv);
        }
        if let Some(score) = v.get("score").and_then(|x| x.as_u64()) {
            if score as usize != s.history.len() {
                return Err(NotationError::new(format!(
                    "record states score {score} but has {} moves",
                    s.history.len()
                )));
            }
        }
        Ok(s)
    }
}

fn fmt_point(p: usize) -> String {
    let (x, y) = xy(p);
    format!("({},{})", x - OFF - 3 + OUT_REF.0, y - OFF - 3 + OUT_REF.1)
}

/// Largest coordinate magnitude read (far beyond the grid; keeps the arithmetic from overflowing).
const COORD_LIMIT: i32 = 100_000;

fn parse_pair(t: &str) -> Option<(i32, i32)> {
    let inner = t.trim().strip_prefix('(')?.strip_suffix(')')?;
    let (a, b) = inner.split_once(',')?;
    let num = |x: &str| {
        x.trim()
            .parse::<i32>()
            .ok()
            .filter(|v| v.abs() <= COORD_LIMIT)
    };
    Some((num(a)?, num(b)?))
}

impl Game for Morpion {
    type State = MorpionState;
    type Move = u32;

    fn name(&self) -> &'static str {
        "morpion"
    }
    fn num_players(&self) -> usize {
        1
    }
    fn initial_state(&self) -> MorpionState {
        self.start.clone()
    }
    #[inline]
    fn turn(&self, s: &MorpionState) -> Turn {
        if s.legal.is_empty() {
            Turn::Terminal
        } else {
            Turn::Player(0)
        }
    }
    #[inline]
    fn legal_moves(&self, s: &MorpionState, moves: &mut Vec<u32>) {
        moves.clear();
        moves.extend(s.legal.iter().map(|&e| Entry::mv(e)));
    }
    fn apply(&self, s: &mut MorpionState, mv: u32) {
        let (start, dir, pos) = decode(mv);
        let q = (start as isize + pos as isize * STEP[dir]) as usize;
        let (sx, sy) = xy(start);
        let (l, b) = lane(dir, sx, sy);
        self.play(s, mv, q, Entry::place(dir, l, b));
    }
    fn returns(&self, s: &MorpionState, out: &mut [f64]) {
        out[0] = s.history.len() as f64;
    }

    fn parse_position(&self, text: &str) -> Result<MorpionState, NotationError> {
        let t = text.trim();
        if t.starts_with('{') {
            return self.parse_msr(t);
        }
        let mut s = self.start.clone();
        let mut lines = t.lines().map(str::trim).filter(|l| !l.is_empty());
        let Some(first) = lines.next() else {
            return Ok(s);
        };
        let r = parse_pair(first).ok_or_else(|| {
            NotationError::new("a .psol text starts with the reference point '(x,y)'")
                .with_fragment(first)
        })?;
        for (i, line) in lines.enumerate() {
            let mv = self
                .parse_psol_move(&s, line, r)
                .map_err(|e| e.at_move(i + 1))?;
            self.apply(&mut s, mv);
        }
        Ok(s)
    }
    fn format_position(&self, s: &MorpionState) -> String {
        let mut out = format!("({},{})", OUT_REF.0, OUT_REF.1);
        for &mv in &s.history {
            out.push('\n');
            out.push_str(&self.format_move(s, mv));
        }
        out
    }
    fn parse_move(&self, s: &MorpionState, text: &str) -> Result<u32, NotationError> {
        self.parse_psol_move(s, text, OUT_REF)
    }
    fn format_move(&self, _s: &MorpionState, mv: u32) -> String {
        let (start, dir, pos) = decode(mv);
        let q = (start as isize + pos as isize * Self::step(dir)) as usize;
        let k = 2 - pos as i32;
        let ks = if k > 0 {
            format!("+{k}")
        } else {
            k.to_string()
        };
        format!("{} {} {ks}", fmt_point(q), DIR_CHARS[dir])
    }
    fn same_state(&self, a: &MorpionState, b: &MorpionState) -> bool {
        a.history == b.history
    }
}

impl MoveCodes for Morpion {
    #[inline(always)]
    fn code(&self, _s: &MorpionState, mv: u32) -> u64 {
        if self.line_codes {
            (mv / 5) as u64
        } else {
            mv as u64
        }
    }
}

impl SinglePlayer for Morpion {
    /// One pass over the legal entries' moves, then their codes.
    #[inline]
    fn legal_moves_and_codes(&self, s: &MorpionState, moves: &mut Vec<u32>, codes: &mut Vec<u64>) {
        moves.clear();
        moves.extend(s.legal.iter().map(|&e| Entry::mv(e)));
        if self.line_codes {
            codes.extend(s.legal.iter().map(|&e| Entry::line(e)));
        } else {
            codes.extend(moves.iter().map(|&m| m as u64));
        }
    }

    /// Plays the legal entry itself: no decoding of the move.
    #[inline]
    fn apply_legal(&self, s: &mut MorpionState, moves: &[u32], i: usize) {
        let e = s.legal[i];
        debug_assert_eq!(Entry::mv(e), moves[i]);
        self.play(s, Entry::mv(e), Entry::dot(e) as usize, Entry::place_of(e));
    }

    /// Two moves of one sequence place different dots and their lines may share at most what
    /// the variant allows, so playing one never makes the other illegal (and adding dots never
    /// removes a move's four dots).
    fn sequence_moves_commute(&self) -> bool {
        true
    }
    fn code_space(&self) -> Option<usize> {
        Some(if self.line_codes {
            LINE_CODE_SPACE
        } else {
            CODE_SPACE
        })
    }
}

/// `variant`: touching or disjoint lines.
pub const PARAM_VARIANT: Spec = Spec::text("variant", DefaultValue::Word("5T"), "5T or 5D");
/// `code`: the move codes of policy learning.
pub const PARAM_CODE: Spec = Spec::text("code", DefaultValue::Word("line"), "move notation");

/// The catalogue entry of Morpion Solitaire.
pub struct MorpionEntry;

impl catalogue::GameEntry for MorpionEntry {
    const NAME: &'static str = "morpion";
    const PARAMS: &'static [Spec] = &[PARAM_VARIANT, PARAM_CODE];
    const FAMILY: Family = Family::Single;
    type Game = Morpion;
    fn build(params: &Opts) -> Result<Morpion, SolveError> {
        let variant = params.text_value(&PARAM_VARIANT)?;
        let v = Morpion::parse_variant(variant).map_err(SolveError::bad)?;
        let codes =
            Morpion::parse_codes(params.text_value(&PARAM_CODE)?).map_err(SolveError::bad)?;
        params.finish()?;
        Ok(Morpion::new(v).with_codes(codes))
    }
    fn offer<V: Visitor>(game: Morpion, visitor: V) -> V::Output {
        visitor.single(game)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_variants_and_codes_are_quoted_on_one_short_line() {
        let hostile = format!("5\r\n{}", "x".repeat(10_000));
        for e in [
            Morpion::parse_variant(&hostile).map(|_| ()).unwrap_err(),
            Morpion::parse_codes(&hostile).map(|_| ()).unwrap_err(),
        ] {
            assert!(!e.contains('\n') && e.len() < 150, "{e}");
        }
    }
    use crate::model::{battery, single};
    use std::path::PathBuf;

    fn data() -> PathBuf {
        crate::games::data::data_dir().join("nrpa/morpion")
    }

    fn read(rel: &str) -> String {
        std::fs::read_to_string(data().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    #[test]
    fn start_has_28_moves_and_batteries_pass() {
        for v in [Variant::T5, Variant::D5] {
            let g = Morpion::new(v);
            let s = g.initial_state();
            assert_eq!(s.legal.len(), 28, "{v:?}: the cross offers 28 moves");
            battery::check_game(&g, &s, 5, 1);
            single::check_single_player(&g, &s, 10, 2);
            // Line codes (the default) stay distinct among the legal moves (a line has one
            // empty point); move codes too.
            let moves = g.clone().with_codes(CodeKind::Move);
            single::check_single_player(&moves, &s, 10, 2);
            let mv = s.legal.iter().map(|&e| Entry::mv(e)).next().unwrap();
            assert_eq!(g.code(&s, mv), (mv / 5) as u64);
            assert_eq!(moves.code(&s, mv), mv as u64);
            assert_eq!(g.code_space(), Some(LINE_CODE_SPACE));
        }
        assert!(Morpion::parse_codes("dot").is_err());
    }

    /// The moves of `s` by a scan of every line, sorted.
    fn scan_moves(g: &Morpion, s: &MorpionState) -> Vec<u32> {
        let mut scan = Vec::new();
        for p in 0..POINTS {
            for d in 0..4 {
                if let Some(pos) = g.line_move(s, p, d) {
                    scan.push(encode(p, d, pos));
                }
            }
        }
        scan
    }

    /// Near the grid's edge (crosses in the corners and at the sides, where lines through a new
    /// dot leave the grid) incremental legal moves still equal a full scan, and the entries
    /// played directly (`apply_legal`) give the same states as `apply`.
    #[test]
    fn incremental_moves_equal_a_full_scan_at_the_edge() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for v in [Variant::T5, Variant::D5] {
            let g = Morpion::new(v);
            for (ox, oy) in [
                (0, 0),
                (54, 54),
                (0, 54),
                (54, 0),
                (2, 27),
                (27, 53),
                (1, 1),
            ] {
                let mut start = MorpionState {
                    dots: [[0; LANES]; 4],
                    used: [[0; LANES]; 4],
                    legal: Vec::new(),
                    history: Vec::new(),
                };
                for (x, y) in cross() {
                    set_dot(&mut start, point(x + ox, y + oy));
                }
                for p in 0..POINTS {
                    for d in 0..4 {
                        if let Some(pos) = g.line_move(&start, p, d) {
                            start.legal.push(Entry::pack(p, d, pos));
                        }
                    }
                }
                for _ in 0..10 {
                    let (mut a, mut b) = (start.clone(), start.clone());
                    let mut moves = Vec::new();
                    let mut codes = Vec::new();
                    while !a.legal.is_empty() {
                        let mut inc: Vec<u32> = a.legal.iter().map(|&e| Entry::mv(e)).collect();
                        inc.sort_unstable();
                        assert_eq!(inc, scan_moves(&g, &a), "{v:?} cross at ({ox},{oy})");
                        codes.clear();
                        g.legal_moves_and_codes(&b, &mut moves, &mut codes);
                        let want: Vec<u64> = moves.iter().map(|&m| g.code(&b, m)).collect();
                        assert_eq!(codes, want);
                        let i = rng.gen_range(0..moves.len());
                        g.apply(&mut a, moves[i]);
                        g.apply_legal(&mut b, &moves, i);
                        assert_eq!(a.legal, b.legal);
                        assert_eq!((a.dots, a.used), (b.dots, b.used));
                    }
                }
            }
        }
    }

    /// Incremental legal moves equal a scan of every line, along random games.
    #[test]
    fn incremental_moves_equal_a_full_scan() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for v in [Variant::T5, Variant::D5] {
            let g = Morpion::new(v);
            for _ in 0..20 {
                let mut s = g.initial_state();
                while !s.legal.is_empty() {
                    let mut scan = Vec::new();
                    for p in 0..POINTS {
                        for d in 0..4 {
                            if let Some(pos) = g.line_move(&s, p, d) {
                                scan.push(encode(p, d, pos));
                            }
                        }
                    }
                    let mut inc: Vec<u32> = s.legal.iter().map(|&e| Entry::mv(e)).collect();
                    inc.sort_unstable();
                    assert_eq!(inc, scan);
                    let mv = inc[rng.gen_range(0..inc.len())];
                    g.apply(&mut s, mv);
                }
            }
        }
    }

    #[test]
    fn psol_records_replay_to_their_scores() {
        for (file, v, score) in [
            ("5D_82_rosin.psol", Variant::D5, 82),
            ("5T_178_rosin.psol", Variant::T5, 178),
            ("5T_170_bruneau1976.psol", Variant::T5, 170),
        ] {
            let g = Morpion::new(v);
            let text = read(file);
            let s = g
                .parse_position(&text)
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(g.score(&s), score as f64, "{file}");
            assert!(g.is_terminal(&s), "{file} is terminal");
            // Our output replays to the same game.
            let back = g.parse_position(&g.format_position(&s)).unwrap();
            assert!(g.same_state(&back, &s));
        }
        // The 5D record is also a legal (non-terminal) 5T game.
        let s = Morpion::new(Variant::T5)
            .parse_position(&read("5D_82_rosin.psol"))
            .unwrap();
        assert_eq!(s.history.len(), 82);
    }

    /// The grids our own long runs found (docs/records) stay legal,
    /// terminal games of their stated length: a rules change that broke them would show here.
    #[test]
    fn our_record_grids_replay_to_their_scores() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/records");
        let g = Morpion::new(Variant::D5);
        let text = std::fs::read_to_string(dir.join("5D_82_gamesolver_seed11.psol")).unwrap();
        let s = g.parse_position(&text).unwrap();
        assert_eq!(g.score(&s), 82.0);
        assert!(g.is_terminal(&s));
        // Not Rosin's grid move for move.
        assert_ne!(text.trim(), read("5D_82_rosin.psol").trim());
    }

    #[test]
    fn msr_records_replay_to_their_scores() {
        let mut n = 0;
        for v in ["5D", "5T"] {
            let g = Morpion::new(Morpion::parse_variant(v).unwrap());
            for e in std::fs::read_dir(data().join("msr_records").join(v)).unwrap() {
                let path = e.unwrap().path();
                let text = std::fs::read_to_string(&path).unwrap();
                let json: serde_json::Value = serde_json::from_str(&text).unwrap();
                let s = g
                    .parse_position(&text)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert_eq!(
                    g.score(&s),
                    json["score"].as_f64().unwrap(),
                    "{}",
                    path.display()
                );
                assert!(g.is_terminal(&s), "{}", path.display());
                n += 1;
            }
        }
        assert_eq!(n, 11);
        // The JSON and the .psol of Rosin's 82 are the same game.
        let g = Morpion::new(Variant::D5);
        let a = g
            .parse_position(&read("msr_records/5D/rosin82.json"))
            .unwrap();
        let b = g.parse_position(&read("5D_82_rosin.psol")).unwrap();
        assert_eq!(g.format_position(&a), g.format_position(&b));
        let e = Morpion::new(Variant::T5)
            .parse_position(&read("msr_records/5D/rosin82.json"))
            .unwrap_err();
        assert_eq!(e.to_string(), "record is variant 5D, the game is 5T");
    }

    #[test]
    fn rules_example_fifth_move_is_5t_only() {
        let text = read("rules_example_5T_legal_5th.psol");
        assert_eq!(
            Morpion::new(Variant::T5)
                .parse_position(&text)
                .unwrap()
                .history
                .len(),
            5
        );
        let e = Morpion::new(Variant::D5).parse_position(&text).unwrap_err();
        assert_eq!(e.move_number, Some(5));
        assert!(
            e.message.contains("touches an earlier line in direction -"),
            "{e}"
        );
    }

    #[test]
    fn tampered_records_are_rejected_with_move_and_reason() {
        let g = Morpion::new(Variant::D5);
        let text = read("5D_82_rosin.psol");
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        // Move 10 ("(33,33) / 0") shifted by one point: its line no longer has 4 dots.
        assert_eq!(lines[10].trim(), "(33,33) / 0");
        lines[10] = "(34,33) / 0".into();
        let e = g.parse_position(&lines.join("\n")).unwrap_err();
        assert_eq!(e.move_number, Some(10));
        assert!(
            e.to_string().starts_with("move 10 ('(34,33) / 0'): "),
            "{e}"
        );
        assert!(e.message.contains("is not a dot"), "{e}");
        // Moves 3 and 2 swapped: move 2 needs the dot of move 3 first... or is still legal; a
        // repeated move is always illegal: its new dot exists.
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        lines[5] = lines[4].clone();
        let e = g.parse_position(&lines.join("\n")).unwrap_err();
        assert_eq!(e.move_number, Some(5));
        assert!(e.message.contains("is already a dot"), "{e}");
        // A dropped last move makes a legal but non-terminal game; a record JSON with a wrong
        // score is refused.
        let json = read("msr_records/5D/rosin82.json").replace("\"score\": 82", "\"score\": 83");
        assert_eq!(
            g.parse_position(&json).unwrap_err().message,
            "record states score 83 but has 82 moves"
        );
        let mut v: serde_json::Value =
            serde_json::from_str(&read("msr_records/5D/rosin82.json")).unwrap();
        v["moves"][40]["dir"] = "H".into();
        let e = g.parse_position(&v.to_string()).unwrap_err();
        assert_eq!(e.move_number, Some(41), "{e}");
        // Syntax errors name the line.
        let e = g.parse_position("(28,28)\n(27,27) x 0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "move 1 ('(27,27) x 0'): direction must be one of - | \\ /"
        );
        let e = g
            .parse_position("(28,28)\n(2147483647,-2147483648) / 0")
            .unwrap_err();
        assert_eq!(e.move_number, Some(1), "{e}");
        let e = g.parse_position("(2147483647,0)\n(27,27) / 0").unwrap_err();
        assert!(e.to_string().contains("reference point"), "{e}");
        let e = g.parse_position("(27,27) / 0").unwrap_err();
        assert!(e.to_string().contains("reference point"), "{e}");
        assert!(Morpion::parse_variant("4T").is_err());
    }
}
