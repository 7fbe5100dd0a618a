//! A weighted-feature evaluator for Othello (IAGO's and Logistello's features), boards 4 x 4-8 x 8.
//!
//! Features, each "mine minus the opponent's" from the side to move's point of view:
//! - `material`: discs. Worth little until the end (a position with few discs is often the
//!   stronger one), so it mostly breaks ties.
//! - `mobility`: legal placements. The main middle-game feature: the side with more choices
//!   can wait for the opponent to run out of safe moves.
//! - `corners`: corner discs, which can never be flipped and anchor stable edges.
//! - `x_squares`: discs on a square diagonally next to an *empty* corner (they hand the corner
//!   to the opponent); boards of 6 x 6 and up (on 4 x 4 those are the centre squares).
//! - `c_squares`: discs on an edge square next to an empty corner; boards of 6 x 6 and up.
//! - `frontier`: discs next to an empty square (they give the opponent moves).
//!
//! The weights ([`WEIGHTS`]) are in thousandths of a disc of final margin and follow the usual
//! order of importance in Othello programs (corners far above mobility, mobility above
//! material); they were set by hand and checked only by the test that a depth-2 search with them
//! beats a random player, not tuned on game records. [`othello`] wraps the game with
//! [`Evaluated`] at scale [`SCALE`], so every estimate stays strictly between a loss by one disc
//! and a win by one disc.

use super::{Geometry, Othello, OthelloState};
use crate::search::eval::{Evaluated, Feature, Weighted};

/// Values of the wrapped game are disc differences times this; estimates lie in
/// `[-(SCALE - 1), SCALE - 1]`.
pub const SCALE: i32 = 1000;

/// The default weights, in evaluator units (see the module doc): material, mobility, corners,
/// X-squares, C-squares, frontier.
pub const WEIGHTS: [(&str, i32); 6] = [
    ("material", 2),
    ("mobility", 12),
    ("corners", 60),
    ("x_squares", -25),
    ("c_squares", -8),
    ("frontier", -4),
];

/// The default Othello evaluator: [`WEIGHTS`] over the features of the module doc.
pub fn evaluator() -> Weighted<Othello> {
    let f = |name: &'static str, value: fn(&Othello, &OthelloState) -> i32| Feature {
        name,
        weight: WEIGHTS.iter().find(|w| w.0 == name).map_or(0, |w| w.1),
        value,
    };
    Weighted::new(vec![
        f("material", material),
        f("mobility", mobility),
        f("corners", corners),
        f("x_squares", x_squares),
        f("c_squares", c_squares),
        f("frontier", frontier),
    ])
}

/// Othello whose depth-limited search uses [`evaluator`] (values scaled by [`SCALE`]).
pub fn othello(game: Othello) -> Evaluated<Othello, Weighted<Othello>> {
    Evaluated::new(game, evaluator(), SCALE, 1).expect("Othello bounds are at most 64 discs")
}

/// The weighted sum of [`WEIGHTS`] at `s` from the side to move's view: [`evaluator`]'s
/// estimate, computed without building one (the game's own `evaluate` calls it at every leaf).
pub fn weighted_sum(g: &Othello, s: &OthelloState) -> i32 {
    let w = |i: usize| WEIGHTS[i].1;
    w(0) * material(g, s)
        + w(1) * mobility(g, s)
        + w(2) * corners(g, s)
        + w(3) * x_squares(g, s)
        + w(4) * c_squares(g, s)
        + w(5) * frontier(g, s)
}

/// Discs of final margin per [`DISC_UNITS`] units of [`weighted_sum`]: the least-squares slope
/// of the exact final margin on the weighted sum over random 8 x 8 positions (see the test
/// `calibrate_disc_scale` in `eval/tests.rs`, which prints it).
pub const DISC_SLOPE: i32 = 7;
/// See [`DISC_SLOPE`].
pub const DISC_UNITS: i32 = 40;

/// An estimate of the final disc difference (the side to move's), as Othello programs' hints
/// give it: [`weighted_sum`] times [`DISC_SLOPE`] / [`DISC_UNITS`], rounded, within the
/// board's value bounds. An integer on the scale of exact values, so a depth-limited search
/// with it reads like Edax's or Egaroucid's hint; unlike [`othello`]'s scaled estimates, an
/// estimate can equal an exact value.
pub fn disc_estimate(g: &Othello, s: &OthelloState) -> i32 {
    let n = (g.size() * g.size()) as i32;
    let v = weighted_sum(g, s) * DISC_SLOPE;
    // Rounded to the nearest integer, halves away from zero.
    let r = (v.abs() + DISC_UNITS / 2) / DISC_UNITS * v.signum();
    r.clamp(-n, n)
}

/// (side to move's discs, the opponent's discs).
#[inline(always)]
fn sides(s: &OthelloState) -> (u64, u64) {
    let p = s.to_move as usize & 1;
    (s.discs[p], s.discs[1 - p])
}

#[inline(always)]
fn diff(set: u64, me: u64, other: u64) -> i32 {
    (me & set).count_ones() as i32 - (other & set).count_ones() as i32
}

/// The four corner squares.
#[inline]
pub fn corner_squares(geo: &Geometry) -> u64 {
    let s = geo.size as u32 - 1;
    1 | 1 << s | 1 << (s * 8) | 1 << (s * 8 + s)
}

/// Squares diagonally next to an empty corner (boards of 6 x 6 and up; else none).
#[inline]
pub fn x_squares_of(geo: &Geometry, empty: u64) -> u64 {
    if geo.size < 6 {
        return 0;
    }
    let c = corner_squares(geo) & empty;
    [4, 5, 6, 7].iter().fold(0, |acc, &d| acc | geo.shift(c, d))
}

/// Edge squares orthogonally next to an empty corner (boards of 6 x 6 and up; else none).
#[inline]
pub fn c_squares_of(geo: &Geometry, empty: u64) -> u64 {
    if geo.size < 6 {
        return 0;
    }
    let c = corner_squares(geo) & empty;
    [0, 1, 2, 3].iter().fold(0, |acc, &d| acc | geo.shift(c, d))
}

/// Disc difference.
pub fn material(_g: &Othello, s: &OthelloState) -> i32 {
    let (me, other) = sides(s);
    me.count_ones() as i32 - other.count_ones() as i32
}

/// Legal placements of the side to move minus the opponent's (in the same position).
pub fn mobility(g: &Othello, s: &OthelloState) -> i32 {
    let geo = g.geometry();
    let (me, other) = sides(s);
    geo.moves(me, other).count_ones() as i32 - geo.moves(other, me).count_ones() as i32
}

/// Corner discs.
pub fn corners(g: &Othello, s: &OthelloState) -> i32 {
    let (me, other) = sides(s);
    diff(corner_squares(&g.geometry()), me, other)
}

/// Discs on X-squares of empty corners.
pub fn x_squares(g: &Othello, s: &OthelloState) -> i32 {
    let geo = g.geometry();
    let (me, other) = sides(s);
    diff(x_squares_of(&geo, geo.valid & !(me | other)), me, other)
}

/// Discs on C-squares of empty corners.
pub fn c_squares(g: &Othello, s: &OthelloState) -> i32 {
    let geo = g.geometry();
    let (me, other) = sides(s);
    diff(c_squares_of(&geo, geo.valid & !(me | other)), me, other)
}

/// Discs next to an empty square.
pub fn frontier(g: &Othello, s: &OthelloState) -> i32 {
    let geo = g.geometry();
    let (me, other) = sides(s);
    diff(geo.neighbours(geo.valid & !(me | other)), me, other)
}

#[cfg(test)]
mod tests;
