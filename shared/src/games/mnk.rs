//! m,n,k-games: `k` in a row on an `m` x `n` board (m columns, n rows), tic-tac-toe is 3,3,3.
//!
//! Values (docs/API.md, section 3): +1 win, 0 draw, -1 loss for the side to move (negamax).
//!
//! Board: two bitsets of up to [`MAX_CELLS`] cells, cell `i = row * m + col` (row 0 at the top,
//! as in the notation). A win is detected around the last stone played, so a state carries
//! whether the game ended with the last move.
//!
//! Notation: the cells played in order, 1-based, row-major from the top left. Tic-tac-toe writes
//! them as single digits joined by nothing (`519`); other sizes separate them by `,` (`1,17,5`).
//! A finished game is reconstructed into a legal order for [`Game::format_position`]: the cells of
//! each player in ascending order, with the winner's completing stone last.

use crate::games::entry::{Family, GameEntry, Visitor};
use crate::games::Exact;
use crate::model::settings::{DefaultValue, Opts, SolveError, Spec};
use crate::model::{Game, Hashed, NotationError, Tactics, Turn, ZeroSum};

/// Largest board: 256 cells (16 x 16 and all smaller shapes).
pub const MAX_CELLS: usize = 256;
const WORDS: usize = MAX_CELLS / 64;

/// A set of cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Cells([u64; WORDS]);

impl Cells {
    #[inline]
    fn has(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
    #[inline]
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..WORDS).flat_map(move |w| {
            let mut bits = self.0[w];
            std::iter::from_fn(move || {
                if bits == 0 {
                    None
                } else {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    Some(w * 64 + b)
                }
            })
        })
    }
}

/// An m,n,k-game.
#[derive(Clone, Debug)]
pub struct Mnk {
    m: usize,
    n: usize,
    k: usize,
    /// Tic-tac-toe's compact notation (single digits, no separator).
    compact: bool,
    name: &'static str,
}

/// A position: both players' stones, who moves, and whether the last move won.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MnkState {
    stones: [Cells; 2],
    /// Stones on the board; the player to move is `plies % 2` (0 = X, first player).
    plies: u16,
    /// The last move completed a line of k.
    won: bool,
}

impl Mnk {
    /// Tic-tac-toe with its compact notation.
    pub fn tictactoe() -> Self {
        Mnk {
            m: 3,
            n: 3,
            k: 3,
            compact: true,
            name: "tictactoe",
        }
    }

    /// An m,n,k-game (m columns, n rows, k in a row).
    pub fn new(m: usize, n: usize, k: usize) -> Result<Self, String> {
        // Checked: a product that overflows (or wraps to a small number) is refused too.
        if m == 0 || n == 0 || m.checked_mul(n).is_none_or(|c| c > MAX_CELLS) {
            return Err(format!(
                "mnk board {m} x {n} is not supported (1 to {MAX_CELLS} cells)"
            ));
        }
        if k == 0 || k > m.max(n) {
            return Err(format!(
                "mnk k={k} must be between 1 and max(m, n) = {}",
                m.max(n)
            ));
        }
        Ok(Mnk {
            m,
            n,
            k,
            compact: false,
            name: "mnk",
        })
    }

    fn cells(&self) -> usize {
        self.m * self.n
    }

    /// Whether the stone just put on `cell` by `p` completes k in a row.
    fn wins_at(&self, stones: &Cells, cell: usize) -> bool {
        let (r0, c0) = ((cell / self.m) as isize, (cell % self.m) as isize);
        for (dr, dc) in [(0isize, 1isize), (1, 0), (1, 1), (1, -1)] {
            let mut run = 1;
            for sign in [1isize, -1] {
                let (mut r, mut c) = (r0 + sign * dr, c0 + sign * dc);
                while r >= 0
                    && c >= 0
                    && (r as usize) < self.n
                    && (c as usize) < self.m
                    && stones.has(r as usize * self.m + c as usize)
                {
                    run += 1;
                    r += sign * dr;
                    c += sign * dc;
                }
            }
            if run >= self.k {
                return true;
            }
        }
        false
    }

    fn parse_cell(&self, text: &str) -> Result<usize, NotationError> {
        let t = text.trim();
        let v: usize = t
            .parse()
            .map_err(|_| NotationError::new("not a cell number").with_fragment(t))?;
        if v == 0 || v > self.cells() {
            return Err(NotationError::new(format!(
                "cell {v} is outside the board (cells 1..{})",
                self.cells()
            ))
            .with_fragment(t));
        }
        Ok(v - 1)
    }
}

impl Game for Mnk {
    type State = MnkState;
    type Move = u16;

    fn name(&self) -> &'static str {
        self.name
    }
    fn num_players(&self) -> usize {
        2
    }
    fn initial_state(&self) -> MnkState {
        MnkState {
            stones: [Cells::default(); 2],
            plies: 0,
            won: false,
        }
    }
    #[inline]
    fn turn(&self, s: &MnkState) -> Turn {
        if s.won || s.plies as usize == self.cells() {
            Turn::Terminal
        } else {
            Turn::Player((s.plies % 2) as u8)
        }
    }
    fn legal_moves(&self, s: &MnkState, moves: &mut Vec<u16>) {
        moves.clear();
        if self.is_terminal(s) {
            return;
        }
        for i in 0..self.cells() {
            if !s.stones[0].has(i) && !s.stones[1].has(i) {
                moves.push(i as u16);
            }
        }
    }
    #[inline]
    fn apply(&self, s: &mut MnkState, mv: u16) {
        let p = (s.plies % 2) as usize;
        s.stones[p].set(mv as usize);
        s.plies += 1;
        s.won = self.wins_at(&s.stones[p], mv as usize);
    }
    fn returns(&self, s: &MnkState, out: &mut [f64]) {
        out[0] = 0.0;
        out[1] = 0.0;
        if s.won {
            let winner = ((s.plies + 1) % 2) as usize;
            out[winner] = 1.0;
            out[1 - winner] = -1.0;
        }
    }

    fn parse_position(&self, text: &str) -> Result<MnkState, NotationError> {
        let mut s = self.initial_state();
        let t = text.trim();
        let items: Vec<String> = if t.is_empty() {
            Vec::new()
        } else if self.compact && !t.contains(',') {
            t.chars().map(|c| c.to_string()).collect()
        } else {
            t.split(',').map(|x| x.to_string()).collect()
        };
        for (i, item) in items.iter().enumerate() {
            let mv = self.parse_move(&s, item).map_err(|e| e.at_move(i + 1))?;
            self.apply(&mut s, mv);
        }
        Ok(s)
    }

    fn format_position(&self, s: &MnkState) -> String {
        // A legal order: alternate the players' cells; if the game was won, the last stone is
        // one that lies on every completed line (so no earlier prefix was already won).
        let mut own: [Vec<usize>; 2] = [s.stones[0].iter().collect(), s.stones[1].iter().collect()];
        if s.won {
            let winner = ((s.plies + 1) % 2) as usize;
            let cells = own[winner].clone();
            let last = cells.iter().copied().find(|&c| {
                let mut without = s.stones[winner];
                without.0[c / 64] &= !(1 << (c % 64));
                !cells.iter().any(|&d| d != c && self.wins_at(&without, d))
            });
            if let Some(last) = last {
                own[winner].retain(|&c| c != last);
                own[winner].push(last);
            }
        }
        let mut order = Vec::with_capacity(s.plies as usize);
        for i in 0..s.plies as usize {
            order.push(own[i % 2][i / 2] + 1);
        }
        let sep = if self.compact { "" } else { "," };
        order
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(sep)
    }

    fn parse_move(&self, s: &MnkState, text: &str) -> Result<u16, NotationError> {
        let cell = self.parse_cell(text)?;
        if self.is_terminal(s) {
            return Err(NotationError::new("the game is already over").with_fragment(text.trim()));
        }
        if s.stones[0].has(cell) || s.stones[1].has(cell) {
            return Err(
                NotationError::new(format!("cell {} is already taken", cell + 1))
                    .with_fragment(text.trim()),
            );
        }
        Ok(cell as u16)
    }

    fn format_move(&self, _s: &MnkState, mv: u16) -> String {
        (mv + 1).to_string()
    }

    fn same_state(&self, a: &MnkState, b: &MnkState) -> bool {
        a == b
    }
}

impl ZeroSum for Mnk {
    #[inline]
    fn side(&self, s: &MnkState) -> u8 {
        (s.plies % 2) as u8
    }
    #[inline]
    fn terminal_value(&self, s: &MnkState) -> i32 {
        // The side to move at a won position is the loser.
        if s.won {
            -1
        } else {
            0
        }
    }
    fn value_bounds(&self, _s: &MnkState) -> (i32, i32) {
        (-1, 1)
    }
    fn immediate_value(&self, s: &MnkState) -> Option<i32> {
        // A stone that completes a line wins at once.
        let p = (s.plies % 2) as usize;
        for i in 0..self.cells() {
            if !s.stones[0].has(i) && !s.stones[1].has(i) {
                let mut mine = s.stones[p];
                mine.set(i);
                if self.wins_at(&mine, i) {
                    return Some(1);
                }
            }
        }
        None
    }
}

/// No search hints beyond `immediate_value`; history by cell.
impl Tactics for Mnk {
    fn history_slots(&self) -> usize {
        2 * self.cells()
    }
    fn history_slot(&self, s: &MnkState, mv: u16) -> usize {
        (s.plies as usize % 2) * self.cells() + mv as usize
    }
}

impl Hashed for Mnk {
    const HASH_IS_KEY: bool = false;
    fn hash(&self, s: &MnkState) -> u64 {
        // The side to move is implied by the stone counts. 64-bit mix of the two bitsets;
        // boards of up to 40 cells get a perfect base-3 key instead.
        if self.cells() <= 40 {
            let mut key = 0u64;
            for i in 0..self.cells() {
                let d = if s.stones[0].has(i) {
                    1
                } else if s.stones[1].has(i) {
                    2
                } else {
                    0
                };
                key = key * 3 + d;
            }
            return key;
        }
        let mut h = 0x9E37_79B9_7F4A_7C15u64;
        for p in 0..2 {
            for w in s.stones[p].0 {
                h = (h ^ w).wrapping_mul(0xBF58_476D_1CE4_E5B9).rotate_left(31);
            }
        }
        h ^ (h >> 29)
    }
}

impl Mnk {
    /// Columns, rows and stones in a row that win.
    pub fn dims(&self) -> (usize, usize, usize) {
        (self.m, self.n, self.k)
    }
}

impl Exact for Mnk {
    type Book = ();
}

/// A parameter of the board, 1 to [`MAX_CELLS`], 3 unless given (tic-tac-toe).
const fn board_param(name: &'static str, help: &'static str, why: &'static str) -> Spec {
    Spec::uint(name, 1, MAX_CELLS as u64, DefaultValue::UInt(3), help, why)
}
/// Why `m` and `n` are bounded.
const SIDE_WHY: &str = "at most 256 cells in all (m x n): the board's bitsets";
/// `m`: columns.
pub const PARAM_M: Spec = board_param("m", "columns", SIDE_WHY);
/// `n`: rows.
pub const PARAM_N: Spec = board_param("n", "rows", SIDE_WHY);
/// `k`: stones in a row to win.
pub const PARAM_K: Spec = board_param("k", "stones in a row that win", "at most max(m, n)");

/// The catalogue entry of tic-tac-toe (no parameters, compact notation).
pub struct TicTacToeEntry;

impl GameEntry for TicTacToeEntry {
    const NAME: &'static str = "tictactoe";
    const PARAMS: &'static [Spec] = &[];
    const FAMILY: Family = Family::ZeroSum {
        book: false,
        features: false,
    };
    type Game = Mnk;
    fn build(params: &Opts) -> Result<Mnk, SolveError> {
        params.finish()?;
        Ok(Mnk::tictactoe())
    }
    fn offer<V: Visitor>(game: Mnk, visitor: V) -> V::Output {
        visitor.zero_sum(game)
    }
}

/// The catalogue entry of m,n,k-games.
pub struct MnkEntry;

impl GameEntry for MnkEntry {
    const NAME: &'static str = "mnk";
    const PARAMS: &'static [Spec] = &[PARAM_M, PARAM_N, PARAM_K];
    const FAMILY: Family = Family::ZeroSum {
        book: false,
        features: false,
    };
    type Game = Mnk;
    fn build(params: &Opts) -> Result<Mnk, SolveError> {
        let m = params.uint_value(&PARAM_M)?;
        let n = params.uint_value(&PARAM_N)?;
        let k = params.uint_value(&PARAM_K)?;
        params.finish()?;
        Mnk::new(m, n, k).map_err(SolveError::bad)
    }
    fn offer<V: Visitor>(game: Mnk, visitor: V) -> V::Output {
        visitor.zero_sum(game)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::battery;

    #[test]
    fn hostile_targets_and_moves_are_refused_on_one_short_line() {
        let g = Mnk::tictactoe();
        let s = g.initial_state();
        let long = format!("1\n{}", "9".repeat(10_000));
        let e = g.parse_target(&s, &long).unwrap_err().to_string();
        assert!(!e.contains('\n') && e.len() < 100, "{e}");
        let e = g
            .parse_position(&format!("1,{long}"))
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n') && e.len() < 150, "{e}");
    }

    #[test]
    fn battery_tictactoe_and_mnk() {
        let g = Mnk::tictactoe();
        battery::check_game(&g, &g.initial_state(), 300, 1);
        battery::check_hashed(&g, &g.initial_state(), 300, 2);
        battery::check_zero_sum(&g, &g.initial_state(), 300, 3);
        let g = Mnk::new(5, 4, 4).unwrap();
        battery::check_game(&g, &g.initial_state(), 100, 4);
        battery::check_hashed(&g, &g.initial_state(), 100, 5);
        battery::check_zero_sum(&g, &g.initial_state(), 100, 6);
        let g = Mnk::new(9, 9, 5).unwrap();
        battery::check_game(&g, &g.initial_state(), 20, 7);
    }

    /// The known counts: 255,168 complete games (131,184 X wins, 77,904 O wins, 46,080 draws) and
    /// 5,478 distinct legal positions including the empty board.
    #[test]
    fn tictactoe_counts_from_the_course() {
        fn walk(
            g: &Mnk,
            s: &MnkState,
            counts: &mut [u64; 3],
            seen: &mut std::collections::HashSet<MnkState>,
        ) {
            seen.insert(s.clone());
            if g.is_terminal(s) {
                let mut r = [0.0; 2];
                g.returns(s, &mut r);
                counts[if r[0] > 0.0 {
                    0
                } else if r[1] > 0.0 {
                    1
                } else {
                    2
                }] += 1;
                return;
            }
            let mut moves = Vec::new();
            g.legal_moves(s, &mut moves);
            for m in moves {
                let mut c = s.clone();
                g.apply(&mut c, m);
                walk(g, &c, counts, seen);
            }
        }
        let g = Mnk::tictactoe();
        let mut counts = [0u64; 3];
        let mut seen = std::collections::HashSet::new();
        walk(&g, &g.initial_state(), &mut counts, &mut seen);
        assert_eq!(counts, [131_184, 77_904, 46_080]);
        assert_eq!(counts.iter().sum::<u64>(), 255_168);
        assert_eq!(seen.len(), 5_478);
    }

    #[test]
    fn notation_errors_name_the_move() {
        let g = Mnk::tictactoe();
        let e = g.parse_position("155").unwrap_err();
        assert_eq!(e.to_string(), "move 3 ('5'): cell 5 is already taken");
        let e = g.parse_position("1x").unwrap_err();
        assert_eq!(e.to_string(), "move 2 ('x'): not a cell number");
        let e = g.parse_position("0").unwrap_err();
        assert!(e.to_string().contains("outside the board"));
        // X wins with 1,2,3 after O's 4,5: a move after the win is refused.
        let e = g.parse_position("142536").unwrap_err();
        assert!(e.to_string().contains("already over"), "{e}");
        let g = Mnk::new(4, 4, 3).unwrap();
        assert_eq!(
            g.format_position(&g.parse_position("16,1,6").unwrap()),
            "6,1,16"
        );
        assert!(Mnk::new(3, 3, 4).is_err());
    }
}
