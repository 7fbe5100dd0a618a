//! `star25`: Star2.5 (`search::star25`), probing `probing` children sequentially or cyclically
//! (`probing_mode`). The chance family runs it (`registry::chance`: `depth`, the bounds,
//! iterative deepening, the output).

use crate::registry::chance::{Kernel as Search, PROBING, PROBING_MODE};
use crate::search::star25::ProbingMode;

crate::registry::chance::chance_kernel!(
    /// `star25`: Star2.5, probing `probing` children sequentially or cyclically.
    Star25,
    "star25",
    |opts| {
        let k: u32 = opts.uint_value(&PROBING)?;
        let mode = match opts.choice(&PROBING_MODE)? {
            "cyclic" => ProbingMode::Cyclic,
            _ => ProbingMode::Sequential,
        };
        Ok(Search::Star25(k, mode))
    }
);
