//! The multi-player family: games with utility vectors ([`Stochastic`] + [`VectorEval`]) and
//! the kernels `maxn`, `paranoid` and, for games whose players can move out of turn
//! ([`OutOfTurn`], e.g. `rolit`), `brs` (best-reply search).
//!
//! Options: `tiebreak` (maxn: `first`, the default, `last`, `paranoid`, `friendly`), `depth`
//! (plies; only for games with an evaluator, explicit trees are searched to the end; for `brs`
//! each MAX and each MIN layer is one ply). `brs` on a game without moves out of turn (explicit
//! trees) is refused with a clear message.
//!
//! Without `depth`, games that have an evaluator are searched by iterative deepening (depth 1,
//! 2, ...) until the time or node limit stops an iteration or an iteration sees no depth cut;
//! the deepest finished iteration is the result (`depth` in the output). Such a job needs a
//! time or node limit.
//!
//! Output (more than two players): `value` is a JSON array, one entry per player:
//! max^n's whole vector; for paranoid and brs, the root player's entry, the others `null`
//! (these searches do not determine them). `player` names the root player (0-based) for
//! paranoid and brs.

use super::kernel::Group;
use super::spec::{self, DefaultValue, Spec};
use super::{Opts, PlanShape, PreparedJob, SolveError};
use crate::games::tree::{json_number, Tree};
use crate::model::{Game, Stochastic, VectorEval};
use crate::search::maxn::{root_player, VectorOutcome};
use crate::search::Control;
use crate::wire::{Extra, JobSpec, TaskKind, TaskOutput};

/// Deepest iteration of iterative deepening (a safety stop; real searches end by their limits
/// long before, and a search that sees no depth cut ends by itself).
const MAX_ITERATIVE_DEPTH: u32 = 128;

/// `depth`: plies (for `brs`, each MAX and each MIN layer is one).
pub const DEPTH: Spec = spec::DEPTH.with_default(DefaultValue::Unset(
    "none: iterative deepening (games with an evaluator) or to the end (trees)",
));

/// Options of the multi-player family (`maxn`, `paranoid`, `brs`).
pub const OPTIONS: &[Spec] = &[DEPTH, TIEBREAK];

/// `tiebreak` (maxn): which of equal vectors a player keeps.
pub const TIEBREAK: Spec = Spec::choice(
    "tiebreak",
    &["first", "last", "paranoid", "friendly"],
    DefaultValue::Word("first"),
    "which of equal values a player keeps",
)
.for_algorithms(&["maxn"]);

/// The multi-player family: `maxn`, `paranoid`, `brs`.
pub static GROUP: Group = Group {
    title: "Multi-player",
    options: OPTIONS,
    skip: super::skip_depth_on_trees,
};

/// A multi-player search with its settings.
pub struct VectorSearch<G: Game> {
    /// The search of a state to a depth (none: to the end).
    #[allow(clippy::type_complexity)]
    pub run: Box<
        dyn Fn(&G, &G::State, Option<u32>, &Control) -> Option<VectorOutcome<G::Move>>
            + Send
            + Sync,
    >,
    /// Only the root player's entry of the value is known (paranoid, brs); else the whole
    /// vector (max^n).
    pub root_only: bool,
}

/// A prepared multi-player job.
pub struct MultiJob<G: Stochastic + VectorEval> {
    job: JobSpec,
    game: G,
    root: G::State,
    search: VectorSearch<G>,
    depth: Option<u32>,
    /// Iterative deepening (the game evaluates and no depth was given).
    deepen: bool,
    /// Explicit trees: each player's smallest and largest utility, which hold every value.
    ranges: Option<Vec<(f64, f64)>>,
}

/// Prepares a job over an explicit multi-player tree (searched to the end): its values are
/// checked against each player's utilities.
pub fn tree(
    job: &JobSpec,
    tree: Tree,
    read: impl FnOnce(&Opts) -> Result<VectorSearch<Tree>, SolveError>,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let ranges = (0..tree.num_players())
        .map(|p| tree.player_range(p))
        .collect();
    prepare(job, tree, 0, false, Some(ranges), read)
}

/// Prepares a job over a multi-player game; `evaluates`: the game has a real evaluator;
/// `read`: the kernel's own settings and search.
pub fn prepare<G: Stochastic + VectorEval>(
    job: &JobSpec,
    game: G,
    root: G::State,
    evaluates: bool,
    ranges: Option<Vec<(f64, f64)>>,
    read: impl FnOnce(&Opts) -> Result<VectorSearch<G>, SolveError>,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let opts = Opts::new(&job.options, "option");
    let depth: Option<u32> = opts.uint(&DEPTH)?;
    let search = read(&opts)?;
    opts.finish()?;
    let deepen = super::check_depth(job, evaluates, depth)?;
    Ok(Box::new(MultiJob {
        job: job.clone(),
        game,
        root,
        search,
        depth,
        deepen,
        ranges,
    }))
}

impl<G: Stochastic + VectorEval> MultiJob<G> {
    fn search(&self, depth: Option<u32>, ctl: &Control) -> Option<VectorOutcome<G::Move>> {
        (self.search.run)(&self.game, &self.root, depth, ctl)
    }
}

impl<G: Stochastic + VectorEval> PreparedJob for MultiJob<G> {
    fn job(&self) -> &JobSpec {
        &self.job
    }
    /// A list of one finite number (or null) per player, and a legal best move.
    ///
    /// `maxn` gives every player's number; `paranoid` and `brs` only the root player's (named
    /// by `player`), the others null. Trees' numbers lie within each player's utilities.
    /// Besides: `depth`, `iterations`, `exact`, `leaves`, and nothing else.
    fn check_output(&self, task: &TaskKind, out: &TaskOutput) -> Result<(), String> {
        use super::check;
        check::only_keys(
            out,
            &["stopped"],
            &["iterations", "player", "depth", "exact", "leaves"],
        )?;
        let deepest = self.depth.unwrap_or(MAX_ITERATIVE_DEPTH).into();
        check::count(out, "depth", deepest)?;
        check::count(out, "iterations", deepest)?;
        check::count(out, "leaves", u64::MAX)?;
        check::flag(out, "exact")?;
        let players = self.game.num_players();
        let root_player = root_player(&self.game, &self.root);
        let one = self.search.root_only;
        check::exactly(out, "player", &serde_json::Value::from(root_player as u64))?;
        if !one && out.extra.contains_key("player") {
            return Err("'player' is for searches of the root player's value".into());
        }
        check::best_move(&self.game, &self.root, out)?;
        let planned = matches!(task, TaskKind::Whole);
        if !check::to_check(out, planned, "only whole tasks apply to multi-player jobs")? {
            return Ok(());
        }
        let list = out.value.as_array().ok_or("value is not a list")?;
        if list.len() != players {
            return Err(format!(
                "value has {} entries, the game has {players} players",
                list.len()
            ));
        }
        for (i, v) in list.iter().enumerate() {
            let what = format!("value of player {i}");
            match (
                one && i != root_player,
                self.ranges.as_ref().and_then(|r| r.get(i)),
            ) {
                (true, _) if !v.is_null() => {
                    return Err(format!("{what}: only the root player's value is given"))
                }
                (true, _) => {}
                (false, _) if v.is_null() => return Err(format!("{what} is missing")),
                (false, Some(&(lo, hi))) => check::number_in(v, &what, lo, hi)?,
                (false, None) => {
                    check::number(v, &what)?;
                }
            }
        }
        Ok(())
    }
    fn plan_shape(&self) -> PlanShape {
        PlanShape::Single
    }
    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError> {
        super::whole_only(task, "multi-player")?;
        let t0 = std::time::Instant::now();
        let mut extra = Extra::default();
        let (o, depth, nodes) = if self.deepen {
            // Iterative deepening until a limit stops an iteration, or one sees no depth cut.
            let (o, d, total) = super::deepen(
                MAX_ITERATIVE_DEPTH,
                ctl,
                |d| self.search(Some(d), ctl),
                |o| o.nodes,
                |_, o| !o.cut,
            )?;
            extra.insert("iterations".into(), d.into());
            (o, Some(d), total)
        } else {
            let o = self
                .search(self.depth, ctl)
                .ok_or_else(|| super::stopped(ctl))?;
            let n = o.nodes;
            (o, self.depth, n)
        };
        let value: Vec<serde_json::Value> = match self.search.root_only {
            false => o.value.iter().map(|&v| json_number(v)).collect(),
            true => {
                let r = root_player(&self.game, &self.root);
                extra.insert("player".into(), r.into());
                (0..self.game.num_players())
                    .map(|p| {
                        if p == r {
                            json_number(o.value[0])
                        } else {
                            serde_json::Value::Null
                        }
                    })
                    .collect()
            }
        };
        if let Some(d) = depth {
            extra.insert("depth".into(), d.into());
        }
        extra.insert("exact".into(), (!o.cut).into());
        extra.insert("leaves".into(), o.leaves.into());
        Ok(TaskOutput {
            value: value.into(),
            best_move: o.best_move.map(|m| self.game.format_move(&self.root, m)),
            nodes,
            elapsed_ms: t0.elapsed().as_millis() as u64,
            raw: None,
            extra,
            proof: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::run_local;
    use crate::registry::prepare;
    use crate::search::Control;
    use crate::wire::JobSpec;
    use serde_json::json;

    fn job(position: &str, algorithm: &str, options: &[(&str, &str)]) -> JobSpec {
        JobSpec::new("tree", position, algorithm).with_options(options)
    }

    const COURSE: &str = r#"{"player": 0, "labels": ["left", "right"], "children": [
        {"player": 1, "children": [{"player": 2, "children": [{"utility": [1, 2, 6]}, {"utility": [4, 2, 3]}]},
                                   {"player": 2, "children": [{"utility": [6, 1, 2]}, {"utility": [7, 4, 1]}]}]},
        {"player": 1, "children": [{"player": 2, "children": [{"utility": [2, 5, 4]}, {"utility": [5, 4, 5]}]},
                                   {"player": 2, "children": [{"utility": [5, 2, 4]}, {"utility": [7, 7, 1]}]}]}]}"#;

    #[test]
    fn course_tree_through_the_registry() {
        let p = prepare(&job(COURSE, "maxn", &[("tiebreak", "first")])).unwrap();
        let r = run_local(p.as_ref(), &Control::unlimited()).unwrap();
        assert_eq!(r.value, json!([5, 4, 5]));
        assert_eq!(r.best_move.as_deref(), Some("right"));
        let p = prepare(&job(COURSE, "paranoid", &[])).unwrap();
        let r = run_local(p.as_ref(), &Control::unlimited()).unwrap();
        assert_eq!(r.value, json!([2, null, null]));
        for (j, want) in [
            (
                job(COURSE, "maxn", &[("tiebreak", "coin")]),
                "'tiebreak=coin' is malformed (expected first, last, paranoid or friendly)",
            ),
            (job(COURSE, "maxn", &[("depth", "2")]), "no evaluator"),
            (job(COURSE, "brs", &[]), "out of turn"),
            (job(COURSE, "alphabeta", &[]), "does not apply"),
        ] {
            let e = prepare(&j).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(want), "{e}");
        }
    }

    fn rolit(
        position: &str,
        algorithm: &str,
        params: &[(&str, &str)],
        options: &[(&str, &str)],
    ) -> JobSpec {
        JobSpec::new("rolit", position, algorithm)
            .with_params(params)
            .with_options(options)
    }

    /// The hand example of `search::bestreply` through the registry: Rolit 4 x 4 for three
    /// players, depth 2: BRS 2 for red with d2, paranoid 3 with d2; max^n gives the whole vector.
    #[test]
    fn rolit_through_the_registry() {
        let small = [("players", "3"), ("size", "4")];
        let run =
            |j: JobSpec| run_local(prepare(&j).unwrap().as_ref(), &Control::unlimited()).unwrap();
        let r = run(rolit("", "brs", &small, &[("depth", "2")]));
        assert_eq!(r.value, json!([2, null, null]));
        assert_eq!(r.best_move.as_deref(), Some("d2"));
        let r = run(rolit("", "paranoid", &small, &[("depth", "2")]));
        assert_eq!(r.value, json!([3, null, null]));
        let r = run(rolit("", "maxn", &small, &[("depth", "1")]));
        // Red's three captures all give (3, 1, 1) or (3, 0, 1)...: red's entry is 3.
        assert_eq!(r.value[0], json!(3));
        assert_eq!(r.value.as_array().unwrap().len(), 3);
        // Four players on 8 x 8 after two moves, with a node limit: iterative deepening.
        let mut j = rolit("f4c3", "brs", &[], &[]);
        j.limits.node_limit = Some(20_000);
        let ctl = Control::with_limits(None, Some(20_000));
        let r = run_local(prepare(&j).unwrap().as_ref(), &ctl).unwrap();
        assert_eq!(r.value.as_array().unwrap().len(), 4);
        assert!(r.extra["depth"].as_u64().unwrap() >= 2, "{:?}", r.extra);
        for (j, want) in [
            (
                rolit("", "brs", &[("players", "5")], &[("depth", "1")]),
                "players=5",
            ),
            (
                rolit("", "brs", &[("size", "7")], &[("depth", "1")]),
                "size 7",
            ),
            (rolit("", "brs", &[], &[]), "time or node limit"),
            (rolit("", "brs", &[], &[("depth", "0")]), "depth=0"),
            (rolit("a1", "brs", &[], &[("depth", "1")]), "position"),
            (
                rolit("", "alphabeta", &[], &[("depth", "1")]),
                "maxn, paranoid, brs",
            ),
        ] {
            let e = prepare(&j).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(want), "{e}");
        }
    }
}
