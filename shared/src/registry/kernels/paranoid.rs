//! `paranoid`: paranoid search (Sturtevant and Korf 2000), the root player against a coalition
//! of the others. The multi-player family runs it (`registry::multi`: `depth`, iterative
//! deepening, the output with the root player's value only).

use crate::model::{Stochastic, VectorEval};
use crate::registry::kernel::{kernel, Analyse};
use crate::registry::multi::{self, VectorSearch};
use crate::registry::{Opts, SolveError};
use crate::search::paranoid::paranoid;

kernel! {
    /// `paranoid`: the root player against a coalition of the others.
    Paranoid {
        name: "paranoid",
        serves: [Multi, MultiTree],
        group: multi::GROUP,
        analyse: Analyse::No,
    }
    multi(job, game, root) => multi::prepare(job, game, root, true, None, read);
    multi_tree(job, tree) => multi::tree(job, tree, read);
}

/// The search: no settings of its own.
fn read<G: Stochastic + VectorEval>(_: &Opts) -> Result<VectorSearch<G>, SolveError> {
    Ok(VectorSearch {
        run: Box::new(|g, s, depth, ctl| paranoid(g, s, depth, ctl)),
        root_only: true,
    })
}
