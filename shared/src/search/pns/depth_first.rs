//! What the two depth-first proof-number searches share ([`super::dfpn`] and the first level of
//! [`super::pdspn`]): the table of φ/δ numbers, a node's children as its visit sees them, the
//! per-ply buffers, the statistics with their polling, and the root's verdict and move.
//!
//! Contract: a helper only names a step; each kernel visits the same nodes in the same order as
//! if the step were written inline, so their node counts are theirs.

use super::{known_verdict, pn_add, Decision, Verdict, INF};
use crate::model::{Hashed, ZeroSum};
use crate::search::node::{take_ply, NodeCount};
use crate::search::{Control, StopReason};

/// Entries per bucket.
const BUCKET: usize = 4;
/// Buckets of a new table (384 KiB): small problems never pay for zeroing a large table; the
/// table doubles while it is more than [`GROW_AT`] full, up to the budget.
const INITIAL_BUCKETS: usize = 1 << 12;
/// Fill ratio at which the table doubles.
const GROW_AT: f64 = 0.75;
/// A search whose table, full at its memory budget, has replaced this many times its capacity
/// in entries ends with [`StopReason::Memory`]: past that point it mostly searches again what it
/// forgot (a depth-first search that keeps losing the numbers it just computed can go round in
/// circles for ever), and a proof that does not fit is better reported than chased (PNS stops
/// at the same point, `tree::MAX_RECYCLED_BUDGETS`).
pub const MAX_EVICTED_TABLES: u64 = 8;

/// One table entry.
///
/// ```text
/// bytes 0-7    key       full 64-bit position hash (0 = empty slot)
/// bytes 8-11   phi       φ, from the mover's point of view
/// bytes 12-15  delta     δ
/// bytes 16-19  work      expansions spent below this position (saturating), the replacement key
/// bytes 20-23  expanded  1 once PDS-PN's first level has expanded the position (df-pn: 0)
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Entry {
    key: u64,
    pub(super) phi: u32,
    pub(super) delta: u32,
    work: u32,
    pub(super) expanded: u32,
}
const _: () = assert!(std::mem::size_of::<Entry>() == 24);

/// A power-of-two number of 4-entry buckets; a position lives in one of two buckets picked by
/// its mixed hash. It starts small and doubles while more than [`GROW_AT`] full, or when a new
/// position finds both its buckets full, up to the memory budget: below it nothing is
/// forgotten. At the budget a new position replaces the least-worked entry of its buckets, so
/// the table never overflows (a small one costs re-search, bounded by [`MAX_EVICTED_TABLES`]).
pub(super) struct Table {
    entries: Vec<Entry>,
    mask: usize,
    /// Entries in use.
    pub used: u64,
    /// Most buckets the memory budget allows (a power of two).
    max_buckets: usize,
    /// Entries replaced since the last [`Table::clear`] or [`Table::reset_evicted`]: only a
    /// table at its budget replaces entries.
    pub evicted: u64,
}

impl Table {
    /// An empty table of at most `bytes`; [`Table::clear`] allocates its first buckets.
    pub fn new(bytes: usize) -> Table {
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
            evicted: 0,
        }
    }

    /// Whether no bucket is allocated yet ([`Table::new`] before [`Table::clear`]).
    pub fn is_unallocated(&self) -> bool {
        self.entries.is_empty()
    }

    /// Empties the table and shrinks it to its initial size.
    pub fn clear(&mut self) {
        let buckets = INITIAL_BUCKETS.min(self.max_buckets);
        self.entries.clear();
        self.entries.resize(buckets * BUCKET, Entry::default());
        self.entries.shrink_to(buckets * BUCKET);
        self.mask = buckets - 1;
        self.used = 0;
        self.evicted = 0;
    }

    /// Doubles the table and re-inserts every entry.
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.entries);
        let buckets = (self.mask + 1) * 2;
        self.entries = vec![Entry::default(); buckets * BUCKET];
        self.mask = buckets - 1;
        self.used = 0;
        for e in old.into_iter().filter(|e| e.key != 0) {
            self.put(e.key, e.phi, e.delta, e.work as u64, e.expanded != 0);
        }
    }

    #[inline]
    fn key(hash: u64) -> u64 {
        hash.max(1)
    }

    /// The two buckets a key may live in (the same one now and then): both from the whole key,
    /// mixed, since some games' hashes are structured (Connect Four's are the position's bits:
    /// taking a few bits of the key, or of a product, piles whole families of positions into one
    /// bucket).
    #[inline]
    fn buckets(&self, key: u64) -> (usize, usize) {
        let h = crate::model::fmix64(key);
        (
            (h as usize & self.mask) * BUCKET,
            ((h >> 32) as usize & self.mask) * BUCKET,
        )
    }

    /// Index of `key`'s entry, if stored.
    #[inline]
    fn find(&self, key: u64) -> Option<usize> {
        let (b1, b2) = self.buckets(key);
        let at = |b: usize| {
            self.entries[b..b + BUCKET]
                .iter()
                .position(|e| e.key == key)
                .map(|i| b + i)
        };
        at(b1).or_else(|| at(b2))
    }

    #[inline]
    pub fn get(&self, hash: u64) -> Option<Entry> {
        self.find(Self::key(hash)).map(|i| self.entries[i])
    }

    /// Stores numbers; `expanded` is kept once set (a second level's guess never replaces the
    /// numbers of a position the first level has expanded), and so is a proof or disproof (a
    /// fact: numbers that are not final never replace it).
    ///
    /// A new position goes to a free slot of one of its two buckets; when both are full the
    /// table doubles first while it may, so that below the memory budget nothing is ever
    /// forgotten. Only a table at its budget replaces an entry (the least-worked of the two
    /// buckets'), and counts it in `evicted`.
    #[inline]
    pub fn put(&mut self, hash: u64, phi: u32, delta: u32, work: u64, expanded: bool) {
        let key = Self::key(hash);
        let slot = match self.find(key) {
            Some(i) => {
                let old = &self.entries[i];
                if old.expanded != 0 && !expanded {
                    return;
                }
                if (old.phi == 0 || old.delta == 0) && phi != 0 && delta != 0 {
                    return;
                }
                i
            }
            None => {
                let (b1, b2) = self.buckets(key);
                let free = |b: usize| {
                    self.entries[b..b + BUCKET]
                        .iter()
                        .position(|e| e.key == 0)
                        .map(|i| b + i)
                };
                match free(b1).or_else(|| free(b2)) {
                    Some(i) => {
                        self.used += 1;
                        i
                    }
                    None if self.mask + 1 < self.max_buckets => {
                        self.grow();
                        return self.put(hash, phi, delta, work, expanded);
                    }
                    None => {
                        self.evicted += 1;
                        (b1..b1 + BUCKET)
                            .chain(b2..b2 + BUCKET)
                            .min_by_key(|&i| self.entries[i].work)
                            .unwrap_or(b1)
                    }
                }
            }
        };
        self.entries[slot] = Entry {
            key,
            phi,
            delta,
            work: work.min(u32::MAX as u64) as u32,
            expanded: expanded as u32,
        };
        if self.used as f64 > self.entries.len() as f64 * GROW_AT
            && self.mask + 1 < self.max_buckets
        {
            self.grow();
        }
    }

    /// Entries the table can hold.
    pub fn capacity(&self) -> u64 {
        (self.max_buckets * BUCKET) as u64
    }
}

/// A child as its parent's visit sees it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Kid {
    pub hash: u64,
    pub phi: u32,
    pub delta: u32,
    /// The child's value is known (terminal or immediate): its numbers are final.
    pub known: bool,
    /// The same player moves at the child.
    pub same: bool,
}

impl Kid {
    /// The child's (win, lose) numbers for its parent's mover.
    #[inline]
    pub fn win_lose(&self) -> (u32, u32) {
        if self.same {
            (self.phi, self.delta)
        } else {
            (self.delta, self.phi)
        }
    }

    /// φ/δ thresholds of the child from its win and lose thresholds for the parent's mover.
    #[inline]
    pub fn thresholds(&self, win: u32, lose: u32) -> (u32, u32) {
        if self.same {
            (win, lose)
        } else {
            (lose, win)
        }
    }
}

/// A node's numbers from its children: φ = the least "win" number (at index `best`), `second`
/// the next least, δ = the sum of "lose" numbers.
pub(super) struct Scan {
    pub phi: u32,
    pub second: u32,
    pub delta: u32,
    pub best: usize,
}

/// The state of a depth-first proof-number search: the game, the goal, the table, the per-ply
/// buffers of moves and children, and the statistics.
pub(super) struct DepthFirst<'g, G: ZeroSum + Hashed> {
    pub game: &'g G,
    pub tt: Table,
    moves: Vec<Vec<G::Move>>,
    kids: Vec<Vec<Kid>>,
    root_side: u8,
    pub target: i32,
    /// Children generated (root included).
    pub count: NodeCount,
    pub expansions: u64,
    pub stopped: Option<StopReason>,
}

impl<'g, G: ZeroSum + Hashed> DepthFirst<'g, G> {
    /// A search with a table of at most `table_bytes`.
    pub fn new(game: &'g G, table_bytes: usize) -> Self {
        DepthFirst {
            game,
            tt: Table::new(table_bytes),
            moves: Vec::new(),
            kids: Vec::new(),
            root_side: 0,
            target: 0,
            count: NodeCount::default(),
            expansions: 0,
            stopped: None,
        }
    }

    /// Resets the goal to "value(root) >= target" and the statistics (not the table).
    pub fn start(&mut self, root: &G::State, target: i32) {
        self.root_side = self.game.side(root);
        self.target = target;
        self.count = NodeCount::default();
        self.count.nodes = 1;
        self.expansions = 0;
        self.stopped = None;
        self.tt.evicted = 0;
    }

    /// Whether the side to move at `state` is the root's side.
    #[inline]
    pub fn is_root_side(&self, state: &G::State) -> bool {
        self.game.side(state) == self.root_side
    }

    /// φ/δ of a position whose answer is known without search ([`known_verdict`]): final.
    #[inline]
    pub fn known_numbers(&self, state: &G::State) -> Option<(u32, u32)> {
        let holds = known_verdict(self.game, state, self.root_side, self.target)?;
        Some(if self.is_root_side(state) == holds {
            (0, INF)
        } else {
            (INF, 0)
        })
    }

    /// Reports the nodes and records a stop request.
    #[cold]
    pub fn poll(&mut self, ctl: &Control) {
        self.count.flush(ctl);
        if let Some(r) = ctl.should_stop() {
            self.stopped = Some(r);
        } else if self.tt.evicted > self.tt.capacity().saturating_mul(MAX_EVICTED_TABLES) {
            self.stopped = Some(StopReason::Memory);
        }
    }

    /// Generates `state`'s ordered moves and its children's first numbers (known values final,
    /// others 1/1) into the buffers of `ply`, which the caller gives back with
    /// [`DepthFirst::restore`]; counts the children.
    #[inline]
    pub fn expand(&mut self, state: &G::State, ply: usize) -> (Vec<G::Move>, Vec<Kid>) {
        let mut moves = take_ply(&mut self.moves, ply);
        let mut kids = take_ply(&mut self.kids, ply);
        self.game.legal_moves(state, &mut moves);
        self.game.order_moves(state, &mut moves);
        kids.clear();
        let side = self.game.side(state);
        for &mv in &moves {
            let mut child = state.clone();
            self.game.apply(&mut child, mv);
            let (phi, delta, known) = match self.known_numbers(&child) {
                Some((p, d)) => (p, d, true),
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
        self.count.nodes += moves.len() as u64;
        (moves, kids)
    }

    /// Gives the buffers of `ply` back.
    #[inline]
    pub fn restore(&mut self, ply: usize, moves: Vec<G::Move>, kids: Vec<Kid>) {
        self.moves[ply] = moves;
        self.kids[ply] = kids;
    }

    /// Refreshes the children's numbers from the table (known ones are final) and returns the
    /// node's numbers; the first least "win" number is the best child.
    #[inline]
    pub fn scan(&self, kids: &mut [Kid]) -> Scan {
        let (mut w1, mut w2, mut sum, mut best) = (INF, INF, 0u32, 0usize);
        for (i, k) in kids.iter_mut().enumerate() {
            if !k.known {
                if let Some(e) = self.tt.get(k.hash) {
                    k.phi = e.phi;
                    k.delta = e.delta;
                }
            }
            let (w, l) = k.win_lose();
            if w < w1 {
                w2 = w1;
                w1 = w;
                best = i;
            } else if w < w2 {
                w2 = w;
            }
            sum = pn_add(sum, l);
        }
        Scan {
            phi: w1,
            second: w2,
            delta: sum,
            best,
        }
    }

    /// The verdict of the root's numbers and, when proved, the first proved root child's move
    /// as the last visit of the root left them.
    pub fn verdict(&self, root: &G::State, (phi, delta): (u32, u32)) -> (Verdict, Option<G::Move>) {
        let verdict = match (phi, delta) {
            (0, _) => Verdict::Proved,
            (_, 0) => Verdict::Disproved,
            _ => Verdict::Unknown(self.stopped.unwrap_or(StopReason::Nodes)),
        };
        let best_move = match (verdict, self.kids.first(), self.moves.first()) {
            (Verdict::Proved, Some(kids), Some(moves)) if !self.game.is_terminal(root) => kids
                .iter()
                .position(|k| if k.same { k.phi == 0 } else { k.delta == 0 })
                .map(|i| moves[i]),
            _ => None,
        };
        (verdict, best_move)
    }

    /// The decision the root's numbers give, with the search's statistics; `held_elsewhere`:
    /// nodes held at the peak outside the table (PDS-PN's second level).
    pub fn decision(
        &self,
        root: &G::State,
        numbers: (u32, u32),
        held_elsewhere: u64,
    ) -> Decision<G::Move> {
        let (verdict, best_move) = self.verdict(root, numbers);
        Decision {
            verdict,
            best_move,
            nodes: self.count.nodes,
            expansions: self.expansions,
            peak_nodes: self.tt.used + held_elsewhere,
            node_bytes: std::mem::size_of::<Entry>(),
        }
    }
}

/// A depth-first proof-number kernel (df-pn's MID, PDS-PN's first level): both search below a
/// node the same way and differ in the thresholds they give its best child and in how they
/// enter a child.
pub(super) trait Kernel<'g, G: ZeroSum + Hashed> {
    /// The search state.
    fn state(&mut self) -> &mut DepthFirst<'g, G>;

    /// φ/δ thresholds of the best child `kid` of a node searched with `(th_phi, th_delta)`
    /// whose children scanned as `scan`.
    fn child_thresholds(&self, scan: &Scan, kid: &Kid, th_phi: u32, th_delta: u32) -> (u32, u32);

    /// Counts a visit in the kernel's statistics; whether it is time to poll the control.
    fn count_visit(&mut self) -> bool;

    /// Whether [`Kernel::search_below`] flags the nodes it stores as expanded.
    const FLAGS_EXPANDED: bool;

    /// The numbers of the child `_state` (hash `_hash`) when they need no search below it with
    /// the thresholds `_th`; `None` (the default): search below it.
    #[inline]
    fn answered(
        &mut self,
        _state: &G::State,
        _hash: u64,
        _th: (u32, u32),
        _ctl: &Control,
    ) -> Option<(u32, u32)> {
        None
    }

    /// Searches the child `state` (hash `hash`) with the given thresholds; returns its numbers:
    /// counts the visit (polling the control at the kernel's pace), then takes what
    /// [`Kernel::answered`] gives or searches below the child.
    #[inline]
    fn visit(
        &mut self,
        state: &G::State,
        hash: u64,
        th_phi: u32,
        th_delta: u32,
        ply: usize,
        ctl: &Control,
    ) -> (u32, u32) {
        if self.count_visit() {
            self.state().poll(ctl);
        }
        let th = (th_phi, th_delta);
        if let Some(numbers) = self.answered(state, hash, th, ctl) {
            return numbers;
        }
        let start_work = self.state().expansions;
        self.search_below(state, hash, th, ply, ctl, start_work, Self::FLAGS_EXPANDED)
    }

    /// Expands `state` and searches its best child in turn until `state`'s numbers reach a
    /// threshold or a stop is requested; stores the numbers (with the work since `start_work`
    /// and the `expanded` flag) and returns them.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn search_below(
        &mut self,
        state: &G::State,
        hash: u64,
        (th_phi, th_delta): (u32, u32),
        ply: usize,
        ctl: &Control,
        start_work: u64,
        expanded: bool,
    ) -> (u32, u32) {
        let (moves, mut kids) = self.state().expand(state, ply);
        let (phi, delta) = loop {
            let scan = self.state().scan(&mut kids);
            if kids.is_empty() {
                // A non-terminal state without moves breaks the model: lost for its mover.
                break (INF, 0);
            }
            if scan.phi >= th_phi || scan.delta >= th_delta || self.state().stopped.is_some() {
                break (scan.phi, scan.delta);
            }
            let k = kids[scan.best];
            let (c_phi, c_delta) = self.child_thresholds(&scan, &k, th_phi, th_delta);
            let mut child = state.clone();
            self.state().game.apply(&mut child, moves[scan.best]);
            let (p, d) = self.visit(&child, k.hash, c_phi, c_delta, ply + 1, ctl);
            kids[scan.best].phi = p;
            kids[scan.best].delta = d;
        };
        let s = self.state();
        s.tt.put(hash, phi, delta, s.expansions - start_work + 1, expanded);
        s.restore(ply, moves, kids);
        (phi, delta)
    }
}
