//! df-pn: depth-first proof-number search (Nagai 2002) with a transposition table and the 1+ε
//! trick (Pawlewicz and Lew 2007).
//!
//! Contract: as [`super`]. df-pn expands the same most-proving nodes as PNS would, but keeps no
//! tree: a recursive `MID(n, thφ, thδ)` stays below `n` while `n`'s numbers are under both
//! thresholds, and every node's numbers live in a fixed-size table. Numbers are in φ/δ form, from
//! the point of view of the player to move at the node: φ is the cost to prove that the mover
//! reaches its goal (the root side: value >= target; the other side: value < target), δ the
//! cost to disprove it. Children that the same player moves (games where a side moves twice) are
//! handled by swapping the roles, so nothing assumes alternating moves.
//!
//! The 1+ε trick: the threshold given to the best child is `min(thφ, max(δ₂ + 1, ⌈δ₂(1+ε)⌉))`
//! instead of `min(thφ, δ₂ + 1)` (δ₂ = the second-best child's number), so the search does not
//! jump back and forth between two children whose numbers are close. `ε = 0` is plain df-pn.
//!
//! Transposition table: a power-of-two number of 4-entry buckets of [`Entry`] (24 bytes, asserted),
//! starting small and doubling while it fills up, up to the memory budget; a position's entry holds its φ and δ and the work (expansions) spent
//! on it; a new entry replaces the bucket's entry with the least work. The table never grows, so
//! df-pn never runs out of memory: a small table only costs re-search. Entries are keyed by the
//! full 64-bit hash; for games whose hash is not a perfect key (`Hashed::HASH_IS_KEY == false`),
//! two positions sharing a 64-bit hash would share numbers (probability about n²/2⁶⁴ for n
//! stored positions).
//!
//! Transpositions and repetitions: positions reached by several paths share one table entry, so
//! the search works on the DAG, not the tree. Numbers then over-count (a shared descendant counts
//! once per path), which slows df-pn down on some DAGs but keeps it correct. Positions cannot
//! repeat in the model's games; a game with cycles would need the graph-history-interaction
//! fixes of Kishimoto and Müller, which this kernel does not have.
//!
//! Per visit, a node's children (hash, numbers, whether the mover changes) are kept in a
//! per-ply buffer reused across visits, so the recursion allocates nothing per node; a child's
//! numbers are refreshed from the table at each round and kept locally too, so an entry evicted
//! from the table cannot make a parent loop.

use super::{known_value, pn_add, Decision, PnOptions, Verdict, INF};
use crate::model::{Hashed, ZeroSum};
use crate::search::{Control, StopReason};

/// Default ε of the 1+ε trick. Pawlewicz and Lew report that a quarter works well over a range of
/// problems; it is an option (`epsilon`) so its effect can be measured.
pub const DEFAULT_EPSILON: f64 = 0.25;
/// Entries per bucket.
const BUCKET: usize = 4;
/// Polling interval of the control, in expansions.
const POLL: u64 = 1 << 12;

/// One table entry.
///
/// ```text
/// bytes 0-7    key     full 64-bit position hash (0 = empty slot)
/// bytes 8-11   phi     φ, from the mover's point of view
/// bytes 12-15  delta   δ
/// bytes 16-19  work    expansions spent below this position (saturating), the replacement key
/// bytes 20-23  padding
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Entry {
    key: u64,
    phi: u32,
    delta: u32,
    work: u32,
    _pad: u32,
}
const _: () = assert!(std::mem::size_of::<Entry>() == 24);

struct Table {
    entries: Vec<Entry>,
    mask: usize,
    used: u64,
    /// Most buckets the memory budget allows (a power of two).
    max_buckets: usize,
}

/// Buckets of a new table (384 KiB): small problems never pay for zeroing a large table; the
/// table doubles while it is more than [`GROW_AT`] full, up to the budget.
const INITIAL_BUCKETS: usize = 1 << 12;
/// Fill ratio at which the table doubles.
const GROW_AT: f64 = 0.75;

impl Table {
    fn new(bytes: usize) -> Table {
        let buckets = (bytes / (BUCKET * std::mem::size_of::<Entry>())).max(1);
        let max_buckets = if buckets.is_power_of_two() {
            buckets
        } else {
            buckets.next_power_of_two() / 2
        };
        Table {
            entries: Vec::new(),
            mask: 0,
            used: 0,
            max_buckets,
        }
    }

    fn clear(&mut self) {
        let buckets = INITIAL_BUCKETS.min(self.max_buckets);
        self.entries.clear();
        self.entries.resize(buckets * BUCKET, Entry::default());
        self.entries.shrink_to(buckets * BUCKET);
        self.mask = buckets - 1;
        self.used = 0;
    }

    /// Doubles the table and re-inserts every entry.
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.entries);
        let buckets = (self.mask + 1) * 2;
        self.entries = vec![Entry::default(); buckets * BUCKET];
        self.mask = buckets - 1;
        self.used = 0;
        for e in old.into_iter().filter(|e| e.key != 0) {
            self.put(e.key, e.phi, e.delta, e.work as u64);
        }
    }

    #[inline]
    fn key(hash: u64) -> u64 {
        hash.max(1)
    }

    #[inline]
    fn bucket(&self, key: u64) -> usize {
        // The high bits pick the bucket (low bits of some hashes are structured).
        ((key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & self.mask) * BUCKET
    }

    #[inline]
    fn get(&self, hash: u64) -> Option<(u32, u32)> {
        let key = Self::key(hash);
        let b = self.bucket(key);
        self.entries[b..b + BUCKET]
            .iter()
            .find(|e| e.key == key)
            .map(|e| (e.phi, e.delta))
    }

    #[inline]
    fn put(&mut self, hash: u64, phi: u32, delta: u32, work: u64) {
        let key = Self::key(hash);
        let b = self.bucket(key);
        let bucket = &mut self.entries[b..b + BUCKET];
        let slot = match bucket.iter().position(|e| e.key == key) {
            Some(i) => i,
            None => {
                let i = (0..BUCKET)
                    .min_by_key(|&i| (bucket[i].key != 0, bucket[i].work))
                    .unwrap_or(0);
                if bucket[i].key == 0 {
                    self.used += 1;
                }
                i
            }
        };
        bucket[slot] = Entry {
            key,
            phi,
            delta,
            work: work.min(u32::MAX as u64) as u32,
            _pad: 0,
        };
        if self.used as f64 > self.entries.len() as f64 * GROW_AT
            && self.mask + 1 < self.max_buckets
        {
            self.grow();
        }
    }
}

/// A child as its parent's visit sees it.
#[derive(Clone, Copy, Debug)]
struct Kid {
    hash: u64,
    phi: u32,
    delta: u32,
    /// The child's value is known (terminal or immediate): its numbers are final.
    known: bool,
    /// The same player moves at the child.
    same: bool,
}

/// The df-pn engine; keeps its table between [`Dfpn::holds`] calls of one decision.
pub struct Dfpn<'g, G: ZeroSum + Hashed> {
    game: &'g G,
    epsilon: f64,
    tt: Table,
    moves: Vec<Vec<G::Move>>,
    kids: Vec<Vec<Kid>>,
    root_side: u8,
    target: i32,
    nodes: u64,
    reported: u64,
    expansions: u64,
    stopped: Option<StopReason>,
}

impl<'g, G: ZeroSum + Hashed> Dfpn<'g, G> {
    /// An engine with a table of `opts.memory_mb` MiB and `opts.epsilon`.
    pub fn new(game: &'g G, opts: &PnOptions) -> Self {
        Dfpn {
            game,
            epsilon: opts.epsilon.max(0.0),
            tt: Table::new((opts.memory_mb as usize).saturating_mul(1 << 20)),
            moves: Vec::new(),
            kids: Vec::new(),
            root_side: 0,
            target: 0,
            nodes: 0,
            reported: 0,
            expansions: 0,
            stopped: None,
        }
    }

    /// Numbers of a position whose value `v` (its mover's view) is known.
    #[inline]
    fn known_numbers(&self, state: &G::State, v: i32) -> (u32, u32) {
        let side = self.game.side(state);
        let root_view = if side == self.root_side { v } else { -v };
        let mover_wins = (side == self.root_side) == (root_view >= self.target);
        if mover_wins {
            (0, INF)
        } else {
            (INF, 0)
        }
    }

    /// Decides "value(root) >= target" from a fresh table.
    pub fn decide(&mut self, root: &G::State, target: i32, ctl: &Control) -> Decision<G::Move> {
        self.tt.clear();
        self.root_side = self.game.side(root);
        self.target = target;
        self.nodes = 1;
        self.reported = 0;
        self.expansions = 0;
        self.stopped = None;
        // A non-terminal root is always searched (even when the game knows its value at once),
        // so that a proved root has a proved child to name as the best move.
        let answer = if self.game.is_terminal(root) {
            self.holds(root, ctl)
        } else {
            let (phi, delta) = self.mid(root, self.game.hash(root), INF, INF, 0, ctl);
            ctl.add_nodes(self.nodes - self.reported);
            self.reported = self.nodes;
            match (phi, delta) {
                (0, _) => Some(true),
                (_, 0) => Some(false),
                _ => None,
            }
        };
        let verdict = match answer {
            Some(true) => Verdict::Proved,
            Some(false) => Verdict::Disproved,
            None => Verdict::Unknown(self.stopped.unwrap_or(StopReason::Nodes)),
        };
        // The root's children as the last visit left them: the first proved one is the move.
        let best_move = match (verdict, self.kids.first(), self.moves.first()) {
            (Verdict::Proved, Some(kids), Some(moves)) if !self.game.is_terminal(root) => kids
                .iter()
                .position(|k| if k.same { k.phi == 0 } else { k.delta == 0 })
                .map(|i| moves[i]),
            _ => None,
        };
        Decision {
            verdict,
            best_move,
            nodes: self.nodes,
            expansions: self.expansions,
            peak_nodes: self.tt.used,
            node_bytes: std::mem::size_of::<Entry>(),
        }
    }

    /// Whether "value >= target" holds at `state`, the value seen from the side to move at the
    /// root of the last [`Dfpn::decide`] (same target), reusing the table. `None` if stopped.
    pub fn holds(&mut self, state: &G::State, ctl: &Control) -> Option<bool> {
        let (phi, delta) = match known_value(self.game, state) {
            Some(v) => self.known_numbers(state, v),
            None => {
                let h = self.game.hash(state);
                let r = self.mid(state, h, INF, INF, 0, ctl);
                ctl.add_nodes(self.nodes - self.reported);
                self.reported = self.nodes;
                r
            }
        };
        let mover_is_root = self.game.side(state) == self.root_side;
        if phi == 0 {
            Some(mover_is_root)
        } else if delta == 0 {
            Some(!mover_is_root)
        } else {
            None
        }
    }

    /// Nagai's MID: searches below `state` until its numbers reach a threshold; returns them.
    fn mid(
        &mut self,
        state: &G::State,
        hash: u64,
        th_phi: u32,
        th_delta: u32,
        ply: usize,
        ctl: &Control,
    ) -> (u32, u32) {
        self.expansions += 1;
        let start_work = self.expansions;
        if self.expansions.is_multiple_of(POLL) {
            ctl.add_nodes(self.nodes - self.reported);
            self.reported = self.nodes;
            if let Some(r) = ctl.should_stop() {
                self.stopped = Some(r);
            }
        }
        if self.moves.len() <= ply {
            self.moves.push(Vec::new());
            self.kids.push(Vec::new());
        }
        let mut moves = std::mem::take(&mut self.moves[ply]);
        let mut kids = std::mem::take(&mut self.kids[ply]);
        self.game.legal_moves(state, &mut moves);
        self.game.order_moves(state, &mut moves);
        kids.clear();
        let side = self.game.side(state);
        for &mv in &moves {
            let mut child = state.clone();
            self.game.apply(&mut child, mv);
            let (phi, delta, known) = match known_value(self.game, &child) {
                Some(v) => {
                    let (p, d) = self.known_numbers(&child, v);
                    (p, d, true)
                }
                None => (1, 1, false),
            };
            kids.push(Kid {
                hash: self.game.hash(&child),
                phi,
                delta,
                known,
                same: self.game.side(&child) == side,
            });
        }
        self.nodes += moves.len() as u64;
        let (phi, delta) = loop {
            // φ(n) = min over children of their "win" number for n's mover, δ(n) = sum of their
            // "lose" numbers; remember the best child and the second-best win number.
            let (mut w1, mut w2, mut sum, mut best) = (INF, INF, 0u32, 0usize);
            for (i, k) in kids.iter_mut().enumerate() {
                if !k.known {
                    if let Some((p, d)) = self.tt.get(k.hash) {
                        k.phi = p;
                        k.delta = d;
                    }
                }
                let (w, l) = if k.same {
                    (k.phi, k.delta)
                } else {
                    (k.delta, k.phi)
                };
                if w < w1 {
                    w2 = w1;
                    w1 = w;
                    best = i;
                } else if w < w2 {
                    w2 = w;
                }
                sum = pn_add(sum, l);
            }
            if kids.is_empty() {
                // A non-terminal state without moves breaks the model: lost for its mover.
                break (INF, 0);
            }
            let (phi, delta) = (w1, sum);
            if phi >= th_phi || delta >= th_delta || self.stopped.is_some() {
                break (phi, delta);
            }
            let k = kids[best];
            let (w, l) = if k.same {
                (k.phi, k.delta)
            } else {
                (k.delta, k.phi)
            };
            debug_assert_eq!(w, w1);
            // Thresholds of the best child: its "lose" number may grow by what is left of n's δ
            // budget; its "win" number up to the second-best child's, widened by 1+ε.
            let t_l = (th_delta as u64 - delta as u64 + l as u64).min(INF as u64) as u32;
            let t_w = if w2 == INF {
                th_phi
            } else {
                let widened = ((w2 as f64) * (1.0 + self.epsilon)).ceil() as u64;
                (th_phi as u64)
                    .min(widened.max(w2 as u64 + 1))
                    .min(INF as u64) as u32
            };
            let (c_phi, c_delta) = if k.same { (t_w, t_l) } else { (t_l, t_w) };
            let mut child = state.clone();
            self.game.apply(&mut child, moves[best]);
            let (p, d) = self.mid(&child, k.hash, c_phi, c_delta, ply + 1, ctl);
            kids[best].phi = p;
            kids[best].delta = d;
        };
        self.tt
            .put(hash, phi, delta, self.expansions - start_work + 1);
        self.moves[ply] = moves;
        self.kids[ply] = kids;
        (phi, delta)
    }
}
