//! Two-valued proof-number search with an explicit tree (L. V. Allis, M. van der Meulen and
//! H. J. van den Herik, "Proof-Number Search", 1994), with Allis's optimisations.
//!
//! Contract: see [`super`]. [`Pns::decide`] answers "value(root) >= target" from the root side's
//! view, or says why it stopped (limits, cancellation, or the memory budget,
//! [`StopReason::Memory`], which it reports instead of growing past it).
//!
//! Node storage: one arena of compact nodes; a node's children are one contiguous block (first
//! index and count), freed blocks are reused by length, and a node stores the move that leads to
//! it, not the state: states are recomputed along the path while descending. So a node is
//! [`Pns::node_bytes`] (20 for one-byte moves) whatever the state's size, since memory, not time,
//! limits PNS; the path is the one stack that update, selection and deletion share (no parent
//! pointers).
//!
//! Optimisations ([`PnOptions`]), each switchable so its effect can be measured, none changing
//! which nodes are expanded (Allis's leftmost tie rule everywhere): `current_node`,
//! `remember_best`, `delete_solved`, and at the memory budget DeleteLeastProving (subtrees off the
//! path freed least-proving first, down to [`FREE_TO`] of the budget; a freed node keeps its
//! numbers). Transpositions are searched twice (the tree is a tree); repeating games keep their
//! history in the state, so the tree never loops. Details: docs/kernels.md, "PNS tree".

use super::{known_verdict, pn_add, Decision, PnOptions, Verdict, INF};
use crate::model::ZeroSum;
use crate::search::{Control, StopReason};

/// No child block.
const NIL: u32 = u32::MAX;
/// After DeleteLeastProving the tree holds at most this fraction of its budget, so that the
/// deletion walk (which starts at the root) runs once per many expansions, not once per expansion.
pub const FREE_TO: f64 = 0.75;
/// DeleteLeastProving gives up (the search ends with [`StopReason::Memory`]) once it has freed
/// this many times the budget in one search: past that point the search mostly re-expands what it
/// threw away, and a proof that does not fit is better reported than chased forever.
pub const MAX_RECYCLED_BUDGETS: usize = 8;
/// Polling interval of the control, in expansions.
const POLL: u64 = 1 << 10;

/// One node of the arena.
#[derive(Clone, Copy, Debug)]
struct Node<M> {
    pn: u32,
    dn: u32,
    /// First child (children are contiguous), or [`NIL`] when not expanded.
    first: u32,
    /// Number of children.
    count: u16,
    /// Offset of the most-proving child (valid when expanded and `remember_best`).
    best: u16,
    /// The root's side moves here.
    or: bool,
    /// The move from the parent.
    mv: M,
}

/// The explicit-tree PNS engine. Reusable: its buffers survive from one search to the next.
pub struct Pns<'g, G: ZeroSum> {
    game: &'g G,
    opts: PnOptions,
    nodes: Vec<Node<G::Move>>,
    /// Free child blocks by length.
    free: Vec<Vec<u32>>,
    live: usize,
    max_nodes: usize,
    moves: Vec<G::Move>,
    /// Node indices from the root to the current node.
    path: Vec<u32>,
    /// States along `path`.
    states: Vec<G::State>,
    stack: Vec<u32>,
    root_side: u8,
    target: i32,
    /// Nodes freed by DeleteLeastProving in this search.
    recycled: usize,
    /// Whether DeleteLeastProving may free nodes at all (not in a PN² first level, where a
    /// freed node costs a whole second-level search to get back).
    recycle: bool,
    /// The side whose claim is decided, when not the root's (a PN² second level).
    side_override: Option<u8>,
    /// The numbers of a terminal root (the arena is then empty).
    terminal_root: Option<(u32, u32)>,
    created: u64,
    reported: u64,
    expansions: u64,
    peak: usize,
}

/// How a leaf gets its children: by the rules (PNS) or from a second-level search (PN²).
pub(crate) enum Leaf<'a, 'g, G: ZeroSum> {
    Rules,
    Second(&'a mut Pns<'g, G>, f64),
}

impl<'g, G: ZeroSum> Pns<'g, G> {
    /// An engine whose tree holds at most `opts.memory_mb` MiB.
    pub fn new(game: &'g G, opts: &PnOptions) -> Self {
        let bytes = (opts.memory_mb as usize).saturating_mul(1 << 20);
        Self::with_max_nodes(game, opts, bytes / std::mem::size_of::<Node<G::Move>>())
    }

    /// An engine whose tree holds at most `max_nodes` nodes.
    pub(crate) fn with_max_nodes(game: &'g G, opts: &PnOptions, max_nodes: usize) -> Self {
        Pns {
            game,
            opts: *opts,
            nodes: Vec::new(),
            free: Vec::new(),
            live: 0,
            max_nodes: max_nodes.clamp(2, NIL as usize - 1),
            moves: Vec::new(),
            path: Vec::new(),
            states: Vec::new(),
            stack: Vec::new(),
            root_side: 0,
            target: 0,
            recycled: 0,
            recycle: true,
            side_override: None,
            terminal_root: None,
            created: 0,
            reported: 0,
            expansions: 0,
            peak: 0,
        }
    }

    /// Without DeleteLeastProving: a full tree ends the search with [`StopReason::Memory`].
    pub(crate) fn without_recycling(mut self) -> Self {
        self.recycle = false;
        self
    }

    /// Bytes of one node.
    pub fn node_bytes() -> usize {
        std::mem::size_of::<Node<G::Move>>()
    }

    /// Decides "value(root) >= target" (see the module doc).
    pub fn decide(&mut self, root: &G::State, target: i32, ctl: &Control) -> Decision<G::Move> {
        let r = self.search(root, target, ctl, &mut Leaf::Rules, u64::MAX, usize::MAX);
        self.decision(r)
    }

    /// The result of the last search as a [`Decision`].
    pub(crate) fn decision(&self, r: Result<(), StopReason>) -> Decision<G::Move> {
        let (pn, dn) = self.root_numbers();
        let verdict = match r {
            Err(reason) => Verdict::Unknown(reason),
            Ok(()) if pn == 0 => Verdict::Proved,
            Ok(()) if dn == 0 => Verdict::Disproved,
            Ok(()) => Verdict::Unknown(StopReason::Nodes),
        };
        let best_move = if verdict == Verdict::Proved && self.terminal_root.is_none() {
            self.children(0)
                .find(|&c| self.nodes[c].pn == 0)
                .map(|c| self.nodes[c].mv)
        } else {
            None
        };
        Decision {
            verdict,
            best_move,
            nodes: self.created,
            expansions: self.expansions,
            peak_nodes: self.peak as u64,
            node_bytes: Self::node_bytes(),
        }
    }

    /// Proof and disproof numbers of the root.
    pub fn root_numbers(&self) -> (u32, u32) {
        match self.terminal_root {
            Some(numbers) => numbers,
            None => (self.nodes[0].pn, self.nodes[0].dn),
        }
    }

    /// Nodes in the tree now.
    pub fn live_nodes(&self) -> usize {
        self.live
    }

    /// The moves from the root to the current most-proving node (selection from the root with
    /// the leftmost tie rule, without expanding it).
    pub fn most_proving_path(&self) -> Vec<G::Move> {
        let mut out = Vec::new();
        let mut n = 0usize;
        while self.terminal_root.is_none() && self.nodes[n].first != NIL {
            n = self.pick(n);
            out.push(self.nodes[n].mv);
        }
        out
    }

    fn children(&self, n: usize) -> impl Iterator<Item = usize> {
        let node = &self.nodes[n];
        let first = node.first as usize;
        let count = if node.first == NIL {
            0
        } else {
            node.count as usize
        };
        first..first + count
    }

    /// The leftmost child with the parent's proof number (OR) or disproof number (AND).
    #[inline]
    fn pick(&self, n: usize) -> usize {
        let node = &self.nodes[n];
        let first = node.first as usize;
        if self.opts.remember_best {
            return first + node.best as usize;
        }
        let kids = &self.nodes[first..first + node.count as usize];
        let i = if node.or {
            kids.iter().position(|c| c.pn == node.pn)
        } else {
            kids.iter().position(|c| c.dn == node.dn)
        };
        first + i.unwrap_or(0)
    }

    /// Proof number, disproof number and most-proving child of an expanded node.
    #[inline]
    fn compute(&self, n: usize) -> (u32, u32, u16) {
        let node = &self.nodes[n];
        let first = node.first as usize;
        let kids = &self.nodes[first..first + node.count as usize];
        if node.or {
            min_and_sum(kids, |c| (c.pn, c.dn))
        } else {
            let (min, sum, best) = min_and_sum(kids, |c| (c.dn, c.pn));
            (sum, min, best)
        }
    }

    /// Numbers of a new node at `state`: solved if its answer is known ([`known_verdict`]),
    /// else (1, 1).
    #[inline]
    fn initial_numbers(&self, state: &G::State) -> (u32, u32) {
        match known_verdict(self.game, state, self.root_side, self.target) {
            Some(true) => (0, INF),
            Some(false) => (INF, 0),
            None => (1, 1),
        }
    }

    fn alloc(&mut self, count: usize) -> Option<u32> {
        if self.live + count > self.max_nodes {
            return None;
        }
        let block = match self.free.get_mut(count).and_then(Vec::pop) {
            Some(b) => b,
            None => {
                let b = self.nodes.len() as u32;
                let filler = self.nodes[0];
                self.nodes.resize(self.nodes.len() + count, filler);
                b
            }
        };
        self.live += count;
        self.peak = self.peak.max(self.live);
        Some(block)
    }

    /// Frees the whole subtree below `n` (not `n` itself).
    fn collapse(&mut self, n: u32) {
        self.stack.clear();
        self.stack.push(n);
        while let Some(x) = self.stack.pop() {
            let node = self.nodes[x as usize];
            if node.first == NIL {
                continue;
            }
            for c in node.first..node.first + node.count as u32 {
                if self.nodes[c as usize].first != NIL {
                    self.stack.push(c);
                }
            }
            let count = node.count as usize;
            if self.free.len() <= count {
                self.free.resize_with(count + 1, Vec::new);
            }
            self.free[count].push(node.first);
            self.live -= count;
            let x = &mut self.nodes[x as usize];
            x.first = NIL;
        }
    }

    /// DeleteLeastProving: frees subtrees off the current path until `need` more nodes fit
    /// below [`FREE_TO`] of the budget. False if not enough could be freed.
    fn delete_least_proving(&mut self, need: usize) -> bool {
        if !self.recycle || self.recycled > self.max_nodes.saturating_mul(MAX_RECYCLED_BUDGETS) {
            return false;
        }
        let before = self.live;
        let ok = self.delete_off_path(need);
        self.recycled += before - self.live;
        ok
    }

    fn delete_off_path(&mut self, need: usize) -> bool {
        let goal = ((self.max_nodes as f64 * FREE_TO) as usize).saturating_sub(need);
        let goal = if goal == 0 {
            self.max_nodes.saturating_sub(need)
        } else {
            goal
        };
        'restart: while self.live > goal {
            for d in 0..self.path.len() {
                let n = self.path[d] as usize;
                let on_path = self.path.get(d + 1).copied().unwrap_or(NIL) as usize;
                let or = self.nodes[n].or;
                let victim = self
                    .children(n)
                    .filter(|&c| c != on_path && self.nodes[c].first != NIL)
                    .max_by_key(|&c| {
                        if or {
                            self.nodes[c].pn
                        } else {
                            self.nodes[c].dn
                        }
                    });
                if let Some(v) = victim {
                    self.collapse(v as u32);
                    continue 'restart;
                }
            }
            return self.live + need <= self.max_nodes;
        }
        true
    }

    /// Expands the leaf at the end of the path.
    fn expand(&mut self, how: &mut Leaf<'_, 'g, G>, ctl: &Control) -> Result<(), StopReason> {
        let leaf = *self.path.last().expect("path is never empty") as usize;
        let state = self.states.last().expect("one state per path node").clone();
        self.expansions += 1;
        match how {
            Leaf::Rules => {
                let mut moves = std::mem::take(&mut self.moves);
                self.game.legal_moves(&state, &mut moves);
                self.game.order_moves(&state, &mut moves);
                let r = self.attach(leaf, moves.len(), |this, i| {
                    let mut child = state.clone();
                    this.game.apply(&mut child, moves[i]);
                    let (pn, dn) = this.initial_numbers(&child);
                    let or = this.game.side(&child) == this.root_side;
                    (moves[i], pn, dn, or)
                });
                self.moves = moves;
                r
            }
            Leaf::Second(second, factor) => {
                let budget = ((self.live as f64 * *factor) as usize)
                    .max(super::pn2::MIN_SECOND_LEVEL)
                    .min(second.max_nodes);
                // The second level answers the first level's question: same target, same side.
                second.side_override = Some(self.root_side);
                let r = second.search(&state, self.target, ctl, &mut Leaf::Rules, u64::MAX, budget);
                second.side_override = None;
                // The second level reported its nodes to `ctl` itself.
                self.created += second.created;
                self.reported += second.created;
                self.expansions += second.expansions;
                self.peak = self.peak.max(self.live + second.peak);
                match r {
                    // The second level ran out of its budget: its numbers are still valid.
                    Err(StopReason::Nodes) | Err(StopReason::Memory) | Ok(()) => {}
                    Err(other) => return Err(other),
                }
                let (pn, dn) = second.root_numbers();
                let expanded = second.terminal_root.is_none() && second.nodes[0].first != NIL;
                if !expanded && pn != 0 && dn != 0 {
                    return Err(StopReason::Memory);
                }
                if !expanded {
                    let node = &mut self.nodes[leaf];
                    node.pn = pn;
                    node.dn = dn;
                    return Ok(());
                }
                let count = second.nodes[0].count as usize;
                let first = second.nodes[0].first as usize;
                self.attach(leaf, count, |_, i| {
                    let n = &second.nodes[first + i];
                    (n.mv, n.pn, n.dn, n.or)
                })
            }
        }
    }

    /// Gives `leaf` a block of `count` children made by `make`, freeing memory if needed.
    fn attach(
        &mut self,
        leaf: usize,
        count: usize,
        mut make: impl FnMut(&Self, usize) -> (G::Move, u32, u32, bool),
    ) -> Result<(), StopReason> {
        if count == 0 {
            // A non-terminal state without moves breaks the model; treat it as lost for its mover.
            let node = &mut self.nodes[leaf];
            (node.pn, node.dn) = if node.or { (INF, 0) } else { (0, INF) };
            return Ok(());
        }
        if count > u16::MAX as usize {
            return Err(StopReason::Memory);
        }
        let block = match self.alloc(count) {
            Some(b) => b,
            None => {
                if !self.delete_least_proving(count) {
                    return Err(StopReason::Memory);
                }
                self.alloc(count).ok_or(StopReason::Memory)?
            }
        };
        for i in 0..count {
            let (mv, pn, dn, or) = make(self, i);
            self.nodes[block as usize + i] = Node {
                pn,
                dn,
                first: NIL,
                count: 0,
                best: 0,
                or,
                mv,
            };
        }
        self.created += count as u64;
        let node = &mut self.nodes[leaf];
        node.first = block;
        node.count = count as u16;
        Ok(())
    }

    /// Updates the numbers from the end of the path upwards; returns the depth on the path at
    /// which the next selection starts.
    fn update(&mut self) -> usize {
        for d in (0..self.path.len()).rev() {
            let n = self.path[d] as usize;
            if self.nodes[n].first == NIL {
                // A leaf solved without children (PN² second level, or a childless state).
                continue;
            }
            let (pn, dn, best) = self.compute(n);
            let node = &mut self.nodes[n];
            let changed = node.pn != pn || node.dn != dn;
            node.pn = pn;
            node.dn = dn;
            node.best = best;
            if (pn == 0 || dn == 0) && self.opts.delete_solved && d > 0 {
                self.collapse(n as u32);
            }
            if !changed && self.opts.current_node {
                return d;
            }
        }
        0
    }

    /// Allis's main loop, from a tree holding only `root`. Stops when the root is solved, after
    /// `max_expansions`, or when the tree would exceed `budget` nodes ([`StopReason::Nodes`]).
    pub(crate) fn search(
        &mut self,
        root: &G::State,
        target: i32,
        ctl: &Control,
        how: &mut Leaf<'_, 'g, G>,
        max_expansions: u64,
        budget: usize,
    ) -> Result<(), StopReason> {
        self.nodes.clear();
        self.free.clear();
        self.path.clear();
        self.states.clear();
        self.created = 1;
        self.recycled = 0;
        self.reported = 0;
        self.expansions = 0;
        self.target = target;
        self.root_side = self.side_override.unwrap_or_else(|| self.game.side(root));
        // A non-terminal root is always expanded (even when the game knows its value at once),
        // so that a proved root has a proved child to name as the best move.
        let (pn, dn) = if self.game.is_terminal(root) {
            self.initial_numbers(root)
        } else {
            (1, 1)
        };
        self.moves.clear();
        self.game.legal_moves(root, &mut self.moves);
        let Some(&placeholder) = self.moves.first() else {
            // A terminal root: solved, and there is no move to label it with.
            self.terminal_root = Some((pn, dn));
            self.live = 0;
            return Ok(());
        };
        self.terminal_root = None;
        self.nodes.push(Node {
            pn,
            dn,
            first: NIL,
            count: 0,
            best: 0,
            or: self.game.side(root) == self.root_side,
            // Never read: the root has no parent move; any value of the type will do.
            mv: placeholder,
        });
        self.live = 1;
        self.peak = 1;
        self.path.push(0);
        self.states.push(root.clone());
        let mut start = 0usize;
        let result = loop {
            let r = &self.nodes[0];
            if r.pn == 0 || r.dn == 0 {
                break Ok(());
            }
            if self.expansions >= max_expansions {
                break Err(StopReason::Nodes);
            }
            if self.expansions.is_multiple_of(POLL) {
                ctl.add_nodes(self.created - self.reported);
                self.reported = self.created;
                if let Some(reason) = ctl.should_stop() {
                    break Err(reason);
                }
            }
            // Select: from the node where the last update stopped.
            self.path.truncate(start + 1);
            self.states.truncate(start + 1);
            let mut n = self.path[start] as usize;
            while self.nodes[n].first != NIL {
                let c = self.pick(n);
                let mut s = self.states.last().expect("state").clone();
                self.game.apply(&mut s, self.nodes[c].mv);
                self.states.push(s);
                self.path.push(c as u32);
                n = c;
            }
            if self.live + 1 > budget {
                break Err(StopReason::Nodes);
            }
            if let Err(reason) = self.expand(how, ctl) {
                break Err(reason);
            }
            start = self.update();
        };
        ctl.add_nodes(self.created - self.reported);
        self.reported = self.created;
        result
    }
}

impl<'g, G: ZeroSum> Pns<'g, G> {
    /// A PDS-PN second level: a search from `state` for the claim "value seen from `side` >=
    /// `target`", stopped when its tree would exceed `budget` nodes. Fills `kids` with the
    /// children of `state` (move, proof number, disproof number, in the claim's terms) when the
    /// search got to expand it, and returns the numbers of `state` and the nodes it created (the
    /// search reported them to `ctl` itself). A budget that runs out is not an error.
    pub(crate) fn second_level(
        &mut self,
        state: &G::State,
        side: u8,
        target: i32,
        budget: usize,
        ctl: &Control,
        kids: &mut Vec<(G::Move, u32, u32)>,
    ) -> Result<((u32, u32), u64, u64), StopReason> {
        self.side_override = Some(side);
        let r = self.search(state, target, ctl, &mut Leaf::Rules, u64::MAX, budget);
        self.side_override = None;
        match r {
            Err(StopReason::Nodes) | Err(StopReason::Memory) | Ok(()) => {}
            Err(other) => return Err(other),
        }
        kids.clear();
        if self.terminal_root.is_none() && self.nodes[0].first != NIL {
            kids.extend(self.children(0).map(|c| {
                let n = &self.nodes[c];
                (n.mv, n.pn, n.dn)
            }));
        }
        Ok((self.root_numbers(), self.created, self.expansions))
    }
}

/// The least of the children's first numbers (`numbers(child).0`; the first child holding it
/// is `best`) and the sum of their second numbers: an OR node's pn and dn from its children's
/// (pn, dn), an AND node's dn and pn from their (dn, pn).
#[inline(always)]
fn min_and_sum<M>(kids: &[Node<M>], numbers: impl Fn(&Node<M>) -> (u32, u32)) -> (u32, u32, u16) {
    let (mut min, mut sum, mut best) = (INF, 0u32, 0u16);
    for (i, c) in kids.iter().enumerate() {
        let (own, other) = numbers(c);
        if own < min {
            min = own;
            best = i as u16;
        }
        sum = pn_add(sum, other);
    }
    (min, sum, best)
}
