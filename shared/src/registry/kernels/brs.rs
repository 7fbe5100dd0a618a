//! `brs`: best-reply search (Schadd and Winands 2011) on games whose players can move out of
//! turn (`rolit`): between two turns of the root player only the strongest reply of all
//! opponents is played. The multi-player family runs it (`registry::multi`: `depth`, iterative
//! deepening, the output with the root player's value only).

use crate::model::{OutOfTurn, Stochastic, VectorEval};
use crate::registry::kernel::{kernel, Analyse};
use crate::registry::multi::{self, VectorSearch};
use crate::registry::{Opts, SolveError};
use crate::search::bestreply::best_reply;

kernel! {
    /// `brs`: best-reply search.
    Brs {
        name: "brs",
        serves: [Multi],
        group: multi::GROUP,
        analyse: Analyse::No,
    }
    multi(job, game, root) => multi::prepare(job, game, root, true, None, read);
    multi_tree(job, _tree) => Err(SolveError::bad(format!(
        "algorithm 'brs' needs a game whose players can move out of turn; game '{}' cannot",
        job.game
    )));
}

/// The search: no settings of its own.
fn read<G: Stochastic + VectorEval + OutOfTurn>(_: &Opts) -> Result<VectorSearch<G>, SolveError> {
    Ok(VectorSearch {
        run: Box::new(|g, s, depth, ctl| best_reply(g, s, depth, ctl)),
        root_only: true,
    })
}
