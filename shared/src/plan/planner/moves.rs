//! Moves plans ([`PlanShape::Moves`], analysis jobs): one sub-planner per root move.
//!
//! Each root move's sub-planner is the ordinary planner of the position after the move (a
//! `Probes` or `Single` plan on that position's scale); its tasks go out wrapped in
//! [`TaskKind::Move`] and its results come back to it unwrapped. The sub-plans share the job's
//! parallelism k: each open move gets k / m slots (m open moves, the remainder to the first in
//! turn, at least one), tasks are issued while fewer than k are in flight, and the turn rotates
//! with every result so that with k < m every move progresses (a limit then leaves every move
//! with bounds). Like every plan, it is a function of the results fed in order (restorable).

use super::Planner;
use crate::plan::job::{MovePlan, PlanShape, PreparedJob};
use crate::wire::{RawBounds, TaskKind, TaskOutput};

/// The sub-planner of one root move.
#[derive(Clone, Debug)]
pub(super) struct Child {
    mv: String,
    negate: bool,
    planner: Planner,
}

impl Child {
    pub(super) fn new(plan: &MovePlan) -> Self {
        Child {
            mv: plan.mv.clone(),
            negate: plan.negate,
            planner: Planner::new(plan.shape.clone(), 1),
        }
    }

    /// What this sub-plan has proved, from the root's point of view (internal scale): its
    /// bounds for a probe plan, the exact value of a finished single task, else nothing known.
    fn root_bounds(&self) -> RawBounds {
        let own = match self.planner.shape {
            PlanShape::Probes { .. } => self.planner.bounds,
            _ => self
                .planner
                .outputs
                .last()
                .and_then(|o| o.raw)
                .unwrap_or(RawBounds {
                    lower: i32::MIN,
                    upper: i32::MAX,
                }),
        };
        if self.negate {
            RawBounds {
                lower: own.upper.saturating_neg(),
                upper: own.lower.saturating_neg(),
            }
        } else {
            own
        }
    }
}

/// Wraps a sub-plan's task as the task of root move `mv`.
fn wrap(mv: &str, task: TaskKind) -> TaskKind {
    TaskKind::Move {
        mv: mv.to_string(),
        task: Box::new(task),
    }
}

impl Planner {
    /// The sub-planner of `task`'s move and the unwrapped task.
    fn child_of<'a>(&mut self, task: &'a TaskKind) -> Option<(&mut Planner, &'a TaskKind)> {
        let TaskKind::Move { mv, task } = task else {
            return None;
        };
        let child = self.children.iter_mut().find(|c| &c.mv == mv)?;
        Some((&mut child.planner, task))
    }

    /// Records a wrapped task as issued (restore).
    pub(super) fn mark_move_issued(&mut self, task: &TaskKind) {
        if let Some((child, inner)) = self.child_of(task) {
            child.mark_issued(inner.clone());
        }
    }

    /// Feeds a wrapped task's output to its sub-planner.
    pub(super) fn on_move_result(&mut self, task: &TaskKind, output: TaskOutput) {
        if let Some((child, inner)) = self.child_of(task) {
            child.on_result(inner, output);
        }
    }

    /// Drops a wrapped task from its sub-planner.
    pub(super) fn forget_move(&mut self, task: &TaskKind) {
        if let Some((child, inner)) = self.child_of(task) {
            child.forget(inner);
        }
    }

    /// Whether every move's sub-plan is done.
    pub(super) fn moves_done(&self) -> bool {
        self.children.iter().all(|c| c.planner.is_done())
    }

    /// Results received over all moves.
    fn move_results(&self) -> usize {
        self.children.iter().map(|c| c.planner.outputs.len()).sum()
    }

    /// New wrapped tasks, within the job's parallelism (see the module doc).
    pub(super) fn next_move_tasks(&mut self) -> Vec<TaskKind> {
        let open: Vec<usize> = (0..self.children.len())
            .filter(|&i| !self.children[i].planner.is_done())
            .collect();
        let mut out = Vec::new();
        if open.is_empty() {
            return out;
        }
        let (k, m) = (self.parallelism, open.len());
        let mut room = k.saturating_sub(self.pending.len());
        let start = self.move_results() % m;
        for j in 0..m {
            if room == 0 {
                break;
            }
            let child = &mut self.children[open[(start + j) % m]];
            let share = (k / m + usize::from(j < k % m)).max(1);
            let cap = share.min(child.planner.pending.len() + room);
            child.planner.set_parallelism(cap);
            let tasks = child.planner.next_tasks();
            room = room.saturating_sub(tasks.len());
            out.extend(tasks.into_iter().map(|t| wrap(&child.mv, t)));
        }
        out
    }

    /// Wrapped tasks whose answer no longer matters: obsolete in their sub-plan, or of a move
    /// whose sub-plan is done.
    pub(super) fn obsolete_moves(&self) -> Vec<TaskKind> {
        let mut out = Vec::new();
        for c in &self.children {
            let gone = if c.planner.is_done() {
                c.planner.pending.clone()
            } else {
                c.planner.obsolete()
            };
            out.extend(gone.into_iter().map(|t| wrap(&c.mv, t)));
        }
        out
    }

    /// Whether a limit-stopped wrapped task ends its move's sub-plan with what it knows: always
    /// for a pending one (a single-task move then has no bounds but the game's).
    pub(super) fn move_ends_on_stop(&self, task: &TaskKind) -> bool {
        let TaskKind::Move { mv, task } = task else {
            return false;
        };
        self.children
            .iter()
            .any(|c| &c.mv == mv && c.planner.pending.contains(task))
    }

    /// Progress: moves done, results in, and each move's bounds from the root's view.
    pub(super) fn move_progress(&self, job: &dyn PreparedJob) -> serde_json::Value {
        let bounds: serde_json::Map<String, serde_json::Value> = self
            .children
            .iter()
            .map(|c| {
                let b = c.root_bounds();
                let show = |v: i32| {
                    if v == i32::MIN || v == i32::MAX {
                        serde_json::Value::Null
                    } else {
                        job.show_value(v)
                    }
                };
                (
                    c.mv.clone(),
                    serde_json::json!([show(b.lower), show(b.upper)]),
                )
            })
            .collect();
        serde_json::json!({
            "moves_done": self.children.iter().filter(|c| c.planner.is_done()).count(),
            "moves": self.children.len(),
            "tasks_done": self.move_results(),
            "bounds": bounds,
        })
    }

    /// The final output: each move's own final output and root-view bounds, merged by the job.
    pub(super) fn finish_moves(&self, job: &dyn PreparedJob) -> TaskOutput {
        let moves: Vec<(String, RawBounds, TaskOutput)> = self
            .children
            .iter()
            .map(|c| {
                let out = match job.child(&c.mv) {
                    Some(child) if c.planner.is_done() => c.planner.finish(child),
                    _ => TaskOutput::default(),
                };
                (c.mv.clone(), c.root_bounds(), out)
            })
            .collect();
        job.finish_moves(&moves)
    }
}
