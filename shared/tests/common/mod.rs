//! Helpers shared by the integration tests of the library: a small seeded generator and Othello
//! positions reached by random play.

use gamesolver_shared::games::othello::{Othello, OthelloState};
use gamesolver_shared::model::Game;

/// A small deterministic generator (SplitMix64): one step from `state`.
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn empties(g: &Othello, s: &OthelloState) -> u32 {
    let squares = (g.size() * g.size()) as u32;
    squares - (s.discs[0] | s.discs[1]).count_ones()
}

/// `count` unfinished Othello positions with `min_empties` to `min_empties + 4` empty squares
/// (cycling), each reached by uniformly random play from the start with the generator seeded by
/// `seed`.
pub fn othello_positions(g: &Othello, count: usize, min_empties: u32, seed: u64) -> Vec<String> {
    let mut rng = seed;
    let mut out = Vec::new();
    let mut moves = Vec::new();
    while out.len() < count {
        let want = min_empties + (out.len() % 5) as u32;
        let mut s = g.initial_state();
        while !g.is_terminal(&s) && empties(g, &s) > want {
            g.legal_moves(&s, &mut moves);
            let m = moves[(splitmix(&mut rng) % moves.len() as u64) as usize];
            g.apply(&mut s, m);
        }
        if !g.is_terminal(&s) && empties(g, &s) == want {
            out.push(g.format_position(&s));
        }
    }
    out
}
