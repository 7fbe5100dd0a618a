//! Checkpoints: the state of a run between two top-level iterations, enough to continue it
//! exactly.

use super::adapt::{record_sequence, Record};
use super::policy::Policy;
use super::rounds::{move_texts, sequence_from_json};
use super::{AdaptRule, NrpaOptions};
use crate::model::single::SinglePlayer;

/// The state of a run between two top-level iterations: enough to continue it exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint<M> {
    /// Options that must match on resume.
    pub level: u32,
    /// Iterations per level.
    pub iterations: u32,
    /// Adaptation step.
    pub alpha: f64,
    /// Which Adapt (written as `"adapt": "layers"` only when not Rosin's, so older
    /// checkpoints read as Rosin's).
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
                let (texts, _) = move_texts(game, root, moves);
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

/// The top-level state a checkpoint describes (zeros and nothing found without one), after
/// checking that it was made with these options.
#[allow(clippy::type_complexity)]
pub(super) fn load_checkpoint<G: SinglePlayer>(
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

pub(super) fn checkpoint<M: Copy>(
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
