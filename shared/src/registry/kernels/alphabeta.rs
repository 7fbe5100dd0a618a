//! `alphabeta`: the engine (`search::engine`, or the game's own solver), exact by null-window
//! probes or to `depth` by iterative deepening. The two-player zero-sum family runs it
//! (`registry::family`: its options, the probe plan, the job, the output); it analyses every
//! root move with a table of its own per move (`registry::analysis`).

use crate::registry::family::{self, Search};
use crate::registry::kernel::{kernel, Analyse};

kernel! {
    /// `alphabeta`: the engine (or the game's own solver), exact by null-window probes or to
    /// `depth` by iterative deepening.
    Alphabeta {
        name: "alphabeta",
        serves: [ZeroSum, MinMaxTree],
        group: family::GROUP,
        analyse: Analyse::Moves { own_table: true },
    }
    zero_sum(job, game, root, res) => family::two_player(job, game, root, res, Search::Alphabeta);
}
