//! df-pn: depth-first proof-number search (A. Nagai, "Df-pn Algorithm for Searching AND/OR Trees
//! and Its Applications", 2002) with a transposition table and the 1+ε trick (J. Pawlewicz and
//! Ł. Lew, "Improving Depth-First PN-Search: 1 + ε Trick", 2007).
//!
//! Contract: as [`super`]. df-pn expands the same most-proving nodes as PNS would but keeps no
//! tree: `MID(n, thφ, thδ)` stays below `n` while `n`'s numbers are under both thresholds, and
//! every node's numbers live in a table. Numbers are φ/δ from the view of the player to move at
//! the node; children moved by the same player swap the roles, so nothing assumes alternation.
//! The 1+ε trick gives the best child `min(thφ, max(δ₂ + 1, ⌈δ₂(1+ε)⌉))` (δ₂ the second-best
//! child's number) instead of `min(thφ, δ₂ + 1)`; `ε = 0` is plain df-pn.
//!
//! Table: 4-entry buckets of [`Entry`](super::depth_first::Entry) (24 bytes, asserted), two
//! candidate buckets per position, doubling while below the memory budget (nothing is forgotten);
//! at the budget the least-worked entry goes, and eight times the capacity replaced ends the search
//! with `StopReason::Memory` (see [`super`], "Progress"). Entries are keyed by the full 64-bit
//! hash, so games whose hash is not a perfect key share numbers only on a 64-bit collision.
//! Transpositions share one entry (numbers over-count on a DAG: slower on some, still correct);
//! repeating games keep their history in the state and hash. Per visit the children live in a
//! per-ply buffer reused across visits (no allocation per node) and keep their numbers locally too,
//! so an entry evicted from the table cannot make a parent loop.

use super::depth_first::{DepthFirst, Kernel, Kid, Scan};
use super::{Decision, PnOptions, INF};
use crate::model::{Hashed, ZeroSum};
use crate::search::Control;

/// Default ε of the 1+ε trick. Pawlewicz and Lew report that a quarter works well over a range of
/// problems; it is an option (`epsilon`) so its effect can be measured.
pub const DEFAULT_EPSILON: f64 = 0.25;
/// Polling interval of the control, in expansions.
const POLL: u64 = 1 << 12;

/// A df-pn table carried from one engine to the next ([`Dfpn::into_table`],
/// [`Dfpn::with_table`]), for decisions that share a goal ([`Dfpn::decide_keeping`]).
pub struct DfpnTable(super::depth_first::Table);

impl DfpnTable {
    /// An empty table of at most `memory_mb` MiB (allocated on first use).
    pub fn new(memory_mb: u64) -> Self {
        DfpnTable(super::depth_first::Table::new(
            (memory_mb as usize).saturating_mul(1 << 20),
        ))
    }

    /// Forgets every entry and gives back the memory beyond the initial size.
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// The df-pn engine; keeps its table between [`Dfpn::holds`] calls of one decision.
pub struct Dfpn<'g, G: ZeroSum + Hashed> {
    epsilon: f64,
    s: DepthFirst<'g, G>,
}

impl<'g, G: ZeroSum + Hashed> Dfpn<'g, G> {
    /// An engine with a table of `opts.memory_mb` MiB and `opts.epsilon`.
    pub fn new(game: &'g G, opts: &PnOptions) -> Self {
        Dfpn {
            epsilon: opts.epsilon.max(0.0),
            s: DepthFirst::new(game, (opts.memory_mb as usize).saturating_mul(1 << 20)),
        }
    }

    /// An engine that starts from `table` (kept by [`Dfpn::into_table`] after earlier
    /// decisions) instead of an empty one; its memory bound is the table's.
    pub fn with_table(game: &'g G, opts: &PnOptions, table: DfpnTable) -> Self {
        let mut d = Dfpn::new(
            game,
            &PnOptions {
                memory_mb: 0,
                ..*opts
            },
        );
        d.s.tt = table.0;
        d
    }

    /// The table, to start a later engine from ([`Dfpn::with_table`]).
    pub fn into_table(self) -> DfpnTable {
        DfpnTable(self.s.tt)
    }

    /// Decides "value(root) >= target" from a fresh table.
    pub fn decide(&mut self, root: &G::State, target: i32, ctl: &Control) -> Decision<G::Move> {
        self.s.tt.clear();
        self.decide_in_table(root, target, ctl)
    }

    /// Decides "value(root) >= target" on the numbers the table holds already. Sound only when
    /// every entry was written for the same goal of each mover: by decisions of the same
    /// `target` from roots of the same side to move, or of `1 - target` from roots of the other
    /// side (a zero-sum game of integer values: "the first side's value >= t" is "the second
    /// side's value < 1 - t"). A proof or disproof in the table is then a fact; other numbers
    /// only steer the search.
    pub fn decide_keeping(
        &mut self,
        root: &G::State,
        target: i32,
        ctl: &Control,
    ) -> Decision<G::Move> {
        if self.s.tt.is_unallocated() {
            self.s.tt.clear();
        }
        self.decide_in_table(root, target, ctl)
    }

    fn decide_in_table(
        &mut self,
        root: &G::State,
        target: i32,
        ctl: &Control,
    ) -> Decision<G::Move> {
        self.s.start(root, target);
        // A non-terminal root is always searched (even when the game knows its value at once),
        // so that a proved root has a proved child to name as the best move.
        let numbers = if self.s.game.is_terminal(root) {
            self.numbers(root, ctl)
        } else {
            let r = self.visit(root, self.s.game.hash(root), INF, INF, 0, ctl);
            self.s.count.flush(ctl);
            r
        };
        self.s.decision(root, numbers, 0)
    }

    /// After [`Dfpn::decide`]: the numbers its table holds for `state` as (proof, disproof) of
    /// the decision's goal ("value(root) >= target", the root side's view), `None` when the
    /// position is not in the table (never reached, or replaced).
    pub fn goal_numbers(&self, state: &G::State) -> Option<(u32, u32)> {
        let e = self.s.tt.get(self.s.game.hash(state))?;
        Some(if self.s.is_root_side(state) {
            (e.phi, e.delta)
        } else {
            (e.delta, e.phi)
        })
    }

    /// φ/δ of `state` for the goal of the last [`Dfpn::decide`]: final when its value is known,
    /// else searched with the table.
    fn numbers(&mut self, state: &G::State, ctl: &Control) -> (u32, u32) {
        match self.s.known_numbers(state) {
            Some(numbers) => numbers,
            None => {
                let h = self.s.game.hash(state);
                let r = self.visit(state, h, INF, INF, 0, ctl);
                self.s.count.flush(ctl);
                r
            }
        }
    }

    /// Whether "value >= target" holds at `state`, the value seen from the side to move at the
    /// root of the last [`Dfpn::decide`] (same target), reusing the table. `None` if stopped.
    pub fn holds(&mut self, state: &G::State, ctl: &Control) -> Option<bool> {
        let (phi, delta) = self.numbers(state, ctl);
        let mover_is_root = self.s.is_root_side(state);
        if phi == 0 {
            Some(mover_is_root)
        } else if delta == 0 {
            Some(!mover_is_root)
        } else {
            None
        }
    }
}

impl<'g, G: ZeroSum + Hashed> Kernel<'g, G> for Dfpn<'g, G> {
    #[inline(always)]
    fn state(&mut self) -> &mut DepthFirst<'g, G> {
        &mut self.s
    }

    /// The best child's "lose" number may grow by what is left of the node's δ budget; its
    /// "win" number up to the second-best child's, widened by 1+ε.
    #[inline]
    fn child_thresholds(&self, scan: &Scan, kid: &Kid, th_phi: u32, th_delta: u32) -> (u32, u32) {
        let (w, l) = kid.win_lose();
        debug_assert_eq!(w, scan.phi);
        let w2 = scan.second;
        let t_l = (th_delta as u64 - scan.delta as u64 + l as u64).min(INF as u64) as u32;
        let t_w = if w2 == INF {
            th_phi
        } else {
            let widened = ((w2 as f64) * (1.0 + self.epsilon)).ceil() as u64;
            (th_phi as u64)
                .min(widened.max(w2 as u64 + 1))
                .min(INF as u64) as u32
        };
        kid.thresholds(t_w, t_l)
    }

    /// Nagai's MID searches below every node it visits (until its numbers reach a threshold).
    const FLAGS_EXPANDED: bool = false;

    /// Every visit is an expansion; the control is polled every [`POLL`] of them.
    fn count_visit(&mut self) -> bool {
        self.s.expansions += 1;
        self.s.expansions.is_multiple_of(POLL)
    }
}
