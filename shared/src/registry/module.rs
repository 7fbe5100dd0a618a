//! Jobs on game modules (`"game": "module:<sha256>"`): the module is the one this process
//! loaded, or the artifact of that hash from the process's artifact source (`module::find`:
//! uploaded through `POST /v1/games`, fetched by workers); the game is built from the job's
//! parameters and offered to the kernel family its declaration fits, like a catalogue game.
//!
//! The prepared job is wrapped so that a module's fault (trap, fuel, memory, an answer outside
//! the ABI, a game longer than its declared ply cap) is the task's error, never its result: the
//! kernel unwinds on the game's "terminal everywhere" answers and [`ModuleJob::run`] reports the
//! fault as [`SolveError::BadInput`] (a module's fault repeats, so retrying would not help).

use super::{KernelList, Prepare, PreparedJob, Resources, SolveError};
use crate::games::entry::Visitor;
use crate::games::module::{self, ModuleGame};
use crate::plan::PlanShape;
use crate::search::Control;
use crate::wire::{JobSpec, RawBounds, TaskKind, TaskOutput};

/// The prefix of a module game's name in a job.
pub const PREFIX: &str = "module:";

/// Prepares a job whose game is `module:<sha256>`.
pub fn prepare<L: KernelList>(
    job: &JobSpec,
    res: &Resources,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let hash = job.game.strip_prefix(PREFIX).unwrap_or_default();
    let Some(loaded) = module::find(hash).map_err(SolveError::bad)? else {
        return Err(SolveError::bad(format!(
            "no game module '{}' here (upload it with POST /v1/games, or load it with \
             --game-module)",
            super::clip(hash)
        )));
    };
    let info = &loaded.info;
    let game = ModuleGame::new(loaded.clone(), &job.game_params).map_err(SolveError::bad)?;
    let inner = if info.zero_sum && !info.chance {
        super::family::wants_features::<L>(job, false)?;
        Prepare::<L>::new(job, res).zero_sum(game.clone())?
    } else if info.players == 1 && !info.chance {
        super::family::wants_features::<L>(job, false)?;
        Prepare::<L>::new(job, res).single(game.clone())?
    } else {
        return Err(SolveError::bad(format!(
            "module game {}: the ABI declares chance and general-sum games, but this host runs \
             only two-player zero-sum and single-player games without chance so far",
            loaded.name
        )));
    };
    if let Some(f) = game.fault() {
        return Err(SolveError::bad(f));
    }
    Ok(Box::new(ModuleJob { inner, game }))
}

/// A prepared job on a module game: the family's job, and the game whose faults it reports.
struct ModuleJob {
    inner: Box<dyn PreparedJob>,
    game: ModuleGame,
}

impl ModuleJob {
    fn checked<T>(&self, r: Result<T, SolveError>) -> Result<T, SolveError> {
        match self.game.fault() {
            Some(f) => Err(SolveError::bad(f)),
            None => r,
        }
    }
}

impl PreparedJob for ModuleJob {
    fn job(&self) -> &JobSpec {
        self.inner.job()
    }
    fn plan_shape(&self) -> PlanShape {
        self.inner.plan_shape()
    }
    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError> {
        if let Some(f) = self.game.fault() {
            return Err(SolveError::bad(f));
        }
        let r = self.inner.run(task, ctl);
        self.checked(r)
    }
    fn show_value(&self, raw: i32) -> serde_json::Value {
        self.inner.show_value(raw)
    }
    fn finish_probes(&self, bounds: RawBounds, probes: &[TaskOutput]) -> TaskOutput {
        self.inner.finish_probes(bounds, probes)
    }
    fn merge_runs(&self, runs: &[TaskOutput]) -> TaskOutput {
        self.inner.merge_runs(runs)
    }
    fn child(&self, mv: &str) -> Option<&dyn PreparedJob> {
        self.inner.child(mv)
    }
    fn finish_moves(&self, moves: &[(String, RawBounds, TaskOutput)]) -> TaskOutput {
        self.inner.finish_moves(moves)
    }
    fn check_output(&self, task: &TaskKind, out: &TaskOutput) -> Result<(), String> {
        self.inner.check_output(task, out)
    }
    fn resume_task(&self, task: &TaskKind, progress: &serde_json::Value) -> Option<TaskKind> {
        self.inner.resume_task(task, progress)
    }
    fn run_here(&self, ctl: &Control) -> Option<Result<TaskOutput, SolveError>> {
        let r = self.inner.run_here(ctl)?;
        Some(self.checked(r))
    }
}
