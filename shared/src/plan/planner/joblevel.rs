//! Job-level proof-number plans ([`PlanShape::JobLevel`], algorithm `jlpns`).
//!
//! The planner keeps the top of a proof-number DAG (transpositions are one node, keyed by hash and
//! ply) for the question "value >= t" from the root's side to move, and never touches the game: a
//! task ([`TaskKind::Leaf`]) names a leaf by its path of moves; the worker runs the leaf kernel
//! there under a node budget and answers with bounds that solve it or with the leaf's children
//! ([`crate::wire::LeafChild`]), which the planner merges, backs up and descends from again.
//!
//! Facts to keep: every node holds its proven interval (root's view), so a leaf solved at one
//! threshold keeps what it proved for the next; numbers saturate as in
//! [`crate::search::pns::pn_add`]; each free slot gets a distinct most-proving leaf (a busy leaf
//! counts as exhausted), near the one just answered where that costs at most [`NEAR_TOLERANCE`];
//! an exact plan works ahead on the thresholds its probe sub-planner would ask next
//! ([`SPECULATION_DEPTH`]); stale leaves are [`Planner::obsolete`].
//!
//! Determinism: the state is a function of the results fed, in order (a leaf's node is found by
//! walking its path at result time), and of the set of pending tasks, so `Planner::restore`
//! rebuilds it; nothing outside `next_tasks`/`on_result`/`obsolete`/`forget`/`set_parallelism` is
//! needed. The full design (bounds, budget division, locality, speculative thresholds):
//! docs/scaling.md, "How the job-level planner works".

use super::Planner;
use crate::plan::job::{PlanShape, PreparedJob};
use crate::wire::{LeafChild, RawBounds, TaskKind, TaskOutput, LEAF_MAX_BUDGET_DIV};
use std::collections::{HashMap, HashSet};

/// Infinite proof or disproof number (as the kernels' [`crate::search::pns::INF`]).
const INF: u32 = u32::MAX;
/// Largest finite number; sums saturate here.
const PN_MAX: u32 = u32::MAX - 1;

fn add(a: u32, b: u32) -> u32 {
    if a == INF || b == INF {
        INF
    } else {
        a.saturating_add(b).min(PN_MAX)
    }
}

/// One position of the job-level tree.
#[derive(Clone, Debug)]
struct Node {
    /// The root's side moves here.
    or: bool,
    /// Plies from the root.
    ply: u32,
    /// Proven bounds of the value, root's view (`i32::MIN`/`i32::MAX`: none).
    lower: i32,
    upper: i32,
    /// The numbers its creating task reported, and for which threshold.
    init: (u32, u32, i32),
    /// Children in the game's move order: move text and node (empty: not expanded, or deleted).
    children: Vec<(String, u32)>,
    /// A task expanded it.
    expanded: bool,
    /// Nodes that list it as a child.
    parents: Vec<u32>,
}

/// Proof and disproof numbers of every node (by index) for one threshold.
#[derive(Clone, Debug)]
struct Numbers {
    t: i32,
    pn: Vec<u32>,
    dn: Vec<u32>,
}

/// How many thresholds ahead an exact plan works speculatively: with depth 2, the two
/// thresholds the probe plan would ask next (one per answer to the current one) and the four
/// after those.
const SPECULATION_DEPTH: u32 = 2;

/// How far from the best number (a factor) a child on the path a worker searched last may be
/// and still be taken first by that worker's next selection ([`JobLevel::next_tasks`]).
const NEAR_TOLERANCE: u64 = 2;

/// Largest divisor of a default leaf budget for many workers ([`auto_div`]). The defaults
/// (`Exact::job_level_leaf`) are sized for one worker, where the job-level tree
/// is pure overhead and the largest leaves are the fastest; with N workers the tree needs about
/// N open leaves at a time, so each worker's leaf is the default over N, down to a sixteenth
/// (docs/BENCHMARKS.md, job-level section, gives the measurements behind both numbers).
pub(super) const AUTO_BUDGET_MAX_DIV: u32 = 16;

/// A default leaf budget is divided ([`auto_div`]) only until the job has had this many leaf
/// results per task in flight: a young job's tree is narrow, and smaller leaves widen it so
/// that every worker soon has one; later the division only multiplies the expansions, each of
/// which repeats part of its parent's search (Connect Four 9 x 4 with two workers: 8.9 virtual
/// s divided throughout, 6.9 with this; `13712` at four: 2.34 against 2.12; docs/scaling.md).
pub(super) const AUTO_DIV_RESULTS_PER_SLOT: u64 = 2;

/// The divisor of a default leaf budget at `parallelism` tasks in flight.
pub(super) fn auto_div(parallelism: usize) -> u32 {
    parallelism.clamp(1, AUTO_BUDGET_MAX_DIV as usize) as u32
}

/// The job-level state of a [`Planner`] of shape [`PlanShape::JobLevel`].
#[derive(Clone, Debug)]
pub(super) struct JobLevel {
    /// The job's leaf budget is its default: divided by the parallelism ([`auto_div`]).
    auto_budget: bool,
    lower: i32,
    upper: i32,
    /// Decision plans: the one threshold.
    target: Option<i32>,
    /// Exact plans: the probe planner that picks the thresholds.
    probes: Option<Box<Planner>>,
    /// The threshold being decided (`None` once done).
    threshold: Option<i32>,
    /// The proof and disproof numbers of every node for each threshold in work: the current
    /// one first, then the speculative ones of an exact plan (see [`JobLevel::speculation`]).
    nums: Vec<Numbers>,
    nodes: Vec<Node>,
    /// (hash, ply) -> node.
    index: HashMap<(u64, u32), u32>,
    /// One output per finished threshold (and the output of a task that ended the plan).
    summaries: Vec<TaskOutput>,
    /// Nodes searched by tasks since the last summary.
    searched: u64,
    /// Leaf tasks answered.
    tasks_done: u64,
    /// Bytes of the results fed (JSON), what a store keeps for this plan.
    result_bytes: u64,
    /// A task ended the plan (a limit, or an answer without bounds or children).
    gave_up: bool,
    /// The move a task that solved the root as a leaf named (used while the root has no
    /// children).
    root_best: Option<String>,
}

impl JobLevel {
    pub(super) fn new(shape: &PlanShape) -> Option<Self> {
        let PlanShape::JobLevel {
            lower,
            upper,
            step,
            guess,
            target,
            auto_budget,
        } = *shape
        else {
            return None;
        };
        let root = Node {
            or: true,
            ply: 0,
            lower: i32::MIN,
            upper: i32::MAX,
            init: (1, 1, 0),
            children: Vec::new(),
            expanded: false,
            parents: Vec::new(),
        };
        let mut j = JobLevel {
            auto_budget,
            lower,
            upper,
            target,
            probes: None,
            threshold: target,
            nums: Vec::new(),
            nodes: vec![root],
            index: HashMap::new(),
            summaries: Vec::new(),
            searched: 0,
            tasks_done: 0,
            result_bytes: 0,
            gave_up: false,
            root_best: None,
        };
        if target.is_none() {
            let mut p = Planner::new(
                PlanShape::Probes {
                    lower,
                    upper,
                    step,
                    guess,
                },
                1,
            );
            j.threshold = next_probe(&mut p);
            j.probes = Some(Box::new(p));
        }
        j.retarget();
        Some(j)
    }

    fn solved(&self, n: u32, t: i32) -> bool {
        let n = &self.nodes[n as usize];
        n.lower >= t || n.upper < t
    }

    /// The root's proven bounds within the game's.
    pub(super) fn bounds(&self) -> RawBounds {
        match &self.probes {
            Some(p) => p.bounds,
            None => {
                let r = &self.nodes[0];
                RawBounds {
                    lower: r.lower.max(self.lower),
                    upper: r.upper.min(self.upper),
                }
            }
        }
    }

    pub(super) fn is_done(&self) -> bool {
        self.gave_up || self.threshold.is_none()
    }

    /// The child of node `n` by the move `mv`, if it has one.
    fn child(&self, n: u32, mv: &str) -> Option<u32> {
        let children = &self.nodes[n as usize].children;
        children.iter().find(|(m, _)| m == mv).map(|&(_, c)| c)
    }

    /// The node at the end of `path`, walking the current edges.
    fn resolve(&self, path: &[String]) -> Option<u32> {
        let mut n = 0u32;
        for mv in path {
            n = self.child(n, mv)?;
        }
        Some(n)
    }

    /// Whether a pending leaf task still matters: a threshold in work, every node on its path
    /// unsolved at it, the leaf not expanded since.
    fn useful(&self, target: i32, path: &[String]) -> Option<u32> {
        let t = target;
        self.slot(t)?;
        let mut n = 0u32;
        if self.solved(n, t) {
            return None;
        }
        for mv in path {
            n = self.child(n, mv)?;
            if self.solved(n, t) {
                return None;
            }
        }
        (!self.nodes[n as usize].expanded).then_some(n)
    }

    /// The slot in [`JobLevel::nums`] of threshold `t`, if it is in work.
    fn slot(&self, t: i32) -> Option<usize> {
        self.nums.iter().position(|x| x.t == t)
    }

    /// The thresholds an exact plan works on besides the current one: those the probe plan
    /// would ask next after each answer to it (proved, disproved), and so on to
    /// [`SPECULATION_DEPTH`], nearest first. A worker slot that no leaf of the current threshold
    /// can use takes a leaf of the first of these that has one, so the next threshold's tree is
    /// often grown, or decided, before the current one ends. A function of the probe plan's
    /// state only (restorable).
    fn speculation(&self) -> Vec<i32> {
        let (Some(probes), Some(t)) = (&self.probes, self.threshold) else {
            return Vec::new();
        };
        let mut out: Vec<i32> = Vec::new();
        let mut level = vec![((**probes).clone(), t)];
        for _ in 0..SPECULATION_DEPTH {
            let mut next = Vec::new();
            for (p, t) in level {
                let b = p.bounds;
                for raw in [
                    RawBounds {
                        lower: t,
                        upper: b.upper,
                    },
                    RawBounds {
                        lower: b.lower,
                        upper: t.saturating_sub(1),
                    },
                ] {
                    let mut q = p.clone();
                    let mut answer = TaskOutput {
                        raw: Some(raw),
                        ..TaskOutput::default()
                    };
                    answer.extra.proved = Some(Some(raw.lower >= t));
                    q.on_result(&TaskKind::Probe { target: t }, answer);
                    if q.is_done() {
                        continue;
                    }
                    if let Some(u) = next_probe(&mut q) {
                        if u != self.threshold.unwrap_or(u) && !out.contains(&u) {
                            out.push(u);
                        }
                        next.push((q, u));
                    }
                }
            }
            level = next;
        }
        out
    }

    /// Sets the thresholds in work after the current one changed: keeps the numbers of those
    /// still wanted, computes them for new ones over the whole tree.
    fn retarget(&mut self) {
        let Some(t) = self.threshold else {
            self.nums.clear();
            return;
        };
        let mut want = vec![t];
        want.extend(self.speculation());
        let n = self.nodes.len();
        let mut old = std::mem::take(&mut self.nums);
        for &u in &want {
            match old.iter().position(|x| x.t == u) {
                Some(i) => self.nums.push(old.swap_remove(i)),
                None => {
                    self.nums.push(Numbers {
                        t: u,
                        pn: vec![1; n],
                        dn: vec![1; n],
                    });
                    let s = self.nums.len() - 1;
                    let mut done = vec![false; n];
                    self.visit(0, s, &mut done);
                    // Nodes only reachable through solved ones: fresh numbers too, should a
                    // transposition link them again.
                    for m in 1..n as u32 {
                        self.visit(m, s, &mut done);
                    }
                }
            }
        }
    }

    /// Recomputes `n` from its children and then every ancestor whose bounds or numbers change,
    /// for every threshold in work (the backup after one result).
    fn propagate(&mut self, n: u32) {
        for s in 0..self.nums.len() {
            let mut stack = vec![n];
            let mut first = true;
            while let Some(m) = stack.pop() {
                if self.recompute(m, s) || std::mem::take(&mut first) {
                    stack.extend(self.nodes[m as usize].parents.iter().copied());
                }
            }
        }
    }

    /// One node's bounds and its numbers for the threshold of slot `s` from its children's
    /// current ones; deletes its children once they can no longer matter. Whether anything
    /// changed.
    fn recompute(&mut self, n: u32, s: usize) -> bool {
        let t = self.nums[s].t;
        let i = n as usize;
        let node = &self.nodes[i];
        let before = (
            node.lower,
            node.upper,
            self.nums[s].pn[i],
            self.nums[s].dn[i],
        );
        let (mut pn, mut dn) = (before.2, before.3);
        if node.expanded && !node.children.is_empty() && !(node.lower >= t || node.upper < t) {
            let or = node.or;
            let (mut lo, mut hi) = if or {
                (i32::MIN, i32::MIN)
            } else {
                (i32::MAX, i32::MAX)
            };
            (pn, dn) = if or { (INF, 0) } else { (0, INF) };
            let nums = &self.nums[s];
            for &(_, k) in &node.children {
                let c = &self.nodes[k as usize];
                let (cp, cd) = (nums.pn[k as usize], nums.dn[k as usize]);
                if or {
                    lo = lo.max(c.lower);
                    hi = hi.max(c.upper);
                    pn = pn.min(cp);
                    dn = add(dn, cd);
                } else {
                    lo = lo.min(c.lower);
                    hi = hi.min(c.upper);
                    pn = add(pn, cp);
                    dn = dn.min(cd);
                }
            }
            let node = &mut self.nodes[i];
            node.lower = node.lower.max(lo);
            node.upper = node.upper.min(hi);
        }
        let decision = self.target.is_some();
        let node = &mut self.nodes[i];
        if node.lower >= t {
            (pn, dn) = (0, INF);
        } else if node.upper < t {
            (pn, dn) = (INF, 0);
        } else if !node.expanded || node.children.is_empty() {
            (pn, dn) = if node.init.2 == t {
                (node.init.0.clamp(1, PN_MAX), node.init.1.clamp(1, PN_MAX))
            } else {
                (1, 1)
            };
        }
        let solved = node.lower >= t || node.upper < t;
        if n != 0 && !node.children.is_empty() && (node.lower == node.upper || (decision && solved))
        {
            node.children = Vec::new();
        }
        let after = (node.lower, node.upper, pn, dn);
        self.nums[s].pn[i] = pn;
        self.nums[s].dn[i] = dn;
        before != after
    }

    fn visit(&mut self, n: u32, s: usize, done: &mut [bool]) {
        if done[n as usize] {
            return;
        }
        done[n as usize] = true;
        let t = self.nums[s].t;
        let node = &self.nodes[n as usize];
        if node.expanded && !(node.lower >= t || node.upper < t) {
            let kids: Vec<u32> = node.children.iter().map(|c| c.1).collect();
            for k in kids {
                self.visit(k, s, done);
            }
        }
        self.recompute(n, s);
    }

    /// The leaves of the pending tasks of the thresholds in work.
    fn busy(&self, pending: &[TaskKind]) -> HashSet<u32> {
        pending
            .iter()
            .filter_map(|task| match task {
                TaskKind::Leaf { target, path, .. } => self.useful(*target, path),
                _ => None,
            })
            .collect()
    }

    /// A most-proving leaf below `n` that is not busy, with its path. `near` is the rest of a
    /// path the worker that takes the task searched last: while the descent follows it, its
    /// child is taken first when its number is within [`NEAR_TOLERANCE`] of the best (see
    /// [`JobLevel::next_tasks`]).
    fn select(
        &self,
        n: u32,
        s: usize,
        busy: &HashSet<u32>,
        seen: &mut HashSet<u32>,
        path: &mut Vec<String>,
        near: Option<&[String]>,
    ) -> Option<u32> {
        let nums = &self.nums[s];
        let t = nums.t;
        if self.solved(n, t) || !seen.insert(n) {
            return None;
        }
        let node = &self.nodes[n as usize];
        if !node.expanded {
            return (!busy.contains(&n)).then_some(n);
        }
        let mut kids: Vec<(u32, usize, &String, u32)> = node
            .children
            .iter()
            .enumerate()
            .filter(|(_, (_, k))| !self.solved(*k, t))
            .map(|(i, (mv, k))| {
                let k = *k as usize;
                (
                    if node.or { nums.pn[k] } else { nums.dn[k] },
                    i,
                    mv,
                    k as u32,
                )
            })
            .collect();
        kids.sort_by_key(|k| (k.0, k.1));
        let near_move = near.and_then(|p| p.first());
        if let (Some(mv), Some(best)) = (near_move, kids.first().map(|k| k.0)) {
            if let Some(i) = kids.iter().position(|k| k.2 == mv) {
                if kids[i].0 != INF && u64::from(kids[i].0) <= u64::from(best) * NEAR_TOLERANCE {
                    let k = kids.remove(i);
                    kids.insert(0, k);
                }
            }
        }
        for (_, _, mv, k) in kids {
            let follow = near.filter(|p| p.first() == Some(mv)).map(|p| &p[1..]);
            path.push(mv.clone());
            if let Some(leaf) = self.select(k, s, busy, seen, path, follow) {
                return Some(leaf);
            }
            path.pop();
        }
        None
    }

    /// Up to `free` leaf tasks, each at a distinct leaf: the current threshold's most-proving
    /// leaves first, then, for slots left over, the speculative thresholds' in turn. A threshold
    /// whose tree has fewer free leaves than the slots still free gets short tasks (the budget
    /// divided by slots per leaf, 2 to [`LEAF_MAX_BUDGET_DIV`]): those leaves are expanded sooner, so that
    /// idle workers find leaves, and a narrow tree's critical line is not a chain of whole
    /// budgets.
    ///
    /// Locality: `near` holds, for the first tasks, the path of the leaf the worker expected to
    /// take it searched last. Its kernel's table holds that leaf's subtree, so a descent that
    /// can stay on that path (a child within [`NEAR_TOLERANCE`] times the best number) does,
    /// and the worker continues where its table is warm instead of repeating a subtree another
    /// worker searched. Only the current threshold's selection follows it.
    pub(super) fn next_tasks(
        &self,
        pending: &[TaskKind],
        free: usize,
        parallelism: usize,
        near: &[Vec<String>],
    ) -> Vec<TaskKind> {
        let young = self.tasks_done < AUTO_DIV_RESULTS_PER_SLOT * parallelism as u64;
        let base = if self.auto_budget && young {
            auto_div(parallelism)
        } else {
            1
        };
        let mut out = Vec::new();
        if self.threshold.is_none() || self.gave_up {
            return out;
        }
        let mut busy = self.busy(pending);
        for s in 0..self.nums.len() {
            let room = free - out.len();
            let mut paths = Vec::new();
            while paths.len() < room {
                let mut path = Vec::new();
                let mut seen = HashSet::new();
                let hint = (s == 0)
                    .then(|| near.get(paths.len()))
                    .flatten()
                    .map(|p| p.as_slice());
                match self.select(0, s, &busy, &mut seen, &mut path, hint) {
                    Some(leaf) => {
                        busy.insert(leaf);
                        paths.push(path);
                    }
                    None => break,
                }
            }
            let short = if !paths.is_empty() && paths.len() < room {
                (room / paths.len()).clamp(2, LEAF_MAX_BUDGET_DIV as usize) as u32
            } else {
                1
            };
            let div = (base * short).min(LEAF_MAX_BUDGET_DIV);
            let budget_div = (div > 1).then_some(div);
            out.extend(paths.into_iter().map(|path| TaskKind::Leaf {
                target: self.nums[s].t,
                path,
                budget_div,
            }));
            if out.len() >= free {
                break;
            }
        }
        out
    }

    /// Feeds a leaf task's output (the task was pending).
    pub(super) fn on_result(&mut self, task: &TaskKind, out: &TaskOutput) {
        let TaskKind::Leaf { target, path, .. } = task else {
            return;
        };
        self.tasks_done += 1;
        self.searched += out.nodes;
        self.result_bytes += serde_json::to_vec(out).map_or(0, |v| v.len() as u64)
            + serde_json::to_vec(task).map_or(0, |v| v.len() as u64);
        if self.is_done() {
            return;
        }
        if out.raw.is_none() && out.extra.children.as_ref().is_none_or(|c| c.is_empty()) {
            // A limit (or a kernel that gave up): the plan ends with what is known.
            self.gave_up = true;
            self.summaries.push(TaskOutput {
                nodes: std::mem::take(&mut self.searched),
                extra: out.extra.clone(),
                ..TaskOutput::default()
            });
            return;
        }
        if let Some(n) = self.resolve(path) {
            if n == 0 && out.raw.is_some_and(|r| r.lower >= *target) {
                self.root_best = out.best_move.clone();
            }
            if let Some(r) = out.raw {
                let node = &mut self.nodes[n as usize];
                node.lower = node.lower.max(r.lower);
                node.upper = node.upper.min(r.upper);
            }
            if let Some(children) = &out.extra.children {
                self.expand(n, *target, children);
                let kids: Vec<u32> = self.nodes[n as usize]
                    .children
                    .iter()
                    .map(|c| c.1)
                    .collect();
                for k in kids {
                    self.propagate(k);
                }
            }
            self.propagate(n);
        }
        self.after_update();
    }

    /// Adds the reported children of `n` (once).
    fn expand(&mut self, n: u32, target: i32, children: &[LeafChild]) {
        if self.nodes[n as usize].expanded || children.is_empty() {
            return;
        }
        let ply = self.nodes[n as usize].ply + 1;
        let mut kids = Vec::with_capacity(children.len());
        for c in children {
            let lower = c.lower.unwrap_or(i32::MIN);
            let upper = c.upper.unwrap_or(i32::MAX);
            let k = match self.index.get(&(c.hash, ply)) {
                Some(&k) => {
                    let node = &mut self.nodes[k as usize];
                    node.lower = node.lower.max(lower);
                    node.upper = node.upper.min(upper);
                    k
                }
                None => {
                    let k = self.nodes.len() as u32;
                    self.nodes.push(Node {
                        or: c.or,
                        ply,
                        lower,
                        upper,
                        init: (c.pn, c.dn, target),
                        children: Vec::new(),
                        expanded: false,
                        parents: Vec::new(),
                    });
                    self.index.insert((c.hash, ply), k);
                    for x in &mut self.nums {
                        x.pn.push(1);
                        x.dn.push(1);
                    }
                    k
                }
            };
            if !self.nodes[k as usize].parents.contains(&n) {
                self.nodes[k as usize].parents.push(n);
            }
            kids.push((c.mv.clone(), k));
        }
        let node = &mut self.nodes[n as usize];
        node.children = kids;
        node.expanded = true;
    }

    /// After a result: a solved root ends the threshold (summary, next threshold or done), and
    /// the next one may be solved already (a speculative threshold's work).
    fn after_update(&mut self) {
        let mut changed = false;
        while self.end_threshold() {
            changed = true;
        }
        if changed {
            self.retarget();
        }
    }

    /// Ends the current threshold if the root is solved at it; whether it did.
    fn end_threshold(&mut self) -> bool {
        let Some(t) = self.threshold else {
            return false;
        };
        if !self.solved(0, t) {
            return false;
        }
        let root = &self.nodes[0];
        let raw = RawBounds {
            lower: root.lower.max(self.lower),
            upper: root.upper.min(self.upper),
        };
        let proved = root.lower >= t;
        // The first root move (game order) that keeps the lower bound.
        let best_move = root
            .children
            .iter()
            .find(|(_, k)| self.nodes[*k as usize].lower >= raw.lower)
            .map(|(m, _)| m.clone())
            .or_else(|| self.root_best.clone().filter(|_| root.children.is_empty()))
            .filter(|_| proved || raw.lower > self.lower);
        let mut summary = TaskOutput {
            nodes: std::mem::take(&mut self.searched),
            raw: Some(raw),
            best_move,
            ..TaskOutput::default()
        };
        summary.extra.proved = Some(Some(proved));
        self.summaries.push(summary.clone());
        self.threshold = match &mut self.probes {
            None => None,
            Some(p) => {
                p.on_result(&TaskKind::Probe { target: t }, summary);
                if p.is_done() {
                    None
                } else {
                    next_probe(p)
                }
            }
        };
        true
    }

    /// Pending leaf tasks that no longer matter.
    pub(super) fn obsolete(&self, pending: &[TaskKind]) -> Vec<TaskKind> {
        pending
            .iter()
            .filter(|task| match task {
                TaskKind::Leaf { target, path, .. } => {
                    self.is_done() || self.useful(*target, path).is_none()
                }
                _ => true,
            })
            .cloned()
            .collect()
    }

    /// Nodes of the tree (reachable or not).
    pub(super) fn tree_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Approximate bytes held in memory for the tree: nodes, edges with their move texts, the
    /// transposition index and the numbers of each threshold in work.
    pub(super) fn memory_bytes(&self) -> usize {
        let nodes = self.nodes.capacity() * std::mem::size_of::<Node>();
        let edges: usize = self
            .nodes
            .iter()
            .map(|n| {
                n.children.capacity() * std::mem::size_of::<(String, u32)>()
                    + n.children.iter().map(|c| c.0.capacity()).sum::<usize>()
            })
            .sum();
        // A hashbrown entry: key, value and one control byte, at a load of up to 7/8.
        let index = self.index.capacity() * (std::mem::size_of::<((u64, u32), u32)>() + 1);
        let numbers: usize = self
            .nums
            .iter()
            .map(|x| (x.pn.capacity() + x.dn.capacity()) * std::mem::size_of::<u32>())
            .sum();
        nodes + edges + index + numbers
    }

    pub(super) fn progress(&self, job: &dyn PreparedJob) -> serde_json::Value {
        let b = self.bounds();
        let n = self.tree_nodes().max(1);
        serde_json::json!({
            "lower": job.show_value(b.lower),
            "upper": job.show_value(b.upper),
            "threshold": self.threshold.map(|t| job.show_value(t)),
            "speculative": self.nums.iter().skip(1).map(|x| job.show_value(x.t)).collect::<Vec<_>>(),
            "thresholds_done": self.summaries.iter().filter(|s| s.raw.is_some()).count(),
            "leaf_tasks": self.tasks_done,
            "tree_nodes": self.tree_nodes(),
            "tree_bytes_per_node": self.memory_bytes() / n,
            "stored_bytes_per_node": self.result_bytes / n as u64,
        })
    }

    /// The final output: the job's merge of one output per finished threshold, with the tree's
    /// size.
    pub(super) fn finish(&self, job: &dyn PreparedJob) -> TaskOutput {
        let mut summaries = self.summaries.clone();
        if self.searched > 0 {
            summaries.push(TaskOutput {
                nodes: self.searched,
                ..TaskOutput::default()
            });
        }
        let mut out = job.finish_probes(self.bounds(), &summaries);
        let n = self.tree_nodes().max(1);
        out.extra
            .insert("leaf_tasks".into(), self.tasks_done.into());
        out.extra.insert("tree_nodes".into(), n.into());
        out.extra.insert(
            "tree_bytes_per_node".into(),
            (self.memory_bytes() / n).into(),
        );
        out.extra.insert(
            "stored_bytes_per_node".into(),
            (self.result_bytes / n as u64).into(),
        );
        out
    }
}

/// The probe sub-planner's next target.
fn next_probe(p: &mut Planner) -> Option<i32> {
    p.next_tasks().into_iter().find_map(|t| match t {
        TaskKind::Probe { target } => Some(target),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::Planner;
    use crate::plan::job::PlanShape;
    use crate::wire::{Extra, LeafChild, TaskKind, TaskOutput};

    /// A decision plan ("value >= 1" over -1..=1) fed by hand.
    fn planner(slots: usize) -> Planner {
        let shape = PlanShape::JobLevel {
            lower: -1,
            upper: 1,
            step: 1,
            guess: None,
            target: Some(1),
            auto_budget: false,
        };
        Planner::new(shape, slots)
    }

    fn child(mv: &str, hash: u64, or: bool, pn: u32, dn: u32) -> LeafChild {
        LeafChild {
            mv: mv.into(),
            hash,
            or,
            pn,
            dn,
            lower: None,
            upper: None,
        }
    }

    fn expanded(children: Vec<LeafChild>) -> TaskOutput {
        TaskOutput {
            nodes: 10,
            extra: Extra {
                children: Some(children),
                ..Extra::default()
            },
            ..TaskOutput::default()
        }
    }

    fn path(task: &TaskKind) -> Vec<String> {
        match task {
            TaskKind::Leaf { path, .. } => path.clone(),
            other => panic!("not a leaf: {other:?}"),
        }
    }

    fn p(moves: &[&str]) -> Vec<String> {
        moves.iter().map(|m| m.to_string()).collect()
    }

    /// A default budget is divided by the parallelism (up to 16), on top of the short tasks
    /// of a tree with fewer free leaves than slots; a budget the job named only by the latter.
    #[test]
    fn a_default_budget_is_shared_out_over_the_workers() {
        let div = |auto_budget: bool, slots: usize| {
            let shape = PlanShape::JobLevel {
                lower: -1,
                upper: 1,
                step: 1,
                guess: None,
                target: Some(1),
                auto_budget,
            };
            match Planner::new(shape, slots).next_tasks().as_slice() {
                [TaskKind::Leaf { budget_div, .. }] => *budget_div,
                other => panic!("one root leaf: {other:?}"),
            }
        };
        assert_eq!(div(true, 1), None);
        assert_eq!(div(false, 1), None);
        // One leaf for 4 slots: a quarter as a short task, and a quarter more by default.
        assert_eq!(div(false, 4), Some(4));
        assert_eq!(div(true, 4), Some(16));
        assert_eq!(div(true, 256), Some(crate::wire::LEAF_MAX_BUDGET_DIV));
        assert_eq!(super::auto_div(256), super::AUTO_BUDGET_MAX_DIV);

        // Two slots: divided by two until 2 * 2 leaf results came back, then whole.
        let shape = PlanShape::JobLevel {
            lower: -1,
            upper: 1,
            step: 1,
            guess: None,
            target: Some(1),
            auto_budget: true,
        };
        let mut pl = Planner::new(shape, 2);
        let mut hash = 1;
        let mut divs = Vec::new();
        for _ in 0..6 {
            let task = match pl.pending().first() {
                Some(t) => t.clone(),
                None => pl.next_tasks()[0].clone(),
            };
            let children = (0..4)
                .map(|i| {
                    hash += 1;
                    child(&format!("m{i}"), hash, false, 1, 1)
                })
                .collect();
            assert!(pl.on_result(&task, expanded(children)));
            for t in pl.next_tasks() {
                if let TaskKind::Leaf { budget_div, .. } = t {
                    divs.push(budget_div);
                }
            }
        }
        assert!(divs.len() >= 6, "{divs:?}");
        assert!(divs[..3].iter().all(|d| *d == Some(2)), "{divs:?}");
        assert!(
            divs[divs.len() - 2..].iter().all(|d| d.is_none()),
            "{divs:?}"
        );
    }

    /// The root (OR) has children a, b, c with proof numbers 3, 5 and 7; a and b were
    /// expanded by earlier tasks. A worker whose last leaf was below b gets its next leaf
    /// below b (5 is within twice 3), one whose last leaf was below c does not (7 is not), and
    /// without a hint the most-proving leaf (below a) is taken. The hint lasts one call.
    #[test]
    fn a_freed_worker_continues_near_its_last_leaf_when_that_costs_little() {
        let mut pl = planner(2);
        let root = pl.next_tasks();
        assert_eq!(root.len(), 1);
        let kids = vec![
            child("a", 1, false, 3, 1),
            child("b", 2, false, 5, 1),
            child("c", 3, false, 7, 1),
        ];
        assert!(pl.on_result(&root[0], expanded(kids)));
        let first = pl.next_tasks();
        assert_eq!(
            first.iter().map(path).collect::<Vec<_>>(),
            vec![p(&["a"]), p(&["b"])],
            "two slots: the two most-proving leaves"
        );
        // a and b are expanded, each into one OR grandchild carrying its parent's number.
        let grand = |mv: &str, hash: u64, pn: u32| expanded(vec![child(mv, hash, true, pn, 1)]);
        assert!(pl.on_result(&first[0], grand("x", 11, 3)));
        assert!(pl.on_result(&first[1], grand("y", 12, 5)));
        pl.set_parallelism(1);

        let mut q = pl.clone();
        assert_eq!(path(&q.next_tasks()[0]), p(&["a", "x"]), "no hint");

        let mut q = pl.clone();
        q.prefer_near(vec![p(&["b"])]);
        assert_eq!(path(&q.next_tasks()[0]), p(&["b", "y"]), "near b");
        q.forget(&q.pending()[0].clone());
        assert_eq!(
            path(&q.next_tasks()[0]),
            p(&["a", "x"]),
            "the hint is used once"
        );

        let mut q = pl.clone();
        q.prefer_near(vec![p(&["c", "z"])]);
        assert_eq!(
            path(&q.next_tasks()[0]),
            p(&["a", "x"]),
            "c's number is more than twice a's"
        );
    }
}
