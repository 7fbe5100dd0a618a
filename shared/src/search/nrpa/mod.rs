//! Nested Rollout Policy Adaptation as in C. D. Rosin's pseudocode ("Nested Rollout Policy
//! Adaptation for Monte Carlo Tree Search", IJCAI 2011), with a parallel top level and checkpoints.
//!
//! Contract: [`nrpa`] maximises [`SinglePlayer::score`] from `root`. `NRPA(level, pol)` runs `N`
//! iterations of `NRPA(level - 1, copy of pol)`, keeps the best sequence with `>=` (a later equal
//! result replaces the earlier one), and after every iteration calls `Adapt(pol, best)`: along the
//! best sequence the chosen move's weight gains `alpha` and every legal move's loses `alpha * p`,
//! `p` its softmax probability before this Adapt. Level 0 is a rollout with probabilities
//! proportional to `exp(pol[code])`; the start policy is all zeros (or a checkpoint's). A stop
//! ([`Control`] or `stop_at`) returns the best completed rollout so far and says why.
//!
//! Determinism: with `threads = 1` and a fixed seed every run is the same: top-level iteration `i`
//! draws from its own stream derived from `(seed, i)`, so a resumed checkpoint continues exactly
//! like the uninterrupted run. Speed: dense or hashed policies, rollouts that record each ply's
//! legal codes so `Adapt` never replays the game, no allocation per rollout.
//!
//! Parallel schemes ([`Scheme`]): `Shared` batches top-level iterations on one policy (the result
//! depends on `batch`, never on thread timing; across workers as rounds, [`round_start`],
//! [`round_iteration`], equal to `batch = W`); `Independent` runs whole NRPAs with derived seeds,
//! best wins. Why each and which is the default: docs/nrpa.md, "Parallel schemes".

use super::{Control, StopReason};
use crate::model::single::SinglePlayer;
use parking_lot::Mutex;
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
    /// Rosin's Adapt (2011): along the best sequence, ply by ply, the chosen move gains
    /// `alpha` and every legal move loses `alpha * p`.
    Seed,
    /// The "layers" Adapt (the default of anagorko's morpion-lpp NRPA): the best sequence is
    /// read as a partial order. The codes of its moves are marked; a replay from the root takes
    /// at each step the *layer*, the legal moves whose code is marked and not yet played: every
    /// legal move loses `alpha * |layer| * p`, each move of the layer gains `alpha`, then the
    /// whole layer is played. A step whose move was already played in an earlier layer is
    /// skipped. Moves that do not depend on each other are rewarded together instead of
    /// penalising each other. `p` is the softmax probability under the policy before this
    /// Adapt, as in Rosin's Adapt. Meant for games whose moves commute (Morpion); see
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
    /// Iterations per level (Rosin's N), at least 1.
    pub iterations: u32,
    /// Adaptation step (Rosin's Alpha).
    pub alpha: f64,
    /// Which Adapt (option `adapt`, default Rosin's).
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

mod adapt;
mod checkpoint;
mod kernel;
mod policy;
mod rounds;
#[cfg(test)]
mod tests;

use adapt::{Adapter, Record};
pub use checkpoint::Checkpoint;
use checkpoint::{checkpoint, load_checkpoint};
use kernel::{Searcher, Shared};
pub use policy::Policy;
pub use rounds::{
    round_iteration, round_start, sequence_from_json, sequence_json, RoundOutcome, RoundResult,
};

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
        // Results in iteration order: the `>=` rule and one Adapt each, as Rosin's loop.
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
