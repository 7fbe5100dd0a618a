//! The battery of checks that every game passes (OpenSpiel's idea, as trait-bounded functions).
//!
//! Each check plays random games from a start state and panics with a message naming the game,
//! the playout and the position when a rule of the model is broken. Games call the checks that
//! match their capabilities from their own tests:
//!
//! - [`check_game`]: legality (every listed move parses back from its text and is accepted),
//!   determinism of copies (a copied state plays the same), notation round trip of every visited
//!   position, terminal states have no moves and finite returns, random games end.
//! - [`check_hashed`]: equal positions hash equally (the round-tripped copy, and transpositions
//!   found along the way when the game has them).
//! - [`check_zero_sum`]: terminal values agree with `returns`, values lie within the bounds, and
//!   `immediate_value` and `order_moves` keep their promises.
//! - [`check_stochastic`]: chance outcomes are legal and their probabilities sum to 1.

use super::{Game, Hashed, Stochastic, Turn, ZeroSum};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How long a random game may be before the check declares that it does not end.
const MAX_PLIES: usize = 100_000;

fn random_walk<G: Game>(
    game: &G,
    start: &G::State,
    rng: &mut ChaCha8Rng,
    mut visit: impl FnMut(&G::State, &[G::Move]),
) -> G::State {
    let mut state = start.clone();
    let mut moves = Vec::new();
    for _ply in 0..MAX_PLIES {
        game.legal_moves(&state, &mut moves);
        visit(&state, &moves);
        if game.is_terminal(&state) {
            return state;
        }
        assert!(
            !moves.is_empty(),
            "{}: non-terminal position {} has no moves",
            game.name(),
            game.format_position(&state)
        );
        let mv = moves[rng.gen_range(0..moves.len())];
        game.apply(&mut state, mv);
    }
    panic!(
        "{}: a random game did not end in {MAX_PLIES} plies",
        game.name()
    );
}

/// Legality, copy determinism, notation round trip, terminal sanity. See the module doc.
pub fn check_game<G: Game>(game: &G, start: &G::State, playouts: usize, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = game.num_players();
    let mut returns = vec![0.0; n.max(1)];
    for playout in 0..playouts {
        let end = random_walk(game, start, &mut rng, |state, moves| {
            let text = game.format_position(state);
            let back = game
                .parse_position(&text)
                .unwrap_or_else(|e| panic!("{}: cannot re-read '{text}': {e}", game.name()));
            assert!(
                game.same_state(&back, state),
                "{}: playout {playout}: '{text}' does not round-trip",
                game.name()
            );
            assert_eq!(
                game.turn(&back),
                game.turn(state),
                "{}: turn differs after round trip of '{text}'",
                game.name()
            );
            match game.turn(state) {
                Turn::Terminal => assert!(
                    moves.is_empty(),
                    "{}: terminal '{text}' lists moves",
                    game.name()
                ),
                Turn::Player(p) => {
                    assert!((p as usize) < n, "{}: player {p} out of range", game.name())
                }
                Turn::Chance => {}
            }
            for &mv in moves {
                let mtext = game.format_move(state, mv);
                let parsed = game.parse_move(state, &mtext).unwrap_or_else(|e| {
                    panic!(
                        "{}: move '{mtext}' in '{text}' does not parse back: {e}",
                        game.name()
                    )
                });
                assert_eq!(
                    parsed,
                    mv,
                    "{}: move '{mtext}' in '{text}' parses to another move",
                    game.name()
                );
                let mut a = state.clone();
                let mut b = back.clone();
                game.apply(&mut a, mv);
                game.apply(&mut b, mv);
                assert!(
                    game.same_state(&a, &b),
                    "{}: copies diverge after '{mtext}' in '{text}'",
                    game.name()
                );
            }
        });
        game.returns(&end, &mut returns);
        for (p, r) in returns.iter().enumerate().take(n) {
            assert!(
                r.is_finite(),
                "{}: return of player {p} is not finite",
                game.name()
            );
        }
    }
}

/// Equal positions hash equally. See the module doc.
pub fn check_hashed<G: Hashed>(game: &G, start: &G::State, playouts: usize, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut seen: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    for _ in 0..playouts {
        random_walk(game, start, &mut rng, |state, _| {
            let text = game.format_position(state);
            let back = game
                .parse_position(&text)
                .expect("round trip checked by check_game");
            let h = game.hash(state);
            assert_eq!(
                h,
                game.hash(&back),
                "{}: hash differs for equal positions '{text}'",
                game.name()
            );
            if let Some(&old) = seen.get(&text) {
                assert_eq!(old, h, "{}: hash of '{text}' is not stable", game.name());
            } else if seen.len() < 200_000 {
                seen.insert(text, h);
            }
        });
    }
    if G::HASH_IS_KEY {
        // A perfect key: different positions (different canonical texts) never share a hash.
        let mut by_hash: std::collections::HashMap<u64, &String> = std::collections::HashMap::new();
        for (text, h) in &seen {
            if let Some(other) = by_hash.insert(*h, text) {
                let a = game.parse_position(text).unwrap();
                let b = game.parse_position(other).unwrap();
                assert!(
                    game.same_state(&a, &b),
                    "{}: '{text}' and '{other}' share the key {h:#x}",
                    game.name()
                );
            }
        }
    }
}

/// Panics with `rule`, naming the game, unless it has `players` players.
pub fn assert_players<G: Game>(game: &G, players: usize, rule: &str) {
    assert_eq!(game.num_players(), players, "{}: {rule}", game.name());
}

/// Terminal values agree with `returns`; values respect the bounds; the optional speed-ups are
/// exact. See the module doc.
pub fn check_zero_sum<G: ZeroSum>(game: &G, start: &G::State, playouts: usize, seed: u64) {
    assert_players(game, 2, "ZeroSum needs two players");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut returns = [0.0; 2];
    let mut pairs: Vec<(f64, i32, String)> = Vec::new();
    for _ in 0..playouts {
        random_walk(game, start, &mut rng, |state, moves| {
            let text = game.format_position(state);
            let side = game.side(state);
            assert!(side < 2, "{}: side {side} of '{text}'", game.name());
            let (lo, hi) = game.value_bounds(state);
            assert!(lo <= hi, "{}: empty bounds at '{text}'", game.name());
            if let Turn::Player(p) = game.turn(state) {
                assert_eq!(
                    p,
                    side,
                    "{}: side differs from the player to move at '{text}'",
                    game.name()
                );
            }
            if game.is_terminal(state) {
                let v = game.terminal_value(state);
                assert!(
                    lo <= v && v <= hi,
                    "{}: value {v} outside [{lo}, {hi}] at '{text}'",
                    game.name()
                );
                game.returns(state, &mut returns);
                // Values order terminal states as the side's returns do (0 need not be a draw:
                // games may map values order-preservingly, like explicit trees).
                pairs.push((returns[side as usize] - returns[1 - side as usize], v, text));
            } else {
                let e = game.evaluate(state);
                assert!(
                    lo <= e && e <= hi,
                    "{}: evaluation {e} outside [{lo}, {hi}] at '{text}'",
                    game.name()
                );
                let mut ordered = moves.to_vec();
                game.order_moves(state, &mut ordered);
                let mut a = moves.to_vec();
                let mut b = ordered;
                let key = |m: &G::Move| format!("{m:?}");
                a.sort_by_key(key);
                b.sort_by_key(key);
                assert_eq!(
                    a,
                    b,
                    "{}: order_moves changed the move set at '{text}'",
                    game.name()
                );
                if let Some(v) = game.immediate_value(state) {
                    assert!(
                        lo <= v && v <= hi,
                        "{}: immediate value {v} outside bounds at '{text}'",
                        game.name()
                    );
                }
            }
        });
    }
    pairs.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
    for w in pairs.windows(2) {
        let ((ra, va, ta), (rb, vb, tb)) = (&w[0], &w[1]);
        assert!(
            (ra == rb) == (va == vb) && va <= vb,
            "{}: terminal values disagree with returns: '{ta}' has value {va} for margin {ra}, '{tb}' has {vb} for {rb}",
            game.name()
        );
    }
}

/// Chance outcomes are legal moves and their probabilities sum to 1.
pub fn check_stochastic<G: Stochastic>(game: &G, start: &G::State, playouts: usize, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut outcomes = Vec::new();
    for _ in 0..playouts {
        random_walk(game, start, &mut rng, |state, moves| {
            if game.turn(state) == Turn::Chance {
                game.chance_outcomes(state, &mut outcomes);
                let total: f64 = outcomes.iter().map(|(_, p)| *p).sum();
                assert!(
                    (total - 1.0).abs() < 1e-9,
                    "{}: chance probabilities sum to {total} at '{}'",
                    game.name(),
                    game.format_position(state)
                );
                for (mv, p) in &outcomes {
                    assert!(*p > 0.0, "{}: outcome with probability {p}", game.name());
                    assert!(
                        moves.contains(mv),
                        "{}: outcome {mv:?} not listed by legal_moves",
                        game.name()
                    );
                }
            }
        });
    }
}
