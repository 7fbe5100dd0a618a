//! The one place where a game name meets a kernel name.
//!
//! [`prepare`] reads a [`JobSpec`]: it builds the game from its name and parameters, parses the
//! position, checks the algorithm and every option, and returns a type-erased [`PreparedJob`].
//! Everything a user can get wrong is found here, before anything is stored or run, and comes
//! back as [`SolveError::BadInput`] with one line naming the offending input.
//!
//! A prepared job tells the planner how it may be split ([`PlanShape`]) and runs single tasks.
//! Adding a game touches `games/` and one line of the [`catalogue`]; adding a kernel touches
//! `search/` and one arm in the family that fits its capabilities (e.g. [`family::zero_sum`]).

use crate::games::Exact;
use crate::model::single::SinglePlayer;
use crate::model::{ChanceZeroSum, Game, OutOfTurn, Picture, Stochastic, VectorEval};
use crate::search::eval::{Evaluated, Evaluator};
use crate::wire::JobSpec;

pub mod analysis;
pub mod catalogue;
pub mod chance;
pub mod check;
pub mod family;
pub mod joblevel;
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
pub use spec::{Kind, Spec};

/// Algorithm names a job may give.
pub const ALGORITHMS: &[&str] = &[
    "minimax",
    "alphabeta",
    "pns",
    "dfpn",
    "pn2",
    "pdspn",
    "jlpns",
    "expectimax",
    "star1",
    "star2",
    "star25",
    "maxn",
    "paranoid",
    "brs",
    "mcts",
    "nmcs",
    "nrpa",
    "retrograde",
];

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
    let pick = |table: &[Spec], skip: &[&str]| -> Vec<Spec> {
        table
            .iter()
            .filter(|s| s.applies_to(algorithm) && !skip.contains(&s.name))
            .copied()
            .collect()
    };
    let chance_kernel = ["expectimax", "star1", "star2", "star25"].contains(&algorithm);
    let Some(info) = catalogue::info(game) else {
        return Vec::new();
    };
    use catalogue::Family as F;
    let options: Vec<Spec> = match (info.family, algorithm) {
        (F::ZeroSum { book, .. }, "minimax" | "alphabeta") => {
            pick(family::OPTIONS, if book { &[] } else { &["book"] })
        }
        (F::Tree, "minimax" | "alphabeta") => pick(family::OPTIONS, &["book", "weak", "eval"]),
        (F::ZeroSum { .. } | F::Tree, "pns" | "dfpn" | "pn2" | "pdspn") => pick(pn::OPTIONS, &[]),
        (F::ZeroSum { .. } | F::Tree, "jlpns") => pick(joblevel::OPTIONS, &[]),
        (F::ZeroSum { .. } | F::Stochastic, "mcts") => pick(mcts::OPTIONS, &["lower", "upper"]),
        (F::Chance | F::Tree, "mcts") => pick(mcts::OPTIONS, &[]),
        (F::Chance | F::Stochastic, _) if chance_kernel => pick(chance::OPTIONS, &[]),
        (F::Tree, _) if chance_kernel => pick(chance::OPTIONS, &["depth"]),
        (F::Single, "nmcs" | "nrpa") => pick(single::OPTIONS, &[]),
        (F::Multi, "maxn" | "paranoid" | "brs") => pick(multi::OPTIONS, &[]),
        (F::Tree, "maxn" | "paranoid") => pick(multi::OPTIONS, &["depth"]),
        (_, "retrograde") if game == "awari" => pick(retro::OPTIONS, &[]),
        _ => return Vec::new(),
    };
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
    let res = Resources {
        threads: res.threads.clamp(1, Resources::MAX.threads),
        memory_mb: res.memory_mb.clamp(1, Resources::MAX.memory_mb),
    };
    if !ALGORITHMS.contains(&job.algorithm.as_str()) {
        return Err(SolveError::bad(format!(
            "unknown algorithm '{}' (known: {})",
            job.algorithm,
            ALGORITHMS.join(", ")
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
    build_game(job, &res)
}

/// Builds the game named by the job and hands it to the kernel family that fits it.
fn build_game(job: &JobSpec, res: &Resources) -> Result<Box<dyn PreparedJob>, SolveError> {
    if job.algorithm == "retrograde" {
        // Retrograde analysis needs a game that ranks its positions (`model::Retrograde`),
        // which the catalogue's visitors do not offer.
        return retro::prepare(job, res);
    }
    #[cfg(feature = "modules")]
    if job.game.starts_with(module::PREFIX) {
        return module::prepare(job, res);
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
        family::wants_features(job, false)?;
    }
    match catalogue::visit(&job.game, &params, Prepare { job, res }) {
        Some(prepared) => prepared?,
        None => Err(SolveError::bad(format!(
            "unknown game '{}' (known: {})",
            clip(&job.game),
            GAMES.join(", ")
        ))),
    }
}

/// The catalogue visitor that prepares a job: each capability goes to its kernel family.
struct Prepare<'a> {
    job: &'a JobSpec,
    res: &'a Resources,
}

impl Prepare<'_> {
    fn root<G: Game>(&self, game: &G) -> Result<G::State, SolveError> {
        game.parse_position(&self.job.position)
            .map_err(|e| SolveError::bad(format!("position: {e}")))
    }
}

type Prepared = Result<Box<dyn PreparedJob>, SolveError>;

impl catalogue::Visitor for Prepare<'_> {
    type Output = Prepared;
    fn zero_sum<G: Exact + Picture>(self, game: G) -> Prepared {
        family::zero_sum(self.job, game, self.res)
    }
    fn zero_sum_features<G: Exact + Picture, E: Evaluator<G>>(
        self,
        game: G,
        features: fn(G) -> Evaluated<G, E>,
        by_default: bool,
    ) -> Prepared {
        family::zero_sum_or_features(self.job, game, by_default, features, self.res)
    }
    fn chance<G: ChanceZeroSum + Picture>(self, game: G) -> Prepared {
        let root = self.root(&game)?;
        chance::chance(self.job, game, root, true, false, self.res)
    }
    fn stochastic<G: ChanceZeroSum + Picture>(self, game: G) -> Prepared {
        let root = self.root(&game)?;
        if self.job.algorithm == "mcts" {
            mcts::stochastic(self.job, game, root, self.res)
        } else {
            chance::chance(self.job, game, root, true, false, self.res)
        }
    }
    fn single<G: SinglePlayer + Picture>(self, game: G) -> Prepared {
        single::single(self.job, game, self.res)
    }
    fn multi<G: Stochastic + VectorEval + OutOfTurn + Picture>(self, game: G) -> Prepared {
        let root = self.root(&game)?;
        multi::multi_out_of_turn(self.job, game, root, true)
    }
    fn tree(self) -> Prepared {
        family::tree(self.job, self.res)
    }
}

/// The error of a search that ended without a result: the limit that stopped it, if any.
fn stopped(ctl: &crate::search::Control) -> SolveError {
    match ctl.should_stop() {
        Some(r) => SolveError::Internal(format!("stopped before a result ({})", r.as_str())),
        None => SolveError::Internal("stopped".into()),
    }
}

/// At most 40 characters of a user's text, control characters escaped, for error messages.
fn clip(text: &str) -> String {
    crate::model::excerpt(text)
}

/// Every family's table, titled, in the order of the README.
pub fn families() -> Vec<(&'static str, Vec<Spec>)> {
    // The games' numeric parameters, zero-sum games first (see `Family::order`), each once.
    let mut entries = catalogue::ENTRIES.to_vec();
    entries.sort_by_key(|e| e.family.order());
    let mut params: Vec<Spec> = Vec::new();
    for p in entries.iter().flat_map(|e| e.params) {
        if p.is_numeric() && !params.contains(p) {
            params.push(*p);
        }
    }
    vec![
        (
            "Two-player zero-sum (`minimax`, `alphabeta`)",
            family::OPTIONS.to_vec(),
        ),
        (
            "Proof-number search (`pns`, `dfpn`, `pn2`, `pdspn`)",
            pn::OPTIONS.to_vec(),
        ),
        (
            "Job-level proof-number search (`jlpns`)",
            joblevel::OPTIONS.to_vec(),
        ),
        (
            "Chance (`expectimax`, `star1`, `star2`, `star25`)",
            chance::OPTIONS.to_vec(),
        ),
        (
            "Multi-player (`maxn`, `paranoid`, `brs`)",
            multi::OPTIONS.to_vec(),
        ),
        ("MCTS (`mcts`)", mcts::OPTIONS.to_vec()),
        ("Single-player (`nmcs`, `nrpa`)", single::OPTIONS.to_vec()),
        ("Game parameters", params),
    ]
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
