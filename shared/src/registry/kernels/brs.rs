//! `brs`: best-reply search (Schadd and Winands 2011) on games whose players can move out of
//! turn (`rolit`): between two turns of the root player only the strongest reply of all
//! opponents is played. The multi-player family runs it (`registry::multi`: `depth`, iterative
//! deepening, the output with the root player's value only).

use crate::registry::kernel::{Algorithm, Analyse, Kernel, Prepared, Shape};
use crate::games::tree::Tree;
use crate::model::{OutOfTurn, Stochastic, VectorEval};
use crate::registry::multi::{self, VectorSearch};
use crate::registry::{Opts, SolveError};
use crate::search::bestreply::best_reply;
use crate::search::Control;
use crate::wire::JobSpec;

/// `brs`: best-reply search.
pub struct Brs;

impl Kernel for Brs {
    const ALGORITHM: Algorithm = Algorithm {
        name: "brs",
        serves: &[Shape::Multi],
        group: &multi::GROUP,
        analyse: Analyse::No,
    };
    fn multi<G: Stochastic + VectorEval + OutOfTurn>(
        job: &JobSpec,
        game: G,
        root: G::State,
    ) -> Option<Prepared> {
        let read = |_: &Opts| {
            Ok(VectorSearch {
                run: Box::new(|g: &G, s: &G::State, depth, ctl: &Control| {
                    best_reply(g, s, depth, ctl)
                }),
                root_only: true,
            })
        };
        Some(multi::prepare(job, game, root, true, None, read))
    }
    fn multi_tree(job: &JobSpec, _: Tree) -> Option<Prepared> {
        Some(Err(SolveError::bad(format!(
            "algorithm 'brs' needs a game whose players can move out of turn; game '{}' cannot",
            job.game
        ))))
    }
}
