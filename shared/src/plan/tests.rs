use super::*;
use crate::search::Control;
use crate::wire::{JobResult, RawBounds, StopReason, TaskKind, TaskOutput};

/// A fake job whose value is `v`: probes answer with exact fail-soft bounds.
fn answer(v: i32, t: i32) -> TaskOutput {
    TaskOutput {
        raw: Some(if v >= t {
            RawBounds {
                lower: t,
                upper: i32::MAX,
            }
        } else {
            RawBounds {
                lower: i32::MIN,
                upper: t - 1,
            }
        }),
        ..TaskOutput::default()
    }
}

/// A probe plan over -21..=21 without a guess, `k` probes in flight.
fn unguessed_plan(k: usize) -> Planner {
    Planner::new(
        PlanShape::Probes {
            lower: -21,
            upper: 21,
            step: 1,
            guess: None,
        },
        k,
    )
}

#[test]
fn probes_find_every_value_with_any_parallelism() {
    for k in 1..=5 {
        for v in -21..=21 {
            let mut p = unguessed_plan(k);
            let mut rounds = 0;
            while !p.is_done() {
                let tasks = p.next_tasks();
                assert!(!tasks.is_empty(), "stuck at {:?}", p.bounds());
                assert!(tasks.len() <= k);
                for t in tasks {
                    let TaskKind::Probe { target } = t else {
                        panic!()
                    };
                    assert!(p.on_result(&t, answer(v, target)));
                    assert!(
                        !p.on_result(&t, answer(v, target)),
                        "a repeated result is ignored"
                    );
                }
                rounds += 1;
                assert!(rounds < 50);
            }
            assert_eq!(p.bounds(), RawBounds { lower: v, upper: v });
        }
    }
}

/// One probe at a time without a guess: Pons' order while the interval is wide, then, near
/// 0, the win boundary and the value next to it (not "value >= 3" and "value >= 0" first).
#[test]
fn bisection_asks_the_win_boundary_once_near_zero() {
    for (v, want) in [
        (1, vec![-9, 11, -3, 6, 1, 2]),
        (0, vec![-9, 11, -3, 6, 1, 0]),
        (-1, vec![-9, 11, -3, 6, 1, 0, -1]),
        (2, vec![-9, 11, -3, 6, 1, 2, 4, 3]),
        // Far from 0: Pons' order throughout.
        (15, vec![-9, 11, 17, 14, 16, 15]),
    ] {
        let mut p = unguessed_plan(1);
        let mut asked = Vec::new();
        while !p.is_done() {
            for t in p.next_tasks() {
                let TaskKind::Probe { target } = t else {
                    panic!()
                };
                asked.push(target);
                p.on_result(&t, answer(v, target));
            }
            assert!(asked.len() < 20);
        }
        assert_eq!(asked, want, "value {v}");
        assert_eq!(p.bounds(), RawBounds { lower: v, upper: v });
    }
}

/// A planner rebuilt from its issued tasks and results (in any interleaving the coordinator
/// stored) issues the same next tasks as the original.
#[test]
fn restore_continues_where_the_original_stopped() {
    for v in -5..=5 {
        let shape = PlanShape::Probes {
            lower: -7,
            upper: 7,
            step: 1,
            guess: None,
        };
        let mut p = Planner::new(shape.clone(), 3);
        let mut issued = Vec::new();
        let mut results = Vec::new();
        let mut rounds = 0;
        while !p.is_done() {
            let tasks = p.next_tasks();
            issued.extend(tasks.iter().cloned());
            // Answer only the first task of each round, so others stay pending.
            let t = tasks
                .first()
                .cloned()
                .or_else(|| p.pending().first().cloned())
                .unwrap();
            let TaskKind::Probe { target } = t else {
                panic!()
            };
            p.on_result(&t, answer(v, target));
            results.push((t, answer(v, target)));
            let dropped = p.obsolete();
            for d in &dropped {
                p.forget(d);
            }
            let all_dropped: Vec<TaskKind> = issued
                .iter()
                .filter(|t| !p.pending().contains(t) && !results.iter().any(|(r, _)| r == *t))
                .cloned()
                .collect();
            let mut q = Planner::restore(shape.clone(), 3, &issued, &results, &all_dropped);
            assert_eq!(q.bounds(), p.bounds());
            assert_eq!(q.pending(), p.pending());
            assert_eq!(q.is_done(), p.is_done());
            assert_eq!(q.clone().next_tasks(), p.clone().next_tasks());
            let _ = q.next_tasks();
            rounds += 1;
            assert!(rounds < 40);
        }
        assert_eq!(p.bounds(), RawBounds { lower: v, upper: v });
    }
    // Run plans continue with the next index, Single plans do not issue their task twice.
    let shape = PlanShape::Runs {
        count: 4,
        base_seed: 1,
    };
    let mut p = Planner::new(shape.clone(), 2);
    let issued = p.next_tasks();
    let mut q = Planner::restore(
        shape,
        2,
        &issued,
        &[(issued[0].clone(), TaskOutput::default())],
        &[],
    );
    let next = q.next_tasks();
    assert!(matches!(next[..], [TaskKind::Run { index: 2, .. }]));
    let mut s = Planner::restore(PlanShape::Single, 1, &[TaskKind::Whole], &[], &[]);
    assert!(s.next_tasks().is_empty());
}

/// With a value step (Connect Four's internal scale), every probe target and every bound is
/// a possible value, also when probes answer with bounds between possible values (PNS's
/// "value < t" gives the upper bound t - 1), and no more probes are spent than on the
/// grid of possible values.
#[test]
fn probes_stay_on_the_value_grid() {
    const STEP: i32 = 100;
    for k in 1..=4 {
        for v in -21..=21 {
            let shape = PlanShape::Probes {
                lower: -21 * STEP,
                upper: 21 * STEP,
                step: STEP,
                guess: None,
            };
            let mut p = Planner::new(shape, k);
            let mut q = Planner::new(
                PlanShape::Probes {
                    lower: -21,
                    upper: 21,
                    step: 1,
                    guess: None,
                },
                k,
            );
            let mut probes = 0;
            while !p.is_done() {
                let tasks = p.next_tasks();
                assert!(!tasks.is_empty(), "stuck at {:?}", p.bounds());
                for t in tasks {
                    let TaskKind::Probe { target } = t else {
                        panic!()
                    };
                    assert_eq!(target % STEP, 0, "target {target} is not a possible value");
                    // Not fail-soft: exactly "value >= target" or "value <= target - 1".
                    let raw = if v * STEP >= target {
                        RawBounds {
                            lower: target,
                            upper: i32::MAX,
                        }
                    } else {
                        RawBounds {
                            lower: i32::MIN,
                            upper: target - 1,
                        }
                    };
                    p.on_result(
                        &t,
                        TaskOutput {
                            raw: Some(raw),
                            ..TaskOutput::default()
                        },
                    );
                    let b = p.bounds();
                    assert!(b.lower % STEP == 0 && b.upper % STEP == 0, "{b:?}");
                    probes += 1;
                }
            }
            assert_eq!(
                p.bounds(),
                RawBounds {
                    lower: v * STEP,
                    upper: v * STEP
                }
            );
            let mut unit = 0;
            while !q.is_done() {
                for t in q.next_tasks() {
                    let TaskKind::Probe { target } = t else {
                        panic!()
                    };
                    q.on_result(&t, answer(v, target));
                    unit += 1;
                }
            }
            assert_eq!(probes, unit, "k={k} v={v}: same probes as on the unit grid");
        }
    }
}

/// With a first guess, every value is found with any parallelism, for every guess (inside
/// and at the edges of the bounds), with exact and with wider fail-soft answers; with one
/// probe at a time the first probe is the guess and the plan takes few probes when the
/// guess is close.
#[test]
fn guessed_probes_find_every_value_with_any_parallelism() {
    let fail_soft = |v: i32, t: i32, slack: i32| TaskOutput {
        raw: Some(if v >= t {
            RawBounds {
                lower: (t + slack).min(v),
                upper: i32::MAX,
            }
        } else {
            RawBounds {
                lower: i32::MIN,
                upper: (t - 1 - slack).max(v),
            }
        }),
        ..TaskOutput::default()
    };
    for k in 1..=4 {
        for g in -12..=12 {
            for v in -12..=12 {
                for slack in [0, 1, 3] {
                    let shape = PlanShape::Probes {
                        lower: -12,
                        upper: 12,
                        step: 1,
                        guess: Some(g),
                    };
                    let mut p = Planner::new(shape, k);
                    let mut probes = 0;
                    let mut first = None;
                    while !p.is_done() {
                        let tasks = p.next_tasks();
                        assert!(!tasks.is_empty(), "stuck at {:?}", p.bounds());
                        assert!(tasks.len() <= k);
                        for t in tasks {
                            let TaskKind::Probe { target } = t else {
                                panic!()
                            };
                            first.get_or_insert(target);
                            assert!(p.on_result(&t, fail_soft(v, target, slack)));
                            probes += 1;
                        }
                        for d in p.obsolete() {
                            p.forget(&d);
                        }
                        assert!(probes < 60);
                    }
                    assert_eq!(p.bounds(), RawBounds { lower: v, upper: v }, "g={g} v={v}");
                    if k == 1 {
                        assert_eq!(first, Some(g.max(-11)), "the first probe is the guess");
                        // Outward steps 1, 2, 4, ... then bisection: about 2 log2(distance).
                        let d = (v - g).abs() + 1;
                        let bound = 2 * (32 - (d as u32).leading_zeros()) as i32 + 2;
                        assert!(probes <= bound, "g={g} v={v}: {probes} probes > {bound}");
                    }
                }
            }
        }
    }
}

/// A guessed plan on a value grid (step 100) keeps targets and bounds on the grid, and a
/// restored planner continues like the original.
#[test]
fn guessed_probes_stay_on_the_grid_and_restore() {
    for v in -6..=6 {
        let shape = PlanShape::Probes {
            lower: -600,
            upper: 600,
            step: 100,
            guess: Some(250),
        };
        let mut p = Planner::new(shape.clone(), 2);
        let mut issued = Vec::new();
        let mut results = Vec::new();
        while !p.is_done() {
            let tasks = p.next_tasks();
            issued.extend(tasks.iter().cloned());
            let t = tasks
                .first()
                .cloned()
                .or_else(|| p.pending().first().cloned())
                .unwrap();
            let TaskKind::Probe { target } = t else {
                panic!()
            };
            assert_eq!(target % 100, 0);
            p.on_result(&t, answer(v * 100, target));
            results.push((t, answer(v * 100, target)));
            let dropped: Vec<TaskKind> = issued
                .iter()
                .filter(|t| !p.pending().contains(t) && !results.iter().any(|(r, _)| r == *t))
                .cloned()
                .collect();
            let q = Planner::restore(shape.clone(), 2, &issued, &results, &dropped);
            assert_eq!(q.bounds(), p.bounds());
            assert_eq!(q.clone().next_tasks(), p.clone().next_tasks());
            assert!(issued.len() < 40);
        }
        assert_eq!(p.bounds().lower, v * 100);
    }
}

/// A probe that gives up (no bounds) ends the plan with the bounds known so far.
#[test]
fn a_probe_without_bounds_ends_the_plan() {
    let mut p = Planner::new(
        PlanShape::Probes {
            lower: -4,
            upper: 4,
            step: 1,
            guess: None,
        },
        1,
    );
    let t = p.next_tasks().remove(0);
    p.on_result(&t, answer(2, 1));
    assert!(!p.is_done());
    let t = p.next_tasks().remove(0);
    p.on_result(&t, TaskOutput::default());
    assert!(p.is_done());
    assert_eq!(p.bounds().upper, 4);
    assert!(p.next_tasks().is_empty());
}

/// `run_local` honours the job's limits by itself, with an unlimited control: the node
/// budget per task, the time budget for the whole run.
#[test]
fn run_local_applies_the_job_limits() {
    use crate::wire::JobSpec;
    let job = |game: &str, position: &str, algorithm: &str| JobSpec {
        game: game.into(),
        position: position.into(),
        algorithm: algorithm.into(),
        ..JobSpec::default()
    };
    let run = |j: &JobSpec| {
        let p = crate::registry::prepare(j).expect("valid job");
        run_local(p.as_ref(), &Control::unlimited())
    };
    // Tic-tac-toe by plain minimax searches over half a million nodes.
    let mut j = job("tictactoe", "", "minimax");
    let full = run(&j).expect("solves");
    assert!(full.nodes > 100_000, "{full:?}");
    j.limits.node_limit = Some(1_000);
    let e = run(&j).expect_err("a node budget far below the search stops it");
    assert!(e.to_string().contains("nodes"), "{e}");
    // A probe plan: each probe gets the budget (Connect Four: alpha-beta probes); the
    // first probe it stops ends the plan with the bounds proved so far, not an error.
    let mut j = job("connect4", "4453", "alphabeta");
    j.limits.node_limit = Some(50_000);
    let r = run(&j).expect("a stopped probe plan ends with its bounds");
    assert_eq!(r.extra.stopped, Some(StopReason::Nodes), "{r:?}");
    assert_eq!(r.value, serde_json::Value::Null, "{r:?}");
    let bounds = |r: &JobResult| {
        let b = r.extra["bounds"].as_array().expect("bounds").clone();
        (b[0].as_i64().unwrap(), b[1].as_i64().unwrap())
    };
    let (lo, hi) = bounds(&r);
    assert!(lo < hi, "{r:?}");
    // The time budget: a search of about ten seconds stops after about 0.2 s.
    j.limits = crate::wire::Limits {
        time_ms: Some(200),
        node_limit: None,
    };
    let t0 = std::time::Instant::now();
    let r = run(&j).expect("stops with bounds");
    assert_eq!(r.extra.stopped, Some(StopReason::Time), "{r:?}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(5));
    // The bounds are proved: the exact value of a position of Pons' set lies inside them
    // whatever the budget, and a bigger budget never loses a bound.
    let mut j = job("connect4", "335662333565", "alphabeta");
    let exact = run(&j).expect("solves").value.as_i64().expect("a value");
    let mut last = (i64::MIN, i64::MAX);
    for budget in [2_000, 20_000, 200_000, 2_000_000] {
        j.limits.node_limit = Some(budget);
        let r = run(&j).expect("ends");
        let (lo, hi) = match r.value.as_i64() {
            Some(v) => (v, v),
            None => {
                assert!(r.extra.stopped.is_some(), "{r:?}");
                bounds(&r)
            }
        };
        assert!(
            lo <= exact && exact <= hi,
            "budget {budget}: {r:?}, exact {exact}"
        );
        // With a bigger budget the plan repeats the same probes further.
        assert!(
            lo >= last.0 && hi <= last.1,
            "budget {budget}: {r:?} after {last:?}"
        );
        last = (lo, hi);
    }
}

#[test]
fn run_seeds_differ() {
    let s: std::collections::HashSet<u64> = (0..100).map(|i| run_seed(7, i)).collect();
    assert_eq!(s.len(), 100);
}
