//! `expectimax`: expectiminimax (`search::expectimax`), with Ballard's cut at chance nodes when
//! `prune` is set. The chance family runs it (`registry::chance`: `depth`, the bounds, iterative
//! deepening, the output).

use crate::registry::chance::{Kernel as Search, PRUNE};
use crate::search::expectimax::Pruning;

crate::registry::chance::chance_kernel!(
    /// `expectimax`, with Ballard's cut at chance nodes (`prune`).
    Expectimax,
    "expectimax",
    |opts| {
        Ok(Search::Expectimax(if opts.flag(&PRUNE)? {
            Pruning::ChanceBounds
        } else {
            Pruning::None
        }))
    }
);
