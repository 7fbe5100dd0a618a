//! Differential tests of the proof-number family against minimax and alpha-beta, Saffidine and Cazenave's
//! example, the optimisations' invariance, the memory limit and proof certificates.

use super::tree::{Leaf, Pns};
use super::*;
use crate::games::{
    mnk::Mnk,
    othello::Othello,
    tree::{random_tree, Tree},
};
use crate::model::{Game, Hashed, ZeroSum};
use crate::proof::{self, Claim};
use crate::registry::proof as certificate;
use crate::search::{alphabeta, minimax, Control};
use crate::wire::{JobResult, JobSpec};
use rand::{Rng, SeedableRng};

const ALL: [Algorithm; 4] = [
    Algorithm::Pns,
    Algorithm::Dfpn,
    Algorithm::Pn2,
    Algorithm::Pdspn,
];

fn exact<G: ZeroSum>(g: &G, s: &G::State) -> i32 {
    alphabeta::alphabeta(
        g,
        s,
        i32::MIN + 1,
        i32::MAX,
        None,
        true,
        &Control::unlimited(),
    )
    .unwrap()
    .value
}

/// Every algorithm, on one and two threads, decides every useful threshold like `value`.
fn check_decisions<G: ZeroSum + Hashed>(
    g: &G,
    s: &G::State,
    value: i32,
    targets: impl Iterator<Item = i32> + Clone,
    threads: &[usize],
) {
    let opts = PnOptions::default();
    for alg in ALL {
        for &threads in threads {
            for t in targets.clone() {
                let d =
                    parallel::decide_parallel(alg, g, s, t, &opts, threads, &Control::unlimited());
                assert_eq!(
                    d.verdict.as_bool(),
                    Some(value >= t),
                    "{alg:?} x{threads} at '{}' target {t}: value is {value}",
                    g.format_position(s)
                );
                if let Some(m) = d.best_move {
                    let mut c = s.clone();
                    g.apply(&mut c, m);
                    let v = to_root(g, s, &c, exact(g, &c));
                    assert!(
                        v >= t,
                        "{alg:?}: move {} does not reach {t}",
                        g.format_move(s, m)
                    );
                } else {
                    assert!(
                        value < t || g.is_terminal(s),
                        "{alg:?}: proved without a move"
                    );
                }
            }
        }
    }
}

fn to_root<G: ZeroSum>(g: &G, root: &G::State, s: &G::State, v: i32) -> i32 {
    if g.side(s) == g.side(root) {
        v
    } else {
        -v
    }
}

fn job(
    game: &str,
    params: &[(&str, &str)],
    position: &str,
    algorithm: &str,
    options: &[(&str, &str)],
) -> JobSpec {
    JobSpec::new(game, position, algorithm)
        .with_params(params)
        .with_options(options)
}

fn solve(j: &JobSpec) -> JobResult {
    let prepared = crate::registry::prepare(j).unwrap_or_else(|e| panic!("{j:?}: {e}"));
    crate::plan::run_local(prepared.as_ref(), &Control::unlimited())
        .unwrap_or_else(|e| panic!("{j:?}: {e}"))
}

#[test]
fn random_trees_agree_with_minimax() {
    for seed in 0..150 {
        let text = random_tree(seed, 7, 6);
        let t = Tree::parse(&text).unwrap();
        let v = minimax::minimax(&t, &0, None, &Control::unlimited())
            .unwrap()
            .value;
        let (lo, hi) = t.value_bounds(&0);
        check_decisions(
            &t,
            &0,
            v,
            lo - 1..=hi + 1,
            if seed % 10 == 0 { &[1, 2] } else { &[1] },
        );
        // The exact value through the registry and the planner's probes.
        if seed % 5 == 0 {
            let want = t.value_to_json(&0, v);
            for alg in ["pns", "dfpn", "pn2", "pdspn"] {
                let r = solve(&job("tree", &[], &text, alg, &[]));
                assert_eq!(r.value, want, "{alg} on tree {seed}");
                assert_eq!(r.extra["bounds"], serde_json::json!([want, want]));
            }
        }
    }
}

#[test]
fn tictactoe_is_a_draw_target_1_disproved_target_0_proved() {
    for alg in ["pns", "dfpn", "pn2", "pdspn"] {
        let r = solve(&job("tictactoe", &[], "", alg, &[("target", "1")]));
        assert_eq!(r.extra.to_map()["proved"], false, "{alg}");
        assert_eq!(r.value, serde_json::Value::Null);
        let r = solve(&job("tictactoe", &[], "", alg, &[("target", "0")]));
        assert_eq!(r.extra.to_map()["proved"], true, "{alg}");
        assert_eq!(r.extra["bounds"], serde_json::json!([0, 1]));
        let r = solve(&job("tictactoe", &[], "", alg, &[]));
        assert_eq!(r.value, 0, "{alg}");
        assert_eq!(r.extra["bounds"], serde_json::json!([0, 0]));
    }
}

/// Connect Four's internal scale (scores x 100) never shows outside: results, bounds and every
/// progress report of the probe plan are scores, whole numbers inside the game's range.
#[test]
fn connect4_values_are_scores_everywhere() {
    use std::sync::{Arc, Mutex};
    let whole = |v: &serde_json::Value, what: &str| {
        let n = v
            .as_i64()
            .unwrap_or_else(|| panic!("{what}: {v} is not a whole score"));
        assert!((-21..=21).contains(&n), "{what}: {n} is not a score");
        n
    };
    for alg in ["pns", "dfpn", "pn2", "pdspn"] {
        // "value >= 1" disproved: the upper bound is the draw, 0 (not 0.99).
        let r = solve(&job("connect4", &[], "44553", alg, &[("target", "1")]));
        assert_eq!(r.extra.to_map()["proved"], false, "{alg}");
        assert_eq!(r.extra["bounds"][1], 0, "{alg}: {r:?}");
        whole(&r.extra["bounds"][0], alg);
        // "value >= 0" proved at a position worth 1.
        let r = solve(&job("connect4", &[], "4455", alg, &[("target", "0")]));
        assert_eq!(r.extra.to_map()["proved"], true, "{alg}");
        assert_eq!(r.extra["bounds"][0], 0, "{alg}: {r:?}");
        whole(&r.extra["bounds"][1], alg);
        // The exact value: every progress report of the planner is in scores.
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let ctl = Control::unlimited().with_progress(Arc::new(move |p| {
            sink.lock().unwrap().push(p);
        }));
        let j = job("connect4", &[], "4455", alg, &[]);
        let prepared = crate::registry::prepare(&j).unwrap();
        let r = crate::plan::run_local(prepared.as_ref(), &ctl).unwrap();
        let v = whole(&r.value, alg);
        assert_eq!(r.extra["bounds"], serde_json::json!([v, v]), "{alg}");
        let seen = seen.lock().unwrap();
        let mut bounds = 0;
        for p in seen.iter().filter(|p| p.get("lower").is_some()) {
            let (lo, hi) = (whole(&p["lower"], alg), whole(&p["upper"], alg));
            assert!(lo <= v && v <= hi, "{alg}: {p}");
            bounds += 1;
        }
        assert!(bounds > 0, "{alg}: no bounds in the progress {seen:?}");
    }
}

#[test]
fn tictactoe_and_mnk_positions_agree_with_alphabeta() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let mut moves = Vec::new();
    for (g, every) in [
        (Mnk::tictactoe(), 1),
        (Mnk::new(4, 3, 3).unwrap(), 1),
        (Mnk::new(4, 4, 4).unwrap(), 3),
    ] {
        for i in 0..25 {
            let mut s = g.initial_state();
            let plies = if g.name() == "tictactoe" {
                rng.gen_range(0..7)
            } else {
                rng.gen_range(4..9)
            };
            for _ in 0..plies {
                g.legal_moves(&s, &mut moves);
                if moves.is_empty() {
                    break;
                }
                g.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
            }
            if i % every != 0 {
                continue;
            }
            let v = exact(&g, &s);
            check_decisions(&g, &s, v, -1..=2, &[1, (i % 4 == 0) as usize + 1]);
        }
    }
}

/// Allis's first example (Allis, van der Meulen and van den Herik 1994): a (White, OR) has
/// children b and c (Black, AND); in b White must win both e and f (d is already won), in c
/// only h is open (g is won): h is the most-proving node, and the root's numbers are (1, 2).
#[test]
fn seed_figure_most_proving_node_is_h() {
    let open = r#"{"max": [1, -1]}"#;
    let text = format!(
        r#"{{"max": [{{"min": [1, {open}, {open}], "labels": ["d", "e", "f"]}}, {{"min": [1, {open}], "labels": ["g", "h"]}}], "labels": ["b", "c"]}}"#
    );
    let t = Tree::parse(&text).unwrap();
    let target = t.parse_target(&0, "1").unwrap();
    for (current_node, remember_best) in
        [(true, true), (false, false), (true, false), (false, true)]
    {
        let opts = PnOptions {
            current_node,
            remember_best,
            ..PnOptions::default()
        };
        let mut pns = Pns::new(&t, &opts);
        // Expand a, then b, then c: the leftmost-tie rule picks b before c.
        let r = pns.search(
            &0,
            target,
            &Control::unlimited(),
            &mut Leaf::Rules,
            3,
            usize::MAX,
        );
        assert_eq!(r, Err(crate::search::StopReason::Nodes));
        let path: Vec<String> = {
            let mut s = 0u32;
            pns.most_proving_path()
                .into_iter()
                .map(|m| {
                    let name = t.format_move(&s, m);
                    t.apply(&mut s, m);
                    name
                })
                .collect()
        };
        assert_eq!(path, ["c", "h"]);
        assert_eq!(pns.root_numbers(), (1, 2));
    }
}

/// The optimisations of Allis's search change the work per iteration, never the nodes expanded.
#[test]
fn optimisations_do_not_change_the_search() {
    let g = Othello::new(4).unwrap();
    let s = g.parse_position("a2").unwrap();
    let mut counts = Vec::new();
    for bits in 0..8u32 {
        let opts = PnOptions {
            current_node: bits & 1 != 0,
            remember_best: bits & 2 != 0,
            delete_solved: bits & 4 != 0,
            ..PnOptions::default()
        };
        let d = Pns::new(&g, &opts).decide(&s, 0, &Control::unlimited());
        counts.push((d.verdict, d.expansions, d.nodes));
        if opts.delete_solved {
            // Freed subtrees: the tree never held every node it created.
            assert!(d.peak_nodes < d.nodes, "{opts:?}");
        }
    }
    assert!(counts.windows(2).all(|w| w[0] == w[1]), "{counts:?}");
}

/// 4 x 4 Othello solved exactly by every algorithm through the planner's probes, checked against
/// exhaustive minimax (no pruning: every node of the game tree).
#[test]
fn othello_4x4_solved_exactly_matches_minimax() {
    let g = Othello::new(4).unwrap();
    let s = g.initial_state();
    let m = minimax::minimax(&g, &s, None, &Control::unlimited()).unwrap();
    for alg in ["pns", "dfpn", "pn2", "pdspn"] {
        let r = solve(&job("othello", &[("size", "4")], "", alg, &[]));
        assert_eq!(r.value, m.value, "{alg}");
    }
    // Known: 4 x 4 Othello is a win for the second player (White).
    assert!(m.value < 0, "value {}", m.value);
}

#[test]
fn othello_positions_agree_with_alphabeta() {
    let g = Othello::new(4).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut moves = Vec::new();
    for _ in 0..6 {
        let mut s = g.initial_state();
        for _ in 0..rng.gen_range(1..6) {
            g.legal_moves(&s, &mut moves);
            if moves.is_empty() {
                break;
            }
            g.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
        }
        let v = exact(&g, &s);
        check_decisions(&g, &s, v, [v - 1, v, v + 1, v + 2].into_iter(), &[1, 2]);
    }
}

#[test]
fn memory_limit_is_a_result_not_a_crash() {
    for alg in ["pns", "pn2"] {
        let r = solve(&job(
            "othello",
            &[("size", "6")],
            "",
            alg,
            &[("target", "0"), ("memory_mb", "1")],
        ));
        assert_eq!(r.extra.stopped, Some(StopReason::Memory), "{alg}: {r:?}");
        assert_eq!(r.extra.to_map()["proved"], serde_json::Value::Null);
        assert!(r.extra.to_map()["error"]
            .as_str()
            .unwrap()
            .contains("memory limit"));
    }
    // In a probe plan (exact value) the job ends with the same clear result, not an error,
    // with the bounds known so far. PN² stops at its first-level budget too (it used to
    // re-expand for minutes under this budget before giving up).
    for alg in ["pns", "pn2"] {
        let r = solve(&job(
            "othello",
            &[("size", "6")],
            "",
            alg,
            &[("memory_mb", "1")],
        ));
        assert_eq!(r.extra.stopped, Some(StopReason::Memory), "{alg}: {r:?}");
        assert!(r.extra.to_map()["error"]
            .as_str()
            .unwrap()
            .contains("memory limit"));
        assert_eq!(r.value, serde_json::Value::Null, "{alg}");
        let b = r.extra["bounds"].as_array().unwrap();
        assert!(
            b[0].as_i64().unwrap() < b[1].as_i64().unwrap(),
            "{alg}: {r:?}"
        );
    }
    // A budget that fits: DeleteLeastProving keeps the search inside it and still decides.
    let g = Othello::new(4).unwrap();
    let s = g.initial_state();
    let full = Pns::new(&g, &PnOptions::default()).decide(&s, -4, &Control::unlimited());
    let opts = PnOptions {
        memory_mb: 1,
        ..PnOptions::default()
    };
    let budget = (full.peak_nodes * 3 / 4) as usize;
    let mut small = Pns::with_max_nodes(&g, &opts, budget);
    let d = small.decide(&s, -4, &Control::unlimited());
    assert_eq!(d.verdict, full.verdict);
    assert!(
        d.peak_nodes <= budget as u64 && d.expansions > full.expansions,
        "{d:?} vs {full:?}"
    );
}

#[test]
fn bad_options_are_one_line_errors() {
    for (opts, want) in [
        (vec![("target", "x")], "target"),
        (vec![("memory_mb", "0")], "memory_mb"),
        (vec![("threads", "0")], "threads"),
        (vec![("proof", "true")], "needs 'target'"),
        (
            vec![("target", "0"), ("proof", "/tmp/x")],
            "option 'proof' takes true or false",
        ),
        (vec![("threads", "257")], "threads=257"),
        (vec![("memory_mb", "1048577")], "memory_mb=1048577"),
        (vec![("target", "99999999999")], "target"),
        (vec![("epsilon", "1")], "unknown option 'epsilon'"),
        (vec![("depth", "3")], "depth"),
    ] {
        let e = crate::registry::prepare(&job("tictactoe", &[], "", "pns", &opts))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains(want) && !e.contains('\n'), "{opts:?}: {e}");
    }
    assert!(
        crate::registry::prepare(&job("tictactoe", &[], "", "dfpn", &[("epsilon", "0")])).is_ok()
    );
}

/// Replaces every `step`-th move token by each alternative: verification must fail every time.
fn tamper_all(file: &proof::ProofFile, alternatives: &[&str], step: usize) -> usize {
    let mut checked = 0;
    for (i, tok) in file.tree.iter().enumerate().step_by(step) {
        let Some(text) = tok.as_str() else { continue };
        if text.len() == 16 && text.chars().all(|c| c.is_ascii_hexdigit()) {
            continue; // a position hash, not a move
        }
        for alt in alternatives.iter().filter(|a| **a != text) {
            let mut bad = file.clone();
            bad.tree[i] = (*alt).into();
            assert!(
                certificate::verify(&bad).is_err(),
                "token {i} '{text}' -> '{alt}' still verifies"
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn proofs_verify_and_tampered_proofs_fail() {
    let cells: Vec<String> = (1..=9).map(|c| c.to_string()).collect();
    let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
    for (target, claim, alg) in [
        ("0", Claim::AtLeast, "pns"),
        ("1", Claim::Below, "dfpn"),
        ("0", Claim::AtLeast, "pn2"),
        ("1", Claim::Below, "pdspn"),
    ] {
        let r = solve(&job(
            "tictactoe",
            &[],
            "5",
            alg,
            &[("target", target), ("proof", "true")],
        ));
        assert!(!r.extra.contains_key("proof"));
        let cert = r.proof.expect("a certificate in the result");
        let c = certificate::verify_proof_value(&cert).unwrap();
        assert_eq!(
            certificate::verify_proof_text(&cert.to_string()).unwrap(),
            c,
            "the text form verifies the same"
        );
        assert_eq!(c.claim, claim);
        // After X's centre, O to move holds the draw: value (O's view) >= 0 and < 1.
        match claim {
            Claim::AtLeast => assert_eq!(c.lower, Some(serde_json::json!(0))),
            Claim::Below => assert_eq!(c.below, Some(serde_json::json!(1))),
        }
        let file: proof::ProofFile = serde_json::from_value(cert).unwrap();
        assert!(tamper_all(&file, &cells, 1) > 100);
        // A wrong claim fails too.
        let mut wrong = file.clone();
        wrong.target += if claim == Claim::AtLeast { 1 } else { -1 };
        assert!(certificate::verify(&wrong).is_err());
    }
    // Othello 4 x 4, a win for White by the minimax value: certify it and tamper a few moves.
    let g = Othello::new(4).unwrap();
    let v = exact(&g, &g.initial_state());
    let t = v.to_string();
    let r = solve(&job(
        "othello",
        &[("size", "4")],
        "",
        "dfpn",
        &[("target", &t), ("proof", "true")],
    ));
    assert_eq!(r.extra.to_map()["proved"], true);
    let cert = r.proof.expect("a certificate in the result");
    let c = certificate::verify_proof_value(&cert).unwrap();
    assert_eq!(c.lower, Some(serde_json::json!(v)));
    let file: proof::ProofFile = serde_json::from_value(cert).unwrap();
    let squares = ["a1", "b2", "c3", "d4", "a4", "d1", "--"];
    // Each verification walks the whole proof: tamper a sample of its tokens.
    let step = (file.tree.len() / 40).max(1);
    assert!(tamper_all(&file, &squares, step) > 50);
    assert!(certificate::verify_proof_file("/nonexistent/proof.json")
        .unwrap_err()
        .contains("cannot read"));
}

/// A certificate that does not fit its budget ends the build with one line naming the limit,
/// as soon as the tree passes it; through a job, the decision stands and the result says
/// `stopped: "memory"` with the reason; a cancel ends a long build at once.
#[test]
fn proof_certificates_stay_within_their_budget() {
    use super::certify::{build_proof, build_proof_within, NoProof, ProofBudget};
    let g = Othello::new(4).unwrap();
    let s = g.initial_state();
    let v = exact(&g, &s);
    let opts = PnOptions {
        memory_mb: 16,
        ..PnOptions::default()
    };
    let ctl = Control::unlimited();
    let tree = build_proof(&g, &s, Claim::AtLeast, v, &opts, &ctl).unwrap();
    let json = serde_json::to_string(&tree).unwrap().len();
    assert!(proof::check(&g, &s, Claim::AtLeast, v, &tree).is_ok());
    // Just enough JSON: built. One byte less than its tokens take: refused, in one line.
    let budget = |memory_mb, json_bytes| ProofBudget {
        memory_mb,
        json_bytes,
    };
    let again = build_proof_within(&g, &s, Claim::AtLeast, v, &opts, budget(16, json), &ctl);
    assert_eq!(again.as_ref().map(Vec::len), Ok(tree.len()));
    match build_proof_within(&g, &s, Claim::AtLeast, v, &opts, budget(16, json / 2), &ctl) {
        Err(NoProof::TooLarge(why)) => {
            assert!(why.contains("size limit") && !why.contains('\n'), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // Memory: a proof tree far larger than half of 1 MiB (Connect Four 5 x 4 from the start).
    let c4 = crate::games::connect4::Connect4::<u64>::new(5, 4, 1).unwrap();
    let start = c4.initial_state();
    let small = PnOptions {
        memory_mb: 1,
        ..PnOptions::default()
    };
    let holds = decide(Algorithm::Dfpn, &c4, &start, 0, &opts, &ctl).verdict == Verdict::Proved;
    let claim = if holds { Claim::AtLeast } else { Claim::Below };
    match build_proof(&c4, &start, claim, 0, &small, &ctl) {
        Err(NoProof::TooLarge(why)) => {
            assert!(why.contains("memory_mb=1 MiB"), "{why}")
        }
        other => panic!("a 5 x 4 proof in 1 MiB: {:?}", other.map(|t| t.len())),
    }
    // Through a job: the decision with the reason, no certificate.
    let r = solve(&job(
        "connect4",
        &[("width", "5"), ("height", "4")],
        "",
        "dfpn",
        &[("target", "0"), ("proof", "true"), ("memory_mb", "1")],
    ));
    assert!(r.proof.is_none());
    let m = r.extra.to_map();
    assert_eq!(m["proved"], holds, "{m:?}");
    assert_eq!(m["stopped"], "memory", "{m:?}");
    let why = m["error"].as_str().unwrap();
    assert!(why.starts_with("proof certificate: memory limit") && !why.contains('\n'));
    // A cancel ends a long build (the README's Connect Four position, "value >= -2": decided in
    // about a second, its proof tree is millions of positions) within the poll interval, in
    // the decision or in the walk.
    let c7 = crate::games::connect4::Connect4::<u64>::new(7, 6, 1).unwrap();
    let readme = c7.parse_position("335662333565").unwrap();
    let cancel = Control::unlimited();
    let stop = cancel.clone();
    let big = PnOptions {
        memory_mb: 4096,
        ..PnOptions::default()
    };
    let late = std::thread::scope(|scope| {
        let at = scope.spawn(|| {
            // Early enough that no machine reaches the certificate's 64 MiB cap first (a quiet
            // one writes that much in under 2 s).
            std::thread::sleep(std::time::Duration::from_millis(300));
            stop.cancel();
            std::time::Instant::now()
        });
        let r = build_proof(&c7, &readme, Claim::AtLeast, -200, &big, &cancel);
        let ended = std::time::Instant::now();
        assert_eq!(r, Err(NoProof::Stopped(StopReason::Cancelled)));
        ended.duration_since(at.join().unwrap())
    });
    assert!(
        late < std::time::Duration::from_millis(500),
        "the build went on for {late:?} after the cancel"
    );
}

#[test]
fn parallel_root_splitting_agrees() {
    let g = Othello::new(4).unwrap();
    let s = g.parse_position("a2").unwrap();
    let v = exact(&g, &s);
    for alg in ALL {
        for threads in [2, 3] {
            for t in [v, v + 1] {
                let d = parallel::decide_parallel(
                    alg,
                    &g,
                    &s,
                    t,
                    &PnOptions::default(),
                    threads,
                    &Control::unlimited(),
                );
                assert_eq!(
                    d.verdict.as_bool(),
                    Some(v >= t),
                    "{alg:?} x{threads} t={t}"
                );
            }
        }
    }
}
