//! `jlpns`: job-level proof-number search, each leaf a task of another kernel. The job is
//! `registry::joblevel` (its options, the leaf kernels, the planner's tree); its option table is
//! the proof-number family's `JOBLEVEL` group.

use crate::registry::kernel::{kernel, Analyse};
use crate::registry::{joblevel, pn};

kernel! {
    /// `jlpns`: job-level proof-number search, each leaf a task of another kernel.
    Jlpns {
        name: "jlpns",
        serves: [ZeroSum, MinMaxTree],
        group: pn::JOBLEVEL,
        analyse: Analyse::No,
    }
    zero_sum(job, game, root, res) => joblevel::prepare(job, game, root, res);
}
