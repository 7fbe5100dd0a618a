//! The coordinator's HTTP answers as types: what `GET /v1/jobs/{id}`, `GET /v1/jobs`,
//! `GET /v1/jobs/{id}/tasks`, `GET /v1/status`, `GET /v1/options` and every error send. The
//! handlers serialise these and nothing else, and `/openapi.json` describes them from the same
//! definitions ([`crate::openapi`]), so the document cannot drift from the answers.
//!
//! Job and task states are lower-case words (`queued`, `running`, `done`, `failed`,
//! `cancelled`). A job's final status is stored as the JSON of [`JobStatus`] and read back
//! with it.

use gamesolver_shared::registry::spec::{Kind, Spec};
use gamesolver_shared::registry::{self, Declared};
use gamesolver_shared::wire::JobSpec;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// State of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    /// Waiting for its first task to be leased.
    Queued,
    /// At least one task was leased.
    Running,
    /// It has a result.
    Done,
    /// It ended with an error.
    Failed,
    /// Cancelled by request.
    Cancelled,
}

impl JobState {
    /// The name in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }

    /// The state named `s` (`None` for an unknown name).
    pub fn parse(s: &str) -> Option<JobState> {
        Some(match s {
            "queued" => JobState::Queued,
            "running" => JobState::Running,
            "done" => JobState::Done,
            "failed" => JobState::Failed,
            "cancelled" => JobState::Cancelled,
            _ => return None,
        })
    }

    /// Whether the job has ended.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            JobState::Done | JobState::Failed | JobState::Cancelled
        )
    }
}

/// State of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TaskState {
    /// In the queue.
    Queued,
    /// Leased to a worker.
    Running,
    /// Its result was accepted.
    Done,
    /// It failed past its retries.
    Failed,
    /// Not needed any more (job ended, probe obsolete).
    Cancelled,
}

impl TaskState {
    /// The name in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Queued => "queued",
            TaskState::Running => "running",
            TaskState::Done => "done",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
        }
    }

    /// The state named `s`; an unknown name reads as `queued`.
    pub fn parse(s: &str) -> TaskState {
        match s {
            "running" => TaskState::Running,
            "done" => TaskState::Done,
            "failed" => TaskState::Failed,
            "cancelled" => TaskState::Cancelled,
            _ => TaskState::Queued,
        }
    }
}

/// A task as the task pages list it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TaskRow {
    /// The task's id.
    pub id: u64,
    /// What it does, e.g. `probe value >= 1` (in the job's value scale) or `run 3`.
    pub what: String,
    /// Its state.
    pub state: TaskState,
    /// Leases handed out for it so far.
    pub attempts: u32,
    /// The workers that held it.
    pub workers: Vec<String>,
    /// The latest failure, if any.
    pub last_error: Option<String>,
    /// When its latest lease was handed out (ms since the Unix epoch); null if it never ran.
    #[serde(default)]
    pub started_ms: Option<u64>,
    /// When that lease ended (its result came in, or it was released or expired); null while
    /// it runs.
    #[serde(default)]
    pub ended_ms: Option<u64>,
    /// How long its latest lease ran, in ms: until it ended, or so far while the task runs;
    /// null for a task that never ran or waits in the queue again.
    #[serde(default)]
    pub run_ms: Option<u64>,
}

impl TaskRow {
    /// The row with the times of its latest lease (`started_ms`, `ended_ms`) and its run time
    /// (`now_ms` for a lease still running).
    pub fn with_times(
        mut self,
        started_ms: Option<u64>,
        ended_ms: Option<u64>,
        now_ms: u64,
    ) -> Self {
        self.started_ms = started_ms;
        self.ended_ms = ended_ms;
        self.run_ms = match (started_ms, ended_ms, self.state) {
            (_, _, TaskState::Queued) | (None, _, _) => None,
            (Some(s), Some(e), _) => Some(e.saturating_sub(s)),
            (Some(s), None, TaskState::Running) => Some(now_ms.saturating_sub(s)),
            (Some(_), None, _) => None,
        };
        self
    }
}

/// A task as a job's status lists it: the row and, while it runs, its progress.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TaskView {
    /// The task.
    #[serde(flatten)]
    pub row: TaskRow,
    /// While the task runs: its worker's latest report (`nodes`, `elapsed_ms`, `nodes_per_s`
    /// for searches that publish nothing else, else the kernel's own report with `nodes`
    /// added); null otherwise.
    #[serde(default)]
    pub progress: Option<Value>,
}

/// Tasks of a job by state; each task is counted once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TaskCounts {
    /// All tasks.
    pub total: u64,
    /// In the queue.
    pub queued: u64,
    /// Leased.
    pub running: u64,
    /// With an accepted result.
    pub done: u64,
    /// Failed past their retries.
    pub failed: u64,
    /// Obsolete probes and the leftovers of an ended job.
    pub cancelled: u64,
}

/// `GET /v1/jobs/{id}`: a job's status and result, the same for resident and stored jobs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct JobStatus {
    /// The job's id.
    pub id: u64,
    /// Its state.
    pub state: JobState,
    /// The planner's figures (bounds, probes, best score, ...), with `kernel` (the latest
    /// kernel report) and `checkpointed_tasks` while the job runs.
    pub progress: Value,
    /// Task counts.
    pub tasks: TaskCounts,
    /// The tasks in flight and the latest finished ones, by id (all of them:
    /// `GET /v1/jobs/{id}/tasks`).
    pub task_list: Vec<TaskView>,
    /// Same keys as `solve --json` (game, algorithm, value, best_move, nodes, elapsed_ms, ...),
    /// null until done. An exact job stopped by a limit is done with value null, `bounds`
    /// [lower, upper] proved so far and `stopped` (time or nodes).
    pub result: Option<Value>,
    /// Why the job failed or was cancelled.
    pub error: Option<String>,
    /// When it was submitted (ms since the Unix epoch).
    pub created_ms: u64,
    /// When it ended.
    pub finished_ms: Option<u64>,
    /// The job as submitted; a position longer than 4,096 bytes shows only its start.
    pub job: JobSpec,
    /// Present when the position is longer than 4,096 bytes: its length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position_bytes: Option<usize>,
}

/// One job in `GET /v1/jobs`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct JobSummary {
    /// The job's id.
    pub id: u64,
    /// Its state.
    pub state: JobState,
    /// `game algorithm: value v`, or the error, or the state.
    pub summary: String,
    /// When it was submitted (ms since the Unix epoch).
    pub created_ms: u64,
}

/// `GET /v1/jobs`: jobs, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct JobList {
    /// This page.
    pub jobs: Vec<JobSummary>,
    /// Pass as `before` for the next page; null on the last page.
    pub next_before: Option<u64>,
}

/// `GET /v1/jobs/{id}/tasks`: every task of a job, by id, paged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TaskPage {
    /// This page.
    pub tasks: Vec<TaskRow>,
    /// Pass as `after` for the next page; null on the last.
    pub next_after: Option<u64>,
}

/// A task a worker holds, in `GET /v1/status`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HeldTask {
    /// The task's id.
    pub task: u64,
    /// Its job's id.
    pub job: u64,
    /// What it does.
    pub what: String,
}

/// A worker in `GET /v1/status`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkerView {
    /// The worker's id.
    pub id: String,
    /// Its host name.
    pub host: String,
    /// Its task slots.
    pub threads: u32,
    /// Its last contact (ms since the Unix epoch).
    pub last_seen_ms: Option<u64>,
    /// How long ago that was.
    pub last_seen_ago_ms: Option<u64>,
    /// The tasks it holds.
    pub current: Vec<HeldTask>,
}

/// Throughput in `GET /v1/status`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Throughput {
    /// Tasks done in the last minute.
    pub tasks_last_minute: usize,
    /// Tasks done since the coordinator started.
    pub tasks_done_total: u64,
}

/// `GET /v1/status`: workers, queue depth, throughput.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServiceStatus {
    /// Workers seen recently or holding a lease.
    pub workers: Vec<WorkerView>,
    /// Tasks waiting in the queue.
    pub queue_depth: usize,
    /// Leases held.
    pub running: usize,
    /// Jobs by state (states with none are left out).
    pub jobs: BTreeMap<String, u64>,
    /// Tasks done.
    pub throughput: Throughput,
}

/// `POST /v1/jobs` (201): the new job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Submitted {
    /// The job's id.
    pub id: u64,
    /// Its state (`queued`).
    pub state: JobState,
}

/// The code and message of an error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorDetail {
    /// A stable word: `bad_request`, `not_found`, `unauthorized`, `quota`, ...
    pub code: String,
    /// What went wrong, for people.
    pub message: String,
}

/// Every error answer (4xx, 5xx).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// `GET /healthz`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// Always `ok`.
    pub status: String,
}

/// `POST /v1/worker/release`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Released {
    /// Always true: the lease went back to the queue.
    pub released: bool,
}

/// `GET /assets/meta.json`: the names the dashboard's submit form offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Names {
    /// Game names.
    pub games: Vec<String>,
    /// Algorithm names.
    pub algorithms: Vec<String>,
}

/// What values an option takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OptionType {
    /// A whole number between `minimum` and `maximum`.
    Integer,
    /// A number between `minimum` and `maximum`.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A word or a value in the game's notation.
    String,
}

/// A bound of a numeric setting: a whole number for integer settings (exact up to 2^64 - 1),
/// else a number.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Bound {
    /// Of an integer setting.
    Integer(u64),
    /// Of a number setting.
    Number(f64),
}

impl Bound {
    /// The bound as a float (exact below 2^53).
    pub fn as_f64(self) -> f64 {
        match self {
            Bound::Integer(n) => n as f64,
            Bound::Number(x) => x,
        }
    }
}

/// One declared option or game parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OptionInfo {
    /// The key, as in `KEY=VALUE`.
    pub name: String,
    /// A game parameter (`game_params`) rather than an algorithm option (`options`).
    pub param: bool,
    /// What values it takes.
    #[serde(rename = "type")]
    pub kind: OptionType,
    /// Smallest accepted (numbers only). A JSON number: an integer setting's bounds are
    /// whole numbers (exact up to 2^64 - 1 in the JSON text).
    #[schema(value_type = Option<f64>)]
    pub minimum: Option<Bound>,
    /// Largest accepted (numbers only), as `minimum`.
    #[schema(value_type = Option<f64>)]
    pub maximum: Option<Bound>,
    /// The default, as text for people.
    pub default: String,
    /// What it does.
    pub description: String,
    /// Why the bound is where it is (empty for unbounded kinds).
    pub why: String,
}

impl OptionInfo {
    /// The declared `spec` as the API shows it.
    pub fn of(spec: &Spec, param: bool) -> OptionInfo {
        let (kind, minimum, maximum) = match spec.kind {
            Kind::UInt { min, max } => (
                OptionType::Integer,
                Some(Bound::Integer(min)),
                Some(Bound::Integer(max)),
            ),
            Kind::Float { min, max } => (
                OptionType::Number,
                Some(Bound::Number(min)),
                Some(Bound::Number(max)),
            ),
            Kind::Bool => (OptionType::Boolean, None, None),
            Kind::Text | Kind::Choice(_) => (OptionType::String, None, None),
        };
        OptionInfo {
            name: spec.name.into(),
            param,
            kind,
            minimum,
            maximum,
            default: spec.default.text(),
            description: spec.help.into(),
            why: spec.why.into(),
        }
    }
}

/// `GET /v1/options?game=G&algorithm=A`: the options and game parameters a job of `algorithm`
/// on `game` accepts, from the declared specs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OptionList {
    /// The game.
    pub game: String,
    /// The algorithm.
    pub algorithm: String,
    /// Algorithm options, then game parameters.
    pub options: Vec<OptionInfo>,
}

impl OptionList {
    /// The declared settings of `algorithm` on `game` (empty options for a pair the registry
    /// does not run).
    pub fn of(game: &str, algorithm: &str) -> OptionList {
        OptionList {
            game: game.into(),
            algorithm: algorithm.into(),
            options: registry::option_specs(game, algorithm)
                .iter()
                .map(|d: &Declared| OptionInfo::of(&d.spec, d.param))
                .collect(),
        }
    }
}

/// `GET /v1/tables/{name}/lookup`: a board looked up in a retrograde build.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TableLookup {
    /// The set's name.
    pub name: String,
    /// The build's job.
    pub job: u64,
    /// The board as given.
    pub position: String,
    /// Stones on it.
    pub stones: u64,
    /// Its value: stones the side to move captures from here on minus the opponent's.
    pub score: i64,
    /// The moves that keep it (empty: the game is over).
    pub best: Vec<String>,
    /// The principal variation from the board.
    pub line: LookupLine,
}

/// A principal variation from the databases: best moves for both sides until the game ends,
/// a position repeats, or the ply limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LookupLine {
    /// The moves, in order.
    pub moves: Vec<LookupMove>,
    /// The position after the last move.
    pub position: String,
    /// Its value for its side to move (0 after a repetition).
    pub value: i64,
    /// `game over`, `repetition` or `ply limit`.
    pub end: String,
}

/// One move of a [`LookupLine`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LookupMove {
    /// The position it is played from (side to move first).
    pub position: String,
    /// The move (a pit letter).
    #[serde(rename = "move")]
    pub mv: String,
    /// The position's value for the mover: `captures` minus the next position's value.
    pub value: i64,
    /// Stones the move captures.
    pub captures: u64,
}
