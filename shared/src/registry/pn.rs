//! The proof-number algorithms (`pns`, `dfpn`, `pn2`, `pdspn`) as jobs.
//!
//! With `--option target=V` a job decides "value >= V" in one task: the result has `proved`,
//! `value` (null unless V is the top or the bottom of the game's bounds) and `bounds`. Without
//! `target` the job finds the exact value as Saffidine and Cazenave's multi-valued search does
//! ("Multiple-Outcome Proof Number Search", 2012), but through the planner: a `Probes` plan over
//! the game's bounds, each probe a threshold decision that may run on another worker.
//!
//! The options (all checked here; unknown ones are bad input) and results are the user's
//! contract: docs/API.md, section 5.3. Facts a maintainer must keep:
//! - A memory budget too small for the proof ends the job with a result, not an error
//!   (`stopped: "memory"`, `value: null`, the bounds known); in a probe plan that probe ends the
//!   plan (it would fail again anywhere) and the others are cancelled. Other stops (time, nodes,
//!   cancel) end the task with an error, as alpha-beta's probes do.
//! - A certificate (`proof=true`) is built after the decision within `memory_mb` and
//!   [`crate::proof::MAX_PROOF_BYTES`]; one that does not fit keeps the decision and adds
//!   `stopped: "memory"` and a one-line `error`, without a certificate.
//! - Targets and bounds are the game's internal integers inside; everything shown goes through
//!   `value_to_json`, bounds rounded inwards to possible values (`value_step`): "value < 1" on
//!   Connect Four shows the upper bound 0, not 0.99.

use super::kernel::{self, Group};
use super::spec::{self, DefaultValue, Spec};
use super::{catalogue, Opts, PlanShape, PreparedJob, Resources, SolveError};
use crate::games::tree::{Tree, TreeKind};
use crate::games::Exact;
use crate::model::single::SinglePlayer;
use crate::model::{ChanceZeroSum, Hashed, OutOfTurn, Picture, Stochastic, VectorEval, ZeroSum};
use crate::proof::{Claim, ProofFile};
use crate::search::pns::{self, certify, parallel, Algorithm, PnOptions, Verdict};
use crate::search::{Control, StopReason};
use crate::wire::{JobSpec, RawBounds, Settings, TaskKind, TaskOutput};
use serde::Deserialize;

/// `memory_mb`.
pub const MEMORY_MB: Spec = spec::memory_mb(
    pns::DEFAULT_MEMORY_MB,
    "proof tree (pns, pn2), table (dfpn) or both halves (pdspn) budget, MiB; with proof=true also the certificate's",
);
/// `threads` (root splitting).
pub const THREADS: Spec = spec::THREADS
    .with_default(DefaultValue::UInt(1))
    .with_help("root splitting over this many threads");
/// `epsilon` (dfpn).
pub const EPSILON: Spec = Spec::float(
    "epsilon",
    0.0,
    100.0,
    DefaultValue::Float(pns::dfpn::DEFAULT_EPSILON),
    "the 1+epsilon trick (0: plain df-pn)",
    "beyond it the thresholds no longer bound the search",
)
.for_algorithms(&["dfpn"]);
/// `pn2_factor` (pn2).
pub const PN2_FACTOR: Spec = Spec::float(
    "pn2_factor",
    1e-6,
    1e6,
    DefaultValue::Float(pns::pn2::DEFAULT_FACTOR),
    "second-level budget as a multiple of the first level",
    "positive; the memory budget caps it anyway",
)
.for_algorithms(&["pn2", "pdspn"]);
/// `proof`.
pub const PROOF: Spec = Spec::flag(
    "proof",
    false,
    "with target: the result carries a proof certificate",
);
/// `current_node` (best-first kernels).
pub const CURRENT_NODE: Spec = Spec::flag("current_node", true, "current-node enhancement")
    .for_algorithms(&["pns", "pn2", "pdspn"]);
/// `remember_best` (best-first kernels).
pub const REMEMBER_BEST: Spec = Spec::flag("remember_best", true, "most-proving child remembered")
    .for_algorithms(&["pns", "pn2", "pdspn"]);
/// `delete_solved` (best-first kernels).
pub const DELETE_SOLVED: Spec = Spec::flag("delete_solved", true, "DeleteSolvedSubtrees")
    .for_algorithms(&["pns", "pn2", "pdspn"]);

/// Options of the proof-number family (`pns`, `dfpn`, `pn2`).
pub const OPTIONS: &[Spec] = &[
    spec::TARGET,
    MEMORY_MB,
    THREADS,
    PROOF,
    CURRENT_NODE,
    REMEMBER_BEST,
    DELETE_SOLVED,
    EPSILON,
    PN2_FACTOR,
    spec::TABLES,
    super::analysis::ANALYSE,
];

/// A prepared proof-number job.
pub struct PnJob<G: ZeroSum + Hashed> {
    job: JobSpec,
    game: G,
    root: G::State,
    algorithm: Algorithm,
    opts: PnOptions,
    target: Option<i32>,
    threads: usize,
    /// `proof=true`: a decision's output carries its certificate.
    proof: bool,
}

/// The proof-number family: `pns`, `dfpn`, `pn2`, `pdspn`.
pub static GROUP: Group = Group {
    title: "Proof-number search",
    options: OPTIONS,
    skip: kernel::skip_none,
};

/// Declares the proof-number kernel `$kernel`, named `$name`, that runs `search::pns`'s
/// `Algorithm::$algorithm` through [`prepare`]: a kernel file under `registry/kernels/` is one
/// call of it.
macro_rules! proof_number {
    ($(#[$doc:meta])* $kernel:ident, $name:literal, $algorithm:ident) => {
        $crate::registry::kernel::kernel! {
            $(#[$doc])*
            $kernel {
                name: $name,
                serves: [ZeroSum, MinMaxTree],
                group: $crate::registry::pn::GROUP,
                analyse: $crate::registry::kernel::Analyse::Moves { own_table: false },
            }
            zero_sum(job, game, root, res) => $crate::registry::pn::prepare(
                job,
                game,
                root,
                res,
                $crate::search::pns::Algorithm::$algorithm,
            );
        }
    };
}
pub(crate) use proof_number;

/// The job-level proof-number family (`jlpns`, `registry::joblevel`).
pub static JOBLEVEL: Group = Group {
    title: "Job-level proof-number search",
    options: super::joblevel::OPTIONS,
    skip: kernel::skip_none,
};

/// Prepares a job of the proof-number `algorithm` on a two-player zero-sum game.
pub fn prepare<G: ZeroSum + Hashed>(
    job: &JobSpec,
    game: G,
    root: G::State,
    res: &Resources,
    algorithm: Algorithm,
) -> Result<Box<dyn PreparedJob>, SolveError> {
    let o = Opts::new(&job.options, "option");
    // Applied to the game by the family (`registry::family`) before it got here.
    o.allow(spec::TABLES.name);
    let target = match o.text(&spec::TARGET) {
        None => None,
        Some(t) => Some(super::parse_internal(&game, &root, "target", t)?),
    };
    // Cut down to what the runner offers (the job may run on bigger workers elsewhere).
    let mut opts = PnOptions {
        memory_mb: o.uint_value::<u64>(&MEMORY_MB)?.min(res.memory_mb),
        ..PnOptions::default()
    };
    let threads: usize = o.uint_value::<usize>(&THREADS)?.min(res.threads);
    let proof = o.flag(&PROOF).map_err(|_| {
        SolveError::bad(
            "option 'proof' takes true or false; the certificate comes with the result (the command line's 'solve --proof FILE' writes it to a file)",
        )
    })?;
    if proof && target.is_none() {
        return Err(SolveError::bad(
            "option 'proof' needs 'target' (a certificate proves one decision)",
        ));
    }
    if algorithm != Algorithm::Dfpn {
        opts.current_node = o.flag(&CURRENT_NODE)?;
        opts.remember_best = o.flag(&REMEMBER_BEST)?;
        opts.delete_solved = o.flag(&DELETE_SOLVED)?;
    } else {
        opts.epsilon = o.float_value(&EPSILON)?;
    }
    if matches!(algorithm, Algorithm::Pn2 | Algorithm::Pdspn) {
        opts.pn2_factor = o.float_value(&PN2_FACTOR)?;
    }
    if o.given("depth") {
        return Err(SolveError::bad(format!(
            "option 'depth' does not apply to '{}' (it solves exactly)",
            job.algorithm
        )));
    }
    o.finish()?;
    Ok(Box::new(PnJob {
        job: job.clone(),
        game,
        root,
        algorithm,
        opts,
        target,
        threads,
        proof,
    }))
}

impl<G: ZeroSum + Hashed> PnJob<G> {
    /// The certificate file of `tree` as a JSON value. The tree is moved into it, not copied
    /// (`serde_json::to_value` of a whole file would hold the tokens twice).
    fn certificate(
        &self,
        claim: Claim,
        target: i32,
        tree: Vec<serde_json::Value>,
    ) -> Result<serde_json::Value, SolveError> {
        let file = ProofFile {
            format: crate::proof::FORMAT.to_string(),
            game: self.job.game.clone(),
            game_params: self.job.game_params.clone(),
            position: self.job.position.clone(),
            claim,
            target,
            tree: Vec::new(),
        };
        let mut value = serde_json::to_value(&file)
            .map_err(|e| SolveError::Internal(format!("proof certificate: {e}")))?;
        value["tree"] = serde_json::Value::Array(tree);
        Ok(value)
    }

    /// The largest possible value `<= v` (a multiple of the game's value step).
    fn floor_step(&self, v: i32) -> i32 {
        let step = self.game.value_step().max(1) as i64;
        ((v as i64).div_euclid(step) * step) as i32
    }

    /// The smallest possible value `>= v`.
    fn ceil_step(&self, v: i32) -> i32 {
        let step = self.game.value_step().max(1) as i64;
        (-((-(v as i64)).div_euclid(step) * step)).min(i32::MAX as i64) as i32
    }

    fn bounds_json(&self, lower: i32, upper: i32) -> serde_json::Value {
        super::joblevel::bounds_json(&self.game, &self.root, lower, upper)
    }

    /// Decides "value >= target"; `single` when the decision is the whole job.
    fn decide(&self, target: i32, single: bool, ctl: &Control) -> Result<TaskOutput, SolveError> {
        let t0 = std::time::Instant::now();
        let (lo, hi) = self.game.value_bounds(&self.root);
        let mut out = TaskOutput::default();
        let (verdict, raw) = if target <= lo || target > hi {
            // Decided by the bounds alone.
            let v = if target <= lo {
                Verdict::Proved
            } else {
                Verdict::Disproved
            };
            (
                v,
                RawBounds {
                    lower: lo,
                    upper: hi,
                },
            )
        } else {
            let d = parallel::decide_parallel(
                self.algorithm,
                &self.game,
                &self.root,
                target,
                &self.opts,
                self.threads,
                ctl,
            );
            out.nodes = d.nodes;
            out.best_move = d.best_move.map(|m| self.game.format_move(&self.root, m));
            out.extra.insert("expansions".into(), d.expansions.into());
            out.extra.peak_nodes = Some(d.peak_nodes);
            out.extra
                .insert("bytes_per_node".into(), d.node_bytes.into());
            let raw = match d.verdict {
                Verdict::Proved => RawBounds {
                    lower: self.ceil_step(target),
                    upper: hi,
                },
                Verdict::Disproved => RawBounds {
                    lower: lo,
                    upper: self.floor_step(target - 1),
                },
                Verdict::Unknown(StopReason::Memory) => {
                    let msg = format!(
                        "memory limit: the proof tree needs more than memory_mb={} MiB",
                        self.opts.memory_mb
                    );
                    out.value = serde_json::Value::Null;
                    out.elapsed_ms = t0.elapsed().as_millis() as u64;
                    out.extra.proved = Some(None);
                    out.extra.stopped = Some(StopReason::Memory);
                    out.extra.error = Some(msg);
                    out.extra.insert("bounds".into(), self.bounds_json(lo, hi));
                    // A probe without bounds ends a probe plan with what is known (plan docs).
                    out.raw = single.then_some(RawBounds {
                        lower: lo,
                        upper: hi,
                    });
                    out.best_move = None;
                    return Ok(out);
                }
                Verdict::Unknown(r) => {
                    return Err(SolveError::Internal(format!(
                        "stopped before a result ({})",
                        r.as_str()
                    )))
                }
            };
            (d.verdict, raw)
        };
        let proved = verdict == Verdict::Proved;
        if self.proof && single {
            let claim = if proved { Claim::AtLeast } else { Claim::Below };
            match certify::build_proof(&self.game, &self.root, claim, target, &self.opts, ctl) {
                Ok(tree) => out.proof = Some(self.certificate(claim, target, tree)?),
                // The decision stands; the certificate does not fit: said in one line.
                Err(certify::NoProof::TooLarge(why)) => {
                    out.extra.stopped = Some(StopReason::Memory);
                    out.extra.error = Some(format!("proof certificate: {why}"));
                }
                Err(e) => return Err(SolveError::Internal(format!("proof certificate: {e}"))),
            }
        }
        out.value = if raw.is_exact() {
            self.game.value_to_json(&self.root, raw.lower)
        } else {
            serde_json::Value::Null
        };
        out.raw = Some(raw);
        out.elapsed_ms = t0.elapsed().as_millis() as u64;
        out.extra.proved = Some(Some(proved));
        out.extra
            .insert("bounds".into(), self.bounds_json(raw.lower, raw.upper));
        if !proved {
            out.best_move = None;
        }
        Ok(out)
    }
}

impl<G: ZeroSum + Hashed> PreparedJob for PnJob<G> {
    fn job(&self) -> &JobSpec {
        &self.job
    }

    fn plan_shape(&self) -> PlanShape {
        match self.target {
            Some(_) => PlanShape::Single,
            None if self.game.is_terminal(&self.root) => PlanShape::Single,
            None => {
                let (lower, upper) = self.game.value_bounds(&self.root);
                let step = self.game.value_step().max(1);
                PlanShape::Probes {
                    lower: self.ceil_step(lower),
                    upper: self.floor_step(upper),
                    step,
                    guess: None,
                }
            }
        }
    }

    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError> {
        match (task, self.target) {
            (TaskKind::Probe { target }, _) => self.decide(*target, false, ctl),
            (TaskKind::Whole, Some(target)) => self.decide(target, true, ctl),
            (TaskKind::Whole, None) => {
                // Only for a terminal root: its value is known without search.
                let v = self.game.terminal_value(&self.root);
                Ok(TaskOutput {
                    value: self.game.value_to_json(&self.root, v),
                    nodes: 1,
                    raw: Some(RawBounds { lower: v, upper: v }),
                    extra: serde_json::Map::from_iter([(
                        "bounds".to_string(),
                        self.bounds_json(v, v),
                    )])
                    .into(),
                    ..TaskOutput::default()
                })
            }
            (other, _) => Err(SolveError::Internal(other.does_not_apply())),
        }
    }

    fn show_value(&self, raw: i32) -> serde_json::Value {
        self.game.value_to_json(&self.root, raw)
    }

    /// Decisions: bounds that answer the target within the root's value range (a memory stop
    /// may give none), a value only when they pin it, a legal best move, and a certificate, if
    /// any, that verifies and proves this decision.
    ///
    /// Besides: counts (`expansions`, `bytes_per_node`, `peak_nodes`), the `bounds` its raw
    /// bounds show as, a memory stop's one-line `error`, and nothing else.
    fn check_output(&self, task: &TaskKind, out: &TaskOutput) -> Result<(), String> {
        use super::check;
        check::only_keys(
            out,
            &["proved", "peak_nodes", "stopped", "error", "proof"],
            &["expansions", "bytes_per_node", "bounds"],
        )?;
        check::count(out, "expansions", u64::MAX)?;
        check::count(out, "bytes_per_node", 1 << 20)?;
        check::error_text(out)?;
        let (lo, hi) = self.game.value_bounds(&self.root);
        let shown = out.raw.map_or((lo, hi), |r| (r.lower, r.upper));
        if (lo..=hi).contains(&shown.0) && (lo..=hi).contains(&shown.1) {
            check::exactly(out, "bounds", &self.bounds_json(shown.0, shown.1))?;
        } else if out.extra.contains_key("bounds") {
            return Err("'bounds' outside the game's values".into());
        }
        check::best_move(&self.game, &self.root, out)?;
        if out.proof.is_some() && out.extra.stopped.is_some() {
            return Err("a stopped search proves nothing: it carries no certificate".into());
        }
        if check::is_stopped(out) {
            return Ok(());
        }
        let target = match (task, self.target) {
            (TaskKind::Probe { target }, _) => *target,
            (TaskKind::Whole, Some(target)) => target,
            (TaskKind::Whole, None) => {
                let v = self.game.terminal_value(&self.root);
                return match out.raw {
                    Some(r)
                        if r.lower == v
                            && r.upper == v
                            && out.value == self.game.value_to_json(&self.root, v)
                            && out.proof.is_none() =>
                    {
                        Ok(())
                    }
                    _ => Err("a terminal root's bounds and value must be its value".into()),
                };
            }
            (other, _) => return Err(other.does_not_apply()),
        };
        // A memory stop of the search decides nothing: no bounds, or (a single decision) the
        // game's. A memory stop of the proof certificate's build comes after a decision: it is
        // checked as a decision, without the certificate.
        let memory_stop = out.extra.stopped == Some(StopReason::Memory);
        if memory_stop {
            let whole = RawBounds {
                lower: lo,
                upper: hi,
            };
            if out.raw.is_none_or(|r| r == whole) {
                if !out.value.is_null() {
                    return Err("a memory stop reports no bounds and no value".into());
                }
                return Ok(());
            }
            if out.proof.is_some() {
                return Err("a memory stop carries no proof certificate".into());
            }
        }
        check::probe_answer(out, target, lo, hi)?;
        let raw = out.raw.expect("checked by probe_answer");
        let want = if raw.is_exact() {
            self.game.value_to_json(&self.root, raw.lower)
        } else {
            serde_json::Value::Null
        };
        if out.value != want {
            return Err(format!(
                "value {} does not match its bounds",
                check::clip_value(&out.value)
            ));
        }
        let single = matches!(task, TaskKind::Whole);
        match (&out.proof, self.proof && single) {
            (None, true) if !memory_stop => {
                return Err("the job asked for a proof certificate".into())
            }
            (Some(_), false) => return Err("the job asked for no proof certificate".into()),
            _ => {}
        }
        if let Some(cert) = &out.proof {
            let file = ProofFile::deserialize(cert)
                .map_err(|e| format!("proof certificate is malformed: {}", check::clip_error(e)))?;
            let yes = raw.lower >= target;
            let claim = if yes { Claim::AtLeast } else { Claim::Below };
            if file.game != self.job.game
                || file.game_params != self.job.game_params
                || file.position != self.job.position
                || file.target != target
                || file.claim != claim
            {
                return Err("proof certificate is not about this decision".into());
            }
            crate::proof::verify_game(&self.game, &self.root, &file)
                .map_err(|e| format!("proof certificate: {}", check::clip_error(e)))?;
        }
        Ok(())
    }

    fn finish_probes(&self, bounds: RawBounds, probes: &[TaskOutput]) -> TaskOutput {
        // A probe that gave up (memory limit) ended the plan: say so, with the bounds known.
        let gave_up = probes.iter().find(|p| p.raw.is_none());
        // The probe that proved the final lower bound carries a move that reaches it.
        let best = probes
            .iter()
            .rfind(|p| p.best_move.is_some() && p.raw.map(|r| r.lower) == Some(bounds.lower));
        let mut out = match best {
            Some(p) => p.clone(),
            // Stopped before any lower bound was proved: no move is known to be best.
            None if gave_up.is_some() => TaskOutput::default(),
            None => {
                // No probe proved anything above the bottom: every move reaches the minimum.
                let mut moves = Vec::new();
                self.game.legal_moves(&self.root, &mut moves);
                self.game.order_moves(&self.root, &mut moves);
                TaskOutput {
                    best_move: moves.first().map(|&m| self.game.format_move(&self.root, m)),
                    ..TaskOutput::default()
                }
            }
        };
        out.nodes = probes.iter().map(|p| p.nodes).sum();
        out.elapsed_ms = probes.iter().map(|p| p.elapsed_ms).sum();
        out.raw = Some(bounds);
        out.extra.proved = None;
        super::joblevel::put_bounds(&mut out, &self.game, &self.root, bounds);
        out.extra.insert("probes".into(), probes.len().into());
        // Probes run one after the other or on other workers: the peak is the largest one's.
        out.extra.peak_nodes = probes.iter().filter_map(|p| p.extra.peak_nodes).max();
        out.extra.stopped = None;
        out.extra.error = None;
        if let Some(p) = gave_up.filter(|_| !bounds.is_exact()) {
            out.extra.stopped = p.extra.stopped;
            out.extra.error = p.extra.error.clone();
        }
        out
    }
}

/// Something to do with a two-player zero-sum game and a position, whatever the game's type.
pub trait ZeroSumVisitor {
    /// What the visit returns.
    type Output;
    /// Called with the game and the parsed position.
    fn visit<G: ZeroSum + Hashed>(self, game: G, root: G::State) -> Self::Output;
}

/// Builds the two-player zero-sum game named `game` with `params`, parses `position`, and hands
/// both to `visitor` (used by the proof checker, which must know the game from its file).
pub fn visit_zero_sum<V: ZeroSumVisitor>(
    game: &str,
    params: &Settings,
    position: &str,
    visitor: V,
) -> Result<V::Output, SolveError> {
    let none = || {
        SolveError::bad(format!(
            "game '{game}' has no two-player proof checker here"
        ))
    };
    let p = Opts::new(params, "game parameter");
    let visit = ProofVisit {
        position,
        visitor,
        none,
    };
    catalogue::visit(game, &p, visit).ok_or_else(none)??
}

/// The catalogue visitor of [`visit_zero_sum`]: zero-sum games and max/min trees go on, others
/// are refused with `none()`.
struct ProofVisit<'a, V, N> {
    position: &'a str,
    visitor: V,
    none: N,
}

impl<V: ZeroSumVisitor, N: Fn() -> SolveError> ProofVisit<'_, V, N> {
    fn at<G: ZeroSum + Hashed>(self, game: G) -> Result<V::Output, SolveError> {
        let root = game
            .parse_position(self.position)
            .map_err(|e| SolveError::bad(format!("position: {e}")))?;
        Ok(self.visitor.visit(game, root))
    }
}

impl<V: ZeroSumVisitor, N: Fn() -> SolveError> catalogue::Visitor for ProofVisit<'_, V, N> {
    type Output = Result<V::Output, SolveError>;
    fn zero_sum<G: Exact + Picture>(self, game: G) -> Self::Output {
        self.at(game)
    }
    fn chance<G: ChanceZeroSum + Picture>(self, _: G) -> Self::Output {
        Err((self.none)())
    }
    fn single<G: SinglePlayer + Picture>(self, _: G) -> Self::Output {
        Err((self.none)())
    }
    fn multi<G: Stochastic + VectorEval + OutOfTurn + Picture>(self, _: G) -> Self::Output {
        Err((self.none)())
    }
    fn tree(self) -> Self::Output {
        let t =
            Tree::parse(self.position).map_err(|e| SolveError::bad(format!("position: {e}")))?;
        if t.kind() != TreeKind::MinMax {
            return Err(SolveError::bad("proofs need a max/min tree"));
        }
        Ok(self.visitor.visit(t, 0))
    }
}
