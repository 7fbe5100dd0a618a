//! Nested Rollout Policy Adaptation (Rosin 2011), exactly as the seed's pseudocode (seed 001),
//! plus a parallel top level and checkpoints for long runs.
//!
//! Contract: [`nrpa`] maximises [`SinglePlayer::score`] from `root`. `NRPA(level, pol)` runs `N`
//! iterations of `NRPA(level - 1, copy of pol)`, keeps the best sequence with `>=` (a later equal
//! result replaces the earlier one, as the seed says), and after every iteration calls
//! `Adapt(pol, best)`: along the best sequence, the chosen move's weight gains `alpha` and every
//! legal move's weight loses `alpha * p`, with `p` the softmax probability under the policy as it
//! was before this Adapt. Level 0 is a rollout that picks each move with probability proportional
//! to `exp(pol[code])`. The start policy is all zeros (or a checkpoint's).
//!
//! The returned score is the best score of any completed rollout, with its sequence; a stop
//! ([`Control`]: time, node = rollout limit, cancel, or `stop_at` reached) returns what was found
//! so far and says why. With `threads = 1` and a fixed seed the result is the same on every run:
//! top-level iteration `i` draws from its own random stream derived from `(seed, i)`, which also
//! makes a resumed checkpoint continue exactly like the uninterrupted run.
//!
//! Speed: the policy is a dense table when the game declares a small code space, otherwise an
//! open-addressing hash map; each level owns one policy and one best-sequence record, allocated
//! once. A rollout records the codes of all legal moves at every ply and the chosen index, so
//! `Adapt` reads the record and never replays the game. Nothing is allocated per rollout once the
//! buffers have grown to the longest sequence.
//!
//! Parallel schemes ([`Scheme`]), chosen by option:
//! - `Shared` (default, Rosin's and Cazenave's "same policy" scheme): the top level runs its
//!   iterations in batches of `batch`; the level-(L-1) calls of one batch start from the same
//!   top-level policy and run on `threads` rayon threads; their results are then taken in
//!   iteration order, each with the `>=` rule and one Adapt, so `N` iterations still make `N`
//!   adaptations. With `batch = 1` this is the sequential algorithm. The result depends on
//!   `batch`, never on thread timing.
//! - `Independent`: `threads` complete, independent NRPA runs with seeds derived from `seed`;
//!   the best wins (first among equals). The same scheme is used across workers through the
//!   planner's runs (`runs=R`, the default across workers).
//!
//! Across workers the shared scheme runs as rounds ([`round_start`], [`round_iteration`]): each
//! task is one top-level iteration from the round's policy, the next round's tasks first apply
//! the previous round's results; rounds of `W` tasks equal the in-process scheme with
//! `batch = W`.

use super::{Control, StopReason};
use crate::model::single::SinglePlayer;
use parking_lot::Mutex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// How the iterations of a run are spread over threads. See the module doc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// Batches of top-level iterations from the same policy; results adapt the shared policy.
    Shared,
    /// Independent runs with their own policies; the best wins.
    Independent,
}

/// Which Adapt the levels use (option `adapt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdaptRule {
    /// The seed's Adapt (Rosin 2011): along the best sequence, ply by ply, the chosen move gains
    /// `alpha` and every legal move loses `alpha * p`.
    Seed,
    /// The "layers" Adapt (the default of anagorko's morpion-lpp NRPA): the best sequence is
    /// read as a partial order. The codes of its moves are marked; a replay from the root takes
    /// at each step the *layer*, the legal moves whose code is marked and not yet played: every
    /// legal move loses `alpha * |layer| * p`, each move of the layer gains `alpha`, then the
    /// whole layer is played. A step whose move was already played in an earlier layer is
    /// skipped. Moves that do not depend on each other are rewarded together instead of
    /// penalising each other. `p` is the softmax probability under the policy before this
    /// Adapt, as in the seed's Adapt. Meant for games whose moves commute (Morpion); see
    /// [`adapt_layers`].
    Layers,
}

impl AdaptRule {
    /// The option's text: `seed` or `layers`.
    pub fn as_str(self) -> &'static str {
        match self {
            AdaptRule::Seed => "seed",
            AdaptRule::Layers => "layers",
        }
    }

    /// Reads `seed` or `layers`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "seed" => Some(AdaptRule::Seed),
            "layers" => Some(AdaptRule::Layers),
            _ => None,
        }
    }
}

/// Options of a run.
#[derive(Clone, Debug)]
pub struct NrpaOptions {
    /// Nesting level, at least 1.
    pub level: u32,
    /// Iterations per level (the seed's N), at least 1.
    pub iterations: u32,
    /// Adaptation step (the seed's Alpha).
    pub alpha: f64,
    /// Which Adapt (option `adapt`, default the seed's).
    pub adapt: AdaptRule,
    /// Random seed.
    pub seed: u64,
    /// Worker threads (rayon).
    pub threads: usize,
    /// Shared scheme: top-level iterations started from the same policy.
    pub batch: usize,
    /// Parallel scheme.
    pub scheme: Scheme,
    /// Stop as soon as a rollout scores at least this.
    pub stop_at: Option<f64>,
    /// How often a long run publishes a checkpoint with its progress (job option
    /// `checkpoint_s`, default [`CHECKPOINT_EVERY`]).
    pub checkpoint_every: Duration,
}

impl Default for NrpaOptions {
    /// Rosin's published settings: N = 100, Alpha = 1; level 3 is a short run.
    fn default() -> Self {
        NrpaOptions {
            level: 3,
            iterations: 100,
            alpha: 1.0,
            adapt: AdaptRule::Seed,
            seed: 0,
            threads: 1,
            batch: 1,
            scheme: Scheme::Shared,
            stop_at: None,
            checkpoint_every: CHECKPOINT_EVERY,
        }
    }
}

/// How often a long run publishes a checkpoint with its progress.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(30);
/// Smallest gap between two progress reports of a new best score.
const REPORT_EVERY: Duration = Duration::from_millis(200);

/// SplitMix64 of `seed` and `index`: the random stream of top-level iteration (or run) `index`.
pub fn derive_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

// ---------------------------------------------------------------------------------------------
// Policy: code -> weight, default 0.

const EMPTY: u64 = u64::MAX;

/// A policy table: dense when the game's codes are small, otherwise open addressing with linear
/// probing (key [`EMPTY`] marks a free slot; the code `u64::MAX` itself lives in the extra last
/// slot). Each slot holds the weight `w` and, in a separate array, `exp(w)`: rollouts read only
/// the `exp` array (8 bytes per code, so the codes a rollout meets stay in cache) and call no
/// `exp` at all; Adapt pays one `exp` per distinct code it changes.
#[derive(Clone, Debug)]
pub struct Policy {
    dense: bool,
    keys: Vec<u64>,
    /// Weight per slot.
    w: Vec<f64>,
    /// `exp` of the weight per slot.
    ex: Vec<f64>,
    len: usize,
}

impl Policy {
    /// An all-zero policy for codes below `code_space` (dense) or arbitrary codes (`None`).
    pub fn new(code_space: Option<usize>) -> Self {
        match code_space {
            Some(n) => Policy {
                dense: true,
                keys: Vec::new(),
                w: vec![0.0; n],
                ex: vec![1.0; n],
                len: 0,
            },
            None => Policy {
                dense: false,
                keys: vec![EMPTY; 1024],
                w: vec![0.0; 1025],
                ex: vec![1.0; 1025],
                len: 0,
            },
        }
    }

    #[inline(always)]
    fn slot(&self, code: u64) -> usize {
        // Fibonacci hashing: the high bits of code * 2^64/phi.
        let mask = self.keys.len() - 1;
        (code.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & mask
    }

    /// The slot of `code`, `None` when a hash table does not hold it (weight 0).
    #[inline(always)]
    fn find(&self, code: u64) -> Option<usize> {
        if self.dense {
            return Some(code as usize);
        }
        if code == EMPTY {
            return Some(self.keys.len());
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(code);
        loop {
            let k = self.keys[i];
            if k == code {
                return Some(i);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// The weight of `code`.
    #[inline(always)]
    pub fn get(&self, code: u64) -> f64 {
        self.find(code).map_or(0.0, |i| self.w[i])
    }

    /// `exp` of the weight of `code`.
    #[inline(always)]
    pub fn get_exp(&self, code: u64) -> f64 {
        if self.dense {
            return self.ex[code as usize];
        }
        self.find(code).map_or(1.0, |i| self.ex[i])
    }

    /// The slot of `code`, inserted with weight 0 if a hash table lacks it.
    #[inline(always)]
    fn slot_mut(&mut self, code: u64) -> usize {
        if self.dense {
            return code as usize;
        }
        if code == EMPTY {
            return self.keys.len();
        }
        if (self.len + 1) * 2 > self.keys.len() {
            self.grow();
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(code);
        loop {
            let k = self.keys[i];
            if k == code {
                return i;
            }
            if k == EMPTY {
                self.keys[i] = code;
                self.w[i] = 0.0;
                self.ex[i] = 1.0;
                self.len += 1;
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `delta` to the weight of `code`.
    #[inline(always)]
    pub fn add(&mut self, code: u64, delta: f64) {
        let i = self.slot_mut(code);
        self.w[i] += delta;
        self.ex[i] = self.w[i].exp();
    }

    /// Adds `delta` to the weight only, returning the weight before (scratch tables: no `exp`).
    #[inline(always)]
    fn add_weight(&mut self, code: u64, delta: f64) -> f64 {
        let i = self.slot_mut(code);
        let old = self.w[i];
        self.w[i] = old + delta;
        old
    }

    /// Sets the weight of `code` back to 0 (scratch tables).
    #[inline(always)]
    fn zero(&mut self, code: u64) {
        let i = self.slot_mut(code);
        self.w[i] = 0.0;
        self.ex[i] = 1.0;
    }

    fn grow(&mut self) {
        let n = self.keys.len() * 2;
        let old_keys = std::mem::replace(&mut self.keys, vec![EMPTY; n]);
        let old_w = std::mem::replace(&mut self.w, vec![0.0; n + 1]);
        let old_ex = std::mem::replace(&mut self.ex, vec![1.0; n + 1]);
        // The slot of code u64::MAX moves to the new last slot.
        self.w[n] = old_w[old_keys.len()];
        self.ex[n] = old_ex[old_keys.len()];
        self.len = 0;
        for (i, &k) in old_keys.iter().enumerate() {
            if k != EMPTY {
                let j = self.slot_mut(k);
                self.w[j] = old_w[i];
                self.ex[j] = old_ex[i];
            }
        }
    }

    /// Makes `self` equal to `other`, reusing its memory.
    pub fn copy_from(&mut self, other: &Policy) {
        self.dense = other.dense;
        self.keys.clone_from(&other.keys);
        self.w.clone_from(&other.w);
        self.ex.clone_from(&other.ex);
        self.len = other.len;
    }

    /// Copies the slots `idx` of `other` (dense tables of one size).
    fn copy_slots(&mut self, other: &Policy, idx: &[u32]) {
        for &i in idx {
            let i = i as usize;
            self.w[i] = other.w[i];
            self.ex[i] = other.ex[i];
        }
    }

    /// Every non-zero weight, sorted by code.
    pub fn entries(&self) -> Vec<(u64, f64)> {
        let mut out: Vec<(u64, f64)> = if self.dense {
            self.w
                .iter()
                .enumerate()
                .filter(|(_, v)| **v != 0.0)
                .map(|(k, v)| (k as u64, *v))
                .collect()
        } else {
            self.keys
                .iter()
                .zip(&self.w)
                .filter(|(k, v)| **k != EMPTY && **v != 0.0)
                .map(|(k, v)| (*k, *v))
                .collect()
        };
        if !self.dense && self.w[self.keys.len()] != 0.0 {
            out.push((EMPTY, self.w[self.keys.len()]));
        }
        out.sort_by_key(|e| e.0);
        out
    }
}

/// The slots where a dense policy and the copy the level below made of it may differ: a level
/// re-copies only these before each call of the level below (a full copy of a large dense table
/// per call costs more than the call's adaptations). `full` means "assume everything differs".
#[derive(Debug)]
struct Dirty {
    list: Vec<u32>,
    bits: Vec<u64>,
    full: bool,
}

impl Dirty {
    fn new(n: usize) -> Self {
        Dirty {
            list: Vec::new(),
            bits: vec![0; n.div_ceil(64)],
            full: true,
        }
    }
    #[inline]
    fn mark(&mut self, i: usize) {
        if self.full {
            return;
        }
        let (w, b) = (i / 64, i % 64);
        if self.bits[w] >> b & 1 == 0 {
            self.bits[w] |= 1 << b;
            self.list.push(i as u32);
            // Beyond an eighth of the table a full copy is as cheap.
            if self.list.len() * 8 > self.bits.len() * 64 {
                self.set_full();
            }
        }
    }
    fn set_full(&mut self) {
        self.clear();
        self.full = true;
    }
    fn clear(&mut self) {
        for &i in &self.list {
            self.bits[i as usize / 64] = 0;
        }
        self.list.clear();
        self.full = false;
    }
}

/// `exp(w)` of each code, from the cached values; when they overflow (weights beyond ~700,
/// which NRPA's bounded steps do not produce in practice) they are recomputed shifted by the
/// largest weight, which leaves every probability unchanged.
#[inline]
fn softmax_weights(policy: &Policy, codes: &[u64], out: &mut Vec<f64>) -> f64 {
    out.clear();
    let mut z = 0.0;
    for &c in codes {
        let e = policy.get_exp(c);
        z += e;
        out.push(e);
    }
    if z.is_finite() && z > 0.0 {
        return z;
    }
    out.clear();
    let max = codes
        .iter()
        .map(|&c| policy.get(c))
        .fold(f64::NEG_INFINITY, f64::max);
    z = 0.0;
    for &c in codes {
        let e = (policy.get(c) - max).exp();
        z += e;
        out.push(e);
    }
    z
}

// ---------------------------------------------------------------------------------------------
// Rollout records and Adapt.

/// A played sequence with what Adapt needs: the codes of all legal moves at every ply.
#[derive(Clone, Debug)]
struct Record<M> {
    score: f64,
    moves: Vec<M>,
    /// Codes of the legal moves, ply after ply.
    codes: Vec<u64>,
    /// `codes[starts[p]..starts[p + 1]]` are ply `p`'s; `starts.len() == moves.len() + 1`.
    starts: Vec<u32>,
    /// Index of the chosen move within its ply's codes.
    chosen: Vec<u32>,
}

impl<M: Copy> Record<M> {
    fn new() -> Self {
        Record {
            score: f64::NEG_INFINITY,
            moves: Vec::new(),
            codes: Vec::new(),
            starts: vec![0],
            chosen: Vec::new(),
        }
    }
    fn clear(&mut self) {
        self.score = f64::NEG_INFINITY;
        self.moves.clear();
        self.codes.clear();
        self.starts.clear();
        self.starts.push(0);
        self.chosen.clear();
    }
    fn copy_from(&mut self, o: &Record<M>) {
        self.score = o.score;
        self.moves.clone_from(&o.moves);
        self.codes.clone_from(&o.codes);
        self.starts.clone_from(&o.starts);
        self.chosen.clone_from(&o.chosen);
    }
    fn is_empty(&self) -> bool {
        self.score == f64::NEG_INFINITY
    }
}

/// Replays `moves` from `root` and records them (used when a checkpoint is read).
fn record_sequence<G: SinglePlayer>(
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
struct AdaptScratch {
    sums: Policy,
    touched: Vec<u64>,
    probs: Vec<f64>,
}

impl AdaptScratch {
    /// Adds the pending changes to `policy` and clears them (the end of every Adapt).
    fn apply_to(&mut self, policy: &mut Policy) {
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
    fn step(
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

    fn new(code_space: Option<usize>) -> Self {
        AdaptScratch {
            sums: Policy::new(code_space),
            touched: Vec::new(),
            probs: Vec::new(),
        }
    }
}

/// The seed's Adapt, in place: every probability is computed from the policy before any weight
/// changes (the seed's `pol` versus `pol'`); the changes are summed per code (in the record's
/// order) and then applied, one `exp` per distinct code.
fn adapt<M>(policy: &mut Policy, best: &Record<M>, alpha: f64, x: &mut AdaptScratch) {
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
enum Marks {
    /// Dense code space: `gen` = marked and not yet played, `gen + 1` = played, other = not in
    /// the sequence (a generation counter, so nothing is cleared between Adapts).
    Dense { mark: Vec<u32>, gen: u32 },
    /// Arbitrary codes: the sequence's codes, sorted, with a played flag.
    Sparse(Vec<(u64, bool)>),
}

const UNMARKED: u8 = 0;
const MARKED: u8 = 1;
const PLAYED: u8 = 2;

impl Marks {
    fn new(code_space: Option<usize>) -> Self {
        match code_space {
            Some(n) => Marks::Dense {
                mark: vec![0; n],
                gen: 0,
            },
            None => Marks::Sparse(Vec::new()),
        }
    }

    /// Marks `codes` (and nothing else) as to be played.
    fn reset(&mut self, codes: impl Iterator<Item = u64>) {
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
    fn get(&self, c: u64) -> u8 {
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
    fn set_played(&mut self, c: u64) {
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
struct LayerWalk<G: SinglePlayer> {
    marks: Marks,
    state: G::State,
    legal: Vec<G::Move>,
    legal_codes: Vec<u64>,
    play: Vec<G::Move>,
    /// The sequence the steps below belong to (`valid` false: none).
    seq: Vec<G::Move>,
    valid: bool,
    /// For games whose sequence moves commute: the steps depend only on the sequence's set of
    /// codes (the replay plays, step after step, every legal move whose code is in the set), so
    /// a new best with the same codes in another order (a frequent kind of tie) reuses them.
    /// `set_hash` is an order-free hash of `seq`'s codes; `set_distinct` says they are
    /// distinct. The exact test after a matching hash: dense codes, by stamps (`stamp[c] ==
    /// set_gen` marks the set's codes); other codes, by the sorted codes in `set` (sorted only
    /// when a candidate's hash matches: most replays are never compared). `cand` is scratch.
    set: Vec<u64>,
    cand: Vec<u64>,
    set_hash: u64,
    set_sorted: bool,
    set_distinct: bool,
    stamp: Vec<u32>,
    set_gen: u32,
    /// Per step with a non-empty layer: `codes[starts[i]..starts[i + 1]]` are the legal codes,
    /// `in_layer` says which are in the layer, `sizes[i]` is the layer's size.
    codes: Vec<u64>,
    in_layer: Vec<bool>,
    starts: Vec<u32>,
    sizes: Vec<u32>,
}

impl<G: SinglePlayer> LayerWalk<G> {
    fn new(game: &G, root: &G::State) -> Self {
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
    fn same_set(&mut self, best: &Record<G::Move>, plies: usize, hash: u64) -> bool {
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
    fn keep_set(&mut self, best: &Record<G::Move>, plies: usize, hash: u64) {
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
    fn replay(&mut self, game: &G, root: &G::State, best: &Record<G::Move>) {
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
fn mix_code(c: u64) -> u64 {
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
/// this is the seed's Adapt. The replay (legal moves, codes and layers of each step) is kept
/// and reused while the best sequence is the same, so most Adapts cost what the seed's does.
fn adapt_layers<G: SinglePlayer>(
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
struct Adapter<G: SinglePlayer> {
    rule: AdaptRule,
    alpha: f64,
    scratch: AdaptScratch,
    /// The layers Adapt's replays, one per level (made on first use, only for that rule): each
    /// level keeps the replay of its own best sequence, which the other levels' Adapts in
    /// between would otherwise overwrite.
    walks: Vec<LayerWalk<G>>,
}

impl<G: SinglePlayer> Adapter<G> {
    fn new(game: &G, _root: &G::State, opts: &NrpaOptions) -> Self {
        Adapter {
            rule: opts.adapt,
            alpha: opts.alpha,
            scratch: AdaptScratch::new(game.code_space()),
            walks: Vec::new(),
        }
    }

    /// `Adapt(policy, best)` of level `level` (any index, one per policy adapted);
    /// afterwards `self.scratch.touched` lists the codes changed.
    fn adapt(
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

// ---------------------------------------------------------------------------------------------
// One searcher: levels 0..L-1 with their policies and best records.

/// What the threads of one run share: the global best for progress reports.
struct Shared {
    /// Set when a rollout reached `stop_at`: every thread stops.
    reached: std::sync::atomic::AtomicBool,
    best: Mutex<(f64, std::time::Instant)>,
    history: Mutex<Vec<(u64, u64, f64)>>,
}

impl Shared {
    fn halted(&self, ctl: &Control) -> bool {
        self.reached.load(std::sync::atomic::Ordering::Relaxed) || ctl.should_stop().is_some()
    }
}

struct Searcher<'a, G: SinglePlayer> {
    game: &'a G,
    root: &'a G::State,
    opts: &'a NrpaOptions,
    ctl: &'a Control,
    shared: &'a Shared,
    /// `policies[l]`, `bests[l]` for levels 1..=L-1 (index 0 unused).
    policies: Vec<Policy>,
    /// `dirty[l]` (l >= 2, dense policies): slots where `policies[l - 1]` may differ from
    /// `policies[l]`.
    dirty: Vec<Dirty>,
    bests: Vec<Record<G::Move>>,
    cur: Record<G::Move>,
    /// Best rollout of this searcher since its last [`Searcher::take_best`].
    found: Record<G::Move>,
    legal: Vec<G::Move>,
    weights: Vec<f64>,
    adapter: Adapter<G>,
    state: G::State,
    rng: ChaCha8Rng,
    rollouts: u64,
    stopped: bool,
}

impl<'a, G: SinglePlayer> Searcher<'a, G> {
    fn new(
        game: &'a G,
        root: &'a G::State,
        opts: &'a NrpaOptions,
        ctl: &'a Control,
        shared: &'a Shared,
    ) -> Self {
        let levels = opts.level as usize;
        Searcher {
            game,
            root,
            opts,
            ctl,
            shared,
            policies: (0..levels)
                .map(|l| Policy::new(if l == 0 { Some(0) } else { game.code_space() }))
                .collect(),
            dirty: (0..levels)
                .map(|_| Dirty::new(game.code_space().unwrap_or(0)))
                .collect(),
            bests: (0..levels).map(|_| Record::new()).collect(),
            cur: Record::new(),
            found: Record::new(),
            legal: Vec::new(),
            weights: Vec::new(),
            adapter: Adapter::new(game, root, opts),
            state: root.clone(),
            rng: ChaCha8Rng::seed_from_u64(0),
            rollouts: 0,
            stopped: false,
        }
    }

    /// Level 0: one rollout under `policy` into `self.cur`.
    fn rollout(&mut self, policy: &Policy) {
        let (game, cur) = (self.game, &mut self.cur);
        cur.clear();
        self.state.clone_from(self.root);
        loop {
            // Legal moves and their codes in one pass; then, for a dense table, the sum of their
            // exp weights (softmax_weights' sum, in the same order); a hash table's weights are
            // looked up once, below.
            let start = cur.codes.len();
            game.legal_moves_and_codes(&self.state, &mut self.legal, &mut cur.codes);
            let n = self.legal.len();
            if n == 0 {
                break;
            }
            let codes = &cur.codes[start..];
            let mut z = 0.0;
            if policy.dense {
                for &c in codes {
                    z += policy.get_exp(c);
                }
            }
            let mut pick = n - 1;
            if z.is_finite() && z > 0.0 && policy.dense {
                // A dense table is read again (cheaper than keeping the weights aside).
                let mut r = self.rng.gen::<f64>() * z;
                for (i, &c) in codes.iter().enumerate() {
                    let w = policy.get_exp(c);
                    if r < w {
                        pick = i;
                        break;
                    }
                    r -= w;
                }
            } else {
                z = softmax_weights(policy, codes, &mut self.weights);
                let mut r = self.rng.gen::<f64>() * z;
                for (i, &w) in self.weights.iter().enumerate() {
                    if r < w {
                        pick = i;
                        break;
                    }
                    r -= w;
                }
            }
            let mv = self.legal[pick];
            cur.moves.push(mv);
            cur.chosen.push(pick as u32);
            cur.starts.push(cur.codes.len() as u32);
            game.apply_legal(&mut self.state, &self.legal, pick);
        }
        cur.score = game.score(&self.state);
        let score = cur.score;
        self.rollouts += 1;
        self.ctl.add_nodes(1);
        if score > self.found.score {
            self.found.copy_from(&self.cur);
            self.publish(score);
        }
        if self.opts.stop_at.is_some_and(|t| score >= t) {
            self.shared
                .reached
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        self.stopped = self.stopped || self.shared.halted(self.ctl);
    }

    /// Tells the shared best (and the progress sink, throttled) about a new best score.
    fn publish(&self, score: f64) {
        let mut best = self.shared.best.lock();
        if score > best.0 {
            best.0 = score;
            let ms = self.ctl.elapsed().as_millis() as u64;
            self.shared
                .history
                .lock()
                .push((ms, self.ctl.nodes(), score));
            if self.ctl.wants_progress() && best.1.elapsed() >= REPORT_EVERY {
                best.1 = std::time::Instant::now();
                self.ctl.report(serde_json::json!({"best": score, "rollouts": self.ctl.nodes(), "elapsed_ms": ms}));
            }
        }
    }

    /// `NRPA(l, policies[l])` for `l >= 1`; the result is in `bests[l]`.
    fn level(&mut self, l: usize) {
        self.bests[l].clear();
        for _ in 0..self.opts.iterations {
            if self.stopped {
                break;
            }
            if l == 1 {
                let policy = std::mem::replace(&mut self.policies[1], Policy::new(Some(0)));
                self.rollout(&policy);
                self.policies[1] = policy;
                if !self.stopped && self.cur.score >= self.bests[1].score {
                    // `cur` is cleared by the next rollout: a swap is the copy.
                    std::mem::swap(&mut self.bests[1], &mut self.cur);
                }
            } else {
                self.sync_below(l);
                self.level(l - 1);
                if self.stopped {
                    break;
                }
                let (lower, upper) = self.bests.split_at_mut(l);
                if lower[l - 1].score >= upper[0].score {
                    // `bests[l - 1]` is cleared by the next call of level l - 1.
                    std::mem::swap(&mut lower[l - 1], &mut upper[0]);
                }
            }
            if self.stopped {
                break;
            }
            self.adapter.adapt(
                self.game,
                self.root,
                l,
                &mut self.policies[l],
                &self.bests[l],
            );
            if self.policies[l].dense {
                // Level l changed: it now differs from its copy below (l) and from its source
                // above (l + 1).
                for k in [l, l + 1] {
                    if k >= 2 && k < self.dirty.len() {
                        for &c in &self.adapter.scratch.touched {
                            self.dirty[k].mark(c as usize);
                        }
                    }
                }
            }
        }
    }

    /// Makes `policies[l - 1]` a copy of `policies[l]` (the seed's "copy of pol"), copying only
    /// the slots that may differ when the tables are dense.
    fn sync_below(&mut self, l: usize) {
        let (lower, upper) = self.policies.split_at_mut(l);
        let (below, this) = (&mut lower[l - 1], &upper[0]);
        let (dl, du) = self.dirty.split_at_mut(l);
        if !this.dense || du[0].full {
            below.copy_from(this);
            if l >= 3 {
                dl[l - 1].set_full();
            }
        } else {
            below.copy_slots(this, &du[0].list);
            if l >= 3 {
                for &i in &du[0].list {
                    dl[l - 1].mark(i as usize);
                }
            }
        }
        du[0].clear();
    }

    /// One top-level iteration: `NRPA(level - 1, copy of top)` with the stream of iteration `i`.
    /// Returns the finished sub-result, or `None` when stopped before it finished.
    fn iteration(&mut self, top: &Policy, i: u64) -> Option<&Record<G::Move>> {
        self.rng = ChaCha8Rng::seed_from_u64(derive_seed(self.opts.seed, i));
        let sub = self.opts.level as usize - 1;
        if sub == 0 {
            self.rollout(top);
            return Some(&self.cur);
        }
        self.policies[sub].copy_from(top);
        if sub >= 2 {
            self.dirty[sub].set_full();
        }
        self.level(sub);
        if self.stopped {
            None
        } else {
            Some(&self.bests[sub])
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Checkpoints.

/// The state of a run between two top-level iterations: enough to continue it exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint<M> {
    /// Options that must match on resume.
    pub level: u32,
    /// Iterations per level.
    pub iterations: u32,
    /// Adaptation step.
    pub alpha: f64,
    /// Which Adapt (written as `"adapt": "layers"` only when not the seed's, so older
    /// checkpoints read as the seed's).
    pub adapt: AdaptRule,
    /// Seed of the run.
    pub seed: u64,
    /// Batch width of the shared scheme.
    pub batch: usize,
    /// Top-level iterations finished.
    pub done: u32,
    /// Non-zero weights of the top-level policy.
    pub policy: Vec<(u64, f64)>,
    /// The top level's best sequence (the one Adapt uses), if any.
    pub top_best: Option<(f64, Vec<M>)>,
    /// The best sequence of any rollout so far, if any.
    pub best: Option<(f64, Vec<M>)>,
}

impl<M: Copy> Checkpoint<M> {
    /// As JSON; moves are written with `format`, applied along the sequence from the root.
    pub fn to_json<G: SinglePlayer<Move = M>>(
        &self,
        game: &G,
        root: &G::State,
    ) -> serde_json::Value {
        let seq = |best: &Option<(f64, Vec<M>)>| match best {
            None => serde_json::Value::Null,
            Some((score, moves)) => {
                let mut s = root.clone();
                let texts: Vec<String> = moves
                    .iter()
                    .map(|&m| {
                        let t = game.format_move(&s, m);
                        game.apply(&mut s, m);
                        t
                    })
                    .collect();
                serde_json::json!({"score": score, "moves": texts})
            }
        };
        let mut v = serde_json::json!({
            "version": 1,
            "level": self.level,
            "iterations": self.iterations,
            "alpha_bits": self.alpha.to_bits(),
            "seed": self.seed,
            "batch": self.batch,
            "done": self.done,
            // Weights as exact bit patterns: a resumed run continues exactly.
            "policy": self.policy.iter().map(|(c, w)| serde_json::json!([c, w.to_bits()])).collect::<Vec<_>>(),
            "top_best": seq(&self.top_best),
            "best": seq(&self.best),
        });
        if self.adapt != AdaptRule::Seed {
            v["adapt"] = self.adapt.as_str().into();
        }
        v
    }

    /// Reads [`Checkpoint::to_json`]'s output; errors name what is wrong.
    pub fn from_json<G: SinglePlayer<Move = M>>(
        game: &G,
        root: &G::State,
        v: &serde_json::Value,
    ) -> Result<Self, String> {
        let u = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_u64())
                .ok_or_else(|| format!("checkpoint: '{k}' is missing or not an integer"))
        };
        if u("version")? != 1 {
            return Err("checkpoint: unknown version".into());
        }
        let policy = v
            .get("policy")
            .and_then(|p| p.as_array())
            .ok_or("checkpoint: 'policy' is missing")?
            .iter()
            .map(|e| {
                match (
                    e.get(0).and_then(|x| x.as_u64()),
                    e.get(1).and_then(|x| x.as_u64()),
                ) {
                    (Some(c), Some(b)) => Ok((c, f64::from_bits(b))),
                    _ => Err("checkpoint: a policy entry is not [code, bits]".to_string()),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let seq = |k: &str| {
            sequence_from_json(game, root, &v[k], k).map_err(|e| format!("checkpoint: {e}"))
        };
        let adapt = match v.get("adapt") {
            None => AdaptRule::Seed,
            Some(a) => a
                .as_str()
                .and_then(AdaptRule::parse)
                .ok_or("checkpoint: 'adapt' is not seed or layers")?,
        };
        Ok(Checkpoint {
            level: u("level")? as u32,
            iterations: u("iterations")? as u32,
            alpha: f64::from_bits(u("alpha_bits")?),
            adapt,
            seed: u("seed")?,
            batch: u("batch")? as usize,
            done: u("done")? as u32,
            policy,
            top_best: seq("top_best")?,
            best: seq("best")?,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Drivers.

/// What a run found.
#[derive(Clone, Debug)]
pub struct NrpaOutcome<M> {
    /// Best score of any completed rollout (`-inf` when none completed).
    pub score: f64,
    /// Its sequence.
    pub sequence: Vec<M>,
    /// Rollouts made.
    pub rollouts: u64,
    /// Why it stopped early, if it did (`None` also when `stop_at` was reached).
    pub stopped: Option<StopReason>,
    /// One checkpoint per independent run (one for the shared scheme).
    pub checkpoints: Vec<Checkpoint<M>>,
    /// Every improvement of the best score: (elapsed ms, rollouts so far, score).
    pub history: Vec<(u64, u64, f64)>,
}

/// Runs NRPA from `root`; `resume` continues checkpoints of an earlier run with the same options.
pub fn nrpa<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    opts: &NrpaOptions,
    resume: Option<Vec<Checkpoint<G::Move>>>,
    ctl: &Control,
) -> Result<NrpaOutcome<G::Move>, String> {
    if opts.level == 0 || opts.iterations == 0 {
        return Err("NRPA needs level >= 1 and iterations >= 1".into());
    }
    let shared = Shared {
        reached: false.into(),
        best: Mutex::new((f64::NEG_INFINITY, std::time::Instant::now())),
        history: Mutex::new(Vec::new()),
    };
    let threads = opts.threads.max(1);
    let pool = if threads > 1 {
        Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| e.to_string())?,
        )
    } else {
        None
    };
    let runs = if opts.scheme == Scheme::Independent {
        threads
    } else {
        1
    };
    let mut resume = resume.unwrap_or_default();
    if !resume.is_empty() && resume.len() != runs {
        return Err(format!(
            "checkpoint has {} runs, this job makes {runs}",
            resume.len()
        ));
    }
    let mut out = if opts.scheme == Scheme::Independent && runs > 1 {
        let mut starts: Vec<Option<Checkpoint<G::Move>>> = (0..runs).map(|_| None).collect();
        for (i, c) in resume.drain(..).enumerate() {
            starts[i] = Some(c);
        }
        let results: Vec<Result<NrpaOutcome<G::Move>, String>> =
            pool.as_ref().unwrap().install(|| {
                use rayon::prelude::*;
                starts
                    .into_par_iter()
                    .enumerate()
                    .map(|(r, start)| {
                        // Run 0 is the sequential run with the job's seed, so more threads never do worse.
                        let seed = if r == 0 {
                            opts.seed
                        } else {
                            derive_seed(opts.seed, 1_000_000 + r as u64)
                        };
                        let o = NrpaOptions {
                            seed,
                            batch: 1,
                            threads: 1,
                            ..opts.clone()
                        };
                        run_shared(game, root, &o, start, ctl, &shared, None)
                    })
                    .collect()
            });
        let mut merged: Option<NrpaOutcome<G::Move>> = None;
        for r in results {
            let r = r?;
            match &mut merged {
                None => merged = Some(r),
                Some(m) => {
                    m.rollouts += r.rollouts;
                    m.stopped = m.stopped.or(r.stopped);
                    m.checkpoints.extend(r.checkpoints);
                    if r.score > m.score {
                        m.score = r.score;
                        m.sequence = r.sequence;
                    }
                }
            }
        }
        merged.expect("at least one run")
    } else {
        run_shared(game, root, opts, resume.pop(), ctl, &shared, pool.as_ref())?
    };
    out.history = std::mem::take(&mut *shared.history.lock());
    Ok(out)
}

/// One run of the shared scheme (batch 1 = the sequential algorithm).
fn run_shared<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    opts: &NrpaOptions,
    resume: Option<Checkpoint<G::Move>>,
    ctl: &Control,
    shared: &Shared,
    pool: Option<&rayon::ThreadPool>,
) -> Result<NrpaOutcome<G::Move>, String> {
    let batch = opts.batch.max(1);
    let (mut top, mut top_best, mut best, mut done) =
        load_checkpoint(game, root, opts, batch, resume.as_ref())?;
    {
        let mut b = shared.best.lock();
        b.0 = b.0.max(best.score);
    }
    let mut searchers: Vec<Searcher<G>> = (0..batch)
        .map(|_| Searcher::new(game, root, opts, ctl, shared))
        .collect();
    let mut adapter = Adapter::new(game, root, opts);
    let mut rollouts = 0u64;
    let mut stopped = false;
    let mut last_checkpoint = std::time::Instant::now();
    let take_found = |searchers: &mut [Searcher<G>], best: &mut Record<G::Move>| {
        for s in searchers.iter_mut() {
            if s.found.score > best.score {
                best.copy_from(&s.found);
            }
            s.found.clear();
        }
    };
    while done < opts.iterations && !stopped {
        let width = batch.min((opts.iterations - done) as usize);
        let active = &mut searchers[..width];
        let top_ref = &top;
        let base = done as u64;
        let work = |(j, s): (usize, &mut Searcher<G>)| {
            let _ = s.iteration(top_ref, base + j as u64);
        };
        match pool {
            Some(p) if width > 1 => p.install(|| {
                use rayon::prelude::*;
                active.par_iter_mut().enumerate().for_each(work);
            }),
            _ => active.iter_mut().enumerate().for_each(work),
        }
        // Results in iteration order: the `>=` rule and one Adapt each, as the seed's loop.
        for s in searchers[..width].iter() {
            if s.stopped {
                stopped = true;
                break;
            }
            let sub = opts.level as usize - 1;
            let r = if sub == 0 { &s.cur } else { &s.bests[sub] };
            if r.score >= top_best.score {
                top_best.copy_from(r);
            }
            adapter.adapt(game, root, 0, &mut top, &top_best);
            done += 1;
        }
        take_found(&mut searchers, &mut best);
        if ctl.wants_progress() && last_checkpoint.elapsed() >= opts.checkpoint_every {
            last_checkpoint = std::time::Instant::now();
            let c = checkpoint(opts, batch, done, &top, &top_best, &best);
            ctl.report(serde_json::json!({
                "best": best.score, "rollouts": ctl.nodes(), "elapsed_ms": ctl.elapsed().as_millis() as u64,
                "iteration": done, "checkpoint": c.to_json(game, root),
            }));
        }
        stopped = stopped || shared.halted(ctl);
    }
    for s in &searchers {
        rollouts += s.rollouts;
    }
    Ok(NrpaOutcome {
        score: best.score,
        sequence: best.moves.clone(),
        rollouts,
        stopped: if shared.reached.load(std::sync::atomic::Ordering::Relaxed) {
            None
        } else {
            ctl.should_stop()
        },
        checkpoints: vec![checkpoint(opts, batch, done, &top, &top_best, &best)],
        history: Vec::new(),
    })
}

/// The top-level state a checkpoint describes (zeros and nothing found without one), after
/// checking that it was made with these options.
#[allow(clippy::type_complexity)]
fn load_checkpoint<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    opts: &NrpaOptions,
    batch: usize,
    c: Option<&Checkpoint<G::Move>>,
) -> Result<(Policy, Record<G::Move>, Record<G::Move>, u32), String> {
    let mut top = Policy::new(game.code_space());
    let mut top_best: Record<G::Move> = Record::new();
    let mut best: Record<G::Move> = Record::new();
    let mut done = 0u32;
    if let Some(c) = c {
        if (
            c.level,
            c.iterations,
            c.alpha.to_bits(),
            c.seed,
            c.batch,
            c.adapt,
        ) != (
            opts.level,
            opts.iterations,
            opts.alpha.to_bits(),
            opts.seed,
            batch,
            opts.adapt,
        ) {
            return Err(format!(
                "checkpoint was made with level={} iterations={} alpha={} seed={} batch={} adapt={}, not with this job's options",
                c.level, c.iterations, c.alpha, c.seed, c.batch, c.adapt.as_str()
            ));
        }
        for &(code, w) in &c.policy {
            if game.code_space().is_some_and(|n| code as usize >= n) {
                return Err(format!(
                    "checkpoint: code {code} is outside this game's code space"
                ));
            }
            top.add(code, w);
        }
        if let Some((_, moves)) = &c.top_best {
            top_best = record_sequence(game, root, moves)?;
        }
        if let Some((_, moves)) = &c.best {
            best = record_sequence(game, root, moves)?;
        }
        done = c.done.min(opts.iterations);
    }
    Ok((top, top_best, best, done))
}

// ---------------------------------------------------------------------------------------------
// Rounds: the shared-policy scheme across workers.

/// What one task of a round reports back: the best sequence of its level-(L-1) call (`None`
/// when it was stopped before finishing) and its best rollout.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundResult<M> {
    /// Result of `NRPA(level - 1, top policy)`: the sequence the top level's `>=` rule sees.
    pub sub: Option<Vec<M>>,
    /// Best rollout of the task (only updates the overall best).
    pub found: Option<Vec<M>>,
}

/// The checkpoint a round starts from: `from` (the start of the previous round; `None` before
/// the first) after the previous round's results, in iteration order, each with the seed's `>=`
/// rule and one Adapt of the top-level policy. This is what the in-process shared scheme does
/// after a batch, so rounds of `width` tasks replay `parallel=shared, batch=width` exactly.
/// Sequences are replayed (so a tampered result is refused, and scores are recomputed).
pub fn round_start<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    opts: &NrpaOptions,
    width: usize,
    from: Option<&Checkpoint<G::Move>>,
    results: &[RoundResult<G::Move>],
) -> Result<Checkpoint<G::Move>, String> {
    let (mut top, mut top_best, mut best, mut done) =
        load_checkpoint(game, root, opts, width, from)?;
    let mut adapter = Adapter::new(game, root, opts);
    for r in results {
        if let Some(moves) = &r.sub {
            let sub = record_sequence(game, root, moves)?;
            if sub.score >= top_best.score {
                top_best = sub;
            }
            adapter.adapt(game, root, 0, &mut top, &top_best);
            done += 1;
        }
        if let Some(moves) = &r.found {
            let f = record_sequence(game, root, moves)?;
            if f.score > best.score {
                best = f;
            }
        }
    }
    Ok(checkpoint(opts, width, done, &top, &top_best, &best))
}

/// What one round task found.
#[derive(Clone, Debug)]
pub struct RoundOutcome<M> {
    /// The task's [`RoundResult`].
    pub result: RoundResult<M>,
    /// Score of `result.found` (`-inf` when nothing completed).
    pub score: f64,
    /// Rollouts made.
    pub rollouts: u64,
    /// Why it stopped early, if it did.
    pub stopped: Option<StopReason>,
    /// Whether a rollout reached `stop_at`.
    pub reached: bool,
    /// Improvements of the task's best: (elapsed ms, rollouts so far, score).
    pub history: Vec<(u64, u64, f64)>,
}

/// One task of a round: top-level iteration `index` (with its own random stream, as in the
/// in-process scheme) from the round's start checkpoint.
pub fn round_iteration<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    opts: &NrpaOptions,
    start: &Checkpoint<G::Move>,
    index: u64,
    ctl: &Control,
) -> Result<RoundOutcome<G::Move>, String> {
    if opts.level == 0 || opts.iterations == 0 {
        return Err("NRPA needs level >= 1 and iterations >= 1".into());
    }
    let (top, _, best, _) = load_checkpoint(game, root, opts, start.batch, Some(start))?;
    let shared = Shared {
        reached: false.into(),
        best: Mutex::new((best.score, std::time::Instant::now())),
        history: Mutex::new(Vec::new()),
    };
    let o = NrpaOptions {
        batch: 1,
        threads: 1,
        ..opts.clone()
    };
    let mut s = Searcher::new(game, root, &o, ctl, &shared);
    let sub = s.iteration(&top, index).map(|r| r.moves.clone());
    let found = (!s.found.is_empty()).then(|| s.found.moves.clone());
    let reached = shared.reached.load(std::sync::atomic::Ordering::Relaxed);
    let history = std::mem::take(&mut *shared.history.lock());
    Ok(RoundOutcome {
        score: s.found.score,
        result: RoundResult { sub, found },
        rollouts: s.rollouts,
        stopped: if reached { None } else { ctl.should_stop() },
        reached,
        history,
    })
}

/// A sequence as `{"score", "moves": [text, ...]}` (moves in the game's notation, the score of
/// the state they reach), or null.
pub fn sequence_json<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    seq: Option<&[G::Move]>,
) -> serde_json::Value {
    match seq {
        None => serde_json::Value::Null,
        Some(moves) => {
            let mut s = root.clone();
            let texts: Vec<String> = moves
                .iter()
                .map(|&m| {
                    let t = game.format_move(&s, m);
                    game.apply(&mut s, m);
                    t
                })
                .collect();
            serde_json::json!({"score": game.score(&s), "moves": texts})
        }
    }
}

/// Reads [`sequence_json`]'s output (null is `None`), replaying the moves: the score is the
/// replayed one. `what` names the field in errors.
#[allow(clippy::type_complexity)]
pub fn sequence_from_json<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    x: &serde_json::Value,
    what: &str,
) -> Result<Option<(f64, Vec<G::Move>)>, String> {
    if x.is_null() {
        return Ok(None);
    }
    let moves = x["moves"]
        .as_array()
        .ok_or(format!("'{what}.moves' is missing"))?;
    let mut s = root.clone();
    let mut out = Vec::new();
    for (i, t) in moves.iter().enumerate() {
        let t = t
            .as_str()
            .ok_or(format!("move {} of '{what}' is not text", i + 1))?;
        let m = game
            .parse_move(&s, t)
            .map_err(|e| format!("'{what}': {}", e.at_move(i + 1)))?;
        game.apply(&mut s, m);
        out.push(m);
    }
    Ok(Some((game.score(&s), out)))
}

fn checkpoint<M: Copy>(
    opts: &NrpaOptions,
    batch: usize,
    done: u32,
    top: &Policy,
    top_best: &Record<M>,
    best: &Record<M>,
) -> Checkpoint<M> {
    let seq = |r: &Record<M>| {
        if r.is_empty() {
            None
        } else {
            Some((r.score, r.moves.clone()))
        }
    };
    Checkpoint {
        level: opts.level,
        iterations: opts.iterations,
        alpha: opts.alpha,
        adapt: opts.adapt,
        seed: opts.seed,
        batch,
        done,
        policy: top.entries(),
        top_best: seq(top_best),
        best: seq(best),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::weakschur::WeakSchur;
    use crate::model::{Game, MoveCodes, NotationError, Turn};

    /// Weak Schur with sparse codes: the same game through the hash-map policy.
    struct Sparse(WeakSchur);
    impl Game for Sparse {
        type State = <WeakSchur as Game>::State;
        type Move = u8;
        fn name(&self) -> &'static str {
            "sparse"
        }
        fn num_players(&self) -> usize {
            1
        }
        fn initial_state(&self) -> Self::State {
            self.0.initial_state()
        }
        fn turn(&self, s: &Self::State) -> Turn {
            self.0.turn(s)
        }
        fn legal_moves(&self, s: &Self::State, m: &mut Vec<u8>) {
            self.0.legal_moves(s, m)
        }
        fn apply(&self, s: &mut Self::State, m: u8) {
            self.0.apply(s, m)
        }
        fn returns(&self, s: &Self::State, o: &mut [f64]) {
            self.0.returns(s, o)
        }
        fn parse_position(&self, t: &str) -> Result<Self::State, NotationError> {
            self.0.parse_position(t)
        }
        fn format_position(&self, s: &Self::State) -> String {
            self.0.format_position(s)
        }
        fn parse_move(&self, s: &Self::State, t: &str) -> Result<u8, NotationError> {
            self.0.parse_move(s, t)
        }
        fn format_move(&self, s: &Self::State, m: u8) -> String {
            self.0.format_move(s, m)
        }
        fn same_state(&self, a: &Self::State, b: &Self::State) -> bool {
            self.0.same_state(a, b)
        }
    }
    impl MoveCodes for Sparse {
        fn code(&self, s: &Self::State, m: u8) -> u64 {
            // Spread over 64 bits (an odd multiplier is a bijection), u64::MAX included for code 0.
            self.0
                .code(s, m)
                .wrapping_mul(0xD6E8_FEB8_6659_FD93)
                .wrapping_sub(1)
        }
    }
    impl SinglePlayer for Sparse {}

    fn opts(level: u32, iterations: u32, seed: u64) -> NrpaOptions {
        NrpaOptions {
            level,
            iterations,
            seed,
            ..NrpaOptions::default()
        }
    }

    fn replay<G: SinglePlayer>(g: &G, moves: &[G::Move]) -> f64 {
        let mut s = g.initial_state();
        let mut legal = Vec::new();
        for &m in moves {
            g.legal_moves(&s, &mut legal);
            assert!(legal.contains(&m));
            g.apply(&mut s, m);
        }
        assert!(g.is_terminal(&s));
        g.score(&s)
    }

    #[test]
    fn adapt_matches_the_seeds_worked_example() {
        // Root a with children b, c, d under a zero policy; the best sequence plays c.
        let mut pol = Policy::new(Some(3));
        let best = Record {
            score: 3.0,
            moves: vec![1u8],
            codes: vec![0, 1, 2],
            starts: vec![0, 3],
            chosen: vec![1],
        };
        adapt(&mut pol, &best, 1.0, &mut AdaptScratch::new(Some(3)));
        assert!((pol.get(1) - 2.0 / 3.0).abs() < 1e-12 && (pol.get(0) + 1.0 / 3.0).abs() < 1e-12);
        let z: f64 = (0..3).map(|c| pol.get(c).exp()).sum();
        // "a-c wird nun mit rund 57,62% gewählt, a-b und a-d mit jeweils 21,19%".
        assert_eq!(format!("{:.4}", pol.get(1).exp() / z), "0.5761");
        assert_eq!(format!("{:.4}", pol.get(0).exp() / z), "0.2119");
        // The seed: a node with one child keeps its weight at 0 (+alpha - alpha * 1).
        let mut pol = Policy::new(None);
        let one = Record {
            score: 0.0,
            moves: vec![0u8],
            codes: vec![u64::MAX],
            starts: vec![0, 1],
            chosen: vec![0],
        };
        adapt(&mut pol, &one, 1.0, &mut AdaptScratch::new(None));
        assert_eq!(pol.get(u64::MAX), 0.0);
    }

    /// Four items: a (0), b (1), d (3) are legal at the start; c (2) needs a and b; c and d
    /// exclude each other. Moves commute, as Morpion's do.
    struct Dag;
    impl Game for Dag {
        type State = Vec<u8>;
        type Move = u8;
        fn name(&self) -> &'static str {
            "dag"
        }
        fn num_players(&self) -> usize {
            1
        }
        fn initial_state(&self) -> Vec<u8> {
            Vec::new()
        }
        fn turn(&self, s: &Vec<u8>) -> Turn {
            let mut m = Vec::new();
            self.legal_moves(s, &mut m);
            if m.is_empty() {
                Turn::Terminal
            } else {
                Turn::Player(0)
            }
        }
        fn legal_moves(&self, s: &Vec<u8>, m: &mut Vec<u8>) {
            m.clear();
            let has = |x: u8| s.contains(&x);
            for x in 0..4u8 {
                let ok = match x {
                    2 => has(0) && has(1) && !has(3),
                    3 => !has(2),
                    _ => true,
                };
                if ok && !has(x) {
                    m.push(x);
                }
            }
        }
        fn apply(&self, s: &mut Vec<u8>, m: u8) {
            s.push(m);
        }
        fn returns(&self, s: &Vec<u8>, o: &mut [f64]) {
            o[0] = s.len() as f64;
        }
        fn parse_position(&self, _t: &str) -> Result<Vec<u8>, NotationError> {
            Ok(Vec::new())
        }
        fn format_position(&self, s: &Vec<u8>) -> String {
            format!("{s:?}")
        }
        fn parse_move(&self, _s: &Vec<u8>, t: &str) -> Result<u8, NotationError> {
            t.parse().map_err(|_| NotationError::new("not a move"))
        }
        fn format_move(&self, _s: &Vec<u8>, m: u8) -> String {
            m.to_string()
        }
        fn same_state(&self, a: &Vec<u8>, b: &Vec<u8>) -> bool {
            a == b
        }
    }
    impl MoveCodes for Dag {
        fn code(&self, _s: &Vec<u8>, m: u8) -> u64 {
            m as u64
        }
    }
    impl SinglePlayer for Dag {
        fn code_space(&self) -> Option<usize> {
            Some(4)
        }
    }

    #[test]
    fn layers_adapt_matches_hand_computed_weights() {
        let g = Dag;
        let root = g.initial_state();
        // Best sequence a, b, c.
        let best = record_sequence(&g, &root, &[0, 1, 2]).unwrap();
        let layers = NrpaOptions {
            adapt: AdaptRule::Layers,
            ..NrpaOptions::default()
        };
        for space in [Some(4), None] {
            let mut pol = Policy::new(space);
            let mut x = Adapter::new(&g, &root, &layers);
            x.scratch = AdaptScratch::new(space);
            x.walks.push(LayerWalk::new(&g, &root));
            x.walks[0].marks = Marks::new(space);
            x.adapt(&g, &root, 0, &mut pol, &best);
            // Layer {a, b} at the start (legal a, b, d, p = 1/3): a, b get 1 - 2/3, d -2/3;
            // step b is skipped (played); layer {c} among c, d (p = 1/2): c +1/2, d -1/2.
            let want = [1.0 / 3.0, 1.0 / 3.0, 0.5, -2.0 / 3.0 - 0.5];
            for (c, w) in want.iter().enumerate() {
                assert!((pol.get(c as u64) - w).abs() < 1e-12, "{space:?} code {c}");
            }
            // A second Adapt takes its probabilities from the policy before it.
            let e: Vec<f64> = want.iter().map(|w| w.exp()).collect();
            let z0 = e[0] + e[1] + e[3];
            let z1 = e[2] + e[3];
            let want2 = [
                want[0] + 1.0 - 2.0 * e[0] / z0,
                want[1] + 1.0 - 2.0 * e[1] / z0,
                want[2] + 1.0 - e[2] / z1,
                want[3] - 2.0 * e[3] / z0 - e[3] / z1,
            ];
            x.adapt(&g, &root, 0, &mut pol, &best);
            for (c, w) in want2.iter().enumerate() {
                assert!((pol.get(c as u64) - w).abs() < 1e-12, "{space:?} code {c}");
            }
        }
        // The seed's Adapt on the same sequence, for contrast: b and d compete at ply 2.
        let mut pol = Policy::new(Some(4));
        let seed = NrpaOptions::default();
        Adapter::new(&g, &root, &seed).adapt(&g, &root, 0, &mut pol, &best);
        let want = [2.0 / 3.0, -1.0 / 3.0 + 0.5, 0.5, -1.0 / 3.0 - 0.5 - 0.5];
        for (c, w) in want.iter().enumerate() {
            assert!((pol.get(c as u64) - w).abs() < 1e-12, "seed code {c}");
        }
    }

    #[test]
    fn layers_adapt_in_every_scheme_is_deterministic() {
        let w = WeakSchur::new(4).unwrap();
        // Weak Schur's codes name the number placed and its part, so each step's layer is the
        // step's own move: the layers Adapt is the seed's there (as for TSPTW's (from, to)).
        let layers = NrpaOptions {
            adapt: AdaptRule::Layers,
            ..opts(2, 12, 9)
        };
        let a = nrpa(&w, &w.initial_state(), &layers, None, &Control::unlimited()).unwrap();
        let seed = nrpa(
            &w,
            &w.initial_state(),
            &opts(2, 12, 9),
            None,
            &Control::unlimited(),
        );
        assert_eq!(a.checkpoints[0].policy, seed.unwrap().checkpoints[0].policy);
        // Morpion: layers of several moves.
        let g = crate::games::morpion::Morpion::new(crate::games::morpion::Variant::D5);
        let root = g.initial_state();
        let o = NrpaOptions {
            adapt: AdaptRule::Layers,
            ..opts(2, 12, 9)
        };
        let a = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
        let b = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
        assert_eq!((a.score, &a.sequence), (b.score, &b.sequence));
        assert_eq!(replay(&g, &a.sequence), a.score);
        let seed = nrpa(&g, &root, &opts(2, 12, 9), None, &Control::unlimited()).unwrap();
        assert_ne!(a.checkpoints[0].policy, seed.checkpoints[0].policy);
        // Resume from a checkpoint (JSON round trip): the same run; the seed's Adapt refuses it.
        let part = nrpa(
            &g,
            &root,
            &o,
            None,
            &Control::with_limits(None, Some(12 * 5 + 7)),
        )
        .unwrap();
        let json = part.checkpoints[0].to_json(&g, &root);
        assert_eq!(json["adapt"], "layers");
        let back = Checkpoint::from_json(&g, &root, &json).unwrap();
        assert_eq!(back, part.checkpoints[0]);
        let rest = nrpa(
            &g,
            &root,
            &o,
            Some(vec![back.clone()]),
            &Control::unlimited(),
        )
        .unwrap();
        assert_eq!((rest.score, &rest.sequence), (a.score, &a.sequence));
        assert_eq!(rest.checkpoints[0], a.checkpoints[0]);
        assert!(nrpa(
            &g,
            &root,
            &opts(2, 12, 9),
            Some(vec![back]),
            &Control::unlimited()
        )
        .unwrap_err()
        .contains("adapt=layers"));
        // Level 3, batch 2 on two threads and independent runs: deterministic.
        for (batch, scheme) in [(2, Scheme::Shared), (1, Scheme::Independent)] {
            let p = NrpaOptions {
                threads: 2,
                batch,
                scheme,
                ..NrpaOptions {
                    level: 3,
                    ..o.clone()
                }
            };
            let x = nrpa(&g, &root, &p, None, &Control::unlimited()).unwrap();
            let y = nrpa(&g, &root, &p, None, &Control::unlimited()).unwrap();
            assert_eq!(
                (x.score, &x.sequence, x.rollouts),
                (y.score, &y.sequence, y.rollouts)
            );
            assert_eq!(replay(&g, &x.sequence), x.score);
        }
    }

    #[test]
    fn hash_policy_agrees_with_dense_table() {
        let mut a = Policy::new(Some(5000));
        let mut b = Policy::new(None);
        for i in 0..5000u64 {
            let c = (i * 7919) % 5000;
            a.add(c, i as f64 * 0.5);
            b.add(c, i as f64 * 0.5);
        }
        for c in 0..5000 {
            assert_eq!(a.get(c), b.get(c));
        }
        assert_eq!(a.entries(), b.entries());
        let g = WeakSchur::new(4).unwrap();
        let x = nrpa(
            &g,
            &g.initial_state(),
            &opts(2, 30, 5),
            None,
            &Control::unlimited(),
        )
        .unwrap();
        let y = nrpa(
            &Sparse(g.clone()),
            &g.initial_state(),
            &opts(2, 30, 5),
            None,
            &Control::unlimited(),
        )
        .unwrap();
        assert_eq!(
            (x.score, &x.sequence, x.rollouts),
            (y.score, &y.sequence, y.rollouts)
        );
    }

    #[test]
    fn fixed_seed_is_deterministic_and_replays() {
        let g = WeakSchur::new(4).unwrap();
        let a = nrpa(
            &g,
            &g.initial_state(),
            &opts(2, 40, 11),
            None,
            &Control::unlimited(),
        )
        .unwrap();
        let b = nrpa(
            &g,
            &g.initial_state(),
            &opts(2, 40, 11),
            None,
            &Control::unlimited(),
        )
        .unwrap();
        assert_eq!(
            (a.score, &a.sequence, a.rollouts),
            (b.score, &b.sequence, b.rollouts)
        );
        assert_eq!(a.rollouts, 40 * 40);
        assert_eq!(replay(&g, &a.sequence), a.score);
        let c = nrpa(
            &g,
            &g.initial_state(),
            &opts(2, 40, 12),
            None,
            &Control::unlimited(),
        )
        .unwrap();
        assert_ne!(a.sequence, c.sequence, "another seed, another search");
    }

    #[test]
    fn nrpa_and_nmcs_find_the_exhaustive_optimum() {
        // WS(2) = 8 and WS(3) = 23 (games::weakschur checks them by exhaustive search).
        for (k, ws) in [(2, 8.0), (3, 23.0)] {
            let g = WeakSchur::new(k).unwrap();
            for seed in 0..3 {
                let o = nrpa(
                    &g,
                    &g.initial_state(),
                    &opts(3, 30, seed),
                    None,
                    &Control::unlimited(),
                )
                .unwrap();
                assert_eq!(o.score, ws, "nrpa k={k} seed={seed}");
                assert_eq!(replay(&g, &o.sequence), ws);
                let o = crate::search::nmcs::nmcs(
                    &g,
                    &g.initial_state(),
                    3,
                    seed,
                    &Control::unlimited(),
                );
                assert_eq!(o.score, ws, "nmcs k={k} seed={seed}");
                assert_eq!(replay(&g, &o.sequence), ws);
            }
        }
    }

    #[test]
    fn nmcs_is_deterministic_and_levels_help() {
        let g = WeakSchur::new(4).unwrap();
        let a = crate::search::nmcs::nmcs(&g, &g.initial_state(), 1, 3, &Control::unlimited());
        let b = crate::search::nmcs::nmcs(&g, &g.initial_state(), 1, 3, &Control::unlimited());
        assert_eq!(
            (a.score, &a.sequence, a.rollouts),
            (b.score, &b.sequence, b.rollouts)
        );
        assert_eq!(replay(&g, &a.sequence), a.score);
        let l0 = crate::search::nmcs::nmcs(&g, &g.initial_state(), 0, 3, &Control::unlimited());
        assert_eq!(l0.rollouts, 1);
        let c = crate::search::nmcs::nmcs(
            &g,
            &g.initial_state(),
            1,
            3,
            &Control::with_limits(None, Some(10)),
        );
        assert_eq!(c.rollouts, 10);
        assert_eq!(c.stopped, Some(StopReason::Nodes));
        assert_eq!(replay(&g, &c.sequence), c.score);
    }

    #[test]
    fn checkpoint_resume_continues_exactly() {
        let g = WeakSchur::new(4).unwrap();
        let root = g.initial_state();
        let o = opts(2, 12, 9);
        let full = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
        // Stop part-way (a rollout limit), write the checkpoint as JSON, read it back, resume.
        let part = nrpa(
            &g,
            &root,
            &o,
            None,
            &Control::with_limits(None, Some(12 * 5 + 7)),
        )
        .unwrap();
        assert_eq!(part.stopped, Some(StopReason::Nodes));
        assert_eq!(part.checkpoints[0].done, 5);
        let json = part.checkpoints[0].to_json(&g, &root);
        let back = Checkpoint::from_json(&g, &root, &json).unwrap();
        assert_eq!(back, part.checkpoints[0]);
        let rest = nrpa(&g, &root, &o, Some(vec![back]), &Control::unlimited()).unwrap();
        assert_eq!((rest.score, &rest.sequence), (full.score, &full.sequence));
        assert_eq!(rest.checkpoints[0], full.checkpoints[0]);
        // Options must match.
        let other = opts(2, 13, 9);
        let c = Checkpoint::from_json(&g, &root, &json).unwrap();
        assert!(
            nrpa(&g, &root, &other, Some(vec![c]), &Control::unlimited())
                .unwrap_err()
                .contains("checkpoint was made")
        );
    }

    #[test]
    fn parallel_schemes() {
        let g = WeakSchur::new(4).unwrap();
        let root = g.initial_state();
        let seq = nrpa(&g, &root, &opts(2, 20, 4), None, &Control::unlimited()).unwrap();
        // Shared scheme, batch 1 on two threads: the sequential algorithm exactly.
        let o = NrpaOptions {
            threads: 2,
            ..opts(2, 20, 4)
        };
        let p = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
        assert_eq!((p.score, &p.sequence), (seq.score, &seq.sequence));
        // Batch 2: deterministic whatever the thread timing, same budget of rollouts.
        let o = NrpaOptions {
            threads: 2,
            batch: 2,
            ..opts(2, 20, 4)
        };
        let a = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
        let b = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
        assert_eq!(
            (a.score, &a.sequence, a.rollouts),
            (b.score, &b.sequence, b.rollouts)
        );
        assert_eq!(a.rollouts, seq.rollouts);
        assert_eq!(replay(&g, &a.sequence), a.score);
        // Independent runs: run 0 is the sequential run, so two threads are at least as good.
        let o = NrpaOptions {
            threads: 2,
            scheme: Scheme::Independent,
            ..opts(2, 20, 4)
        };
        let i = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
        assert!(i.score >= seq.score);
        assert_eq!(i.rollouts, 2 * seq.rollouts);
        assert_eq!(i.checkpoints.len(), 2);
    }

    #[test]
    fn stop_at_and_time_limit_stop_early() {
        let g = WeakSchur::new(4).unwrap();
        let o = NrpaOptions {
            stop_at: Some(40.0),
            ..opts(3, 100, 1)
        };
        let r = nrpa(&g, &g.initial_state(), &o, None, &Control::unlimited()).unwrap();
        assert!(r.score >= 40.0 && r.stopped.is_none() && r.rollouts < 100 * 100 * 100);
        let t = Control::with_limits(Some(Duration::from_millis(100)), None);
        let r = nrpa(&g, &g.initial_state(), &opts(5, 100, 1), None, &t).unwrap();
        assert_eq!(r.stopped, Some(StopReason::Time));
        assert_eq!(replay(&g, &r.sequence), r.score);
        assert!(!r.history.is_empty() && r.history.last().unwrap().2 == r.score);
    }
}
