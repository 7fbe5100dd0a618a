//! PN²: two-level proof-number search (L. V. Allis, "Searching for Solutions in Games and
//! Artificial Intelligence", 1994; D. M. Breuker, "Memory versus Search in Games", 1998), so that
//! proofs larger than memory are within reach.
//!
//! Contract: as [`super`]. The first level is an ordinary [`Pns`] tree; at each most-proving leaf
//! it selects, a second-level PNS runs with a budget of `pn2_factor` times the first level's size
//! (at least [`MIN_SECOND_LEVEL`] nodes). It solves the leaf, or gives it the second-level root's
//! children with their numbers and is thrown away (its arena reused). Only the first level is
//! kept, so a proof far larger than memory fits as long as its first level does.
//!
//! Memory: half for each level, both with PNS's switchable optimisations. A full first level ends
//! the search with [`crate::search::StopReason::Memory`]; it does not free subtrees to go on, since
//! every node freed there costs a whole second-level search to get back (under a small budget the
//! search would spend minutes re-expanding instead of reporting the limit). The second level (a
//! fresh tree per leaf) still frees subtrees like PNS. Both levels are trees: transposed positions
//! are searched once per path; a repeating game keeps its history in its state.

use super::tree::{Leaf, Pns};
use super::{Decision, PnOptions};
use crate::model::ZeroSum;
use crate::search::Control;

/// Smallest second-level budget, in nodes: below this the second level is too short-sighted to
/// pay for its set-up (a round number; the kernel is not sensitive to it on the test sets).
pub const MIN_SECOND_LEVEL: usize = 1_000;
/// Default ratio of second-level to first-level tree size (Breuker's thesis grows the second
/// level with the first; a ratio of 1 keeps the two levels balanced in memory).
pub const DEFAULT_FACTOR: f64 = 1.0;

/// Decides "value(root) >= target" with PN².
pub fn decide<G: ZeroSum>(
    game: &G,
    root: &G::State,
    target: i32,
    opts: &PnOptions,
    ctl: &Control,
) -> Decision<G::Move> {
    let bytes = (opts.memory_mb as usize).saturating_mul(1 << 20);
    let half = bytes / 2 / Pns::<G>::node_bytes();
    let mut first = Pns::with_max_nodes(game, opts, half).without_recycling();
    let mut second = Pns::with_max_nodes(game, opts, half);
    let r = first.search(
        root,
        target,
        ctl,
        &mut Leaf::Second(&mut second, opts.pn2_factor),
        u64::MAX,
        usize::MAX,
    );
    first.decision(r)
}
