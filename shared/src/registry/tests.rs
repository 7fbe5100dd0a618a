//! The registry's bounds: issue 23's reproductions are bad input naming the option, and every
//! declared numeric setting is accepted at its bounds and refused just past them.

use super::{option_specs, prepare, prepare_with, Resources, SolveError, ALGORITHMS, GAMES};
use crate::plan::run_local;
use crate::search::Control;
use crate::wire::JobSpec;

const MINMAX_TREE: &str = r#"{"max": [{"min": [4, 9]}, {"min": [2, 3]}]}"#;
const CHANCE_TREE: &str =
    r#"{"max": [{"chance": [[0.5, {"min": [3, 7]}], [0.5, {"min": [8, 4]}]]}, 5]}"#;
const MULTI_TREE: &str =
    r#"{"player": 0, "children": [{"utility": [1, 2, 3]}, {"utility": [3, 2, 1]}]}"#;

fn bad(j: &JobSpec) -> String {
    match prepare(j) {
        Err(SolveError::BadInput(m)) => m,
        Err(e) => panic!("{j:?}: not bad input: {e}"),
        Ok(_) => panic!("{j:?}: accepted"),
    }
}

/// The reproductions of issue 23, as written: one-line bad input that names the setting.
#[test]
fn issue_reproductions_are_bad_input_naming_the_setting() {
    for alg in ["expectimax", "star1", "star2", "star25"] {
        let e = bad(&JobSpec::new("pig", "", alg).with_options(&[("depth", "1000000")]));
        assert!(e.contains("'depth=1000000'"), "{alg}: {e}");
    }
    let e = bad(&JobSpec::new("samegame", "", "nmcs").with_options(&[("level", "4000000000")]));
    assert!(e.contains("'level=4000000000'"), "{e}");
    for game in ["weakschur", "samegame"] {
        let e = bad(&JobSpec::new(game, "", "nrpa").with_options(&[("runs", "4000000000")]));
        assert!(e.contains("'runs=4000000000'"), "{e}");
    }
    let e = bad(&JobSpec::new("mnk", "", "alphabeta")
        .with_params(&[("m", "274177"), ("n", "67280421310721")]));
    assert!(e.contains("'m=274177'"), "{e}");
    let e = bad(&JobSpec::new("mnk", "", "alphabeta")
        .with_params(&[("m", "4294967296"), ("n", "4294967296")]));
    assert!(e.contains("'m=4294967296'"), "{e}");
    // Within each side's bound, over the cell bound: the constructor's checked product.
    let e = bad(&JobSpec::new("mnk", "", "alphabeta").with_params(&[("m", "256"), ("n", "256")]));
    assert!(e.contains("256 x 256"), "{e}");
    let e = bad(
        &JobSpec::new("tictactoe", "", "pns").with_options(&[("target", "0"), ("proof", "/x")])
    );
    assert!(e.starts_with("option 'proof' takes true or false"), "{e}");
    let e = bad(&JobSpec::new("tree", "@/etc/passwd", "minimax"));
    assert!(
        e.contains("'@file' is read by the command line only"),
        "{e}"
    );
    let e = bad(&JobSpec::new("tree", "@/dev/zero", "expectimax"));
    assert!(e.contains("'@file'"), "{e}");
    let e = bad(&JobSpec::new("tictactoe", "", "alphabeta").with_options(&[("threads", "257")]));
    assert!(e.contains("'threads=257'"), "{e}");
    let mut j = JobSpec::new("tictactoe", "", "alphabeta");
    j.limits.time_ms = Some(u64::MAX);
    assert!(bad(&j).contains("time limit"));
}

/// Names of data a job gives are plain names in the data folder; errors never show its path.
#[test]
fn data_names_are_checked_and_errors_hide_paths() {
    let dir = crate::games::data::data_dir().display().to_string();
    for (j, want) in [
        (
            JobSpec::new("connect4", "", "alphabeta").with_options(&[("book", "../../etc/passwd")]),
            "not a plain data name",
        ),
        (
            JobSpec::new("connect4", "", "alphabeta").with_options(&[("book", "no_such_book")]),
            "no book 'no_such_book' in the data folder",
        ),
        (
            JobSpec::new("tsptw", "", "nrpa").with_params(&[("instance", "/etc/passwd")]),
            "not a plain data name",
        ),
        (
            JobSpec::new("tsptw", "", "nrpa").with_params(&[("instance", "no_such")]),
            "no tsptw instance 'no_such' in the data folder",
        ),
    ] {
        let e = bad(&j);
        assert!(e.contains(want) && !e.contains(&dir), "{e}");
    }
    assert!(
        prepare(&JobSpec::new("tsptw", "", "nrpa").with_params(&[("instance", "rc_201.1")]))
            .is_ok()
    );
}

/// Positions have a length bound: 64 KiB for games, 1 MiB for trees.
#[test]
fn positions_have_a_length_bound() {
    let long = "1".repeat((64 << 10) + 1);
    assert!(bad(&JobSpec::new("connect4", &long, "alphabeta")).contains("bytes"));
    let tree = format!("{}{}", MINMAX_TREE, " ".repeat(1 << 20));
    assert!(bad(&JobSpec::new("tree", &tree, "minimax")).contains("bytes"));
    // Under the bound, spaces around a tree are fine.
    let tree = format!("{}{}", MINMAX_TREE, " ".repeat(1000));
    assert!(prepare(&JobSpec::new("tree", &tree, "minimax")).is_ok());
}

/// A position for `game` that the `algorithm` accepts.
fn position(game: &str, algorithm: &str) -> &'static str {
    match (game, algorithm) {
        ("tree", "expectimax" | "star1" | "star2" | "star25") => CHANCE_TREE,
        ("tree", "maxn" | "paranoid") => MULTI_TREE,
        ("tree", _) => MINMAX_TREE,
        _ => "",
    }
}

/// Every game and algorithm pair that goes together, with each numeric setting (from the
/// families' tables) at its bounds and just past them: past is bad input naming `key=value`;
/// at the bound the setting's own check passes (the job may still be refused for another
/// reason, such as `lower` without `upper`, but never as out of bounds).
#[test]
fn every_numeric_setting_is_accepted_at_its_bounds_and_refused_past_them() {
    let mut pairs = 0;
    let mut checked = 0;
    for game in GAMES {
        for alg in ALGORITHMS {
            let specs = option_specs(game, alg);
            let mut base = JobSpec::new(game, position(game, alg), alg);
            if *game == "tsptw" {
                base.game_params
                    .insert("instance".into(), "rc_201.1".into());
            }
            base.limits.node_limit = Some(1000);
            if *alg == "retrograde" {
                // A build needs its size and its name.
                base.options.insert("stones".into(), "1".into());
                base.options.insert("name".into(), "t".into());
            }
            if specs.is_empty() {
                continue;
            }
            // The pair goes together: the job without settings is accepted.
            prepare(&base).unwrap_or_else(|e| panic!("{game} {alg}: {e}"));
            pairs += 1;
            for d in specs {
                let Some(edges) = d.spec.edges() else {
                    continue;
                };
                let name = d.spec.name;
                let with = |v: &str| {
                    let mut j = base.clone();
                    let map = if d.param {
                        &mut j.game_params
                    } else {
                        &mut j.options
                    };
                    map.insert(name.into(), v.into());
                    // Settings whose bound depends on another one get the most room.
                    match name {
                        "tasks" if !d.param => {
                            j.options.insert("trees".into(), "4096".into());
                        }
                        "lower" => {
                            j.options.insert("upper".into(), "1000000000000000".into());
                        }
                        "upper" => {
                            j.options.insert("lower".into(), "-1000000000000000".into());
                        }
                        _ => {}
                    }
                    j
                };
                for v in &edges.refused {
                    let e = bad(&with(v));
                    assert!(e.contains(&format!("'{name}={v}'")), "{game} {alg}: {e}");
                    checked += 1;
                }
                for v in &edges.accepted {
                    match prepare(&with(v)) {
                        Ok(_) => {}
                        Err(SolveError::BadInput(e)) => assert!(
                            !e.contains("out of bounds") && !e.contains("malformed"),
                            "{game} {alg} {name}={v}: {e}"
                        ),
                        Err(e) => panic!("{game} {alg} {name}={v}: {e}"),
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(
        pairs >= 40 && checked >= 300,
        "{pairs} pairs, {checked} checks"
    );
}

/// A job's `memory_mb` is cut to what the runner offers: an MCTS arena that fits the job's own
/// budget fills up on a runner that offers 1 MiB (`stopped: memory`), and the job is not
/// refused for asking more than the runner has.
#[test]
fn resources_cut_the_jobs_memory() {
    let j = JobSpec::new("connect4", "", "mcts")
        .with_options(&[("playouts", "100000"), ("memory_mb", "1024")]);
    let ctl = Control::unlimited();
    let full = run_local(prepare(&j).unwrap().as_ref(), &ctl).unwrap();
    assert_eq!(full.extra.stopped, None, "{:?}", full.extra);
    let small = Resources {
        threads: 1,
        memory_mb: 1,
    };
    let cut = run_local(prepare_with(&j, &small).unwrap().as_ref(), &ctl).unwrap();
    assert_eq!(
        cut.extra.stopped,
        Some(crate::wire::StopReason::Memory),
        "{:?}",
        cut.extra
    );
    // More threads than the runner offers: cut, not refused.
    let t = JobSpec::new("tictactoe", "", "pns").with_options(&[("threads", "256")]);
    assert!(prepare_with(&t, &small).is_ok());
}

/// Runs `task` of `j` here and returns the prepared job with the output.
fn output(
    j: &JobSpec,
    task: &crate::wire::TaskKind,
) -> (Box<dyn super::PreparedJob>, crate::wire::TaskOutput) {
    let p = prepare(j).unwrap_or_else(|e| panic!("{j:?}: {e}"));
    let out = p
        .run(task, &Control::unlimited())
        .unwrap_or_else(|e| panic!("{j:?}: {e}"));
    (p, out)
}

/// A change to an output.
type Forgery = dyn Fn(&mut crate::wire::TaskOutput);

/// Each forgery of `out` (a change to it) must fail the check; the output itself passes, and
/// so does a task that a limit stopped.
fn check_forgeries(
    p: &dyn super::PreparedJob,
    task: &crate::wire::TaskKind,
    out: &crate::wire::TaskOutput,
    forgeries: &[(&str, &Forgery)],
) {
    let game = &p.job().game;
    p.check_output(task, out)
        .unwrap_or_else(|e| panic!("{game}: a real output fails: {e}"));
    p.check_output(
        task,
        &crate::wire::TaskOutput::stopped(crate::wire::StopReason::Time),
    )
    .unwrap_or_else(|e| panic!("{game}: a stopped task fails: {e}"));
    for (what, forge) in forgeries {
        let mut bad = out.clone();
        forge(&mut bad);
        assert!(
            p.check_output(task, &bad).is_err(),
            "{game} {}: forgery '{what}' passes",
            p.job().algorithm
        );
    }
}

#[test]
fn check_output_accepts_real_outputs_and_refuses_forged_ones() {
    use crate::wire::{RawBounds, TaskKind};
    use serde_json::json;
    let whole = TaskKind::Whole;
    let illegal = |o: &mut crate::wire::TaskOutput| o.best_move = Some("10".into());
    let taken = |o: &mut crate::wire::TaskOutput| o.best_move = Some("5".into());
    let text_value = |o: &mut crate::wire::TaskOutput| o.value = json!("high");

    // Zero-sum, exact: a probe's bounds answer its target inside the value range.
    let j = JobSpec::new("tictactoe", "5", "alphabeta");
    let probe = TaskKind::Probe { target: 0 };
    let (p, out) = output(&j, &probe);
    assert!(out.best_move.is_some());
    check_forgeries(
        p.as_ref(),
        &probe,
        &out,
        &[
            ("illegal move", &illegal),
            ("occupied square", &taken),
            ("out of range", &|o| {
                o.raw = Some(RawBounds { lower: 5, upper: 7 })
            }),
            ("no answer", &|o| {
                o.raw = Some(RawBounds {
                    lower: -1,
                    upper: 1,
                })
            }),
            ("proved contradicts", &|o| {
                o.extra.proved = Some(Some(false));
            }),
            ("no bounds", &|o| o.raw = None),
        ],
    );
    // Zero-sum, exact, one task: the value of its bounds.
    let j = JobSpec::new("tictactoe", "", "minimax");
    let (p, out) = output(&j, &whole);
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[
            ("value", &|o| o.value = json!(1)),
            ("text value", &text_value),
            ("illegal move", &illegal),
        ],
    );
    // Zero-sum, depth-limited.
    let j = JobSpec::new("tictactoe", "", "alphabeta").with_options(&[("depth", "2")]);
    let (p, out) = output(&j, &whole);
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[("text value", &text_value), ("illegal move", &illegal)],
    );
    // Proof-number decision with a certificate.
    let j =
        JobSpec::new("tictactoe", "5", "pns").with_options(&[("target", "0"), ("proof", "true")]);
    let (p, out) = output(&j, &whole);
    assert!(out.proof.is_some());
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[
            ("illegal move", &illegal),
            ("value", &|o| o.value = json!(1)),
            ("answer flipped", &|o| {
                o.raw = Some(RawBounds {
                    lower: -1,
                    upper: -1,
                })
            }),
            ("certificate of another target", &|o| {
                let c = o.proof.as_mut().unwrap();
                c["target"] = json!(1);
            }),
            ("certificate tampered", &|o| {
                let c = o.proof.as_mut().unwrap();
                let tree = c["tree"].as_array_mut().unwrap();
                tree.truncate(tree.len() / 2);
            }),
        ],
    );
    // Chance: a number, a legal move; trees inside their utility range.
    let j = JobSpec::new("pig", "", "expectimax").with_options(&[("depth", "2")]);
    let (p, out) = output(&j, &whole);
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[
            ("text value", &text_value),
            ("no value", &|o| o.value = json!(null)),
            ("illegal move", &|o| o.best_move = Some("jump".into())),
        ],
    );
    let j = JobSpec::new("tree", CHANCE_TREE, "star1");
    let (p, out) = output(&j, &whole);
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[("out of range", &|o| o.value = json!(100))],
    );
    // Single-player: a finite score, a legal sequence whose score it is.
    let j = JobSpec::new("weakschur", "", "nmcs")
        .with_params(&[("k", "3")])
        .with_options(&[("level", "1")]);
    let (p, out) = output(&j, &whole);
    assert!(!out.extra.sequence.as_ref().unwrap().is_empty());
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[
            ("text value", &text_value),
            ("score", &|o| {
                o.value = json!(o.value.as_f64().unwrap() + 1.0);
            }),
            ("illegal sequence", &|o| {
                let seq = o.extra.sequence.as_mut().unwrap();
                seq[0] = "9 in 9".into();
            }),
            ("a best move", &|o| o.best_move = Some("1".into())),
        ],
    );
    // Multi-player: one number per player.
    let j = JobSpec::new("rolit", "", "maxn")
        .with_params(&[("players", "3"), ("size", "4")])
        .with_options(&[("depth", "1")]);
    let (p, out) = output(&j, &whole);
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[
            ("too few entries", &|o| o.value = json!([1, 2])),
            ("text entry", &|o| o.value = json!([1, "x", 2])),
            ("illegal move", &|o| o.best_move = Some("a1".into())),
        ],
    );
    // MCTS: the outcome scale of two-player games, one utility per player on multi trees.
    let j = JobSpec::new("tictactoe", "", "mcts").with_options(&[("playouts", "300")]);
    let (p, out) = output(&j, &whole);
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[
            ("out of range", &|o| o.value = json!(3)),
            ("win rate", &|o| {
                o.extra.win_rate = Some(2.0);
            }),
            ("illegal move", &illegal),
        ],
    );
    let j = JobSpec::new("tree", MULTI_TREE, "mcts").with_options(&[("playouts", "50")]);
    let (p, out) = output(&j, &whole);
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[("a number, not a list", &|o| o.value = json!(1))],
    );
}

/// Every task output of real plans passes the check: probe plans (alpha-beta, df-pn), runs
/// (NRPA, MCTS) and rounds (NRPA across workers), task by task as the coordinator checks them,
/// for every family and the keys each writes (pv, bounds, visits, root statistics, checkpoints,
/// histories, leaves' children, analyses, certificates).
#[test]
fn check_output_accepts_every_task_of_real_plans() {
    use crate::plan::Planner;
    let jobs = [
        JobSpec::new("connect4", "4433", "alphabeta")
            .with_params(&[("width", "5"), ("height", "4")]),
        JobSpec::new("connect4", "4433", "alphabeta").with_options(&[("depth", "6")]),
        JobSpec::new("othello", "", "alphabeta").with_params(&[("size", "4")]),
        JobSpec::new("othello", "", "alphabeta")
            .with_params(&[("size", "6")])
            .with_options(&[("depth", "3")]),
        JobSpec::new("tictactoe", "", "dfpn"),
        JobSpec::new("tictactoe", "", "pns"),
        JobSpec::new("tictactoe", "5", "pn2").with_options(&[("target", "0"), ("proof", "true")]),
        JobSpec::new("tictactoe", "", "minimax"),
        JobSpec::new("tictactoe", "", "alphabeta").with_options(&[("analyse", "all")]),
        JobSpec::new("tictactoe", "", "jlpns").with_options(&[("budget", "50")]),
        JobSpec::new("tree", MINMAX_TREE, "jlpns").with_options(&[("budget", "1")]),
        JobSpec::new("tree", MINMAX_TREE, "alphabeta"),
        JobSpec::new("tree", MINMAX_TREE, "pns"),
        JobSpec::new("tree", CHANCE_TREE, "expectimax"),
        JobSpec::new("tree", CHANCE_TREE, "star2"),
        JobSpec::new("tree", MULTI_TREE, "maxn"),
        JobSpec::new("tree", MULTI_TREE, "paranoid"),
        JobSpec::new("tree", CHANCE_TREE, "mcts").with_options(&[
            ("playouts", "200"),
            ("trees", "3"),
            ("tasks", "3"),
        ]),
        JobSpec::new("tree", MULTI_TREE, "mcts").with_options(&[
            ("playouts", "200"),
            ("trees", "2"),
            ("tasks", "2"),
        ]),
        JobSpec::new("pig", "", "expectimax")
            .with_params(&[("target", "10")])
            .with_options(&[("depth", "3")]),
        JobSpec::new("pig", "", "star1")
            .with_params(&[("target", "10")])
            .with_options(&[("depth", "3")]),
        JobSpec::new("pig", "", "mcts").with_options(&[("playouts", "300")]),
        JobSpec::new("backgammon", "", "mcts").with_options(&[
            ("playouts", "40"),
            ("trees", "2"),
            ("tasks", "2"),
        ]),
        JobSpec::new("rolit", "", "maxn")
            .with_params(&[("players", "3"), ("size", "4")])
            .with_options(&[("depth", "2")]),
        JobSpec::new("rolit", "", "paranoid")
            .with_params(&[("players", "3"), ("size", "4")])
            .with_options(&[("depth", "2")]),
        JobSpec::new("rolit", "", "brs")
            .with_params(&[("players", "3"), ("size", "4")])
            .with_options(&[("depth", "2")]),
        JobSpec::new("connect4", "", "mcts").with_options(&[
            ("playouts", "400"),
            ("trees", "2"),
            ("tasks", "2"),
            ("analyse", "all"),
        ]),
        JobSpec::new("tictactoe", "1", "mcts").with_options(&[("playouts", "3000")]),
        JobSpec::new("tictactoe", "", "alphabeta").with_options(&[("weak", "true")]),
        JobSpec::new("weakschur", "", "nrpa")
            .with_params(&[("k", "3")])
            .with_options(&[("level", "1"), ("iterations", "6"), ("runs", "3")]),
        JobSpec::new("weakschur", "", "nrpa")
            .with_params(&[("k", "3")])
            .with_options(&[
                ("level", "2"),
                ("iterations", "6"),
                ("runs", "2"),
                ("across", "shared"),
            ]),
        JobSpec::new("morpion", "", "nmcs").with_options(&[("level", "1")]),
        JobSpec::new("morpion", "", "nrpa").with_options(&[
            ("level", "1"),
            ("iterations", "5"),
            ("adapt", "layers"),
        ]),
        JobSpec::new("samegame", "", "nmcs").with_options(&[("level", "0")]),
        JobSpec::new("tsptw", "", "nrpa")
            .with_params(&[("instance", "rc_201.1")])
            .with_options(&[("level", "1"), ("iterations", "5"), ("runs", "2")]),
        JobSpec::new("tictactoe", "", "mcts").with_options(&[
            ("playouts", "400"),
            ("trees", "4"),
            ("tasks", "2"),
        ]),
    ];
    for j in jobs {
        let p = prepare(&j).unwrap_or_else(|e| panic!("{j:?}: {e}"));
        let mut planner = Planner::new(p.plan_shape(), 2);
        let mut tasks_run = 0;
        while !planner.is_done() {
            let tasks = planner.next_tasks();
            assert!(
                !tasks.is_empty() && tasks_run < 200,
                "{j:?}: the plan stalls"
            );
            for t in tasks {
                let out = p.run(&t, &Control::unlimited()).unwrap();
                p.check_output(&t, &out)
                    .unwrap_or_else(|e| panic!("{} {}: task {t:?}: {e}", j.game, j.algorithm));
                // Through JSON, as a worker sends it.
                let sent: crate::wire::TaskOutput =
                    serde_json::from_str(&serde_json::to_string(&out).unwrap()).unwrap();
                p.check_output(&t, &sent).unwrap_or_else(|e| {
                    panic!("{} {}: task {t:?} as sent: {e}", j.game, j.algorithm)
                });
                // A limit stopped it early: what the kernel gives then passes too.
                for n in [1, 30, 500] {
                    if let Ok(early) = p.run(&t, &Control::with_limits(None, Some(n))) {
                        p.check_output(&t, &early).unwrap_or_else(|e| {
                            panic!("{} {}: task {t:?} stopped at {n}: {e}", j.game, j.algorithm)
                        });
                    }
                }
                planner.on_result(&t, out);
                tasks_run += 1;
            }
        }
        assert!(tasks_run >= 1, "{j:?}: no task ran");
    }
}

/// A hostile worker's display data (issue 43, item 5), on real outputs: junk keys, illegal
/// lines, values and bounds outside the game, forged root statistics, checkpoints and
/// histories are refused, also in a stopped output; the checks take time linear in the
/// output, however it is built.
#[test]
fn check_output_refuses_hostile_display_data() {
    use crate::wire::{StopReason, TaskKind, TaskOutput};
    use serde_json::json;
    let whole = TaskKind::Whole;
    fn junk(o: &mut TaskOutput) {
        o.extra.insert("junk".into(), json!("x".repeat(900_000)));
    }
    let huge_pv = |o: &mut TaskOutput| {
        o.extra.insert("pv".into(), json!(vec!["5"; 20_000]));
    };
    let certificate = |o: &mut TaskOutput| o.proof = Some(json!({"tree": []}));

    // Weak Schur k = 2 (its maximum is 8): a score is that of a finished sequence.
    let j = JobSpec::new("weakschur", "", "nmcs")
        .with_params(&[("k", "2")])
        .with_options(&[("level", "1")]);
    let (p, out) = output(&j, &whole);
    assert_eq!(out.value, json!(8));
    fn stopped(o: &mut TaskOutput) {
        o.value = json!(null);
        o.extra.stopped = Some(StopReason::Time);
    }
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[
            ("1e300", &|o| o.value = json!(1e300)),
            ("-5", &|o| o.value = json!(-5)),
            ("999", &|o| o.value = json!(999)),
            ("score of an unfinished sequence", &|o| {
                o.extra.sequence.as_mut().unwrap().pop();
                o.value = json!(7);
            }),
            ("a score without a sequence", &|o| o.extra.sequence = None),
            ("junk key", &junk),
            ("position of another sequence", &|o| {
                o.extra.insert("position".into(), json!("1"));
            }),
            ("rollouts", &|o| {
                o.extra.insert("rollouts".into(), json!(o.nodes + 1));
            }),
            ("a certificate", &certificate),
            ("bounds", &|o| {
                o.raw = Some(crate::wire::RawBounds { lower: 0, upper: 9 })
            }),
            ("stopped with an illegal sequence", &|o| {
                stopped(o);
                o.extra.sequence = Some(vec!["7".into(); 3]);
            }),
            ("stopped with junk", &|o| {
                stopped(o);
                junk(o);
            }),
            ("stopped with a sequence but no score", &stopped),
            ("a long sequence", &|o| {
                o.extra.sequence = Some(vec!["1".into(); 20_000]);
            }),
        ],
    );
    // NRPA: the history and the checkpoints are the kernel's.
    let j = JobSpec::new("weakschur", "", "nrpa")
        .with_params(&[("k", "3")])
        .with_options(&[("level", "1"), ("iterations", "10"), ("runs", "2")]);
    let run = TaskKind::Run {
        index: 0,
        seed: 1,
        input: json!(null),
    };
    let (p, out) = output(&j, &run);
    assert!(out.extra.checkpoint.is_some() && out.extra.contains_key("history"));
    check_forgeries(
        p.as_ref(),
        &run,
        &out,
        &[
            ("history above the value", &|o| {
                o.extra.insert("history".into(), json!([[1, 2, 1e300]]));
            }),
            ("history of junk", &|o| {
                o.extra.insert("history".into(), json!([["x"]]));
            }),
            ("checkpoint with junk", &|o| {
                let c = o.extra.checkpoint.as_mut().unwrap();
                c[0]["junk"] = json!("x".repeat(1000));
            }),
            ("checkpoint with a forged score", &|o| {
                let c = o.extra.checkpoint.as_mut().unwrap();
                c[0]["best"]["score"] = json!(1e300);
            }),
            ("checkpoint with an illegal move", &|o| {
                let c = o.extra.checkpoint.as_mut().unwrap();
                c[0]["best"]["moves"][0] = json!("9");
            }),
            ("root statistics", &|o| o.extra.root_stats = Some(json!({}))),
        ],
    );
    // Zero-sum: the pv is a legal line, the depth the job's.
    let j = JobSpec::new("connect4", "4433", "alphabeta").with_options(&[("depth", "4")]);
    let (p, out) = output(&j, &whole);
    assert!(!out.extra["pv"].as_array().unwrap().is_empty());
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[
            ("illegal pv", &|o| {
                o.extra.insert("pv".into(), json!(["4", "8"]));
            }),
            ("pv of numbers", &|o| {
                o.extra.insert("pv".into(), json!([4, 4]));
            }),
            ("a full column", &|o| {
                o.extra
                    .insert("pv".into(), json!(["4", "4", "4", "4", "4"]));
            }),
            ("huge pv", &huge_pv),
            ("deeper than asked", &|o| {
                o.extra.insert("depth".into(), json!(5));
            }),
            ("junk key", &junk),
            ("value of other bounds", &|o| o.value = json!(1e300)),
            ("a certificate", &certificate),
            ("a typed key of another family", &|o| {
                o.extra.win_rate = Some(0.5);
            }),
            ("stopped with junk", &|o| {
                o.value = json!(null);
                o.raw = None;
                o.best_move = None;
                o.extra.stopped = Some(StopReason::Nodes);
                junk(o);
            }),
        ],
    );
    // Proof-number decision: its bounds as the game shows them.
    let j = JobSpec::new("tictactoe", "5", "pns").with_options(&[("target", "0")]);
    let (p, out) = output(&j, &whole);
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[
            ("bounds outside the game", &|o| {
                o.extra.insert("bounds".into(), json!([-1000, 1000]));
            }),
            ("bounds of junk", &|o| {
                o.extra.insert("bounds".into(), json!("x".repeat(1000)));
            }),
            ("an error of a megabyte", &|o| {
                o.extra.error = Some("x".repeat(1 << 20));
            }),
            ("a certificate nobody asked for", &certificate),
            ("junk key", &junk),
        ],
    );
    // MCTS: visits of legal moves, root statistics that give the output exactly.
    let j = JobSpec::new("tictactoe", "", "mcts").with_options(&[
        ("playouts", "400"),
        ("trees", "2"),
        ("tasks", "2"),
    ]);
    let run = TaskKind::Run {
        index: 1,
        seed: 7,
        input: json!(null),
    };
    let (p, out) = output(&j, &run);
    check_forgeries(
        p.as_ref(),
        &run,
        &out,
        &[
            ("visits of an illegal move", &|o| {
                o.extra["visits"]["10"] = json!(5);
            }),
            ("root statistics of another length", &|o| {
                let s = o.extra.root_stats.as_mut().unwrap();
                s["visits"].as_array_mut().unwrap().pop();
            }),
            ("root statistics with rewards above the visits", &|o| {
                let s = o.extra.root_stats.as_mut().unwrap();
                s["rewards"][0] = json!(1e300);
            }),
            ("root statistics with junk", &|o| {
                let s = o.extra.root_stats.as_mut().unwrap();
                s["junk"] = json!(1);
            }),
            ("root statistics naming a move twice", &|o| {
                let s = o.extra.root_stats.as_mut().unwrap();
                s["moves"][1] = s["moves"][0].clone();
            }),
            ("a value its statistics do not give", &|o| {
                o.value = json!(0.99)
            }),
            ("junk key", &junk),
        ],
    );
    let (p, out) = output(&j, &whole);
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[
            ("visits of an illegal move", &|o| {
                o.extra["visits"]["10"] = json!(5);
            }),
            ("visits above the playouts", &|o| {
                o.extra["visits"]["5"] = json!(1u64 << 60);
            }),
            ("playouts", &|o| {
                o.extra.insert("playouts".into(), json!(1));
            }),
            ("merge", &|o| {
                o.extra.insert("merge".into(), json!("x".repeat(100)));
            }),
            ("an outcome of an unsolved root", &|o| {
                o.extra.insert("solved".into(), json!(false));
                o.extra.insert("outcome".into(), json!("win"));
            }),
            ("bounds outside the game", &|o| {
                o.extra.insert("solved".into(), json!(true));
                o.extra.insert("bounds".into(), json!([-5, 1e300]));
            }),
            ("junk key", &junk),
        ],
    );
    // Chance and multi-player trees: values within the leaves' utilities.
    let j = JobSpec::new("tree", MULTI_TREE, "maxn");
    let (p, out) = output(&j, &whole);
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[
            ("above player 1's utilities", &|o| {
                o.value = json!([1, 3, 3])
            }),
            ("a null", &|o| o.value = json!([1, null, 3])),
            ("junk key", &junk),
            ("leaves of junk", &|o| {
                o.extra.insert("leaves".into(), json!(-1));
            }),
        ],
    );
    let j = JobSpec::new("pig", "", "expectimax")
        .with_params(&[("target", "10")])
        .with_options(&[("depth", "2")]);
    let (p, out) = output(&j, &whole);
    check_forgeries(
        p.as_ref(),
        &whole,
        &out,
        &[
            ("outside the utilities", &|o| o.value = json!(1e300)),
            ("deeper than asked", &|o| {
                o.extra.insert("depth".into(), json!(3));
            }),
            ("junk key", &junk),
        ],
    );
}

/// `jlpns` without `leaf` and `budget` takes its game's defaults, the budget marked for the
/// planner to divide by the parallelism; a budget the job names is kept as it is.
#[test]
fn jlpns_defaults_are_per_game_and_a_named_budget_is_kept() {
    use crate::plan::PlanShape;
    let auto = |j: JobSpec| match prepare(&j).unwrap().plan_shape() {
        PlanShape::JobLevel { auto_budget, .. } => auto_budget,
        other => panic!("a job-level plan: {other:?}"),
    };
    assert!(auto(JobSpec::new("connect4", "3246313", "jlpns")));
    assert!(auto(JobSpec::new("tictactoe", "", "jlpns")));
    assert!(!auto(
        JobSpec::new("connect4", "3246313", "jlpns").with_options(&[("budget", "1000")])
    ));
}
