//! Types that cross process boundaries as JSON: the job a user submits, the tasks a planner
//! makes of it, what a kernel returns for a task, and the final result (`solve --json`).
//!
//! Serde only: no logic beyond small constructors lives here, so the coordinator, the worker
//! and the CLI agree on the format by construction.

use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// `KEY=VALUE` settings (game parameters, options). JSON numbers and booleans are accepted
/// and kept as their text, so `{"depth": 5}` and `{"depth": "5"}` mean the same.
pub type Settings = BTreeMap<String, String>;

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
    pub game_params: Settings,
    /// Position in the game's notation; empty means the start.
    #[serde(default)]
    pub position: String,
    /// Algorithm name (`alphabeta`, `pns`, `mcts`, ...).
    pub algorithm: String,
    /// Algorithm options (`depth`, `target`, `seed`, ...).
    #[serde(default, deserialize_with = "scalar_map")]
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

/// What a kernel returns for one task.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskOutput {
    /// The value as the outside world reads it (CONTRACTS.md, "Values"), or null.
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
    /// Algorithm-specific keys (`pv`, `proved`, `bounds`, `sequence`, `visits`, ...).
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
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
    pub fn stopped(reason: &str) -> Self {
        let mut out = TaskOutput::default();
        out.extra.insert("stopped".into(), reason.into());
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
    /// The value (CONTRACTS.md, "Values"), or null when not known.
    pub value: serde_json::Value,
    /// Best move in the game's notation, or null (terminal position, single-player sequence).
    pub best_move: Option<String>,
    /// Nodes searched over all tasks.
    pub nodes: u64,
    /// Wall-clock time of the whole job in milliseconds.
    pub elapsed_ms: u64,
    /// Algorithm-specific keys.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
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
    use super::{TaskOutput, TaskSpec};
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

    /// How a task ended on the worker.
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
            reason: String,
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
    }

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
        let mut extra = serde_json::Map::new();
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
}
