//! Pig: the two-player dice game (Neller and Presser's rules), with the target score and the
//! die size as parameters (`target=100`, `die=6`).
//!
//! On a turn the player rolls as often as they like: a 1 loses the turn total and passes the turn,
//! any other face adds to it; holding banks the turn total and passes the turn. The first whose
//! banked score reaches the target wins. Holding a turn total of 0 is not offered (it would let
//! a game cycle without anyone rolling). Model: a decision node (`roll` or `hold`), then after
//! `roll` a chance node over the faces `1`..`die`, each with probability `1/die`.
//!
//! Values ([`ChanceZeroSum`]): +1 for a win, -1 for a loss, from the view of the player to move
//! (at a chance node the player rolling; at the end the winner, who keeps the move when holding
//! wins); bounds [-1, 1]. The evaluator is a race estimate (banked plus turn total against the
//! opponent's banked score, scaled by the target).
//!
//! Notation: `score0/score1/mover/turn_total`, mover `1` or `2`, with `?` appended while the die
//! is in the air (chance node): the start is `0/0/1/0`, and `12/30/2/5?` means player 2 has 5 on
//! this turn and has just chosen to roll. Moves: `roll`, `hold`; outcomes: the face. Impossible
//! positions (both scores at the target, a turn total at a finished game, numbers out of range)
//! are rejected naming the field.

use crate::games::entry::{Family, GameEntry, Visitor};
use crate::model::chance::ChanceZeroSum;
use crate::model::settings::{DefaultValue, Opts, SolveError, Spec};
use crate::model::Picture;
use crate::model::{Game, Hashed, NotationError, Stochastic, Turn};

/// A Pig game: its parameters.
#[derive(Clone, Debug)]
pub struct Pig {
    target: u16,
    die: u8,
}

/// A position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PigState {
    scores: [u16; 2],
    turn_total: u16,
    mover: u8,
    rolling: bool,
}

/// A move or chance outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PigMove {
    /// Roll the die.
    Roll,
    /// Bank the turn total.
    Hold,
    /// The die shows this face (chance).
    Face(u8),
}

/// Largest target accepted (scores are `u16`, and a turn total stays below the target plus a die).
pub const MAX_TARGET: u16 = 10_000;

impl Pig {
    /// A game to `target` points with a die of `die` faces.
    pub fn new(target: u16, die: u8) -> Result<Pig, String> {
        if target == 0 || target > MAX_TARGET {
            return Err(format!("pig: target must be 1..{MAX_TARGET}, not {target}"));
        }
        if die < 2 {
            return Err(format!("pig: the die needs at least 2 faces, not {die}"));
        }
        Ok(Pig { target, die })
    }

    fn winner(&self, s: &PigState) -> Option<u8> {
        (0..2).find(|&p| s.scores[p as usize] >= self.target)
    }
}

impl Game for Pig {
    type State = PigState;
    type Move = PigMove;

    fn name(&self) -> &'static str {
        "pig"
    }
    fn num_players(&self) -> usize {
        2
    }
    fn initial_state(&self) -> PigState {
        PigState {
            scores: [0, 0],
            turn_total: 0,
            mover: 0,
            rolling: false,
        }
    }
    #[inline]
    fn turn(&self, s: &PigState) -> Turn {
        if self.winner(s).is_some() {
            Turn::Terminal
        } else if s.rolling {
            Turn::Chance
        } else {
            Turn::Player(s.mover)
        }
    }
    fn legal_moves(&self, s: &PigState, moves: &mut Vec<PigMove>) {
        moves.clear();
        match self.turn(s) {
            Turn::Terminal => {}
            Turn::Chance => moves.extend((1..=self.die).map(PigMove::Face)),
            Turn::Player(_) => {
                moves.push(PigMove::Roll);
                if s.turn_total > 0 {
                    moves.push(PigMove::Hold);
                }
            }
        }
    }
    #[inline]
    fn apply(&self, s: &mut PigState, mv: PigMove) {
        match mv {
            PigMove::Roll => s.rolling = true,
            PigMove::Hold => {
                s.scores[s.mover as usize] += s.turn_total;
                s.turn_total = 0;
                if self.winner(s).is_none() {
                    s.mover = 1 - s.mover;
                }
            }
            PigMove::Face(f) => {
                s.rolling = false;
                if f == 1 {
                    s.turn_total = 0;
                    s.mover = 1 - s.mover;
                } else {
                    s.turn_total += f as u16;
                }
            }
        }
    }
    fn returns(&self, s: &PigState, out: &mut [f64]) {
        out[0] = 0.0;
        out[1] = 0.0;
        if let Some(w) = self.winner(s) {
            out[w as usize] = 1.0;
            out[1 - w as usize] = -1.0;
        }
    }

    fn parse_position(&self, text: &str) -> Result<PigState, NotationError> {
        let t = text.trim();
        if t.is_empty() {
            return Ok(self.initial_state());
        }
        let (body, rolling) = match t.strip_suffix('?') {
            Some(b) => (b, true),
            None => (t, false),
        };
        let parts: Vec<&str> = body.split('/').collect();
        if parts.len() != 4 {
            return Err(NotationError::new(
                "pig position is score0/score1/mover/turn_total, with '?' while rolling",
            )
            .with_fragment(t));
        }
        let num = |i: usize, what: &str| -> Result<u16, NotationError> {
            parts[i].trim().parse::<u16>().map_err(|_| {
                NotationError::new(format!("pig {what} must be a non-negative integer"))
                    .with_fragment(parts[i])
            })
        };
        let scores = [num(0, "score0")?, num(1, "score1")?];
        let mover = match parts[2].trim() {
            "1" => 0,
            "2" => 1,
            other => {
                return Err(NotationError::new("pig mover must be 1 or 2").with_fragment(other))
            }
        };
        let turn_total = num(3, "turn_total")?;
        let limit = self.target + self.die as u16 * 64;
        if scores.iter().any(|&x| x > limit) || turn_total > limit {
            return Err(NotationError::new(format!(
                "pig numbers above {limit} cannot happen to target {}",
                self.target
            ))
            .with_fragment(t));
        }
        let s = PigState {
            scores,
            turn_total,
            mover,
            rolling,
        };
        if let Some(w) = self.winner(&s) {
            if scores[1 - w as usize] >= self.target {
                return Err(
                    NotationError::new("pig: both scores reach the target").with_fragment(t)
                );
            }
            if turn_total > 0 || rolling || w != mover {
                return Err(NotationError::new(
                    "pig: a finished game has turn total 0, no roll, and the winner as mover",
                )
                .with_fragment(t));
            }
        }
        Ok(s)
    }
    fn format_position(&self, s: &PigState) -> String {
        format!(
            "{}/{}/{}/{}{}",
            s.scores[0],
            s.scores[1],
            s.mover + 1,
            s.turn_total,
            if s.rolling { "?" } else { "" }
        )
    }
    fn parse_move(&self, s: &PigState, text: &str) -> Result<PigMove, NotationError> {
        let t = text.trim();
        let mv = match t {
            "roll" => PigMove::Roll,
            "hold" => PigMove::Hold,
            _ => match t.parse::<u8>() {
                Ok(f) => PigMove::Face(f),
                Err(_) => {
                    return Err(NotationError::new("pig moves are roll, hold or a die face")
                        .with_fragment(t))
                }
            },
        };
        let mut legal = Vec::new();
        self.legal_moves(s, &mut legal);
        if !legal.contains(&mv) {
            return Err(
                NotationError::new(format!("not legal in {}", self.format_position(s)))
                    .with_fragment(t),
            );
        }
        Ok(mv)
    }
    fn format_move(&self, _s: &PigState, mv: PigMove) -> String {
        match mv {
            PigMove::Roll => "roll".into(),
            PigMove::Hold => "hold".into(),
            PigMove::Face(f) => f.to_string(),
        }
    }
    fn same_state(&self, a: &PigState, b: &PigState) -> bool {
        a == b
    }
}

impl Stochastic for Pig {
    fn chance_outcomes(&self, _s: &PigState, out: &mut Vec<(PigMove, f64)>) {
        out.clear();
        let p = 1.0 / self.die as f64;
        out.extend((1..=self.die).map(|f| (PigMove::Face(f), p)));
    }
}

impl Hashed for Pig {
    const HASH_IS_KEY: bool = true;
    fn hash(&self, s: &PigState) -> u64 {
        (s.scores[0] as u64)
            | (s.scores[1] as u64) << 16
            | (s.turn_total as u64) << 32
            | (s.mover as u64) << 48
            | (s.rolling as u64) << 49
    }
}

/// How far the race estimate may go toward a sure result: evaluations stay in
/// [-EVAL_CAP, EVAL_CAP], strictly inside the win/loss values (a hand-set margin, not tuned).
const EVAL_CAP: f64 = 0.95;

impl ChanceZeroSum for Pig {
    #[inline]
    fn player_side(&self, s: &PigState) -> u8 {
        s.mover
    }
    fn terminal_score(&self, s: &PigState) -> f64 {
        match self.winner(s) {
            Some(w) if w == s.mover => 1.0,
            _ => -1.0,
        }
    }
    fn utility_bounds(&self) -> (f64, f64) {
        (-1.0, 1.0)
    }
    fn estimate(&self, s: &PigState) -> f64 {
        let me = (s.scores[s.mover as usize] + s.turn_total) as f64;
        let them = s.scores[1 - s.mover as usize] as f64;
        let lead = (me - them) / self.target as f64;
        lead.clamp(-EVAL_CAP, EVAL_CAP)
    }
    fn order_decisions(&self, s: &PigState, moves: &mut [PigMove]) {
        // Hold first once the turn total wins the game or is large ("hold at 20" rule of thumb).
        if s.scores[s.mover as usize] + s.turn_total >= self.target || s.turn_total >= 20 {
            moves.reverse();
        }
    }
}

impl Picture for Pig {}

/// `target`: the score that wins.
pub const PARAM_TARGET: Spec = Spec::uint(
    "target",
    1,
    MAX_TARGET as u64,
    DefaultValue::UInt(100),
    "score that wins",
    "the board representation's limit",
);
/// `die`: faces of the die.
pub const PARAM_DIE: Spec = Spec::uint(
    "die",
    2,
    u8::MAX as u64,
    DefaultValue::UInt(6),
    "faces of the die",
    "a byte per face count",
);

/// The catalogue entry of Pig.
pub struct PigEntry;

impl GameEntry for PigEntry {
    const NAME: &'static str = "pig";
    const PARAMS: &'static [Spec] = &[PARAM_TARGET, PARAM_DIE];
    const FAMILY: Family = Family::Chance;
    type Game = Pig;
    fn build(params: &Opts) -> Result<Pig, SolveError> {
        let target = params.uint_value(&PARAM_TARGET)?;
        let die = params.uint_value(&PARAM_DIE)?;
        params.finish()?;
        Pig::new(target, die).map_err(SolveError::bad)
    }
    fn offer<V: Visitor>(game: Pig, visitor: V) -> V::Output {
        visitor.chance(game)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{battery, chance::check_chance_zero_sum, play_moves};

    #[test]
    fn battery() {
        for (target, die) in [(20, 6), (100, 6), (10, 3), (1, 2)] {
            let g = Pig::new(target, die).unwrap();
            let s = g.initial_state();
            battery::check_game(&g, &s, 30, 1);
            battery::check_stochastic(&g, &s, 30, 2);
            battery::check_hashed(&g, &s, 10, 3);
            check_chance_zero_sum(&g, &s, 30, 4);
        }
    }

    #[test]
    fn rules_and_notation() {
        let g = Pig::new(20, 6).unwrap();
        let mut s = g.initial_state();
        play_moves(&g, &mut s, &["roll", "4", "roll", "6", "hold"]).unwrap();
        assert_eq!(g.format_position(&s), "10/0/2/0");
        play_moves(&g, &mut s, &["roll", "1"]).unwrap();
        assert_eq!(g.format_position(&s), "10/0/1/0");
        let e = play_moves(&g, &mut s, &["hold"]).unwrap_err().to_string();
        assert!(e.contains("not legal"), "{e}");
        play_moves(&g, &mut s, &["roll", "5", "roll", "5", "hold"]).unwrap();
        assert_eq!(g.turn(&s), Turn::Terminal);
        assert_eq!(g.format_position(&s), "20/0/1/0");
        assert_eq!(g.terminal_score(&s), 1.0);
        for bad in [
            "1/2/3/4",
            "1/2/1",
            "x/0/1/0",
            "20/20/1/0",
            "20/0/2/0",
            "20/0/1/3",
        ] {
            assert!(g.parse_position(bad).is_err(), "{bad}");
        }
        assert!(Pig::new(0, 6).is_err() && Pig::new(10, 1).is_err());
    }

    /// Star1, Star2 and Star2.5 give expectimax's value at the same depth on random positions,
    /// and visit fewer nodes in total.
    #[test]
    fn chance_kernels_agree_at_depth() {
        use crate::search::expectimax::{expectimax, Pruning};
        use crate::search::star1::star1;
        use crate::search::star2::star2;
        use crate::search::star25::{star25, ProbingMode};
        use crate::search::Control;
        use rand::{Rng, SeedableRng};
        let g = Pig::new(30, 6).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let ctl = Control::unlimited();
        let mut totals = [0u64; 5];
        for _ in 0..40 {
            let s = PigState {
                scores: [rng.gen_range(0..30), rng.gen_range(0..30)],
                turn_total: rng.gen_range(0..15),
                mover: rng.gen_range(0..2),
                rolling: rng.gen_bool(0.3),
            };
            for depth in 1..=5 {
                let e = expectimax(&g, &s, Some(depth), Pruning::None, None, &ctl).unwrap();
                let runs = [
                    star1(&g, &s, Some(depth), None, &ctl).unwrap(),
                    star2(&g, &s, Some(depth), None, &ctl).unwrap(),
                    star25(&g, &s, Some(depth), 3, ProbingMode::Sequential, None, &ctl).unwrap(),
                    star25(&g, &s, Some(depth), 3, ProbingMode::Cyclic, None, &ctl).unwrap(),
                ];
                totals[0] += e.nodes;
                for (i, o) in runs.iter().enumerate() {
                    assert!(
                        (o.value - e.value).abs() < 1e-9,
                        "{} depth {depth} kernel {i}: {} vs {}",
                        g.format_position(&s),
                        o.value,
                        e.value
                    );
                    totals[i + 1] += o.nodes;
                }
            }
        }
        eprintln!("pig nodes: expectimax, star1, star2, star2.5 seq 3, cyclic 3: {totals:?}");
        assert!(totals[1..].iter().all(|&n| n < totals[0]), "{totals:?}");
    }
}
