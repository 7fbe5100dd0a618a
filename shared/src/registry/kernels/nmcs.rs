//! `nmcs`: nested Monte Carlo search (`search::nmcs`). The single-player family runs it
//! (`registry::single`: `level`, `seed`, the runs as tasks, the output).

use crate::registry::kernel::{kernel, Analyse};
use crate::registry::single::{self, Algo, NMCS_LEVEL};
use crate::registry::spec::SEED;

kernel! {
    /// `nmcs`: nested Monte Carlo search.
    Nmcs {
        name: "nmcs",
        serves: [Single],
        group: single::GROUP,
        analyse: Analyse::No,
    }
    single(job, game, res) => single::single(job, game, res, |opts, _| {
        Ok(Algo::Nmcs {
            level: opts.uint_value(&NMCS_LEVEL)?,
            seed: opts.uint_value(&SEED)?,
        })
    });
}
