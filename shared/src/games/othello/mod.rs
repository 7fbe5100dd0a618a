//! Othello (Reversi) on even square boards of 4 x 4 to 8 x 8.
//!
//! Values (docs/API.md, section 3): the final disc difference from the point of view of the side to move
//! (negamax): own discs minus the opponent's discs when neither side can move. Empty squares left
//! by a game that ends early go to the winner ([`Empties::Winner`], the official rule of the
//! World Othello Federation and the scores of the FFO suites), or to nobody with the game
//! parameter `empties=none`. Bounds are `±size²` under both rules.
//!
//! Rules: Black moves first from the usual centre cross (White on d4 and e5 of an 8 x 8 board,
//! the same pattern in the centre of smaller boards). A move must flip at least one line of
//! opponent discs. A side without a legal move passes; a pass is a move here (written `--`) and is
//! the only legal move in that case. The game ends when neither side can move.
//!
//! Board layout: one `u64` bitboard per colour with a fixed stride of 8, whatever the size, so
//! that the shifts are the same for every board; squares outside the `size x size` corner are
//! masked out by [`Geometry::valid`].
//!
//! ```text
//!        a  b  c  d  e  f  g  h           bit = row * 8 + col
//!    1   0  1  2  3  4  5  6  7           (row 0 is rank 1, at the top; col 0 is file a)
//!    2   8  9 10 11 12 13 14 15
//!    ...                                  4 x 4: bits 0-3, 8-11, 16-19, 24-27 are valid
//!    8  56 57 58 59 60 61 62 63
//! ```
//!
//! The board functions ([`Geometry::moves`], [`Geometry::flips`], [`Geometry::neighbours`]) take
//! "my discs" and "the other discs" and know nothing of players, so multi-player variants (Rolit)
//! reuse them with the union of all opponents as "other".
//!
//! Notation: moves as `c4`-style coordinates (file letter, rank digit) joined by nothing, a pass
//! as `--` (whitespace and commas between moves are accepted on input). A state keeps its move
//! history so that [`Game::format_position`] writes the moves back; equality of positions
//! ([`Game::same_state`], [`Hashed::hash`]) ignores the history.
//!
//! Board notation (the `.obf` form of the FFO suites and Edax): `size * size` characters, the
//! squares `a1 b1 ... a2 ...` rank by rank, `X` a black disc, `O` a white one, `-` empty
//! (`x`, `o`, `*` and `.` are read too), then white space and the side to move, `X` or `O`;
//! moves played from that board may follow. A text is a board when its first word holds only
//! those characters and at least 16 of them or an `X`/`O` (a move list never does). A
//! position read from a board is written back as the board it started from, its side and the
//! moves played since ([`Othello::board_diagram`] draws the current board).

pub mod eval;
pub mod solver;

use crate::games::entry::{Family, GameEntry, Visitor};
use crate::games::{fmix64, Exact, JobLevelLeaf};
use crate::model::settings::{DefaultValue, Opts, SolveError, Spec};
use crate::model::{Game, Hashed, NotationError, Tactics, Turn, ZeroSum};
use crate::search::{engine, Control};

/// The move code of a pass.
pub const PASS: u8 = 64;
/// Longest possible game: every placement can be followed by at most one pass (two passes in a
/// row end the game), and an 8 x 8 board has 60 placements.
pub const MAX_PLIES: usize = 120;

const FILE_A: u64 = 0x0101_0101_0101_0101;
const FILE_H: u64 = FILE_A << 7;

/// The shape of a board: its size and the mask of its squares. All board arithmetic lives here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Side length (even, 4..8).
    pub size: u8,
    /// The squares of the board (stride-8 layout, see the module doc).
    pub valid: u64,
}

impl Geometry {
    /// The board of side `size` (even, 4 to 8).
    pub fn new(size: usize) -> Result<Geometry, String> {
        if !(4..=8).contains(&size) || !size.is_multiple_of(2) {
            return Err(format!(
                "othello size {size} is not supported (even sizes 4 to 8)"
            ));
        }
        let mut valid = 0u64;
        for r in 0..size {
            for c in 0..size {
                valid |= 1 << (r * 8 + c);
            }
        }
        Ok(Geometry {
            size: size as u8,
            valid,
        })
    }

    /// Shifts a set one step in direction `dir` (0..8), dropping squares that leave the board.
    #[inline(always)]
    pub fn shift(&self, x: u64, dir: usize) -> u64 {
        let y = match dir {
            0 => (x << 1) & !FILE_A, // east
            1 => (x >> 1) & !FILE_H, // west
            2 => x << 8,             // south (towards higher ranks)
            3 => x >> 8,             // north
            4 => (x << 9) & !FILE_A, // south-east
            5 => (x << 7) & !FILE_H, // south-west
            6 => (x >> 7) & !FILE_A, // north-east
            _ => (x >> 9) & !FILE_H, // north-west
        };
        y & self.valid
    }

    /// The empty squares where `me` may play: each brackets at least one line of `other`.
    #[inline]
    pub fn moves(&self, me: u64, other: u64) -> u64 {
        let empty = self.valid & !(me | other);
        let mut out = 0;
        for dir in 0..8 {
            let mut x = self.shift(me, dir) & other;
            // A line of `other` discs is at most size - 2 long.
            for _ in 0..self.size.saturating_sub(3) {
                x |= self.shift(x, dir) & other;
            }
            out |= self.shift(x, dir) & empty;
        }
        out
    }

    /// The discs of `other` that flip when `me` plays on square `sq` (empty if the move is
    /// illegal).
    #[inline]
    pub fn flips(&self, me: u64, other: u64, sq: u8) -> u64 {
        let start = 1u64 << sq;
        let mut out = 0;
        for dir in 0..8 {
            let mut line = 0;
            let mut x = self.shift(start, dir);
            while x & other != 0 {
                line |= x;
                x = self.shift(x, dir);
            }
            if x & me != 0 {
                out |= line;
            }
        }
        out
    }

    /// Squares next to some square of `set` (in any of the 8 directions), on the board.
    #[inline]
    pub fn neighbours(&self, set: u64) -> u64 {
        (0..8).fold(0, |acc, dir| acc | self.shift(set, dir))
    }

    /// The initial discs: (first player's, second player's), the centre cross.
    pub fn start(&self) -> (u64, u64) {
        let m = (self.size / 2) as u32;
        let sq = |r: u32, c: u32| 1u64 << (r * 8 + c);
        // 8 x 8: d4 (r3 c3) and e5 (r4 c4) are White, e4 and d5 are Black.
        let second = sq(m - 1, m - 1) | sq(m, m);
        let first = sq(m - 1, m) | sq(m, m - 1);
        (first, second)
    }

    /// The name of square `sq`: `a1` is the top left.
    pub fn square_name(&self, sq: u8) -> String {
        format!("{}{}", (b'a' + sq % 8) as char, sq / 8 + 1)
    }

    /// Reads a square name (`c4`), checking that it is on this board.
    pub fn parse_square(&self, text: &str) -> Result<u8, NotationError> {
        let b = text.as_bytes();
        let bad = || {
            NotationError::new(format!(
                "not a square of the {0} x {0} board (files a..{1}, ranks 1..{0})",
                self.size,
                (b'a' + self.size - 1) as char
            ))
            .with_fragment(text)
        };
        if b.len() != 2 {
            return Err(bad());
        }
        let f = b[0].to_ascii_lowercase().wrapping_sub(b'a');
        let r = b[1].wrapping_sub(b'1');
        if f >= self.size || r >= self.size {
            return Err(bad());
        }
        Ok(r * 8 + f)
    }
}

/// Who gets the empty squares of a game that ends before the board is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Empties {
    /// The winner (the official rule): a win by `d` discs with `e` empties scores `d + e`.
    Winner,
    /// Nobody: the score is the disc difference on the board.
    Nobody,
}

impl Empties {
    /// The final score of a side with `me` discs against `opp` discs on a board of `squares`.
    #[inline(always)]
    pub fn score(self, me: u32, opp: u32, squares: u32) -> i32 {
        let d = me as i32 - opp as i32;
        match self {
            Empties::Nobody => d,
            Empties::Winner => d + d.signum() * (squares - me - opp) as i32,
        }
    }

    /// A word mixed into table keys and hashes, so values under the two rules never share an
    /// entry.
    pub fn key_salt(self) -> u64 {
        match self {
            Empties::Winner => 0,
            Empties::Nobody => 0x6E6F_626F_6479_0001,
        }
    }
}

/// Othello of a given size.
#[derive(Clone, Debug)]
pub struct Othello {
    geo: Geometry,
    empties: Empties,
}

/// A position: discs by colour, who moves, the cached legal moves of the side to move, and the
/// move history (for the notation only).
#[derive(Clone, Debug)]
pub struct OthelloState {
    /// Discs of Black (index 0, moves first) and White (index 1).
    pub discs: [u64; 2],
    /// The colour to move (at a terminal state: the colour that would move).
    pub to_move: u8,
    /// Legal placements of the side to move (0: it must pass, or the game is over).
    moves: u64,
    /// Neither side can move.
    over: bool,
    len: u8,
    history: [u8; MAX_PLIES],
    /// The board the history starts from when the position was given as a board (discs of
    /// Black and White, side to move); `None`: the start position.
    origin: Option<([u64; 2], u8)>,
}

impl Othello {
    /// Othello on a `size x size` board (even, 4..8), empty squares to the winner.
    pub fn new(size: usize) -> Result<Othello, String> {
        Ok(Othello {
            geo: Geometry::new(size)?,
            empties: Empties::Winner,
        })
    }

    /// The same game with the rule `empties` for the empty squares of an early end.
    pub fn with_empties(mut self, empties: Empties) -> Othello {
        self.empties = empties;
        self
    }

    /// Who gets the empty squares of an early end.
    pub fn empties(&self) -> Empties {
        self.empties
    }

    /// The board shape.
    pub fn geometry(&self) -> Geometry {
        self.geo
    }

    /// Side length.
    pub fn size(&self) -> usize {
        self.geo.size as usize
    }

    /// Sets the cached move set and end flag after the discs or the side changed.
    fn settle(&self, s: &mut OthelloState) {
        let p = s.to_move as usize;
        s.moves = self.geo.moves(s.discs[p], s.discs[1 - p]);
        s.over = s.moves == 0 && self.geo.moves(s.discs[1 - p], s.discs[p]) == 0;
    }

    /// The one-line board form of a position (`.obf`): the squares rank by rank (`X` Black,
    /// `O` White, `-` empty), a space and the side to move.
    pub fn board_string(&self, discs: &[u64; 2], side: u8) -> String {
        let n = self.geo.size as u32;
        let mut t = String::with_capacity((n * n + 2) as usize);
        for r in 0..n {
            for c in 0..n {
                let bit = 1u64 << (r * 8 + c);
                t.push(if discs[0] & bit != 0 {
                    'X'
                } else if discs[1] & bit != 0 {
                    'O'
                } else {
                    '-'
                });
            }
        }
        t.push(' ');
        t.push(if side == 0 { 'X' } else { 'O' });
        t
    }

    /// The current board of `s` in its one-line form ([`Othello::board_string`]).
    pub fn board_line(&self, s: &OthelloState) -> String {
        self.board_string(&s.discs, s.to_move)
    }

    /// The current board of `s` drawn for people: files above, ranks at the left, `X` Black,
    /// `O` White, `.` empty, then the disc count and who moves.
    pub fn board_diagram(&self, s: &OthelloState) -> String {
        let n = self.geo.size as u32;
        let mut t = String::from("  ");
        for c in 0..n {
            t.push(' ');
            t.push((b'a' + c as u8) as char);
        }
        t.push('\n');
        for r in 0..n {
            t += &format!("{:>2}", r + 1);
            for c in 0..n {
                let bit = 1u64 << (r * 8 + c);
                t.push(' ');
                t.push(if s.discs[0] & bit != 0 {
                    'X'
                } else if s.discs[1] & bit != 0 {
                    'O'
                } else {
                    '.'
                });
            }
            t.push('\n');
        }
        let (b, w) = (s.discs[0].count_ones(), s.discs[1].count_ones());
        let who = if s.over {
            "game over".to_string()
        } else {
            format!("{} to move", if s.to_move == 0 { "X" } else { "O" })
        };
        t += &format!("X {b} O {w}, {who}\n");
        t
    }

    /// Reads the board form of a position (module doc): `Ok(None)` when `text` is not a board
    /// (a move list), else the state and the rest of the text (moves played from the board).
    fn parse_board<'t>(
        &self,
        text: &'t str,
    ) -> Result<Option<(OthelloState, &'t str)>, NotationError> {
        let t = text.trim_start();
        let end = t.find(char::is_whitespace).unwrap_or(t.len());
        let word = &t[..end];
        let board_char = |c: char| matches!(c, 'X' | 'x' | 'O' | 'o' | '-' | '*' | '.');
        let is_board = !word.is_empty()
            && word.chars().all(board_char)
            && (word.len() >= 16 || word.chars().any(|c| !matches!(c, '-' | '.')));
        if !is_board {
            return Ok(None);
        }
        let n = self.geo.size as usize;
        let help = "squares a1..h1, a2..h8 rank by rank: X black, O white, - empty";
        if word.len() != n * n {
            return Err(NotationError::new(format!(
                "a board of {} squares, the {n} x {n} board has {} ({help})",
                word.len(),
                n * n
            ))
            .with_fragment(word));
        }
        let mut discs = [0u64; 2];
        for (i, c) in word.chars().enumerate() {
            let bit = 1u64 << ((i / n) * 8 + i % n);
            match c {
                'X' | 'x' | '*' => discs[0] |= bit,
                'O' | 'o' => discs[1] |= bit,
                _ => {}
            }
        }
        let rest = t[end..].trim_start();
        let side_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let side = match &rest[..side_end] {
            "X" | "x" | "*" => 0,
            "O" | "o" => 1,
            "" => {
                return Err(NotationError::new(
                    "a board needs the side to move after it (X or O)",
                ))
            }
            other => {
                return Err(NotationError::new(
                    "the side to move after a board is X (black) or O (white)",
                )
                .with_fragment(other))
            }
        };
        let mut s = self.initial_state();
        s.discs = discs;
        s.to_move = side;
        s.origin = Some((discs, side));
        self.settle(&mut s);
        Ok(Some((s, &rest[side_end..])))
    }

    /// The disc difference from `colour`'s point of view (the empty squares for nobody).
    pub fn disc_difference(&self, s: &OthelloState, colour: u8) -> i32 {
        let c = colour as usize;
        s.discs[c].count_ones() as i32 - s.discs[1 - c].count_ones() as i32
    }

    /// The final score from `colour`'s point of view under the game's rule for the empty
    /// squares ([`Empties`]); at a terminal state, the value.
    pub fn final_score(&self, s: &OthelloState, colour: u8) -> i32 {
        let c = colour as usize;
        self.empties.score(
            s.discs[c].count_ones(),
            s.discs[1 - c].count_ones(),
            self.geo.valid.count_ones(),
        )
    }
}

impl Game for Othello {
    type State = OthelloState;
    /// A square 0..63 (stride-8 layout) or [`PASS`].
    type Move = u8;

    fn name(&self) -> &'static str {
        "othello"
    }
    fn num_players(&self) -> usize {
        2
    }
    fn initial_state(&self) -> OthelloState {
        let (b, w) = self.geo.start();
        let mut s = OthelloState {
            discs: [b, w],
            to_move: 0,
            moves: 0,
            over: false,
            len: 0,
            history: [0; MAX_PLIES],
            origin: None,
        };
        self.settle(&mut s);
        s
    }
    #[inline]
    fn turn(&self, s: &OthelloState) -> Turn {
        if s.over {
            Turn::Terminal
        } else {
            Turn::Player(s.to_move)
        }
    }
    fn legal_moves(&self, s: &OthelloState, moves: &mut Vec<u8>) {
        moves.clear();
        if s.over {
            return;
        }
        if s.moves == 0 {
            moves.push(PASS);
            return;
        }
        let mut m = s.moves;
        while m != 0 {
            moves.push(m.trailing_zeros() as u8);
            m &= m - 1;
        }
    }
    #[inline]
    fn apply(&self, s: &mut OthelloState, mv: u8) {
        let p = s.to_move as usize;
        if mv != PASS {
            let f = self.geo.flips(s.discs[p], s.discs[1 - p], mv);
            s.discs[p] |= f | (1 << mv);
            s.discs[1 - p] &= !f;
        }
        if (s.len as usize) < MAX_PLIES {
            s.history[s.len as usize] = mv;
            s.len += 1;
        }
        s.to_move = 1 - s.to_move;
        self.settle(s);
    }
    fn returns(&self, s: &OthelloState, out: &mut [f64]) {
        let d = self.final_score(s, 0) as f64;
        out[0] = d;
        out[1] = -d;
    }

    fn parse_position(&self, text: &str) -> Result<OthelloState, NotationError> {
        let (mut s, text) = match self.parse_board(text)? {
            Some((s, rest)) => (s, rest),
            None => (self.initial_state(), text),
        };
        for_each_square_token(text, |number, token| {
            let mv = self.parse_move(&s, token).map_err(|e| e.at_move(number))?;
            self.apply(&mut s, mv);
            Ok(())
        })?;
        Ok(s)
    }

    fn format_position(&self, s: &OthelloState) -> String {
        let moves: String = s.history[..s.len as usize]
            .iter()
            .map(|&m| self.format_move(s, m))
            .collect();
        match s.origin {
            None => moves,
            Some((discs, side)) => {
                let mut t = self.board_string(&discs, side);
                if !moves.is_empty() {
                    t.push(' ');
                    t += &moves;
                }
                t
            }
        }
    }

    fn parse_move(&self, s: &OthelloState, text: &str) -> Result<u8, NotationError> {
        let t = text.trim();
        if s.over {
            return Err(NotationError::new("the game is already over").with_fragment(t));
        }
        if t == "--" {
            if s.moves != 0 {
                return Err(
                    NotationError::new("a pass is only legal without another move")
                        .with_fragment(t),
                );
            }
            return Ok(PASS);
        }
        let sq = self.geo.parse_square(t)?;
        if s.moves == 0 {
            return Err(NotationError::new(
                "no placement is possible here, the side to move must pass (--)",
            )
            .with_fragment(t));
        }
        if s.moves >> sq & 1 == 0 {
            return Err(
                NotationError::new("not a legal move (it must flip at least one disc)")
                    .with_fragment(t),
            );
        }
        Ok(sq)
    }

    fn format_move(&self, _s: &OthelloState, mv: u8) -> String {
        if mv == PASS {
            "--".to_string()
        } else {
            self.geo.square_name(mv)
        }
    }

    fn same_state(&self, a: &OthelloState, b: &OthelloState) -> bool {
        a.discs == b.discs && a.to_move == b.to_move
    }
}

/// Corners first: a cheap ordering that helps every threshold search on Othello.
fn corners(geo: &Geometry) -> u64 {
    let s = geo.size as u32 - 1;
    1 | 1 << s | 1 << (s * 8) | 1 << (s * 8 + s)
}

impl ZeroSum for Othello {
    #[inline]
    fn side(&self, s: &OthelloState) -> u8 {
        s.to_move
    }
    #[inline]
    fn terminal_value(&self, s: &OthelloState) -> i32 {
        self.final_score(s, s.to_move)
    }
    fn value_bounds(&self, _s: &OthelloState) -> (i32, i32) {
        let n = (self.geo.size as i32).pow(2);
        (-n, n)
    }
    fn order_moves(&self, _s: &OthelloState, moves: &mut [u8]) {
        let c = corners(&self.geo);
        // Stable: corners to the front, the rest keep the board order.
        moves.sort_by_key(|&m| m == PASS || c >> m & 1 == 0);
    }
    /// An estimate of the final disc difference from the weighted features
    /// ([`eval::disc_estimate`]): what a depth-limited search reports, Edax-style.
    fn evaluate(&self, s: &OthelloState) -> i32 {
        eval::disc_estimate(self, s)
    }
}

/// The engine's defaults: every legal move, in `order_moves`'s order.
impl Tactics for Othello {}

impl Hashed for Othello {
    /// 128 bits of board and a side bit do not fit in 64: a mix, not a key.
    const HASH_IS_KEY: bool = false;
    #[inline]
    fn hash(&self, s: &OthelloState) -> u64 {
        fmix64(
            s.discs[0]
                ^ self.empties.key_salt()
                ^ fmix64(s.discs[1] ^ (s.to_move as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        )
    }
}

/// Splits a position text of two-character move names written one after another (`c4d3`,
/// white space and commas allowed between them) and hands each to `play` with its 1-based move
/// number. A token cut inside a multi-byte character is "not a move", never a panic. Shared by
/// Othello and Rolit.
pub(crate) fn for_each_square_token(
    text: &str,
    mut play: impl FnMut(usize, &str) -> Result<(), NotationError>,
) -> Result<(), NotationError> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut number = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() || b[i] == b',' {
            i += 1;
            continue;
        }
        number += 1;
        let end = (i + 2).min(b.len());
        if !text.is_char_boundary(i) || !text.is_char_boundary(end) {
            return Err(NotationError::new("not a move")
                .with_fragment(text.get(i..).unwrap_or(text))
                .at_move(number));
        }
        play(number, &text[i..end])?;
        i = end;
    }
    Ok(())
}

/// Plies of the depth-limited search that gives an exact Othello job its first guess.
pub const GUESS_DEPTH: u32 = 6;

/// At or below this many empty squares a job-level leaf runs the end-game solver even where the
/// job's default leaf kernel is df-pn ([`Exact::fast_leaf`]): on 8 x 8 a null-window probe there
/// takes a few 10^5 to 10^6 nodes (milliseconds), while df-pn keeps the lead higher up (6 x 6
/// `c2b2b3`, 29 empties, "value >= 1": 7.7 CPU s with df-pn leaves of 4 * 10^6 nodes, 35.4 with
/// alpha-beta ones).
pub const FAST_LEAF_EMPTIES: u32 = 16;

/// The end-game solver ([`solver`], with the job's threads) on every board size, and a first
/// guess from a shallow search.
impl Exact for Othello {
    type Book = ();

    fn exact_search(
        &self,
        root: &OthelloState,
        alpha: i32,
        beta: i32,
        threads: usize,
        table: &engine::Table,
        _book: Option<&()>,
        ctl: &Control,
    ) -> Option<Option<engine::Outcome<u8>>> {
        Some(solver::search(self, root, alpha, beta, threads, table, ctl))
    }

    /// A depth limit that covers every empty square: the exact value by the solver (a pass
    /// costs the generic engine a ply, so its search to that depth might not reach the end).
    fn depth_search(
        &self,
        root: &OthelloState,
        depth: u32,
        alpha: i32,
        beta: i32,
        threads: usize,
        table: &engine::Table,
        ctl: &Control,
    ) -> Option<Option<engine::Outcome<u8>>> {
        let empties = (self.geo.valid & !(root.discs[0] | root.discs[1])).count_ones();
        if depth < empties {
            return None;
        }
        let found = solver::search(self, root, alpha, beta, threads, table, ctl);
        Some(found.map(|o| engine::Outcome { depth, ..o }))
    }

    fn export_proved(
        &self,
        root: &OthelloState,
        table: &engine::Table,
        min_work: u32,
        max: usize,
    ) -> Option<Vec<crate::wire::Proved>> {
        Some(solver::export_proved(self, root, table, min_work, max))
    }

    fn import_proved(&self, table: &engine::Table, entries: &[crate::wire::Proved]) {
        solver::import_proved(self, table, entries);
    }

    /// df-pn leaves of 4 * 10^6 nodes: on 6 x 6 `c2b2b3`, "value >= 1", 8.9 CPU s against 20.8
    /// with leaves of 10^6 and over 28 with the end-game solver's leaves of 16 * 10^6 (the
    /// solver runs near the end all the same: [`Exact::fast_leaf`]).
    fn job_level_leaf(&self) -> JobLevelLeaf {
        JobLevelLeaf {
            own_solver: false,
            budget: 4_000_000,
        }
    }

    /// At most [`FAST_LEAF_EMPTIES`] empty squares.
    fn fast_leaf(&self, s: &OthelloState) -> bool {
        (self.geo.valid & !(s.discs[0] | s.discs[1])).count_ones() <= FAST_LEAF_EMPTIES
    }

    /// A depth-limited search with the game's evaluator (a disc estimate) at [`GUESS_DEPTH`]
    /// plies, on a small table of its own, one thread: deterministic, a few milliseconds.
    fn first_guess(&self, root: &OthelloState) -> Option<i32> {
        let cfg = engine::Config {
            depth: Some(GUESS_DEPTH),
            threads: 1,
            ..engine::Config::default()
        };
        let table = engine::Table::with_bytes(1 << 20).ok()?;
        let e = engine::search(
            self,
            root,
            -engine::INF,
            engine::INF,
            &cfg,
            &table,
            &Control::unlimited(),
        )?;
        let (lo, hi) = self.value_bounds(root);
        Some(e.value.clamp(lo, hi))
    }
}

/// `size`: the side of the board (Othello and Rolit).
pub const PARAM_SIZE: Spec = Spec::uint(
    "size",
    4,
    8,
    DefaultValue::UInt(8),
    "side of the board (even)",
    "one 64-bit bitboard",
);

/// `empties`: who gets the empty squares of a game that ends early.
pub const PARAM_EMPTIES: Spec = Spec::text(
    "empties",
    DefaultValue::Word("winner"),
    "empty squares of an early end: winner (the official rule) or none",
);

/// Reads [`PARAM_EMPTIES`]'s value.
pub fn parse_empties(text: &str) -> Result<Empties, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "winner" => Ok(Empties::Winner),
        "none" => Ok(Empties::Nobody),
        _ => Err(format!(
            "othello 'empties={}': winner (empty squares go to the winner, the official rule) or none",
            text.chars().take(40).collect::<String>()
        )),
    }
}

/// The catalogue entry of Othello.
pub struct OthelloEntry;

impl GameEntry for OthelloEntry {
    const NAME: &'static str = "othello";
    const PARAMS: &'static [Spec] = &[PARAM_SIZE, PARAM_EMPTIES];
    const FAMILY: Family = Family::ZeroSum {
        book: false,
        features: true,
    };
    type Game = Othello;
    fn build(params: &Opts) -> Result<Othello, SolveError> {
        let size = params.uint_value(&PARAM_SIZE)?;
        let empties = parse_empties(params.text_value(&PARAM_EMPTIES)?).map_err(SolveError::bad)?;
        params.finish()?;
        Ok(Othello::new(size)
            .map_err(SolveError::bad)?
            .with_empties(empties))
    }
    fn offer<V: Visitor>(game: Othello, visitor: V) -> V::Output {
        visitor.zero_sum_features(game, eval::othello, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::battery;

    fn perft(g: &Othello, s: &OthelloState, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let mut moves = Vec::new();
        g.legal_moves(s, &mut moves);
        if moves.is_empty() {
            return 1;
        }
        moves
            .iter()
            .map(|&m| {
                let mut c = s.clone();
                g.apply(&mut c, m);
                perft(g, &c, depth - 1)
            })
            .sum()
    }

    #[test]
    fn a_move_cut_inside_a_character_is_an_error_not_a_panic() {
        let g = Othello::new(4).unwrap();
        for text in ["a\u{e9}", "\u{e9}a", "b1\u{2603}"] {
            assert!(g.parse_position(text).is_err(), "{text}");
        }
    }

    #[test]
    fn battery_all_sizes() {
        for (size, n) in [(4, 300), (6, 100), (8, 50)] {
            let g = Othello::new(size).unwrap();
            let s = g.initial_state();
            battery::check_game(&g, &s, n, 1);
            battery::check_hashed(&g, &s, n, 2);
            battery::check_zero_sum(&g, &s, n, 3);
        }
    }

    /// Published perft counts of 8 x 8 Othello (leaf nodes at depth 1..8 from the start; passes
    /// do not occur this early).
    #[test]
    fn perft_8x8() {
        let g = Othello::new(8).unwrap();
        let s = g.initial_state();
        let want = [4, 12, 56, 244, 1396, 8200, 55092, 390216];
        for (d, &w) in want.iter().enumerate() {
            assert_eq!(perft(&g, &s, d as u32 + 1), w, "depth {}", d + 1);
        }
    }

    #[test]
    fn notation_and_passes() {
        let g = Othello::new(8).unwrap();
        let s = g.parse_position("f5d6c3").unwrap();
        assert_eq!(g.format_position(&s), "f5d6c3");
        assert_eq!(g.parse_position("f5 d6, c3").unwrap().discs, s.discs);
        let e = g.parse_position("f5f5").unwrap_err().to_string();
        assert!(e.starts_with("move 2 ('f5')"), "{e}");
        let e = g.parse_position("f5i9").unwrap_err().to_string();
        assert!(e.contains("not a square"), "{e}");
        let e = g.parse_position("--").unwrap_err().to_string();
        assert!(e.contains("only legal"), "{e}");
        // Find a game with a pass by random play on 4 x 4 and check it round-trips with `--`.
        let g = Othello::new(4).unwrap();
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut found = false;
        for _ in 0..200 {
            let mut s = g.initial_state();
            let mut moves = Vec::new();
            while !g.is_terminal(&s) {
                g.legal_moves(&s, &mut moves);
                let m = moves[rng.gen_range(0..moves.len())];
                g.apply(&mut s, m);
            }
            let text = g.format_position(&s);
            if text.contains("--") {
                found = true;
                let back = g.parse_position(&text).unwrap();
                assert!(g.same_state(&back, &s) && g.is_terminal(&back));
            }
        }
        assert!(found, "no random 4 x 4 game passed");
        assert!(Othello::new(5).is_err() && Othello::new(10).is_err());
    }

    /// FFO #40 (Edax's `fforum-40-59.obf`, first line): 20 empties, Black to move, +38.
    pub(crate) const FFO_40: &str =
        "O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X";

    #[test]
    fn board_notation_round_trips_and_plays_on() {
        let g = Othello::new(8).unwrap();
        let s = g.parse_position(FFO_40).unwrap();
        assert_eq!(s.to_move, 0);
        assert_eq!((s.discs[0] | s.discs[1]).count_ones(), 44);
        assert_eq!(g.format_position(&s), FFO_40);
        assert_eq!(g.board_line(&s), FFO_40);
        // The start as a board is the start.
        let start = g.initial_state();
        let text = g.board_line(&start);
        assert_eq!(
            text,
            "---------------------------OX------XO--------------------------- X"
        );
        assert!(g.same_state(&g.parse_position(&text).unwrap(), &start));
        // Moves after a board are played from it and written back after it.
        let after = g.parse_position(&format!("{text} f5d6")).unwrap();
        assert!(g.same_state(&after, &g.parse_position("f5d6").unwrap()));
        assert_eq!(g.format_position(&after), format!("{text} f5d6"));
        let again = g.parse_position(&g.format_position(&after)).unwrap();
        assert!(g.same_state(&again, &after));
        // Lower case, `*` for black and white space around are read too; White to move.
        let low = g
            .parse_position(&format!("  {} o ", FFO_40[..64].to_lowercase()))
            .unwrap();
        assert_eq!(low.discs, s.discs);
        assert_eq!(low.to_move, 1);
        // 4 x 4: 16 squares.
        let g4 = Othello::new(4).unwrap();
        let s4 = g4.parse_position("-----OX--XO----- O").unwrap();
        assert!(g4.same_state(&s4, &g4.parse_position("b1").unwrap()) || s4.to_move == 1);
        assert_eq!(g4.format_position(&s4), "-----OX--XO----- O");
        // A side with no move must pass; a finished board is terminal.
        let full = g.parse_position(&format!("{} X", "X".repeat(64))).unwrap();
        assert!(g.is_terminal(&full));
        assert_eq!(g.terminal_value(&full), 64);
    }

    #[test]
    fn bad_boards_are_one_line_errors() {
        let g = Othello::new(8).unwrap();
        let cases = [
            (
                &FFO_40[..63],
                "a board of 63 squares, the 8 x 8 board has 64",
            ),
            (&FFO_40[..64], "needs the side to move"),
            (
                "O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- Z",
                "is X (black) or O (white)",
            ),
            ("XXXX", "a board of 4 squares"),
            ("XOXOZ", "not a square"),
        ];
        for (text, want) in cases {
            let e = g.parse_position(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        // A move after the board is checked against the board.
        let e = g
            .parse_position(&format!("{FFO_40} a1"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("move 1 ('a1')"), "{e}");
        let g6 = Othello::new(6).unwrap();
        let e = g6.parse_position(FFO_40).unwrap_err().to_string();
        assert!(e.contains("the 6 x 6 board has 36"), "{e}");
    }

    #[test]
    fn geometry_start_and_flips() {
        let g = Othello::new(8).unwrap();
        let geo = g.geometry();
        let s = g.initial_state();
        // d4 and e5 are White, d3 c4 f5 e6 are Black's first moves.
        assert_eq!(
            s.discs[1],
            1 << geo.parse_square("d4").unwrap() | 1 << geo.parse_square("e5").unwrap()
        );
        let mut first: Vec<String> = Vec::new();
        let mut moves = Vec::new();
        g.legal_moves(&s, &mut moves);
        for m in moves {
            first.push(g.format_move(&s, m));
        }
        assert_eq!(first, ["d3", "c4", "f5", "e6"]);
        let f = geo.flips(s.discs[0], s.discs[1], geo.parse_square("f5").unwrap());
        assert_eq!(f, 1 << geo.parse_square("e5").unwrap());
        let g4 = Othello::new(4).unwrap();
        let s4 = g4.initial_state();
        assert_eq!(g4.format_position(&s4), "");
        assert_eq!(s4.discs[0].count_ones() + s4.discs[1].count_ones(), 4);
        assert_eq!(g4.geometry().neighbours(1), 2 | 1 << 8 | 1 << 9);
    }
}
