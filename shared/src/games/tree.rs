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
//! The tree is stored as an arena of nodes in depth-first order; a state is a node index and a
//! move is a child index, so copies are free. The tree is the game: the position text of the
//! `tree` game is the JSON (or `@path`), and the state is its root.
//!
//! Kinds: a tree is [`TreeKind::MinMax`] (max/min nodes, number leaves), [`TreeKind::Chance`]
//! (max/min/chance, number leaves) or [`TreeKind::MultiPlayer`] (player nodes, utility vectors,
//! optionally chance). The registry offers each kind the kernels that fit it.
//!
//! Two-player values ([`ZeroSum`]) are exact: leaf numbers are replaced by their rank among the
//! distinct leaf values (an order-preserving map), kernels compare and negate ranks, and
//! [`ZeroSum::value_to_json`] maps the rank back to the number written in the leaf, from MAX's
//! point of view as docs/API.md (section 3) asks.

use crate::games::entry::{Family, GameEntry, Visitor};
use crate::games::Exact;
use crate::model::settings::{Opts, SolveError, Spec};
use crate::model::{
    ChanceZeroSum, Game, Hashed, NotationError, Picture, Stochastic, Tactics, Turn, VectorEval,
    ZeroSum,
};
use serde_json::Value;

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

#[derive(Clone, Debug)]
struct Entry {
    node: Node,
    /// Children (node indices).
    children: Vec<u32>,
    /// Probabilities of the children at chance nodes.
    probs: Vec<f64>,
    /// Move labels, when given.
    labels: Option<Vec<String>>,
}

/// A parsed game tree.
#[derive(Clone, Debug)]
pub struct Tree {
    nodes: Vec<Entry>,
    /// Utilities of all leaves, `players` numbers per leaf.
    utilities: Vec<f64>,
    players: usize,
    kind: TreeKind,
    /// Distinct MAX utilities in increasing order (ranks for [`ZeroSum`]).
    ranks: Vec<f64>,
}

const MAX_NODES: usize = 50_000_000;
/// Deepest tree the builder follows. Trees read from text are far shallower (the JSON reader
/// stops at 128 nested arrays and objects); this bounds trees built from JSON values in code,
/// so that the builder's recursion stays well inside a 2 MiB thread stack.
const MAX_DEPTH: usize = 1_000;

impl Tree {
    /// Parses the JSON text of a tree. The library never reads files a position names: `@file`
    /// is a convenience of the command line, which reads the file before it builds the job.
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
        };
        b.node(v, "root", 0)?;
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
        Ok(Tree {
            nodes: b.nodes,
            utilities: b.utilities,
            players,
            kind,
            ranks,
        })
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
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for u in self.utilities.iter().step_by(self.players.max(1)) {
            lo = lo.min(*u);
            hi = hi.max(*u);
        }
        (lo, hi)
    }

    fn rank_of(&self, u: f64) -> i32 {
        self.ranks
            .binary_search_by(|x| x.partial_cmp(&u).unwrap())
            .expect("every leaf value has a rank") as i32
    }
}

/// An error in the tree node at `path`.
fn node_error(path: &str, what: impl std::fmt::Display) -> NotationError {
    NotationError::new(format!("tree node {path}: {what}"))
}

struct Builder {
    nodes: Vec<Entry>,
    utilities: Vec<f64>,
    players: Option<usize>,
    has_chance: bool,
    has_minmax: bool,
    has_player: bool,
}

impl Builder {
    fn number(v: &Value, path: &str) -> Result<f64, NotationError> {
        v.as_f64()
            .filter(|x| x.is_finite())
            .ok_or_else(|| node_error(path, format!("expected a number, found {v}")))
    }

    fn set_players(&mut self, n: usize, path: &str) -> Result<(), NotationError> {
        match self.players {
            None => {
                self.players = Some(n);
                Ok(())
            }
            Some(m) if m == n => Ok(()),
            Some(m) => Err(node_error(
                path,
                format!("leaf has {n} utilities, other leaves have {m}"),
            )),
        }
    }

    /// Adds a leaf with one utility per player; returns its id.
    fn leaf(&mut self, utilities: &[f64]) -> u32 {
        let first = self.utilities.len() as u32;
        self.utilities.extend_from_slice(utilities);
        self.nodes.push(Entry {
            node: Node::Leaf { first },
            children: vec![],
            probs: vec![],
            labels: None,
        });
        self.nodes.len() as u32 - 1
    }

    fn node(&mut self, v: &Value, path: &str, depth: usize) -> Result<u32, NotationError> {
        if depth > MAX_DEPTH {
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
            let u = Self::number(v, path)?;
            self.set_players(2, path)?;
            return Ok(self.leaf(&[u, -u]));
        }
        let obj = v.as_object().ok_or_else(|| {
            node_error(path, format!("expected a number or an object, found {v}"))
        })?;
        if let Some(u) = obj.get("utility") {
            if obj.len() > 1 {
                return Err(node_error(path, "a \"utility\" leaf has no other keys"));
            }
            let arr = u
                .as_array()
                .filter(|a| !a.is_empty())
                .ok_or_else(|| node_error(path, "\"utility\" must be a non-empty array"))?;
            self.set_players(arr.len(), path)?;
            let utilities = arr
                .iter()
                .enumerate()
                .map(|(i, x)| Self::number(x, &format!("{path}.utility[{i}]")))
                .collect::<Result<Vec<f64>, _>>()?;
            return Ok(self.leaf(&utilities));
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
                .ok_or_else(|| node_error(path, "\"player\" must be an integer 0..63"))?;
            let c = obj
                .get("children")
                .ok_or_else(|| node_error(path, "player node without \"children\""))?;
            (Node::Player(p as u8), c)
        } else if let Some(c) = obj.get("chance") {
            self.has_chance = true;
            (Node::Chance, c)
        } else {
            return Err(node_error(
                path,
                "expected one of \"max\", \"min\", \"player\", \"chance\", \"utility\"",
            ));
        };
        for key in obj.keys() {
            if !["max", "min", "player", "children", "chance", "labels"].contains(&key.as_str()) {
                return Err(node_error(path, format!("unknown key \"{key}\"")));
            }
        }
        // One node, one meaning: a second kind key or stray "children" would be ignored.
        let kinds = ["max", "min", "player", "chance"]
            .iter()
            .filter(|k| obj.contains_key(**k))
            .count();
        if kinds > 1 || (obj.contains_key("children") && !matches!(node, Node::Player(_))) {
            return Err(node_error(
                path,
                "a node is one of \"max\", \"min\", \"player\" (with \"children\"), \"chance\"",
            ));
        }
        let items = list
            .as_array()
            .filter(|a| !a.is_empty())
            .ok_or_else(|| node_error(path, "children must be a non-empty array"))?;
        if items.len() > u32::MAX as usize {
            return Err(node_error(path, "too many children"));
        }
        self.nodes.push(Entry {
            node: node.clone(),
            children: vec![],
            probs: vec![],
            labels: None,
        });
        let mut children = Vec::with_capacity(items.len());
        let mut probs = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let child_path = format!("{path}[{i}]");
            let child_value = if matches!(node, Node::Chance) {
                let pair = item.as_array().filter(|a| a.len() == 2).ok_or_else(|| {
                    NotationError::new(format!(
                        "tree node {child_path}: chance children are [probability, node] pairs"
                    ))
                })?;
                let p = Self::number(&pair[0], &child_path)?;
                if !(p > 0.0 && p <= 1.0) {
                    return Err(NotationError::new(format!(
                        "tree node {child_path}: probability {p} is not in (0, 1]"
                    )));
                }
                probs.push(p);
                &pair[1]
            } else {
                item
            };
            children.push(self.node(child_value, &child_path, depth + 1)?);
        }
        if !probs.is_empty() {
            let total: f64 = probs.iter().sum();
            if (total - 1.0).abs() > 1e-9 {
                return Err(node_error(
                    path,
                    format!("chance probabilities sum to {total}, not 1"),
                ));
            }
        }
        let labels = match obj.get("labels") {
            None => None,
            Some(l) => {
                let arr = l
                    .as_array()
                    .ok_or_else(|| node_error(path, "\"labels\" must be an array"))?;
                if arr.len() != children.len() {
                    return Err(node_error(
                        path,
                        format!("{} labels for {} children", arr.len(), children.len()),
                    ));
                }
                let mut out = Vec::with_capacity(arr.len());
                for x in arr {
                    let s = x
                        .as_str()
                        .ok_or_else(|| node_error(path, "labels must be strings"))?;
                    // A label is a move in a position path ("A/B"): it must read back as
                    // itself, so no '/', no blank ends, and not "root" (the root's path).
                    if s.is_empty() || s.trim() != s || s.contains('/') || s == "root" {
                        return Err(node_error(
                            path,
                            format!(
                                "label \"{}\" is empty, has blank ends, contains '/' or is \"root\"",
                                crate::model::excerpt(s)
                            ),
                        ));
                    }
                    if out.iter().any(|o: &String| o == s) {
                        return Err(node_error(path, format!("label \"{s}\" appears twice")));
                    }
                    out.push(s.to_string());
                }
                Some(out)
            }
        };
        let e = &mut self.nodes[id as usize];
        e.children = children;
        e.probs = probs;
        e.labels = labels;
        Ok(id)
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
        // Find the path from the root (trees are small enough for a scan of parents).
        let mut path = Vec::new();
        let mut cur = *s;
        while cur != 0 {
            let (parent, idx) = self
                .nodes
                .iter()
                .enumerate()
                .find_map(|(p, e)| {
                    e.children
                        .iter()
                        .position(|&c| c == cur)
                        .map(|i| (p as u32, i as u32))
                })
                .expect("every node but the root has a parent");
            path.push(self.format_move(&parent, idx));
            cur = parent;
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
            if let Some(i) = labels.iter().position(|l| l == t) {
                return Ok(i as u32);
            }
        }
        match t.parse::<u32>() {
            Ok(i) if (i as usize) < e.children.len() && e.labels.is_none() => Ok(i),
            _ => Err(NotationError::new(match &e.labels {
                Some(l) => format!("no such move here (moves: {})", l.join(", ")),
                None => format!("no such move here (moves: 0..{})", e.children.len() - 1),
            })
            .with_fragment(t)),
        }
    }

    fn format_move(&self, s: &u32, mv: u32) -> String {
        match &self.nodes[*s as usize].labels {
            Some(l) => l[mv as usize].clone(),
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
        let n = self.players;
        for (p, o) in out.iter_mut().enumerate().take(n) {
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for u in self.utilities.iter().skip(p).step_by(n) {
                lo = lo.min(*u);
                hi = hi.max(*u);
            }
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
