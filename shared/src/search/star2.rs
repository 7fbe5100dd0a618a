//! Star2 (B. W. Ballard, "The *-minimax search procedure for trees containing chance nodes",
//! 1983; T. Hauk, M. Buro and J. Schaeffer, "Rediscovering *-Minimax Search", 2004): Star1
//! preceded at every chance node by a probing phase, and the probing engine that Star2.5
//! ([`super::star25`]) reuses.
//!
//! Contract of [`star2`]: the expectiminimax value of `state` from the point of view of
//! `game.player_side(state)`, equal to [`super::expectimax::expectimax`]'s up to rounding.
//!
//! In the negamax form of [`super::star1`] (fail-hard, windows through chance nodes with the
//! bounds L and U, true outcome probabilities): a probing phase searches the first `factor` moves
//! of each decision outcome and fails high (low) as soon as the probed bounds average past the
//! window; the search phase is Star1 with probed bounds in place of L (or U) for unsearched
//! outcomes. Three points go beyond Ballard's pseudocode for non-uniform probabilities and general
//! trees (the probe's lower edge per outcome, the mirrored cut-off before a MIN node, exact
//! scoring of terminal outcomes while probing): docs/kernels.md, "Star2", argues each.
//!
//! Probing modes (Star2.5, [`ProbingMode`]): sequential or cyclic; `factor = 0` is exactly Star1.
//! Nodes: every node entered counts, so a node searched in both phases counts twice. A stop
//! request returns `None`.

use super::expectimax::ChanceOutcome;
use super::node::{child_window, outcome_cut, outcome_window};
use super::star1::{search, ChanceAt, ChanceNode, Search};
use super::Control;
use crate::model::chance::{side_bounds, to_side, ChanceZeroSum};
use crate::model::Turn;

/// How Star2.5 orders its probes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbingMode {
    /// All probes of outcome 1, then all of outcome 2, ...
    Sequential,
    /// Move 1 of every outcome, then move 2 of every outcome, ...
    Cyclic,
}

/// The probing phase's shape: how many moves per outcome, in which order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probing {
    /// Moves probed per outcome (Star2: 1; 0: no probing, Star1).
    pub factor: u32,
    /// Order of the probes.
    pub mode: ProbingMode,
}

impl Probing {
    /// Star2's probing: one move per outcome.
    pub const STAR2: Probing = Probing {
        factor: 1,
        mode: ProbingMode::Sequential,
    };
}

/// What is known of one outcome of the chance node being searched.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Known {
    /// Lower and upper bound of its value, from the chance node's side.
    lower: f64,
    upper: f64,
    /// Whether `lower == upper` is its exact value (terminal or depth-cut outcome).
    exact: bool,
}

/// What a probe learnt about one move of an outcome, from the outcome's mover's side, so that
/// the search phase does not search it again when that already decides it (no table needed).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Hint {
    /// Not probed.
    None,
    /// The move's exact value.
    Exact(f64),
    /// The move's value is at least this.
    Lower(f64),
    /// The move's value is at most this.
    Upper(f64),
}

/// Star2's per-ply buffers at a chance node: its children, what is known of them, and the
/// probes' hints (`factor` per outcome).
pub(crate) struct Probes<S> {
    children: Vec<S>,
    known: Vec<Known>,
    hints: Vec<Hint>,
}

impl<S> Default for Probes<S> {
    fn default() -> Self {
        Probes {
            children: Vec::new(),
            known: Vec::new(),
            hints: Vec::new(),
        }
    }
}

enum Probed {
    Cut(bool),
    Continue,
}

impl<G: ChanceZeroSum> ChanceNode<G> for Probing {
    type Buffers = Probes<G::State>;
    type Hint = Hint;

    #[inline]
    fn hinted(hint: &Hint, alpha: f64, beta: f64) -> Option<f64> {
        match *hint {
            Hint::Exact(v) => Some(v),
            Hint::Lower(b) if b >= beta => Some(beta),
            Hint::Upper(b) if b <= alpha => Some(alpha),
            _ => None,
        }
    }

    fn chance(s: &mut Search<'_, G, Self>, state: &G::State, at: ChanceAt) -> f64 {
        s.probing_chance(state, at)
    }
}

impl<G: ChanceZeroSum> Search<'_, G, Probing> {
    #[inline]
    fn enter(&mut self) -> bool {
        self.tally.enter(self.ctl)
    }

    /// Star2's chance node: the probing phase, then Star1's search phase with what it learnt.
    fn probing_chance(&mut self, state: &G::State, at: ChanceAt) -> f64 {
        let (alpha, beta, side, ply, _) = at.parts();
        let (lo, hi) = side_bounds(self.bounds, side);
        let mut outcomes = std::mem::take(&mut self.frames[ply].outcomes);
        let mut children = std::mem::take(&mut self.frames[ply].extra.children);
        let mut known = std::mem::take(&mut self.frames[ply].extra.known);
        let mut hints = std::mem::take(&mut self.frames[ply].extra.hints);
        self.game.chance_outcomes(state, &mut outcomes);
        hints.clear();
        hints.resize(outcomes.len() * self.node.factor as usize, Hint::None);
        children.clear();
        known.clear();
        for &(mv, _) in &outcomes {
            let mut child = state.clone();
            self.game.apply(&mut child, mv);
            children.push(child);
            known.push(Known {
                lower: lo,
                upper: hi,
                exact: false,
            });
        }
        let result = match self.probe_phase(&outcomes, &children, &mut known, &mut hints, at) {
            Probed::Cut(high) => {
                if high {
                    beta
                } else {
                    alpha
                }
            }
            Probed::Continue => self.search_phase(&outcomes, &children, &known, &hints, at),
        };
        let f = &mut self.frames[ply];
        f.outcomes = outcomes;
        f.extra.children = children;
        f.extra.known = known;
        f.extra.hints = hints;
        result
    }

    fn probe_phase(
        &mut self,
        outcomes: &[(G::Move, f64)],
        children: &[G::State],
        known: &mut [Known],
        hints: &mut [Hint],
        at: ChanceAt,
    ) -> Probed {
        let (alpha, beta, side, _, depth) = at.parts();
        let (lo, hi) = side_bounds(self.bounds, side);
        let mut sum_lower = lo;
        let mut sum_upper = hi;
        // Outcomes with known values: scored exactly once, here.
        for (i, child) in children.iter().enumerate() {
            let exact = match self.game.turn(child) {
                Turn::Terminal => Some(self.game.terminal_score(child)),
                _ if depth == Some(0) => Some(self.game.estimate(child)),
                _ => None,
            };
            if let Some(v) = exact {
                if !self.enter() {
                    return Probed::Continue;
                }
                self.tally.leaves += 1;
                let v = to_side(self.game.player_side(child), side, v);
                let p = outcomes[i].1;
                sum_lower += p * (v - known[i].lower);
                sum_upper += p * (v - known[i].upper);
                known[i] = Known {
                    lower: v,
                    upper: v,
                    exact: true,
                };
            }
        }
        if sum_lower >= beta {
            return Probed::Cut(true);
        }
        if sum_upper <= alpha {
            return Probed::Cut(false);
        }
        let k = self.node.factor as usize;
        if k == 0 {
            return Probed::Continue;
        }
        let (rounds, per_call) = match self.node.mode {
            ProbingMode::Sequential => (1, k),
            ProbingMode::Cyclic => (k, 1),
        };
        for round in 0..rounds {
            for i in 0..children.len() {
                if known[i].exact || !matches!(self.game.turn(&children[i]), Turn::Player(_)) {
                    continue;
                }
                // A probe can only cut when the window is inside the bounds on its side: with
                // beta above U no average of lower bounds reaches it (and the search phase's
                // windows would not narrow either); likewise alpha below L for upper bounds.
                let same = self.game.player_side(&children[i]) == side;
                if (same && beta > hi) || (!same && alpha < lo) {
                    continue;
                }
                let first = round * per_call;
                let cut = self.n_probe(
                    &children[i],
                    outcomes[i].1,
                    &mut known[i],
                    &mut hints[i * k..(i + 1) * k],
                    (&mut sum_lower, &mut sum_upper),
                    (first, first + per_call),
                    ChanceAt {
                        node: at.node.after_chance(),
                        ..at
                    },
                );
                if self.tally.stopped {
                    return Probed::Continue;
                }
                if let Some(high) = cut {
                    return Probed::Cut(high);
                }
            }
        }
        Probed::Continue
    }

    /// Ballard's probe (`nProbe`) at outcome `child` (a decision node at `ply`): searches its moves
    /// `range.0 .. range.1` and tightens the outcome's bound. Returns `Some(true)` / `Some(false)`
    /// when the chance node fails high / low.
    #[allow(clippy::too_many_arguments)]
    fn n_probe(
        &mut self,
        child: &G::State,
        p: f64,
        known: &mut Known,
        hints: &mut [Hint],
        sums: (&mut f64, &mut f64),
        range: (usize, usize),
        at: ChanceAt,
    ) -> Option<bool> {
        let (alpha, beta, side, ply, _) = at.parts();
        let (lo, hi) = side_bounds(self.bounds, side);
        let (sum_lower, sum_upper) = sums;
        let cs = self.game.player_side(child);
        let same = cs == side;
        // The window of the probe, from the chance node's side. A probe at a node of our side
        // gives a lower bound (cut: fail high), at the opponent's an upper bound (fail low).
        let (cur_alpha, cur_beta, mut ax, mut bx) = if same {
            let cur_beta = (beta - (*sum_lower - p * known.lower)) / p;
            let ax = lo.max((alpha - hi * (1.0 - p)) / p).max(known.lower);
            (f64::NEG_INFINITY, cur_beta, ax, hi.min(cur_beta))
        } else {
            let cur_alpha = (alpha - (*sum_upper - p * known.upper)) / p;
            let bx = hi.min((beta - lo * (1.0 - p)) / p).min(known.upper);
            (cur_alpha, f64::INFINITY, lo.max(cur_alpha), bx)
        };
        if ax >= bx {
            return None;
        }
        let mut moves = std::mem::take(&mut self.frames[ply].moves);
        self.game.legal_moves(child, &mut moves);
        // A cyclic round past the outcome's last move has nothing to probe (and visits nothing).
        if range.0 >= moves.len() || !self.enter() {
            self.frames[ply].moves = moves;
            return None;
        }
        self.game.order_decisions(child, &mut moves);
        let mut cut = None;
        let end = range.1.min(moves.len());
        for r in range.0..end {
            let mv = moves[r];
            // The child's window, from the child's side.
            let (mut ca, cb) = if same { (ax, bx) } else { (-bx, -ax) };
            let mut grand = child.clone();
            self.game.apply(&mut grand, mv);
            let gs = self.game.player_side(&grand);
            let (ga, gb) = if gs == cs { (ca, cb) } else { (-cb, -ca) };
            let v = to_side(
                gs,
                cs,
                self.value(&grand, ga, gb, at.node.after_move(), &[]),
            );
            if self.tally.stopped {
                break;
            }
            hints[r] = if v >= cb {
                Hint::Lower(cb)
            } else if v <= ca {
                Hint::Upper(ca)
            } else {
                Hint::Exact(v)
            };
            // nProbe, fail-hard: beta on a cut, the raised alpha otherwise.
            let probed = if v >= cb {
                cb
            } else {
                if v > ca {
                    ca = v;
                }
                ca
            };
            if same {
                if probed > known.lower {
                    *sum_lower += p * (probed - known.lower);
                    known.lower = probed;
                }
                ax = known.lower;
                if probed >= cur_beta {
                    cut = Some(true);
                    break;
                }
            } else {
                let bound = -probed;
                if bound < known.upper {
                    *sum_upper += p * (bound - known.upper);
                    known.upper = bound;
                }
                bx = known.upper;
                if bound <= cur_alpha {
                    cut = Some(false);
                    break;
                }
            }
            if ax >= bx {
                break;
            }
        }
        let len = moves.len();
        self.frames[ply].moves = moves;
        // When every move of the outcome has been probed (in this call or earlier rounds), the
        // outcome's exact value is known if the best exact result is at least every upper bound
        // and no probe failed high.
        if cut.is_none() && !self.tally.stopped && len <= hints.len() {
            let mut best: Option<f64> = None;
            let mut ceiling = f64::NEG_INFINITY;
            let mut complete = true;
            for h in &hints[..len] {
                match *h {
                    Hint::Exact(v) => best = Some(best.map_or(v, |b: f64| b.max(v))),
                    Hint::Upper(b) => ceiling = ceiling.max(b),
                    Hint::Lower(_) | Hint::None => complete = false,
                }
            }
            if let (true, Some(v)) = (complete, best.filter(|&b| b >= ceiling)) {
                let v = to_side(cs, side, v);
                let delta_lower = p * (v - known.lower);
                let delta_upper = p * (v - known.upper);
                *sum_lower += delta_lower;
                *sum_upper += delta_upper;
                *known = Known {
                    lower: v,
                    upper: v,
                    exact: true,
                };
            }
        }
        cut
    }

    fn search_phase(
        &mut self,
        outcomes: &[(G::Move, f64)],
        children: &[G::State],
        known: &[Known],
        hints: &[Hint],
        at: ChanceAt,
    ) -> f64 {
        let (alpha, beta, side, _, _) = at.parts();
        let k = self.node.factor as usize;
        let (lo, hi) = side_bounds(self.bounds, side);
        let mut rest_lower: f64 = outcomes.iter().zip(known).map(|(o, k)| o.1 * k.lower).sum();
        let mut rest_upper: f64 = outcomes.iter().zip(known).map(|(o, k)| o.1 * k.upper).sum();
        let mut cur_x = 0.0;
        for (i, child) in children.iter().enumerate() {
            let p = outcomes[i].1;
            rest_lower -= p * known[i].lower;
            rest_upper -= p * known[i].upper;
            let own = (known[i].lower, known[i].upper);
            let window = outcome_window(
                alpha,
                beta,
                cur_x,
                (rest_lower, rest_upper),
                p,
                own,
                (lo, hi),
            );
            let (cur_alpha, cur_beta, ax, bx) = match window.searched(alpha, beta) {
                Ok(w) => w,
                Err(v) => return v,
            };
            let v = if known[i].exact {
                known[i].lower
            } else {
                let cs = self.game.player_side(child);
                let (ca, cb) = child_window(side, cs, (ax, bx));
                to_side(
                    cs,
                    side,
                    self.value(
                        child,
                        ca,
                        cb,
                        at.node.after_chance(),
                        &hints[i * k..(i + 1) * k],
                    ),
                )
            };
            if let Some(cut) = outcome_cut(v, cur_alpha, cur_beta, alpha, beta) {
                return cut;
            }
            cur_x += p * v;
        }
        cur_x
    }
}

/// Star2 or Star2.5 value of `state` from `player_side(state)`'s point of view (see the module doc).
/// `bounds` overrides the game's utility bounds (player 0's point of view).
pub fn star2_with<G: ChanceZeroSum>(
    game: &G,
    state: &G::State,
    depth: Option<u32>,
    probing: Probing,
    bounds: Option<(f64, f64)>,
    ctl: &Control,
) -> Option<ChanceOutcome<G::Move>> {
    search(game, state, depth, probing, bounds, ctl)
}

pub fn star2<G: ChanceZeroSum>(
    game: &G,
    state: &G::State,
    depth: Option<u32>,
    bounds: Option<(f64, f64)>,
    ctl: &Control,
) -> Option<ChanceOutcome<G::Move>> {
    star2_with(game, state, depth, Probing::STAR2, bounds, ctl)
}
