//! A weighted-feature evaluator for Connect Four by threat counting, on any board.
//!
//! A *threat* of a side is an empty cell that would complete four of its stones, whether or not
//! it is playable yet. Features, each "mine minus the opponent's" from the side to move's point
//! of view:
//! - `threats`: all threats.
//! - `parity_threats`: threats on the rows that favour their owner in the endgame (Allis' rule
//!   of odd and even threats): rows 1, 3, 5, ... (from the bottom) for the player who moved first,
//!   rows 2, 4, 6, ... for the other; when the board fills up column by column these are the
//!   threats the opponent is forced to play under.
//! - `centre`: stones in the centre column (or the two centre columns of an even width): they
//!   take part in the most lines.
//!
//! Weights ([`WEIGHTS`]) are in hundredths of a score point and set by hand (threats first).
//! Connect Four's values are already scores times `VALUE_SCALE` (100), so [`connect4`] wraps the
//! game with [`Evaluated`] at scale 1 and smallest win `VALUE_SCALE`: estimates are clamped to
//! +-99, strictly between a loss and a win, as the game's own evaluation is.

use super::{C4State, Connect4, Word, VALUE_SCALE};
use crate::search::eval::{Evaluated, Feature, Weighted};

/// Weights: threats, parity threats, centre stones.
pub const WEIGHTS: [(&str, i32); 3] = [("threats", 8), ("parity_threats", 6), ("centre", 2)];

/// The default evaluator: [`WEIGHTS`] over the features of the module doc.
pub fn evaluator<W: Word>() -> Weighted<Connect4<W>> {
    let weight = |name: &str| WEIGHTS.iter().find(|w| w.0 == name).map_or(0, |w| w.1);
    Weighted::new(vec![
        Feature {
            name: "threats",
            weight: weight("threats"),
            value: threats::<W>,
        },
        Feature {
            name: "parity_threats",
            weight: weight("parity_threats"),
            value: parity_threats::<W>,
        },
        Feature {
            name: "centre",
            weight: weight("centre"),
            value: centre::<W>,
        },
    ])
}

/// Connect Four whose depth-limited search uses [`evaluator`].
pub fn connect4<W: Word>(game: Connect4<W>) -> Evaluated<Connect4<W>, Weighted<Connect4<W>>> {
    Evaluated::new(game, evaluator(), 1, VALUE_SCALE).expect("scale 1 never overflows")
}

/// Every playable cell of the board (no sentinel row).
fn board<W: Word>(g: &Connect4<W>) -> W {
    let (w, h) = (g.width(), g.height());
    let mut b = W::ZERO;
    for c in 0..w {
        for r in 0..h {
            b = b | W::bit(c * (h + 1) + r);
        }
    }
    b
}

/// Rows 0, 2, 4, ... (0-based from the bottom: the odd rows 1, 3, 5 of Allis).
fn even_index_rows<W: Word>(g: &Connect4<W>) -> W {
    let (w, h) = (g.width(), g.height());
    let mut b = W::ZERO;
    for c in 0..w {
        for r in (0..h).step_by(2) {
            b = b | W::bit(c * (h + 1) + r);
        }
    }
    b
}

/// The centre column, or the two centre columns of an even width.
fn centre_cells<W: Word>(g: &Connect4<W>) -> W {
    let (w, h) = (g.width(), g.height());
    let mut b = W::ZERO;
    for c in [(w - 1) / 2, w / 2] {
        for r in 0..h {
            b = b | W::bit(c * (h + 1) + r);
        }
    }
    b
}

/// Empty cells of the board that complete four for the owner of `pos` (the sentinel row keeps
/// lines from wrapping between columns, see the board layout).
pub fn threat_cells<W: Word>(g: &Connect4<W>, pos: W, mask: W) -> W {
    let h = g.height();
    let mut out = (pos << 1) & (pos << 2) & (pos << 3);
    for d in [h + 1, h, h + 2] {
        // Cell x completes four when three of the four windows through it are full.
        let up1 = pos << d;
        let up2 = pos << (2 * d);
        let dn1 = pos >> d;
        let dn2 = pos >> (2 * d);
        out = out | (up1 & up2 & (pos << (3 * d)));
        out = out | (up1 & up2 & dn1);
        out = out | (up1 & dn1 & dn2);
        out = out | (dn1 & dn2 & (pos >> (3 * d)));
    }
    out & board(g) & !mask
}

/// (side to move's threats, the opponent's threats).
fn both<W: Word>(g: &Connect4<W>, s: &C4State<W>) -> (W, W) {
    let (me, mask) = s.bits();
    (threat_cells(g, me, mask), threat_cells(g, mask ^ me, mask))
}

/// Threats, mine minus the opponent's.
pub fn threats<W: Word>(g: &Connect4<W>, s: &C4State<W>) -> i32 {
    let (me, other) = both(g, s);
    me.count_ones() as i32 - other.count_ones() as i32
}

/// Threats on the rows that favour their owner (module doc), mine minus the opponent's.
pub fn parity_threats<W: Word>(g: &Connect4<W>, s: &C4State<W>) -> i32 {
    let (me, other) = both(g, s);
    let odd = even_index_rows(g);
    // The first player moves when an even number of stones is on the board.
    let (mine_good, theirs_good) = if s.moves().is_multiple_of(2) {
        (odd, !odd)
    } else {
        (!odd, odd)
    };
    (me & mine_good).count_ones() as i32 - (other & theirs_good).count_ones() as i32
}

/// Centre stones, mine minus the opponent's.
pub fn centre<W: Word>(g: &Connect4<W>, s: &C4State<W>) -> i32 {
    let (me, mask) = s.bits();
    let c = centre_cells(g);
    (me & c).count_ones() as i32 - ((mask ^ me) & c).count_ones() as i32
}

#[cfg(test)]
mod tests;
