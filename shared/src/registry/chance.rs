//! The chance family: two-player zero-sum games with chance nodes ([`ChanceZeroSum`]) and the
//! kernels `expectimax`, `star1`, `star2`, `star25`.
//!
//! Options: `depth` (players' plies, chance layers not counted), `lower` and
//! `upper` (the bounds L and U of player 0's utility, both or neither, overriding the game's;
//! they must be true bounds), `probing` and `probing_mode` (`sequential` or `cyclic`, star25
//! only), `prune` (expectimax only: Ballard's cut at chance nodes with the bounds).
//!
//! Without `depth`, games that have an evaluator are searched by iterative deepening (depth 1,
//! 2, ...) until the time or node limit stops an iteration; the deepest finished iteration is
//! the result (`depth` in the output). Such a job needs a time or node limit. Explicit trees have
//! no evaluator: they are searched to the end, and `depth` is refused.
//!
//! Output: `value` from the point of view of the player to move at the root (for trees: MAX's
//! utility), `best_move` at a decision root, `nodes`, and `depth`/`iterations`.

use super::kernel::Group;
use super::spec::{self, DefaultValue, Spec};
use super::{Opts, PlanShape, PreparedJob, SolveError};
use crate::games::tree::json_number;
use crate::model::chance::ChanceZeroSum;
use crate::search::expectimax::{expectimax, ChanceOutcome, Pruning};
use crate::search::star1::star1;
use crate::search::star2::star2;
use crate::search::star25::{star25, ProbingMode, DEFAULT_PROBING};
use crate::search::Control;
use crate::wire::{Extra, JobSpec, TaskKind, TaskOutput};

/// Deepest iteration of iterative deepening (a safety stop; real searches end by their limits
/// long before, and a search that sees no depth cut ends by itself).
const MAX_ITERATIVE_DEPTH: u32 = 64;

/// `depth`: players' plies (chance layers not counted). Pig's play never ends by itself, so
/// this bound is what ends its recursion.
pub const DEPTH: Spec = spec::DEPTH
    .with_default(DefaultValue::Unset(
        "none: iterative deepening (games with an evaluator) or to the end (trees)",
    ))
    .with_help("players' plies, chance layers not counted");
/// `lower`: lower bound L of player 0's utility.
pub const LOWER: Spec = super::spec::utility_bound(
    "lower",
    "the game's",
    "lower bound of player 0's utility (with upper)",
);
/// `upper`: upper bound U of player 0's utility.
pub const UPPER: Spec = super::spec::utility_bound(
    "upper",
    "the game's",
    "upper bound of player 0's utility (with lower)",
);
/// `probing` (star25): children probed per chance node.
pub const PROBING: Spec = Spec::uint(
    "probing",
    1,
    64,
    DefaultValue::UInt(DEFAULT_PROBING as u64),
    "children probed at a chance node",
    "no game has more chance outcomes worth probing",
)
.for_algorithms(&["star25"]);

/// Options of the chance family (`expectimax`, `star1`, `star2`, `star25`).
pub const OPTIONS: &[Spec] = &[DEPTH, LOWER, UPPER, PROBING, PROBING_MODE, PRUNE];

/// `probing_mode` (star25).
pub const PROBING_MODE: Spec = Spec::choice(
    "probing_mode",
    &["sequential", "cyclic"],
    DefaultValue::Word("sequential"),
    "order of the probes",
)
.for_algorithms(&["star25"]);
/// `prune` (expectimax).
pub const PRUNE: Spec = Spec::flag("prune", false, "the cut at chance nodes with the bounds")
    .for_algorithms(&["expectimax"]);

/// The chance family: `expectimax`, `star1`, `star2`, `star25`.
pub static GROUP: Group = Group {
    title: "Chance",
    options: OPTIONS,
    skip: super::skip_depth_on_trees,
};

/// Declares the chance kernel `$kernel`, named `$name`, whose settings `$read` reads (a
/// [`ReadKernel`]) and that runs through [`chance`]: a kernel file under `registry/kernels/` is
/// one call of it.
macro_rules! chance_kernel {
    ($(#[$doc:meta])* $kernel:ident, $name:literal, $read:expr) => {
        $crate::registry::kernel::kernel! {
            $(#[$doc])*
            $kernel {
                name: $name,
                serves: [Chance, MinMaxTree, ChanceTree],
                group: $crate::registry::chance::GROUP,
                analyse: $crate::registry::kernel::Analyse::No,
            }
            chance(job, game, root, evaluates, max_view, _res) => $crate::registry::chance::chance(
                job, game, root, evaluates, max_view, $read,
            );
        }
    };
}
pub(crate) use chance_kernel;

/// Reads the settings of one chance kernel.
pub type ReadKernel = fn(&Opts) -> Result<Kernel, SolveError>;

/// `lower` and `upper` as given: both or neither, finite with lower < upper.
pub fn bounds(lower: Option<f64>, upper: Option<f64>) -> Result<Option<(f64, f64)>, SolveError> {
    match (lower, upper) {
        (None, None) => Ok(None),
        (Some(l), Some(u)) if l.is_finite() && u.is_finite() && l < u => Ok(Some((l, u))),
        (Some(_), Some(_)) => Err(SolveError::bad(
            "options 'lower' and 'upper' must be finite with lower < upper",
        )),
        _ => Err(SolveError::bad("options 'lower' and 'upper' go together")),
    }
}

/// Which kernel, with its settings.
#[derive(Clone, Copy, Debug)]
pub enum Kernel {
    Expectimax(Pruning),
    Star1,
    Star2,
    Star25(u32, ProbingMode),
}

/// A prepared chance job.
pub struct ChanceJob<G: ChanceZeroSum> {
    job: JobSpec,
    game: G,
    root: G::State,
    kernel: Kernel,
    depth: Option<u32>,
    bounds: Option<(f64, f64)>,
    /// Whether values are reported from player 0's point of view (trees) instead of the mover's.
    max_view: bool,
    /// Whether the game has an evaluator (else: exact search only).
    evaluates: bool,
}

/// Prepares a job over a chance game. `evaluates`: the game has a real evaluator (so `depth`
/// and iterative deepening apply); `max_view`: report values as player 0's utility (trees);
/// `read`: the kernel's own settings.
pub fn chance<G: ChanceZeroSum>(
    job: &JobSpec,
    game: G,
    root: G::State,
    evaluates: bool,
    max_view: bool,
    read: ReadKernel,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let opts = Opts::new(&job.options, "option");
    let depth: Option<u32> = opts.uint(&DEPTH)?;
    let lower: Option<f64> = opts.float(&LOWER)?;
    let upper: Option<f64> = opts.float(&UPPER)?;
    let bounds = bounds(lower, upper)?;
    let kernel = read(&opts)?;
    opts.finish()?;
    super::check_depth(job, evaluates, depth)?;
    if let (Some((l, u)), false) = (bounds, evaluates) {
        // Without an evaluator (explicit trees) the game's bounds are the exact range of the
        // leaves, so declared bounds that exclude one would give wrong values.
        let (gl, gu) = game.utility_bounds();
        if l > gl || u < gu {
            return Err(SolveError::bad(format!(
                "options 'lower={l}', 'upper={u}' exclude utilities of this game (it ranges over [{gl}, {gu}])"
            )));
        }
    }
    Ok(Box::new(ChanceJob {
        job: job.clone(),
        game,
        root,
        kernel,
        depth,
        bounds,
        max_view,
        evaluates,
    }))
}

impl<G: ChanceZeroSum> ChanceJob<G> {
    fn search(&self, depth: Option<u32>, ctl: &Control) -> Option<ChanceOutcome<G::Move>> {
        let (g, s, b) = (&self.game, &self.root, self.bounds);
        match self.kernel {
            Kernel::Expectimax(p) => expectimax(g, s, depth, p, b, ctl),
            Kernel::Star1 => star1(g, s, depth, b, ctl),
            Kernel::Star2 => star2(g, s, depth, b, ctl),
            Kernel::Star25(k, mode) => star25(g, s, depth, k, mode, b, ctl),
        }
    }

    fn output(
        &self,
        o: &ChanceOutcome<G::Move>,
        depth: Option<u32>,
        iterations: u32,
        nodes: u64,
        ms: u64,
    ) -> TaskOutput {
        let value = if self.max_view && self.game.player_side(&self.root) == 1 {
            -o.value
        } else {
            o.value
        };
        let mut extra = Extra::default();
        if let Some(d) = depth {
            extra.insert("depth".into(), d.into());
        }
        if iterations > 1 {
            extra.insert("iterations".into(), iterations.into());
        }
        extra.insert("leaves".into(), o.leaves.into());
        TaskOutput {
            value: json_number(value),
            best_move: o.best_move.map(|m| self.game.format_move(&self.root, m)),
            nodes,
            elapsed_ms: ms,
            raw: None,
            extra,
            proof: None,
        }
    }
}

impl<G: ChanceZeroSum> PreparedJob for ChanceJob<G> {
    fn job(&self) -> &JobSpec {
        &self.job
    }
    /// A finite number (inside the utility range for trees, which are searched exactly) and a
    /// legal best move.
    ///
    /// Every value lies within the utility bounds (the game's, and the job's `lower` and
    /// `upper`): the kernels only average and compare terminal values and estimates, which
    /// the bounds hold. Besides: `depth` and `iterations` up to the deepest search, a count of
    /// `leaves`, and nothing else.
    fn check_output(&self, task: &TaskKind, out: &TaskOutput) -> Result<(), String> {
        use super::check;
        check::only_keys(out, &["stopped"], &["depth", "iterations", "leaves"])?;
        let deepest = self.depth.unwrap_or(MAX_ITERATIVE_DEPTH).into();
        check::count(out, "depth", deepest)?;
        check::count(out, "iterations", deepest)?;
        check::count(out, "leaves", u64::MAX)?;
        check::best_move(&self.game, &self.root, out)?;
        let planned = matches!(task, TaskKind::Whole);
        if !check::to_check(out, planned, "only whole tasks apply to chance jobs")? {
            return Ok(());
        }
        if out.value.is_null() {
            return Err("no value".into());
        }
        let (gl, gu) = self.game.utility_bounds();
        let (l, u) = match self.bounds {
            Some((l, u)) => (l.min(gl), u.max(gu)),
            None => (gl, gu),
        };
        check::number_in(&out.value, "value", l.min(-u), u.max(-l))?;
        Ok(())
    }
    fn plan_shape(&self) -> PlanShape {
        PlanShape::Single
    }
    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError> {
        super::whole_only(task, "chance")?;
        let t0 = std::time::Instant::now();
        let ms = || t0.elapsed().as_millis() as u64;
        if !self.evaluates || self.depth.is_some() {
            let o = self
                .search(self.depth, ctl)
                .ok_or_else(|| super::stopped(ctl))?;
            return Ok(self.output(&o, self.depth, 1, o.nodes, ms()));
        }
        // Iterative deepening until a limit stops an iteration, or the tree is exhausted (an
        // iteration searched as many nodes as the one before).
        let (o, d, total) = super::deepen(
            MAX_ITERATIVE_DEPTH,
            ctl,
            |d| self.search(Some(d), ctl),
            |o| o.nodes,
            |before, o| before.is_some_and(|p| p.nodes == o.nodes),
        )?;
        Ok(self.output(&o, Some(d), d, total, ms()))
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::run_local;
    use crate::registry::{prepare, SolveError};
    use crate::search::Control;
    use crate::wire::{JobSpec, Limits};
    use serde_json::json;

    const COIN: &str = r#"{"max": [{"chance": [[0.5, {"min": [3, 7]}], [0.5, {"min": [8, 4]}]]}, {"chance": [[0.25, {"min": [10, 1]}], [0.75, {"min": [6, 5]}]]}], "labels": ["L", "R"]}"#;

    fn job(game: &str, position: &str, algorithm: &str, options: &[(&str, &str)]) -> JobSpec {
        JobSpec::new(game, position, algorithm).with_options(options)
    }

    fn solve(j: &JobSpec) -> Result<crate::wire::JobResult, SolveError> {
        let p = prepare(j)?;
        run_local(p.as_ref(), &Control::unlimited())
    }

    #[test]
    fn course_coin_flip_tree_through_the_registry() {
        for (alg, opts) in [
            ("expectimax", vec![]),
            ("expectimax", vec![("prune", "true")]),
            ("star1", vec![]),
            ("star2", vec![("lower", "0"), ("upper", "20")]),
            ("star25", vec![("probing", "3"), ("probing_mode", "cyclic")]),
        ] {
            let r = solve(&job("tree", COIN, alg, &opts)).unwrap();
            assert_eq!(r.value, json!(4), "{alg}");
            assert_eq!(r.best_move.as_deref(), Some("R"), "{alg}");
        }
        // A min/max tree with a chance kernel: expectiminimax equals minimax there. MIN root:
        // the value is still MAX's utility.
        let r = solve(&job(
            "tree",
            r#"{"min": [{"max": [4, 9]}, {"max": [2, 3]}]}"#,
            "star2",
            &[],
        ))
        .unwrap();
        assert_eq!(r.value, json!(3));
        assert_eq!(r.best_move.as_deref(), Some("1"));
    }

    #[test]
    fn games_with_depth_and_iterative_deepening() {
        let r = solve(&job("pig", "", "star2", &[("depth", "3")])).unwrap();
        assert_eq!(r.best_move.as_deref(), Some("roll"));
        let mut j = job("pig", "10/25/1/12", "expectimax", &[]);
        j.game_params.insert("target".into(), "30".into());
        j.limits = Limits {
            time_ms: None,
            node_limit: Some(200_000),
        };
        let p = prepare(&j).unwrap();
        let ctl = Control::with_limits(None, Some(200_000));
        let r = run_local(p.as_ref(), &ctl).unwrap();
        assert!(r.extra["depth"].as_u64().unwrap() >= 2, "{r:?}");
        let start_roll = "-2,0,0,0,0,5,0,3,0,0,0,-5,5,0,0,0,-3,0,-5,0,0,0,0,2 0-0 X 31";
        let r = solve(&job("backgammon", start_roll, "star1", &[("depth", "1")])).unwrap();
        // 31 at the start: the classic 8/5 6/5 makes the 5 point (the race evaluator agrees
        // that no blot is left and the pips are the same for every play).
        assert_eq!(r.best_move.as_deref(), Some("8/5 6/5"));
    }

    #[test]
    fn bad_input_is_one_line() {
        for (j, want) in [
            (
                job("tree", COIN, "star1", &[("depth", "2")]),
                "no evaluator",
            ),
            (
                job("tree", COIN, "star25", &[("probing_mode", "spiral")]),
                "sequential or cyclic",
            ),
            (
                job("tree", COIN, "star25", &[("probing", "0")]),
                "probing=0",
            ),
            (
                job("tree", COIN, "star25", &[("probing", "65")]),
                "probing=65",
            ),
            (job("tree", COIN, "star1", &[("lower", "0")]), "go together"),
            (
                job("tree", COIN, "star1", &[("lower", "5"), ("upper", "1")]),
                "lower < upper",
            ),
            (
                job("tree", COIN, "star1", &[("lower", "2"), ("upper", "10")]),
                "exclude utilities",
            ),
            (
                job("tree", COIN, "star1", &[("probing", "2")]),
                "unknown option",
            ),
            (job("tree", COIN, "maxn", &[]), "does not apply"),
            (job("pig", "", "star1", &[]), "needs option 'depth'"),
            (job("pig", "1/2/3", "star1", &[("depth", "1")]), "position"),
            (
                job("backgammon", "", "alphabeta", &[("depth", "1")]),
                "does not apply",
            ),
        ] {
            let e = match prepare(&j) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{j:?} was accepted"),
            };
            assert!(e.contains(want) && !e.contains('\n'), "{e}");
        }
    }
}
