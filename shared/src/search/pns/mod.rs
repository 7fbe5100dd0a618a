//! The proof-number search family: PNS ([`tree`]), df-pn ([`dfpn`]), PN² ([`pn2`]), PDS-PN
//! ([`pdspn`]), root splitting over threads ([`parallel`]) and proof certificates ([`certify`]).
//!
//! Contract of every kernel here: on a two-player zero-sum game with a hash and a threshold
//! `target`, decide "value(root) >= target", seen from the side to move at the root (negamax
//! convention). The answer is exact, [`Verdict::Proved`] or [`Verdict::Disproved`]; a stopped
//! search answers [`Verdict::Unknown`] with the reason, never a guess. The exact value comes from
//! the threshold probes of Saffidine and Cazenave ("Multiple-Outcome Proof Number Search", ECAI
//! 2012), run by the planner (`PlanShape::Probes`), not by a kernel here.
//!
//! OR nodes are the root's side to move (one proved child proves them), AND nodes the other side's.
//! Numbers are `u32`: [`INF`] is infinity, finite sums saturate at [`PN_MAX`]. A new node is solved
//! at once ([`known_verdict`]) when its value is known or its `ZeroSum::value_bounds` lie on one
//! side of the target; the bounds are what ends a search on scores (Awari, deep Connect Four).
//!
//! Repeating games keep their repetition history in the state (and its hash), so the graph the
//! kernels see is acyclic, a value depends on the state alone, and the graph-history interaction
//! (Kishimoto and Müller) cannot arise. The depth-first kernels' tables never replace a proof by
//! non-final numbers and stop with [`StopReason::Memory`] rather than re-search what they forget.
//! Why: docs/kernels.md, "Proof-number search".

pub mod certify;
mod depth_first;
pub mod dfpn;
pub mod parallel;
pub mod pdspn;
pub mod pn2;
pub mod tree;

use crate::model::ZeroSum;
use crate::search::StopReason;

/// Infinite proof or disproof number.
pub const INF: u32 = u32::MAX;
/// Largest finite proof or disproof number; sums saturate here.
pub const PN_MAX: u32 = u32::MAX - 1;

/// Saturating sum of proof numbers: infinite if either is, else at most [`PN_MAX`].
#[inline(always)]
pub fn pn_add(a: u32, b: u32) -> u32 {
    if a == INF || b == INF {
        INF
    } else {
        a.saturating_add(b).min(PN_MAX)
    }
}

/// The answer to "value >= target".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// value >= target.
    Proved,
    /// value < target.
    Disproved,
    /// The search stopped first.
    Unknown(StopReason),
}

impl Verdict {
    /// `Some(true)` for proved, `Some(false)` for disproved.
    pub fn as_bool(self) -> Option<bool> {
        match self {
            Verdict::Proved => Some(true),
            Verdict::Disproved => Some(false),
            Verdict::Unknown(_) => None,
        }
    }
}

/// What a proof-number kernel found.
#[derive(Clone, Debug)]
pub struct Decision<M> {
    /// The answer.
    pub verdict: Verdict,
    /// When proved: a root move that keeps "value >= target" (the first in the game's order).
    pub best_move: Option<M>,
    /// Nodes generated (children created at expansions, plus the root).
    pub nodes: u64,
    /// Nodes expanded (the main loop's iterations, or df-pn's interior visits).
    pub expansions: u64,
    /// Most nodes (or table entries) held at once.
    pub peak_nodes: u64,
    /// Bytes of one node (or one table entry).
    pub node_bytes: usize,
}

/// Which kernel decides a threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// Best-first PNS with an explicit tree ([`tree`]).
    Pns,
    /// Depth-first PNS with a transposition table ([`dfpn`]).
    Dfpn,
    /// Two-level PNS ([`pn2`]).
    Pn2,
    /// PDS at the first level, PNS at the second ([`pdspn`]).
    Pdspn,
}

/// Settings of the proof-number kernels, each optimisation switchable (Allis, van der Meulen
/// and van den Herik 1994; Breuker 1998).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PnOptions {
    /// Stop updating ancestors at the first node whose numbers do not change and select the next
    /// most-proving node from there (PNS, PN²).
    pub current_node: bool,
    /// Remember the most-proving child while updating instead of searching the children again
    /// during selection (PNS, PN²).
    pub remember_best: bool,
    /// Free the subtree of a node once it is solved (PNS, PN²).
    pub delete_solved: bool,
    /// Memory budget of the tree (PNS, PN²) or the table (df-pn), in MiB.
    pub memory_mb: u64,
    /// df-pn's 1+ε trick: a child's threshold is at least `ceil(second * (1 + epsilon))`.
    pub epsilon: f64,
    /// PN²: the second-level tree may grow to `pn2_factor` times the first-level tree (at least
    /// [`pn2::MIN_SECOND_LEVEL`] nodes).
    pub pn2_factor: f64,
}

/// Default memory budget of one search: half a GiB leaves room for other tasks on a small worker.
pub const DEFAULT_MEMORY_MB: u64 = 512;

impl Default for PnOptions {
    fn default() -> Self {
        PnOptions {
            current_node: true,
            remember_best: true,
            delete_solved: true,
            memory_mb: DEFAULT_MEMORY_MB,
            epsilon: dfpn::DEFAULT_EPSILON,
            pn2_factor: pn2::DEFAULT_FACTOR,
        }
    }
}

/// The root side's view of an exact value known at `state` (terminal or immediate).
#[inline]
pub(crate) fn known_value<G: ZeroSum>(game: &G, state: &G::State) -> Option<i32> {
    if game.is_terminal(state) {
        Some(game.terminal_value(state))
    } else {
        game.immediate_value(state)
    }
}

/// Whether "value >= target" (the value seen from `root_side`) is known at `state` without a
/// search: from its terminal or immediate value, or because the game's value bounds
/// (`ZeroSum::value_bounds`, which never exclude the true value) lie on one side of the target.
/// The bounds are what lets a search on scores stop where nothing can change the answer any more:
/// an Awari position whose captures are decided, a Connect Four position too deep for a win that
/// would pass the target; without them such a position is only decided at the end of the game.
#[inline]
pub(crate) fn known_verdict<G: ZeroSum>(
    game: &G,
    state: &G::State,
    root_side: u8,
    target: i32,
) -> Option<bool> {
    let root_view = game.side(state) == root_side;
    if let Some(v) = known_value(game, state) {
        return Some(if root_view { v } else { -v } >= target);
    }
    let (lo, hi) = game.value_bounds(state);
    let (lo, hi) = if root_view {
        (lo, hi)
    } else {
        (hi.saturating_neg(), lo.saturating_neg())
    };
    if lo >= target {
        Some(true)
    } else if hi < target {
        Some(false)
    } else {
        None
    }
}

/// Runs `algorithm` on `root` with one thread.
pub fn decide<G: ZeroSum + crate::model::Hashed>(
    algorithm: Algorithm,
    game: &G,
    root: &G::State,
    target: i32,
    opts: &PnOptions,
    ctl: &crate::search::Control,
) -> Decision<G::Move> {
    match algorithm {
        Algorithm::Pns => tree::Pns::new(game, opts).decide(root, target, ctl),
        Algorithm::Dfpn => dfpn::Dfpn::new(game, opts).decide(root, target, ctl),
        Algorithm::Pn2 => pn2::decide(game, root, target, opts, ctl),
        Algorithm::Pdspn => pdspn::PdsPn::new(game, opts).decide(root, target, ctl),
    }
}

#[cfg(test)]
mod tests;
