//! PN²: two-level proof-number search (Allis; Breuker), so that proofs larger than memory are
//! within reach.
//!
//! Contract: as [`super`]. The first-level tree is an ordinary [`Pns`] tree; when it selects a
//! most-proving leaf, a second-level PNS is run from that leaf with a budget of
//! `pn2_factor` times the size of the first-level tree (at least [`MIN_SECOND_LEVEL`] nodes).
//! If it solves the leaf, the leaf is solved; otherwise the leaf gets the second-level root's
//! children with their proof and disproof numbers, and the rest of the second-level tree is
//! thrown away (its arena is reused, not freed). Only the first-level tree is kept, so a proof
//! whose full tree is far larger than memory fits as long as its first level does.
//!
//! The memory budget is split: half for the first level, half for the second. Both levels use
//! the same switchable optimisations as PNS. The memory budget is where PN² stops: when the
//! first level is full the search ends with [`crate::search::StopReason::Memory`]. The first
//! level does not free subtrees to go on (PNS's DeleteLeastProving): every node freed there
//! costs a whole second-level search to get back, so under a small budget the search would
//! spend minutes re-expanding instead of reporting the limit. The second level (a fresh tree
//! per first-level leaf) still frees subtrees like PNS.
//!
//! Transpositions and repetitions: as PNS, both levels are trees (transposed positions are
//! searched once per path); a game whose positions repeat keeps the history in its state.

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
