use super::*;
use crate::model::battery;
use crate::plan::run_local;
use crate::registry::prepare;
use crate::search::Control;
use crate::wire::JobSpec;

/// Plain negamax over the whole game: the reference the kernels are checked against.
fn negamax(g: &Nim, s: &NimState) -> i32 {
    if g.is_terminal(s) {
        return g.terminal_value(s);
    }
    let mut moves = Vec::new();
    g.legal_moves(s, &mut moves);
    moves
        .iter()
        .map(|&m| {
            let mut c = *s;
            g.apply(&mut c, m);
            -negamax(g, &c)
        })
        .max()
        .expect("a non-terminal position has moves")
}

/// Bouton: the side to move wins exactly when the xor of the heaps is not 0.
fn bouton(s: &NimState) -> i32 {
    if s.heaps().iter().fold(0, |x, &h| x ^ h) != 0 {
        1
    } else {
        -1
    }
}

/// Every position with up to three heaps of up to `max` stones.
fn positions(max: u8) -> Vec<String> {
    let mut out = Vec::new();
    for a in 0..=max {
        for b in 0..=max {
            for c in 0..=max {
                out.push(format!("{a},{b},{c}"));
            }
        }
    }
    out
}

#[test]
fn battery() {
    for heaps in ["3,4,5", "1", "0,7", "2,2,2,2,2,2,2,2"] {
        let g = Nim::new(heaps).unwrap();
        let s = g.initial_state();
        battery::check_game(&g, &s, 200, 1);
        battery::check_hashed(&g, &s, 200, 2);
        battery::check_zero_sum(&g, &s, 200, 3);
    }
}

#[test]
fn notation_and_bounds() {
    let g = Nim::new("3,4,5").unwrap();
    let s = g.parse_position("1,0,5/1").unwrap();
    assert_eq!(s.heaps(), &[1, 0, 5]);
    assert_eq!(g.side(&s), 1);
    assert_eq!(g.format_position(&s), "1,0,5/1");
    assert_eq!(g.format_move(&s, g.parse_move(&s, "3:5").unwrap()), "3:5");
    assert!(g.parse_move(&s, "2:1").is_err());
    assert!(g.parse_move(&s, "4:1").is_err());
    assert!(g.parse_position("32").is_err());
    assert!(g.parse_position("1,2/2").is_err());
    assert!(Nim::new("1,1,1,1,1,1,1,1,1").is_err());
}

/// Plain negamax agrees with Bouton's rule on every position of three heaps of up to 4.
#[test]
fn negamax_follows_bouton() {
    let g = Nim::new("0").unwrap();
    for p in positions(4) {
        let s = g.parse_position(&p).unwrap();
        assert_eq!(negamax(&g, &s), bouton(&s), "'{p}'");
    }
}

/// alphabeta, minimax, pns and dfpn through the registry give Bouton's value on every position
/// of three heaps of up to 3, and any best move they give in a won position wins.
#[test]
fn exact_kernels_follow_bouton() {
    let g = Nim::new("0").unwrap();
    for algorithm in ["alphabeta", "minimax", "pns", "dfpn"] {
        for p in positions(3) {
            let s = g.parse_position(&p).unwrap();
            let truth = bouton(&s);
            let job = JobSpec::new("nim", &p, algorithm);
            let prepared = prepare(&job).unwrap_or_else(|e| panic!("{algorithm} '{p}': {e}"));
            let r = run_local(prepared.as_ref(), &Control::unlimited()).unwrap();
            let proven = r.value.as_i64().map(|v| v as i32);
            assert_eq!(proven, Some(truth), "{algorithm} '{p}': {:?}", r.value);
            if let (1, Some(mv)) = (truth, r.best_move.as_deref()) {
                let mut c = s;
                g.apply(&mut c, g.parse_move(&s, mv).unwrap());
                assert_eq!(bouton(&c), -1, "{algorithm} '{p}': {mv} does not win");
            }
        }
    }
}

/// MCTS with its solver proves the value of small positions.
#[test]
fn mcts_solves_small_positions() {
    let g = Nim::new("0").unwrap();
    for p in positions(2) {
        let s = g.parse_position(&p).unwrap();
        if g.is_terminal(&s) {
            continue;
        }
        let job = JobSpec::new("nim", &p, "mcts").with_options(&[("playouts", "3000")]);
        let r = run_local(prepare(&job).unwrap().as_ref(), &Control::unlimited()).unwrap();
        assert_eq!(r.value, serde_json::json!(bouton(&s)), "mcts '{p}': {r:?}");
    }
}

/// The `heaps` parameter sets the start; bad heaps are bad input.
#[test]
fn heaps_parameter() {
    let job = JobSpec::new("nim", "", "alphabeta").with_params(&[("heaps", "1,2,3")]);
    let r = run_local(prepare(&job).unwrap().as_ref(), &Control::unlimited()).unwrap();
    assert_eq!(r.value, serde_json::json!(-1));
    let job = JobSpec::new("nim", "", "alphabeta").with_params(&[("heaps", "1,x")]);
    assert!(prepare(&job).is_err());
}
