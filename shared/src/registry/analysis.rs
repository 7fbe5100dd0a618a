//! Analysis jobs (`analyse=all`): the exact score of every legal root move.
//!
//! An analysis job of an exact algorithm (`alphabeta`, `pns`, `dfpn`, `pn2`, `pdspn`) on a
//! two-player zero-sum game prepares, for each legal root move, the plain exact job of the
//! position after it (the same algorithm and options, without `analyse`), and plans them as one
//! [`PlanShape::Moves`] plan: each move's sub-plan is that job's own probe plan, so the moves'
//! tasks spread over the workers side by side. Every score is the child's exact value seen
//! from the side to move at the root (minus the child's value when the side changes), on the
//! job's value scale; a move that a limit stopped first has the bounds proved for it
//! (`lower`, `upper`). The job's `value` is the best score, `best_move` a move with the top score
//! (the first in move order among equals), `pv` that move followed by its child's line.
//!
//! With `depth=D` (alpha-beta only) every move's score is instead the estimate of a depth-`D`
//! search of the position after the move (D + 1 plies from the root, counting the move), on
//! the job's value scale: the hint of Othello programs (disc estimates on Othello). Each move is
//! one task then. Options that ask something else than every move's value (`target`, `guess`,
//! `weak`, `book`, `proof`) are refused with `analyse=all`. Alpha-beta's table budget
//! (`memory_mb`, else the engine's default) is shared out evenly between the moves, since every
//! move keeps its own table for the job's lifetime.

use super::kernel::{Algorithm, Analyse, KernelList};
use super::spec::{DefaultValue, Spec};
use super::{Opts, PlanShape, PreparedJob, Resources, SolveError};
use crate::games::Exact;
use crate::plan::MovePlan;
use crate::search::{engine, Control};
use crate::wire::{JobSpec, MoveScore, RawBounds, TaskKind, TaskOutput};
use std::collections::BTreeMap;

/// `analyse`: `none` or `all` (exact families and MCTS).
pub const ANALYSE: Spec = Spec::choice(
    "analyse",
    &["none", "all"],
    DefaultValue::Word("none"),
    "all: the score of every root move (result key moves)",
);

/// `depth`: with it, an analysis gives every move's depth-limited estimate.
const DEPTH: &str = super::spec::DEPTH.name;

/// Options an analysis refuses: each asks a different question than every move's value.
const REFUSED: &[&str] = &["target", "guess", "weak", "book", "proof"];

/// Reads `analyse` (marking it read): whether it is `all`.
pub fn read(opts: &Opts) -> Result<bool, SolveError> {
    Ok(opts.choice(&ANALYSE)? == "all")
}

/// Whether a job's options ask for an analysis (`analyse=all`), for code that only reads a
/// job already checked by [`read`].
pub fn wanted(job: &JobSpec) -> bool {
    job.options.get(ANALYSE.name).map(|v| v.trim()) == Some("all")
}

/// A plain exact job at a position: how the zero-sum family prepares one.
pub(super) type Plain<G> = fn(
    &JobSpec,
    G,
    <G as crate::model::Game>::State,
    &Resources,
) -> Result<Box<dyn PreparedJob>, SolveError>;

/// Prepares a zero-sum job that names `analyse`: the plain job (`plain`) for `analyse=none`,
/// else the analysis of every root move.
pub(super) fn route<G: Exact + Clone, L: KernelList>(
    job: &JobSpec,
    game: G,
    root: G::State,
    res: &Resources,
    plain: Plain<G>,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let all = read(&Opts::new(&job.options, "option"))?;
    let mut stripped = job.clone();
    stripped.options.remove(ANALYSE.name);
    if !all {
        return plain(&stripped, game, root, res);
    }
    let of = |how: &dyn Fn(&Algorithm) -> bool| -> Vec<&str> {
        L::all()
            .into_iter()
            .filter(|a| how(a))
            .map(|a| a.name)
            .collect()
    };
    let by_moves = |a: &Algorithm| matches!(a.analyse, Analyse::Moves { .. });
    let Some(kernel) = L::find(&job.algorithm).filter(|a| by_moves(a)) else {
        return Err(SolveError::bad(format!(
            "option 'analyse' is for {} and {}, not '{}'",
            of(&by_moves).join(", "),
            of(&|a| a.analyse == Analyse::Own).join(", "),
            job.algorithm
        )));
    };
    // With `depth`, every move's estimate: for the kernels that read `depth`.
    if job.options.contains_key(DEPTH) && !kernel.reads(DEPTH) {
        return Err(SolveError::bad(format!(
            "option 'analyse=all' with 'depth' is for {} (every move's estimate)",
            of(&|a| by_moves(a) && a.reads(DEPTH)).join(", ")
        )));
    }
    if let Some(key) = REFUSED.iter().find(|k| job.options.contains_key(**k)) {
        return Err(SolveError::bad(format!(
            "option 'analyse=all' cannot be combined with '{key}' (it asks every move's value)"
        )));
    }
    let mut moves = Vec::new();
    game.legal_moves(&root, &mut moves);
    let shares = moves.len().max(1) as u64;
    let mut child_res = *res;
    if kernel.analyse == (Analyse::Moves { own_table: true }) {
        match stripped
            .options
            .get("memory_mb")
            .map(|m| m.trim().parse::<u64>())
        {
            Some(Ok(m)) => {
                let each = (m.min(res.memory_mb) / shares).max(1);
                stripped
                    .options
                    .insert("memory_mb".into(), each.to_string());
            }
            // Malformed: the child's own check names it.
            Some(Err(_)) => {}
            None => {
                let budget = res.memory_mb.min(engine::DEFAULT_TABLE_MB);
                child_res.memory_mb = (budget / shares).max(1);
            }
        }
    }
    let mut children = Vec::with_capacity(moves.len());
    // The children's jobs are the job at the child positions: built without a copy of the
    // job's own position each (a tree's position is the whole tree).
    stripped.position = String::new();
    for &m in &moves {
        let mut state = root.clone();
        game.apply(&mut state, m);
        let mut child = stripped.clone();
        child.position = game.format_position(&state);
        let negate = game.side(&state) != game.side(&root);
        let prepared = plain(&child, game.clone(), state, &child_res)?;
        children.push(Child {
            mv: game.format_move(&root, m),
            negate,
            job: prepared,
        });
    }
    let index = children
        .iter()
        .enumerate()
        .map(|(i, c)| (c.mv.clone(), i))
        .collect();
    Ok(Box::new(AnalysisJob {
        job: job.clone(),
        game,
        root,
        children,
        index,
    }))
}

/// The plain exact job of the position after one root move.
struct Child {
    mv: String,
    negate: bool,
    job: Box<dyn PreparedJob>,
}

/// A prepared analysis job.
struct AnalysisJob<G: Exact> {
    job: JobSpec,
    game: G,
    root: G::State,
    children: Vec<Child>,
    /// Each child by its move: a task finds its child in O(1), however many moves there are.
    index: std::collections::HashMap<String, usize>,
}

impl<G: Exact> AnalysisJob<G> {
    fn show(&self, v: i32) -> serde_json::Value {
        self.game.value_to_json(&self.root, v)
    }

    /// The child of a move task and the task inside it.
    fn unwrap<'a>(&self, task: &'a TaskKind) -> Result<(&dyn PreparedJob, &'a TaskKind), String> {
        match task {
            TaskKind::Move { mv, task } => match self.child(mv) {
                Some(child) if !matches!(**task, TaskKind::Move { .. }) => Ok((child, task)),
                Some(_) => Err("a move task inside a move task".into()),
                None => Err(format!("'{}' is not a legal root move", super::clip(mv))),
            },
            _ => Err("an analysis job runs move tasks only".into()),
        }
    }
}

impl<G: Exact> PreparedJob for AnalysisJob<G> {
    fn job(&self) -> &JobSpec {
        &self.job
    }

    fn plan_shape(&self) -> PlanShape {
        PlanShape::Moves(
            self.children
                .iter()
                .map(|c| MovePlan {
                    mv: c.mv.clone(),
                    shape: c.job.plan_shape(),
                    negate: c.negate,
                })
                .collect(),
        )
    }

    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError> {
        let (child, inner) = self.unwrap(task).map_err(SolveError::Internal)?;
        child.run(inner, ctl)
    }

    fn show_value(&self, raw: i32) -> serde_json::Value {
        self.show(raw)
    }

    fn child(&self, mv: &str) -> Option<&dyn PreparedJob> {
        self.index.get(mv).map(|&i| self.children[i].job.as_ref())
    }

    fn check_output(&self, task: &TaskKind, out: &TaskOutput) -> Result<(), String> {
        let (child, inner) = self.unwrap(task)?;
        child.check_output(inner, out)
    }

    fn resume_task(&self, task: &TaskKind, progress: &serde_json::Value) -> Option<TaskKind> {
        let (child, inner) = self.unwrap(task).ok()?;
        let TaskKind::Move { mv, .. } = task else {
            return None;
        };
        child.resume_task(inner, progress).map(|t| TaskKind::Move {
            mv: mv.clone(),
            task: Box::new(t),
        })
    }

    fn finish_moves(&self, moves: &[(String, RawBounds, TaskOutput)]) -> TaskOutput {
        let (lo, hi) = self.game.value_bounds(&self.root);
        let mut out = TaskOutput::default();
        if moves.is_empty() {
            // A finished game: its value, no move.
            let v = self.game.terminal_value(&self.root);
            out.value = self.show(v);
            out.raw = Some(RawBounds { lower: v, upper: v });
            out.extra.moves = Some(Box::default());
            out.extra.insert(
                "bounds".into(),
                serde_json::json!([self.show(v), self.show(v)]),
            );
            return out;
        }
        let mut scores = BTreeMap::new();
        // (bounds, index) of the best move so far: highest lower bound, then upper bound.
        let mut best: Option<(RawBounds, usize)> = None;
        let mut root = RawBounds {
            lower: lo,
            upper: lo,
        };
        for (i, (mv, b, child)) in moves.iter().enumerate() {
            // The game's bounds hold for every move; a move with nothing proved has them.
            let b = RawBounds {
                lower: b.lower.clamp(lo, hi),
                upper: b.upper.clamp(lo, hi),
            };
            let score = if b.is_exact() {
                MoveScore {
                    value: Some(self.show(b.lower)),
                    ..MoveScore::default()
                }
            } else {
                MoveScore {
                    lower: Some(self.show(b.lower)),
                    upper: Some(self.show(b.upper)),
                    ..MoveScore::default()
                }
            };
            scores.insert(mv.clone(), score);
            root.lower = root.lower.max(b.lower);
            root.upper = root.upper.max(b.upper);
            if best.is_none_or(|(x, _)| (b.lower, b.upper) > (x.lower, x.upper)) {
                best = Some((b, i));
            }
            out.nodes += child.nodes;
            out.extra.stopped = out.extra.stopped.or(child.extra.stopped);
        }
        if let Some((_, i)) = best {
            let (mv, _, child) = &moves[i];
            out.best_move = Some(mv.clone());
            let mut pv = vec![serde_json::Value::from(mv.clone())];
            if let Some(serde_json::Value::Array(line)) = child.extra.get("pv") {
                pv.extend(line.iter().cloned());
            }
            out.extra.insert("pv".into(), pv.into());
        }
        out.value = if root.is_exact() {
            self.show(root.lower)
        } else {
            serde_json::Value::Null
        };
        out.raw = Some(root);
        out.extra.insert(
            "bounds".into(),
            serde_json::json!([self.show(root.lower), self.show(root.upper)]),
        );
        out.extra.moves = Some(Box::new(scores));
        out
    }
}

/// For MCTS's `analyse=all`: the score of each root move from the visits and summed rewards
/// (of the side to move at the root) MCTS keeps, the mean reward shown by `show`.
pub fn mcts_scores(
    moves: &[String],
    visits: &[u64],
    rewards: &[f64],
    show: impl Fn(f64) -> serde_json::Value,
) -> BTreeMap<String, MoveScore> {
    moves
        .iter()
        .zip(visits.iter().zip(rewards))
        .map(|(mv, (&n, &r))| {
            let score = MoveScore {
                visits: Some(n),
                value: (n > 0).then(|| show(r / n as f64)),
                ..MoveScore::default()
            };
            (mv.clone(), score)
        })
        .collect()
}
