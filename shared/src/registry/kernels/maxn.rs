//! `maxn`: max^n (Luckhardt and Irani 1986), every player's value, equal vectors kept by the
//! `tiebreak` option. The multi-player family runs it (`registry::multi`: `depth`, iterative
//! deepening, the output with the whole vector).

use crate::model::{Stochastic, VectorEval};
use crate::registry::kernel::{kernel, Analyse};
use crate::registry::multi::{self, VectorSearch, TIEBREAK};
use crate::registry::{Opts, SolveError};
use crate::search::maxn::{maxn, TieBreak};

kernel! {
    /// `maxn`: max^n, every player's value, ties broken by `tiebreak`.
    Maxn {
        name: "maxn",
        serves: [Multi, MultiTree],
        group: multi::GROUP,
        analyse: Analyse::No,
    }
    multi(job, game, root) => multi::prepare(job, game, root, true, None, read);
    multi_tree(job, tree) => multi::tree(job, tree, read);
}

/// Reads `tiebreak`: max^n keeping the first, last, paranoid or friendly of equal vectors.
fn read<G: Stochastic + VectorEval>(opts: &Opts) -> Result<VectorSearch<G>, SolveError> {
    let tb: TieBreak = opts
        .choice(&TIEBREAK)?
        .parse()
        .map_err(|e: String| SolveError::Internal(e))?;
    Ok(VectorSearch {
        run: Box::new(move |g, s, depth, ctl| maxn(g, s, depth, tb, ctl)),
        root_only: false,
    })
}
