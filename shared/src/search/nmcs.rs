//! Nested Monte Carlo Search (Cazenave 2009), the baseline for NRPA.
//!
//! Contract: [`nmcs`] maximises [`SinglePlayer::score`] from `root`. Level 0 is a uniformly random
//! rollout. At level `l >= 1`, from the current state, every legal move is tried with a level
//! `l - 1` search after it; the best sequence found so far (strictly greater score replaces it, as
//! in the original) is memorised, and its next move is played; this repeats until the game ends.
//! The result is the best score of any completed rollout and its sequence from `root`. A stop
//! ([`Control`]: time, node = rollout limit, cancel) returns the best found so far. Deterministic
//! for a fixed seed. Buffers are per level and reused: no allocation per rollout once grown.

use super::{Control, StopReason};
use crate::model::single::SinglePlayer;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What a search found.
#[derive(Clone, Debug)]
pub struct NmcsOutcome<M> {
    /// Best score of a completed rollout (`-inf` if none completed).
    pub score: f64,
    /// Its moves from the root.
    pub sequence: Vec<M>,
    /// Rollouts made.
    pub rollouts: u64,
    /// Why it stopped early, if it did.
    pub stopped: Option<StopReason>,
}

struct Level<S, M> {
    /// The state this level walks along, and a child of it (reused: no allocation per child).
    cur: Option<S>,
    child: Option<S>,
    /// Legal moves at the current state of this level.
    legal: Vec<M>,
    /// Best sequence from this level's start state.
    best: Vec<M>,
    best_score: f64,
}

impl<S, M> Level<S, M> {
    fn new() -> Self {
        Level {
            cur: None,
            child: None,
            legal: Vec::new(),
            best: Vec::new(),
            best_score: 0.0,
        }
    }
}

struct Search<'a, G: SinglePlayer> {
    game: &'a G,
    ctl: &'a Control,
    rng: ChaCha8Rng,
    levels: Vec<Level<G::State, G::Move>>,
    /// The state a rollout plays on.
    scratch: Option<G::State>,
    /// The sequence returned by the last call of each level (index = level).
    result: Vec<Vec<G::Move>>,
    rollouts: u64,
    stopped: bool,
    overall: f64,
    overall_seq: Vec<G::Move>,
    /// Moves from the root to the state a nested call starts from.
    prefix: Vec<G::Move>,
}

impl<G: SinglePlayer> Search<'_, G> {
    /// Level 0 from `from`: its score, the moves in `result[0]`.
    fn rollout(&mut self, from: &G::State) -> f64 {
        let mut state = self.scratch.take().unwrap_or_else(|| from.clone());
        state.clone_from(from);
        let seq = &mut self.result[0];
        seq.clear();
        let legal = &mut self.levels[0].legal;
        loop {
            self.game.legal_moves(&state, legal);
            if legal.is_empty() {
                break;
            }
            let mv = legal[self.rng.gen_range(0..legal.len())];
            seq.push(mv);
            self.game.apply(&mut state, mv);
        }
        let score = self.game.score(&state);
        self.scratch = Some(state);
        self.rollouts += 1;
        self.ctl.add_nodes(1);
        if score > self.overall {
            self.overall = score;
            self.overall_seq.clear();
            self.overall_seq.extend_from_slice(&self.prefix);
            self.overall_seq.extend_from_slice(&self.result[0]);
        }
        self.stopped = self.stopped || self.ctl.should_stop().is_some();
        score
    }

    /// Level `l` from `state`: its score, the moves in `result[l]`.
    fn nested(&mut self, l: usize, state: &G::State) -> f64 {
        if l == 0 {
            return self.rollout(state);
        }
        let base = self.prefix.len();
        let mut lv = std::mem::replace(&mut self.levels[l], Level::new());
        lv.best.clear();
        lv.best_score = f64::NEG_INFINITY;
        let mut cur = lv.cur.take().unwrap_or_else(|| state.clone());
        cur.clone_from(state);
        let mut child = lv.child.take().unwrap_or_else(|| state.clone());
        let mut played = 0;
        loop {
            self.game.legal_moves(&cur, &mut lv.legal);
            if lv.legal.is_empty() && played == 0 && !self.stopped {
                // `state` is terminal: its own score, with no moves, is the level's (as a
                // rollout from it gives), not "nothing found". Without this a level-1 or deeper
                // call on a finished game (a record fed as the position, or a move that ends
                // the game below level 2) scored minus infinity.
                lv.best_score = self.rollout(&cur);
                break;
            }
            if lv.legal.is_empty() || self.stopped {
                break;
            }
            for i in 0..lv.legal.len() {
                let mv = lv.legal[i];
                child.clone_from(&cur);
                self.game.apply(&mut child, mv);
                self.prefix.push(mv);
                let score = self.nested(l - 1, &child);
                self.prefix.pop();
                if score > lv.best_score {
                    lv.best_score = score;
                    lv.best.truncate(played);
                    lv.best.push(mv);
                    lv.best.extend_from_slice(&self.result[l - 1]);
                }
                if self.stopped {
                    break;
                }
            }
            if self.stopped || lv.best.len() <= played {
                break;
            }
            let mv = lv.best[played];
            self.game.apply(&mut cur, mv);
            self.prefix.push(mv);
            played += 1;
        }
        self.prefix.truncate(base);
        let out = &mut self.result[l];
        out.clear();
        out.extend_from_slice(&lv.best);
        let score = lv.best_score;
        lv.cur = Some(cur);
        lv.child = Some(child);
        self.levels[l] = lv;
        score
    }
}

/// NMCS at `level` (0 = one random rollout) from `root`.
pub fn nmcs<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    level: u32,
    seed: u64,
    ctl: &Control,
) -> NmcsOutcome<G::Move> {
    let n = level as usize + 1;
    let mut s = Search {
        game,
        ctl,
        rng: ChaCha8Rng::seed_from_u64(seed),
        levels: (0..n).map(|_| Level::new()).collect(),
        scratch: None,
        result: (0..n).map(|_| Vec::new()).collect(),
        rollouts: 0,
        stopped: false,
        overall: f64::NEG_INFINITY,
        overall_seq: Vec::new(),
        prefix: Vec::new(),
    };
    s.nested(level as usize, root);
    NmcsOutcome {
        score: s.overall,
        sequence: s.overall_seq,
        rollouts: s.rollouts,
        stopped: if s.stopped { ctl.should_stop() } else { None },
    }
}
