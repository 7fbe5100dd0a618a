//! `retrograde`: builds a game's endgame databases, round by round (`search::retrograde`). The
//! job is `registry::retro` (its options, the rounds as tasks, the databases as artifacts).

use crate::registry::kernel::{kernel, Analyse};
use crate::registry::retro;

kernel! {
    /// `retrograde`: builds a game's endgame databases, round by round. It needs a game that
    /// ranks its positions (`model::Retrograde`), which the catalogue's visitors do not offer:
    /// it builds the game itself, before any game is built for it (`job`).
    Retrograde {
        name: "retrograde",
        serves: [Ranked],
        group: retro::GROUP,
        analyse: Analyse::No,
    }
    job(job, res) => retro::prepare(job, res);
}
