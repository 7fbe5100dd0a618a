//! How a game declares itself to the catalogue (`registry::catalogue`): a unit type in the game's
//! own module implements [`GameEntry`] (name, parameters, family, build) and offers the built game
//! by capability to a [`Visitor`]. The catalogue's one list names the entries; nothing here names
//! a game.

use crate::games::Exact;
use crate::model::settings::{Opts, SolveError, Spec};
use crate::model::single::SinglePlayer;
use crate::model::{ChanceZeroSum, OutOfTurn, Picture, Stochastic, VectorEval};
use crate::search::eval::{Evaluated, Evaluator};
use crate::search::retrograde::tool::EndgameTables;
use crate::search::Control;

/// Which kernel family a game belongs to, as the option tables need it before any game is
/// built. [`GameEntry::offer`] calls the [`Visitor`] method of the same name (a test checks it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Two-player zero-sum ([`Visitor::zero_sum`] or [`Visitor::zero_sum_features`]).
    ZeroSum {
        /// The game takes an opening book (`book=FILE`) on some boards.
        book: bool,
        /// The game has a weighted-feature evaluator (`eval=features`).
        features: bool,
    },
    /// Explicit trees ([`Visitor::tree`]): the kind of tree decides the family.
    Tree,
    /// More than two players ([`Visitor::multi`]).
    Multi,
    /// Single-player ([`Visitor::single`]).
    Single,
    /// Two players and chance nodes ([`Visitor::chance`]).
    Chance,
    /// Two players and chance nodes, with MCTS on the game's own stochastic model
    /// ([`Visitor::stochastic`]).
    Stochastic,
}

impl Family {
    /// Position of the family in the README's tables: zero-sum games first, then trees,
    /// multi-player, single-player and chance games.
    pub fn order(self) -> u8 {
        match self {
            Family::ZeroSum { .. } => 0,
            Family::Tree => 1,
            Family::Multi => 2,
            Family::Single => 3,
            Family::Chance | Family::Stochastic => 4,
        }
    }
}

/// What `gamesolver book` asks of a game's book builder (bounds are the builder's to check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BookRequest {
    /// Every position with at most this many moves played goes into the book.
    pub depth: u32,
    /// Search threads.
    pub threads: usize,
    /// Table size in MiB, shared by all positions.
    pub table_mb: u64,
}

/// A game's opening-book builder: the game built from `params`, the book's text (the format
/// the game's `book` option reads), or `None` when `ctl` stopped it; `progress(done, total)`
/// after each position.
pub type BookFn = fn(
    params: &Opts,
    request: &BookRequest,
    ctl: &Control,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Option<String>, SolveError>;

/// A game's endgame databases (`gamesolver tables`, the lookup route), the game built from
/// `params`.
pub type TablesFn = fn(params: &Opts) -> Result<Box<dyn EndgameTables>, SolveError>;

/// A game's declaration: implemented by a unit type in the game's own module.
pub trait GameEntry {
    /// The name jobs use (`"connect4"`).
    const NAME: &'static str;
    /// The declared parameters (`game_params`), with their defaults and bounds.
    const PARAMS: &'static [Spec];
    /// The kernel family; must agree with [`GameEntry::offer`].
    const FAMILY: Family;
    /// The game's opening-book builder (`gamesolver book`); present exactly when the family
    /// says `book: true` (a catalogue test checks it).
    const BOOK: Option<BookFn> = None;
    /// The game's endgame databases by retrograde analysis, if it has them.
    const TABLES: Option<TablesFn> = None;
    /// Whether the command line reads a position given as `@FILE` from that file (positions too
    /// long to type, such as an explicit tree's JSON); the service refuses `@`.
    const POSITION_FILE: bool = false;
    /// What [`GameEntry::build`] makes (the game, or a choice between instances of it).
    type Game;
    /// Builds the game from its parameters. Reads each parameter through `params` (which checks
    /// bounds) and calls `params.finish()` before building, so unknown parameters are reported
    /// before the game's own checks.
    fn build(params: &Opts) -> Result<Self::Game, SolveError>;
    /// Hands the game to the visitor method of its capabilities.
    fn offer<V: Visitor>(game: Self::Game, visitor: V) -> V::Output;
}

/// Something done with a game whose concrete type only its [`Entry`] knows: one method per
/// capability. Methods with a default fall back to a smaller capability.
pub trait Visitor: Sized {
    /// What the visit gives.
    type Output;
    /// A two-player zero-sum game.
    fn zero_sum<G: Exact + Picture>(self, game: G) -> Self::Output;
    /// A two-player zero-sum game with a weighted-feature evaluator: `features` wraps the game
    /// with it; `by_default` says whether a depth-limited search uses it without `eval`.
    fn zero_sum_features<G: Exact + Picture, E: Evaluator<G>>(
        self,
        game: G,
        features: fn(G) -> Evaluated<G, E>,
        by_default: bool,
    ) -> Self::Output {
        let _ = (features, by_default);
        self.zero_sum(game)
    }
    /// A two-player zero-sum game with chance nodes.
    fn chance<G: ChanceZeroSum + Picture>(self, game: G) -> Self::Output;
    /// A chance game whose MCTS runs on its own stochastic model (not the chance family's).
    fn stochastic<G: ChanceZeroSum + Picture>(self, game: G) -> Self::Output {
        self.chance(game)
    }
    /// A single-player game.
    fn single<G: SinglePlayer + Picture>(self, game: G) -> Self::Output;
    /// A game of more than two players, with out-of-turn replies (best-reply search).
    fn multi<G: Stochastic + VectorEval + OutOfTurn + Picture>(self, game: G) -> Self::Output;
    /// An explicit tree; the tree is the position, which the visitor parses.
    fn tree(self) -> Self::Output;
}
