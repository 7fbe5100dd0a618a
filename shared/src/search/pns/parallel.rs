//! Root splitting: the proof-number kernels on several threads of one worker.
//!
//! Contract: as [`super`], for any [`Algorithm`]. With `threads > 1` the root's children are
//! decided independently, one child per thread at a time, in the game's move order: the root (an
//! OR node) is proved as soon as one child is proved (the other threads are stopped), and
//! disproved when every child is disproved. Each thread has its own tree or table with
//! `memory_mb / threads` MiB. The answer is the same as on one thread; the best move may be a
//! different proved child (whichever finished first), and node counts differ (no sharing between
//! the children's searches, and no best-first choice among root children).
//!
//! The job's [`Control`] is polled by the calling thread every [`POLL_MS`] milliseconds; the
//! threads run under a private control that is cancelled when the job stops or a child proves
//! the root.

use super::{decide, Algorithm, Decision, PnOptions, Verdict};
use crate::model::{Hashed, ZeroSum};
use crate::search::{Control, StopReason};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How often the calling thread looks at the job's limits while the threads work.
pub const POLL_MS: u64 = 2;

/// Decides "value(root) >= target" with `threads` threads (see the module doc).
pub fn decide_parallel<G: ZeroSum + Hashed>(
    algorithm: Algorithm,
    game: &G,
    root: &G::State,
    target: i32,
    opts: &PnOptions,
    threads: usize,
    ctl: &Control,
) -> Decision<G::Move> {
    if threads <= 1 || game.is_terminal(root) {
        return decide(algorithm, game, root, target, opts, ctl);
    }
    let root_side = game.side(root);
    let mut moves = Vec::new();
    game.legal_moves(root, &mut moves);
    game.order_moves(root, &mut moves);
    // Each child's question, from its own side: "value(child) >= t", and whether the answer is
    // the root's answer (same side) or its negation.
    let children: Vec<(G::Move, G::State, i32, bool)> = moves
        .iter()
        .map(|&mv| {
            let mut s = root.clone();
            game.apply(&mut s, mv);
            if game.side(&s) == root_side {
                (mv, s, target, false)
            } else {
                // -v >= t  <=>  v <= -t  <=>  not (v >= 1 - t)
                (mv, s, 1i32.saturating_sub(target), true)
            }
        })
        .collect();
    let mut per_thread = *opts;
    per_thread.memory_mb = (opts.memory_mb / threads as u64).max(1);
    let sub = Control::unlimited();
    let next = AtomicUsize::new(0);
    // (index of the first proved child, children disproved, reason of an unfinished child)
    let state: Mutex<(Option<usize>, usize, Option<StopReason>)> = Mutex::new((None, 0, None));
    let stats: Mutex<(u64, u64, u64)> = Mutex::new((0, 0, 0));
    let mut job_stop = None;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.min(children.len()))
            .map(|_| {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= children.len() || sub.should_stop().is_some() {
                        break;
                    }
                    let (_, child, t, negate) = &children[i];
                    let d = decide(algorithm, game, child, *t, &per_thread, &sub);
                    {
                        let mut s = stats.lock();
                        s.0 += d.nodes;
                        s.1 += d.expansions;
                        s.2 += d.peak_nodes;
                    }
                    let mut st = state.lock();
                    match d.verdict {
                        Verdict::Unknown(r) => {
                            st.2.get_or_insert(r);
                        }
                        v => {
                            let holds = (v == Verdict::Proved) != *negate;
                            if holds {
                                if st.0.is_none_or(|j| i < j) {
                                    st.0 = Some(i);
                                }
                                sub.cancel();
                            } else {
                                st.1 += 1;
                            }
                        }
                    }
                })
            })
            .collect();
        let mut passed = 0;
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(std::time::Duration::from_millis(POLL_MS));
            let n = sub.nodes();
            ctl.add_nodes(n - passed);
            passed = n;
            if job_stop.is_none() {
                if let Some(r) = ctl.should_stop() {
                    job_stop = Some(r);
                    sub.cancel();
                }
            }
        }
        ctl.add_nodes(sub.nodes() - passed);
    });
    let (proved, disproved, unfinished) = *state.lock();
    let (nodes, expansions, peak) = *stats.lock();
    let verdict = match (proved, job_stop) {
        (Some(_), _) => Verdict::Proved,
        (None, Some(r)) => Verdict::Unknown(r),
        (None, None) if disproved == children.len() => Verdict::Disproved,
        (None, None) => Verdict::Unknown(unfinished.unwrap_or(StopReason::Cancelled)),
    };
    Decision {
        verdict,
        best_move: proved.map(|i| children[i].0),
        nodes: nodes + 1,
        expansions: expansions + 1,
        peak_nodes: peak,
        node_bytes: match algorithm {
            Algorithm::Dfpn => std::mem::size_of::<super::depth_first::Entry>(),
            _ => super::tree::Pns::<G>::node_bytes(),
        },
    }
}
