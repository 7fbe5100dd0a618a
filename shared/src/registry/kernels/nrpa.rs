//! `nrpa`: nested rollout policy adaptation (`search::nrpa`), in threads, runs and rounds. The
//! single-player family runs it (`registry::single`: its many options, the plans of runs and
//! of shared rounds, checkpoints; docs/nrpa.md).

use crate::registry::kernel::{kernel, Analyse};
use crate::registry::single;

kernel! {
    /// `nrpa`: nested rollout policy adaptation, in threads, runs and rounds.
    Nrpa {
        name: "nrpa",
        serves: [Single],
        group: single::GROUP,
        analyse: Analyse::No,
    }
    single(job, game, res) => single::single(job, game, res, single::nrpa_settings);
}
