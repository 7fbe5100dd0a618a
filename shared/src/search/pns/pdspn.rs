//! PDS-PN (M. H. M. Winands, J. W. H. M. Uiterwijk and H. J. van den Herik, "PDS-PN: A New
//! Proof-Number Search Algorithm", 2003): a two-level proof-number search whose first level is PDS
//! (A. Nagai, "A New AND/OR Tree Search Algorithm Using Proof Number and Disproof Number", 1998),
//! depth-first with a transposition table, and whose second level is a best-first PN search run at
//! each first-level leaf.
//!
//! Contract: as [`super`]. The first level keeps no tree, only a table of φ/δ numbers (mover's
//! view, as in [`super::dfpn`]) with a flag saying whether it has expanded the position; PDS's
//! multiple iterative deepening raises one threshold at a time and has no second-best-child
//! threshold as df-pn has. At an unexpanded position a [`super::tree::Pns`] runs until solved or
//! past `pn2_factor` times the table's entries (at least [`super::pn2::MIN_SECOND_LEVEL`]), as PN²
//! sizes its second level; its root's children go into the table and the tree is thrown away.
//!
//! Memory: half for the table (df-pn's, which never forgets a proof it depends on, see [`super`]),
//! half for the second-level tree; either full ends the search with [`StopReason::Memory`]. The
//! root is expanded by the first level, so a proved root names a proved child. Statistics: `nodes`
//! counts children generated at both levels, `expansions` first-level visits plus second-level
//! expansions, `peak_nodes` table entries plus the largest second-level tree. Entries are keyed by
//! the full 64-bit hash. The visit rules in full: docs/kernels.md, "PDS-PN".

use super::depth_first::{DepthFirst, Kernel, Kid, Scan};
use super::tree::Pns;
use super::{Decision, PnOptions, INF};
use crate::model::{Hashed, ZeroSum};
use crate::search::{Control, StopReason};

/// Polling interval of the control, in first-level visits.
const POLL: u64 = 1 << 8;

/// The PDS-PN engine.
pub struct PdsPn<'g, G: ZeroSum + Hashed> {
    /// The first level (its `expansions` count the second level's too).
    s: DepthFirst<'g, G>,
    factor: f64,
    second: Pns<'g, G>,
    /// Most nodes a second-level tree may hold (its half of the memory budget).
    second_max: usize,
    second_kids: Vec<(G::Move, u32, u32)>,
    visits: u64,
    second_peak: u64,
}

impl<'g, G: ZeroSum + Hashed> PdsPn<'g, G> {
    /// An engine with `opts.memory_mb` MiB (half table, half second-level tree),
    /// `opts.pn2_factor` and the PN options of the second level.
    pub fn new(game: &'g G, opts: &PnOptions) -> Self {
        let bytes = (opts.memory_mb as usize).saturating_mul(1 << 20);
        let second_max = (bytes / 2 / Pns::<G>::node_bytes()).max(2);
        let mut s = DepthFirst::new(game, bytes / 2);
        s.tt.clear();
        PdsPn {
            s,
            factor: opts.pn2_factor,
            second: Pns::with_max_nodes(game, opts, second_max),
            second_max,
            second_kids: Vec::new(),
            visits: 0,
            second_peak: 0,
        }
    }

    /// Decides "value(root) >= target".
    pub fn decide(&mut self, root: &G::State, target: i32, ctl: &Control) -> Decision<G::Move> {
        self.s.start(root, target);
        self.visits = 0;
        self.second_peak = 0;
        let known = self.s.known_numbers(root);
        let numbers = match known {
            Some(numbers) if self.s.game.is_terminal(root) => numbers,
            _ => {
                let h = self.s.game.hash(root);
                // The first level expands the root itself.
                self.s.tt.put(h, 1, 1, 0, true);
                self.visit(root, h, INF, INF, 0, ctl)
            }
        };
        self.s.count.flush(ctl);
        self.s.decision(root, numbers, self.second_peak)
    }

    /// A first-level leaf: a bounded second-level PN search from `state`; stores and returns its
    /// numbers.
    fn leaf(&mut self, state: &G::State, hash: u64, ctl: &Control) -> (u32, u32) {
        let budget = ((self.s.tt.used as f64 * self.factor) as usize)
            .max(super::pn2::MIN_SECOND_LEVEL)
            .min(self.second_max);
        let game = self.s.game;
        let side = game.side(state);
        let mut kids = std::mem::take(&mut self.second_kids);
        // The second level decides the mover's claim "value (mover's view) >= goal", where
        // the mover's goal is the root's target seen from the mover: φ/δ are its pn/dn.
        let goal = if self.s.is_root_side(state) {
            self.s.target
        } else {
            1i32.saturating_sub(self.s.target)
        };
        let r = self
            .second
            .second_level(state, side, goal, budget, ctl, &mut kids);
        let ((phi, delta), created, expanded) = match r {
            Ok(x) => x,
            Err(reason) => {
                self.s.stopped = Some(reason);
                self.second_kids = kids;
                return (1, 1);
            }
        };
        self.s.count.add_reported(created.saturating_sub(1));
        self.s.expansions += expanded;
        self.second_peak = self.second_peak.max(created);
        if kids.is_empty() && phi != 0 && delta != 0 {
            self.s.stopped = Some(StopReason::Memory);
            self.second_kids = kids;
            return (phi, delta);
        }
        for &(mv, pn, dn) in &kids {
            let mut child = state.clone();
            game.apply(&mut child, mv);
            // pn/dn are in the mover-at-`state`'s terms; the child's mover may be the other side.
            let (p, d) = if game.side(&child) == side {
                (pn, dn)
            } else {
                (dn, pn)
            };
            self.s.tt.put(game.hash(&child), p, d, 0, false);
        }
        self.s.tt.put(hash, phi, delta, expanded, true);
        self.second_kids = kids;
        if let Some(r) = ctl.should_stop() {
            self.s.stopped = Some(r);
        }
        (phi, delta)
    }
}

impl<'g, G: ZeroSum + Hashed> Kernel<'g, G> for PdsPn<'g, G> {
    #[inline(always)]
    fn state(&mut self) -> &mut DepthFirst<'g, G> {
        &mut self.s
    }

    /// Multiple iterative deepening: the threshold of the node's smaller number is deepened by
    /// one; the best child's "win" number may grow to the deepened proof threshold, its "lose"
    /// number by what is left of the deepened disproof threshold.
    #[inline]
    fn child_thresholds(&self, scan: &Scan, kid: &Kid, th_phi: u32, th_delta: u32) -> (u32, u32) {
        let (phi, delta) = (scan.phi, scan.delta);
        let (a, b) = if phi <= delta {
            (phi + 1, th_delta)
        } else {
            (th_phi, delta + 1)
        };
        let (_, l) = kid.win_lose();
        let t_l = (b as u64 - delta as u64 + l as u64).min(INF as u64) as u32;
        kid.thresholds(a, t_l)
    }

    /// PDS with multiple iterative deepening (see the module doc) flags the nodes it searched
    /// below, to tell them from leaves.
    const FLAGS_EXPANDED: bool = true;

    /// Visits are counted apart from expansions; the control is polled every [`POLL`] visits.
    fn count_visit(&mut self) -> bool {
        self.visits += 1;
        self.s.expansions += 1;
        self.visits.is_multiple_of(POLL)
    }

    /// Numbers in the table that reach a threshold stand; a child never searched below is a
    /// leaf, evaluated by the second level.
    fn answered(
        &mut self,
        state: &G::State,
        hash: u64,
        (th_phi, th_delta): (u32, u32),
        ctl: &Control,
    ) -> Option<(u32, u32)> {
        match self.s.tt.get(hash) {
            Some(e) if e.phi >= th_phi || e.delta >= th_delta => Some((e.phi, e.delta)),
            Some(e) if e.expanded != 0 => None,
            _ => Some(self.leaf(state, hash, ctl)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{decide, Algorithm, PnOptions, Verdict};
    use crate::games::connect4::Connect4;
    use crate::games::data::pons_set;
    use crate::model::{Game, ZeroSum};
    use crate::search::{alphabeta, Control};
    use std::time::{Duration, Instant};

    fn exact<G: ZeroSum>(g: &G, s: &G::State) -> i32 {
        alphabeta::alphabeta(
            g,
            s,
            i32::MIN + 1,
            i32::MAX,
            None,
            true,
            &Control::unlimited(),
        )
        .unwrap()
        .value
    }

    /// 5 x 4 Connect Four, positions of pseudo-random games: PDS-PN decides "value >= t" as
    /// alpha-beta's exact value says, on both sides of the value, and a proved root's move keeps
    /// the claim.
    #[test]
    fn small_connect4_boards_agree_with_alphabeta() {
        let g = Connect4::<u64>::new(5, 4, 1).unwrap();
        let mut seed = 99u64;
        let mut moves = Vec::new();
        for i in 0..16 {
            let mut s = g.initial_state();
            for _ in 0..(2 + i % 7) {
                g.legal_moves(&s, &mut moves);
                if moves.is_empty() || g.is_terminal(&s) {
                    break;
                }
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                g.apply(&mut s, moves[(seed >> 33) as usize % moves.len()]);
            }
            let v = exact(&g, &s);
            for t in [v, v + 1] {
                let opts = PnOptions {
                    memory_mb: 8,
                    ..PnOptions::default()
                };
                let d = decide(Algorithm::Pdspn, &g, &s, t, &opts, &Control::unlimited());
                assert_eq!(d.verdict.as_bool(), Some(v >= t), "position {i}, t {t}");
                if let Some(m) = d.best_move {
                    let mut child = s;
                    g.apply(&mut child, m);
                    let cv = exact(&g, &child);
                    let cv = if g.side(&child) == g.side(&s) {
                        cv
                    } else {
                        -cv
                    };
                    assert!(cv >= t, "position {i}: the move does not keep value >= {t}");
                } else {
                    assert!(
                        v < t || g.is_terminal(&s),
                        "position {i}: proved without a move"
                    );
                }
            }
        }
    }

    /// Nodes and time of df-pn, PN² and PDS-PN on Pons' positions (win/not-win). Not a check:
    /// `cargo test --release -p gamesolver-shared --lib pdspn -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn compare_with_dfpn_and_pn2() {
        let g = Connect4::<u64>::new(7, 6, 1).unwrap();
        for set in ["Test_L2_R2", "Test_L2_R1"] {
            for line in pons_set(set).unwrap().iter().take(3) {
                let s = g.parse_position(&line.moves).unwrap();
                for alg in [Algorithm::Dfpn, Algorithm::Pn2, Algorithm::Pdspn] {
                    let ctl = Control::with_limits(Some(Duration::from_secs(60)), None);
                    let t0 = Instant::now();
                    let d = decide(alg, &g, &s, 1, &PnOptions::default(), &ctl);
                    let ok = match d.verdict {
                        Verdict::Unknown(_) => "stopped",
                        v if v.as_bool() == Some(line.score >= 1) => "ok",
                        _ => "WRONG",
                    };
                    eprintln!(
                        "{set} {} {alg:?}: {ok}, {} nodes, {} expansions, peak {}, {:.3} s",
                        line.moves,
                        d.nodes,
                        d.expansions,
                        d.peak_nodes,
                        t0.elapsed().as_secs_f64()
                    );
                }
            }
        }
    }
}
