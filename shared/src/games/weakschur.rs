//! Weak Schur numbers as a single-player game: put 1, 2, 3, ... in turn into one of `k` sets so
//! that no set holds `x`, `y` and `x + y` with `x != y` (weakly sum-free). The game ends when the
//! next number fits nowhere; the score is the count of numbers placed. WS(1..4) = 2, 8, 23, 66;
//! WS(5) >= 196, WS(6) >= 646 (Eliahou et al.).
//!
//! Sets are opened in order (the next number may go into an already used set or into the first
//! unused one), which removes the k! relabellings without changing the best score.
//!
//! Notation: the 1-based set of each number, in order, as digits (`12212`); blanks and commas
//! are ignored. A move is one digit. Bad input is a [`NotationError`] naming the move and the sum
//! that breaks the rule. Move codes: `(number - 1) * k + set`, dense.

use crate::games::entry::{Family, GameEntry, Visitor};
use crate::model::settings::{DefaultValue, Opts, SolveError, Spec};
use crate::model::single::SinglePlayer;
use crate::model::Picture;
use crate::model::{Game, MoveCodes, NotationError, Turn};

/// Largest number the game places: a game that reaches it ends there (WS(6) >= 646 fits).
pub const MAX_N: usize = 1024;
/// Largest number of sets.
pub const MAX_K: usize = 6;
const WORDS: usize = MAX_N / 64;

/// The weak Schur game for `k` sets.
#[derive(Clone, Debug)]
pub struct WeakSchur {
    k: usize,
}

/// Numbers 1..=placed assigned to sets.
#[derive(Clone, Debug)]
pub struct WeakSchurState {
    placed: u16,
    opened: u8,
    /// `members[j]` bit `x`: number `x` is in set `j` (bit 0 unused).
    members: [[u64; WORDS]; MAX_K],
    /// `forbidden[j]` bit `z`: `z = x + y` for two different members of set `j`.
    forbidden: [[u64; WORDS]; MAX_K],
    /// Set of each number `1..=placed` at index `number - 1`.
    assign: [u8; MAX_N],
}

#[inline]
fn has(bits: &[u64; WORDS], i: usize) -> bool {
    i < MAX_N && bits[i / 64] >> (i % 64) & 1 == 1
}

impl WeakSchur {
    /// `k` sets, 1 to [`MAX_K`].
    pub fn new(k: usize) -> Result<Self, String> {
        if k == 0 || k > MAX_K {
            return Err(format!("weakschur k={k} must be between 1 and {MAX_K}"));
        }
        Ok(WeakSchur { k })
    }

    /// Why `z` may not go into set `j`, if it may not.
    fn conflict(&self, s: &WeakSchurState, j: usize, z: usize) -> Option<String> {
        if j >= self.k {
            return Some(format!("set {} does not exist (sets 1..{})", j + 1, self.k));
        }
        if j > s.opened as usize {
            return Some(format!(
                "set {} is opened before set {}",
                j + 1,
                s.opened as usize + 1
            ));
        }
        if has(&s.forbidden[j], z) {
            let x = (1..z)
                .find(|&x| 2 * x != z && has(&s.members[j], x) && has(&s.members[j], z - x))?;
            return Some(format!("{z} = {x} + {} are all in set {}", z - x, j + 1));
        }
        None
    }
}

impl Game for WeakSchur {
    type State = WeakSchurState;
    type Move = u8;

    fn name(&self) -> &'static str {
        "weakschur"
    }
    fn num_players(&self) -> usize {
        1
    }
    fn initial_state(&self) -> WeakSchurState {
        WeakSchurState {
            placed: 0,
            opened: 0,
            members: [[0; WORDS]; MAX_K],
            forbidden: [[0; WORDS]; MAX_K],
            assign: [0; MAX_N],
        }
    }
    fn turn(&self, s: &WeakSchurState) -> Turn {
        let z = s.placed as usize + 1;
        if z >= MAX_N {
            return Turn::Terminal;
        }
        let open = (s.opened as usize + 1).min(self.k);
        if (0..open).any(|j| !has(&s.forbidden[j], z)) {
            Turn::Player(0)
        } else {
            Turn::Terminal
        }
    }
    fn legal_moves(&self, s: &WeakSchurState, moves: &mut Vec<u8>) {
        moves.clear();
        let z = s.placed as usize + 1;
        if z >= MAX_N {
            return;
        }
        let open = (s.opened as usize + 1).min(self.k);
        for j in 0..open {
            if !has(&s.forbidden[j], z) {
                moves.push(j as u8);
            }
        }
    }
    fn apply(&self, s: &mut WeakSchurState, mv: u8) {
        let j = mv as usize;
        let z = s.placed as usize + 1;
        // forbidden[j] |= members[j] << z: every x already in the set forbids x + z.
        let (wshift, bshift) = (z / 64, z % 64);
        let members = s.members[j];
        let f = &mut s.forbidden[j];
        for w in (wshift..WORDS).rev() {
            let src = w - wshift;
            let mut v = members[src] << bshift;
            if bshift > 0 && src > 0 {
                v |= members[src - 1] >> (64 - bshift);
            }
            f[w] |= v;
        }
        s.members[j][z / 64] |= 1 << (z % 64);
        s.assign[z - 1] = mv;
        s.placed += 1;
        if j == s.opened as usize {
            s.opened += 1;
        }
    }
    fn returns(&self, s: &WeakSchurState, out: &mut [f64]) {
        out[0] = s.placed as f64;
    }

    fn parse_position(&self, text: &str) -> Result<WeakSchurState, NotationError> {
        let mut s = self.initial_state();
        let digits = text.chars().filter(|c| !c.is_whitespace() && *c != ',');
        for (i, c) in digits.enumerate() {
            let mv = self
                .parse_move(&s, &c.to_string())
                .map_err(|e| e.at_move(i + 1))?;
            self.apply(&mut s, mv);
        }
        Ok(s)
    }
    fn format_position(&self, s: &WeakSchurState) -> String {
        s.assign[..s.placed as usize]
            .iter()
            .map(|&j| char::from(b'1' + j))
            .collect()
    }
    fn parse_move(&self, s: &WeakSchurState, text: &str) -> Result<u8, NotationError> {
        let t = text.trim();
        let j: usize = t
            .parse()
            .map_err(|_| NotationError::new("not a set number").with_fragment(t))?;
        if j == 0 {
            return Err(NotationError::new("sets are numbered from 1").with_fragment(t));
        }
        let z = s.placed as usize + 1;
        if z >= MAX_N {
            return Err(
                NotationError::new(format!("the game stops at {}", MAX_N - 1)).with_fragment(t),
            );
        }
        if let Some(why) = self.conflict(s, j - 1, z) {
            return Err(
                NotationError::new(format!("{z} cannot go into set {j}: {why}")).with_fragment(t),
            );
        }
        Ok((j - 1) as u8)
    }
    fn format_move(&self, _s: &WeakSchurState, mv: u8) -> String {
        (mv + 1).to_string()
    }
    fn same_state(&self, a: &WeakSchurState, b: &WeakSchurState) -> bool {
        a.placed == b.placed && a.assign[..a.placed as usize] == b.assign[..b.placed as usize]
    }
}

impl MoveCodes for WeakSchur {
    #[inline]
    fn code(&self, s: &WeakSchurState, mv: u8) -> u64 {
        (s.placed as u64) * self.k as u64 + mv as u64
    }
}

impl SinglePlayer for WeakSchur {
    fn code_space(&self) -> Option<usize> {
        Some(MAX_N * self.k)
    }
}

impl Picture for WeakSchur {}

/// `k`: the number of sets.
pub const PARAM_K: Spec = Spec::uint(
    "k",
    1,
    MAX_K as u64,
    DefaultValue::UInt(4),
    "number of sets",
    "the board representation's limit",
);

/// The catalogue entry of weak Schur numbers.
pub struct WeakSchurEntry;

impl GameEntry for WeakSchurEntry {
    const NAME: &'static str = "weakschur";
    const PARAMS: &'static [Spec] = &[PARAM_K];
    const FAMILY: Family = Family::Single;
    type Game = WeakSchur;
    fn build(params: &Opts) -> Result<WeakSchur, SolveError> {
        let k = params.uint_value(&PARAM_K)?;
        params.finish()?;
        WeakSchur::new(k).map_err(SolveError::bad)
    }
    fn offer<V: Visitor>(game: WeakSchur, visitor: V) -> V::Output {
        visitor.single(game)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{battery, single};

    /// Exhaustive depth-first search for the best score (the reference for the kernels' tests).
    fn exhaustive(g: &WeakSchur, s: &WeakSchurState) -> usize {
        let mut moves = Vec::new();
        g.legal_moves(s, &mut moves);
        let mut best = s.placed as usize;
        for &m in &moves {
            let mut c = s.clone();
            g.apply(&mut c, m);
            best = best.max(exhaustive(g, &c));
        }
        best
    }

    #[test]
    fn known_weak_schur_numbers_by_exhaustive_search() {
        for (k, ws) in [(1, 2), (2, 8), (3, 23)] {
            let g = WeakSchur::new(k).unwrap();
            assert_eq!(exhaustive(&g, &g.initial_state()), ws, "WS({k})");
        }
    }

    #[test]
    fn battery_and_single_player_checks() {
        for k in 1..=MAX_K {
            let g = WeakSchur::new(k).unwrap();
            battery::check_game(&g, &g.initial_state(), 20, k as u64);
            single::check_single_player(&g, &g.initial_state(), 20, k as u64);
        }
    }

    #[test]
    fn notation_names_the_broken_sum() {
        let g = WeakSchur::new(2).unwrap();
        // 1 2 | 3 4 ... : 1,2 in set 1 allow 3? 1 + 2 = 3 forbids 3 in set 1.
        let e = g.parse_position("111").unwrap_err();
        assert_eq!(
            e.to_string(),
            "move 3 ('1'): 3 cannot go into set 1: 3 = 1 + 2 are all in set 1"
        );
        let e = g.parse_position("13").unwrap_err();
        assert!(e.to_string().contains("set 3 does not exist"), "{e}");
        let e = g.parse_position("2").unwrap_err();
        assert!(e.to_string().contains("opened before"), "{e}");
        // The weak condition: 2 = 1 + 1 is allowed, so 1 and 2 share a set.
        let s = g.parse_position("1122 1").unwrap();
        assert_eq!(g.score(&s), 5.0);
        assert_eq!(g.format_position(&s), "11221");
        // An optimal partition of 1..8 into two sets is terminal at 8.
        let s = g.parse_position("11212221").unwrap();
        assert!(g.is_terminal(&s), "{}", g.format_position(&s));
        assert!(WeakSchur::new(0).is_err() && WeakSchur::new(7).is_err());
    }
}
