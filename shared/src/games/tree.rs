//! Explicit game trees from JSON (docs/API.md, section 4, `tree`).
//!
//! ```text
//! node := number                                 terminal, MAX's utility
//!       | {"utility": [u0, u1, ...]}             terminal, one utility per player
//!       | {"max": [node, ...]}                   MAX (player 0) chooses
//!       | {"min": [node, ...]}                   MIN (player 1) chooses
//!       | {"player": i, "children": [node, ...]} player i chooses, utilities are vectors
//!       | {"chance": [[p, node], ...]}           chance; probabilities sum to 1 (within 1e-9)
//! any non-terminal node may carry "labels": ["A", "B", ...] naming its moves
//! ```
//!
//! The tree is the game (the position text is the JSON or `@path`, the state its root), stored as
//! an arena in depth-first order; a state is a node index and a move a child index, so copies are
//! free. Kinds: [`TreeKind::MinMax`], [`TreeKind::Chance`] (with chance nodes) and
//! [`TreeKind::MultiPlayer`] (player nodes, utility vectors); the registry offers each kind the
//! kernels that fit it. Two-player values ([`ZeroSum`]) are exact: leaf numbers become their rank
//! among the distinct leaf values (order-preserving), kernels compare and negate ranks, and
//! [`ZeroSum::value_to_json`] maps a rank back to the leaf's number, from MAX's view.

use crate::games::entry::{Family, GameEntry, Visitor};
use crate::games::Exact;
use crate::model::settings::{Opts, SolveError, Spec};
use crate::model::{
    excerpt, ChanceZeroSum, Game, Hashed, NotationError, Picture, Stochastic, Tactics, Turn,
    VectorEval, ZeroSum,
};
use serde_json::Value;
use std::sync::Arc;

/// What a tree contains, which decides the kernels that apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeKind {
    /// Only max and min nodes over number leaves: a two-player zero-sum game.
    MinMax,
    /// Max, min and chance nodes over number leaves.
    Chance,
    /// Player nodes over utility vectors (chance nodes allowed).
    MultiPlayer,
}

#[derive(Clone, Debug)]
enum Node {
    Leaf { first: u32 },
    Max,
    Min,
    Player(u8),
    Chance,
}

/// The move labels of one node, with their order for lookups by name.
#[derive(Clone, Debug)]
struct Labels {
    /// Label of each child, in child order.
    names: Vec<String>,
    /// Child indices sorted by label (binary search of a move's text).
    order: Vec<u32>,
}

impl Labels {
    /// The child labelled `name`.
    fn find(&self, name: &str) -> Option<u32> {
        self.order
            .binary_search_by(|&i| self.names[i as usize].as_str().cmp(name))
            .ok()
            .map(|at| self.order[at])
    }
}

#[derive(Clone, Debug)]
struct Entry {
    node: Node,
    /// Children (node indices).
    children: Vec<u32>,
    /// Probabilities of the children at chance nodes.
    probs: Vec<f64>,
    /// Move labels, when given.
    labels: Option<Labels>,
    /// The parent's index (`u32::MAX` at the root) and this node's place among its children:
    /// a position's path is read back without a scan of the tree.
    parent: u32,
    slot: u32,
}

/// A parsed game tree. Cloning it is cheap (the nodes are shared): a job clones its game for
/// every task and every root move of an analysis.
#[derive(Clone, Debug)]
pub struct Tree(Arc<TreeData>);

/// The nodes and leaf values of a [`Tree`].
#[derive(Debug)]
pub struct TreeData {
    nodes: Vec<Entry>,
    /// Utilities of all leaves, `players` numbers per leaf.
    utilities: Vec<f64>,
    players: usize,
    kind: TreeKind,
    /// Distinct MAX utilities in increasing order (ranks for [`ZeroSum`]).
    ranks: Vec<f64>,
    /// The smallest and largest utility of each player over the leaves.
    ranges: Vec<(f64, f64)>,
}

impl std::ops::Deref for Tree {
    type Target = TreeData;
    fn deref(&self) -> &TreeData {
        &self.0
    }
}

const MAX_NODES: usize = 50_000_000;
/// Deepest tree the builder follows. Trees read from text are far shallower (the JSON reader
/// stops at 128 nested arrays and objects); this bounds trees built from JSON values in code,
/// so that the builder's recursion stays well inside a 2 MiB thread stack.
const MAX_DEPTH: usize = 1_000;
/// Most children (and so labels) of one node: far more than any real game's branching
/// factor, and it bounds the work per node of everything that lists a node's moves (analysis
/// of every root move, MCTS root statistics, proof certificates, error messages).
pub const MAX_CHILDREN: usize = 4_096;
/// Longest move label, in bytes: labels are moves, carried in every task, path and result.
pub const MAX_LABEL_BYTES: usize = 64;
/// Labels a "no such move" error lists before it cuts the list short.
const LISTED_LABELS: usize = 8;

impl Tree {
    /// Parses the JSON text of a tree. The library never reads files a position names: `@file`
    /// is a convenience of the command line, which reads the file before it builds the job.
    ///
    /// Linear in the text: every node is visited once, a node's labels are checked for
    /// duplicates by sorting them once, and the path a message names is only written for an
    /// error.
    pub fn parse(text: &str) -> Result<Tree, NotationError> {
        let json_text = text.trim();
        if json_text.starts_with('@') {
            return Err(NotationError::new(
                "tree positions are JSON; '@file' is read by the command line only",
            ));
        }
        if json_text.is_empty() {
            return Err(NotationError::new(
                "the tree game needs a tree as its position (JSON)",
            ));
        }
        let v: Value = serde_json::from_str(json_text)
            .map_err(|e| NotationError::new(format!("tree JSON is malformed: {e}")))?;
        Self::from_json(&v)
    }

    /// Builds a tree from parsed JSON.
    pub fn from_json(v: &Value) -> Result<Tree, NotationError> {
        let mut b = Builder {
            nodes: Vec::new(),
            utilities: Vec::new(),
            players: None,
            has_chance: false,
            has_minmax: false,
            has_player: false,
            trail: Vec::new(),
        };
        b.node(v, u32::MAX, 0)?;
        let players = b.players.unwrap_or(2);
        if b.has_player && b.has_minmax {
            return Err(NotationError::new(
                "a tree mixes max/min nodes with player nodes; use one or the other",
            ));
        }
        if b.has_minmax && players != 2 {
            return Err(NotationError::new(
                "max/min trees need number leaves (MAX's utility)",
            ));
        }
        let mut max_player = 0usize;
        for e in &b.nodes {
            if let Node::Player(p) = e.node {
                max_player = max_player.max(p as usize);
            }
        }
        if b.has_player && max_player >= players {
            return Err(NotationError::new(format!(
                "a node names player {max_player} but leaves have only {players} utilities"
            )));
        }
        let kind = if b.has_player || (b.players.is_some() && !b.has_minmax && players != 2) {
            TreeKind::MultiPlayer
        } else if b.has_chance {
            TreeKind::Chance
        } else {
            TreeKind::MinMax
        };
        let mut ranks: Vec<f64> = Vec::new();
        if kind != TreeKind::MultiPlayer {
            ranks = b.utilities.iter().step_by(players).copied().collect();
            ranks.sort_by(|a, b| a.partial_cmp(b).unwrap());
            ranks.dedup();
        }
        let mut ranges = vec![(f64::INFINITY, f64::NEG_INFINITY); players];
        for leaf in b.utilities.chunks(players) {
            for (r, &u) in ranges.iter_mut().zip(leaf) {
                *r = (r.0.min(u), r.1.max(u));
            }
        }
        Ok(Tree(Arc::new(TreeData {
            nodes: b.nodes,
            utilities: b.utilities,
            players,
            kind,
            ranks,
            ranges,
        })))
    }

    /// What the tree contains.
    pub fn kind(&self) -> TreeKind {
        self.kind
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree has no nodes (never true for a parsed tree).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// MAX's utility at a leaf (scalar trees).
    pub fn leaf_value(&self, state: u32) -> Option<f64> {
        match self.nodes[state as usize].node {
            Node::Leaf { first } => Some(self.utilities[first as usize]),
            _ => None,
        }
    }

    /// Whether a MAX node (player 0 of a min/max tree).
    pub fn is_max(&self, state: u32) -> bool {
        matches!(self.nodes[state as usize].node, Node::Max)
    }

    /// The smallest and largest MAX utility in the tree (scalar trees).
    pub fn utility_range(&self) -> (f64, f64) {
        self.player_range(0)
    }

    /// The smallest and largest utility of `player` over the leaves: every value of the tree
    /// for that player (exact, expected or the evaluator's middle) lies in it.
    pub fn player_range(&self, player: usize) -> (f64, f64) {
        self.ranges
            .get(player)
            .copied()
            .unwrap_or((f64::INFINITY, f64::NEG_INFINITY))
    }

    fn rank_of(&self, u: f64) -> i32 {
        self.ranks
            .binary_search_by(|x| x.partial_cmp(&u).unwrap())
            .expect("every leaf value has a rank") as i32
    }
}

/// One step of the builder's way down from the root, for the path a message names.
#[derive(Clone, Copy)]
enum Step {
    /// Child `i` of a node (`[i]`).
    Child(u32),
    /// Utility `i` of a leaf (`.utility[i]`).
    Utility(u32),
}

struct Builder {
    nodes: Vec<Entry>,
    utilities: Vec<f64>,
    players: Option<usize>,
    has_chance: bool,
    has_minmax: bool,
    has_player: bool,
    /// The way from the root to the node being read.
    trail: Vec<Step>,
}

impl Builder {
    /// The path of the node being read, as messages name it (`root[2][0]`); a deep one shows
    /// its first and last steps.
    fn path(&self) -> String {
        let step = |s: &Step| match s {
            Step::Child(i) => format!("[{i}]"),
            Step::Utility(i) => format!(".utility[{i}]"),
        };
        let mut out = String::from("root");
        let n = self.trail.len();
        if n <= 12 {
            self.trail.iter().for_each(|s| out.push_str(&step(s)));
        } else {
            self.trail[..4].iter().for_each(|s| out.push_str(&step(s)));
            out.push_str(&format!("...({} levels)...", n - 8));
            self.trail[n - 4..]
                .iter()
                .for_each(|s| out.push_str(&step(s)));
        }
        out
    }

    /// An error in the node being read.
    fn error(&self, what: impl std::fmt::Display) -> NotationError {
        NotationError::new(format!("tree node {}: {what}", self.path()))
    }

    fn number(&self, v: &Value) -> Result<f64, NotationError> {
        v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
            self.error(format!(
                "expected a number, found {}",
                excerpt(&v.to_string())
            ))
        })
    }

    fn set_players(&mut self, n: usize) -> Result<(), NotationError> {
        match self.players {
            None => {
                self.players = Some(n);
                Ok(())
            }
            Some(m) if m == n => Ok(()),
            Some(m) => Err(self.error(format!("leaf has {n} utilities, other leaves have {m}"))),
        }
    }

    /// Adds a leaf with one utility per player; returns its id.
    fn leaf(&mut self, utilities: &[f64], parent: u32, slot: u32) -> u32 {
        let first = self.utilities.len() as u32;
        self.utilities.extend_from_slice(utilities);
        self.nodes.push(Entry {
            node: Node::Leaf { first },
            children: vec![],
            probs: vec![],
            labels: None,
            parent,
            slot,
        });
        self.nodes.len() as u32 - 1
    }

    /// Reads the node `v`, child number `slot` of `parent` (the root: `u32::MAX`, 0); the
    /// trail names it.
    fn node(&mut self, v: &Value, parent: u32, slot: u32) -> Result<u32, NotationError> {
        if self.trail.len() > MAX_DEPTH {
            return Err(NotationError::new(format!(
                "tree is deeper than {MAX_DEPTH} levels"
            )));
        }
        if self.nodes.len() >= MAX_NODES {
            return Err(NotationError::new(format!(
                "tree has more than {MAX_NODES} nodes"
            )));
        }
        let id = self.nodes.len() as u32;
        if v.is_number() {
            let u = self.number(v)?;
            self.set_players(2)?;
            return Ok(self.leaf(&[u, -u], parent, slot));
        }
        let obj = v.as_object().ok_or_else(|| {
            self.error(format!(
                "expected a number or an object, found {}",
                excerpt(&v.to_string())
            ))
        })?;
        if let Some(u) = obj.get("utility") {
            if obj.len() > 1 {
                return Err(self.error("a \"utility\" leaf has no other keys"));
            }
            let arr = u
                .as_array()
                .filter(|a| !a.is_empty())
                .ok_or_else(|| self.error("\"utility\" must be a non-empty array"))?;
            if arr.len() > 64 {
                return Err(self.error("a leaf has at most 64 utilities (players)"));
            }
            self.set_players(arr.len())?;
            let mut utilities = Vec::with_capacity(arr.len());
            for (i, x) in arr.iter().enumerate() {
                self.trail.push(Step::Utility(i as u32));
                let u = self.number(x);
                self.trail.pop();
                utilities.push(u?);
            }
            return Ok(self.leaf(&utilities, parent, slot));
        }
        let (node, list): (Node, &Value) = if let Some(c) = obj.get("max") {
            self.has_minmax = true;
            (Node::Max, c)
        } else if let Some(c) = obj.get("min") {
            self.has_minmax = true;
            (Node::Min, c)
        } else if let Some(p) = obj.get("player") {
            self.has_player = true;
            let p = p
                .as_u64()
                .filter(|&p| p < 64)
                .ok_or_else(|| self.error("\"player\" must be an integer 0..63"))?;
            let c = obj
                .get("children")
                .ok_or_else(|| self.error("player node without \"children\""))?;
            (Node::Player(p as u8), c)
        } else if let Some(c) = obj.get("chance") {
            self.has_chance = true;
            (Node::Chance, c)
        } else {
            return Err(
                self.error("expected one of \"max\", \"min\", \"player\", \"chance\", \"utility\"")
            );
        };
        for key in obj.keys() {
            if !["max", "min", "player", "children", "chance", "labels"].contains(&key.as_str()) {
                return Err(self.error(format!("unknown key \"{}\"", excerpt(key))));
            }
        }
        // One node, one meaning: a second kind key or stray "children" would be ignored.
        let kinds = ["max", "min", "player", "chance"]
            .iter()
            .filter(|k| obj.contains_key(**k))
            .count();
        if kinds > 1 || (obj.contains_key("children") && !matches!(node, Node::Player(_))) {
            return Err(self.error(
                "a node is one of \"max\", \"min\", \"player\" (with \"children\"), \"chance\"",
            ));
        }
        let items = list
            .as_array()
            .filter(|a| !a.is_empty())
            .ok_or_else(|| self.error("children must be a non-empty array"))?;
        if items.len() > MAX_CHILDREN {
            return Err(self.error(format!(
                "{} children, more than the {MAX_CHILDREN} a node may have",
                items.len()
            )));
        }
        // Labels first: a wrong one is found before the subtrees are read.
        let labels = match obj.get("labels") {
            None => None,
            Some(l) => Some(self.labels(l, items.len())?),
        };
        self.nodes.push(Entry {
            node: node.clone(),
            children: vec![],
            probs: vec![],
            labels,
            parent,
            slot,
        });
        let mut children = Vec::with_capacity(items.len());
        let mut probs = Vec::new();
        for (i, item) in items.iter().enumerate() {
            self.trail.push(Step::Child(i as u32));
            let child = self.child(&node, item, id, i as u32, &mut probs);
            self.trail.pop();
            children.push(child?);
        }
        if !probs.is_empty() {
            let total: f64 = probs.iter().sum();
            if (total - 1.0).abs() > 1e-9 {
                return Err(self.error(format!("chance probabilities sum to {total}, not 1")));
            }
        }
        let e = &mut self.nodes[id as usize];
        e.children = children;
        e.probs = probs;
        Ok(id)
    }

    /// Reads child `slot` of node `id` (a `[probability, node]` pair at chance nodes).
    fn child(
        &mut self,
        node: &Node,
        item: &Value,
        id: u32,
        slot: u32,
        probs: &mut Vec<f64>,
    ) -> Result<u32, NotationError> {
        let child_value = if matches!(node, Node::Chance) {
            let pair = item
                .as_array()
                .filter(|a| a.len() == 2)
                .ok_or_else(|| self.error("chance children are [probability, node] pairs"))?;
            let p = self.number(&pair[0])?;
            if !(p > 0.0 && p <= 1.0) {
                return Err(self.error(format!("probability {p} is not in (0, 1]")));
            }
            probs.push(p);
            &pair[1]
        } else {
            item
        };
        self.node(child_value, id, slot)
    }

    /// Reads the `"labels"` of a node of `count` children: distinct strings that read back as
    /// moves of a position path, at most [`MAX_LABEL_BYTES`] each.
    fn labels(&self, l: &Value, count: usize) -> Result<Labels, NotationError> {
        let arr = l
            .as_array()
            .ok_or_else(|| self.error("\"labels\" must be an array"))?;
        if arr.len() != count {
            return Err(self.error(format!("{} labels for {count} children", arr.len())));
        }
        let mut names = Vec::with_capacity(arr.len());
        for x in arr {
            let s = x
                .as_str()
                .ok_or_else(|| self.error("labels must be strings"))?;
            // A label is a move in a position path ("A/B"): it must read back as itself, so
            // no '/', no blank ends, and not "root" (the root's path).
            if s.is_empty() || s.trim() != s || s.contains('/') || s == "root" {
                return Err(self.error(format!(
                    "label \"{}\" is empty, has blank ends, contains '/' or is \"root\"",
                    excerpt(s)
                )));
            }
            if s.len() > MAX_LABEL_BYTES {
                return Err(self.error(format!(
                    "label \"{}\" is longer than {MAX_LABEL_BYTES} bytes",
                    excerpt(s)
                )));
            }
            names.push(s.to_string());
        }
        let mut order: Vec<u32> = (0..names.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| names[a as usize].cmp(&names[b as usize]));
        if let Some(w) = order
            .windows(2)
            .find(|w| names[w[0] as usize] == names[w[1] as usize])
        {
            return Err(self.error(format!(
                "label \"{}\" appears twice",
                excerpt(&names[w[0] as usize])
            )));
        }
        Ok(Labels { names, order })
    }
}

impl Game for Tree {
    type State = u32;
    type Move = u32;

    fn name(&self) -> &'static str {
        "tree"
    }
    fn num_players(&self) -> usize {
        self.players
    }
    fn initial_state(&self) -> u32 {
        0
    }
    #[inline]
    fn turn(&self, s: &u32) -> Turn {
        match self.nodes[*s as usize].node {
            Node::Leaf { .. } => Turn::Terminal,
            Node::Max => Turn::Player(0),
            Node::Min => Turn::Player(1),
            Node::Player(p) => Turn::Player(p),
            Node::Chance => Turn::Chance,
        }
    }
    #[inline]
    fn legal_moves(&self, s: &u32, moves: &mut Vec<u32>) {
        moves.clear();
        moves.extend(0..self.nodes[*s as usize].children.len() as u32);
    }
    #[inline]
    fn apply(&self, s: &mut u32, mv: u32) {
        *s = self.nodes[*s as usize].children[mv as usize];
    }
    fn returns(&self, s: &u32, out: &mut [f64]) {
        if let Node::Leaf { first } = self.nodes[*s as usize].node {
            let f = first as usize;
            out[..self.players].copy_from_slice(&self.utilities[f..f + self.players]);
        }
    }

    /// A position of the tree game is the tree itself; the state is its root. (Sub-positions are
    /// reached by moves.) Parsing a tree here only checks that the text names this tree's shape.
    fn parse_position(&self, text: &str) -> Result<u32, NotationError> {
        let t = text.trim();
        if t.is_empty() || t == "root" {
            return Ok(0);
        }
        // A path of moves from the root, separated by '/', e.g. "C/0".
        let mut s = 0u32;
        for (i, part) in t.split('/').enumerate() {
            let mv = self.parse_move(&s, part).map_err(|e| e.at_move(i + 1))?;
            self.apply(&mut s, mv);
        }
        Ok(s)
    }

    fn format_position(&self, s: &u32) -> String {
        // The path from the root, read back through the parents.
        let mut path = Vec::new();
        let mut cur = *s;
        while cur != 0 {
            let e = &self.nodes[cur as usize];
            path.push(self.format_move(&e.parent, e.slot));
            cur = e.parent;
        }
        if path.is_empty() {
            return "root".to_string();
        }
        path.reverse();
        path.join("/")
    }

    fn parse_move(&self, s: &u32, text: &str) -> Result<u32, NotationError> {
        let e = &self.nodes[*s as usize];
        let t = text.trim();
        if e.children.is_empty() {
            return Err(NotationError::new("a leaf has no moves").with_fragment(t));
        }
        if let Some(labels) = &e.labels {
            return labels.find(t).ok_or_else(|| {
                let shown = labels.names.iter().take(LISTED_LABELS).map(String::as_str);
                let mut list = shown.collect::<Vec<_>>().join(", ");
                if labels.names.len() > LISTED_LABELS {
                    list.push_str(&format!(", ... ({} in all)", labels.names.len()));
                }
                NotationError::new(format!("no such move here (moves: {list})")).with_fragment(t)
            });
        }
        match t.parse::<u32>() {
            Ok(i) if (i as usize) < e.children.len() => Ok(i),
            _ => Err(NotationError::new(format!(
                "no such move here (moves: 0..{})",
                e.children.len() - 1
            ))
            .with_fragment(t)),
        }
    }

    fn format_move(&self, s: &u32, mv: u32) -> String {
        match &self.nodes[*s as usize].labels {
            Some(l) => l.names[mv as usize].clone(),
            None => mv.to_string(),
        }
    }

    fn same_state(&self, a: &u32, b: &u32) -> bool {
        a == b
    }
}

/// For [`TreeKind::MinMax`] trees only; the registry guarantees that.
impl ZeroSum for Tree {
    #[inline]
    fn side(&self, s: &u32) -> u8 {
        match self.nodes[*s as usize].node {
            Node::Min => 1,
            _ => 0,
        }
    }
    #[inline]
    fn terminal_value(&self, s: &u32) -> i32 {
        match self.nodes[*s as usize].node {
            Node::Leaf { first } => self.rank_of(self.utilities[first as usize]),
            _ => unreachable!("terminal_value of an inner node"),
        }
    }
    fn value_bounds(&self, s: &u32) -> (i32, i32) {
        let top = self.ranks.len() as i32 - 1;
        if self.side(s) == 0 {
            (0, top)
        } else {
            (-top, 0)
        }
    }
    fn value_to_json(&self, s: &u32, value: i32) -> Value {
        let rank = if self.side(s) == 0 { value } else { -value };
        let u = self.ranks[rank as usize];
        json_number(u)
    }
    fn parse_target(&self, s: &u32, text: &str) -> Result<i32, NotationError> {
        let t: f64 = text
            .trim()
            .parse()
            .map_err(|_| NotationError::new("not a number").with_fragment(text.trim()))?;
        // "value >= t" from the root side's point of view, as a rank threshold.
        let n = self.ranks.len() as i32;
        if self.side(s) == 0 {
            // smallest rank whose utility >= t (n: none, so the decision is "no")
            Ok(self.ranks.partition_point(|&u| u < t) as i32)
        } else {
            // MIN's value is -MAX: -MAX >= t  <=>  MAX <= -t; largest rank with utility <= -t
            let r = self.ranks.partition_point(|&u| u <= -t) as i32 - 1;
            Ok(if r < 0 { n } else { -r })
        }
    }
}

/// A random max/min tree in this game's JSON, for differential tests and benchmarks: at most
/// `depth` levels, 1 to 4 children a node, a node a leaf with chance 1/6 before the last level,
/// max and min drawn independently (so not always alternating), integer leaves in
/// `-leaf_max..=leaf_max`. The same `seed` gives the same tree.
pub fn random_tree(seed: u64, depth: u32, leaf_max: i32) -> String {
    use rand::{Rng, SeedableRng};
    fn node(rng: &mut rand_chacha::ChaCha8Rng, depth: u32, leaf_max: i32) -> String {
        if depth == 0 || rng.gen_ratio(1, 6) {
            return rng.gen_range(-leaf_max..=leaf_max).to_string();
        }
        let kind = if rng.gen_bool(0.5) { "max" } else { "min" };
        let n = rng.gen_range(1..=4);
        let kids: Vec<String> = (0..n).map(|_| node(rng, depth - 1, leaf_max)).collect();
        format!("{{\"{kind}\": [{}]}}", kids.join(","))
    }
    node(
        &mut rand_chacha::ChaCha8Rng::seed_from_u64(seed),
        depth,
        leaf_max.max(0),
    )
}

/// Writes `u` as an integer when it is one, so that `5.0` prints as `5`.
pub fn json_number(u: f64) -> Value {
    if u.fract() == 0.0 && u.abs() < 9.0e15 {
        Value::from(u as i64)
    } else {
        Value::from(u)
    }
}

/// No search hints: the engine searches every child.
impl Tactics for Tree {}

impl Hashed for Tree {
    const HASH_IS_KEY: bool = true;
    #[inline]
    fn hash(&self, s: &u32) -> u64 {
        *s as u64
    }
}

impl Stochastic for Tree {
    fn chance_outcomes(&self, s: &u32, out: &mut Vec<(u32, f64)>) {
        out.clear();
        let e = &self.nodes[*s as usize];
        out.extend(e.probs.iter().enumerate().map(|(i, &p)| (i as u32, p)));
    }
}

/// Chance trees (and min/max trees) in real values: side 1 at MIN nodes, side 0 elsewhere, so a
/// chance node's value is MAX's expected utility. A tree has no evaluator: the registry refuses
/// `depth` for trees, and [`ChanceZeroSum::estimate`] gives the middle of the utility range.
impl ChanceZeroSum for Tree {
    #[inline]
    fn player_side(&self, s: &u32) -> u8 {
        ZeroSum::side(self, s)
    }
    #[inline]
    fn terminal_score(&self, s: &u32) -> f64 {
        let u = self
            .leaf_value(*s)
            .expect("terminal_value of an inner node");
        if ZeroSum::side(self, s) == 0 {
            u
        } else {
            -u
        }
    }
    fn utility_bounds(&self) -> (f64, f64) {
        self.utility_range()
    }
    fn estimate(&self, s: &u32) -> f64 {
        let (lo, hi) = self.utility_range();
        let mid = 0.5 * (lo + hi);
        if ZeroSum::side(self, s) == 0 {
            mid
        } else {
            -mid
        }
    }
}

/// A tree has no evaluator (the registry refuses `depth` for trees); this gives, per player, the
/// middle of that player's utility range.
impl VectorEval for Tree {
    fn evaluate_vector(&self, _s: &u32, out: &mut [f64]) {
        for (o, &(lo, hi)) in out.iter_mut().zip(&self.ranges) {
            *o = 0.5 * (lo + hi);
        }
    }
}

impl Exact for Tree {
    type Book = ();
}

impl Picture for Tree {}

/// The catalogue entry of explicit trees: no parameters; the tree is the position, and its kind
/// decides the kernel family.
pub struct TreeEntry;

impl GameEntry for TreeEntry {
    const NAME: &'static str = "tree";
    const PARAMS: &'static [Spec] = &[];
    const FAMILY: Family = Family::Tree;
    const POSITION_FILE: bool = true;
    type Game = ();
    fn build(params: &Opts) -> Result<(), SolveError> {
        params.finish()
    }
    fn offer<V: Visitor>(_: (), visitor: V) -> V::Output {
        visitor.tree()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::battery;

    const COURSE: &str = r#"{"max": [{"min": [4, 9, 6]}, {"min": [2, 15, 13]}, {"min": [5, 8, 10]}], "labels": ["A", "B", "C"]}"#;

    #[test]
    fn parses_the_course_tree_and_passes_the_battery() {
        let t = Tree::parse(COURSE).unwrap();
        assert_eq!(t.kind(), TreeKind::MinMax);
        assert_eq!(t.len(), 13);
        battery::check_game(&t, &0, 50, 1);
        battery::check_hashed(&t, &0, 50, 2);
        battery::check_zero_sum(&t, &0, 50, 3);
        assert_eq!(t.format_position(&t.parse_position("C/2").unwrap()), "C/2");
    }

    #[test]
    fn kinds_and_errors() {
        let chance = Tree::parse(r#"{"max": [{"chance": [[0.5, 2], [0.5, 5]]}, 4]}"#).unwrap();
        assert_eq!(chance.kind(), TreeKind::Chance);
        battery::check_stochastic(&chance, &0, 20, 1);
        let three = Tree::parse(
            r#"{"player": 0, "children": [{"utility": [1, 2, 3]}, {"utility": [3, 2, 1]}]}"#,
        )
        .unwrap();
        assert_eq!(three.kind(), TreeKind::MultiPlayer);
        assert_eq!(three.num_players(), 3);
        for (bad, want) in [
            (r#"{"chance": [[0.5, 1], [0.4, 2]]}"#, "sum to"),
            (r#"{"max": []}"#, "non-empty"),
            (
                r#"{"max": [1, 2], "labels": ["A"]}"#,
                "1 labels for 2 children",
            ),
            (r#"{"foo": [1]}"#, "expected one of"),
            (r#"{"max": [1, {"utility": [1, 2, 3]}]}"#, "utilities"),
            (r#"{"max": [1, "x"]}"#, "root[1]"),
            (
                r#"{"max": [1, 2], "labels": ["A", ""]}"#,
                "label \"\" is empty",
            ),
            (r#"{"max": [1, 2], "labels": ["A/B", "C"]}"#, "contains '/'"),
            (r#"{"max": [1], "min": [2]}"#, "a node is one of"),
            (r#"{"max": [1], "children": [2]}"#, "a node is one of"),
            (r#"{"utility": [1, 2], "max": [1]}"#, "no other keys"),
            (r#"{"max": [1, 2], "labels": [" A", "C"]}"#, "blank ends"),
            (r#"{"max": [1, 2], "labels": ["root", "C"]}"#, "\"root\""),
            ("[1", "malformed"),
        ] {
            let e = Tree::parse(bad).unwrap_err().to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }

    #[test]
    fn deep_trees_stop_at_the_depth_limit_on_a_small_stack() {
        fn deep(levels: usize) -> Value {
            let mut v = serde_json::json!(1);
            for _ in 0..levels {
                let mut node = serde_json::Map::new();
                node.insert("max".into(), Value::Array(vec![v]));
                v = Value::Object(node);
            }
            v
        }
        let lens = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let ok = Tree::from_json(&deep(MAX_DEPTH)).map(|t| t.len());
                let too_deep = Tree::from_json(&deep(MAX_DEPTH + 1)).map(|t| t.len());
                (ok.unwrap(), too_deep.unwrap_err().to_string())
            })
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert_eq!(lens.0, MAX_DEPTH + 1);
        assert!(lens.1.contains("deeper than 1000 levels"), "{}", lens.1);
    }

    /// A node of `n` leaves, labelled `L0`, `L1`, ... when `labels`.
    fn wide(n: usize, labels: bool) -> String {
        let leaves: Vec<String> = (0..n).map(|i| (i % 97).to_string()).collect();
        let mut t = format!("{{\"max\": [{}]", leaves.join(","));
        if labels {
            let names: Vec<String> = (0..n).map(|i| format!("\"L{i}\"")).collect();
            t.push_str(&format!(", \"labels\": [{}]", names.join(",")));
        }
        t.push('}');
        t
    }

    /// Children and labels per node are capped; labels are short, distinct (found by a sort,
    /// not by comparing each with all before it) and looked up by binary search.
    #[test]
    fn wide_nodes_are_capped_and_labels_are_found_fast() {
        let t = Tree::parse(&wide(MAX_CHILDREN, true)).unwrap();
        assert_eq!(t.len(), MAX_CHILDREN + 1);
        for i in [0, 1, 977, MAX_CHILDREN - 1] {
            let label = format!("L{i}");
            let mv = t.parse_move(&0, &label).unwrap();
            assert_eq!(mv, i as u32);
            assert_eq!(t.format_move(&0, mv), label);
            let s = t.parse_position(&label).unwrap();
            assert_eq!(t.format_position(&s), label);
        }
        let e = t.parse_move(&0, "L99999").unwrap_err().to_string();
        assert!(e.contains("(4096 in all)") && e.len() < 200, "{e}");
        for (text, want) in [
            (wide(MAX_CHILDREN + 1, false), "more than the 4096"),
            (wide(70_000, true), "70000 children, more than the 4096"),
        ] {
            let e = Tree::parse(&text).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
        let long = format!(
            r#"{{"max": [1, 2], "labels": ["A", "{}"]}}"#,
            "x".repeat(65)
        );
        let e = Tree::parse(&long).unwrap_err().to_string();
        assert!(e.contains("longer than 64 bytes"), "{e}");
        let twice = r#"{"max": [1, 2, 3], "labels": ["B", "A", "B"]}"#;
        let e = Tree::parse(twice).unwrap_err().to_string();
        assert!(e.contains("label \"B\" appears twice"), "{e}");
    }

    /// Positions deep in a tree read back through the parents; errors deep in a tree name a
    /// short path whose reason is still shown.
    #[test]
    fn deep_positions_and_errors() {
        let mut text = String::from("1");
        // 60 levels: the JSON reader stops at 128 nested arrays and objects.
        for i in 0..60 {
            text = format!(r#"{{"min": [{text}, {i}], "labels": ["a{i}", "b{i}"]}}"#);
        }
        let t = Tree::parse(&text).unwrap();
        let path: Vec<String> = (0..60).rev().map(|i| format!("a{i}")).collect();
        let s = t.parse_position(&path.join("/")).unwrap();
        assert!(t.leaf_value(s).is_some());
        assert_eq!(t.format_position(&s), path.join("/"));
        let bad = text.replacen("1", "\"x\"", 1);
        let e = Tree::parse(&bad).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "tree node root[0][0][0][0]...(52 levels)...[0][0][0][0]: expected a number"
            ),
            "{e}"
        );
    }

    #[test]
    fn ranks_map_back_to_leaf_numbers_and_targets() {
        let t = Tree::parse(r#"{"min": [2.5, -1, 7]}"#).unwrap();
        // MIN to move: negamax values are -rank; ranks: -1 -> 0, 2.5 -> 1, 7 -> 2.
        assert_eq!(t.value_bounds(&0), (-2, 0));
        assert_eq!(t.value_to_json(&0, -1), serde_json::json!(2.5));
        // "MIN's value >= 1" <=> MAX <= -1 <=> rank <= 0 <=> -rank >= 0.
        assert_eq!(t.parse_target(&0, "1").unwrap(), 0);
        // "MIN's value >= 5" <=> MAX <= -5: impossible, a target above every value.
        assert_eq!(t.parse_target(&0, "5").unwrap(), 3);
    }
}
