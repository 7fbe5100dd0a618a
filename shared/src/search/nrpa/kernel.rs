//! One searcher: levels 0..L-1, each with its policy and best record, and the rollout at
//! level 0.

use super::adapt::{Adapter, Record};
use super::policy::{softmax_weights, Dirty, Policy};
use super::{derive_seed, NrpaOptions, REPORT_EVERY};
use crate::model::single::SinglePlayer;
use crate::search::Control;
use parking_lot::Mutex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What the threads of one run share: the global best for progress reports.
pub(super) struct Shared {
    /// Set when a rollout reached `stop_at`: every thread stops.
    pub(super) reached: std::sync::atomic::AtomicBool,
    pub(super) best: Mutex<(f64, std::time::Instant)>,
    pub(super) history: Mutex<Vec<(u64, u64, f64)>>,
}

impl Shared {
    pub(super) fn halted(&self, ctl: &Control) -> bool {
        self.reached.load(std::sync::atomic::Ordering::Relaxed) || ctl.should_stop().is_some()
    }
}

pub(super) struct Searcher<'a, G: SinglePlayer> {
    pub(super) game: &'a G,
    pub(super) root: &'a G::State,
    pub(super) opts: &'a NrpaOptions,
    pub(super) ctl: &'a Control,
    pub(super) shared: &'a Shared,
    /// `policies[l]`, `bests[l]` for levels 1..=L-1 (index 0 unused).
    pub(super) policies: Vec<Policy>,
    /// `dirty[l]` (l >= 2, dense policies): slots where `policies[l - 1]` may differ from
    /// `policies[l]`.
    pub(super) dirty: Vec<Dirty>,
    pub(super) bests: Vec<Record<G::Move>>,
    pub(super) cur: Record<G::Move>,
    /// Best rollout of this searcher since its last [`Searcher::take_best`].
    pub(super) found: Record<G::Move>,
    pub(super) legal: Vec<G::Move>,
    pub(super) weights: Vec<f64>,
    pub(super) adapter: Adapter<G>,
    pub(super) state: G::State,
    pub(super) rng: ChaCha8Rng,
    pub(super) rollouts: u64,
    pub(super) stopped: bool,
}

impl<'a, G: SinglePlayer> Searcher<'a, G> {
    pub(super) fn new(
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
    pub(super) fn rollout(&mut self, policy: &Policy) {
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
    pub(super) fn publish(&self, score: f64) {
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
                // The line itself too (a position text that replays it), so that a running job's
                // page draws the best line so far.
                let line = self.game.sequence_text(self.root, &self.found.moves);
                self.ctl.report(serde_json::json!({"best": score, "rollouts": self.ctl.nodes(), "elapsed_ms": ms, "best_sequence": line}));
            }
        }
    }

    /// `NRPA(l, policies[l])` for `l >= 1`; the result is in `bests[l]`.
    pub(super) fn level(&mut self, l: usize) {
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

    /// Makes `policies[l - 1]` a copy of `policies[l]` (Rosin's "copy of pol"), copying only
    /// the slots that may differ when the tables are dense.
    pub(super) fn sync_below(&mut self, l: usize) {
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
    pub(super) fn iteration(&mut self, top: &Policy, i: u64) -> Option<&Record<G::Move>> {
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
