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

/// What one task of a job asks a kernel to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["pv"][0], "4");
        assert_eq!(v["value"], 1);
    }
}
