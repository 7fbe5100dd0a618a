//! Rollout records and Adapt: a rollout records the codes of every legal move at each ply and
//! the chosen index, so that Adapt reads the record and never replays the game.

use super::policy::{softmax_weights, Policy};
use super::{AdaptRule, NrpaOptions};
use crate::model::single::SinglePlayer;

/// A played sequence with what Adapt needs: the codes of all legal moves at every ply.
#[derive(Clone, Debug)]
pub(super) struct Record<M> {
    pub(super) score: f64,
    pub(super) moves: Vec<M>,
    /// Codes of the legal moves, ply after ply.
    pub(super) codes: Vec<u64>,
    /// `codes[starts[p]..starts[p + 1]]` are ply `p`'s; `starts.len() == moves.len() + 1`.
    pub(super) starts: Vec<u32>,
    /// Index of the chosen move within its ply's codes.
    pub(super) chosen: Vec<u32>,
}

impl<M: Copy> Record<M> {
    pub(super) fn new() -> Self {
        Record {
            score: f64::NEG_INFINITY,
            moves: Vec::new(),
            codes: Vec::new(),
            starts: vec![0],
            chosen: Vec::new(),
        }
    }
    pub(super) fn clear(&mut self) {
        self.score = f64::NEG_INFINITY;
        self.moves.clear();
        self.codes.clear();
        self.starts.clear();
        self.starts.push(0);
        self.chosen.clear();
    }
    pub(super) fn copy_from(&mut self, o: &Record<M>) {
        self.score = o.score;
        self.moves.clone_from(&o.moves);
        self.codes.clone_from(&o.codes);
        self.starts.clone_from(&o.starts);
        self.chosen.clone_from(&o.chosen);
    }
    pub(super) fn is_empty(&self) -> bool {
        self.score == f64::NEG_INFINITY
    }
}

/// Replays `moves` from `root` and records them (used when a checkpoint is read).
pub(super) fn record_sequence<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    moves: &[G::Move],
) -> Result<Record<G::Move>, String> {
    let mut r = Record::new();
    let mut s = root.clone();
    let mut legal = Vec::new();
    for (i, &mv) in moves.iter().enumerate() {
        game.legal_moves(&s, &mut legal);
        let Some(pos) = legal.iter().position(|&m| m == mv) else {
            return Err(format!("move {} of the sequence is not legal", i + 1));
        };
        r.codes.extend(legal.iter().map(|&m| game.code(&s, m)));
        r.starts.push(r.codes.len() as u32);
        r.chosen.push(pos as u32);
        r.moves.push(mv);
        game.apply(&mut s, mv);
    }
    r.score = game.score(&s);
    Ok(r)
}

/// Scratch space of Adapt: per-code sums of the changes, in first-touch order.
pub(super) struct AdaptScratch {
    pub(super) sums: Policy,
    pub(super) touched: Vec<u64>,
    pub(super) probs: Vec<f64>,
}

impl AdaptScratch {
    /// Adds the pending changes to `policy` and clears them (the end of every Adapt).
    pub(super) fn apply_to(&mut self, policy: &mut Policy) {
        if self.sums.dense && policy.dense {
            // Dense tables: plain indexing (the scratch's exp column is never read).
            let (sums, w, ex) = (&mut self.sums.w, &mut policy.w, &mut policy.ex);
            for &c in &self.touched {
                let i = c as usize;
                let d = sums[i];
                if d != 0.0 {
                    sums[i] = 0.0;
                    w[i] += d;
                    ex[i] = w[i].exp();
                }
            }
            return;
        }
        for &c in &self.touched {
            let d = self.sums.get(c);
            if d != 0.0 {
                policy.add(c, d);
                self.sums.zero(c);
            }
        }
    }

    /// One step of an Adapt into the per-code sums: every code of `codes` loses `alpha * k *
    /// p`, `p` its softmax probability under `policy` (unchanged during an Adapt), and the
    /// codes `i` with `gain(i)` gain `alpha`; codes whose sum was 0 are listed in `touched`.
    #[inline(always)]
    pub(super) fn step(
        &mut self,
        policy: &Policy,
        codes: &[u64],
        k: f64,
        alpha: f64,
        gain: impl Fn(usize) -> bool,
    ) {
        // `alpha` where `gain(i)`, else +0.0, without a branch (which codes gain is
        // unpredictable). Adding +0.0 instead of nothing changes only a sum of -0.0, and the
        // sums, starting at +0.0, never are -0.0: the sums are bit for bit those of
        // `if gain { d += alpha }`.
        let bonus = |i: usize| f64::from_bits(alpha.to_bits() & 0u64.wrapping_sub(gain(i) as u64));
        if policy.dense && self.sums.dense {
            // Dense tables: plain indexing; the exps are read again instead of kept aside.
            let ex = &policy.ex;
            let mut z = 0.0;
            for &c in codes {
                z += ex[c as usize];
            }
            if z.is_finite() && z > 0.0 {
                let f = -alpha * k;
                let sums = &mut self.sums.w;
                self.touched.reserve(codes.len());
                let mut n = self.touched.len();
                let t = self.touched.as_mut_ptr();
                for (i, &c) in codes.iter().enumerate() {
                    let j = c as usize;
                    let d = f * ex[j] / z + bonus(i);
                    let old = sums[j];
                    sums[j] = old + d;
                    // SAFETY: capacity was reserved for `codes.len()` more entries and `n`
                    // grows by at most one per code; entries past `n` are overwritten or cut.
                    unsafe { *t.add(n) = c };
                    n += (old == 0.0) as usize;
                }
                // SAFETY: the first `n` entries are written (see above).
                unsafe { self.touched.set_len(n) };
                return;
            }
        }
        // The exps are read once and kept aside (or recomputed shifted on overflow).
        let z = softmax_weights(policy, codes, &mut self.probs);
        let f = -alpha * k;
        for (i, (&c, &e)) in codes.iter().zip(self.probs.iter()).enumerate() {
            let d = f * e / z + bonus(i);
            if self.sums.add_weight(c, d) == 0.0 {
                self.touched.push(c);
            }
        }
    }

    pub(super) fn new(code_space: Option<usize>) -> Self {
        AdaptScratch {
            sums: Policy::new(code_space),
            touched: Vec::new(),
            probs: Vec::new(),
        }
    }
}

/// Rosin's Adapt, in place: every probability is computed from the policy before any weight
/// changes (Rosin's `pol` versus `pol'`); the changes are summed per code (in the record's
/// order) and then applied, one `exp` per distinct code.
pub(super) fn adapt<M>(policy: &mut Policy, best: &Record<M>, alpha: f64, x: &mut AdaptScratch) {
    x.touched.clear();
    for p in 0..best.chosen.len() {
        let (a, b) = (best.starts[p] as usize, best.starts[p + 1] as usize);
        let chosen = best.chosen[p] as usize;
        // `-alpha * 1.0 * e / z` is bit for bit `-alpha * e / z`.
        x.step(policy, &best.codes[a..b], 1.0, alpha, |i| i == chosen);
    }
    x.apply_to(policy);
}

/// Marks of the layers Adapt: which codes of the best sequence are still to be played.
pub(super) enum Marks {
    /// Dense code space: `gen` = marked and not yet played, `gen + 1` = played, other = not in
    /// the sequence (a generation counter, so nothing is cleared between Adapts).
    Dense { mark: Vec<u32>, gen: u32 },
    /// Arbitrary codes: the sequence's codes, sorted, with a played flag.
    Sparse(Vec<(u64, bool)>),
}

pub(super) const UNMARKED: u8 = 0;
pub(super) const MARKED: u8 = 1;
pub(super) const PLAYED: u8 = 2;

impl Marks {
    pub(super) fn new(code_space: Option<usize>) -> Self {
        match code_space {
            Some(n) => Marks::Dense {
                mark: vec![0; n],
                gen: 0,
            },
            None => Marks::Sparse(Vec::new()),
        }
    }

    /// Marks `codes` (and nothing else) as to be played.
    pub(super) fn reset(&mut self, codes: impl Iterator<Item = u64>) {
        match self {
            Marks::Dense { mark, gen } => {
                if *gen >= u32::MAX - 4 {
                    mark.iter_mut().for_each(|m| *m = 0);
                    *gen = 0;
                }
                *gen += 2;
                for c in codes {
                    mark[c as usize] = *gen;
                }
            }
            Marks::Sparse(v) => {
                v.clear();
                v.extend(codes.map(|c| (c, false)));
                v.sort_unstable();
                v.dedup();
            }
        }
    }

    #[inline]
    pub(super) fn get(&self, c: u64) -> u8 {
        match self {
            Marks::Dense { mark, gen } => {
                let m = mark[c as usize];
                if m == *gen {
                    MARKED
                } else if m == *gen + 1 {
                    PLAYED
                } else {
                    UNMARKED
                }
            }
            Marks::Sparse(v) => match v.binary_search_by_key(&c, |e| e.0) {
                Ok(i) if v[i].1 => PLAYED,
                Ok(_) => MARKED,
                Err(_) => UNMARKED,
            },
        }
    }

    #[inline]
    pub(super) fn set_played(&mut self, c: u64) {
        match self {
            Marks::Dense { mark, gen } => mark[c as usize] = *gen + 1,
            Marks::Sparse(v) => {
                if let Ok(i) = v.binary_search_by_key(&c, |e| e.0) {
                    v[i].1 = true;
                }
            }
        }
    }
}

/// Scratch space of the layers Adapt's replay, and the replay of the last sequence: its steps
/// depend only on the sequence, so while the best sequence stays the same (most iterations)
/// an Adapt reads them instead of replaying the game.
pub(super) struct LayerWalk<G: SinglePlayer> {
    pub(super) marks: Marks,
    pub(super) state: G::State,
    pub(super) legal: Vec<G::Move>,
    pub(super) legal_codes: Vec<u64>,
    pub(super) play: Vec<G::Move>,
    /// The sequence the steps below belong to (`valid` false: none).
    pub(super) seq: Vec<G::Move>,
    pub(super) valid: bool,
    /// For games whose sequence moves commute: the steps depend only on the sequence's set of
    /// codes (the replay plays, step after step, every legal move whose code is in the set), so
    /// a new best with the same codes in another order (a frequent kind of tie) reuses them.
    /// `set_hash` is an order-free hash of `seq`'s codes; `set_distinct` says they are
    /// distinct. The exact test after a matching hash: dense codes, by stamps (`stamp[c] ==
    /// set_gen` marks the set's codes); other codes, by the sorted codes in `set` (sorted only
    /// when a candidate's hash matches: most replays are never compared). `cand` is scratch.
    pub(super) set: Vec<u64>,
    pub(super) cand: Vec<u64>,
    pub(super) set_hash: u64,
    pub(super) set_sorted: bool,
    pub(super) set_distinct: bool,
    pub(super) stamp: Vec<u32>,
    pub(super) set_gen: u32,
    /// Per step with a non-empty layer: `codes[starts[i]..starts[i + 1]]` are the legal codes,
    /// `in_layer` says which are in the layer, `sizes[i]` is the layer's size.
    pub(super) codes: Vec<u64>,
    pub(super) in_layer: Vec<bool>,
    pub(super) starts: Vec<u32>,
    pub(super) sizes: Vec<u32>,
}

impl<G: SinglePlayer> LayerWalk<G> {
    pub(super) fn new(game: &G, root: &G::State) -> Self {
        LayerWalk {
            marks: Marks::new(game.code_space()),
            state: root.clone(),
            legal: Vec::new(),
            legal_codes: Vec::new(),
            play: Vec::new(),
            seq: Vec::new(),
            valid: false,
            set: Vec::new(),
            cand: Vec::new(),
            set_hash: 0,
            set_sorted: false,
            set_distinct: false,
            stamp: vec![0; game.code_space().unwrap_or(0)],
            set_gen: 0,
            codes: Vec::new(),
            in_layer: Vec::new(),
            starts: vec![0],
            sizes: Vec::new(),
        }
    }

    /// Whether the chosen codes of `best` (`plies` of them, hash `hash`) are the set of the
    /// kept steps' sequence (`valid`, and `seq` has as many moves).
    pub(super) fn same_set(&mut self, best: &Record<G::Move>, plies: usize, hash: u64) -> bool {
        if !(self.valid && self.set_distinct && hash == self.set_hash && plies == self.seq.len()) {
            return false;
        }
        let chosen_code = |p: usize| best.codes[best.starts[p] as usize + best.chosen[p] as usize];
        if !self.stamp.is_empty() {
            // Every code in the set and no code twice: the candidate's `plies` distinct codes
            // are the set's `plies` codes. A visited code is stamped `set_gen + 1`; when all
            // are visited, every code of the set carries that stamp, which becomes `set_gen`.
            let (stamp, gen) = (&mut self.stamp, self.set_gen);
            for p in 0..plies {
                let c = chosen_code(p) as usize;
                if stamp[c] != gen {
                    // Not in the set or seen twice; the stamps are rewritten by the replay.
                    return false;
                }
                stamp[c] = gen + 1;
            }
            self.set_gen += 1;
            return true;
        }
        if !self.set_sorted {
            self.set.sort_unstable();
            self.set_sorted = true;
        }
        self.cand.clear();
        self.cand.extend((0..plies).map(chosen_code));
        self.cand.sort_unstable();
        self.cand == self.set
    }

    /// Makes the chosen codes of `best` the kept set (after a replay).
    pub(super) fn keep_set(&mut self, best: &Record<G::Move>, plies: usize, hash: u64) {
        let chosen_code = |p: usize| best.codes[best.starts[p] as usize + best.chosen[p] as usize];
        self.set_hash = hash;
        self.set_distinct = true;
        if !self.stamp.is_empty() {
            if self.set_gen >= u32::MAX - 4 {
                self.stamp.iter_mut().for_each(|m| *m = 0);
                self.set_gen = 0;
            }
            // A fresh stamp: above every stamp in use (a failed comparison may have left
            // `set_gen + 1` on some codes).
            self.set_gen += 2;
            let (stamp, gen) = (&mut self.stamp, self.set_gen);
            for p in 0..plies {
                let c = chosen_code(p) as usize;
                if stamp[c] == gen {
                    self.set_distinct = false;
                }
                stamp[c] = gen;
            }
            return;
        }
        self.set.clear();
        self.set.extend((0..plies).map(chosen_code));
        self.set_sorted = true;
        self.set.sort_unstable();
        self.set_distinct = self.set.windows(2).all(|w| w[0] != w[1]);
    }

    /// Replays `best` from `root` into the steps (unless they are already `best`'s).
    pub(super) fn replay(&mut self, game: &G, root: &G::State, best: &Record<G::Move>) {
        if self.valid && self.seq == best.moves {
            return;
        }
        let plies = best.chosen.len();
        let chosen_code = |p: usize| best.codes[best.starts[p] as usize + best.chosen[p] as usize];
        if game.sequence_moves_commute() {
            let hash = (0..plies).fold(0u64, |h, p| h.wrapping_add(mix_code(chosen_code(p))));
            if self.same_set(best, plies, hash) {
                self.seq.clone_from(&best.moves);
                return;
            }
            self.keep_set(best, plies, hash);
        }
        self.seq.clone_from(&best.moves);
        self.valid = true;
        self.codes.clear();
        self.in_layer.clear();
        self.starts.clear();
        self.starts.push(0);
        self.sizes.clear();
        self.marks.reset((0..plies).map(chosen_code));
        self.state.clone_from(root);
        for p in 0..plies {
            if self.marks.get(chosen_code(p)) != MARKED {
                continue;
            }
            self.legal_codes.clear();
            game.legal_moves_and_codes(&self.state, &mut self.legal, &mut self.legal_codes);
            if self.legal.is_empty() {
                break;
            }
            let start = self.codes.len();
            self.play.clear();
            for (&m, &c) in self.legal.iter().zip(&self.legal_codes) {
                self.codes.push(c);
                let hit = self.marks.get(c) == MARKED;
                self.in_layer.push(hit);
                if hit {
                    self.marks.set_played(c);
                    self.play.push(m);
                }
            }
            if self.play.is_empty() {
                self.codes.truncate(start);
                self.in_layer.truncate(start);
                continue;
            }
            self.starts.push(self.codes.len() as u32);
            self.sizes.push(self.play.len() as u32);
            let commute = game.sequence_moves_commute();
            for (n, &m) in self.play.iter().enumerate() {
                if n > 0 && !commute {
                    game.legal_moves(&self.state, &mut self.legal);
                    if !self.legal.contains(&m) {
                        continue;
                    }
                }
                game.apply(&mut self.state, m);
            }
        }
    }
}

/// A code's contribution to [`LayerWalk`]'s order-free set hash (SplitMix64's finaliser).
#[inline]
pub(super) fn mix_code(c: u64) -> u64 {
    let mut z = c.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The layers Adapt ([`AdaptRule::Layers`]), in place; like [`adapt`], every probability comes
/// from the policy before any weight changes, changes are summed per code and then applied,
/// and `x.touched` lists the codes changed.
///
/// Marks are by code: in one position the legal moves have distinct codes, so a code names at
/// most one legal move (with Morpion's `code=line` this is the peer's line identity, with
/// `code=move` move identity). A duplicate code in the sequence counts once. The layer's moves
/// are played in the order of the legal moves; for games whose moves do not commute, a layer
/// move that is no longer legal after the others is left out (never applied), and a step whose
/// move is not legal in the replayed position is skipped with no change. For a game whose codes
/// say what came before (TSPTW's `(from, to)`), a layer is the one move of the sequence, and
/// this is Rosin's Adapt. The replay (legal moves, codes and layers of each step) is kept
/// and reused while the best sequence is the same, so most Adapts cost what Rosin's does.
pub(super) fn adapt_layers<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    policy: &mut Policy,
    best: &Record<G::Move>,
    alpha: f64,
    x: &mut AdaptScratch,
    w: &mut LayerWalk<G>,
) {
    x.touched.clear();
    w.replay(game, root, best);
    for (i, &size) in w.sizes.iter().enumerate() {
        let (a, b) = (w.starts[i] as usize, w.starts[i + 1] as usize);
        let in_layer = &w.in_layer[a..b];
        x.step(policy, &w.codes[a..b], size as f64, alpha, |j| in_layer[j]);
    }
    x.apply_to(policy);
}

/// The Adapt of a run's options with its scratch space.
pub(super) struct Adapter<G: SinglePlayer> {
    pub(super) rule: AdaptRule,
    pub(super) alpha: f64,
    pub(super) scratch: AdaptScratch,
    /// The layers Adapt's replays, one per level (made on first use, only for that rule): each
    /// level keeps the replay of its own best sequence, which the other levels' Adapts in
    /// between would otherwise overwrite.
    pub(super) walks: Vec<LayerWalk<G>>,
}

impl<G: SinglePlayer> Adapter<G> {
    pub(super) fn new(game: &G, _root: &G::State, opts: &NrpaOptions) -> Self {
        Adapter {
            rule: opts.adapt,
            alpha: opts.alpha,
            scratch: AdaptScratch::new(game.code_space()),
            walks: Vec::new(),
        }
    }

    /// `Adapt(policy, best)` of level `level` (any index, one per policy adapted);
    /// afterwards `self.scratch.touched` lists the codes changed.
    pub(super) fn adapt(
        &mut self,
        game: &G,
        root: &G::State,
        level: usize,
        policy: &mut Policy,
        best: &Record<G::Move>,
    ) {
        match self.rule {
            AdaptRule::Layers => {
                while self.walks.len() <= level {
                    self.walks.push(LayerWalk::new(game, root));
                }
                let w = &mut self.walks[level];
                adapt_layers(game, root, policy, best, self.alpha, &mut self.scratch, w)
            }
            AdaptRule::Seed => adapt(policy, best, self.alpha, &mut self.scratch),
        }
    }
}
