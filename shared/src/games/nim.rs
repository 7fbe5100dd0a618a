//! Nim: heaps of stones; a move takes one or more stones from one heap; normal play (who takes
//! the last stone wins). The catalogue's smallest two-player zero-sum game, and its proof that a
//! game is its own file plus one catalogue line.
//!
//! Values: +1 win, -1 loss for the side to move (no draws). Bouton's theorem gives them: the
//! side to move wins exactly when the xor of the heap sizes is not 0.
//!
//! Parameters: `heaps`, the start heap sizes separated by commas (default `3,4,5`), at most
//! [`MAX_HEAPS`] heaps of at most [`MAX_STONES`] stones.
//!
//! Notation: a position is the heap sizes separated by commas, then `/1` when the second player
//! is to move (`3,4,5`, `1,0,5/1`); the empty text is the start. A move is the heap (1-based),
//! `:` and the stones taken (`2:3` takes 3 stones from heap 2). Positions are the same when
//! their heaps and player to move are.

use crate::games::entry::{Family, GameEntry, Visitor};
use crate::games::Exact;
use crate::model::settings::{DefaultValue, Opts, SolveError, Spec};
use crate::model::{Game, Hashed, NotationError, Picture, Tactics, Turn, ZeroSum};

/// Most heaps.
pub const MAX_HEAPS: usize = 8;
/// Most stones in one heap (5 bits per heap in the hash key).
pub const MAX_STONES: u8 = 31;

/// Nim from a start position.
#[derive(Clone, Debug)]
pub struct Nim {
    start: NimState,
}

/// A position: the heaps (unused ones empty) and the player to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NimState {
    heaps: [u8; MAX_HEAPS],
    count: u8,
    mover: u8,
}

impl NimState {
    /// The heap sizes.
    pub fn heaps(&self) -> &[u8] {
        &self.heaps[..self.count as usize]
    }
}

/// A move: heap index in the high 3 bits, stones taken (1..=31) in the low 5.
fn encode(heap: usize, take: u8) -> u8 {
    (heap as u8) << 5 | take
}

fn decode(mv: u8) -> (usize, u8) {
    ((mv >> 5) as usize, mv & 31)
}

/// Reads heap sizes separated by commas.
fn parse_heaps(text: &str) -> Result<NimState, String> {
    let mut s = NimState {
        heaps: [0; MAX_HEAPS],
        count: 0,
        mover: 0,
    };
    for (i, item) in text.split(',').enumerate() {
        if i >= MAX_HEAPS {
            return Err(format!("nim: at most {MAX_HEAPS} heaps"));
        }
        let n: u8 = item
            .trim()
            .parse()
            .ok()
            .filter(|&n| n <= MAX_STONES)
            .ok_or_else(|| {
                format!(
                    "nim: heap '{}' is not a number of stones from 0 to {MAX_STONES}",
                    crate::model::excerpt(item.trim())
                )
            })?;
        s.heaps[i] = n;
        s.count += 1;
    }
    Ok(s)
}

impl Nim {
    /// Nim from heaps written as in the `heaps` parameter (`3,4,5`).
    pub fn new(heaps: &str) -> Result<Nim, String> {
        Ok(Nim {
            start: parse_heaps(heaps)?,
        })
    }
}

impl Game for Nim {
    type State = NimState;
    type Move = u8;

    fn name(&self) -> &'static str {
        "nim"
    }
    fn num_players(&self) -> usize {
        2
    }
    fn initial_state(&self) -> NimState {
        self.start
    }
    fn turn(&self, s: &NimState) -> Turn {
        if s.heaps().iter().all(|&h| h == 0) {
            Turn::Terminal
        } else {
            Turn::Player(s.mover)
        }
    }
    fn legal_moves(&self, s: &NimState, moves: &mut Vec<u8>) {
        moves.clear();
        for (i, &h) in s.heaps().iter().enumerate() {
            moves.extend((1..=h).map(|take| encode(i, take)));
        }
    }
    fn apply(&self, s: &mut NimState, mv: u8) {
        let (heap, take) = decode(mv);
        s.heaps[heap] -= take;
        s.mover ^= 1;
    }
    fn returns(&self, s: &NimState, out: &mut [f64]) {
        // The player to move at the end faces empty heaps: the other took the last stone.
        out[s.mover as usize] = -1.0;
        out[1 - s.mover as usize] = 1.0;
    }
    fn parse_position(&self, text: &str) -> Result<NimState, NotationError> {
        let t = text.trim();
        if t.is_empty() {
            return Ok(self.start);
        }
        let (heaps, mover) = match t.split_once('/') {
            None => (t, 0),
            Some((h, "0")) => (h, 0),
            Some((h, "1")) => (h, 1),
            Some((_, p)) => {
                return Err(NotationError::new("the player to move is 0 or 1").with_fragment(p))
            }
        };
        let mut s = parse_heaps(heaps).map_err(NotationError::new)?;
        s.mover = mover;
        Ok(s)
    }
    fn format_position(&self, s: &NimState) -> String {
        let heaps: Vec<String> = s.heaps().iter().map(u8::to_string).collect();
        let heaps = heaps.join(",");
        if s.mover == 1 {
            format!("{heaps}/1")
        } else {
            heaps
        }
    }
    fn parse_move(&self, s: &NimState, text: &str) -> Result<u8, NotationError> {
        let bad = || NotationError::new("expected HEAP:STONES").with_fragment(text.trim());
        let (heap, take) = text.trim().split_once(':').ok_or_else(bad)?;
        let heap: usize = heap.trim().parse().map_err(|_| bad())?;
        let take: u8 = take.trim().parse().map_err(|_| bad())?;
        if heap == 0 || heap > s.heaps().len() || take == 0 || take > s.heaps[heap - 1] {
            return Err(NotationError::new("illegal move").with_fragment(text.trim()));
        }
        Ok(encode(heap - 1, take))
    }
    fn format_move(&self, _: &NimState, mv: u8) -> String {
        let (heap, take) = decode(mv);
        format!("{}:{take}", heap + 1)
    }
    fn same_state(&self, a: &NimState, b: &NimState) -> bool {
        a == b
    }
}

impl ZeroSum for Nim {
    fn side(&self, s: &NimState) -> u8 {
        s.mover
    }
    fn terminal_value(&self, _: &NimState) -> i32 {
        -1
    }
    fn value_bounds(&self, _: &NimState) -> (i32, i32) {
        (-1, 1)
    }
}

/// The packed heaps (5 bits each), the heap count and the player to move: a perfect key.
impl Hashed for Nim {
    const HASH_IS_KEY: bool = true;
    fn hash(&self, s: &NimState) -> u64 {
        let heaps = s
            .heaps()
            .iter()
            .enumerate()
            .fold(0u64, |k, (i, &h)| k | (h as u64) << (5 * i));
        heaps | (s.count as u64) << 40 | (s.mover as u64) << 44
    }
}

impl Tactics for Nim {}

impl Exact for Nim {
    type Book = ();
}

impl Picture for Nim {}

/// `heaps`: the start heap sizes.
pub const PARAM_HEAPS: Spec = Spec::text(
    "heaps",
    DefaultValue::Word("3,4,5"),
    "start heap sizes, separated by commas (at most 8 heaps of 0 to 31 stones)",
);

/// The catalogue entry of Nim.
pub struct NimEntry;

impl GameEntry for NimEntry {
    const NAME: &'static str = "nim";
    const PARAMS: &'static [Spec] = &[PARAM_HEAPS];
    const FAMILY: Family = Family::ZeroSum {
        book: false,
        features: false,
    };
    type Game = Nim;
    fn build(params: &Opts) -> Result<Nim, SolveError> {
        let heaps = params.text_value(&PARAM_HEAPS)?;
        params.finish()?;
        Nim::new(heaps).map_err(SolveError::bad)
    }
    fn offer<V: Visitor>(game: Nim, visitor: V) -> V::Output {
        visitor.zero_sum(game)
    }
}

#[cfg(test)]
mod tests;
