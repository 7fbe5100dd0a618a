//! Connect Four on any board of W columns and H rows (Tromp's table: 4..11 and beyond).
//!
//! Values (docs/API.md, section 3, generalised to W x H): a draw is 0; a win with the winner's last
//! stone on ply `n` (from 1 on the empty board) scores `1 + (W*H - n) / 2`, a loss its negative.
//! Internally scores are multiplied by [`VALUE_SCALE`] so the threat-counting
//! [`ZeroSum::evaluate`] fits strictly between a draw and a win; users only see scores.
//!
//! Bitboard (after Pons' layout, any size): bit `c * (H + 1) + r` is column `c` (0 = left), row
//! `r` (0 = bottom); each column has a sentinel row on top, so line shifts never carry from one
//! column into the next. For 7 x 6 (49 bits), column 0 holds bits 0..5, column 1 bits 7..12, ...;
//! the top row 6 13 20 ... 48 is the sentinel. A state holds `mask` (every stone) and `current`
//! (the side to move's); playing column `c` is `current ^= mask; mask |= mask + bottom(c)`. The key
//! `current + mask + bottom` is unique per position and never 0. Worked example: `C4State::bits`.
//! The word is generic ([`Word`]): `u64` when `W * (H + 1) <= 64`, `u128` up to 128 bits, [`Wide`]
//! beyond, so the 7 x 6 path is plain 64-bit arithmetic.
//!
//! Notation: columns played, one character each, `1`..`9` then `a`, `b`, ... with `base=1`
//! (`0`..`9`, `a`, ... with `base=0`). Errors name the move (`move 3 ('8'): column 8 is full`). A
//! position is written back as a legal move order rebuilt from the board, not the order typed.

pub mod bits;
pub mod book;
pub mod eval;
pub mod solver;

pub use bits::{Wide, Word};

use crate::games::entry::{BookFn, Family, GameEntry, Visitor};
use crate::games::{Exact, JobLevelLeaf};
use crate::model::settings::{DefaultValue, Opts, SolveError, Spec};
use crate::model::{Game, Hashed, NotationError, Symmetric, Tactics, Turn, ZeroSum};

/// Internal values are scores times this, so the static evaluation (threat counting, at most
/// `VALUE_SCALE - 1` in magnitude) lies strictly between a draw and the smallest win.
pub const VALUE_SCALE: i32 = 100;
/// Largest width (the notation has 9 digits and 26 letters after the base).
pub const MAX_WIDTH: u32 = 35;
/// Largest height.
pub const MAX_HEIGHT: u32 = 64;
/// Largest bitboard: 512 bits (e.g. 16 x 16 = 272 bits, 35 x 13 = 490 bits).
pub const MAX_BITS: u32 = 512;
/// Weight of one threat (a cell that would complete four) in [`ZeroSum::evaluate`].
const THREAT_WEIGHT: i32 = 8;

/// Connect Four on a `width` x `height` board, with bitboards of type `W`.
#[derive(Clone, Debug)]
pub struct Connect4<W: Word = u64> {
    width: u32,
    height: u32,
    base: u8,
    /// Bit 0 of every column.
    bottom: W,
    /// Every playable cell (no sentinel row).
    board: W,
    /// Per column: the cells of the column.
    column: Vec<W>,
    /// Per column: its lowest cell.
    column_bottom: Vec<W>,
    /// Per column: its highest playable cell.
    column_top: Vec<W>,
    /// Columns from the centre outwards (the default move order).
    centre_first: Vec<u8>,
}

/// A position: the side to move's stones, all stones, the number of stones, and whether the
/// last stone made four.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct C4State<W: Word = u64> {
    current: W,
    mask: W,
    moves: u16,
    won: bool,
}

impl<W: Word> C4State<W> {
    /// Stones on the board.
    pub fn moves(&self) -> u32 {
        self.moves as u32
    }
    /// The bitboards (layout in the module doc): the side to move's stones, and every stone.
    ///
    /// ```text
    ///   .  .  .  .  .  .  .      7 x 6, sentinel row: 6 13 20 27 34 41 48
    ///   5 12 19 26 33 40 47
    ///   4 11 18 25 32 39 46
    ///   3 10 17 24 31 38 45
    ///   2  9 16 23 30 37 44
    ///   1  8 15 22 29 36 43
    ///   0  7 14 21 28 35 42
    /// ```
    /// Shifting a row pattern by `H + 1` (horizontal), `H` or `H + 2` (diagonals) or `1`
    /// (vertical) never carries a line across columns. Moves `4 4 5` (1-based columns): X has 21
    /// and 28, O has 22, so O is to move with `current = 1<<22` and `mask = 1<<21 | 1<<22 |
    /// 1<<28`. Playing column `c`, `mask + bottom(c)` carries the column's lowest free bit into
    /// place. The key `current + mask + bottom` (bottom = bit 0 of every column) is in every
    /// column a 1 above the stones followed by the side to move's stones (Pons' key plus the
    /// bottom row, so the empty board's key is not 0).
    pub fn bits(&self) -> (W, W) {
        (self.current, self.mask)
    }
}

/// The smallest bitboard word for a board: what the registry uses to pick the type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordSize {
    /// `u64`.
    U64,
    /// `u128`.
    U128,
    /// [`Wide<4>`] (256 bits).
    W256,
    /// [`Wide<8>`] (512 bits).
    W512,
}

/// Checks the board size and base and returns the word size it needs.
pub fn word_size(width: u32, height: u32, base: u8) -> Result<WordSize, String> {
    if !(1..=MAX_WIDTH).contains(&width) || !(1..=MAX_HEIGHT).contains(&height) {
        return Err(format!(
            "connect4 board {width} x {height} is not supported (width 1..{MAX_WIDTH}, height 1..{MAX_HEIGHT})"
        ));
    }
    if base > 1 {
        return Err(format!("connect4 base={base} must be 0 or 1"));
    }
    if base == 0 && width > 36 {
        return Err("connect4 base=0 names at most 36 columns".into());
    }
    let bits = needed_bits(width, height);
    Ok(match bits {
        0..=64 => WordSize::U64,
        65..=128 => WordSize::U128,
        129..=256 => WordSize::W256,
        257..=MAX_BITS => WordSize::W512,
        _ => {
            return Err(format!(
            "connect4 board {width} x {height} needs {bits} bits; at most {MAX_BITS} are supported"
        ))
        }
    })
}

/// Bits a board needs: its cells with the sentinel row, and room for the longest shift the
/// threat detection makes (three diagonal steps), so no shift reaches past the word.
fn needed_bits(width: u32, height: u32) -> u32 {
    // Saturating: callers check the sizes first, but a product past u32 must never wrap small.
    width
        .saturating_mul(height.saturating_add(1))
        .max(height.saturating_add(2).saturating_mul(3).saturating_add(1))
}

impl<W: Word> Connect4<W> {
    /// A `width` x `height` game; `base` is 1 (columns `1`..) or 0 (columns `0`..). Fails when
    /// the board does not fit in `W` or the size is out of range.
    pub fn new(width: u32, height: u32, base: u8) -> Result<Self, String> {
        word_size(width, height, base)?;
        if needed_bits(width, height) > W::BITS {
            return Err(format!(
                "connect4 board {width} x {height} needs {} bits, more than this bitboard's {}",
                needed_bits(width, height),
                W::BITS
            ));
        }
        let h1 = height + 1;
        let mut bottom = W::ZERO;
        let mut board = W::ZERO;
        let mut column = Vec::new();
        let mut column_bottom = Vec::new();
        let mut column_top = Vec::new();
        for c in 0..width {
            let mut col = W::ZERO;
            for r in 0..height {
                col = col | W::bit(c * h1 + r);
            }
            bottom = bottom | W::bit(c * h1);
            board = board | col;
            column.push(col);
            column_bottom.push(W::bit(c * h1));
            column_top.push(W::bit(c * h1 + height - 1));
        }
        let mut centre_first: Vec<u8> = (0..width as u8).collect();
        // Centre first, then alternately left and right of it (left first on ties).
        let centre2 = width as i32 - 1; // twice the centre column
        centre_first.sort_by_key(|&c| ((2 * c as i32 - centre2).abs(), c));
        Ok(Connect4 {
            width,
            height,
            base,
            bottom,
            board,
            column,
            column_bottom,
            column_top,
            centre_first,
        })
    }

    /// Board width.
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Board height.
    pub fn height(&self) -> u32 {
        self.height
    }
    fn cells(&self) -> i32 {
        (self.width * self.height) as i32
    }

    /// Score (not scaled) of winning with the stone of ply `n` (1-based).
    #[inline]
    fn win_score(&self, n: i32) -> i32 {
        1 + (self.cells() - n) / 2
    }

    /// Whether `pos` has four in a row (any direction).
    #[inline]
    pub fn alignment(&self, pos: W) -> bool {
        let h = self.height;
        for shift in [h + 1, h, h + 2, 1] {
            let m = pos & (pos >> shift);
            if !(m & (m >> (2 * shift))).is_zero() {
                return true;
            }
        }
        false
    }

    /// Empty cells (sentinels excluded) that would complete four for the owner of `pos`,
    /// whether or not they are playable now.
    #[inline]
    fn winning_cells(&self, pos: W, mask: W) -> W {
        let h = self.height;
        // Vertical: three stones below.
        let mut r = (pos << 1) & (pos << 2) & (pos << 3);
        for shift in [h + 1, h, h + 2] {
            // Three in a line on one side, or two and one across the gap.
            let p = (pos << shift) & (pos << (2 * shift));
            r = r | (p & (pos << (3 * shift)));
            r = r | (p & (pos >> shift));
            let p = (pos >> shift) & (pos >> (2 * shift));
            r = r | (p & (pos << shift));
            r = r | (p & (pos >> (3 * shift)));
        }
        r & (self.board ^ mask)
    }

    /// Cells where a stone can be played now (one per non-full column).
    #[inline]
    fn possible(&self, mask: W) -> W {
        mask.add(self.bottom) & self.board
    }

    /// Whether column `c` has room.
    #[inline]
    fn can_play(&self, s: &C4State<W>, c: u8) -> bool {
        (s.mask & self.column_top[c as usize]).is_zero()
    }

    /// Threats the side to move would have after playing `cell` (the move ordering score).
    #[inline]
    fn move_score(&self, s: &C4State<W>, cell: W) -> u32 {
        self.winning_cells(s.current | cell, s.mask | cell)
            .count_ones()
    }

    fn column_char(&self, c: u8) -> char {
        let v = c as u32 + self.base as u32;
        if v < 10 {
            char::from(b'0' + v as u8)
        } else {
            char::from(b'a' + (v - 10) as u8)
        }
    }

    fn parse_column(&self, text: &str) -> Result<u8, NotationError> {
        let t = text.trim();
        let mut chars = t.chars();
        let (Some(ch), None) = (chars.next(), chars.next()) else {
            return Err(NotationError::new("a move is one column character").with_fragment(t));
        };
        let v = match ch {
            '0'..='9' => ch as u32 - '0' as u32,
            'a'..='z' => ch as u32 - 'a' as u32 + 10,
            'A'..='Z' => ch as u32 - 'A' as u32 + 10,
            _ => return Err(NotationError::new("not a column").with_fragment(t)),
        };
        let base = self.base as u32;
        if v < base || v >= base + self.width {
            return Err(NotationError::new(format!(
                "column {ch} is outside the board (columns {}..{})",
                self.column_char(0),
                self.column_char((self.width - 1) as u8)
            ))
            .with_fragment(t));
        }
        Ok((v - base) as u8)
    }

    /// The mirror image of a word (column c goes to column W-1-c).
    fn mirror(&self, w: W) -> W {
        let mut out = W::ZERO;
        let h1 = self.height + 1;
        for c in 0..self.width {
            let col = (w & self.column[c as usize]) >> (c * h1);
            out = out | (col << ((self.width - 1 - c) * h1));
        }
        out
    }

    #[inline]
    fn key(&self, s: &C4State<W>) -> W {
        s.current.add(s.mask).add(self.bottom)
    }

    /// Reconstructs a legal move order for `s` (backwards: take back a top stone of the player
    /// who moved last, never leaving a four on the board).
    fn move_order(&self, s: &C4State<W>) -> Vec<u8> {
        let mut order = Vec::with_capacity(s.moves as usize);
        let mut failed = std::collections::HashSet::new();
        // `last` holds the stones of the player who moved last.
        let last = s.mask ^ s.current;
        let found = self.unplay(last, s.current, &mut order, &mut failed);
        debug_assert!(found, "a state made by legal moves has a legal order");
        order.reverse();
        order
    }

    fn unplay(
        &self,
        last: W,
        other: W,
        order: &mut Vec<u8>,
        failed: &mut std::collections::HashSet<(W, W)>,
    ) -> bool {
        let mask = last | other;
        if mask.is_zero() {
            return true;
        }
        if failed.contains(&(last, other)) {
            return false;
        }
        for c in 0..self.width as u8 {
            let col = mask & self.column[c as usize];
            if col.is_zero() {
                continue;
            }
            // Stones fill a column from the bottom: the top one is at row count - 1.
            let top_cell = W::bit(c as u32 * (self.height + 1) + col.count_ones() - 1);
            if (top_cell & last).is_zero() {
                continue;
            }
            let before = last ^ top_cell;
            if self.alignment(before) {
                continue;
            }
            order.push(c);
            if self.unplay(other, before, order, failed) {
                return true;
            }
            order.pop();
        }
        failed.insert((last, other));
        false
    }
}

impl<W: Word> Game for Connect4<W> {
    type State = C4State<W>;
    type Move = u8;

    fn name(&self) -> &'static str {
        "connect4"
    }
    fn num_players(&self) -> usize {
        2
    }
    fn initial_state(&self) -> C4State<W> {
        C4State {
            current: W::ZERO,
            mask: W::ZERO,
            moves: 0,
            won: false,
        }
    }
    #[inline]
    fn turn(&self, s: &C4State<W>) -> Turn {
        if s.won || s.moves as i32 == self.cells() {
            Turn::Terminal
        } else {
            Turn::Player((s.moves % 2) as u8)
        }
    }
    #[inline]
    fn legal_moves(&self, s: &C4State<W>, moves: &mut Vec<u8>) {
        moves.clear();
        if s.won {
            return;
        }
        for c in 0..self.width as u8 {
            if self.can_play(s, c) {
                moves.push(c);
            }
        }
    }
    #[inline]
    fn apply(&self, s: &mut C4State<W>, c: u8) {
        let mover =
            s.current | (s.mask.add(self.column_bottom[c as usize]) & self.column[c as usize]);
        s.mask = s.mask | mover;
        s.current = s.mask ^ mover;
        s.moves += 1;
        s.won = self.alignment(mover);
    }
    fn returns(&self, s: &C4State<W>, out: &mut [f64]) {
        let v = self.terminal_value(s) as f64 / VALUE_SCALE as f64;
        let side = (s.moves % 2) as usize;
        out[side] = v;
        out[1 - side] = -v;
    }

    fn parse_position(&self, text: &str) -> Result<C4State<W>, NotationError> {
        let mut s = self.initial_state();
        for (i, ch) in text.trim().chars().enumerate() {
            let mut buf = [0u8; 4];
            let mv = self
                .parse_move(&s, ch.encode_utf8(&mut buf))
                .map_err(|e| e.at_move(i + 1))?;
            self.apply(&mut s, mv);
        }
        Ok(s)
    }

    fn format_position(&self, s: &C4State<W>) -> String {
        self.move_order(s)
            .into_iter()
            .map(|c| self.column_char(c))
            .collect()
    }

    fn parse_move(&self, s: &C4State<W>, text: &str) -> Result<u8, NotationError> {
        let c = self.parse_column(text)?;
        if self.is_terminal(s) {
            return Err(NotationError::new("the game is already over").with_fragment(text.trim()));
        }
        if !self.can_play(s, c) {
            return Err(
                NotationError::new(format!("column {} is full", self.column_char(c)))
                    .with_fragment(text.trim()),
            );
        }
        Ok(c)
    }

    fn format_move(&self, _s: &C4State<W>, c: u8) -> String {
        self.column_char(c).to_string()
    }

    fn same_state(&self, a: &C4State<W>, b: &C4State<W>) -> bool {
        a == b
    }
}

impl<W: Word> ZeroSum for Connect4<W> {
    #[inline]
    fn side(&self, s: &C4State<W>) -> u8 {
        (s.moves % 2) as u8
    }
    #[inline]
    fn terminal_value(&self, s: &C4State<W>) -> i32 {
        if s.won {
            // The side to move lost: the winner's last stone was ply `moves`.
            -self.win_score(s.moves as i32) * VALUE_SCALE
        } else {
            0
        }
    }
    fn value_bounds(&self, s: &C4State<W>) -> (i32, i32) {
        if self.is_terminal(s) {
            let v = self.terminal_value(s);
            return (v, v);
        }
        // Best: win with the next stone (ply n+1); worst: lose to the opponent's next (n+2).
        let n = s.moves as i32;
        let hi = self.win_score(n + 1);
        let lo = if n + 2 <= self.cells() {
            -self.win_score(n + 2)
        } else {
            0
        };
        (lo.min(0) * VALUE_SCALE, hi * VALUE_SCALE)
    }
    fn value_to_json(&self, _s: &C4State<W>, value: i32) -> serde_json::Value {
        // Exact values are multiples of the scale; an estimate is shown as a fraction.
        if value % VALUE_SCALE == 0 {
            (value / VALUE_SCALE).into()
        } else {
            (value as f64 / VALUE_SCALE as f64).into()
        }
    }
    fn value_step(&self) -> i32 {
        VALUE_SCALE
    }
    fn parse_target(&self, _s: &C4State<W>, text: &str) -> Result<i32, NotationError> {
        let v: i32 = text
            .trim()
            .parse()
            .map_err(|_| NotationError::new("not an integer score").with_fragment(text.trim()))?;
        v.checked_mul(VALUE_SCALE)
            .ok_or_else(|| NotationError::new("out of range").with_fragment(text.trim()))
    }
    #[inline]
    fn immediate_value(&self, s: &C4State<W>) -> Option<i32> {
        if s.won {
            return None;
        }
        let wins = self.winning_cells(s.current, s.mask) & self.possible(s.mask);
        if wins.is_zero() {
            None
        } else {
            Some(self.win_score(s.moves as i32 + 1) * VALUE_SCALE)
        }
    }
    fn order_moves(&self, s: &C4State<W>, moves: &mut [u8]) {
        // Most threats after the move first, then centre first.
        let rank = |c: u8| {
            let cell = s.mask.add(self.column_bottom[c as usize]) & self.column[c as usize];
            let centre = self.centre_first.iter().position(|&x| x == c).unwrap_or(0);
            (std::cmp::Reverse(self.move_score(s, cell)), centre)
        };
        moves.sort_by_key(|&c| rank(c));
    }
    fn evaluate(&self, s: &C4State<W>) -> i32 {
        // Threat counting: own threats minus the opponent's, weighted; kept strictly inside
        // (-VALUE_SCALE, VALUE_SCALE), i.e. strictly between any real loss and any real win.
        if s.moves as i32 + 2 > self.cells() {
            // One cell left: the opponent can never win, so no estimate below a draw.
            return 0;
        }
        let own = self.winning_cells(s.current, s.mask).count_ones() as i32;
        let theirs = self.winning_cells(s.mask ^ s.current, s.mask).count_ones() as i32;
        ((own - theirs) * THREAT_WEIGHT).clamp(-(VALUE_SCALE - 1), VALUE_SCALE - 1)
    }
}

impl<W: Word> Tactics for Connect4<W> {
    #[inline]
    fn exact_moves(&self, s: &C4State<W>, moves: &mut Vec<u8>) -> (i32, i32) {
        moves.clear();
        let n = s.moves as i32;
        // Pons: without a win at once, the best is a win with our stone after next.
        let hi = if n + 3 <= self.cells() {
            self.win_score(n + 3)
        } else {
            0
        };
        let lose_now = if n + 2 <= self.cells() {
            -self.win_score(n + 2)
        } else {
            0
        };
        let mut possible = self.possible(s.mask);
        let opponent_wins = self.winning_cells(s.mask ^ s.current, s.mask);
        let forced = possible & opponent_wins;
        if !forced.is_zero() {
            if !(forced & forced.sub(W::bit(0))).is_zero() {
                // Two threats to block: the opponent wins with its next stone.
                return (lose_now * VALUE_SCALE, lose_now * VALUE_SCALE);
            }
            possible = forced;
        }
        // Never play right below an opponent's winning cell.
        let safe = possible & !(opponent_wins >> 1);
        if safe.is_zero() {
            return (lose_now * VALUE_SCALE, lose_now * VALUE_SCALE);
        }
        // The opponent cannot win with its next stone any more.
        let lo = if n + 4 <= self.cells() {
            -self.win_score(n + 4)
        } else {
            0
        };
        // Order: most threats after the move, ties centre first (insertion sort, <= W moves).
        let mut scores = [0u32; MAX_WIDTH as usize];
        for &c in &self.centre_first {
            let cell = safe & self.column[c as usize];
            if cell.is_zero() {
                continue;
            }
            let score = self.move_score(s, cell);
            let mut i = moves.len();
            moves.push(c);
            while i > 0 && scores[i - 1] < score {
                moves[i] = moves[i - 1];
                scores[i] = scores[i - 1];
                i -= 1;
            }
            moves[i] = c;
            scores[i] = score;
        }
        (lo.min(0) * VALUE_SCALE, hi.max(0) * VALUE_SCALE)
    }

    fn is_noisy(&self, s: &C4State<W>, c: u8) -> bool {
        // A move onto a cell that completes four for either side: it wins, or it blocks.
        let cell = s.mask.add(self.column_bottom[c as usize]) & self.column[c as usize];
        let either =
            self.winning_cells(s.current, s.mask) | self.winning_cells(s.mask ^ s.current, s.mask);
        !(either & cell).is_zero()
    }

    fn is_forcing(&self, s: &C4State<W>, c: u8) -> bool {
        // A move that creates a threat the opponent must answer at once.
        let cell = s.mask.add(self.column_bottom[c as usize]) & self.column[c as usize];
        let mask = s.mask | cell;
        !(self.winning_cells(s.current | cell, mask) & self.possible(mask)).is_zero()
    }

    fn table_entries_hint(&self, s: &C4State<W>) -> Option<u64> {
        // Far fewer positions than 2^(empty cells) are searched: on Pons' 7 x 6 sets the mean
        // is below 2^(empty - 8) (L2_R2: 22,000 nodes at about 24 empty cells), and a small
        // table is a fast one (it stays in cache): 2^(empty - 8) entries, and at most 2^20
        // (16 MB) on boards of up to 7 x 6's 42 cells, 2^(cells - 22) on bigger ones (whose
        // searches grow with the cells). Against the old 2^(empty - 4) up to the 64 MB
        // budget, every Pons set and the weak empty board ran faster for a few more nodes.
        let cells = self.cells();
        let empty = (cells - s.moves as i32).clamp(8, 60) as u32;
        let cap = (cells as u32).saturating_sub(22).clamp(20, 40);
        Some(1u64 << (empty - 8).min(cap))
    }

    fn history_slots(&self) -> usize {
        2 * self.width as usize
    }

    fn history_slot(&self, s: &C4State<W>, c: u8) -> usize {
        (s.moves as usize % 2) * self.width as usize + c as usize
    }
}

impl<W: Word> Hashed for Connect4<W> {
    /// For boards of at most 64 bits the hash is the position key itself.
    const HASH_IS_KEY: bool = W::BITS <= 64;
    #[inline]
    fn hash(&self, s: &C4State<W>) -> u64 {
        self.key(s).hash64()
    }
}

impl<W: Word> Symmetric for Connect4<W> {
    fn canonical_hash(&self, s: &C4State<W>) -> u64 {
        let m = C4State {
            current: self.mirror(s.current),
            mask: self.mirror(s.mask),
            ..*s
        };
        self.hash(s).min(self.hash(&m))
    }
}

/// Roots of the fast path with at most this many empty cells are solved by one full-window
/// search in one task: it takes microseconds, less than the planner's own work per probe.
pub const ONE_TASK_EMPTY: u32 = 12;

/// The bitboard solver ([`solver`]) on boards it takes ([`solver::applies`]), with the opening
/// book; exact jobs bisect by default (a shallow search's estimates are near 0 everywhere, so it
/// gives no useful first guess).
impl Exact for Connect4<u64> {
    type Book = book::Book;

    fn exact_search(
        &self,
        root: &C4State<u64>,
        alpha: i32,
        beta: i32,
        threads: usize,
        table: &crate::search::engine::Table,
        book: Option<&book::Book>,
        ctl: &crate::search::Control,
    ) -> Option<Option<crate::search::engine::Outcome<u8>>> {
        (solver::applies(self) && solver::table_fits(self, table))
            .then(|| solver::search(self, root, alpha, beta, threads, table, book, ctl))
    }

    fn takes_book(&self) -> bool {
        solver::applies(self)
    }

    /// Books live in the user data folder's `connect4/` ([`super::data::user_dir`]).
    fn load_book(&self, name: &str) -> Result<std::sync::Arc<book::Book>, String> {
        let dir = super::data::user_dir();
        let path = super::data::named_file_in(&dir, "connect4", name, "", "book")?;
        book::load(self, &path).map_err(|e| format!("book: {e}"))
    }

    fn one_task(&self, root: &C4State<u64>) -> bool {
        solver::applies(self) && self.width * self.height <= root.moves() + ONE_TASK_EMPTY
    }

    fn export_proved(
        &self,
        root: &C4State<u64>,
        table: &crate::search::engine::Table,
        min_work: u32,
        max: usize,
    ) -> Option<Vec<crate::wire::Proved>> {
        solver::applies(self).then(|| solver::export_proved(self, root, table, min_work, max))
    }

    fn import_proved(&self, table: &crate::search::engine::Table, entries: &[crate::wire::Proved]) {
        solver::import_proved(self, table, entries);
    }

    fn job_level_leaf(&self) -> JobLevelLeaf {
        JOB_LEVEL_LEAF
    }
}

impl Exact for Connect4<u128> {
    type Book = ();

    fn job_level_leaf(&self) -> JobLevelLeaf {
        JOB_LEVEL_LEAF
    }
}

impl<const N: usize> Exact for Connect4<Wide<N>> {
    type Book = ();

    fn job_level_leaf(&self) -> JobLevelLeaf {
        JOB_LEVEL_LEAF
    }
}

/// `jlpns` leaves on every board: alpha-beta decides a leaf many times faster than df-pn
/// (`3246313`: 40.6 virtual seconds with df-pn leaves of 10^6 nodes at N = 1, 0.27 with
/// alpha-beta leaves of 16 * 10^6), and larger leaves cost one worker less (each is searched on
/// the table the earlier ones filled). Figures: docs/BENCHMARKS.md, job-level section.
const JOB_LEVEL_LEAF: JobLevelLeaf = JobLevelLeaf {
    own_solver: true,
    budget: 16_000_000,
};

/// A side of the board, 1 to `max`, `default` unless given; both sides are bounded by the
/// widest bitboard.
const fn side_param(name: &'static str, max: u32, default: u64, help: &'static str) -> Spec {
    let why = "(height + 1) x width at most 512 bits: the widest bitboard";
    Spec::uint(name, 1, max as u64, DefaultValue::UInt(default), help, why)
}
/// `width`: columns.
pub const PARAM_WIDTH: Spec = side_param("width", MAX_WIDTH, 7, "columns");
/// `height`: rows.
pub const PARAM_HEIGHT: Spec = side_param("height", MAX_HEIGHT, 6, "rows");
/// `base`: column numbering of moves.
pub const PARAM_BASE: Spec = Spec::uint(
    "base",
    0,
    1,
    DefaultValue::UInt(1),
    "column numbering of moves: 0- or 1-based",
    "two notations",
);

/// Connect Four on the smallest bitboard word that holds the board.
pub enum AnyConnect4 {
    /// Up to 64 bits (7 x 6 and the fast path's boards).
    U64(Connect4<u64>),
    /// Up to 128 bits.
    U128(Connect4<u128>),
    /// Up to 256 bits.
    W256(Connect4<Wide<4>>),
    /// Up to 512 bits.
    W512(Connect4<Wide<8>>),
}

/// The catalogue entry of Connect Four.
pub struct Connect4Entry;

impl GameEntry for Connect4Entry {
    const NAME: &'static str = "connect4";
    const PARAMS: &'static [Spec] = &[PARAM_WIDTH, PARAM_HEIGHT, PARAM_BASE];
    const FAMILY: Family = Family::ZeroSum {
        book: true,
        features: true,
    };
    const BOOK: Option<BookFn> = Some(book::build_from_params);
    type Game = AnyConnect4;
    fn build(params: &Opts) -> Result<AnyConnect4, SolveError> {
        let width = params.uint_value(&PARAM_WIDTH)?;
        let height = params.uint_value(&PARAM_HEIGHT)?;
        let base = params.uint_value(&PARAM_BASE)?;
        params.finish()?;
        let bad = SolveError::bad;
        Ok(match word_size(width, height, base).map_err(bad)? {
            WordSize::U64 => AnyConnect4::U64(Connect4::new(width, height, base).map_err(bad)?),
            WordSize::U128 => AnyConnect4::U128(Connect4::new(width, height, base).map_err(bad)?),
            WordSize::W256 => AnyConnect4::W256(Connect4::new(width, height, base).map_err(bad)?),
            WordSize::W512 => AnyConnect4::W512(Connect4::new(width, height, base).map_err(bad)?),
        })
    }
    fn offer<V: Visitor>(game: AnyConnect4, visitor: V) -> V::Output {
        match game {
            AnyConnect4::U64(g) => visitor.zero_sum_features(g, eval::connect4, false),
            AnyConnect4::U128(g) => visitor.zero_sum_features(g, eval::connect4, false),
            AnyConnect4::W256(g) => visitor.zero_sum_features(g, eval::connect4, false),
            AnyConnect4::W512(g) => visitor.zero_sum_features(g, eval::connect4, false),
        }
    }
}

#[cfg(test)]
mod tests;
