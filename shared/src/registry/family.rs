//! Kernel families: for each set of game capabilities, the algorithms that apply and how their
//! options are read. A family is generic over the game; the registry instantiates it per game.

use super::{Opts, PlanShape, PreparedJob, SolveError};
use crate::games::tree::{Tree, TreeKind};
use crate::model::{Hashed, ZeroSum};

use crate::search::{alphabeta, minimax, Control};
use crate::wire::{JobSpec, RawBounds, TaskKind, TaskOutput};

/// What a two-player job asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ask {
    /// The exact value (or the depth-limited value with `depth`).
    Value,
    /// Decide "value >= target" (internal scale).
    Decide(i32),
}

/// A prepared two-player zero-sum job.
pub struct ZeroSumJob<G: ZeroSum + Hashed> {
    job: JobSpec,
    game: G,
    root: G::State,
    depth: Option<u32>,
    ask: Ask,
}

/// Prepares a job over a two-player zero-sum game: parses the position and the options of the
/// algorithms of this family.
pub fn zero_sum<G: ZeroSum + Hashed>(
    job: &JobSpec,
    game: G,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let root = game
        .parse_position(&job.position)
        .map_err(|e| SolveError::bad(format!("position: {e}")))?;
    zero_sum_at(job, game, root)
}

fn zero_sum_at<G: ZeroSum + Hashed>(
    job: &JobSpec,
    game: G,
    root: G::State,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let opts = Opts::new(&job.options, "option");
    let depth: Option<u32> = opts.get("depth")?;
    let ask = match opts.raw("target") {
        None => Ask::Value,
        Some(t) => Ask::Decide(
            game.parse_target(&root, t)
                .map_err(|e| SolveError::bad(format!("option target: {e}")))?,
        ),
    };
    match job.algorithm.as_str() {
        "minimax" => {
            if matches!(ask, Ask::Decide(_)) {
                return Err(SolveError::bad("option 'target' is for alphabeta and the proof-number algorithms"));
            }
        }
        "alphabeta" => {}
        other => {
            return Err(SolveError::bad(format!(
                "algorithm '{other}' does not apply to game '{}' (two-player zero-sum: minimax, alphabeta)",
                job.game
            )))
        }
    }
    if depth.is_some() && matches!(ask, Ask::Decide(_)) {
        return Err(SolveError::bad(
            "options 'depth' and 'target' cannot be combined",
        ));
    }
    opts.finish()?;
    Ok(Box::new(ZeroSumJob {
        job: job.clone(),
        game,
        root,
        depth,
        ask,
    }))
}

impl<G: ZeroSum + Hashed> ZeroSumJob<G> {
    fn output(
        &self,
        o: minimax::Outcome<G::Move>,
        value: serde_json::Value,
        raw: RawBounds,
        ms: u64,
    ) -> TaskOutput {
        let mut extra = serde_json::Map::new();
        let mut s = self.root.clone();
        let mut pv = Vec::new();
        for &m in &o.pv {
            pv.push(serde_json::Value::from(self.game.format_move(&s, m)));
            self.game.apply(&mut s, m);
        }
        extra.insert("pv".into(), pv.into());
        if let Some(d) = self.depth {
            extra.insert("depth".into(), d.into());
        }
        TaskOutput {
            value,
            best_move: o.best_move.map(|m| self.game.format_move(&self.root, m)),
            nodes: o.nodes,
            elapsed_ms: ms,
            raw: Some(raw),
            extra,
        }
    }

    fn stopped(ctl: &Control) -> SolveError {
        match ctl.should_stop() {
            Some(r) => SolveError::Internal(format!("stopped before a result ({})", r.as_str())),
            None => SolveError::Internal("stopped".into()),
        }
    }

    /// Null-window probe "value >= target": returns fail-soft bounds.
    fn probe(&self, target: i32, ctl: &Control) -> Result<TaskOutput, SolveError> {
        let t0 = std::time::Instant::now();
        let (lo, hi) = self.game.value_bounds(&self.root);
        let ms = || t0.elapsed().as_millis() as u64;
        if target <= lo || target > hi {
            // Decided by the bounds alone.
            let holds = target <= lo;
            let raw = RawBounds {
                lower: lo,
                upper: hi,
            };
            let mut out = TaskOutput {
                raw: Some(raw),
                elapsed_ms: ms(),
                ..TaskOutput::default()
            };
            out.extra.insert("proved".into(), holds.into());
            return Ok(out);
        }
        let o = alphabeta::alphabeta(&self.game, &self.root, target - 1, target, None, true, ctl)
            .ok_or_else(|| Self::stopped(ctl))?;
        let raw = if o.value >= target {
            RawBounds {
                lower: o.value,
                upper: hi,
            }
        } else {
            RawBounds {
                lower: lo,
                upper: o.value,
            }
        };
        let holds = o.value >= target;
        let mut out = self.output(o, serde_json::Value::Null, raw, ms());
        if !holds {
            out.best_move = None;
            out.extra.remove("pv");
        }
        out.extra.insert("proved".into(), holds.into());
        Ok(out)
    }
}

impl<G: ZeroSum + Hashed> PreparedJob for ZeroSumJob<G> {
    fn job(&self) -> &JobSpec {
        &self.job
    }

    fn plan_shape(&self) -> PlanShape {
        match (self.job.algorithm.as_str(), self.ask, self.depth) {
            ("alphabeta", Ask::Value, None) if !self.game.is_terminal(&self.root) => {
                let (lower, upper) = self.game.value_bounds(&self.root);
                PlanShape::Probes { lower, upper }
            }
            _ => PlanShape::Single,
        }
    }

    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError> {
        let t0 = std::time::Instant::now();
        match (task, self.ask) {
            (TaskKind::Probe { target }, _) => self.probe(*target, ctl),
            (TaskKind::Whole, Ask::Decide(target)) => self.probe(target, ctl),
            (TaskKind::Whole, Ask::Value) => {
                let o = match self.job.algorithm.as_str() {
                    "minimax" => minimax::minimax(&self.game, &self.root, self.depth, ctl),
                    _ => alphabeta::alphabeta(
                        &self.game,
                        &self.root,
                        i32::MIN + 1,
                        i32::MAX,
                        self.depth,
                        true,
                        ctl,
                    ),
                }
                .ok_or_else(|| Self::stopped(ctl))?;
                let value = self.game.value_to_json(&self.root, o.value);
                let raw = RawBounds {
                    lower: o.value,
                    upper: o.value,
                };
                Ok(self.output(o, value, raw, t0.elapsed().as_millis() as u64))
            }
            (TaskKind::Run { .. }, _) => Err(SolveError::Internal(
                "run tasks do not apply to this job".into(),
            )),
        }
    }

    fn finish_probes(&self, bounds: RawBounds, probes: &[TaskOutput]) -> TaskOutput {
        // The probe that proved the final lower bound carries a move that reaches it.
        let best = probes
            .iter()
            .rev()
            .find(|p| p.best_move.is_some() && p.raw.map(|r| r.lower) == Some(bounds.lower));
        let mut out = match best {
            Some(p) => p.clone(),
            None => {
                // No probe failed high: the value is the smallest possible, every move reaches it.
                let mut moves = Vec::new();
                self.game.legal_moves(&self.root, &mut moves);
                TaskOutput {
                    best_move: moves.first().map(|&m| self.game.format_move(&self.root, m)),
                    ..TaskOutput::default()
                }
            }
        };
        out.nodes = probes.iter().map(|p| p.nodes).sum();
        out.raw = Some(bounds);
        out.extra.remove("proved");
        out.value = if bounds.is_exact() {
            self.game.value_to_json(&self.root, bounds.lower)
        } else {
            serde_json::Value::Null
        };
        out.extra.insert(
            "bounds".into(),
            serde_json::json!([
                self.game.value_to_json(&self.root, bounds.lower),
                self.game.value_to_json(&self.root, bounds.upper)
            ]),
        );
        out.extra.insert("probes".into(), probes.len().into());
        out
    }
}

/// Explicit trees: the kind of tree decides the family.
pub fn tree(job: &JobSpec) -> Result<Box<dyn PreparedJob>, SolveError> {
    let tree = Tree::parse(&job.position).map_err(|e| SolveError::bad(format!("position: {e}")))?;
    match tree.kind() {
        TreeKind::MinMax => zero_sum_at(job, tree, 0),
        TreeKind::Chance => Err(SolveError::bad(format!(
            "algorithm '{}' does not apply to a tree with chance nodes",
            job.algorithm
        ))),
        TreeKind::MultiPlayer => Err(SolveError::bad(format!(
            "algorithm '{}' does not apply to a tree with player nodes",
            job.algorithm
        ))),
    }
}
