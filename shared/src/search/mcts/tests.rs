//! Kernel tests: determinism, MCTS-Solver against exact search, accuracy against minimax,
//! chance nodes, more than two players, root parallelisation, limits and progress.

use super::*;
use crate::games::mnk::Mnk;
use crate::games::tree::Tree;
use crate::model::{to_parent, ZeroSum};
use crate::search::minimax::minimax;
use rand::Rng as _;

/// The moves of `state` that keep its exact minimax value, and that value.
fn optimal_moves<G: ZeroSum>(g: &G, s: &G::State) -> (i32, Vec<G::Move>) {
    let exact = minimax(g, s, None, &Control::unlimited()).unwrap().value;
    let mut moves = Vec::new();
    g.legal_moves(s, &mut moves);
    let side = g.side(s);
    let good = moves
        .into_iter()
        .filter(|&m| {
            let mut c = s.clone();
            g.apply(&mut c, m);
            let v = minimax(g, &c, None, &Control::unlimited()).unwrap().value;
            to_parent(side, g.side(&c), v) == exact
        })
        .collect();
    (exact, good)
}

/// Random positions reached by `plies` random moves (non-terminal ones only).
fn random_positions(
    g: &Mnk,
    count: usize,
    plies: std::ops::Range<usize>,
    seed: u64,
) -> Vec<<Mnk as Game>::State> {
    let mut rng = Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut moves = Vec::new();
    while out.len() < count {
        let mut s = g.initial_state();
        for _ in 0..rng.gen_range(plies.clone()) {
            g.legal_moves(&s, &mut moves);
            if moves.is_empty() {
                break;
            }
            g.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
        }
        if !g.is_terminal(&s) {
            out.push(s);
        }
    }
    out
}

fn cfg(playouts: u64, seed: u64) -> Config {
    let mut c = Config::new(Some(playouts));
    c.seed = seed;
    c
}

#[test]
fn deterministic_for_a_fixed_seed() {
    let g = Mnk::new(4, 4, 3).unwrap();
    let s = g.initial_state();
    let a = mcts(&g, &s, &cfg(3000, 7), &Control::unlimited());
    let b = mcts(&g, &s, &cfg(3000, 7), &Control::unlimited());
    let c = mcts(&g, &s, &cfg(3000, 8), &Control::unlimited());
    assert_eq!(a, b);
    assert_ne!(a.visits, c.visits, "another seed gives other playouts");
    assert_eq!(a.playouts, 3000);
    assert_eq!(a.visits.iter().sum::<u64>(), 3000);
    // Several trees on several threads: still the same result for the same seed.
    let mut four = cfg(4000, 7);
    four.trees = 4;
    assert_eq!(
        mcts(&g, &s, &four, &Control::unlimited()),
        mcts(&g, &s, &four, &Control::unlimited())
    );
}

/// Every root the solver proves has the value that minimax finds, and positions with a short
/// forced result (here: every tic-tac-toe position with at least 5 stones) are proven.
#[test]
fn solver_proofs_agree_with_minimax_on_tictactoe() {
    let g = Mnk::tictactoe();
    let mut proven = 0;
    for (i, s) in random_positions(&g, 150, 2..8, 11).iter().enumerate() {
        let (exact, good) = optimal_moves(&g, s);
        let out = mcts(&g, s, &cfg(20_000, i as u64), &Control::unlimited());
        let text = g.format_position(s);
        let Some(v) = out.root_proven else {
            assert!(
                text.len() < 5,
                "'{text}' with a short solution was not proven"
            );
            continue;
        };
        proven += 1;
        let side = g.side(s);
        let for_side = if side == 0 { v } else { 1.0 - v };
        assert_eq!(
            for_side,
            (exact as f64 + 1.0) / 2.0,
            "'{text}': proven {for_side}, exact {exact}"
        );
        let best = out.moves[out.best(Merge::Sum).unwrap()];
        assert!(
            good.contains(&best),
            "'{text}': proven root plays a non-optimal {best}"
        );
        assert!(out.playouts < 20_000, "a solved root stops early");
    }
    assert!(proven >= 100, "only {proven} of 150 proven");
}

/// On m,n,k boards larger than tic-tac-toe, proofs agree with minimax as well (3,4,3: a first-
/// player win; positions with a few stones keep minimax quick).
#[test]
fn solver_proofs_agree_with_minimax_on_mnk() {
    let g = Mnk::new(3, 4, 3).unwrap();
    let mut proven = 0;
    for (i, s) in random_positions(&g, 40, 4..9, 5).iter().enumerate() {
        let (exact, _) = optimal_moves(&g, s);
        let out = mcts(&g, s, &cfg(30_000, i as u64), &Control::unlimited());
        if let Some(v) = out.root_proven {
            proven += 1;
            let for_side = if g.side(s) == 0 { v } else { 1.0 - v };
            assert_eq!(
                for_side,
                (exact as f64 + 1.0) / 2.0,
                "{}",
                g.format_position(s)
            );
        }
    }
    assert!(proven >= 20, "only {proven} of 40 proven");
}

/// A random min/max tree JSON with leaves drawn from `leaves`.
fn random_tree(rng: &mut Rng, depth: u32, leaves: &[i32]) -> String {
    if depth == 0 || rng.gen_ratio(1, 6) {
        return leaves[rng.gen_range(0..leaves.len())].to_string();
    }
    let kind = if rng.gen_bool(0.5) { "max" } else { "min" };
    let n = rng.gen_range(1..=4);
    let kids: Vec<String> = (0..n)
        .map(|_| random_tree(rng, depth - 1, leaves))
        .collect();
    format!("{{\"{kind}\": [{}]}}", kids.join(","))
}

fn tree_rewards(t: &Tree) -> Rewards {
    let (lo, hi) = t.utility_range();
    Rewards::Scaled {
        lower: vec![lo, -hi],
        upper: vec![hi, -lo],
    }
}

/// MCTS-Solver on random explicit min/max trees. With win/loss leaves (+1/-1) every root is
/// proven and the proof is the minimax value. With general leaves a proof needs every
/// child of a node proven unless one reaches the best possible leaf, and UCB starves poor
/// subtrees (visits grow like ln N at every level), so only about a third of the roots are
/// proven in 100,000 playouts (53 of 150 with these seeds); every proof is the minimax value.
#[test]
fn solver_finds_the_minimax_value_of_random_trees() {
    let mut rng = Rng::seed_from_u64(42);
    let general: Vec<i32> = (-20..=20).collect();
    let mut proven_general = 0;
    for case in 0..300 {
        let win_loss = case % 2 == 0;
        let text = random_tree(&mut rng, 6, if win_loss { &[-1, 1] } else { &general });
        let t = Tree::parse(&text).unwrap();
        if t.is_terminal(&0) {
            continue;
        }
        let exact = minimax(&t, &0, None, &Control::unlimited()).unwrap();
        let exact = t.value_to_json(&0, exact.value).as_f64().unwrap();
        let mut c = cfg(100_000, case);
        c.rewards = tree_rewards(&t);
        let out = mcts_stochastic(&t, &0, &c, &Control::unlimited());
        let Some(v) = out.root_proven else {
            assert!(
                !win_loss,
                "case {case}: not proven in {} playouts: {text}",
                out.playouts
            );
            continue;
        };
        proven_general += usize::from(!win_loss);
        let value = c.rewards.to_return(0, v);
        assert!(
            (value - exact).abs() < 1e-9,
            "case {case}: proven {value}, minimax {exact}: {text}"
        );
    }
    assert!(
        proven_general >= 40,
        "only {proven_general} of 150 general trees proven"
    );
}

/// UCT without the solver on tic-tac-toe positions with a known best move set: the share of
/// optimal choices grows with the budget, and is high with enough playouts.
#[test]
fn accuracy_grows_with_playouts_on_tictactoe() {
    let g = Mnk::tictactoe();
    let cases: Vec<_> = random_positions(&g, 400, 1..6, 3)
        .into_iter()
        .map(|s| {
            let (_, good) = optimal_moves(&g, &s);
            (s, good)
        })
        .filter(|(s, good)| {
            let mut all = Vec::new();
            g.legal_moves(s, &mut all);
            good.len() < all.len()
        })
        .take(60)
        .collect();
    assert_eq!(cases.len(), 60);
    let mut shares = Vec::new();
    for budget in [20u64, 200, 2000] {
        let mut right = 0;
        for (i, (s, good)) in cases.iter().enumerate() {
            let mut c = cfg(budget, i as u64);
            c.solver = false;
            let out = mcts(&g, s, &c, &Control::unlimited());
            right += good.contains(&out.moves[out.best(Merge::Sum).unwrap()]) as usize;
        }
        shares.push(right as f64 / cases.len() as f64);
    }
    assert!(
        shares[0] < shares[1] && shares[1] <= shares[2],
        "{shares:?}"
    );
    assert!(shares[2] >= 0.9, "{shares:?}");
}

/// Chance outcomes drawn with their true probabilities estimate the expectation.
/// A: 0 with 0.9, 10 with 0.1 (mean 1); B: 3 or 4 (mean 3.5). True probabilities choose B;
/// equally likely outcomes would value A at 5 and choose it.
#[test]
fn chance_nodes_follow_their_probabilities() {
    let t = Tree::parse(r#"{"max": [{"chance": [[0.9, 0], [0.1, 10]]}, {"chance": [[0.5, 3], [0.5, 4]]}], "labels": ["A", "B"]}"#).unwrap();
    let mut c = cfg(20_000, 1);
    c.rewards = tree_rewards(&t);
    let out = mcts_stochastic(&t, &0, &c, &Control::unlimited());
    assert_eq!(
        t.format_move(&0, out.moves[out.best(Merge::Sum).unwrap()]),
        "B"
    );
    let value = c.rewards.to_return(0, out.mean_reward(0).unwrap());
    assert!(value > 3.0 && value < 3.5, "value {value}");
    let uniform = mcts(&t, &0, &c, &Control::unlimited());
    assert_eq!(
        t.format_move(&0, uniform.moves[uniform.best(Merge::Sum).unwrap()]),
        "A"
    );
    // A chance node at the root: no move to choose, and the mean is the expectation 1.
    let t = Tree::parse(r#"{"chance": [[0.9, 0], [0.1, 10]]}"#).unwrap();
    c.rewards = tree_rewards(&t);
    let out = mcts_stochastic(&t, &0, &c, &Control::unlimited());
    assert_eq!(out.best(Merge::Sum), None);
    let value = c.rewards.to_return(0, out.mean_reward(0).unwrap());
    assert!((value - 1.0).abs() < 0.1, "value {value}");
}

/// Three players, per-player rewards: player 1 answers in its own interest (max^n), so player 0
/// prefers the left subtree (it gets 4) although the right one has the better average for it.
#[test]
fn more_than_two_players_back_up_their_own_rewards() {
    let t = Tree::parse(
        r#"{"player": 0, "children": [
            {"player": 1, "children": [{"utility": [1, 2, 3]}, {"utility": [4, 3, 0]}]},
            {"player": 1, "children": [{"utility": [2, 1, 5]}, {"utility": [6, 0, 1]}]}]}"#,
    )
    .unwrap();
    let mut lower = Vec::new();
    let mut upper = Vec::new();
    for p in 0..3 {
        let us = [[1., 2., 3.], [4., 3., 0.], [2., 1., 5.], [6., 0., 1.]].map(|u| u[p]);
        lower.push(us.iter().copied().fold(f64::INFINITY, f64::min));
        upper.push(us.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    }
    let mut c = cfg(5_000, 3);
    c.rewards = Rewards::Scaled { lower, upper };
    let out = mcts_stochastic(&t, &0, &c, &Control::unlimited());
    assert_eq!(out.best(Merge::Sum), Some(0), "{out:?}");
    assert_eq!(out.root_proven, None, "no solver with three players");
    let v1 = c.rewards.to_return(1, out.mean_reward(1).unwrap());
    assert!(v1 > 2.5, "player 1 mostly gets 3: {v1}");
}

/// Root parallelisation: trees split into groups (as tasks on separate workers) and merged give
/// exactly the statistics of one call with all trees; visits sum to the playouts; every tree
/// votes once.
#[test]
fn root_parallel_trees_merge_by_summing_and_voting() {
    let g = Mnk::new(4, 4, 3).unwrap();
    let s = g.initial_state();
    let mut c = cfg(8_000, 5);
    c.trees = 4;
    c.solver = false;
    let ctl = Control::unlimited();
    let all = mcts(&g, &s, &c, &ctl);
    assert_eq!(all.trees, 4);
    assert_eq!(all.playouts, 8_000);
    assert_eq!(all.visits.iter().sum::<u64>(), 8_000);
    assert_eq!(all.votes.iter().sum::<u32>(), 4);
    let mut split = run_trees(
        &g,
        &s,
        &c,
        0..1,
        &UniformChance::default(),
        &RandomPlayout,
        &ctl,
    );
    split.merge(&run_trees(
        &g,
        &s,
        &c,
        1..4,
        &UniformChance::default(),
        &RandomPlayout,
        &ctl,
    ));
    assert_eq!(split, all);
    // Each tree alone is the tree of that index.
    let mut one = c.clone();
    one.trees = 4;
    let t2 = run_trees(
        &g,
        &s,
        &one,
        2..3,
        &UniformChance::default(),
        &RandomPlayout,
        &ctl,
    );
    assert_eq!(t2.playouts, 2_000);
    let vote = all.best(Merge::Vote).unwrap();
    assert_eq!(all.votes[vote], *all.votes.iter().max().unwrap());
}

#[test]
fn limits_stop_the_search_with_a_reason() {
    let g = Mnk::new(9, 9, 5).unwrap();
    let s = g.initial_state();
    let ctl = Control::with_limits(Some(Duration::from_millis(50)), None);
    let t0 = Instant::now();
    let out = mcts(&g, &s, &Config::new(None), &ctl);
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert_eq!(out.stopped.as_deref(), Some("time"));
    assert!(out.playouts > 0);
    let mut small = Config::new(Some(1_000_000));
    small.max_nodes = 2_000;
    let out = mcts(&g, &s, &small, &Control::unlimited());
    assert_eq!(out.stopped.as_deref(), Some("memory"));
    assert!(out.nodes <= 2_000);
    let ctl = Control::with_limits(None, Some(1000));
    let out = mcts(&g, &s, &Config::new(None), &ctl);
    assert_eq!(out.stopped.as_deref(), Some("nodes"));
    assert_eq!(
        out.playouts, 1024,
        "node limits are checked every {CHECK_EVERY} playouts"
    );
    // A terminal root: nothing to do.
    let t = Mnk::tictactoe();
    let over = t.parse_position("14253").unwrap();
    let out = mcts(&t, &over, &Config::new(Some(100)), &Control::unlimited());
    assert_eq!((out.playouts, out.best(Merge::Sum)), (0, None));
}

#[test]
fn progress_reports_playouts_and_root_visits() {
    let g = Mnk::new(4, 4, 3).unwrap();
    let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let ctl = Control::unlimited().with_progress(std::sync::Arc::new(move |v| sink.lock().push(v)));
    let mut c = cfg(20_000, 1);
    c.solver = false;
    mcts(&g, &g.initial_state(), &c, &ctl);
    let seen = seen.lock();
    let first = seen.first().expect("at least one report");
    assert_eq!(first["playouts"], PROGRESS_EVERY);
    assert_eq!(first["visits"].as_object().unwrap().len(), 16);
    let sum: u64 = first["visits"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(sum, PROGRESS_EVERY);
}

mod connect4 {
    //! Connect Four positions from Pons' end-game test set (`Test_L3_R1`), whose scores are
    //! published; the outcome class of every move comes from null-window alpha-beta and is
    //! checked against the file.

    use super::*;
    use crate::games::connect4::Connect4;
    use crate::search::alphabeta::alphabeta;
    use std::path::PathBuf;

    type State = <Connect4 as Game>::State;

    fn data_dir() -> PathBuf {
        crate::games::data::data_dir()
    }

    /// The first `count` positions of `Test_L3_R1` with their published score, the outcome
    /// class (-1, 0, 1) of every legal move for the side to move, and the moves keeping the
    /// position's class.
    fn positions(g: &Connect4, count: usize) -> Vec<(State, i32, Vec<u8>, Vec<u8>)> {
        let path = data_dir().join("connect4/Test_L3_R1");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut out = Vec::new();
        let mut moves = Vec::new();
        for line in text.lines().take(count) {
            let (pos, score) = line.split_once(' ').unwrap();
            let s = g.parse_position(pos).unwrap();
            let score: i32 = score.trim().parse().unwrap();
            g.legal_moves(&s, &mut moves);
            let classes: Vec<i32> = moves
                .iter()
                .map(|&m| {
                    let mut c = s;
                    g.apply(&mut c, m);
                    let v = if g.is_terminal(&c) {
                        g.terminal_value(&c)
                    } else {
                        alphabeta(g, &c, -1, 1, None, true, &Control::unlimited())
                            .unwrap()
                            .value
                    };
                    -v.signum()
                })
                .collect();
            let best = *classes.iter().max().unwrap();
            assert_eq!(
                best,
                score.signum(),
                "{pos}: alpha-beta disagrees with the published score"
            );
            let good = moves
                .iter()
                .zip(&classes)
                .filter(|(_, &c)| c == best)
                .map(|(&m, _)| m)
                .collect();
            out.push((s, score, moves.clone(), good));
        }
        out
    }

    /// UCT (solver off) picks a move that keeps the position's outcome in most cases, more
    /// often with more playouts (measured: 0.75, 0.96, 0.99 on these 100 positions).
    #[test]
    fn accuracy_grows_with_playouts() {
        let g = Connect4::new(7, 6, 1).unwrap();
        let cases: Vec<_> = positions(&g, 250)
            .into_iter()
            .filter(|(_, _, all, good)| good.len() < all.len())
            .take(100)
            .collect();
        assert_eq!(cases.len(), 100);
        let mut shares = Vec::new();
        for budget in [10u64, 100, 1000] {
            let mut right = 0;
            for (i, (s, _, _, good)) in cases.iter().enumerate() {
                let mut c = cfg(budget, i as u64);
                c.solver = false;
                let out = mcts(&g, s, &c, &Control::unlimited());
                right += usize::from(good.contains(&out.moves[out.best(Merge::Sum).unwrap()]));
            }
            shares.push(right as f64 / cases.len() as f64);
        }
        assert!(shares[0] < shares[1] && shares[1] < shares[2], "{shares:?}");
        assert!(shares[2] >= 0.95, "{shares:?}");
    }

    /// MCTS-Solver proves most end-game positions; each proof agrees with the published score,
    /// and a proven root plays a move that keeps the outcome.
    #[test]
    fn solver_proofs_agree_with_published_scores() {
        let g = Connect4::new(7, 6, 1).unwrap();
        let cases = positions(&g, 100);
        let mut proven = 0;
        for (i, (s, score, _, good)) in cases.iter().enumerate() {
            let out = mcts(&g, s, &cfg(20_000, i as u64), &Control::unlimited());
            let Some(v) = out.root_proven else { continue };
            proven += 1;
            let for_side = if g.side(s) == 0 { v } else { 1.0 - v };
            let class = (for_side * 2.0) as i32 - 1;
            assert_eq!(
                class,
                score.signum(),
                "{}: proven {for_side}, published {score}",
                g.format_position(s)
            );
            assert!(good.contains(&out.moves[out.best(Merge::Sum).unwrap()]));
        }
        assert!(proven >= 80, "only {proven} of 100 proven");
    }
}
