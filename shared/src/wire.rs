//! Types that cross process boundaries as JSON: the job a user submits, the tasks a planner
//! makes of it, what a kernel returns for a task, and the final result (`solve --json`).
//!
//! Serde only: no logic beyond small constructors lives here, so the coordinator, the worker
//! and the CLI agree on the format by construction.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// `KEY=VALUE` settings (game parameters, options). JSON numbers and booleans are accepted
/// and kept as their text, so `{"depth": 5}` and `{"depth": "5"}` mean the same.
pub type Settings = BTreeMap<String, String>;

/// What a setting's value may be in JSON (the schema of [`Settings`] values in the API
/// document); it is kept as its text.
#[cfg(feature = "openapi")]
#[derive(Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum SettingValue {
    /// Any text (`"7"`, `"features"`).
    Text(String),
    /// A number, read as its decimal text.
    Number(f64),
    /// A boolean, read as `true` or `false`.
    Flag(bool),
}

fn scalar_map<'de, D: Deserializer<'de>>(d: D) -> Result<Settings, D::Error> {
    use serde::de::Error;
    let raw: Option<BTreeMap<String, serde_json::Value>> = Option::deserialize(d)?;
    let mut out = Settings::new();
    for (k, v) in raw.unwrap_or_default() {
        let text = match v {
            serde_json::Value::String(s) => s,
            serde_json::Value::Number(n) => n.to_string(),
            serde_json::Value::Bool(b) => b.to_string(),
            other => {
                return Err(D::Error::custom(format!(
                    "setting '{k}' must be a string, number or boolean, not {other}"
                )))
            }
        };
        out.insert(k, text);
    }
    Ok(out)
}

/// Limits of a job (both optional).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Wall-clock budget of the whole job in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<u64>,
    /// Budget of searched nodes (per task for multi-task plans).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_limit: Option<u64>,
}

/// A job as submitted (`POST /v1/jobs`, or built by `gamesolver solve`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// Game name (`connect4`, `tictactoe`, `tree`, ...).
    pub game: String,
    /// Game parameters (`width=7`, ...).
    #[serde(default, deserialize_with = "scalar_map")]
    #[cfg_attr(feature = "openapi", schema(value_type = BTreeMap<String, SettingValue>))]
    pub game_params: Settings,
    /// Position in the game's notation; empty means the start.
    #[serde(default)]
    pub position: String,
    /// Algorithm name (`alphabeta`, `pns`, `mcts`, ...).
    pub algorithm: String,
    /// Algorithm options (`depth`, `target`, `seed`, ...).
    #[serde(default, deserialize_with = "scalar_map")]
    #[cfg_attr(feature = "openapi", schema(value_type = BTreeMap<String, SettingValue>))]
    pub options: Settings,
    /// Time and node limits.
    #[serde(default)]
    pub limits: Limits,
}

impl JobSpec {
    /// A job of `algorithm` on `game` at `position` (the game's notation, empty for the start),
    /// with no parameters, options or limits: the start of the builders below, for callers that
    /// write jobs in code (tests, benchmarks, clients).
    pub fn new(game: &str, position: &str, algorithm: &str) -> Self {
        JobSpec {
            game: game.into(),
            position: position.into(),
            algorithm: algorithm.into(),
            ..JobSpec::default()
        }
    }

    /// The job with these game parameters added (`("width", "7")`, ...).
    pub fn with_params(mut self, items: &[(&str, &str)]) -> Self {
        self.game_params.extend(settings(items));
        self
    }

    /// The job with these algorithm options added (`("depth", "4")`, ...).
    pub fn with_options(mut self, items: &[(&str, &str)]) -> Self {
        self.options.extend(settings(items));
        self
    }
}

/// Key-value pairs as [`Settings`].
pub fn settings(items: &[(&str, &str)]) -> Settings {
    items
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The largest divisor of the job's node budget a [`TaskKind::Leaf`] may carry.
pub const LEAF_MAX_BUDGET_DIV: u32 = 64;

/// What one task of a job asks a kernel to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskKind {
    /// Run the job's algorithm on its position, as the options say.
    Whole,
    /// Decide `value >= target` (a threshold probe); `target` is in the game's internal integer
    /// scale (see `ZeroSum::parse_target`).
    Probe {
        /// The threshold.
        target: i32,
    },
    /// One of several independent runs of a randomised kernel (root-parallel MCTS, NRPA
    /// iterations): run number `index` with its own `seed` and a share of the budget.
    Run {
        /// Number of this run within the job (0-based).
        index: u32,
        /// Seed of this run.
        seed: u64,
        /// Kernel-specific input for this run (a budget share, a policy, ...).
        #[serde(default)]
        input: serde_json::Value,
    },
    /// A task of the exact sub-problem of one root move (analysis jobs, `analyse=all`): `task`
    /// is a task of the position after `mv`, on that position's own value scale.
    Move {
        /// The root move, in the game's notation.
        #[serde(rename = "move")]
        mv: String,
        /// The task of the position after it (never itself a `Move` task).
        #[cfg_attr(feature = "openapi", schema(value_type = Object))]
        task: Box<TaskKind>,
    },
    /// A leaf of a job-level proof-number tree (`jlpns`): run the job's leaf kernel with its node
    /// budget at the position after `path` and decide "value >= target", the value seen from the
    /// side to move at the job's root. Unsolved, the output lists the leaf's children
    /// ([`Extra::children`]) for the coordinator's tree.
    Leaf {
        /// The threshold, on the job root's internal scale.
        target: i32,
        /// The moves from the job's root to the leaf, in the game's notation.
        path: Vec<String>,
        /// The task's node budget is the job's divided by this (2..=[`LEAF_MAX_BUDGET_DIV`];
        /// absent: the whole budget): the planner's short tasks while its tree has fewer free leaves than idle
        /// worker slots.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget_div: Option<u32>,
    },
    /// One round of a retrograde build (algorithm `retrograde`) on the index range
    /// `[start, end)` of database `db`: the worker reads the lower databases, the previous
    /// round's chunks (and the round before, for kernels that skip what did not change), all
    /// named by their SHA-256 as artifacts, runs the round and uploads its chunk.
    Retro {
        /// The database (Awari: stones on the board).
        db: u32,
        /// The round, from 1.
        round: u32,
        /// First index of the range.
        start: u64,
        /// One past the last index.
        end: u64,
        /// Artifact hashes of the database files `0..db`.
        below: Vec<String>,
        /// Artifact hashes of the previous round's chunks, in index order (empty: round 1,
        /// all zeros).
        prev: Vec<String>,
        /// Artifact hashes of the chunks two rounds back (empty before round 3).
        before: Vec<String>,
    },
    /// Seals database `db` of a retrograde build: the chunks of its last round, joined, become
    /// one checksummed database file artifact.
    RetroSeal {
        /// The database.
        db: u32,
        /// Artifact hashes of the last round's chunks, in index order.
        chunks: Vec<String>,
    },
}

impl TaskKind {
    /// The kind's name, as its JSON `kind` field spells it.
    pub fn name(&self) -> &'static str {
        match self {
            TaskKind::Whole => "whole",
            TaskKind::Probe { .. } => "probe",
            TaskKind::Run { .. } => "run",
            TaskKind::Move { .. } => "move",
            TaskKind::Leaf { .. } => "leaf",
            TaskKind::Retro { .. } => "retro",
            TaskKind::RetroSeal { .. } => "retro_seal",
        }
    }

    /// The error of a job handed a task of a kind its plan never makes.
    pub fn does_not_apply(&self) -> String {
        format!("{} tasks do not apply to this job", self.name())
    }
}

/// A task as handed to a worker: the job and what to do with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskSpec {
    /// The job this task belongs to.
    pub job: JobSpec,
    /// What to do.
    pub kind: TaskKind,
}

/// Integer bounds on a two-player value, in the game's internal scale, from the point of
/// view of the side to move at the root: the true value `v` satisfies `lower <= v <= upper`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawBounds {
    /// Lower bound.
    pub lower: i32,
    /// Upper bound.
    pub upper: i32,
}

impl RawBounds {
    /// Whether the value is known exactly.
    pub fn is_exact(&self) -> bool {
        self.lower == self.upper
    }
}

/// Why a kernel or a job stopped before its full answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The time limit passed.
    Time,
    /// The node limit was reached.
    Nodes,
    /// Somebody asked it to stop (job cancelled, worker shutting down).
    Cancelled,
    /// The memory budget of a tree or table was exhausted and could not be freed.
    Memory,
}

impl StopReason {
    /// The name used in results (`"stopped": "time"`).
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Time => "time",
            StopReason::Nodes => "nodes",
            StopReason::Cancelled => "cancelled",
            StopReason::Memory => "memory",
        }
    }
}

impl std::str::FromStr for StopReason {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "time" => Ok(StopReason::Time),
            "nodes" => Ok(StopReason::Nodes),
            "cancelled" => Ok(StopReason::Cancelled),
            "memory" => Ok(StopReason::Memory),
            other => Err(format!("'{other}' is not a stop reason")),
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an output or a result says beside its value. The keys that code reads back (the
/// planner, the checks, the merges) are typed fields; everything else is in [`Extra::display`],
/// shown to users and never read back. As JSON it is one flat object, the typed fields next to
/// the display keys, so the wire and result formats are those of a plain map.
///
/// It reads as its display map (`extra.get("pv")`, `extra["visits"]`); [`Extra::insert`] refuses
/// the typed keys, so no typed value can hide in the map.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Extra {
    /// The limit that stopped the task or the job before its full answer: the value may be
    /// null, the bounds and best move are what was known (docs/API.md, "Plans, progress and
    /// stopped jobs").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<StopReason>,
    /// Rounds plans: this output ends the plan (stopped, or the goal reached).
    #[serde(rename = "final", default, skip_serializing_if = "std::ops::Not::not")]
    pub final_round: bool,
    /// Analysis jobs (`analyse=all`): the score of every legal root move, by its notation.
    /// Boxed, so results stay small.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves: Option<Box<BTreeMap<String, MoveScore>>>,
    /// Rounds plans: what the task carries to the next round. Boxed, so results stay small.
    #[serde(flatten)]
    pub round: Box<RoundReport>,
    /// Zero-sum decisions: whether the threshold ("value >= target") was proved. Absent when
    /// the task decides none, `Some(None)` (JSON null) when a limit stopped it undecided.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub proved: Option<Option<bool>>,
    /// Single-player jobs: the best sequence found, as move texts from the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<Vec<String>>,
    /// Proof-number search: the largest number of tree nodes held at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_nodes: Option<u64>,
    /// MCTS of two-player games: the root player's mean (or proven) reward in `[0, 1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub win_rate: Option<f64>,
    /// MCTS run tasks: the root statistics the merge adds up (`search::mcts::Summary`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_stats: Option<Value>,
    /// NRPA: where the search stands, to resume from (a list of checkpoints for a run task,
    /// one for a rounds result). Opaque to the planner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<Value>,
    /// Why the task or the merge has no full answer, in words (a memory limit, a bad round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Job-level proof-number search (`jlpns`): the children of a leaf its budget did not
    /// solve, in the game's move order, for the coordinator's tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<LeafChild>>,
    /// Retrograde build tasks: the artifact the task made (a round's chunk or a sealed
    /// database) and what the round changed. Boxed, so results stay small.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retro: Option<Box<RetroReport>>,
    /// Algorithm-specific keys for display (`pv`, `bounds`, `sequence`, `visits`, ...).
    #[serde(flatten)]
    pub display: serde_json::Map<String, Value>,
}

/// A position a worker's exact solver proved, for the other workers of the same job: the
/// solver's key of the position and its table entry without the table's own bits, both opaque
/// to the coordinator (`Exact::export_proved`, docs/API.md 5.3a, "Proved positions").
pub type Proved = [u64; 2];

/// One child of an unsolved job-level leaf ([`Extra::children`]). Numbers and bounds are from
/// the point of view of the side to move at the job's root, for the leaf task's target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeafChild {
    /// The move from the leaf, in the game's notation.
    #[serde(rename = "move")]
    pub mv: String,
    /// The child position's hash (transpositions are merged by it).
    pub hash: u64,
    /// Whether the job root's side moves at the child (an OR node of the tree).
    pub or: bool,
    /// Proof number of "value >= target" at the child (1 when the kernel has none).
    pub pn: u32,
    /// Disproof number.
    pub dn: u32,
    /// Proven lower bound of the child's value (root's view), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<i32>,
    /// Proven upper bound of the child's value (root's view), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<i32>,
}

/// What a retrograde task reports ([`TaskKind::Retro`], [`TaskKind::RetroSeal`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetroReport {
    /// The SHA-256 (hex) of the artifact the task uploaded: the round's chunk of entries, or
    /// the sealed database file.
    pub artifact: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Round tasks: entries of the range that differ from the previous round.
    #[serde(default)]
    pub changed: u64,
    /// Round tasks: entries of the range that are decided (non-zero) after the round.
    #[serde(default)]
    pub solved: u64,
    /// Seal tasks: the SHA-256 (hex) of the database's entries (the checksum in its file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Round tasks over a whole database: the rounds it ran to the fixed point (its chunk is
    /// then final and `changed` is 0); 0 for a task of one round.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub rounds: u32,
    /// Seal tasks: the database's positions by their value for the side to move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<Outcomes>,
}

/// Positions of a retrograde database counted by their exact value for the side to move:
/// `won` above 0 (it captures more of the stones on the board than the opponent from there on),
/// `drawn` 0, `lost` below 0. Their sum is the database's size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Outcomes {
    /// Positions worth more than 0 to the side to move.
    pub won: u64,
    /// Positions worth 0.
    pub drawn: u64,
    /// Positions worth less than 0.
    pub lost: u64,
}

impl Outcomes {
    /// The counts of the entries of one database.
    pub fn of(entries: &[i8]) -> Outcomes {
        let mut o = Outcomes::default();
        for &e in entries {
            match e.signum() {
                1 => o.won += 1,
                0 => o.drawn += 1,
                _ => o.lost += 1,
            }
        }
        o
    }

    /// All positions counted.
    pub fn total(&self) -> u64 {
        self.won + self.drawn + self.lost
    }
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// The score of one root move in an analysis result ([`Extra::moves`]), from the point of
/// view of the side to move at the root, on the job's value scale (docs/API.md, "Values").
/// Exact jobs give `value` once the move is proven, else `lower` and `upper` (a limit stopped
/// the job first); MCTS gives `visits` and the mean `value` of the move (absent when unvisited).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MoveScore {
    /// The exact value of the move (exact jobs), or its mean value (MCTS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub value: Option<Value>,
    /// Proven lower bound of a move not finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub lower: Option<Value>,
    /// Proven upper bound of a move not finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub upper: Option<Value>,
    /// MCTS: playouts through the move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visits: Option<u64>,
}

/// What a task of a rounds plan reports for the next round ([`RoundInput`]). Kernel-specific
/// values, opaque to the planner.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundReport {
    /// The start checkpoint of the task's round, carried by the round's first task: the next
    /// round's `from`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_start: Option<Value>,
    /// The task's sub-result for the round's merge ([`RoundResult::sub`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<Value>,
    /// The task's best find ([`RoundResult::found`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<Value>,
}

impl Extra {
    /// The keys of the typed fields, as they appear in JSON.
    pub const TYPED_KEYS: &'static [&'static str] = &[
        "stopped",
        "round_start",
        "sub",
        "found",
        "final",
        "proved",
        "sequence",
        "peak_nodes",
        "win_rate",
        "root_stats",
        "checkpoint",
        "error",
        "moves",
        "children",
        "retro",
    ];

    /// Adds a display key. Panics on a typed key: those are set through their fields.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        assert!(
            !Self::TYPED_KEYS.contains(&key.as_str()),
            "'{key}' is a typed field of Extra, not a display key"
        );
        self.display.insert(key, value)
    }

    /// Everything as one JSON map, typed fields included (what the JSON shows).
    pub fn to_map(&self) -> serde_json::Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => unreachable!("Extra serialises as an object"),
        }
    }
}

/// A present key, null included: `Some(None)` for null (absent keys take the field's default).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<bool>>, D::Error> {
    Option::<bool>::deserialize(d).map(Some)
}

impl From<serde_json::Map<String, Value>> for Extra {
    /// Display keys only. Panics on a typed key, as [`Extra::insert`] does.
    fn from(display: serde_json::Map<String, Value>) -> Self {
        let mut extra = Extra::default();
        for (key, value) in display {
            extra.insert(key, value);
        }
        extra
    }
}

impl std::ops::Deref for Extra {
    type Target = serde_json::Map<String, Value>;
    fn deref(&self) -> &Self::Target {
        &self.display
    }
}

impl std::ops::DerefMut for Extra {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.display
    }
}

/// The input of a task of a rounds plan (`TaskKind::Run::input`), built by the planner from the
/// previous round's outputs: round 0 has no `from` and no results.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundInput {
    /// The round's number (0-based).
    #[serde(default)]
    pub round: u32,
    /// The previous round's start ([`RoundReport::round_start`] of its first task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Value>,
    /// The previous round's results, in task order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<RoundResult>,
}

/// The input of a run task that resumes (`TaskKind::Run::input` of a runs plan): the kernel's
/// checkpoints to continue from. A fresh run's input is null and reads as none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResumeInput {
    /// The checkpoints, opaque to the coordinator (one per thread that made one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<Vec<Value>>,
}

impl ResumeInput {
    /// Reads a run task's input; an input that is neither null nor a resume input is an error.
    pub fn read(input: &Value) -> Result<Self, String> {
        if input.is_null() {
            return Ok(Self::default());
        }
        Self::deserialize(input).map_err(|e| format!("run input: {e}"))
    }
}

/// What the coordinator reads of a kernel's progress report (a heartbeat's `progress`): the
/// checkpoint a stopped task could resume from. Everything else in the report is display.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelProgress {
    /// The kernel's latest checkpoint, opaque to the coordinator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<Value>,
}

impl KernelProgress {
    /// Reads a progress report; a report of another shape has no checkpoint.
    pub fn read(progress: &Value) -> Self {
        Self::deserialize(progress).unwrap_or_default()
    }
}

/// One task's contribution to the next round ([`RoundReport::sub`], [`RoundReport::found`]);
/// null when the task reported none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundResult {
    /// The task's sub-result.
    #[serde(default)]
    pub sub: Option<Value>,
    /// The task's best find.
    #[serde(default)]
    pub found: Option<Value>,
}

impl RoundResult {
    /// The round result an output reports.
    pub fn of(out: &TaskOutput) -> Self {
        RoundResult {
            sub: out.extra.round.sub.clone(),
            found: out.extra.round.found.clone(),
        }
    }
}

/// What a kernel returns for one task.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskOutput {
    /// The value as the outside world reads it (docs/API.md, "Values"), or null.
    pub value: serde_json::Value,
    /// The best move found, in the game's notation.
    #[serde(default)]
    pub best_move: Option<String>,
    /// Nodes searched (or playouts, rollouts: the kernel's unit of work).
    pub nodes: u64,
    /// Wall-clock time of the task in milliseconds.
    pub elapsed_ms: u64,
    /// Internal bounds for planners that combine probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawBounds>,
    /// Algorithm-specific keys, the typed ones among them ([`Extra`]).
    #[serde(default)]
    pub extra: Extra,
    /// A proof certificate (proof-number jobs with `proof=true`): an artifact of the job, kept
    /// apart from its result by the coordinator (`GET /v1/jobs/{id}/proof`) and written to a
    /// file by the command line (`solve --proof FILE`). Never a path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<serde_json::Value>,
}

impl TaskOutput {
    /// The output of a task that a job limit (`time` or `nodes`) stopped before a result: no
    /// value, no bounds, `stopped` naming the limit. A probe plan that gets it ends with the
    /// bounds its earlier probes proved.
    pub fn stopped(reason: StopReason) -> Self {
        let mut out = TaskOutput::default();
        out.extra.stopped = Some(reason);
        out
    }
}

/// The final result of a job: exactly the object `solve --json` prints and `GET /v1/jobs/{id}`
/// returns under `result`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobResult {
    /// Game name.
    pub game: String,
    /// Algorithm name.
    pub algorithm: String,
    /// The value (docs/API.md, "Values"), or null when not known.
    pub value: serde_json::Value,
    /// Best move in the game's notation, or null (terminal position, single-player sequence).
    pub best_move: Option<String>,
    /// Nodes searched over all tasks.
    pub nodes: u64,
    /// Wall-clock time of the whole job in milliseconds.
    pub elapsed_ms: u64,
    /// Algorithm-specific keys, the typed ones among them ([`Extra`]).
    #[serde(flatten)]
    pub extra: Extra,
    /// The proof certificate, if the job asked for one ([`TaskOutput::proof`]). Not part of the
    /// printed or stored result: the command line writes it to `--proof FILE`, the coordinator
    /// keeps it as the job's artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<serde_json::Value>,
}

/// The worker protocol (`/v1/worker/...`): what a worker and the coordinator say to each other.
///
/// A worker registers once, then long-polls for a lease on one task at a time per slot. While
/// the task runs it heartbeats (carrying the kernel's latest progress); the reply tells it to
/// stop when the job was cancelled or the task became obsolete. It ends a lease by reporting an
/// outcome or by releasing it (shutdown). Leases are identified by an unguessable id; a lease
/// that is not heartbeated within the lease time expires and its task goes to another worker.
pub mod protocol {
    use super::{StopReason, TaskOutput, TaskSpec};
    use serde::{Deserialize, Serialize};

    /// `POST /v1/worker/register`.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct Register {
        /// Host name, for `/v1/status`.
        pub host: String,
        /// Number of task slots (tasks run at once).
        pub threads: u32,
        /// Worker version.
        #[serde(default)]
        pub version: String,
    }

    /// Reply to [`Register`].
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub struct Registered {
        /// The worker's id, sent with every later request.
        pub worker_id: String,
        /// A lease expires this long after the last heartbeat.
        pub lease_ms: u64,
        /// How often to heartbeat a running task.
        pub heartbeat_ms: u64,
    }

    /// `POST /v1/worker/lease`: asks for one task, waiting up to `wait_ms` for one to appear.
    /// The reply is 200 with a [`Lease`], or 204 when none appeared in time.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct LeaseRequest {
        /// The worker's id.
        pub worker_id: String,
        /// Long-poll time in milliseconds (capped by the coordinator).
        #[serde(default)]
        pub wait_ms: u64,
    }

    /// A task leased to a worker.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub struct Lease {
        /// Identifies this lease in heartbeats and reports.
        pub lease_id: String,
        /// The task's id (stable across attempts).
        pub task_id: u64,
        /// The job's id (workers cache prepared jobs by it).
        pub job_id: u64,
        /// 1 for the first attempt at this task, 2 for the second, ...
        pub attempt: u32,
        /// What to run.
        pub task: TaskSpec,
        /// What is left of the job's time budget, in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub time_ms: Option<u64>,
        /// The identity of the coordinator's store (a random id made with the store). Job ids
        /// restart with a new store, so a worker keys what it caches by this and the job's
        /// content, never by the job id alone.
        #[serde(default)]
        pub store_id: String,
        /// Job-level plans: positions other workers proved for this job that this worker has
        /// not been sent yet, for its kernel's table before the task runs ([`super::Proved`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[cfg_attr(feature = "openapi", schema(value_type = Vec<Vec<u64>>))]
        pub proved: Vec<super::Proved>,
    }

    /// `POST /v1/worker/heartbeat`: the task is still running. 409 when the lease is no longer
    /// this worker's (expired, foreign, unknown): the worker stops the task.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct Heartbeat {
        /// The worker's id.
        pub worker_id: String,
        /// The lease.
        pub lease_id: String,
        /// The kernel's latest progress report, if any.
        #[serde(default)]
        pub progress: Option<serde_json::Value>,
    }

    /// Reply to [`Heartbeat`].
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub struct HeartbeatReply {
        /// Stop the task (job cancelled, or the task's answer is no longer needed) and report
        /// [`Outcome::Cancelled`].
        pub cancel: bool,
    }

    /// `POST /v1/worker/cancels`: asks which of the worker's running tasks to stop, waiting up
    /// to `wait_ms` for one to be cancelled (a long poll beside the heartbeats, so a cancel
    /// reaches a running task within a second whatever the heartbeat interval).
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct CancelWatch {
        /// The worker's id.
        pub worker_id: String,
        /// Long-poll time in milliseconds (capped by the coordinator).
        #[serde(default)]
        pub wait_ms: u64,
    }

    /// Reply to [`CancelWatch`]: the leases whose tasks should stop now (report
    /// [`Outcome::Cancelled`] for each); empty when the wait ended without one.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub struct CancelList {
        /// Lease ids.
        pub cancel: Vec<String>,
    }

    /// How a task ended on the worker.
    // One message per task, parsed and dropped: boxing the output would buy nothing.
    #[allow(clippy::large_enum_variant)]
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    #[serde(tag = "status", rename_all = "snake_case")]
    pub enum Outcome {
        /// The kernel returned a result.
        Done {
            /// The result.
            #[cfg_attr(feature = "openapi", schema(value_type = Object))]
            output: TaskOutput,
        },
        /// The kernel failed or panicked; the coordinator retries the task up to its limit.
        Failed {
            /// One line on what happened.
            message: String,
        },
        /// The job itself is wrong (cannot be prepared here): the job fails, no retry.
        Rejected {
            /// The bad-input message.
            message: String,
        },
        /// A time or node limit of the job stopped the kernel before a result: the job fails.
        Stopped {
            /// `time` or `nodes`.
            reason: StopReason,
        },
        /// The coordinator asked the task to stop (cancel in a heartbeat reply).
        Cancelled,
    }

    /// `POST /v1/worker/result`: the outcome of a lease. Posting the same report again is
    /// answered 200 with `duplicate: true` and changes nothing; a report on an expired or foreign
    /// lease is refused with 409.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct Report {
        /// The worker's id.
        pub worker_id: String,
        /// The lease.
        pub lease_id: String,
        /// How it ended.
        pub outcome: Outcome,
        /// Positions the task's kernel proved that the job's other workers may reuse
        /// ([`super::Proved`]; job-level leaves only, at most [`MAX_PROVED_PER_REPORT`]
        /// taken).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[cfg_attr(feature = "openapi", schema(value_type = Vec<Vec<u64>>))]
        pub proved: Vec<super::Proved>,
    }

    /// Most proved positions the coordinator takes from one report (the rest are dropped:
    /// they only save other workers time).
    pub const MAX_PROVED_PER_REPORT: usize = 8192;

    /// Reply to [`Report`].
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub struct ReportReply {
        /// This report was already received; nothing was counted again.
        pub duplicate: bool,
    }

    /// `POST /v1/worker/release`: the worker gives a lease back without an outcome (shutdown);
    /// the task goes back to the queue and the attempt is not counted.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct Release {
        /// The worker's id.
        pub worker_id: String,
        /// The lease.
        pub lease_id: String,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_accepts_numbers_as_settings_and_rejects_unknown_keys() {
        let job: JobSpec = serde_json::from_str(
            r#"{"game":"connect4","game_params":{"width":7},"algorithm":"alphabeta","options":{"depth":5,"weak":true}}"#,
        )
        .unwrap();
        assert_eq!(job.game_params["width"], "7");
        assert_eq!(job.options["depth"], "5");
        assert_eq!(job.options["weak"], "true");
        let bad = serde_json::from_str::<JobSpec>(r#"{"game":"x","algorithm":"y","colour":1}"#);
        assert!(bad.unwrap_err().to_string().contains("colour"));
        let nested =
            serde_json::from_str::<JobSpec>(r#"{"game":"x","algorithm":"y","options":{"a":[1]}}"#);
        assert!(nested.unwrap_err().to_string().contains("setting 'a'"));
    }

    #[test]
    fn floats_round_trip_exactly() {
        // Without serde_json's `float_roundtrip` this reads back as ...353e180.
        let out = TaskOutput {
            value: serde_json::json!(8.163717000825352e180),
            ..TaskOutput::default()
        };
        let text = serde_json::to_string(&out).unwrap();
        assert_eq!(serde_json::from_str::<TaskOutput>(&text).unwrap(), out);
    }

    #[test]
    fn result_flattens_extra_keys() {
        let mut extra = Extra::default();
        extra.insert("pv".into(), serde_json::json!(["4", "4"]));
        let r = JobResult {
            game: "connect4".into(),
            algorithm: "alphabeta".into(),
            value: 1.into(),
            best_move: Some("4".into()),
            nodes: 10,
            elapsed_ms: 1,
            extra,
            proof: None,
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["pv"][0], "4");
        assert_eq!(v["value"], 1);
    }

    /// The JSON of results and outputs is a flat map, typed keys next to display keys, as
    /// docs/API.md shows it; it reads back into the same typed values.
    #[test]
    fn typed_keys_keep_the_json_shape() {
        let text = r#"{"game":"othello","algorithm":"alphabeta","value":null,"best_move":"d3","nodes":2000,"elapsed_ms":5,"best_move_depth":3,"bounds":[-64,64],"probes":1,"pv":[],"stopped":"nodes"}"#;
        let r: JobResult = serde_json::from_str(text).unwrap();
        assert_eq!(r.extra.stopped, Some(StopReason::Nodes));
        assert_eq!(r.extra["bounds"], serde_json::json!([-64, 64]));
        assert!(!r.extra.contains_key("stopped"));
        let back: serde_json::Value = serde_json::to_value(&r).unwrap();
        assert_eq!(
            back,
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
        assert_eq!(r.extra.to_map()["stopped"], "nodes");

        // A round task's output as a worker sends it: the typed keys stay inside `extra`.
        let text = r#"{"value":12.0,"best_move":null,"nodes":100,"elapsed_ms":3,"extra":{"final":true,"found":{"moves":["1"]},"history":[],"round_start":{"done":0},"rollouts":100,"sub":null,"stopped":"time"}}"#;
        let out: TaskOutput = serde_json::from_str(text).unwrap();
        assert!(out.extra.final_round);
        assert_eq!(out.extra.stopped, Some(StopReason::Time));
        assert_eq!(
            out.extra.round.round_start,
            Some(serde_json::json!({"done": 0}))
        );
        assert_eq!(out.extra.round.sub, None, "a null sub reads as none");
        assert_eq!(out.extra["rollouts"], 100);
        let back = serde_json::to_value(&out).unwrap();
        let mut want: serde_json::Value = serde_json::from_str(text).unwrap();
        want["extra"].as_object_mut().unwrap().remove("sub");
        assert_eq!(back, want);
        assert_eq!(
            serde_json::to_value(TaskOutput::default()).unwrap()["extra"],
            serde_json::json!({})
        );

        // The round input as the planner sends it.
        let input = RoundInput {
            round: 2,
            from: Some(serde_json::json!({"done": 4})),
            results: vec![RoundResult::of(&out)],
        };
        assert_eq!(
            serde_json::to_value(&input).unwrap(),
            serde_json::json!({"round": 2, "from": {"done": 4}, "results": [{"sub": null, "found": {"moves": ["1"]}}]})
        );
        assert_eq!(
            serde_json::to_value(RoundInput::default()).unwrap(),
            serde_json::json!({"round": 0})
        );
    }

    #[test]
    #[should_panic(expected = "typed field")]
    fn a_typed_key_is_not_a_display_key() {
        Extra::default().insert("stopped".into(), "time".into());
    }
}
