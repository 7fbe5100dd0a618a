//! `minimax`: plain minimax (`search::minimax`), to the end or to `depth`. The two-player
//! zero-sum family runs it (`registry::family`: its options, the job, the output).

use crate::registry::family::{self, Search};
use crate::registry::kernel::{kernel, Analyse};

kernel! {
    /// `minimax`: plain minimax, to the end or to `depth`.
    Minimax {
        name: "minimax",
        serves: [ZeroSum, MinMaxTree],
        group: family::GROUP,
        analyse: Analyse::No,
    }
    zero_sum(job, game, root, res) => family::two_player(job, game, root, res, Search::Minimax);
}
