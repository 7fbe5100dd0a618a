//! Job-level proof-number search (`jlpns`) against alpha-beta and published values, through
//! the path of `gamesolver solve` (`registry::prepare`, `plan::run_local`), and its planner
//! driven directly (`Planner`: several leaves at once, restore after any prefix of results,
//! obsolete leaves).
//!
//! Small budgets make the job-level tree do real work (the kernels look at their node budget
//! every few thousand nodes, so `budget=1` still lets a leaf search solve small subtrees).

mod common;
use common::{othello_positions, splitmix};
use gamesolver_shared::games::data::pons_set;
use gamesolver_shared::games::othello::Othello;
use gamesolver_shared::plan::{run_local, Planner};
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::{JobResult, JobSpec, TaskKind};
use rayon::prelude::*;
use serde_json::{json, Value};

fn run(job: &JobSpec) -> JobResult {
    let prepared = prepare(job).unwrap_or_else(|e| panic!("{job:?}: {e}"));
    run_local(prepared.as_ref(), &Control::unlimited()).unwrap_or_else(|e| panic!("{job:?}: {e}"))
}

fn jl(game: &str, position: &str, options: &[(&str, &str)]) -> JobResult {
    run(&JobSpec::new(game, position, "jlpns").with_options(options))
}

fn alphabeta(game: &str, position: &str) -> Value {
    run(&JobSpec::new(game, position, "alphabeta")).value
}

fn read_set(name: &str) -> Vec<(String, i64)> {
    pons_set(name)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|l| (l.moves, l.score as i64))
        .collect()
}

/// The exact value with the alpha-beta leaf (small budget, so most positions build a tree) and
/// the win decision with the df-pn leaf, against the published score.
fn check_pons(name: &str, lines: &[(String, i64)]) {
    let t0 = std::time::Instant::now();
    let tasks: u64 = lines
        .par_iter()
        .map(|(moves, want)| {
            let r = jl(
                "connect4",
                moves,
                &[("leaf", "alphabeta"), ("budget", "2000")],
            );
            assert_eq!(r.value, json!(want), "{name} '{moves}' exact");
            let leaves = r.extra["leaf_tasks"].as_u64().unwrap();
            let r = jl(
                "connect4",
                moves,
                &[("leaf", "dfpn"), ("budget", "5000"), ("target", "1")],
            );
            assert_eq!(
                r.extra.proved,
                Some(Some(*want >= 1)),
                "{name} '{moves}' target 1"
            );
            if *want >= 1 {
                assert!(r.best_move.is_some(), "{name} '{moves}': a winning move");
            }
            leaves
        })
        .sum();
    eprintln!(
        "jlpns {name}: {} positions, {tasks} leaf tasks (exact), {:?}",
        lines.len(),
        t0.elapsed()
    );
}

#[test]
fn pons_l2_r1_all() {
    let lines = read_set("Test_L2_R1");
    assert_eq!(lines.len(), 1000);
    check_pons("Test_L2_R1", &lines);
}

#[test]
fn pons_samples_of_every_set() {
    for name in ["Test_L3_R1", "Test_L2_R2", "Test_L1_R1", "Test_L1_R2"] {
        let lines = read_set(name);
        // The later positions of the harder sets are the cheaper ones.
        let sample: Vec<(String, i64)> = lines.iter().rev().step_by(125).cloned().collect();
        check_pons(name, &sample);
    }
    // Test_L1_R3 (begin-hard): one position, exact with the alpha-beta leaf.
    let lines = read_set("Test_L1_R3");
    let (moves, want) = &lines[lines.len() - 1];
    let r = jl(
        "connect4",
        moves,
        &[("leaf", "alphabeta"), ("budget", "200000")],
    );
    assert_eq!(r.value, json!(want), "Test_L1_R3 '{moves}'");
}

/// A job with no leaf or budget runs what its game's `Exact::job_level_leaf` names: the same
/// tasks and nodes as the job that names them (one worker, so no budget division).
#[test]
fn default_leaves_come_from_the_game() {
    let c4 = read_set("Test_L2_R2");
    let cases = [
        ("connect4", c4[0].0.as_str(), "alphabeta", "16000000"),
        ("connect4", c4[1].0.as_str(), "alphabeta", "16000000"),
        ("tictactoe", "", "dfpn", "1000000"),
        ("tictactoe", "5", "dfpn", "1000000"),
    ];
    for (game, position, leaf, budget) in cases {
        for target in [None, Some("1")] {
            let mut named = vec![("leaf", leaf), ("budget", budget)];
            let mut bare = vec![];
            if let Some(t) = target {
                named.push(("target", t));
                bare.push(("target", t));
            }
            let (d, n) = (jl(game, position, &bare), jl(game, position, &named));
            let what = format!("{game} '{position}' target {target:?}");
            assert_eq!(d.value, n.value, "{what}");
            assert_eq!(d.nodes, n.nodes, "{what}");
            assert_eq!(d.extra["leaf_tasks"], n.extra["leaf_tasks"], "{what}");
        }
    }
    // And the other kernel gives other counts: the check above can fail.
    let other = jl(
        "connect4",
        &c4[0].0,
        &[("leaf", "dfpn"), ("budget", "16000000")],
    );
    assert_ne!(other.nodes, jl("connect4", &c4[0].0, &[]).nodes);
}

#[test]
fn othello_agrees_with_alphabeta() {
    let g = Othello::new(8).unwrap();
    let positions = othello_positions(&g, 5, 14, 25);
    positions.par_iter().for_each(|p| {
        let want = alphabeta("othello", p);
        let r = jl("othello", p, &[("leaf", "alphabeta"), ("budget", "20000")]);
        assert_eq!(r.value, want, "othello '{p}' exact");
        let v = want.as_i64().unwrap();
        let r = jl(
            "othello",
            p,
            &[
                ("leaf", "dfpn"),
                ("budget", "20000"),
                ("target", &v.to_string()),
            ],
        );
        assert_eq!(r.extra.proved, Some(Some(true)), "othello '{p}' >= {v}");
    });
}

/// Othello with the default kernel and a small budget: df-pn leaves above 16 empty squares, the
/// end-game solver's at 16 or fewer, in one tree; the exact value and a decision at it agree
/// with alpha-beta (positions of 17 and 18 empties, so both kernels run).
#[test]
fn othello_default_leaves_mix_dfpn_and_the_solver() {
    let g = Othello::new(8).unwrap();
    let positions = othello_positions(&g, 2, 17, 31);
    positions.par_iter().for_each(|p| {
        let want = alphabeta("othello", p);
        let r = jl("othello", p, &[("budget", "50000")]);
        assert_eq!(r.value, want, "othello '{p}' exact");
        assert!(
            r.extra["leaf_tasks"].as_u64().unwrap() > 1,
            "othello '{p}': a tree"
        );
        let v = want.as_i64().unwrap();
        let r = jl(
            "othello",
            p,
            &[("budget", "50000"), ("target", &(v + 1).to_string())],
        );
        assert_eq!(
            r.extra.proved,
            Some(Some(false)),
            "othello '{p}' >= {}",
            v + 1
        );
    });
}

/// Every tic-tac-toe position up to two moves, and m,n,k boards, every leaf kernel, pure
/// job-level search (`budget=1`) and with a budget, against alpha-beta.
#[test]
fn tictactoe_and_mnk_agree_with_alphabeta() {
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, String);
    let mut cases: Vec<Case> = Vec::new();
    let mut ttt = vec![String::new()];
    for a in 1..=9 {
        ttt.push(a.to_string());
        for b in 1..=9 {
            if a != b {
                ttt.push(format!("{a}{b}"));
            }
        }
    }
    for p in ttt.iter().step_by(3) {
        cases.push(("tictactoe", vec![], p.clone()));
    }
    for p in ["6", "1,16"] {
        cases.push((
            "mnk",
            vec![("m", "4"), ("n", "4"), ("k", "3")],
            p.to_string(),
        ));
    }
    cases.par_iter().for_each(|(game, params, p)| {
        let base = JobSpec::new(game, p, "alphabeta").with_params(params);
        let want = run(&base).value;
        for (leaf, budget) in [
            ("dfpn", "1"),
            ("dfpn", "300"),
            ("pdspn", "300"),
            ("alphabeta", "50"),
        ] {
            let job = JobSpec {
                algorithm: "jlpns".into(),
                ..base.clone()
            }
            .with_options(&[("leaf", leaf), ("budget", budget)]);
            let r = run(&job);
            assert_eq!(r.value, want, "{game} '{p}' leaf={leaf} budget={budget}");
            for t in -1..=1 {
                let t = t.to_string();
                let r = run(&job.clone().with_options(&[("target", &t)]));
                let v = want.as_i64().unwrap();
                assert_eq!(
                    r.extra.proved,
                    Some(Some(v >= t.parse::<i64>().unwrap())),
                    "{game} '{p}' leaf={leaf} target={t}"
                );
            }
        }
    });
}

/// Random max/min trees (the `tree` game) against alpha-beta.
#[test]
fn random_trees_agree_with_alphabeta() {
    fn tree(rng: &mut u64, depth: u32, max: bool) -> Value {
        if depth == 0 || splitmix(rng).is_multiple_of(7) {
            return json!((splitmix(rng) % 21) as i64 - 10);
        }
        let n = 1 + splitmix(rng) % 4;
        let kids: Vec<Value> = (0..n).map(|_| tree(rng, depth - 1, !max)).collect();
        json!({ if max { "max" } else { "min" }: kids })
    }
    let mut rng = 5u64;
    for i in 0..40 {
        let t = tree(&mut rng, 4 + i % 4, true);
        if !t.is_object() {
            continue;
        }
        let text = t.to_string();
        let want = alphabeta("tree", &text);
        let r = jl("tree", &text, &[("budget", "1")]);
        assert_eq!(r.value, want, "tree {text}");
    }
}

/// Drives the planner of a `jlpns` job by hand with `k` slots, running every issued task at
/// once (in issue order, results fed in reverse, so answers arrive out of order), checking at
/// every step that the leaves in flight are distinct, that a planner restored from the tasks
/// issued and the results so far makes the same next move, and that obsolete tasks are ones
/// whose leaf became irrelevant. Returns the final value. Runs twice: with the locality hint
/// the coordinator gives (the path of the leaf just answered, whose slot the next task takes)
/// and without; both must give the same value.
fn drive(job: &JobSpec, k: usize) -> Value {
    let near = drive_counting(job, k, true).0;
    let plain = drive_counting(job, k, false).0;
    assert_eq!(near, plain, "with and without locality hints");
    near
}

/// [`drive`], also counting the tasks issued for a threshold other than the current one (an
/// exact plan's speculative thresholds) and those with a share of the budget.
fn drive_counting(job: &JobSpec, k: usize, near: bool) -> (Value, usize, usize) {
    let prepared = prepare(job).unwrap();
    let shape = prepared.plan_shape();
    let mut p = Planner::new(shape.clone(), k);
    let mut issued: Vec<TaskKind> = Vec::new();
    let mut results = Vec::new();
    let mut dropped: Vec<TaskKind> = Vec::new();
    let mut rounds = 0;
    let mut speculative = 0;
    let mut short = 0;
    while !p.is_done() {
        if let (true, Some((TaskKind::Leaf { path, .. }, _))) = (near, results.last()) {
            p.prefer_near(vec![path.clone()]);
        }
        rounds += 1;
        assert!(rounds < 100_000, "the plan does not end");
        let current = p.progress(prepared.as_ref())["threshold"].clone();
        let tasks = p.next_tasks();
        for t in &tasks {
            if let TaskKind::Leaf {
                target, budget_div, ..
            } = t
            {
                if prepared.show_value(*target) != current {
                    speculative += 1;
                }
                if let Some(d) = budget_div {
                    assert!((2..=64).contains(d), "budget_div {d}");
                    short += 1;
                }
            }
        }
        issued.extend(tasks.iter().cloned());
        let pending = p.pending().to_vec();
        assert!(!pending.is_empty(), "nothing in flight and not done");
        assert!(pending.len() <= k);
        let mut paths: Vec<&Vec<String>> = pending
            .iter()
            .map(|t| match t {
                TaskKind::Leaf { path, .. } => path,
                other => panic!("not a leaf task: {other:?}"),
            })
            .collect();
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), pending.len(), "two tasks on one leaf");
        // Answer the last task issued first.
        let task = pending.last().unwrap().clone();
        let out = prepared.run(&task, &Control::unlimited()).unwrap();
        prepared.check_output(&task, &out).unwrap();
        p.on_result(&task, out.clone());
        results.push((task, out));
        for t in p.obsolete() {
            p.forget(&t);
            dropped.push(t);
        }
        let mut r = Planner::restore(shape.clone(), k, &issued, &results, &dropped);
        assert_eq!(r.pending(), p.pending(), "restored pending");
        assert_eq!(r.is_done(), p.is_done());
        assert_eq!(
            r.progress(prepared.as_ref()),
            p.progress(prepared.as_ref()),
            "restored progress"
        );
        let mut q = p.clone();
        assert_eq!(r.next_tasks(), q.next_tasks(), "restored next tasks");
    }
    (p.finish(prepared.as_ref()).value, speculative, short)
}

/// An exact plan with more slots than the current threshold has leaves works on the thresholds
/// the probe plan would ask next, and gives a narrow tree's leaves a share of the budget: such
/// tasks are issued, answers stay exact (against the published scores), and a restored planner
/// continues identically ([`drive`]'s checks). With one slot neither happens.
#[test]
fn idle_slots_work_on_the_next_thresholds() {
    let lines = read_set("Test_L1_R2");
    let (mut speculated, mut shortened) = (0, 0);
    for (moves, want) in lines.iter().step_by(211).take(4) {
        let job = JobSpec::new("connect4", moves, "jlpns")
            .with_options(&[("leaf", "alphabeta"), ("budget", "300")]);
        let (v, spec, short) = drive_counting(&job, 1, true);
        assert_eq!(v, json!(want), "'{moves}' k=1");
        assert_eq!(spec, 0, "'{moves}': one slot, yet a speculative task");
        assert_eq!(short, 0, "'{moves}': one slot, yet a short task");
        let (v, spec, short) = drive_counting(&job, 8, true);
        assert_eq!(v, json!(want), "'{moves}' k=8");
        speculated += spec;
        shortened += short;
    }
    assert!(
        speculated > 0,
        "eight slots never took a speculative threshold"
    );
    assert!(shortened > 0, "eight slots never had a short task");
}

#[test]
fn planner_restores_and_spreads_leaves() {
    for (game, params, position, leaf, budget) in [
        ("tictactoe", vec![], "", "dfpn", "1"),
        ("tictactoe", vec![], "5", "alphabeta", "20"),
        (
            "mnk",
            vec![("m", "4"), ("n", "3"), ("k", "3")],
            "",
            "dfpn",
            "50",
        ),
    ] {
        let job = JobSpec::new(game, position, "jlpns")
            .with_params(&params)
            .with_options(&[("leaf", leaf), ("budget", budget)]);
        let want = run(&JobSpec {
            algorithm: "alphabeta".into(),
            options: Default::default(),
            ..job.clone()
        })
        .value;
        for k in [1, 2, 3] {
            assert_eq!(drive(&job, k), want, "{game} '{position}' k={k}");
        }
    }
}

/// A decision plan: once the root is proved, every leaf in flight is obsolete.
#[test]
fn leaves_in_flight_are_obsolete_once_the_root_is_solved() {
    // README's Connect Four position, value -2: "value >= 0" is disproved, by df-pn leaves of
    // 5,000 nodes (many small leaves; the game's default alpha-beta leaves decide it in a few).
    let job = JobSpec::new("connect4", "335662333565", "jlpns").with_options(&[
        ("leaf", "dfpn"),
        ("budget", "5000"),
        ("target", "0"),
    ]);
    let prepared = prepare(&job).unwrap();
    let mut p = Planner::new(prepared.plan_shape(), 4);
    let mut saw_obsolete = false;
    while !p.is_done() {
        let _ = p.next_tasks();
        let task = p.pending()[0].clone();
        let out = prepared.run(&task, &Control::unlimited()).unwrap();
        p.on_result(&task, out);
        let obsolete = p.obsolete();
        if p.is_done() {
            assert_eq!(obsolete.len(), p.pending().len(), "all obsolete when done");
        }
        for t in obsolete {
            saw_obsolete = true;
            p.forget(&t);
        }
    }
    assert!(
        saw_obsolete,
        "four leaves in flight: some became irrelevant"
    );
    let r = p.finish(prepared.as_ref());
    assert_eq!(r.extra.proved, Some(Some(false)), "value -2 is not >= 0");
}

#[test]
fn bad_options_are_refused() {
    for (k, v) in [
        ("leaf", "mcts"),
        ("budget", "0"),
        ("threads", "0"),
        ("target", "x"),
    ] {
        let job = JobSpec::new("tictactoe", "", "jlpns").with_options(&[(k, v)]);
        let e = prepare(&job)
            .err()
            .unwrap_or_else(|| panic!("{k}={v} accepted"));
        assert!(e.to_string().contains(k), "{k}={v}: {e}");
    }
}

/// A worker keeps the df-pn leaves' tables between the tasks of one job (one table per
/// threshold, emptied when the threshold changes) and the alpha-beta leaves report the children
/// their table decides. Neither may change an answer: the exact value through several
/// thresholds (tasks at leaves of both sides, one prepared job answering them all, as a worker
/// does) against the published scores, and with several leaves in flight answered out of order.
#[test]
fn kept_tables_and_probed_children_do_not_change_answers() {
    let lines = read_set("Test_L2_R1");
    let sample: Vec<(String, i64)> = lines.iter().step_by(97).take(6).cloned().collect();
    sample.par_iter().for_each(|(moves, want)| {
        for (leaf, budget) in [("dfpn", "3000"), ("alphabeta", "500")] {
            let r = jl("connect4", moves, &[("leaf", leaf), ("budget", budget)]);
            assert_eq!(r.value, json!(want), "'{moves}' leaf={leaf} exact");
            assert!(
                r.extra["thresholds"].as_u64().unwrap() >= 1,
                "'{moves}': thresholds"
            );
        }
    });
    for (leaf, budget) in [("dfpn", "2"), ("alphabeta", "2")] {
        let job = JobSpec::new("mnk", "", "jlpns")
            .with_params(&[("m", "4"), ("n", "3"), ("k", "3")])
            .with_options(&[("leaf", leaf), ("budget", budget)]);
        let want = alphabeta_of(&job);
        for k in [2, 4] {
            assert_eq!(drive(&job, k), want, "mnk 4x3x3 leaf={leaf} k={k}");
        }
    }
}

fn alphabeta_of(job: &JobSpec) -> Value {
    run(&JobSpec {
        algorithm: "alphabeta".into(),
        options: Default::default(),
        ..job.clone()
    })
    .value
}

/// Proved positions pass between workers (`take_proved` on one prepared job, `learn_proved` on
/// another, as the coordinator relays them): a leaf's alpha-beta search exports entries, a
/// second worker that learnt them answers the same leaf with fewer nodes, and plans whose two
/// workers exchange everything after every result still give the published scores. Entries
/// that decode to nothing for the board (garbage from the network) change no answer.
#[test]
fn proved_positions_pass_between_workers_and_keep_answers() {
    let lines = read_set("Test_L1_R2");
    let mut exported = 0;
    for (moves, want) in lines.iter().step_by(251).take(4) {
        let job = JobSpec::new("connect4", moves, "jlpns")
            .with_options(&[("leaf", "alphabeta"), ("budget", "100000")]);
        let workers = [prepare(&job).unwrap(), prepare(&job).unwrap()];
        let mut p = Planner::new(workers[0].plan_shape(), 2);
        let mut turn = 0;
        while !p.is_done() {
            p.next_tasks();
            let task = p.pending()[0].clone();
            let w = &workers[turn % 2];
            let out = w.run(&task, &Control::unlimited()).unwrap();
            workers[0].check_output(&task, &out).unwrap();
            let sent = w.take_proved();
            exported += sent.len();
            workers[(turn + 1) % 2].learn_proved(&sent);
            p.on_result(&task, out);
            for t in p.obsolete() {
                p.forget(&t);
            }
            turn += 1;
        }
        assert_eq!(
            p.finish(workers[0].as_ref()).value,
            json!(want),
            "'{moves}' with two workers exchanging proved positions"
        );
    }
    assert!(exported > 0, "no leaf exported a proved position");

    // The same leaf on a worker that learnt what another proved there costs less.
    // Pons' third position of this set takes about 600,000 nodes of `alphabeta`.
    let (moves, _) = &lines[2];
    let job = JobSpec::new("connect4", moves, "jlpns")
        .with_options(&[("leaf", "alphabeta"), ("budget", "100000000")]);
    let [a, b] = [prepare(&job).unwrap(), prepare(&job).unwrap()];
    // The plan's hardest task (each is the root at one threshold), on a fresh worker.
    let mut tasks = Vec::new();
    let scout = prepare(&job).unwrap();
    let mut p = Planner::new(scout.plan_shape(), 1);
    while !p.is_done() {
        let task = p.next_tasks()[0].clone();
        let out = scout.run(&task, &Control::unlimited()).unwrap();
        tasks.push((out.nodes, task.clone()));
        p.on_result(&task, out);
    }
    let task = tasks.into_iter().max_by_key(|t| t.0).unwrap().1;
    let first = a.run(&task, &Control::unlimited()).unwrap();
    let sent = a.take_proved();
    assert!(
        !sent.is_empty(),
        "a search of {} nodes exported nothing",
        first.nodes
    );
    b.learn_proved(&sent);
    let second = b.run(&task, &Control::unlimited()).unwrap();
    assert_eq!(first.raw, second.raw);
    assert!(
        second.nodes * 2 < first.nodes,
        "{} nodes after learning {} entries, {} before",
        second.nodes,
        sent.len(),
        first.nodes
    );

    // Garbage: every field combination the decoder must refuse or can take without harm.
    let mut rng = 7u64;
    let garbage: Vec<[u64; 2]> = (0..20_000)
        .map(|i| {
            let (key, fields) = (splitmix(&mut rng), splitmix(&mut rng));
            // Half with only an entry's fields set (no check bits), as a real export has.
            [
                key,
                if i % 2 == 0 {
                    fields
                } else {
                    fields & 0xFFFF << 48
                },
            ]
        })
        .collect();
    let c = prepare(&job).unwrap();
    c.learn_proved(&garbage);
    assert_eq!(c.run(&task, &Control::unlimited()).unwrap().raw, first.raw);
}
