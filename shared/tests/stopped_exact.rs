//! A limit that stops an exact search (alpha-beta without `depth`) still gets an answer: the
//! bounds proved so far, `value: null`, `stopped`, and the best move the search knows, legal at
//! the root. Node limits make the runs deterministic.

use gamesolver_shared::model::Game;
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::{JobResult, JobSpec, StopReason};

fn run(game: &str, position: &str, nodes: Option<u64>) -> JobResult {
    let mut job = JobSpec::new(game, position, "alphabeta");
    job.limits.node_limit = nodes;
    let p = prepare(&job).expect("a valid job");
    run_local(p.as_ref(), &Control::unlimited()).expect("a stopped exact job still answers")
}

/// The bounds of a result as integers.
fn bounds(r: &JobResult) -> (i64, i64) {
    let b = r.extra["bounds"].as_array().expect("bounds");
    (b[0].as_i64().expect("lower"), b[1].as_i64().expect("upper"))
}

/// Checks the shape of a stopped answer and that its move is legal at the root.
fn check_stopped<G: Game>(game: &G, position: &str, r: &JobResult) {
    assert_eq!(r.extra.stopped, Some(StopReason::Nodes), "{r:?}");
    assert_eq!(r.value, serde_json::Value::Null, "{r:?}");
    let (lo, hi) = bounds(r);
    assert!(lo < hi, "{r:?}");
    let mv = r
        .best_move
        .as_deref()
        .expect("a stopped search names a move");
    let root = game.parse_position(position).expect("position");
    assert!(game.parse_move(&root, mv).is_ok(), "{mv} is illegal: {r:?}");
}

#[test]
fn stopped_othello_answers_with_a_move() {
    let g = gamesolver_shared::games::othello::Othello::new(8).expect("8 x 8");
    for budget in [2_000, 200_000] {
        let r = run("othello", "", Some(budget));
        check_stopped(&g, "", &r);
        // Deterministic: the same budget gives the same answer.
        let again = run("othello", "", Some(budget));
        assert_eq!(
            (&again.best_move, &again.extra["bounds"], again.nodes),
            (&r.best_move, &r.extra["bounds"], r.nodes)
        );
    }
    // No probe failed high within 2,000 nodes: the move comes from a depth-limited search.
    let r = run("othello", "", Some(2_000));
    assert!(
        r.extra["best_move_depth"].as_u64().expect("a depth") >= 1,
        "{r:?}"
    );
}

#[test]
fn stopped_connect4_answers_with_a_move_inside_proved_bounds() {
    let g = gamesolver_shared::games::connect4::Connect4::<u64>::new(7, 6, 1).expect("7 x 6");
    // Pons' set position: its exact value lies inside the bounds of every stopped run.
    let position = "335662333565";
    let exact = run("connect4", position, None)
        .value
        .as_i64()
        .expect("a value");
    for budget in [1_000, 20_000, 200_000] {
        let r = run("connect4", position, Some(budget));
        if r.value.is_null() {
            check_stopped(&g, position, &r);
            let (lo, hi) = bounds(&r);
            assert!(lo <= exact && exact <= hi, "{r:?}, exact {exact}");
        }
    }
    // The empty board cannot be solved in 50,000 nodes.
    let r = run("connect4", "", Some(50_000));
    check_stopped(&g, "", &r);
}
