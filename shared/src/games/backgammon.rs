//! Backgammon without the doubling cube.
//!
//! Two players, X (player 0, first in the notation and first to roll; no opening roll-off) and O,
//! 15 checkers each. A turn is a roll (a chance node over the 21 distinct rolls: doubles 1/36, the
//! others 1/18) then a move; hitting, entering from the bar, bearing off, the rule to use both
//! dice (or the larger) and gammon and backgammon follow the standard rules, written out in
//! docs/games.md, "Backgammon".
//!
//! Moves: a move is the whole turn, listed once per distinct resulting position (two orders that
//! give the same position are one move; the first sequence found is the one written). A player
//! who cannot move has the single move `pass`.
//!
//! Values ([`ChanceZeroSum`]): points won (+1, +2, +3) or lost, from the view of the player on roll
//! (at a chance node the player about to roll; at the end the winner); bounds [-3, 3]. The
//! evaluator is this module's own race estimate: pip counts and borne-off checkers, a blot and a
//! bar penalty, squashed into (-1, 1).
//!
//! Notation (docs/API.md, section 4): `BOARD BAR MOVER DICE`, BOARD 24 signed counts for X's points
//! 1..24 (positive X, negative O), BAR `x-o`, MOVER `X` or `O`, DICE `-` or the two dice larger
//! first; `start` is the opening. A move is steps `from/to` (`24/18 13/11`, `bar/22 6/off`).

use crate::games::entry::{Family, GameEntry, Visitor};
use crate::model::chance::ChanceZeroSum;
use crate::model::settings::{Opts, SolveError, Spec};
use crate::model::{Game, Hashed, NotationError, Stochastic, Turn};
use std::cell::RefCell;

/// Checkers per player.
pub const CHECKERS: u8 = 15;

/// A position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BgState {
    /// Index `i` is X's point `i + 1` (O's point `24 - i`); positive X, negative O.
    board: [i8; 24],
    bar: [u8; 2],
    off: [u8; 2],
    mover: u8,
    /// The roll to play, larger die first; `None` before the roll.
    dice: Option<(u8, u8)>,
}

/// A move: up to four steps `(from, die)` in the mover's point numbers (25 = the bar), or a roll.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BgMove {
    /// A whole turn; `n` steps are used (0: pass).
    Play {
        /// `(from, die)` per step.
        steps: [(u8, u8); 4],
        /// Number of steps.
        n: u8,
    },
    /// The dice show this roll (larger first).
    Roll(u8, u8),
}

/// Backgammon (no parameters).
#[derive(Clone, Debug, Default)]
pub struct Backgammon;

/// One generated turn: its steps, how many dice it used, the position it reaches.
#[derive(Clone, Copy)]
struct Candidate {
    steps: [(u8, u8); 4],
    n: u8,
    /// The position it reaches, and a hash of it for quick duplicate checks.
    result: BgState,
    key: u64,
}

thread_local! {
    /// Scratch space of the move generator, reused so that generation allocates nothing per
    /// node once warm.
    static SCRATCH: RefCell<Vec<Candidate>> = const { RefCell::new(Vec::new()) };
}

impl BgState {
    /// Board index of the mover's point `p` (1..24).
    #[inline]
    fn idx(mover: u8, p: u8) -> usize {
        if mover == 0 {
            p as usize - 1
        } else {
            24 - p as usize
        }
    }
    /// Checkers of `player` on `player`'s point `p`.
    #[inline]
    fn own(&self, player: u8, p: u8) -> u8 {
        let v = self.board[Self::idx(player, p)];
        if player == 0 {
            v.max(0) as u8
        } else {
            (-v).max(0) as u8
        }
    }
    /// Checkers of `player`'s opponent on `player`'s point `p`.
    #[inline]
    fn theirs(&self, player: u8, p: u8) -> u8 {
        self.own(1 - player, 25 - p)
    }
    #[inline]
    fn add(&mut self, player: u8, p: u8, delta: i8) {
        let i = Self::idx(player, p);
        if player == 0 {
            self.board[i] += delta;
        } else {
            self.board[i] -= delta;
        }
    }
    /// The highest point (mover's numbering) holding one of `player`'s checkers, 25 if on the bar.
    fn highest(&self, player: u8) -> u8 {
        if self.bar[player as usize] > 0 {
            return 25;
        }
        (1..=24)
            .rev()
            .find(|&p| self.own(player, p) > 0)
            .unwrap_or(0)
    }
    /// Whether `player` may play die `d` from `from` (25: the bar).
    fn can_step(&self, player: u8, from: u8, d: u8) -> bool {
        if self.bar[player as usize] > 0 {
            if from != 25 {
                return false;
            }
        } else if from == 25 || self.own(player, from) == 0 {
            return false;
        }
        let to = from as i32 - d as i32;
        if to >= 1 {
            return self.theirs(player, to as u8) <= 1;
        }
        // Bearing off: all checkers home, exact or from the highest point.
        let high = self.highest(player);
        high <= 6 && (to == 0 || from == high)
    }
    /// Plays a legal step.
    fn step(&mut self, player: u8, from: u8, d: u8) {
        if from == 25 {
            self.bar[player as usize] -= 1;
        } else {
            self.add(player, from, -1);
        }
        let to = from as i32 - d as i32;
        if to >= 1 {
            let to = to as u8;
            if self.theirs(player, to) == 1 {
                self.add(1 - player, 25 - to, -1);
                self.bar[1 - player as usize] += 1;
            }
            self.add(player, to, 1);
        } else {
            self.off[player as usize] += 1;
        }
    }
    fn pips(&self, player: u8) -> u32 {
        let mut total = 25 * self.bar[player as usize] as u32;
        for p in 1..=24u8 {
            total += p as u32 * self.own(player, p) as u32;
        }
        total
    }
    fn winner(&self) -> Option<u8> {
        (0..2).find(|&p| self.off[p as usize] == CHECKERS)
    }
}

impl Backgammon {
    /// The opening position, X to roll.
    pub fn start() -> BgState {
        let mut board = [0i8; 24];
        for (p, n) in [(24, 2), (13, 5), (8, 3), (6, 5)] {
            board[p - 1] += n;
            board[24 - p] -= n;
        }
        BgState {
            board,
            bar: [0, 0],
            off: [0, 0],
            mover: 0,
            dice: None,
        }
    }

    /// Points won by the winner of a finished game.
    fn points(s: &BgState, winner: u8) -> u8 {
        let loser = 1 - winner;
        if s.off[loser as usize] > 0 {
            return 1;
        }
        // The winner's home board is the loser's points 19..24.
        if s.bar[loser as usize] > 0 || (19..=24).any(|p| s.own(loser, p) > 0) {
            3
        } else {
            2
        }
    }

    /// Depth-first over dice orders: records every maximal sequence. With a double, steps are
    /// generated from non-increasing points only: our own steps never unblock a point or make a
    /// higher checker movable, so every position reachable in some order is reachable in that
    /// one, and the search is far smaller.
    fn gen(
        s: &BgState,
        dice: &[u8],
        steps: [(u8, u8); 4],
        n: u8,
        out: &mut Vec<Candidate>,
        best: &mut u8,
    ) {
        let mut moved = false;
        if (n as usize) < dice.len() {
            let d = dice[n as usize];
            let player = s.mover;
            let double = dice.len() == 4;
            let top = if double && n > 0 {
                steps[n as usize - 1].0
            } else {
                25
            };
            let sources = if s.bar[player as usize] > 0 {
                25..=25
            } else {
                1..=top.min(24)
            };
            for from in sources {
                if s.can_step(player, from, d) {
                    moved = true;
                    let mut next = *s;
                    next.step(player, from, d);
                    let mut st = steps;
                    st[n as usize] = (from, d);
                    Self::gen(&next, dice, st, n + 1, out, best);
                }
            }
        }
        if !moved && n >= *best {
            if n > *best {
                *best = n;
                out.clear();
            }
            out.push(Candidate {
                steps,
                n,
                result: *s,
                key: Backgammon.hash(s),
            });
        }
    }

    /// Fills `moves` with the legal turns at a decision node.
    fn turns(&self, s: &BgState, moves: &mut Vec<BgMove>) {
        let (hi, lo) = s.dice.expect("a decision node has dice");
        SCRATCH.with(|cell| {
            let mut cands = cell.borrow_mut();
            cands.clear();
            let mut best = 0u8;
            let mut pre = *s;
            pre.dice = None;
            if hi == lo {
                Self::gen(&pre, &[hi; 4], [(0, 0); 4], 0, &mut cands, &mut best);
            } else {
                Self::gen(&pre, &[hi, lo], [(0, 0); 4], 0, &mut cands, &mut best);
                Self::gen(&pre, &[lo, hi], [(0, 0); 4], 0, &mut cands, &mut best);
                if best == 1 && cands.iter().any(|c| c.steps[0].1 == hi) {
                    cands.retain(|c| c.steps[0].1 == hi);
                }
            }
            // One move per distinct resulting position, in generation order.
            for i in 0..cands.len() {
                let c = cands[i];
                if cands[..i]
                    .iter()
                    .any(|o| o.key == c.key && o.result == c.result)
                {
                    continue;
                }
                moves.push(BgMove::Play {
                    steps: c.steps,
                    n: c.n,
                });
            }
        });
    }

    fn after(s: &BgState, mv: BgMove) -> BgState {
        let mut t = *s;
        Backgammon.apply(&mut t, mv);
        t
    }
}

impl Game for Backgammon {
    type State = BgState;
    type Move = BgMove;

    fn name(&self) -> &'static str {
        "backgammon"
    }
    fn num_players(&self) -> usize {
        2
    }
    fn initial_state(&self) -> BgState {
        Self::start()
    }
    #[inline]
    fn turn(&self, s: &BgState) -> Turn {
        if s.winner().is_some() {
            Turn::Terminal
        } else if s.dice.is_none() {
            Turn::Chance
        } else {
            Turn::Player(s.mover)
        }
    }
    fn legal_moves(&self, s: &BgState, moves: &mut Vec<BgMove>) {
        moves.clear();
        match self.turn(s) {
            Turn::Terminal => {}
            Turn::Chance => {
                for hi in 1..=6 {
                    for lo in 1..=hi {
                        moves.push(BgMove::Roll(hi, lo));
                    }
                }
            }
            Turn::Player(_) => self.turns(s, moves),
        }
    }
    fn apply(&self, s: &mut BgState, mv: BgMove) {
        match mv {
            BgMove::Roll(hi, lo) => s.dice = Some((hi, lo)),
            BgMove::Play { steps, n } => {
                let player = s.mover;
                for &(from, d) in &steps[..n as usize] {
                    s.step(player, from, d);
                }
                s.dice = None;
                if s.winner().is_none() {
                    s.mover = 1 - player;
                }
            }
        }
    }
    fn returns(&self, s: &BgState, out: &mut [f64]) {
        out[0] = 0.0;
        out[1] = 0.0;
        if let Some(w) = s.winner() {
            let pts = Self::points(s, w) as f64;
            out[w as usize] = pts;
            out[1 - w as usize] = -pts;
        }
    }

    fn parse_position(&self, text: &str) -> Result<BgState, NotationError> {
        let t = text.trim();
        if t.is_empty() || t == "start" {
            return Ok(Self::start());
        }
        let parts: Vec<&str> = t.split_whitespace().collect();
        if parts.len() != 4 {
            return Err(NotationError::new(
                "backgammon position is 'BOARD BAR MOVER DICE' (24 counts, x-o, X|O, roll or -)",
            )
            .with_fragment(t));
        }
        let counts: Vec<&str> = parts[0].split(',').collect();
        if counts.len() != 24 {
            return Err(NotationError::new(format!(
                "the board needs 24 counts, found {}",
                counts.len()
            ))
            .with_fragment(parts[0]));
        }
        let mut board = [0i8; 24];
        for (i, c) in counts.iter().enumerate() {
            board[i] = c
                .trim()
                .parse::<i8>()
                .ok()
                .filter(|v| v.unsigned_abs() <= CHECKERS)
                .ok_or_else(|| {
                    NotationError::new(format!("point {} must be a count -15..15", i + 1))
                        .with_fragment(*c)
                })?;
        }
        let bar: Vec<&str> = parts[1].split('-').collect();
        let bar_n = |x: &str| x.parse::<u8>().ok().filter(|&v| v <= CHECKERS);
        let bar = match bar.as_slice() {
            [x, o] => match (bar_n(x), bar_n(o)) {
                (Some(x), Some(o)) => [x, o],
                _ => {
                    return Err(
                        NotationError::new("bar counts must be 0..15").with_fragment(parts[1])
                    )
                }
            },
            _ => return Err(NotationError::new("bar is written x-o").with_fragment(parts[1])),
        };
        let mover = match parts[2] {
            "X" => 0,
            "O" => 1,
            other => return Err(NotationError::new("mover is X or O").with_fragment(other)),
        };
        let dice = match parts[3] {
            "-" => None,
            d if d.len() == 2 && d.bytes().all(|b| (b'1'..=b'6').contains(&b)) => {
                let (a, b) = (d.as_bytes()[0] - b'0', d.as_bytes()[1] - b'0');
                if a < b {
                    return Err(
                        NotationError::new("write the roll larger die first").with_fragment(d)
                    );
                }
                Some((a, b))
            }
            other => {
                return Err(
                    NotationError::new("dice are two digits 1..6 (larger first) or -")
                        .with_fragment(other),
                )
            }
        };
        let mut s = BgState {
            board,
            bar,
            off: [0, 0],
            mover,
            dice,
        };
        for p in 0..2u8 {
            let on: u32 =
                (1..=24).map(|q| s.own(p, q) as u32).sum::<u32>() + s.bar[p as usize] as u32;
            if on > CHECKERS as u32 {
                return Err(NotationError::new(format!(
                    "{} has {on} checkers, more than 15",
                    ["X", "O"][p as usize]
                ))
                .with_fragment(t));
            }
            s.off[p as usize] = CHECKERS - on as u8;
        }
        if s.off == [CHECKERS, CHECKERS] {
            return Err(
                NotationError::new("both players have borne off every checker").with_fragment(t),
            );
        }
        if let Some(w) = s.winner() {
            if w != mover || dice.is_some() {
                return Err(NotationError::new(
                    "a finished game has the winner as mover and no dice",
                )
                .with_fragment(t));
            }
        }
        Ok(s)
    }
    fn format_position(&self, s: &BgState) -> String {
        let board: Vec<String> = s.board.iter().map(|v| v.to_string()).collect();
        let dice = match s.dice {
            None => "-".to_string(),
            Some((a, b)) => format!("{a}{b}"),
        };
        format!(
            "{} {}-{} {} {}",
            board.join(","),
            s.bar[0],
            s.bar[1],
            ["X", "O"][s.mover as usize],
            dice
        )
    }
    fn parse_move(&self, s: &BgState, text: &str) -> Result<BgMove, NotationError> {
        let t = text.trim();
        let mut legal = Vec::new();
        self.legal_moves(s, &mut legal);
        if self.turn(s) == Turn::Chance {
            return legal
                .into_iter()
                .find(|m| self.format_move(s, *m) == t)
                .ok_or_else(|| {
                    NotationError::new("a roll is two digits 1..6, larger first").with_fragment(t)
                });
        }
        if self.turn(s) == Turn::Terminal {
            return Err(NotationError::new("the game is over").with_fragment(t));
        }
        // Play the written steps on a copy, each with a die of the roll, and find the legal move
        // that reaches the same position.
        let (hi, lo) = s.dice.expect("decision node");
        let mut dice: Vec<u8> = if hi == lo { vec![hi; 4] } else { vec![hi, lo] };
        let mut cur = *s;
        if t != "pass" {
            for part in t.split_whitespace() {
                let (a, b) = part
                    .split_once('/')
                    .ok_or_else(|| NotationError::new("a step is from/to").with_fragment(part))?;
                let from: u8 = match a {
                    "bar" => 25,
                    _ => a
                        .parse()
                        .ok()
                        .filter(|p| (1..=24).contains(p))
                        .ok_or_else(|| {
                            NotationError::new("from is bar or a point 1..24").with_fragment(part)
                        })?,
                };
                let to: u8 = match b.trim_end_matches('*') {
                    "off" => 0,
                    x => x
                        .parse()
                        .ok()
                        .filter(|p| (1..=24).contains(p))
                        .ok_or_else(|| {
                            NotationError::new("to is off or a point 1..24").with_fragment(part)
                        })?,
                };
                if to >= from {
                    return Err(
                        NotationError::new("checkers move toward point 1").with_fragment(part)
                    );
                }
                let need = from - to;
                // The exact die, or (bearing off) the smallest larger die that is legal.
                let pick = dice
                    .iter()
                    .position(|&d| d == need && cur.can_step(s.mover, from, d))
                    .or_else(|| {
                        if to != 0 {
                            return None;
                        }
                        let mut best: Option<usize> = None;
                        for (i, &d) in dice.iter().enumerate() {
                            let smaller = match best {
                                None => true,
                                Some(b) => d < dice[b],
                            };
                            if d > need && cur.can_step(s.mover, from, d) && smaller {
                                best = Some(i);
                            }
                        }
                        best
                    })
                    .ok_or_else(|| {
                        NotationError::new(format!("no die of {hi}{lo} plays this step here"))
                            .with_fragment(part)
                    })?;
                let d = dice.remove(pick);
                cur.step(s.mover, from, d);
            }
        }
        legal
            .into_iter()
            .find(|m| {
                let mut r = Self::after(s, *m);
                r.mover = cur.mover;
                r.dice = None;
                let mut c = cur;
                c.dice = None;
                r == c
            })
            .ok_or_else(|| {
                NotationError::new(
                    "not a legal move here (both dice must be used when possible, else the larger)",
                )
                .with_fragment(t)
            })
    }
    fn format_move(&self, _s: &BgState, mv: BgMove) -> String {
        match mv {
            BgMove::Roll(a, b) => format!("{a}{b}"),
            BgMove::Play { n: 0, .. } => "pass".into(),
            BgMove::Play { steps, n } => {
                let parts: Vec<String> = steps[..n as usize]
                    .iter()
                    .map(|&(from, d)| {
                        let f = if from == 25 {
                            "bar".to_string()
                        } else {
                            from.to_string()
                        };
                        let to = from as i32 - d as i32;
                        let t = if to <= 0 {
                            "off".to_string()
                        } else {
                            to.to_string()
                        };
                        format!("{f}/{t}")
                    })
                    .collect();
                parts.join(" ")
            }
        }
    }
    fn same_state(&self, a: &BgState, b: &BgState) -> bool {
        a == b
    }
}

impl Stochastic for Backgammon {
    fn chance_outcomes(&self, _s: &BgState, out: &mut Vec<(BgMove, f64)>) {
        out.clear();
        for hi in 1..=6 {
            for lo in 1..=hi {
                let p = if hi == lo { 1.0 / 36.0 } else { 1.0 / 18.0 };
                out.push((BgMove::Roll(hi, lo), p));
            }
        }
    }
}

impl Hashed for Backgammon {
    const HASH_IS_KEY: bool = false;
    fn hash(&self, s: &BgState) -> u64 {
        // FNV-1a over the fields that define the position.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |b: u8| {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        };
        s.board.iter().for_each(|&v| eat(v as u8));
        s.bar.iter().chain(&s.off).for_each(|&v| eat(v));
        eat(s.mover);
        let (a, b) = s.dice.unwrap_or((0, 0));
        eat(a);
        eat(b);
        h
    }
}

/// Pips that the race estimate counts as one unit before squashing (a hand-set scale: one
/// average roll is about 8 pips, so a lead of 30 pips is a clear but not decisive edge).
const PIP_SCALE: f64 = 30.0;
/// Pip-equivalent penalty per blot (a hand-set, untuned weight of this simple evaluator).
const BLOT_PIPS: f64 = 4.0;
/// Pip-equivalent penalty per checker on the bar, beyond its pips (hand-set).
const BAR_PIPS: f64 = 6.0;

impl ChanceZeroSum for Backgammon {
    #[inline]
    fn player_side(&self, s: &BgState) -> u8 {
        s.mover
    }
    fn terminal_score(&self, s: &BgState) -> f64 {
        match s.winner() {
            Some(w) => {
                let pts = Self::points(s, w) as f64;
                if w == s.mover {
                    pts
                } else {
                    -pts
                }
            }
            None => 0.0,
        }
    }
    fn utility_bounds(&self) -> (f64, f64) {
        (-3.0, 3.0)
    }
    /// Race estimate from the mover's side: `tanh` of the pip lead (plus penalties) over
    /// [`PIP_SCALE`], so always in (-1, 1).
    fn estimate(&self, s: &BgState) -> f64 {
        let me = s.mover;
        let score = |p: u8| -> f64 {
            let blots = (1..=24).filter(|&q| s.own(p, q) == 1).count() as f64;
            s.pips(p) as f64 + BLOT_PIPS * blots + BAR_PIPS * s.bar[p as usize] as f64
        };
        ((score(1 - me) - score(me)) / PIP_SCALE).tanh()
    }
    fn order_decisions(&self, s: &BgState, moves: &mut [BgMove]) {
        // Best resulting race estimate (for the mover) first; the estimate after a move is from
        // the opponent's side, so ascending order. Stable, so ties keep generation order.
        moves.sort_by(|a, b| {
            let ea = self.estimate(&Self::after(s, *a));
            let eb = self.estimate(&Self::after(s, *b));
            ea.partial_cmp(&eb).unwrap_or(std::cmp::Ordering::Equal)
        });
    }
}

/// The catalogue entry of backgammon (no parameters).
pub struct BackgammonEntry;

impl GameEntry for BackgammonEntry {
    const NAME: &'static str = "backgammon";
    const PARAMS: &'static [Spec] = &[];
    const FAMILY: Family = Family::Chance;
    type Game = Backgammon;
    fn build(params: &Opts) -> Result<Backgammon, SolveError> {
        params.finish()?;
        Ok(Backgammon)
    }
    fn offer<V: Visitor>(game: Backgammon, visitor: V) -> V::Output {
        visitor.chance(game)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{battery, chance::check_chance_zero_sum};

    fn count(text: &str) -> usize {
        let g = Backgammon;
        let s = g.parse_position(text).unwrap();
        let mut moves = Vec::new();
        g.legal_moves(&s, &mut moves);
        moves.len()
    }

    /// Builds a position from X's and O's checkers as (own point, count) lists.
    fn pos(x: &[(u8, i8)], o: &[(u8, i8)], bar: (u8, u8), mover: &str, dice: &str) -> String {
        let mut b = [0i8; 24];
        for &(p, n) in x {
            b[p as usize - 1] += n;
        }
        for &(p, n) in o {
            b[24 - p as usize] -= n;
        }
        let board: Vec<String> = b.iter().map(|v| v.to_string()).collect();
        format!("{} {}-{} {mover} {dice}", board.join(","), bar.0, bar.1)
    }

    #[test]
    fn battery() {
        let g = Backgammon;
        let s = g.initial_state();
        battery::check_game(&g, &s, 3, 1);
        battery::check_stochastic(&g, &s, 5, 2);
        battery::check_hashed(&g, &s, 3, 3);
        check_chance_zero_sum(&g, &s, 20, 4);
    }

    #[test]
    fn opening_position_and_rolls() {
        let g = Backgammon;
        let s = g.initial_state();
        assert_eq!(
            g.format_position(&s),
            "-2,0,0,0,0,5,0,3,0,0,0,-5,5,0,0,0,-3,0,-5,0,0,0,0,2 0-0 X -"
        );
        let mut out = Vec::new();
        g.chance_outcomes(&s, &mut out);
        assert_eq!(out.len(), 21);
        assert_eq!(out.iter().filter(|(_, p)| *p == 1.0 / 36.0).count(), 6);
        assert!((out.iter().map(|(_, p)| p).sum::<f64>() - 1.0).abs() < 1e-12);
        // Opening 2-1 (written 21): X's checkers on 24, 13, 8, 6. Counted by hand: with the 2
        // from a, then the 1 from b (a, b in {24, 13, 8, 6}, b possibly a - 2), minus equal
        // positions: 24/22 13/12 ... Known count of distinct plays for the opening 21: 15.
        let text = g.format_position(&s).replace(" X -", " X 21");
        assert_eq!(count(&text), 15);
    }

    #[test]
    fn hand_made_counts() {
        // One X checker on its 1 point, roll 65: it bears off (with the 6, the larger die); the
        // 5 cannot be used afterwards. One move, and the game ends with a gammon or backgammon.
        let t = pos(&[(1, 1)], &[(1, 15)], (0, 0), "X", "65");
        let g = Backgammon;
        let s = g.parse_position(&t).unwrap();
        let mut moves = Vec::new();
        g.legal_moves(&s, &mut moves);
        assert_eq!(moves.len(), 1);
        assert_eq!(g.format_move(&s, moves[0]), "1/off");
        let mut e = s;
        g.apply(&mut e, moves[0]);
        assert_eq!(g.turn(&e), Turn::Terminal);
        // O's 15 checkers on O's 1 point = X's 24 point: not in X's home board, none off: gammon.
        assert_eq!(g.terminal_score(&e), 2.0);

        // Bar entry blocked: X on the bar, O holds its points 1..6 (X's entry points 19..24)
        // with two each: X must pass.
        let blocked = pos(
            &[(6, 14)],
            &[(1, 2), (2, 2), (3, 2), (4, 2), (5, 2), (6, 2)],
            (1, 0),
            "X",
            "31",
        );
        assert_eq!(count(&blocked), 1);
        let s = g.parse_position(&blocked).unwrap();
        g.legal_moves(&s, &mut moves);
        assert_eq!(g.format_move(&s, moves[0]), "pass");
        // Open only O's 3 and 4 points (X's 22 and 21): roll 31 enters with the 3 (bar/22; the
        // 1 would land on X's 24, held), then the 1 is played by 22/21 or 6/5. Two moves.
        let two_open = pos(
            &[(6, 14)],
            &[(1, 2), (2, 2), (5, 2), (6, 2)],
            (1, 0),
            "X",
            "31",
        );
        assert_eq!(count(&two_open), 2);
        // Two on the bar with a 31 and only the 3 entering: both checkers cannot enter with the
        // 1, so only bar/22 is played (one move).
        let two_bar = pos(
            &[(6, 13)],
            &[(1, 2), (2, 2), (4, 2), (5, 2), (6, 2)],
            (2, 0),
            "X",
            "31",
        );
        assert_eq!(count(&two_bar), 1);

        // Only one die can be used: X has checkers on 10, 9 and 1; O holds X's 4 and 3.
        let s = g
            .parse_position(&pos(
                &[(10, 1), (9, 1), (1, 13)],
                &[(21, 2), (22, 2)],
                (0, 0),
                "X",
                "65",
            ))
            .unwrap();
        g.legal_moves(&s, &mut moves);
        let texts: Vec<String> = moves.iter().map(|m| g.format_move(&s, *m)).collect();
        // 6 from 10 lands on 4 (blocked), 6 from 9 lands on 3 (blocked); 5 from 10 -> 5, 5 from
        // 9 -> 4 (blocked). So only 10/5 with the 5; then the 6 from 5 -> off? not all home (9
        // is out). 6 from 9 -> 3 blocked. Only one die usable: the larger (6) cannot be used at
        // all, so the 5 is played: exactly one move.
        assert_eq!(texts, vec!["10/5"]);
        // Larger-die rule: X's last checker on 8 (14 off), O holds X's 1 point; roll 52: 8/3
        // (5) then 3/1 is blocked, 8/6 (2) then 6/1 is blocked. Either die alone can be played,
        // not both: the larger must be, so 8/3 is the only move.
        let s = g
            .parse_position(&pos(&[(8, 1)], &[(24, 2)], (0, 0), "X", "52"))
            .unwrap();
        g.legal_moves(&s, &mut moves);
        let texts: Vec<String> = moves.iter().map(|m| g.format_move(&s, *m)).collect();
        assert_eq!(texts, vec!["8/3"]);

        // Bear-off with a larger die from the highest point: X has checkers on 3 and 2, roll 66:
        // 3/off, 2/off (both by the larger-die rule), game over after two dice: one move.
        let s = g
            .parse_position(&pos(&[(3, 1), (2, 1)], &[(24, 15)], (0, 0), "X", "66"))
            .unwrap();
        g.legal_moves(&s, &mut moves);
        assert_eq!(moves.len(), 1);
        // X with checkers on 6 and 5, roll 61: 6/off 5/4, 6/5 5/off (same position as 6/off
        // 5/4? no: 6/5 5/off leaves a checker on 5; 6/off 5/4 leaves one on 4), 5/off?? 5 with
        // a 6 is not the highest. 6/off with the 6 then 5/4 with the 1; or 6/5 with the 1 then
        // 6... the 6 from 5 bears off (5 is now highest): leaves one on 5. Or 5/4 with the 1
        // then 6/off: leaves one on 4 (same as the first). Two distinct positions.
        assert_eq!(
            count(&pos(&[(6, 1), (5, 1)], &[(24, 15)], (0, 0), "X", "61")),
            2
        );
    }

    #[test]
    fn notation_round_trips_and_errors() {
        let g = Backgammon;
        let s = g.parse_position("start").unwrap();
        let mut t = s;
        g.apply(&mut t, g.parse_move(&s, "31").unwrap());
        let mv = g.parse_move(&t, "8/5 6/5").unwrap();
        // Either order of the steps is the same move.
        assert_eq!(g.parse_move(&t, "6/5 8/5").unwrap(), mv);
        g.apply(&mut t, mv);
        assert_eq!(g.parse_position(&g.format_position(&t)).unwrap(), t);
        assert_eq!(t.mover, 1);
        for bad in ["", "1,2 0-0 X -", "x 0-0 X -"] {
            if bad.is_empty() {
                continue;
            }
            assert!(g.parse_position(bad).is_err(), "{bad}");
        }
        let mut r = s;
        g.apply(&mut r, BgMove::Roll(3, 1));
        for bad in ["8/4 6/5", "24/20", "8/5", "13/9"] {
            assert!(g.parse_move(&r, bad).is_err(), "{bad}");
        }
        assert!(g
            .parse_position("-2,0,0,0,0,5,0,3,0,0,0,-5,5,0,0,0,-3,0,-5,0,0,0,0,2 0-0 X 13")
            .is_err());
        assert!(g
            .parse_position("-2,0,0,0,0,5,0,3,0,0,0,-5,5,0,0,0,-3,0,-5,0,0,0,0,9 0-0 X -")
            .is_err());
    }

    #[test]
    fn random_games_end() {
        use rand::{Rng, SeedableRng};
        let g = Backgammon;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut moves = Vec::new();
        let mut outcomes = Vec::new();
        for _ in 0..100 {
            let mut s = g.initial_state();
            let mut plies = 0;
            while g.turn(&s) != Turn::Terminal {
                if g.turn(&s) == Turn::Chance {
                    g.chance_outcomes(&s, &mut outcomes);
                    let mut x: f64 = rng.gen();
                    let mut pick = outcomes[0].0;
                    for &(m, p) in &outcomes {
                        pick = m;
                        if x < p {
                            break;
                        }
                        x -= p;
                    }
                    g.apply(&mut s, pick);
                } else {
                    g.legal_moves(&s, &mut moves);
                    g.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
                }
                plies += 1;
                assert!(plies < 20_000, "a random game did not end");
            }
            let mut r = [0.0; 2];
            g.returns(&s, &mut r);
            assert!(r[0] + r[1] == 0.0 && r[0].abs() >= 1.0 && r[0].abs() <= 3.0);
        }
    }

    /// Star1, Star2 and Star2.5 give expectimax's value at the same depth on backgammon
    /// positions (after random openings), on roll and before the roll.
    #[test]
    fn chance_kernels_agree_at_depth() {
        use crate::search::expectimax::{expectimax, Pruning};
        use crate::search::star1::star1;
        use crate::search::star2::star2;
        use crate::search::star25::{star25, ProbingMode};
        use crate::search::Control;
        use rand::{Rng, SeedableRng};
        let g = Backgammon;
        let ctl = Control::unlimited();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut moves = Vec::new();
        for game in 0..4 {
            let mut s = g.initial_state();
            for _ in 0..rng.gen_range(4..30) {
                if g.turn(&s) == Turn::Terminal {
                    break;
                }
                g.legal_moves(&s, &mut moves);
                g.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
            }
            let depth = if g.turn(&s) == Turn::Chance { 1 } else { 2 };
            let e = expectimax(&g, &s, Some(depth), Pruning::None, None, &ctl).unwrap();
            let runs = [
                star1(&g, &s, Some(depth), None, &ctl).unwrap(),
                star2(&g, &s, Some(depth), None, &ctl).unwrap(),
                star25(&g, &s, Some(depth), 2, ProbingMode::Cyclic, None, &ctl).unwrap(),
            ];
            for (i, o) in runs.iter().enumerate() {
                assert!(
                    (o.value - e.value).abs() < 1e-9,
                    "game {game} kernel {i}: {} vs {}",
                    o.value,
                    e.value
                );
                assert!(
                    o.nodes <= e.nodes,
                    "game {game} kernel {i}: {} nodes vs {}",
                    o.nodes,
                    e.nodes
                );
            }
        }
    }
}
