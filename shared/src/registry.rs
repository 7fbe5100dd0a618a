//! The one place where a game name meets a kernel name.
//!
//! [`prepare`] reads a [`JobSpec`]: it builds the game from its name and parameters, parses the
//! position, checks the algorithm and every option, and returns a type-erased [`PreparedJob`].
//! Everything a user can get wrong is found here, before anything is stored or run, and comes
//! back as [`SolveError::BadInput`] with one line naming the offending input.
//!
//! A prepared job tells the planner how it may be split ([`PlanShape`]) and runs single tasks.
//! Adding a game touches `games/` and one arm of [`build_game`]'s match; adding a kernel touches
//! `search/` and one arm in the family that fits its capabilities (e.g. [`family::zero_sum`]).

use crate::model::Game;
use crate::search::Control;
use crate::wire::{JobSpec, RawBounds, Settings, TaskKind, TaskOutput};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::str::FromStr;

pub mod chance;
pub mod check;
pub mod family;
pub mod mcts;
pub mod multi;
pub mod pn;
pub mod single;
pub mod spec;
#[cfg(test)]
mod tests;

pub use spec::{Kind, Spec};

/// Why a job or task could not give a result.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SolveError {
    /// The job is wrong: unknown game or algorithm, illegal position, malformed option,
    /// unsatisfiable limit. CLI exit status 2, HTTP 400. The message is one line.
    #[error("{0}")]
    BadInput(String),
    /// The kernel failed (a bug, or a resource it could not get). HTTP 500; the task is retried.
    #[error("internal error: {0}")]
    Internal(String),
}

impl SolveError {
    /// A bad-input error.
    pub fn bad(msg: impl Into<String>) -> Self {
        SolveError::BadInput(crate::model::one_line(&msg.into()))
    }
}

/// How a job may be split into tasks. The planner (`plan`) turns this into tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanShape {
    /// One [`TaskKind::Whole`] task.
    Single,
    /// The exact value by threshold probes ([`TaskKind::Probe`]) over the closed interval
    /// `[lower, upper]` of internal integer values; the result is assembled by
    /// [`PreparedJob::finish_probes`].
    Probes {
        /// Smallest possible value.
        lower: i32,
        /// Largest possible value.
        upper: i32,
        /// Every possible value is a multiple of this (`ZeroSum::value_step`), so are `lower`
        /// and `upper`; probes and bounds stay on these values.
        step: i32,
        /// A first guess of the value (`guess=V`, or the game's own: Othello, Connect Four): probes start
        /// at "value >= guess" and step outward from it (1, 2, 4, ... steps) on the side the
        /// answers point to, then bisect once the value is bracketed (MTD(f)-like). `None`:
        /// bisection from the middle (Pons' order).
        guess: Option<i32>,
    },
    /// `count` independent [`TaskKind::Run`] tasks whose outputs are combined by
    /// [`PreparedJob::merge_runs`].
    Runs {
        /// Number of runs.
        count: u32,
        /// Seed of run 0; run i uses a seed derived from it.
        base_seed: u64,
    },
    /// Rounds of `width` [`TaskKind::Run`] tasks, `iterations` tasks in all (task `index` is
    /// round `index / width`). The tasks of a round get one input built from the previous
    /// round's outputs (`{"round", "from": the first output's "round_start", "results": [{"sub",
    /// "found"}]}`), so the kernel can carry state from round to round (NRPA's shared top-level
    /// policy). An output with `"final": true` ends the plan. The outputs, in index order, are
    /// combined by [`PreparedJob::merge_runs`].
    Rounds {
        /// Tasks per round.
        width: u32,
        /// Tasks in all.
        iterations: u32,
        /// Seed given to every task.
        seed: u64,
    },
}

/// A job whose game, position, algorithm and options have been checked; ready to run tasks.
pub trait PreparedJob: Send + Sync {
    /// The job as submitted.
    fn job(&self) -> &JobSpec;
    /// How the planner may split it.
    fn plan_shape(&self) -> PlanShape;
    /// Runs one task. `ctl` carries the limits, the stop flag and the progress sink.
    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError>;
    /// An internal integer value of the root (a probe target or bound) as the outside world
    /// sees it (CONTRACTS.md, "Values"); progress reports go through it. Default: the integer.
    fn show_value(&self, raw: i32) -> serde_json::Value {
        raw.into()
    }
    /// For [`PlanShape::Probes`]: the output for the final bounds, given every probe's output
    /// (e.g. the best move comes from the probe that proved the lower bound).
    fn finish_probes(&self, bounds: RawBounds, probes: &[TaskOutput]) -> TaskOutput {
        let _ = probes;
        TaskOutput {
            value: if bounds.is_exact() {
                bounds.lower.into()
            } else {
                serde_json::Value::Null
            },
            raw: Some(bounds),
            ..TaskOutput::default()
        }
    }
    /// For [`PlanShape::Runs`]: combines the outputs of all runs into one.
    fn merge_runs(&self, runs: &[TaskOutput]) -> TaskOutput {
        runs.iter()
            .max_by(|a, b| {
                let (x, y) = (a.value.as_f64(), b.value.as_f64());
                x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
            })
            .cloned()
            .unwrap_or_default()
    }
    /// Checks an output that a worker reported for `task` before the coordinator stores it: the
    /// value's type and range for the game, a best move that is legal at the root, bounds inside
    /// the value range. A worker is trusted to run kernels, not to be right about the game: a
    /// failed check is treated as a failed attempt. Default: accepted.
    fn check_output(&self, task: &TaskKind, out: &TaskOutput) -> Result<(), String> {
        let _ = (task, out);
        Ok(())
    }
    /// For a progress report of `task` that carries a checkpoint: the task (same kind and
    /// index, its input replaced) that continues from that checkpoint exactly like the
    /// uninterrupted task. The coordinator stores it and hands it out when the task is leased
    /// again (a restart or an expired lease). Default: none (the task restarts from scratch).
    fn resume_task(&self, _task: &TaskKind, _progress: &serde_json::Value) -> Option<TaskKind> {
        None
    }
}

/// Game names the registry knows, for error messages and the API.
pub const GAMES: &[&str] = &[
    "tictactoe",
    "mnk",
    "connect4",
    "tree",
    "morpion",
    "samegame",
    "tsptw",
    "weakschur",
    "pig",
    "backgammon",
    "carcassonne",
    "othello",
    "rolit",
];

/// Algorithm names of CONTRACTS.md.
pub const ALGORITHMS: &[&str] = &[
    "minimax",
    "alphabeta",
    "pns",
    "dfpn",
    "pn2",
    "pdspn",
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
];

/// A declared setting of a job: an option, or a parameter of the game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Declared {
    /// A game parameter (`game_params`), else an option (`options`).
    pub param: bool,
    /// Its name, kind, bounds, default and help.
    pub spec: Spec,
}

/// Kernel families of the two-player zero-sum games, by algorithm.
const ZERO_SUM_GAMES: &[&str] = &["tictactoe", "mnk", "connect4", "othello"];
/// Games with chance nodes (the chance family).
const CHANCE_GAMES: &[&str] = &["pig", "backgammon", "carcassonne"];
/// Single-player games.
const SINGLE_GAMES: &[&str] = &["morpion", "samegame", "tsptw", "weakschur"];

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
    let options: Vec<Spec> = match (game, algorithm) {
        (g, "minimax" | "alphabeta") if ZERO_SUM_GAMES.contains(&g) || g == "tree" => {
            let mut skip = vec![];
            if g != "connect4" {
                skip.push("book");
            }
            if g == "tree" {
                skip.extend(["weak", "eval"]);
            }
            pick(family::OPTIONS, &skip)
        }
        (g, "pns" | "dfpn" | "pn2" | "pdspn") if ZERO_SUM_GAMES.contains(&g) || g == "tree" => {
            pick(pn::OPTIONS, &[])
        }
        (g, "mcts") if ZERO_SUM_GAMES.contains(&g) || g == "carcassonne" => {
            pick(mcts::OPTIONS, &["lower", "upper"])
        }
        ("pig" | "backgammon" | "tree", "mcts") => pick(mcts::OPTIONS, &[]),
        (g, _) if CHANCE_GAMES.contains(&g) && chance_kernel => pick(chance::OPTIONS, &[]),
        ("tree", _) if chance_kernel => pick(chance::OPTIONS, &["depth"]),
        (g, "nmcs" | "nrpa") if SINGLE_GAMES.contains(&g) => pick(single::OPTIONS, &[]),
        ("rolit", "maxn" | "paranoid" | "brs") => pick(multi::OPTIONS, &[]),
        ("tree", "maxn" | "paranoid") => pick(multi::OPTIONS, &["depth"]),
        _ => return Vec::new(),
    };
    options
        .into_iter()
        .map(|spec| Declared { param: false, spec })
        .chain(
            spec::params::of(game)
                .into_iter()
                .map(|spec| Declared { param: true, spec }),
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
    let params = Opts::new(&job.game_params, "game parameter");
    use crate::games;
    use spec::params as ps;
    if !family::FEATURE_GAMES.contains(&job.game.as_str()) {
        // Checks `eval` where no arm does (`eval=features` is an error here).
        family::wants_features(job, false)?;
    }
    let prepared = match job.game.as_str() {
        "tictactoe" => {
            let game = games::mnk::Mnk::tictactoe();
            params.finish()?;
            family::zero_sum(job, game, res)?
        }
        "mnk" => {
            let m = params.uint_or(&ps::MNK_M, 3usize)?;
            let n = params.uint_or(&ps::MNK_N, 3usize)?;
            let k = params.uint_or(&ps::MNK_K, 3usize)?;
            params.finish()?;
            let game = games::mnk::Mnk::new(m, n, k).map_err(SolveError::bad)?;
            family::zero_sum(job, game, res)?
        }
        "connect4" => {
            use games::connect4::{word_size, Connect4, Wide, WordSize};
            let width = params.uint_or(&ps::C4_WIDTH, 7u32)?;
            let height = params.uint_or(&ps::C4_HEIGHT, 6u32)?;
            let base = params.uint_or(&ps::C4_BASE, 1u8)?;
            params.finish()?;
            // The smallest bitboard word that holds the board (7 x 6 runs on u64).
            match word_size(width, height, base).map_err(SolveError::bad)? {
                WordSize::U64 => family::zero_sum_or_features(
                    job,
                    Connect4::<u64>::new(width, height, base).map_err(SolveError::bad)?,
                    false,
                    games::connect4_eval::connect4,
                    res,
                )?,
                WordSize::U128 => family::zero_sum_or_features(
                    job,
                    Connect4::<u128>::new(width, height, base).map_err(SolveError::bad)?,
                    false,
                    games::connect4_eval::connect4,
                    res,
                )?,
                WordSize::W256 => family::zero_sum_or_features(
                    job,
                    Connect4::<Wide<4>>::new(width, height, base).map_err(SolveError::bad)?,
                    false,
                    games::connect4_eval::connect4,
                    res,
                )?,
                WordSize::W512 => family::zero_sum_or_features(
                    job,
                    Connect4::<Wide<8>>::new(width, height, base).map_err(SolveError::bad)?,
                    false,
                    games::connect4_eval::connect4,
                    res,
                )?,
            }
        }
        "tree" => {
            params.finish()?;
            family::tree(job, res)?
        }
        "morpion" => {
            let variant = params.raw("variant").unwrap_or("5T");
            let v = games::morpion::Morpion::parse_variant(variant).map_err(SolveError::bad)?;
            let codes = games::morpion::Morpion::parse_codes(params.raw("code").unwrap_or("line"))
                .map_err(SolveError::bad)?;
            params.finish()?;
            single::single(job, games::morpion::Morpion::new(v).with_codes(codes), res)?
        }
        "samegame" => {
            let board = params.uint_or(&ps::SAMEGAME_BOARD, 1usize)?;
            let tabu = params.get_or("tabu", false)?;
            params.finish()?;
            single::single(
                job,
                games::samegame::SameGame::standard(board)
                    .map_err(SolveError::bad)?
                    .with_tabu(tabu),
                res,
            )?
        }
        "tsptw" => {
            let instance = params.raw("instance").ok_or_else(|| {
                SolveError::bad("game parameter 'instance' is required (e.g. instance=rc_201.1)")
            })?;
            let prune = params.get_or("prune", false)?;
            params.finish()?;
            let game = games::tsptw::Tsptw::load(instance.trim()).map_err(SolveError::bad)?;
            single::single(job, game.with_pruning(prune), res)?
        }
        "weakschur" => {
            let k = params.uint_or(&ps::WEAKSCHUR_K, 4usize)?;
            params.finish()?;
            single::single(
                job,
                games::weakschur::WeakSchur::new(k).map_err(SolveError::bad)?,
                res,
            )?
        }
        "pig" => {
            let target = params.uint_or(&ps::PIG_TARGET, 100u16)?;
            let die = params.uint_or(&ps::PIG_DIE, 6u8)?;
            params.finish()?;
            let game = games::pig::Pig::new(target, die).map_err(SolveError::bad)?;
            let root = game
                .parse_position(&job.position)
                .map_err(|e| SolveError::bad(format!("position: {e}")))?;
            chance::chance(job, game, root, true, false, res)?
        }
        "backgammon" => {
            params.finish()?;
            let game = games::backgammon::Backgammon;
            let root = game
                .parse_position(&job.position)
                .map_err(|e| SolveError::bad(format!("position: {e}")))?;
            chance::chance(job, game, root, true, false, res)?
        }
        "carcassonne" => {
            params.finish()?;
            let game = games::carcassonne::Carcassonne::new();
            let root = game
                .parse_position(&job.position)
                .map_err(|e| SolveError::bad(format!("position: {e}")))?;
            if job.algorithm == "mcts" {
                mcts::stochastic(job, game, root, res)?
            } else {
                chance::chance(job, game, root, true, false, res)?
            }
        }
        "othello" => {
            let size = params.uint_or(&ps::OTHELLO_SIZE, 8usize)?;
            params.finish()?;
            let game = games::othello::Othello::new(size).map_err(SolveError::bad)?;
            family::zero_sum_or_features(job, game, true, games::othello_eval::othello, res)?
        }
        "rolit" => {
            let players = params.uint_or(&ps::ROLIT_PLAYERS, 4usize)?;
            let size = params.uint_or(&ps::OTHELLO_SIZE, 8usize)?;
            params.finish()?;
            let game = games::rolit::Rolit::new(players, size).map_err(SolveError::bad)?;
            let root = game
                .parse_position(&job.position)
                .map_err(|e| SolveError::bad(format!("position: {e}")))?;
            multi::multi_out_of_turn(job, game, root, true)?
        }
        other => {
            return Err(SolveError::bad(format!(
                "unknown game '{}' (known: {})",
                clip(other),
                GAMES.join(", ")
            )))
        }
    };
    Ok(prepared)
}

/// Typed access to `KEY=VALUE` settings that remembers which keys were read, so that unknown
/// keys are reported ([`Opts::finish`]) instead of silently ignored.
pub struct Opts<'a> {
    map: &'a Settings,
    what: &'static str,
    used: RefCell<BTreeSet<&'a str>>,
}

impl<'a> Opts<'a> {
    /// Wraps settings; `what` names them in errors ("option", "game parameter").
    pub fn new(map: &'a Settings, what: &'static str) -> Self {
        Opts {
            map,
            what,
            used: RefCell::new(BTreeSet::new()),
        }
    }
    /// The raw text of `key`, if given.
    pub fn raw(&self, key: &str) -> Option<&'a str> {
        let (k, v) = self.map.get_key_value(key)?;
        self.used.borrow_mut().insert(k.as_str());
        Some(v.as_str())
    }
    /// `key` parsed as `T`, if given; a malformed value is a bad-input error naming the key.
    pub fn get<T: FromStr>(&self, key: &str) -> Result<Option<T>, SolveError> {
        match self.raw(key) {
            None => Ok(None),
            Some(text) => text.trim().parse::<T>().map(Some).map_err(|_| {
                SolveError::bad(format!(
                    "{} '{key}={}' is malformed (expected {})",
                    self.what,
                    clip(text),
                    short_type_name::<T>()
                ))
            }),
        }
    }
    /// `key` parsed as `T`, or `default`.
    pub fn get_or<T: FromStr>(&self, key: &str, default: T) -> Result<T, SolveError> {
        Ok(self.get(key)?.unwrap_or(default))
    }
    /// The whole-number setting `spec`, if given, checked against its bounds: a malformed or
    /// out-of-bounds value is a bad-input error naming the key and the bounds.
    pub fn uint<T: TryFrom<u64>>(&self, spec: &Spec) -> Result<Option<T>, SolveError> {
        let Kind::UInt { min, max } = spec.kind else {
            return Err(SolveError::Internal(format!(
                "'{}' is not a whole number",
                spec.name
            )));
        };
        let Some(text) = self.raw(spec.name) else {
            return Ok(None);
        };
        let v: u64 = text.trim().parse().map_err(|_| {
            SolveError::bad(format!(
                "{} '{}={}' is malformed (expected a whole number, {})",
                self.what,
                spec.name,
                clip(text),
                spec.range_text()
            ))
        })?;
        if v < min || v > max {
            return Err(self.out_of_bounds(spec, text));
        }
        T::try_from(v)
            .map(Some)
            .map_err(|_| self.out_of_bounds(spec, text))
    }
    /// The whole-number setting `spec`, or `default`.
    pub fn uint_or<T: TryFrom<u64>>(&self, spec: &Spec, default: T) -> Result<T, SolveError> {
        Ok(self.uint(spec)?.unwrap_or(default))
    }
    /// The number setting `spec`, if given, finite and within its bounds.
    pub fn float(&self, spec: &Spec) -> Result<Option<f64>, SolveError> {
        let Kind::Float { min, max } = spec.kind else {
            return Err(SolveError::Internal(format!(
                "'{}' is not a number",
                spec.name
            )));
        };
        let Some(text) = self.raw(spec.name) else {
            return Ok(None);
        };
        let v: f64 = text.trim().parse().map_err(|_| {
            SolveError::bad(format!(
                "{} '{}={}' is malformed (expected a number, {})",
                self.what,
                spec.name,
                clip(text),
                spec.range_text()
            ))
        })?;
        if !(v.is_finite() && v >= min && v <= max) {
            return Err(self.out_of_bounds(spec, text));
        }
        Ok(Some(v))
    }
    /// The number setting `spec`, or `default`.
    pub fn float_or(&self, spec: &Spec, default: f64) -> Result<f64, SolveError> {
        Ok(self.float(spec)?.unwrap_or(default))
    }
    /// The boolean setting `spec`, or `default`.
    pub fn flag_or(&self, spec: &Spec, default: bool) -> Result<bool, SolveError> {
        self.get_or(spec.name, default)
    }
    /// The text setting `spec`, if given.
    pub fn text(&self, spec: &Spec) -> Option<&'a str> {
        self.raw(spec.name)
    }
    fn out_of_bounds(&self, spec: &Spec, text: &str) -> SolveError {
        SolveError::bad(format!(
            "{} '{}={}' is out of bounds ({}: {})",
            self.what,
            spec.name,
            clip(text.trim()),
            spec.range_text(),
            spec.why
        ))
    }
    /// Marks `key` as known without reading it (handled elsewhere, e.g. by the planner).
    pub fn allow(&self, key: &str) {
        let _ = self.raw(key);
    }
    /// Fails if any setting was never read: it is unknown to this game or algorithm.
    pub fn finish(&self) -> Result<(), SolveError> {
        let used = self.used.borrow();
        let unknown: Vec<String> = self
            .map
            .keys()
            .map(String::as_str)
            .filter(|k| !used.contains(k))
            .map(clip)
            .collect();
        if unknown.is_empty() {
            Ok(())
        } else {
            Err(SolveError::bad(format!(
                "unknown {} '{}' here",
                self.what,
                unknown.join("', '")
            )))
        }
    }
}

/// At most 40 characters of a user's text, control characters escaped, for error messages.
fn clip(text: &str) -> String {
    crate::model::excerpt(text)
}

fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    match full {
        "bool" => "true or false",
        "f64" | "f32" => "a number",
        "i32" | "i64" => "an integer",
        "u8" | "u16" | "u32" | "u64" | "usize" => "a non-negative integer",
        _ => full.rsplit("::").next().unwrap_or(full),
    }
}
