//! Validation takes time linear in what a client sends (issue 43, item 2): a job's position and
//! options, and a worker's output, are checked by the coordinator on submit and under its
//! scheduler lock, so work that grows faster than the input is a denial of service.
//!
//! Each property times the work at a size `n` and at `8 n` (best of several runs, the two sizes
//! interleaved so that both see the same load, one property at a time) and fails when the larger
//! takes more than [`RATIO`] times the smaller: linear work gives about 8, quadratic 64. Work
//! that stays under [`FLOOR`] at `8 n` passes whatever the ratio (it cannot hurt, and its
//! timings are noise on a loaded machine). Figures are printed (`--nocapture`).

use gamesolver_shared::registry::{prepare, PreparedJob, ALGORITHMS, GAMES};
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::{JobSpec, TaskKind, TaskOutput};
use std::time::{Duration, Instant};

/// The largest accepted ratio of the times at `8 n` and `n` (linear: 8, quadratic: 64).
const RATIO: f64 = 32.0;
/// Work this fast at `8 n` passes whatever its ratio.
const FLOOR: Duration = Duration::from_millis(5);
/// Timings per size; the best counts.
const RUNS: usize = 7;

/// One measurement at a time: the tests of this file would otherwise time each other.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Times `work` at `n` and `8 n`; fails as the module doc says. Returns the two times.
fn linear(what: &str, n: usize, work: impl Fn(usize)) -> (Duration, Duration) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (mut small, mut large) = (Duration::MAX, Duration::MAX);
    for _ in 0..RUNS {
        for (size, best) in [(n, &mut small), (8 * n, &mut large)] {
            let t = Instant::now();
            work(size);
            *best = (*best).min(t.elapsed());
        }
    }
    let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-9);
    eprintln!(
        "{what}: n = {n}: {small:?}, 8n = {}: {large:?}, ratio {ratio:.1}",
        8 * n
    );
    assert!(
        large < FLOOR || ratio <= RATIO,
        "{what}: {small:?} at n = {n}, {large:?} at 8n: ratio {ratio:.1} is super-linear"
    );
    (small, large)
}

/// A MAX node over `k` MIN nodes of three leaves, labelled `m0`, `m1`, ... when `labels`.
fn wide_tree(k: usize, labels: bool) -> String {
    let kids: Vec<String> = (0..k)
        .map(|i| format!("{{\"min\":[{},{},{}]}}", i % 7, i % 11, i % 13))
        .collect();
    let mut t = format!("{{\"max\":[{}]", kids.join(","));
    if labels {
        let names: Vec<String> = (0..k).map(|i| format!("\"m{i}\"")).collect();
        t.push_str(&format!(",\"labels\":[{}]", names.join(",")));
    }
    t.push('}');
    t
}

/// A MIN node over `k` labelled leaves (a wide node every proof and leaf task lists in full).
fn wide_min(k: usize) -> String {
    let leaves: Vec<String> = (0..k).map(|i| (i % 5).to_string()).collect();
    let names: Vec<String> = (0..k).map(|i| format!("\"r{i}\"")).collect();
    format!(
        "{{\"min\":[{}],\"labels\":[{}]}}",
        leaves.join(","),
        names.join(",")
    )
}

fn prepared(job: &JobSpec) -> Box<dyn PreparedJob> {
    prepare(job).unwrap_or_else(|e| panic!("{}: {e}", job.algorithm))
}

/// The labels of one node, up to the cap: checked for duplicates by a sort, not pairwise.
#[test]
fn tree_labels_of_one_node() {
    linear("tree, labels of one node", 512, |k| {
        let leaves: Vec<String> = (0..k).map(|i| (i % 9).to_string()).collect();
        let names: Vec<String> = (0..k).map(|i| format!("\"label-{i:06}\"")).collect();
        let t = format!(
            "{{\"max\":[{}],\"labels\":[{}]}}",
            leaves.join(","),
            names.join(",")
        );
        prepared(&JobSpec::new("tree", &t, "minimax"));
    });
}

/// A megabyte of labelled nodes, and the 70,000 labels of the issue: refused at once, naming
/// the cap.
#[test]
fn tree_of_many_labelled_nodes() {
    linear("tree, many labelled nodes", 500, |k| {
        prepared(&JobSpec::new("tree", &wide_tree(k, true), "alphabeta"));
    });
    let leaves: Vec<String> = (0..70_000).map(|i| (i % 9).to_string()).collect();
    let names: Vec<String> = (0..70_000).map(|i| format!("\"L{i:05}\"")).collect();
    let issue = format!(
        "{{\"max\":[{}],\"labels\":[{}]}}",
        leaves.join(","),
        names.join(",")
    );
    assert!(issue.len() > 600_000);
    let t = Instant::now();
    let e = prepare(&JobSpec::new("tree", &issue, "minimax"))
        .err()
        .unwrap()
        .to_string();
    let took = t.elapsed();
    eprintln!("the 70,000-label tree of the issue: refused in {took:?}: {e}");
    assert!(e.contains("more than the 4096 a node may have"), "{e}");
    assert!(took < Duration::from_secs(1), "{took:?}");
}

/// An analysis of every root move prepares one job per move: each shares the tree (no copy)
/// and finds its position without a scan of the tree.
#[test]
fn tree_analysis_of_every_root_move() {
    linear("tree, analyse=all over the root moves", 256, |k| {
        let job = JobSpec::new("tree", &wide_tree(k, true), "alphabeta")
            .with_options(&[("analyse", "all")]);
        prepared(&job);
    });
}

/// A job-level leaf lists every child of a wide node; the check finds each by a map.
#[test]
fn leaf_children_check() {
    let fixtures = |k: usize| {
        // MAX over MIN nodes over a 9 and MAX nodes of values at most 6: "value >= 9" (rank
        // 7) needs every child disproved, which a budget of one node does not do.
        let kids: Vec<String> = (0..k)
            .map(|i| {
                let max = |j: usize| format!("{{\"max\":[{},{},{}]}}", (i + j) % 7, j % 5, i % 3);
                format!("{{\"min\":[9,{},{},{}]}}", max(0), max(1), max(2))
            })
            .collect();
        let names: Vec<String> = (0..k).map(|i| format!("\"m{i}\"")).collect();
        let t = format!(
            "{{\"max\":[{}],\"labels\":[{}]}}",
            kids.join(","),
            names.join(",")
        );
        let job = JobSpec::new("tree", &t, "jlpns")
            .with_options(&[("budget", "1"), ("leaf", "alphabeta")]);
        let p = prepared(&job);
        let task = TaskKind::Leaf {
            target: 7,
            path: vec![],
            budget_div: None,
        };
        let out = p.run(&task, &Control::unlimited()).unwrap();
        assert_eq!(
            out.extra.children.as_ref().map(Vec::len),
            Some(k),
            "{:?} {:?}",
            out.raw,
            out.nodes
        );
        (p, task, out)
    };
    let (small, large) = (fixtures(512), fixtures(4_096));
    linear("jlpns leaf children check", 512, |k| {
        let (p, task, out) = if k == 512 { &small } else { &large };
        p.check_output(task, out).unwrap();
    });
}

/// A proof certificate lists every reply of a wide node; the checker finds each by a map.
#[test]
fn proof_of_a_wide_node() {
    let certificate = |k: usize| {
        let job = JobSpec::new("tree", &wide_min(k), "pns")
            .with_options(&[("target", "0"), ("proof", "true")]);
        let p = prepared(&job);
        let out = p.run(&TaskKind::Whole, &Control::unlimited()).unwrap();
        (p, out)
    };
    let (small, large) = (certificate(512), certificate(4_096));
    linear("proof certificate of a wide node", 512, |k| {
        let (p, out) = if k == 512 { &small } else { &large };
        gamesolver_shared::registry::proof::verify_proof_value(out.proof.as_ref().unwrap())
            .unwrap();
        p.check_output(&TaskKind::Whole, out).unwrap();
    });
}

/// MCTS root statistics of a wide root: checked and merged in time linear in the moves.
#[test]
fn mcts_root_statistics() {
    let run = |k: usize| {
        let job = JobSpec::new("tree", &wide_tree(k, true), "mcts").with_options(&[
            ("playouts", &(2 * k).to_string()),
            ("trees", "2"),
            ("tasks", "2"),
        ]);
        let p = prepared(&job);
        let task = TaskKind::Run {
            index: 0,
            seed: 3,
            input: serde_json::Value::Null,
        };
        let out = p.run(&task, &Control::unlimited()).unwrap();
        (p, task, out)
    };
    let (small, large) = (run(512), run(4_096));
    linear("mcts root statistics check and merge", 512, |k| {
        let (p, task, out) = if k == 512 { &small } else { &large };
        p.check_output(task, out).unwrap();
        let merged = p.merge_runs(&[out.clone(), out.clone(), out.clone()]);
        assert!(merged.best_move.is_some());
    });
}

/// Hostile outputs of every size are refused in time linear in their size: a long pv, many
/// junk keys, a long sequence.
#[test]
fn hostile_outputs() {
    let zero_sum =
        prepared(&JobSpec::new("connect4", "4433", "alphabeta").with_options(&[("depth", "2")]));
    let single = prepared(
        &JobSpec::new("weakschur", "", "nmcs")
            .with_params(&[("k", "3")])
            .with_options(&[("level", "0")]),
    );
    linear("hostile outputs refused", 1_000, |n| {
        let mut out = TaskOutput {
            value: 0.into(),
            ..TaskOutput::default()
        };
        for i in 0..n {
            out.extra.insert(format!("junk{i}"), "x".into());
        }
        assert!(zero_sum.check_output(&TaskKind::Whole, &out).is_err());
        let mut out = TaskOutput::default();
        out.extra
            .insert("pv".into(), serde_json::json!(vec!["1"; n]));
        assert!(zero_sum.check_output(&TaskKind::Whole, &out).is_err());
        let mut out = TaskOutput {
            value: 5.into(),
            ..TaskOutput::default()
        };
        out.extra.sequence = Some(vec!["1".to_string(); n]);
        assert!(single.check_output(&TaskKind::Whole, &out).is_err());
    });
}

/// Options and game parameters: many unknown keys are refused in time linear in their
/// number (and the message stays one short line).
#[test]
fn many_settings() {
    linear("unknown options and game parameters", 2_000, |n| {
        let mut job = JobSpec::new("tictactoe", "", "alphabeta");
        for i in 0..n {
            job.options.insert(format!("option{i}"), "1".into());
            job.game_params.insert(format!("param{i}"), "1".into());
        }
        let e = prepare(&job).err().unwrap().to_string();
        assert!(e.len() < 1_000, "{} bytes", e.len());
    });
}

/// A position text of about `n` bytes.
type Shape = fn(usize) -> String;

/// Every game's position parser over long positions of every shape (blank, many short
/// tokens, many lines, one long token): linear, whether it accepts or refuses them.
#[test]
fn positions_of_every_game() {
    let shapes: [(&str, Shape); 5] = [
        ("blank", |n| " ".repeat(n)),
        ("tokens", |n| "1 ".repeat(n / 2)),
        ("lines", |n| "1\n".repeat(n / 2)),
        ("one token", |n| "1".repeat(n)),
        ("json", |n| {
            format!("{{\"moves\":[{}]}}", "{\"x\":0},".repeat(n / 8 - 2) + "{}")
        }),
    ];
    for game in GAMES {
        let Some(alg) = ALGORITHMS.iter().find(|a| {
            **a != "retrograde" && !gamesolver_shared::registry::option_specs(game, a).is_empty()
        }) else {
            continue;
        };
        let mut base = JobSpec::new(game, "", alg);
        if *game == "tsptw" {
            base.game_params
                .insert("instance".into(), "rc_201.1".into());
        }
        base.limits.node_limit = Some(1);
        for (shape, make) in shapes {
            let texts = [make(8 << 10), make(64 << 10)];
            linear(&format!("{game} position, {shape}"), 8 << 10, |n| {
                let mut job = base.clone();
                job.position = texts[usize::from(n > 8 << 10)].clone();
                let _ = prepare(&job);
            });
        }
    }
}
