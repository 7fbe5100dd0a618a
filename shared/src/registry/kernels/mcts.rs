//! `mcts`: UCT with root-parallel trees, on every shape but single-player games. The MCTS family
//! runs it (`registry::mcts`: its options, the trees as tasks, the merged root statistics that
//! answer `analyse=all`).

use crate::registry::kernel::{kernel, Analyse};
use crate::registry::mcts;

kernel! {
    /// `mcts`: UCT with root-parallel trees, on every shape but single-player games.
    Mcts {
        name: "mcts",
        serves: [ZeroSum, Chance, MinMaxTree, ChanceTree, MultiTree],
        group: mcts::GROUP,
        analyse: Analyse::Own,
    }
    zero_sum(job, game, root, res) => mcts::zero_sum(job, game, root, res);
    chance(job, game, root, _evaluates, _max_view, res) =>
        mcts::chance_zero_sum(job, game, root, res);
    stochastic(job, game, root, res) => mcts::stochastic(job, game, root, res);
    tree(job, tree, res) => mcts::tree(job, tree, res);
}
