//! The `mcts` algorithm as a job: options, the split into root-parallel tasks, and the result.
//!
//! Families: two-player zero-sum games (outcome rewards, win 1 / draw 0.5 / loss 0, MCTS-Solver
//! on, no chance) and explicit trees of every kind (rewards scaled from the leaf utilities, chance
//! outcomes drawn with their probabilities, the solver on for two-player trees). Options
//! (`playouts`, `c`, `trees`, `tasks`, `merge`, `seed`, `solver`, `memory_mb`, `lower`, `upper`;
//! defaults [`DEFAULT_PLAYOUTS`], [`MAX_TREES`], [`DEFAULT_MEMORY_MB`]) and the result keys are
//! the user's contract: docs/API.md, section 5.4; any other key is a bad-input error naming it.
//!
//! MCTS rewards the outcome, not the margin: on two-player zero-sum games `value` is
//! `2 * win_rate - 1` from the root player's view (the game's value scale only where values are
//! win, draw and loss), and a solved root adds `bounds` on the exact value (`[1, best]` for a win,
//! `[worst, -1]` for a loss, `[0, 0]` for a draw). Games with chance report the win rate; trees
//! report MAX's utility (and every player's when the tree has player nodes).
//!
//! Root parallelisation across workers: with `tasks=R > 1` the plan is [`PlanShape::Runs`]; run
//! `i` grows trees `[i*T/R, (i+1)*T/R)` and returns its merged root statistics under the internal
//! key `root_stats`; [`PreparedJob::merge_runs`] sums them, so the merged result equals that of
//! one task with all `T` trees (tree `t`'s seed depends on `seed` and `t`, not on `tasks`).

use super::kernel::Group;
use super::spec::{self, DefaultValue, Spec};
use super::{catalogue, Opts, PlanShape, PreparedJob, Resources, SolveError};
use crate::games::tree::{json_number, Tree, TreeKind};
use crate::model::{ChanceZeroSum, Game, Stochastic, ZeroSum};
use crate::search::mcts::{
    self, ChanceModel, Config, Merge, RandomPlayout, Rewards, Summary, TrueChance, UniformChance,
};
use crate::search::Control;
use crate::wire::{Extra, JobSpec, TaskKind, TaskOutput};
use serde::Deserialize;
use serde_json::Value;

/// Playouts when neither `playouts` nor a time or node limit is given.
pub const DEFAULT_PLAYOUTS: u64 = 100_000;
/// Largest `trees`.
pub const MAX_TREES: u32 = 4096;
/// Default arena budget over all trees, in MiB: about 33 million nodes of 32 bytes, far more
/// than the default playouts need, and small enough for a shared worker.
pub const DEFAULT_MEMORY_MB: u64 = 1024;

/// Most `playouts`: a trillion is days of work on any machine.
pub const MAX_PLAYOUTS: u64 = 1_000_000_000_000;
/// Most `tasks`: each is a task the coordinator keeps.
pub const MAX_TASKS: u32 = 1024;

/// `playouts`.
pub const PLAYOUTS: Spec = Spec::uint(
    "playouts",
    1,
    MAX_PLAYOUTS,
    DefaultValue::Depends("100000, unlimited with a time or node limit"),
    "playouts over all trees, at least trees",
    "a trillion playouts is days of work on any machine",
);
/// `c`.
pub const C: Spec = Spec::float(
    "c",
    0.0,
    1e6,
    DefaultValue::Float(mcts::DEFAULT_C),
    "exploration constant (the default is sqrt 2)",
    "beyond it exploration is uniform anyway",
);
/// A count of 1 to `max`, 1 unless given (`trees`, `tasks`).
const fn count(name: &'static str, max: u32, help: &'static str, why: &'static str) -> Spec {
    Spec::uint(name, 1, max as u64, DefaultValue::UInt(1), help, why)
}
/// `trees`.
pub const TREES: Spec = count(
    "trees",
    MAX_TREES,
    "independent root-parallel trees",
    "the trees share the memory budget; more only makes each one tiny",
);
/// `tasks`.
pub const TASKS: Spec = count(
    "tasks",
    MAX_TASKS,
    "tasks the trees are split into, at most trees",
    "each is a task the coordinator keeps; a thousand workers is a large cluster",
);
/// `memory_mb`.
pub const MEMORY_MB: Spec = spec::memory_mb(DEFAULT_MEMORY_MB, "arena budget over all trees, MiB");
/// What `lower` and `upper` mean for `mcts`.
const BOUND_HELP: &str = "utility bound that scales rewards (trees, chance games)";
/// `lower` (trees and chance games).
pub const LOWER: Spec = spec::utility_bound("lower", "the leaves' or the game's", BOUND_HELP);
/// `upper` (trees and chance games).
pub const UPPER: Spec = spec::utility_bound("upper", "the leaves' or the game's", BOUND_HELP);

/// `merge`: how the trees' root statistics choose the move.
pub const MERGE: Spec = Spec::choice(
    "merge",
    &["sum", "vote"],
    DefaultValue::Word("sum"),
    "the most visits over all trees, or the most trees' choice",
);
/// `solver`: MCTS-Solver (two players).
pub const SOLVER: Spec = Spec {
    default: DefaultValue::Depends("true with two players"),
    ..Spec::flag("solver", false, "MCTS-Solver")
};

/// Options of `mcts` (every family).
pub const OPTIONS: &[Spec] = &[
    PLAYOUTS,
    C,
    TREES,
    TASKS,
    MERGE,
    spec::SEED,
    SOLVER,
    MEMORY_MB,
    LOWER,
    UPPER,
    super::analysis::ANALYSE,
];

/// A JSON object of a number per root move: `moves[i]` to `counts[i]`.
fn per_move<N: Copy + Into<Value>>(moves: &[String], counts: &[N]) -> Value {
    let map: serde_json::Map<String, Value> = moves
        .iter()
        .cloned()
        .zip(counts.iter().map(|&n| n.into()))
        .collect();
    map.into()
}

/// How the value is reported.
#[derive(Clone, Copy, Debug, PartialEq)]
enum View {
    /// The root player's win rate (outcome rewards).
    WinRate,
    /// Two-player zero-sum games: the expected outcome on the negamax scale (outcome rewards),
    /// with the game's bounds on the root's exact value (`lower`, `upper`, public scale).
    Outcome { lower: f64, upper: f64 },
    /// Player `player`'s utility, or every player's (`vector`).
    Utility { vector: bool, player: u8 },
}

/// A prepared MCTS job.
struct MctsJob<G: Game, C> {
    job: JobSpec,
    game: G,
    root: G::State,
    cfg: Config,
    tasks: u32,
    merge: Merge,
    chance: C,
    view: View,
}

/// Reads the options common to every family from `opts`, which must hold nothing else
/// (`players` decides whether the solver may be asked for), and builds the job.
#[allow(clippy::too_many_arguments)]
fn build<G: Game, C: ChanceModel<G> + 'static>(
    job: &JobSpec,
    opts: Opts,
    game: G,
    root: G::State,
    players: usize,
    rewards: Rewards,
    res: &Resources,
    chance: C,
    view: View,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let opts = &opts;
    let limited = job.limits.time_ms.is_some() || job.limits.node_limit.is_some();
    let playouts = match opts.uint::<u64>(&PLAYOUTS)? {
        Some(p) => Some(p),
        None if limited => None,
        None => Some(DEFAULT_PLAYOUTS),
    };
    let c = opts.float_value(&C)?;
    let trees: u32 = opts.uint_value(&TREES)?;
    let tasks: u32 = opts.uint_value(&TASKS)?;
    if tasks > trees {
        return Err(SolveError::bad(format!(
            "option 'tasks={tasks}' must be between 1 and trees ({trees})"
        )));
    }
    if let Some(p) = playouts {
        if p < trees as u64 {
            return Err(SolveError::bad(format!(
                "option 'playouts={p}' must be at least trees ({trees})"
            )));
        }
    }
    let merge = match opts.choice(&MERGE)? {
        "vote" => Merge::Vote,
        _ => Merge::Sum,
    };
    let seed: u64 = opts.uint_value(&spec::SEED)?;
    // Read here, used by `MctsJob::output` (the `moves` of the result).
    super::analysis::read(opts)?;
    let solver = match opts.flag_given(&SOLVER)? {
        Some(true) if players != 2 => {
            return Err(SolveError::bad(format!(
                "option 'solver' needs two players, this game has {players}"
            )))
        }
        Some(s) => s,
        None => players == 2,
    };
    // Cut down to what the runner offers.
    let memory_mb = opts.uint_value::<u64>(&MEMORY_MB)?.min(res.memory_mb);
    let bytes = memory_mb.saturating_mul(1 << 20);
    let max_nodes =
        (bytes / mcts::node_bytes::<G>() as u64 / trees as u64).min(u32::MAX as u64) as usize;
    opts.finish()?;
    Ok(Box::new(MctsJob {
        job: job.clone(),
        game,
        root,
        cfg: Config {
            c,
            playouts,
            trees,
            seed,
            solver,
            rewards,
            max_nodes,
        },
        tasks,
        merge,
        chance,
        view,
    }))
}

/// The MCTS family: `mcts`.
pub static GROUP: Group = Group {
    title: "MCTS",
    options: OPTIONS,
    skip: |game| match game.family {
        catalogue::Family::ZeroSum { .. } | catalogue::Family::Stochastic => &["lower", "upper"],
        _ => &[],
    },
};

/// `lower` < `upper`, both finite, or the error naming them.
fn checked_bounds(l: f64, u: f64) -> Result<(f64, f64), SolveError> {
    if !(l.is_finite() && u.is_finite() && l < u) {
        return Err(SolveError::bad(format!(
            "options 'lower={l}' and 'upper={u}' must be finite with lower < upper"
        )));
    }
    Ok((l, u))
}

/// Prepares `mcts` for a two-player zero-sum game at `root`.
pub fn zero_sum<G: ZeroSum>(
    job: &JobSpec,
    game: G,
    root: G::State,
    res: &Resources,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let opts = Opts::new(&job.options, "option");
    let (lo, hi) = game.value_bounds(&root);
    let public = |v: i32| game.value_to_json(&root, v).as_f64();
    let (lower, upper) = (
        public(lo).unwrap_or(f64::NEG_INFINITY),
        public(hi).unwrap_or(f64::INFINITY),
    );
    let view = View::Outcome { lower, upper };
    let chance = UniformChance::default();
    build(
        job,
        opts,
        game,
        root,
        2,
        Rewards::Outcome,
        res,
        chance,
        view,
    )
}

/// Prepares `mcts` for a two-player game with chance nodes at `root`: outcome rewards (win 1,
/// draw 0.5, loss 0 by the final returns), chance outcomes drawn with the game's probabilities.
pub fn stochastic<G: Stochastic>(
    job: &JobSpec,
    game: G,
    root: G::State,
    res: &Resources,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let opts = Opts::new(&job.options, "option");
    let players = game.num_players();
    let chance = TrueChance::default();
    build(
        job,
        opts,
        game,
        root,
        players,
        Rewards::Outcome,
        res,
        chance,
        View::WinRate,
    )
}

/// Smallest and largest return of every player over the leaves below `root` (explicit trees:
/// a walk over every node).
fn return_bounds<G: Game>(game: &G, root: &G::State) -> (Vec<f64>, Vec<f64>) {
    let n = game.num_players();
    let (mut lower, mut upper) = (vec![f64::INFINITY; n], vec![f64::NEG_INFINITY; n]);
    let mut returns = vec![0.0; n];
    let mut moves = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(s) = stack.pop() {
        if game.is_terminal(&s) {
            game.returns(&s, &mut returns);
            for p in 0..n {
                lower[p] = lower[p].min(returns[p]);
                upper[p] = upper[p].max(returns[p]);
            }
            continue;
        }
        game.legal_moves(&s, &mut moves);
        for &m in &moves {
            let mut c = s.clone();
            game.apply(&mut c, m);
            stack.push(c);
        }
    }
    (lower, upper)
}

/// Prepares `mcts` for an explicit tree of any kind.
pub fn tree(
    job: &JobSpec,
    tree: Tree,
    res: &Resources,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let opts = Opts::new(&job.options, "option");
    let players = tree.num_players();
    let (mut lower, mut upper) = return_bounds(&tree, &0);
    let given = (opts.float(&LOWER)?, opts.float(&UPPER)?);
    if given.0.is_some() || given.1.is_some() {
        let (l, u) = checked_bounds(given.0.unwrap_or(lower[0]), given.1.unwrap_or(upper[0]))?;
        if tree.kind() == TreeKind::MultiPlayer {
            lower = vec![l; players];
            upper = vec![u; players];
        } else {
            // Two players, returns (u, -u).
            lower = vec![l, -u];
            upper = vec![u, -l];
        }
    }
    let rewards = Rewards::Scaled { lower, upper };
    let vector = tree.kind() == TreeKind::MultiPlayer;
    let view = View::Utility { vector, player: 0 };
    let chance = TrueChance::default();
    build(job, opts, tree, 0, players, rewards, res, chance, view)
}

/// Prepares `mcts` for a two-player zero-sum game with chance (Pig, backgammon): rewards scaled
/// from the game's utility bounds (or `lower`/`upper`), outcomes drawn with their
/// probabilities, the value from `player_side(root)`'s point of view as the chance family
/// reports it.
pub fn chance_zero_sum<G: ChanceZeroSum>(
    job: &JobSpec,
    game: G,
    root: G::State,
    res: &Resources,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let opts = Opts::new(&job.options, "option");
    let (mut l, mut u) = game.utility_bounds();
    let given = (opts.float(&LOWER)?, opts.float(&UPPER)?);
    if let Some((lo, hi)) = super::chance::bounds(given.0, given.1)? {
        (l, u) = (lo, hi);
    }
    let (l, u) = checked_bounds(l, u)?;
    let rewards = Rewards::Scaled {
        lower: vec![l, -u],
        upper: vec![u, -l],
    };
    let view = View::Utility {
        vector: false,
        player: game.player_side(&root),
    };
    let chance = TrueChance::default();
    build(job, opts, game, root, 2, rewards, res, chance, view)
}

/// A utility for JSON: integers print as integers, and the last bits of float noise from the
/// reward scaling are dropped.
fn utility_json(x: f64) -> Value {
    json_number((x * 1e9).round() / 1e9)
}

impl<G: Game, C: ChanceModel<G>> MctsJob<G, C> {
    /// The trees of task `index` when the job has `self.tasks` tasks.
    fn share(&self, index: u32) -> std::ops::Range<u32> {
        let (t, r) = (self.cfg.trees as u64, self.tasks as u64);
        let i = index as u64;
        (i * t / r) as u32..((i + 1) * t / r) as u32
    }

    /// A root move's mean reward `q` (of the side to move at the root) on the scale of the
    /// job's value: a win rate, the expected outcome `2q - 1`, or the root player's utility.
    fn move_value(&self, s: &Summary<String>, q: f64) -> Value {
        match self.view {
            View::WinRate => Value::from(q),
            View::Outcome { .. } => utility_json(2.0 * q - 1.0),
            View::Utility { .. } => {
                let p = s.root_player.unwrap_or(0) as usize;
                utility_json(self.cfg.rewards.to_return(p, q))
            }
        }
    }

    /// The root's legal moves (or chance outcomes) by their notation.
    fn root_moves(&self) -> std::collections::HashSet<String> {
        let mut moves = Vec::new();
        self.game.legal_moves(&self.root, &mut moves);
        moves
            .iter()
            .map(|&m| self.game.format_move(&self.root, m))
            .collect()
    }

    /// The range of a value on the job's scale: player `p`'s utility, or (`None`) the view's
    /// scalar value whoever it is for.
    fn value_range(&self, p: Option<usize>) -> (f64, f64) {
        match (self.view, &self.cfg.rewards) {
            (View::WinRate, _) => (0.0, 1.0),
            (View::Outcome { .. }, _) => (-1.0, 1.0),
            (View::Utility { .. }, Rewards::Scaled { lower, upper }) => match p {
                Some(p) => (
                    lower.get(p).copied().unwrap_or(f64::NEG_INFINITY),
                    upper.get(p).copied().unwrap_or(f64::INFINITY),
                ),
                None => (
                    lower.iter().copied().fold(f64::INFINITY, f64::min),
                    upper.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ),
            },
            (View::Utility { .. }, Rewards::Outcome) => (0.0, 1.0),
        }
    }

    /// The trees of a whole task or of run `index`.
    fn trees_of(&self, run: Option<u32>) -> u64 {
        match run {
            Some(i) => self.share(i).len() as u64,
            None => self.cfg.trees as u64,
        }
    }

    /// The display keys of a whole task's output (see [`PreparedJob::check_output`]).
    fn check_display(
        &self,
        out: &TaskOutput,
        legal: &std::collections::HashSet<String>,
    ) -> Result<(), String> {
        use super::check;
        let trees = self.trees_of(None);
        let playouts = out.nodes;
        if let Some(p) = check::count(out, "playouts", u64::MAX)? {
            if p != playouts {
                return Err(format!("'playouts' {p} is not the nodes {playouts}"));
            }
        }
        if check::count(out, "trees", trees)?.is_some_and(|t| t != trees) {
            return Err(format!("'trees' is not the job's {trees}"));
        }
        let merge = if self.merge == Merge::Vote {
            "vote"
        } else {
            "sum"
        };
        check::exactly(out, "merge", &Value::from(merge))?;
        let solved = check::flag(out, "solved")?.unwrap_or(false);
        for (key, max) in [("visits", playouts), ("votes", trees)] {
            let Some(v) = out.extra.get(key) else {
                continue;
            };
            let map = v
                .as_object()
                .ok_or_else(|| format!("'{key}' is not a map"))?;
            for (mv, n) in map {
                if !legal.contains(mv) {
                    return Err(format!(
                        "'{key}' names '{}', not a legal root move",
                        check::clip_text(mv)
                    ));
                }
                if n.as_u64().is_none_or(|n| n > max) {
                    return Err(format!("'{key}' of a move is not a count up to {max}"));
                }
            }
        }
        if let Some(o) = out.extra.get("outcome") {
            if !solved || !["win", "loss", "draw"].contains(&o.as_str().unwrap_or("")) {
                return Err("'outcome' is win, loss or draw of a solved root".into());
            }
        }
        if let Some(b) = out.extra.get("bounds") {
            let View::Outcome { lower, upper } = self.view else {
                return Err("'bounds' do not belong in this job's output".into());
            };
            let pair = b.as_array().filter(|a| a.len() == 2 && solved);
            let pair = pair.ok_or("'bounds' are the [lower, upper] of a solved root")?;
            check::number_in(&pair[0], "lower bound", lower, upper)?;
            check::number_in(&pair[1], "upper bound", lower, upper)?;
            if pair[0].as_f64() > pair[1].as_f64() {
                return Err("'bounds' are not ordered".into());
            }
        }
        if let Some(w) = out.extra.win_rate {
            check::number_in(&Value::from(w), "win rate", 0.0, 1.0)?;
        }
        if let Some(moves) = &out.extra.moves {
            let (lo, hi) = self.value_range(None);
            for (mv, score) in moves.iter() {
                if !legal.contains(mv) {
                    return Err(format!(
                        "'moves' names '{}', not a legal root move",
                        check::clip_text(mv)
                    ));
                }
                if score.lower.is_some() || score.upper.is_some() {
                    return Err("an MCTS move score has no bounds".into());
                }
                if score.visits.is_none_or(|n| n > playouts) {
                    return Err("an MCTS move score counts its visits".into());
                }
                if let Some(v) = &score.value {
                    check::number_in(v, "move value", lo, hi)?;
                }
            }
        }
        Ok(())
    }

    /// Root statistics a run task reports: the summary they read as, checked (lengths, legal
    /// distinct moves, counts and rewards in range, this run's trees, the nodes as its
    /// playouts) and canonical (nothing beside its fields).
    fn check_stats(
        &self,
        stats: &Value,
        index: u32,
        legal: &std::collections::HashSet<String>,
        nodes: u64,
    ) -> Result<Summary<String>, String> {
        let s = Summary::<String>::deserialize(stats).map_err(|e| {
            format!(
                "root statistics are malformed: {}",
                super::check::clip_error(e)
            )
        })?;
        let n = s.moves.len();
        if [
            s.visits.len(),
            s.rewards.len(),
            s.votes.len(),
            s.proven.len(),
        ]
        .iter()
        .any(|&l| l != n)
            || n > legal.len()
        {
            return Err("root statistics of unequal lengths".into());
        }
        let mut seen = std::collections::HashSet::with_capacity(n);
        for mv in &s.moves {
            if !legal.contains(mv) || !seen.insert(mv.as_str()) {
                return Err(format!(
                    "root statistics name '{}' twice or not as a legal root move",
                    super::check::clip_text(mv)
                ));
            }
        }
        let trees = self.trees_of(Some(index));
        let within = |x: f64, hi: f64| x.is_finite() && x >= -1e-6 && x <= hi * (1.0 + 1e-9) + 1e-6;
        let unit = |x: &Option<f64>| x.is_none_or(|v| (0.0..=1.0).contains(&v));
        let players = self.game.num_players();
        let root_player = match self.game.turn(&self.root) {
            crate::model::Turn::Player(p) => Some(p),
            _ => None,
        };
        let ok = s.playouts == nodes
            && s.trees as u64 == trees
            && s.root_player == root_player
            && s.player_rewards.len() == players
            && s.player_rewards
                .iter()
                .all(|&r| within(r, s.playouts as f64))
            && (0..n).all(|i| {
                s.visits[i] <= s.playouts
                    && within(s.rewards[i], s.visits[i] as f64)
                    && s.votes[i] as u64 <= trees
                    && unit(&s.proven[i])
            })
            && unit(&s.root_proven)
            && s.stopped
                .as_deref()
                .is_none_or(|r| r.parse::<crate::wire::StopReason>().is_ok());
        if !ok {
            return Err("root statistics out of range".into());
        }
        if serde_json::to_value(&s).ok().as_ref() != Some(stats) {
            return Err("root statistics carry more than their fields".into());
        }
        Ok(s)
    }

    fn output(&self, s: &Summary<String>, elapsed_ms: u64) -> TaskOutput {
        let best = s.best(self.merge);
        let mut extra = Extra::default();
        extra.insert("visits".into(), per_move(&s.moves, &s.visits));
        if s.trees > 1 {
            extra.insert("votes".into(), per_move(&s.moves, &s.votes));
        }
        extra.insert("playouts".into(), s.playouts.into());
        extra.insert("trees".into(), s.trees.into());
        extra.insert(
            "merge".into(),
            if self.merge == Merge::Vote {
                "vote"
            } else {
                "sum"
            }
            .into(),
        );
        extra.insert("solved".into(), s.root_proven.is_some().into());
        if super::analysis::wanted(&self.job) {
            extra.moves = Some(Box::new(super::analysis::mcts_scores(
                &s.moves,
                &s.visits,
                &s.rewards,
                |q| self.move_value(s, q),
            )));
        }
        extra.stopped = s.stopped.as_deref().and_then(|r| r.parse().ok());
        let value = match self.view {
            View::WinRate => {
                let p = s.root_player.unwrap_or(0) as usize;
                match s.root_proven {
                    Some(v) => {
                        let for_p = if p == 0 { v } else { 1.0 - v };
                        let outcome = if for_p == 1.0 {
                            "win"
                        } else if for_p == 0.0 {
                            "loss"
                        } else {
                            "draw"
                        };
                        extra.insert("outcome".into(), outcome.into());
                        Value::from(for_p)
                    }
                    None => s.mean_reward(p).map(Value::from).unwrap_or(Value::Null),
                }
            }
            View::Outcome { lower, upper } => {
                let p = s.root_player.unwrap_or(0) as usize;
                let proven = s.root_proven.map(|v| if p == 0 { v } else { 1.0 - v });
                match proven.or_else(|| s.mean_reward(p)) {
                    None => Value::Null,
                    Some(w) => {
                        extra.win_rate = Some(w);
                        if let Some(w) = proven {
                            let (outcome, lo, hi) = if w == 1.0 {
                                ("win", 1.0_f64.min(upper), upper)
                            } else if w == 0.0 {
                                ("loss", lower, (-1.0_f64).max(lower))
                            } else {
                                ("draw", 0.0, 0.0)
                            };
                            extra.insert("outcome".into(), outcome.into());
                            extra.insert(
                                "bounds".into(),
                                vec![utility_json(lo), utility_json(hi)].into(),
                            );
                        }
                        utility_json(2.0 * w - 1.0)
                    }
                }
            }
            View::Utility {
                vector: false,
                player,
            } => {
                let p = player as usize;
                // Player 0's proven reward, seen by player p (two players, rewards sum to 1).
                let proven = s.root_proven.map(|v| if p == 0 { v } else { 1.0 - v });
                match proven.or_else(|| s.mean_reward(p)) {
                    Some(r) => utility_json(self.cfg.rewards.to_return(p, r)),
                    None => Value::Null,
                }
            }
            View::Utility { vector: true, .. } => {
                if s.playouts == 0 {
                    Value::Null
                } else {
                    (0..self.game.num_players())
                        .map(|p| {
                            utility_json(
                                self.cfg
                                    .rewards
                                    .to_return(p, s.mean_reward(p).unwrap_or(0.0)),
                            )
                        })
                        .collect::<Vec<_>>()
                        .into()
                }
            }
        };
        TaskOutput {
            value,
            best_move: best.map(|i| s.moves[i].clone()),
            nodes: s.playouts,
            elapsed_ms,
            raw: None,
            extra,
            proof: None,
        }
    }
}

impl<G: Game, C: ChanceModel<G>> PreparedJob for MctsJob<G, C> {
    fn job(&self) -> &JobSpec {
        &self.job
    }

    /// The value's shape for the view (a win rate in [0, 1], an outcome in [-1, 1], a utility
    /// within the rewards' bounds, or one per player), a win rate in [0, 1], a legal best move,
    /// and the keys the kernel writes, each checked: `visits` and `votes` of legal root moves,
    /// `playouts` (the nodes), `trees`, `merge`, `solved`, `outcome`, `bounds`, an analysis's
    /// `moves`. A run task's output must be exactly what its `root_stats` give, after those
    /// are checked (lengths, legal distinct moves, rewards within the visits).
    fn check_output(&self, task: &TaskKind, out: &TaskOutput) -> Result<(), String> {
        use super::check;
        let planned = !matches!(task, TaskKind::Probe { .. } | TaskKind::Move { .. });
        if !planned {
            return Err("probe and move tasks do not apply to mcts".into());
        }
        let run = match task {
            TaskKind::Run { index, .. } if *index < self.tasks => Some(*index),
            TaskKind::Run { .. } => return Err("no such run task".into()),
            _ => None,
        };
        let typed: &[&str] = if run.is_some() {
            &["win_rate", "stopped", "moves", "root_stats"]
        } else {
            &["win_rate", "stopped", "moves"]
        };
        check::only_keys(
            out,
            typed,
            &[
                "visits", "votes", "playouts", "trees", "merge", "solved", "outcome", "bounds",
            ],
        )?;
        let legal = self.root_moves();
        if check::is_stopped(out) && out.extra.root_stats.is_none() {
            // Stopped before any statistics: the merge skips it.
            return self.check_display(out, &legal);
        }
        if let Some(index) = run {
            let stats = out
                .extra
                .root_stats
                .as_ref()
                .ok_or("a run task reports its root statistics")?;
            let summary = self.check_stats(stats, index, &legal, out.nodes)?;
            let mut want = self.output(&summary, out.elapsed_ms);
            want.extra.root_stats = Some(stats.clone());
            if want != *out {
                return Err("the output is not what its root statistics give".into());
            }
            return Ok(());
        }
        self.check_display(out, &legal)?;
        check::best_move(&self.game, &self.root, out)?;
        if check::is_stopped(out) {
            return Ok(());
        }
        match self.view {
            View::Utility { vector: true, .. } if out.value.is_null() => {}
            View::Utility { vector: true, .. } => {
                let list = out.value.as_array().ok_or("value is not a list")?;
                if list.len() != self.game.num_players() {
                    return Err(format!(
                        "value has {} entries, the game has {} players",
                        list.len(),
                        self.game.num_players()
                    ));
                }
                for (p, v) in list.iter().enumerate() {
                    let (lo, hi) = self.value_range(Some(p));
                    check::number_in(v, "value", lo, hi)?;
                }
            }
            View::Utility { player, .. } => {
                let (lo, hi) = self.value_range(Some(player as usize));
                check::number_in(&out.value, "value", lo, hi)?;
            }
            _ => {
                let (lo, hi) = self.value_range(None);
                check::number_in(&out.value, "value", lo, hi)?;
            }
        }
        Ok(())
    }

    fn plan_shape(&self) -> PlanShape {
        if self.tasks > 1 {
            PlanShape::Runs {
                count: self.tasks,
                base_seed: self.cfg.seed,
            }
        } else {
            PlanShape::Single
        }
    }

    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError> {
        let t0 = std::time::Instant::now();
        let range = match task {
            TaskKind::Whole => 0..self.cfg.trees,
            TaskKind::Run { index, .. } if *index < self.tasks => self.share(*index),
            TaskKind::Run { index, .. } => {
                return Err(SolveError::Internal(format!(
                    "run {index} of a job with {} tasks",
                    self.tasks
                )))
            }
            other => return Err(SolveError::Internal(other.does_not_apply())),
        };
        let summary = mcts::run_trees(
            &self.game,
            &self.root,
            &self.cfg,
            range,
            &self.chance,
            &RandomPlayout,
            ctl,
        )
        .map_moves(|m| self.game.format_move(&self.root, m));
        let mut out = self.output(&summary, t0.elapsed().as_millis() as u64);
        if matches!(task, TaskKind::Run { .. }) {
            let stats = serde_json::to_value(&summary)
                .map_err(|e| SolveError::Internal(format!("root statistics: {e}")))?;
            out.extra.root_stats = Some(stats);
        }
        Ok(out)
    }

    fn merge_runs(&self, runs: &[TaskOutput]) -> TaskOutput {
        let mut total: Option<Summary<String>> = None;
        for run in runs {
            let Some(s) = run
                .extra
                .root_stats
                .as_ref()
                .and_then(|v| Summary::<String>::deserialize(v).ok())
            else {
                continue;
            };
            match &mut total {
                None => total = Some(s),
                Some(t) => t.merge(&s),
            }
        }
        let elapsed = runs.iter().map(|r| r.elapsed_ms).max().unwrap_or(0);
        match total {
            Some(t) => self.output(&t, elapsed),
            None => TaskOutput::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::run_local;
    use crate::registry::{prepare, PlanShape, SolveError};
    use crate::search::Control;
    use crate::wire::{JobResult, JobSpec};

    fn job(game: &str, position: &str, options: &[(&str, &str)]) -> JobSpec {
        JobSpec::new(game, position, "mcts").with_options(options)
    }

    fn solve(j: &JobSpec) -> JobResult {
        run_local(prepare(j).unwrap().as_ref(), &Control::unlimited()).unwrap()
    }

    /// A node limit holds with thousands of trees and slow playouts: each tree reads the limit
    /// before its first playout, so backgammon with 4,096 trees and a limit of 2,000 playouts
    /// stops within a few hundred playouts of it (it used to play 256 per tree, over a million).
    #[test]
    fn a_node_limit_holds_with_thousands_of_trees() {
        let mut j = job("backgammon", "", &[("trees", "4096")]);
        j.limits.node_limit = Some(2000);
        let r = solve(&j);
        assert_eq!(r.extra.stopped, Some(crate::wire::StopReason::Nodes));
        let playouts = r.extra["playouts"].as_u64().unwrap();
        assert!((2000..4096).contains(&playouts), "{playouts} playouts");
    }

    fn visits_sum(r: &JobResult) -> u64 {
        r.extra["visits"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum()
    }

    #[test]
    fn tictactoe_job_reports_visits_and_a_win_rate() {
        let r = solve(&job(
            "tictactoe",
            "",
            &[("playouts", "2000"), ("solver", "false")],
        ));
        assert_eq!(r.nodes, 2000);
        assert_eq!(visits_sum(&r), 2000);
        assert_eq!(r.extra["solved"], false);
        let w = r.extra.win_rate.unwrap();
        assert!(w > 0.4 && w < 0.9, "X's win rate from the start {w}");
        // The value is on tic-tac-toe's scale (+1 win, 0 draw, -1 loss): the expected outcome.
        let v = r.value.as_f64().unwrap();
        assert!(
            (v - (2.0 * w - 1.0)).abs() < 1e-8,
            "value {v}, win rate {w}"
        );
        assert!(r.best_move.is_some());
    }

    #[test]
    fn solved_root_stops_early_and_says_so() {
        // X: 1, 2; O: 4, 5; X to move wins with 3.
        let r = solve(&job("tictactoe", "1425", &[("playouts", "10000")]));
        assert_eq!(r.extra["solved"], true);
        assert_eq!(r.extra["outcome"], "win");
        assert_eq!(r.best_move.as_deref(), Some("3"));
        assert_eq!(r.value, serde_json::json!(1));
        assert_eq!(r.extra.win_rate, Some(1.0));
        assert_eq!(r.extra["bounds"], serde_json::json!([1, 1]));
        assert!(r.nodes < 10000);
        // A position with a longer solution: the proven outcome is minimax's.
        let g = crate::games::mnk::Mnk::new(3, 3, 3).unwrap();
        for pos in ["1,5,9,3", "5,1", "1,2,5"] {
            let s = crate::model::Game::parse_position(&g, pos).unwrap();
            let exact = crate::search::minimax::minimax(&g, &s, None, &Control::unlimited())
                .unwrap()
                .value;
            let r = solve(&job("mnk", pos, &[("playouts", "300000")]));
            assert_eq!(r.extra["solved"], true, "{pos}");
            let want = ["loss", "draw", "win"][(exact + 1) as usize];
            assert_eq!(r.extra["outcome"], want, "{pos}");
            // On the game's scale the proven value is minimax's exact value.
            assert_eq!(r.value, serde_json::json!(exact), "{pos}");
        }
    }

    /// A root-parallel job split into two tasks (two workers) merges both tasks' trees: the
    /// result is exactly the one-task result with the same trees.
    #[test]
    fn two_tasks_merge_both_trees() {
        let opts = [
            ("playouts", "4000"),
            ("trees", "2"),
            ("seed", "9"),
            ("solver", "false"),
        ];
        let one = solve(&job("mnk", "", &opts));
        let split = job("mnk", "", &[opts.as_slice(), &[("tasks", "2")]].concat());
        let prepared = prepare(&split).unwrap();
        assert_eq!(
            prepared.plan_shape(),
            PlanShape::Runs {
                count: 2,
                base_seed: 9
            }
        );
        let two = run_local(prepared.as_ref(), &Control::unlimited()).unwrap();
        assert_eq!(visits_sum(&two), 4000);
        assert_eq!(two.extra["trees"], 2);
        assert!(two.extra.root_stats.is_none());
        assert_eq!(two.extra["visits"], one.extra["visits"]);
        assert_eq!(two.extra["votes"], one.extra["votes"]);
        assert_eq!((two.value, two.best_move), (one.value, one.best_move));
        let voted = solve(&job(
            "mnk",
            "",
            &[opts.as_slice(), &[("merge", "vote")]].concat(),
        ));
        assert_eq!(voted.extra["merge"], "vote");
    }

    /// Connect Four through the registry: an end-game position of Pons' test set whose
    /// published score is -1 (the side to move loses) is proven lost.
    #[test]
    fn connect4_job() {
        let j = JobSpec {
            game_params: [("width".to_string(), "7".to_string())].into(),
            ..job(
                "connect4",
                "2252576253462244111563365343671351441",
                &[("playouts", "50000")],
            )
        };
        let r = solve(&j);
        assert_eq!(r.extra["solved"], true);
        assert_eq!(r.extra["outcome"], "loss");
        // Negamax scale: a loss is negative; MCTS does not know the margin, so the exact score
        // (-1 here, published) is only bounded.
        assert_eq!(r.value, serde_json::json!(-1));
        assert_eq!(r.extra.win_rate, Some(0.0));
        let b = r.extra["bounds"].as_array().unwrap();
        assert!(b[0].as_f64().unwrap() <= -1.0 && b[1] == serde_json::json!(-1));
        let r = solve(&job(
            "connect4",
            "",
            &[("playouts", "3000"), ("trees", "3")],
        ));
        assert_eq!(visits_sum(&r), 3000);
        assert_eq!(
            r.extra["votes"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum::<u64>(),
            3
        );
    }

    /// Pig (a chance game, target 10): holding 8 + 3 wins at once, which the solver proves; with
    /// the die in the air the value is an estimate from the roller's point of view.
    #[test]
    fn pig_job() {
        let params: crate::wire::Settings = [("target".to_string(), "10".to_string())].into();
        let pig = |pos: &str| JobSpec {
            game_params: params.clone(),
            ..job("pig", pos, &[("playouts", "20000")])
        };
        let r = solve(&pig("8/9/1/3"));
        assert_eq!(r.best_move.as_deref(), Some("hold"));
        assert_eq!(
            (r.extra["solved"].clone(), r.value.clone()),
            (serde_json::json!(true), serde_json::json!(1))
        );
        // Player 2 needs one point and is about to roll from 0: it wins unless it rolls a 1 now
        // or later, so its chances are good but not certain.
        let r = solve(&pig("0/9/2/0?"));
        assert_eq!(r.best_move, None, "chance moves at the root");
        let v = r.value.as_f64().unwrap();
        assert!(v > 0.3 && v < 1.0, "value {v}");
    }

    #[test]
    fn trees_of_every_kind() {
        let course = r#"{"max": [{"min": [4, 9, 6]}, {"min": [2, 15, 13]}, {"min": [5, 8, 10]}], "labels": ["A", "B", "C"]}"#;
        let r = solve(&job("tree", course, &[("playouts", "5000")]));
        assert_eq!(r.best_move.as_deref(), Some("C"));
        assert_eq!(r.extra["solved"], true);
        assert_eq!(r.value, serde_json::json!(5));
        let chance = r#"{"max": [{"chance": [[0.9, 0], [0.1, 10]]}, {"chance": [[0.5, 3], [0.5, 4]]}], "labels": ["A", "B"]}"#;
        let r = solve(&job("tree", chance, &[("playouts", "5000")]));
        assert_eq!(r.best_move.as_deref(), Some("B"));
        let three =
            r#"{"player": 0, "children": [{"utility": [1, 2, 3]}, {"utility": [3, 2, 1]}]}"#;
        let r = solve(&job("tree", three, &[("playouts", "1000")]));
        assert_eq!(r.best_move.as_deref(), Some("1"));
        let v = r.value.as_array().unwrap();
        assert_eq!(v.len(), 3);
        assert!(v[0].as_f64().unwrap() > 2.5);
    }

    #[test]
    fn bad_options_are_named() {
        let three =
            r#"{"player": 0, "children": [{"utility": [1, 2, 3]}, {"utility": [3, 2, 1]}]}"#;
        let ttt: &[(&[(&str, &str)], &str)] = &[
            (&[("playouts", "0")], "'playouts=0' is out of bounds"),
            (
                &[("playouts", "1000000000001")],
                "'playouts=1000000000001' is out of bounds",
            ),
            (&[("trees", "4097")], "'trees=4097'"),
            (&[("trees", "4096"), ("tasks", "1025")], "'tasks=1025'"),
            (&[("c", "-1")], "'c=-1'"),
            (&[("c", "x")], "'c=x' is malformed"),
            (&[("trees", "0")], "'trees=0'"),
            (&[("trees", "2"), ("tasks", "3")], "'tasks=3'"),
            (
                &[("trees", "8"), ("playouts", "4")],
                "'playouts=4' must be at least trees",
            ),
            (&[("merge", "max")], "'merge=max'"),
            (&[("memory_mb", "0")], "'memory_mb=0'"),
            (&[("depth", "3")], "unknown option 'depth'"),
            (&[("lower", "3")], "unknown option 'lower'"),
        ];
        let tree: &[(&[(&str, &str)], &str)] = &[
            (&[("solver", "true")], "needs two players"),
            (&[("lower", "5"), ("upper", "1")], "lower < upper"),
        ];
        let cases = ttt.iter().map(|c| ("tictactoe", "", c));
        for (game, pos, &(opts, want)) in cases.chain(tree.iter().map(|c| ("tree", three, c))) {
            let e = prepare(&job(game, pos, opts)).err().unwrap();
            assert!(
                matches!(&e, SolveError::BadInput(m) if m.contains(want) && !m.contains('\n')),
                "{opts:?}: {e}"
            );
        }
    }
}
