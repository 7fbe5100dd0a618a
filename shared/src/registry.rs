//! The one place where a game name meets a kernel name.
//!
//! [`prepare`] reads a [`JobSpec`]: it builds the game from its name and parameters, parses the
//! position, checks the algorithm and every option, and returns a type-erased [`PreparedJob`].
//! Everything a user can get wrong is found here, before anything is stored or run, and comes
//! back as [`SolveError::BadInput`] with one line naming the offending input.
//!
//! A prepared job tells the planner how it may be split ([`PlanShape`]) and runs single tasks.
//! Adding a game touches `games/` and one line of the [`catalogue`]; adding a kernel touches
//! `search/`, its file under `kernels/` and one line of the [`kernels`] list.

use crate::games::Exact;
use crate::model::single::SinglePlayer;
use crate::model::{ChanceZeroSum, Game, OutOfTurn, Picture, Stochastic, VectorEval};
use crate::search::eval::{Evaluated, Evaluator};
use crate::wire::JobSpec;
use kernel::{Prepared, Shape};

pub mod analysis;
pub mod catalogue;
pub mod chance;
pub mod check;
pub mod family;
pub mod joblevel;
pub mod kernel;
pub mod kernels;
pub mod mcts;
#[cfg(feature = "modules")]
pub mod module;
pub mod multi;
pub mod pn;
pub mod proof;
pub mod retro;
pub mod single;
pub mod spec;
#[cfg(test)]
mod tests;

pub use crate::model::settings::Opts;
pub use crate::plan::{PlanShape, PreparedJob, SolveError};
pub use catalogue::GAMES;
pub use kernels::{KernelList, Kernels, ALGORITHMS};
pub use spec::{Kind, Spec};

/// A declared setting of a job: an option, or a parameter of the game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Declared {
    /// A game parameter (`game_params`), else an option (`options`).
    pub param: bool,
    /// Its name, kind, bounds, default and help.
    pub spec: Spec,
}

/// The settings a job of `game` and `algorithm` may give, from the families' tables: the
/// options that apply, then the game's parameters. Empty when the pair does not go together.
/// (`tree` jobs: the settings of the family its kernels imply; for `minimax` and `alphabeta`
/// that of a max/min tree.) Numeric ones have bounds ([`Spec::edges`]); some bounds depend on
/// another setting (`tasks` at most `trees`, `lower` below `upper`), as their help says.
pub fn option_specs(game: &str, algorithm: &str) -> Vec<Declared> {
    option_specs_in::<Kernels>(game, algorithm)
}

/// [`option_specs`] with the kernels of the list `L`.
pub fn option_specs_in<L: KernelList>(game: &str, algorithm: &str) -> Vec<Declared> {
    let (Some(info), Some(kernel)) = (catalogue::info(game), L::find(algorithm)) else {
        return Vec::new();
    };
    let options = kernel.options(info);
    if options.is_empty() {
        return Vec::new();
    }
    options
        .into_iter()
        .map(|spec| Declared { param: false, spec })
        .chain(
            info.params
                .iter()
                .map(|&spec| Declared { param: true, spec }),
        )
        .collect()
}

/// What the process that runs a job offers its kernels. A job's `threads` and `memory_mb`
/// never exceed these: larger requests are cut down to them (a job may run on workers of any
/// size), and the defaults of kernels that size themselves stay within them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resources {
    /// Kernel threads one task may use (a worker's `--threads`).
    pub threads: usize,
    /// Memory one task's tables and trees may use, in MiB (a worker's `--memory-mb`).
    pub memory_mb: u64,
}

impl Resources {
    /// The most any process offers: what the coordinator validates against.
    pub const MAX: Resources = Resources {
        threads: 256,
        memory_mb: 1 << 20,
    };
}

impl Default for Resources {
    fn default() -> Self {
        Resources::MAX
    }
}

/// Checks a job completely and prepares it to run, within [`Resources::MAX`].
pub fn prepare(job: &JobSpec) -> Result<Box<dyn PreparedJob>, SolveError> {
    prepare_with(job, &Resources::MAX)
}

/// Checks a job completely and prepares it to run within `res` (a worker's threads and memory).
pub fn prepare_with(job: &JobSpec, res: &Resources) -> Result<Box<dyn PreparedJob>, SolveError> {
    prepare_in::<Kernels>(job, res)
}

/// [`prepare_with`] with the kernels of the list `L` (the catalogue's, or a longer one).
pub fn prepare_in<L: KernelList>(
    job: &JobSpec,
    res: &Resources,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let res = Resources {
        threads: res.threads.clamp(1, Resources::MAX.threads),
        memory_mb: res.memory_mb.clamp(1, Resources::MAX.memory_mb),
    };
    if L::find(&job.algorithm).is_none() {
        let known: Vec<&str> = L::all().iter().map(|a| a.name).collect();
        return Err(SolveError::bad(format!(
            "unknown algorithm '{}' (known: {})",
            job.algorithm,
            known.join(", ")
        )));
    }
    if job.limits.time_ms == Some(0) {
        return Err(SolveError::bad("time limit must be positive"));
    }
    if job.limits.time_ms.is_some_and(|t| t > spec::MAX_TIME_MS) {
        return Err(SolveError::bad(format!(
            "time limit must be at most {} ms (a year)",
            spec::MAX_TIME_MS
        )));
    }
    if job.limits.node_limit == Some(0) {
        return Err(SolveError::bad("node limit must be positive"));
    }
    let max_position = if job.game == "tree" {
        spec::MAX_TREE_BYTES
    } else {
        spec::MAX_POSITION_BYTES
    };
    if job.position.len() > max_position {
        return Err(SolveError::bad(format!(
            "position: {} bytes, more than the {} bytes a {} position may have",
            job.position.len(),
            max_position,
            if job.game == "tree" { "tree" } else { "game's" }
        )));
    }
    build_game::<L>(job, &res)
}

/// Builds the game named by the job and hands it to the kernel family that fits it.
fn build_game<L: KernelList>(
    job: &JobSpec,
    res: &Resources,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    // Kernels that need more of a game than the catalogue's visitors offer (retrograde
    // analysis: a game that ranks its positions) prepare the job themselves.
    if let Some(prepared) = L::job(&job.algorithm, job, res) {
        return prepared;
    }
    #[cfg(feature = "modules")]
    if job.game.starts_with(module::PREFIX) {
        return module::prepare::<L>(job, res);
    }
    #[cfg(not(feature = "modules"))]
    if job.game.starts_with("module:") {
        return Err(SolveError::bad(
            "game modules are not in this build (cargo feature `modules`, docs/GAME_MODULES.md)",
        ));
    }
    let params = Opts::new(&job.game_params, "game parameter");
    if !catalogue::feature_games().contains(&job.game.as_str()) {
        // Checks `eval` where no family does (`eval=features` is an error here).
        family::wants_features::<L>(job, false)?;
    }
    match catalogue::visit(&job.game, &params, Prepare::<L>::new(job, res)) {
        Some(prepared) => prepared?,
        None => Err(SolveError::bad(format!(
            "unknown game '{}' (known: {})",
            clip(&job.game),
            GAMES.join(", ")
        ))),
    }
}

/// The catalogue visitor that prepares a job: each capability goes to the hook of the job's
/// kernel in the list `L`.
struct Prepare<'a, L> {
    job: &'a JobSpec,
    res: &'a Resources,
    list: std::marker::PhantomData<L>,
}

impl<'a, L: KernelList> Prepare<'a, L> {
    fn new(job: &'a JobSpec, res: &'a Resources) -> Self {
        Prepare {
            job,
            res,
            list: std::marker::PhantomData,
        }
    }

    fn root<G: Game>(&self, game: &G) -> Result<G::State, SolveError> {
        game.parse_position(&self.job.position)
            .map_err(|e| SolveError::bad(format!("position: {e}")))
    }

    /// A hook's answer, or the error naming the kernels of `shape`.
    fn served(&self, prepared: Option<Prepared>, shape: Shape) -> Prepared {
        prepared.unwrap_or_else(|| Err(kernel::does_not_apply::<L>(self.job, shape)))
    }
}

impl<L: KernelList> catalogue::Visitor for Prepare<'_, L> {
    type Output = Prepared;
    fn zero_sum<G: Exact + Picture>(self, game: G) -> Prepared {
        family::zero_sum::<G, L>(self.job, game, self.res)
    }
    fn zero_sum_features<G: Exact + Picture, E: Evaluator<G>>(
        self,
        game: G,
        features: fn(G) -> Evaluated<G, E>,
        by_default: bool,
    ) -> Prepared {
        family::zero_sum_or_features::<G, E, L>(self.job, game, by_default, features, self.res)
    }
    fn chance<G: ChanceZeroSum + Picture>(self, game: G) -> Prepared {
        let root = self.root(&game)?;
        let alg = &self.job.algorithm;
        self.served(
            L::chance(alg, self.job, game, root, true, false, self.res),
            Shape::Chance,
        )
    }
    fn stochastic<G: ChanceZeroSum + Picture>(self, game: G) -> Prepared {
        let root = self.root(&game)?;
        let alg = &self.job.algorithm;
        self.served(
            L::stochastic(alg, self.job, game, root, self.res),
            Shape::Chance,
        )
    }
    fn single<G: SinglePlayer + Picture>(self, game: G) -> Prepared {
        let alg = &self.job.algorithm;
        self.served(L::single(alg, self.job, game, self.res), Shape::Single)
    }
    fn multi<G: Stochastic + VectorEval + OutOfTurn + Picture>(self, game: G) -> Prepared {
        let root = self.root(&game)?;
        let alg = &self.job.algorithm;
        self.served(L::multi(alg, self.job, game, root), Shape::Multi)
    }
    fn tree(self) -> Prepared {
        family::tree::<L>(self.job, self.res)
    }
}

/// The error of a search that ended without a result: the limit that stopped it, if any.
fn stopped(ctl: &crate::search::Control) -> SolveError {
    match ctl.should_stop() {
        Some(r) => SolveError::Internal(format!("stopped before a result ({})", r.as_str())),
        None => SolveError::Internal("stopped".into()),
    }
}

/// The `skip` of the families that search to a `depth`: explicit trees have no evaluator, so
/// `depth` does not apply to them.
fn skip_depth_on_trees(game: &catalogue::Info) -> &'static [&'static str] {
    match game.family {
        catalogue::Family::Tree => &["depth"],
        _ => &[],
    }
}

/// Checks a job's `depth` against its game, for the families without a table (chance,
/// multi-player): a game without an evaluator is searched to the end and takes no `depth`; a
/// game with one and no `depth` deepens iteratively, which needs a time or node limit to end.
/// Whether the job deepens.
fn check_depth(job: &JobSpec, evaluates: bool, depth: Option<u32>) -> Result<bool, SolveError> {
    if !evaluates && depth.is_some() {
        return Err(SolveError::bad(format!(
            "option 'depth': game '{}' has no evaluator, it is searched to the end",
            job.game
        )));
    }
    let deepen = evaluates && depth.is_none();
    if deepen && job.limits.time_ms.is_none() && job.limits.node_limit.is_none() {
        return Err(SolveError::bad(format!(
            "game '{}' needs option 'depth' or a time or node limit (iterative deepening)",
            job.game
        )));
    }
    Ok(deepen)
}

/// The error of a task other than the whole job given to a job of `family` (its jobs are not
/// split).
fn whole_only(task: &crate::wire::TaskKind, family: &str) -> Result<(), SolveError> {
    match task {
        crate::wire::TaskKind::Whole => Ok(()),
        _ => Err(SolveError::Internal(format!(
            "only whole tasks apply to {family} jobs"
        ))),
    }
}

/// Iterative deepening of the families without a table: `search` to depths 1, 2, ... up to
/// `max_depth`, until a limit stops an iteration (`search` gives `None`) or `last` (given the
/// previous outcome and the new one) says no deeper search is needed; each finished iteration is
/// reported as progress. The deepest finished outcome, its depth, and the nodes of all the
/// iterations (`nodes` of each); the [`stopped`] error when none finished.
fn deepen<O>(
    max_depth: u32,
    ctl: &crate::search::Control,
    mut search: impl FnMut(u32) -> Option<O>,
    nodes: impl Fn(&O) -> u64,
    last: impl Fn(Option<&O>, &O) -> bool,
) -> Result<(O, u32, u64), SolveError> {
    let mut deepest: Option<(O, u32)> = None;
    let mut total = 0u64;
    for d in 1..=max_depth {
        let Some(o) = search(d) else {
            break;
        };
        total += nodes(&o);
        let done = last(deepest.as_ref().map(|(p, _)| p), &o);
        deepest = Some((o, d));
        if ctl.wants_progress() {
            ctl.report(serde_json::json!({ "depth": d, "nodes": total }));
        }
        if done {
            break;
        }
    }
    let (o, d) = deepest.ok_or_else(|| stopped(ctl))?;
    Ok((o, d, total))
}

/// At most 40 characters of a user's text, control characters escaped, for error messages.
fn clip(text: &str) -> String {
    crate::model::excerpt(text)
}

/// Every family's table, titled with its kernels, in catalogue order, then the games'
/// parameters: the README's "Limits of a job", `--help` and `/openapi.json`.
pub fn families() -> Vec<(String, Vec<Spec>)> {
    // The games' numeric parameters, zero-sum games first (see `Family::order`), each once.
    let mut entries = catalogue::ENTRIES.to_vec();
    entries.sort_by_key(|e| e.family.order());
    let mut params: Vec<Spec> = Vec::new();
    for p in entries.iter().flat_map(|e| e.params) {
        if p.is_numeric() && !params.contains(p) {
            params.push(*p);
        }
    }
    let mut out: Vec<(String, Vec<Spec>)> = kernel::groups::<Kernels>()
        .into_iter()
        .map(|(group, names)| {
            let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            let title = format!("{} ({})", group.title, names.join(", "));
            (title, group.options.to_vec())
        })
        .collect();
    out.push(("Game parameters".into(), params));
    out
}

/// Parses a `target` or `guess` text on the game's internal scale, refusing values that no game
/// reaches (see [`family::MAX_INTERNAL_TARGET`]).
pub fn parse_internal<G: crate::model::ZeroSum>(
    game: &G,
    root: &G::State,
    key: &str,
    text: &str,
) -> Result<i32, SolveError> {
    let v = game
        .parse_target(root, text)
        .map_err(|e| SolveError::bad(format!("option {key}: {e}")))?;
    if v.unsigned_abs() > family::MAX_INTERNAL_TARGET as u32 {
        return Err(SolveError::bad(format!(
            "option {key}: '{}' is out of range for this game",
            text.trim()
        )));
    }
    Ok(v)
}
