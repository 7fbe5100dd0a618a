//! The multi-player family: games with utility vectors ([`Stochastic`] + [`VectorEval`]) and
//! the kernels `maxn` and `paranoid`.
//!
//! Options: `tiebreak` (maxn: `first`, the default, `last`, `paranoid`, `friendly`), `depth`
//! (players' plies; only for games with an evaluator, explicit trees are searched to the end).
//! `brs` (best-reply search) needs moves out of turn, which no game offers yet: it is refused
//! with a clear message.
//!
//! Output (CONTRACTS.md, more than two players): `value` is a JSON array, one entry per player:
//! max^n's whole vector; for paranoid, the root player's entry, the others `null` (paranoid
//! search does not determine them). `player` names the root player (0-based) for paranoid.

use super::{Opts, PlanShape, PreparedJob, SolveError};
use crate::games::tree::json_number;
use crate::model::{Stochastic, VectorEval};
use crate::search::maxn::{maxn, root_player, TieBreak};
use crate::search::paranoid::paranoid;
use crate::search::Control;
use crate::wire::{JobSpec, TaskKind, TaskOutput};

#[derive(Clone, Copy, Debug)]
enum Kernel {
    Maxn(TieBreak),
    Paranoid,
}

/// A prepared multi-player job.
pub struct MultiJob<G: Stochastic + VectorEval> {
    job: JobSpec,
    game: G,
    root: G::State,
    kernel: Kernel,
    depth: Option<u32>,
}

/// Prepares a job over a multi-player game; `evaluates`: the game has a real evaluator.
pub fn multi<G: Stochastic + VectorEval>(
    job: &JobSpec,
    game: G,
    root: G::State,
    evaluates: bool,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let opts = Opts::new(&job.options, "option");
    let depth: Option<u32> = opts.get("depth")?;
    let kernel = match job.algorithm.as_str() {
        "maxn" => Kernel::Maxn(match opts.raw("tiebreak") {
            None => TieBreak::First,
            Some(t) => t
                .parse()
                .map_err(|e: String| SolveError::bad(format!("option {e}")))?,
        }),
        "paranoid" => Kernel::Paranoid,
        "brs" => {
            return Err(SolveError::bad(format!(
                "algorithm 'brs' needs a game whose players can move out of turn; game '{}' cannot",
                job.game
            )))
        }
        other => {
            return Err(SolveError::bad(format!(
                "algorithm '{other}' does not apply to game '{}' (multi-player: maxn, paranoid)",
                job.game
            )))
        }
    };
    opts.finish()?;
    if depth.is_some() && !evaluates {
        return Err(SolveError::bad(format!(
            "option 'depth': game '{}' has no evaluator, it is searched to the end",
            job.game
        )));
    }
    Ok(Box::new(MultiJob {
        job: job.clone(),
        game,
        root,
        kernel,
        depth,
    }))
}

impl<G: Stochastic + VectorEval> PreparedJob for MultiJob<G> {
    fn job(&self) -> &JobSpec {
        &self.job
    }
    fn plan_shape(&self) -> PlanShape {
        PlanShape::Single
    }
    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError> {
        if !matches!(task, TaskKind::Whole) {
            return Err(SolveError::Internal(
                "only whole tasks apply to multi-player jobs".into(),
            ));
        }
        let t0 = std::time::Instant::now();
        let o = match self.kernel {
            Kernel::Maxn(tb) => maxn(&self.game, &self.root, self.depth, tb, ctl),
            Kernel::Paranoid => paranoid(&self.game, &self.root, self.depth, ctl),
        }
        .ok_or_else(|| match ctl.should_stop() {
            Some(r) => SolveError::Internal(format!("stopped before a result ({})", r.as_str())),
            None => SolveError::Internal("stopped".into()),
        })?;
        let mut extra = serde_json::Map::new();
        let value: Vec<serde_json::Value> = match self.kernel {
            Kernel::Maxn(_) => o.value.iter().map(|&v| json_number(v)).collect(),
            Kernel::Paranoid => {
                let r = root_player(&self.game, &self.root);
                extra.insert("player".into(), r.into());
                (0..self.game.num_players())
                    .map(|p| {
                        if p == r {
                            json_number(o.value[0])
                        } else {
                            serde_json::Value::Null
                        }
                    })
                    .collect()
            }
        };
        if let Some(d) = self.depth {
            extra.insert("depth".into(), d.into());
        }
        extra.insert("leaves".into(), o.leaves.into());
        Ok(TaskOutput {
            value: value.into(),
            best_move: o.best_move.map(|m| self.game.format_move(&self.root, m)),
            nodes: o.nodes,
            elapsed_ms: t0.elapsed().as_millis() as u64,
            raw: None,
            extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::run_local;
    use crate::registry::prepare;
    use crate::search::Control;
    use crate::wire::JobSpec;
    use serde_json::json;

    fn job(position: &str, algorithm: &str, options: &[(&str, &str)]) -> JobSpec {
        JobSpec {
            game: "tree".into(),
            position: position.into(),
            algorithm: algorithm.into(),
            options: options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..JobSpec::default()
        }
    }

    const COURSE: &str = r#"{"player": 0, "labels": ["left", "right"], "children": [
        {"player": 1, "children": [{"player": 2, "children": [{"utility": [1, 2, 6]}, {"utility": [4, 2, 3]}]},
                                   {"player": 2, "children": [{"utility": [6, 1, 2]}, {"utility": [7, 4, 1]}]}]},
        {"player": 1, "children": [{"player": 2, "children": [{"utility": [2, 5, 4]}, {"utility": [5, 4, 5]}]},
                                   {"player": 2, "children": [{"utility": [5, 2, 4]}, {"utility": [7, 7, 1]}]}]}]}"#;

    #[test]
    fn course_tree_through_the_registry() {
        let p = prepare(&job(COURSE, "maxn", &[("tiebreak", "first")])).unwrap();
        let r = run_local(p.as_ref(), &Control::unlimited()).unwrap();
        assert_eq!(r.value, json!([5, 4, 5]));
        assert_eq!(r.best_move.as_deref(), Some("right"));
        let p = prepare(&job(COURSE, "paranoid", &[])).unwrap();
        let r = run_local(p.as_ref(), &Control::unlimited()).unwrap();
        assert_eq!(r.value, json!([2, null, null]));
        for (j, want) in [
            (
                job(COURSE, "maxn", &[("tiebreak", "coin")]),
                "tiebreak 'coin'",
            ),
            (job(COURSE, "maxn", &[("depth", "2")]), "no evaluator"),
            (job(COURSE, "brs", &[]), "out of turn"),
            (job(COURSE, "alphabeta", &[]), "does not apply"),
        ] {
            let e = prepare(&j).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(want), "{e}");
        }
    }
}
