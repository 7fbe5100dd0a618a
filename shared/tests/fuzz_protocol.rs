//! Property tests of the bodies that cross the network: every `wire::protocol` type, `JobSpec`,
//! `TaskSpec`, `TaskOutput` and `JobResult`. Any JSON (random values, values shaped like the
//! type with wrong or extreme fields, random text) reads as the type or gives an error, never a
//! panic; a valid value written and read back is the same value.

mod fuzz_common;

use fuzz_common::{config, nasty, no_panic, text};
use gamesolver_shared::registry::PreparedJob;
use gamesolver_shared::wire::protocol::*;
use gamesolver_shared::wire::{
    Extra, JobResult, JobSpec, Limits, RawBounds, Settings, StopReason, TaskKind, TaskOutput,
    TaskSpec,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

/// JSON values of every kind, with the field names of the wire types as keys.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|x| json!(x)),
        proptest::sample::select(vec![
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1e308),
            json!(-0.0),
            json!(4294967296u64),
            json!(-1),
        ]),
        nasty().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let key = proptest::sample::select(vec![
            "game",
            "algorithm",
            "position",
            "game_params",
            "options",
            "limits",
            "time_ms",
            "node_limit",
            "job",
            "kind",
            "target",
            "index",
            "seed",
            "input",
            "value",
            "best_move",
            "nodes",
            "elapsed_ms",
            "raw",
            "lower",
            "upper",
            "extra",
            "proof",
            "host",
            "threads",
            "version",
            "worker_id",
            "lease_ms",
            "heartbeat_ms",
            "wait_ms",
            "lease_id",
            "task_id",
            "job_id",
            "attempt",
            "task",
            "store_id",
            "progress",
            "cancel",
            "status",
            "output",
            "message",
            "reason",
            "outcome",
            "duplicate",
            "whole",
            "probe",
            "run",
            "done",
            "failed",
            "rejected",
            "stopped",
            "cancelled",
            "",
        ]);
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            proptest::collection::btree_map(key, inner, 0..6).prop_map(|m| {
                Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

/// Reads `text` as `T`: no panic; what reads writes back and reads again as itself.
fn reads<T>(name: &str, text: &str) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    if let Ok(v) = no_panic(name, || serde_json::from_str::<T>(text))? {
        let again = no_panic(name, || serde_json::to_string(&v))?;
        prop_assert!(again.is_ok(), "{} does not write back: {:?}", name, again);
        let back: T = serde_json::from_str(&again.unwrap())
            .map_err(|e| TestCaseError::fail(format!("{name} written does not read back: {e}")))?;
        prop_assert_eq!(back, v, "{} changed in a round trip", name);
    }
    Ok(())
}

/// Every wire type read from `text`.
fn read_all(text: &str) -> Result<(), TestCaseError> {
    reads::<JobSpec>("JobSpec", text)?;
    reads::<Limits>("Limits", text)?;
    reads::<TaskKind>("TaskKind", text)?;
    reads::<TaskSpec>("TaskSpec", text)?;
    reads::<TaskOutput>("TaskOutput", text)?;
    reads::<RawBounds>("RawBounds", text)?;
    reads::<JobResult>("JobResult", text)?;
    reads::<Register>("Register", text)?;
    reads::<Registered>("Registered", text)?;
    reads::<LeaseRequest>("LeaseRequest", text)?;
    reads::<Lease>("Lease", text)?;
    reads::<Heartbeat>("Heartbeat", text)?;
    reads::<HeartbeatReply>("HeartbeatReply", text)?;
    reads::<Outcome>("Outcome", text)?;
    reads::<Report>("Report", text)?;
    reads::<ReportReply>("ReportReply", text)?;
    reads::<Release>("Release", text)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Valid values, for round trips and as the shape to break.

fn short() -> impl Strategy<Value = String> {
    prop_oneof![text(), "[a-z0-9]{0,8}"]
}

fn settings() -> impl Strategy<Value = Settings> {
    proptest::collection::btree_map(short(), short(), 0..4)
}

fn job_spec() -> impl Strategy<Value = JobSpec> {
    (
        short(),
        settings(),
        short(),
        short(),
        settings(),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
    )
        .prop_map(
            |(game, game_params, position, algorithm, options, time_ms, node_limit)| JobSpec {
                game,
                game_params,
                position,
                algorithm,
                options,
                limits: Limits {
                    time_ms,
                    node_limit,
                },
            },
        )
}

/// JSON that survives a round trip exactly (no floats: `1e308` and `-0.0` read back as other
/// floats of the same value, which `serde_json::Value` equality does not see as equal).
fn plain_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        short().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map(short(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn task_kind() -> impl Strategy<Value = TaskKind> {
    prop_oneof![
        Just(TaskKind::Whole),
        any::<i32>().prop_map(|target| TaskKind::Probe { target }),
        (any::<u32>(), any::<u64>(), plain_json()).prop_map(|(index, seed, input)| TaskKind::Run {
            index,
            seed,
            input
        }),
    ]
}

fn object() -> impl Strategy<Value = serde_json::Map<String, Value>> {
    proptest::collection::btree_map(short(), plain_json(), 0..3)
        .prop_map(|m| m.into_iter().collect())
}

fn task_output() -> impl Strategy<Value = TaskOutput> {
    (
        plain_json(),
        proptest::option::of(short()),
        any::<u64>(),
        any::<u64>(),
        proptest::option::of((any::<i32>(), any::<i32>())),
        object(),
        proptest::option::of(plain_json()),
    )
        .prop_map(
            |(value, best_move, nodes, elapsed_ms, raw, extra, proof)| TaskOutput {
                value,
                best_move,
                nodes,
                elapsed_ms,
                raw: raw.map(|(lower, upper)| RawBounds { lower, upper }),
                // The typed keys have typed values; the rest is display.
                extra: extra
                    .into_iter()
                    .filter(|(k, _)| !Extra::TYPED_KEYS.contains(&k.as_str()))
                    .collect::<serde_json::Map<_, _>>()
                    .into(),
                // `Some(null)` is written as nothing and reads back as `None`.
                proof: proof.filter(|p| !p.is_null()),
            },
        )
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        task_output().prop_map(|output| Outcome::Done { output }),
        short().prop_map(|message| Outcome::Failed { message }),
        short().prop_map(|message| Outcome::Rejected { message }),
        prop_oneof![Just(StopReason::Time), Just(StopReason::Nodes)]
            .prop_map(|reason| Outcome::Stopped { reason }),
        Just(Outcome::Cancelled),
    ]
}

fn lease() -> impl Strategy<Value = Lease> {
    (
        short(),
        any::<u64>(),
        any::<u64>(),
        any::<u32>(),
        job_spec(),
        task_kind(),
        proptest::option::of(any::<u64>()),
        short(),
    )
        .prop_map(
            |(lease_id, task_id, job_id, attempt, job, kind, time_ms, store_id)| Lease {
                lease_id,
                task_id,
                job_id,
                attempt,
                task: TaskSpec { job, kind },
                time_ms,
                store_id,
                proved: Vec::new(),
            },
        )
}

/// Writes `v`, reads it back: the same value.
fn round_trip<T>(v: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let text = serde_json::to_string(v).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: T = serde_json::from_str(&text)
        .map_err(|e| TestCaseError::fail(format!("{e} reading back {text}")))?;
    prop_assert_eq!(&back, v);
    Ok(())
}

/// Replaces one field of an object (at any depth) by `with`.
fn break_field(v: &mut Value, pick: &prop::sample::Index, with: Value) {
    fn fields(v: &Value, out: &mut Vec<Vec<String>>, path: Vec<String>) {
        if let Value::Object(m) = v {
            for (k, x) in m {
                let mut p = path.clone();
                p.push(k.clone());
                out.push(p.clone());
                fields(x, out, p);
            }
        }
    }
    let mut all = Vec::new();
    fields(v, &mut all, Vec::new());
    if all.is_empty() {
        return;
    }
    let path = &all[pick.index(all.len())];
    let mut at = v;
    for k in &path[..path.len() - 1] {
        at = at.get_mut(k).unwrap();
    }
    at[path.last().unwrap().as_str()] = with;
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn random_json_reads_as_every_type_or_fails(v in any_json()) {
        read_all(&v.to_string())?;
    }

    #[test]
    fn random_text_reads_as_every_type_or_fails(t in text()) {
        read_all(&t)?;
    }

    #[test]
    fn valid_values_round_trip(job in job_spec(), kind in task_kind(), out in task_output(),
                               outcome in outcome(), lease in lease(), s in short(), n in any::<u64>(),
                               k in any::<u32>(), flag in any::<bool>(), progress in proptest::option::of(plain_json())) {
        round_trip(&job)?;
        round_trip(&TaskSpec { job: job.clone(), kind: kind.clone() })?;
        round_trip(&out)?;
        round_trip(&lease)?;
        round_trip(&Register { host: s.clone(), threads: k, version: s.clone() })?;
        round_trip(&Registered { worker_id: s.clone(), lease_ms: n, heartbeat_ms: n })?;
        round_trip(&LeaseRequest { worker_id: s.clone(), wait_ms: n })?;
        // `Some(null)` progress is written as null and reads back as `None`.
        let progress = progress.filter(|p| !p.is_null());
        round_trip(&Heartbeat { worker_id: s.clone(), lease_id: s.clone(), progress })?;
        round_trip(&HeartbeatReply { cancel: flag })?;
        round_trip(&Report { worker_id: s.clone(), lease_id: s.clone(), outcome: outcome.clone(), proved: Vec::new() })?;
        round_trip(&outcome)?;
        round_trip(&ReportReply { duplicate: flag })?;
        round_trip(&Release { worker_id: s.clone(), lease_id: s })?;
    }

    /// Valid bodies with one field (at any depth) replaced by a hostile value.
    #[test]
    fn broken_fields_read_or_fail(lease in lease(), outcome in outcome(), job in job_spec(),
                                  pick in any::<prop::sample::Index>(), with in any_json()) {
        for mut v in [
            serde_json::to_value(&lease).unwrap(),
            serde_json::to_value(Report { worker_id: "w".into(), lease_id: "l".into(), outcome, proved: Vec::new() }).unwrap(),
            serde_json::to_value(&job).unwrap(),
        ] {
            break_field(&mut v, &pick, with.clone());
            read_all(&v.to_string())?;
        }
    }

    /// Settings (`game_params`, `options`) of any JSON: strings, numbers and booleans are kept as
    /// their text; anything else is refused, naming the setting.
    #[test]
    fn settings_of_any_json(items in proptest::collection::btree_map("\\PC{0,6}", any_json(), 0..5)) {
        let body = json!({"game": "g", "algorithm": "a", "options": items.clone()});
        let parsed = no_panic("JobSpec", || serde_json::from_value::<JobSpec>(body.clone()))?;
        let scalar = |v: &Value| matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_));
        match parsed {
            Ok(job) => {
                prop_assert!(items.values().all(scalar));
                for (k, v) in &items {
                    let want = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    prop_assert_eq!(&job.options[k], &want);
                }
                // As text they read back the same.
                round_trip(&job)?;
            }
            Err(e) => {
                prop_assert!(!items.values().all(scalar), "refused scalar settings: {}", e);
            }
        }
    }
}

/// A prepared job, one of its tasks and that task's real output (as JSON).
type RealOutput = (Box<dyn PreparedJob>, TaskKind, Value);

/// Real outputs of tasks of every family (the shape a hostile worker starts from), with their
/// prepared jobs.
fn real_outputs() -> &'static [RealOutput] {
    use gamesolver_shared::search::Control;
    static OUTPUTS: std::sync::OnceLock<Vec<RealOutput>> = std::sync::OnceLock::new();
    OUTPUTS.get_or_init(|| {
        let tree = r#"{"max": [{"min": [4, 9]}, {"min": [2, 3]}], "labels": ["a", "b"]}"#;
        let multi =
            r#"{"player": 0, "children": [{"utility": [1, 2, 3]}, {"utility": [3, 2, 1]}]}"#;
        let run = TaskKind::Run {
            index: 0,
            seed: 1,
            input: Value::Null,
        };
        let jobs = [
            (
                JobSpec::new("tictactoe", "", "alphabeta"),
                TaskKind::Probe { target: 0 },
            ),
            (
                JobSpec::new("connect4", "44", "alphabeta").with_options(&[("depth", "3")]),
                TaskKind::Whole,
            ),
            (
                JobSpec::new("tictactoe", "5", "pns")
                    .with_options(&[("target", "0"), ("proof", "true")]),
                TaskKind::Whole,
            ),
            (
                JobSpec::new("tree", tree, "jlpns").with_options(&[("budget", "1")]),
                TaskKind::Leaf {
                    target: 1,
                    path: vec![],
                    budget_div: None,
                },
            ),
            (JobSpec::new("tree", multi, "maxn"), TaskKind::Whole),
            (
                JobSpec::new("pig", "", "expectimax").with_options(&[("depth", "2")]),
                TaskKind::Whole,
            ),
            (
                JobSpec::new("tictactoe", "", "mcts").with_options(&[
                    ("playouts", "100"),
                    ("trees", "2"),
                    ("tasks", "2"),
                ]),
                run.clone(),
            ),
            (
                JobSpec::new("weakschur", "", "nrpa")
                    .with_params(&[("k", "3")])
                    .with_options(&[("level", "1"), ("iterations", "5"), ("runs", "2")]),
                run,
            ),
        ];
        jobs.into_iter()
            .map(|(job, task)| {
                let p = gamesolver_shared::registry::prepare(&job).unwrap();
                let out = p.run(&task, &Control::unlimited()).unwrap();
                p.check_output(&task, &out).unwrap();
                (p, task, serde_json::to_value(out).unwrap())
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(config(256))]

    /// A worker's report is the real output of a task of every family with one field (at any
    /// depth) replaced by a hostile value, or a key added: the coordinator's check never
    /// panics, and a refusal is one short line.
    #[test]
    fn forged_outputs_are_checked_without_panic(which in any::<prop::sample::Index>(),
                                                pick in any::<prop::sample::Index>(),
                                                with in any_json(), add in proptest::option::of(short())) {
        let all = real_outputs();
        let (p, task, real) = &all[which.index(all.len())];
        let mut forged = real.clone();
        break_field(&mut forged, &pick, with.clone());
        if let (Some(key), Some(extra)) = (add, forged.get_mut("extra").and_then(Value::as_object_mut)) {
            extra.insert(key, with);
        }
        if let Ok(out) = serde_json::from_value::<TaskOutput>(forged) {
            let checked = no_panic("check_output", || p.check_output(task, &out))?;
            if let Err(e) = checked {
                fuzz_common::one_line("check_output", &e)?;
                prop_assert!(e.len() <= 600, "a long refusal: {} bytes", e.len());
            }
        }
    }
}

#[test]
fn deep_bodies_are_refused_without_overflow() {
    // serde_json stops at 128 levels; `Value` fields (`input`, `extra`, `progress`, `proof`)
    // are read through it too.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for body in [
        deep.clone(),
        format!(r#"{{"worker_id":"w","lease_id":"l","progress":{deep}}}"#),
        format!(r#"{{"value":1,"nodes":1,"elapsed_ms":1,"proof":{deep}}}"#),
        format!(r#"{{"game":"g","algorithm":"a","options":{{"x":{deep}}}}}"#),
    ] {
        assert!(serde_json::from_str::<Heartbeat>(&body).is_err());
        assert!(serde_json::from_str::<TaskOutput>(&body).is_err());
        assert!(serde_json::from_str::<JobSpec>(&body).is_err());
    }
}
