//! The game catalogue: every game the registry knows, one line each.
//!
//! A game declares itself once, in its own module, by a descriptor that implements [`GameEntry`]:
//! its name, its parameters (with defaults and bounds), how it is built from checked parameters,
//! and which capabilities it offers to a [`Visitor`]. Preparing a job, checking a proof, drawing
//! a board, perft, the lists of games and the declared parameters are visitors of this catalogue
//! or derived from it. Adding a game is its own file plus one line in the list at the end.

use super::{Opts, SolveError, Spec};
use crate::games::Exact;
use crate::model::single::SinglePlayer;
use crate::model::{ChanceZeroSum, OutOfTurn, Picture, Stochastic, VectorEval};
use crate::search::eval::{Evaluated, Evaluator};

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

/// A game's declaration: implemented by a unit type in the game's own module.
pub trait GameEntry {
    /// The name jobs use (`"connect4"`).
    const NAME: &'static str;
    /// The declared parameters (`game_params`), with their defaults and bounds.
    const PARAMS: &'static [Spec];
    /// The kernel family; must agree with [`GameEntry::offer`].
    const FAMILY: Family;
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

/// What the catalogue knows of a game without building it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Info {
    /// [`GameEntry::NAME`].
    pub name: &'static str,
    /// [`GameEntry::PARAMS`].
    pub params: &'static [Spec],
    /// [`GameEntry::FAMILY`].
    pub family: Family,
}

/// The declaration of the game `name`, if the catalogue has it.
pub fn info(name: &str) -> Option<&'static Info> {
    ENTRIES.iter().find(|e| e.name == name)
}

/// Names of the games with a weighted-feature evaluator (`eval=features`).
pub fn feature_games() -> Vec<&'static str> {
    ENTRIES
        .iter()
        .filter(|e| matches!(e.family, Family::ZeroSum { features: true, .. }))
        .map(|e| e.name)
        .collect()
}

/// Builds `E`'s game from `params` and offers it to `visitor`.
fn offer<E: GameEntry, V: Visitor>(params: &Opts, visitor: V) -> Result<V::Output, SolveError> {
    let game = E::build(params)?;
    params.finish()?;
    Ok(E::offer(game, visitor))
}

/// The one list of games: generates [`GAMES`], [`ENTRIES`] and [`visit`].
macro_rules! catalogue {
    ($($entry:ty),* $(,)?) => {
        /// Game names, in catalogue order (error messages, the API, the tests' walks).
        pub const GAMES: &[&str] = &[$(<$entry as GameEntry>::NAME),*];

        /// Every game's declaration, in catalogue order.
        pub const ENTRIES: &[Info] = &[$(Info {
            name: <$entry as GameEntry>::NAME,
            params: <$entry as GameEntry>::PARAMS,
            family: <$entry as GameEntry>::FAMILY,
        }),*];

        /// Builds the game `name` from `params` (parameter errors are bad input) and offers it
        /// to `visitor`; `None` for a name the catalogue does not have.
        pub fn visit<V: Visitor>(
            name: &str,
            params: &Opts,
            visitor: V,
        ) -> Option<Result<V::Output, SolveError>> {
            $(if name == <$entry as GameEntry>::NAME {
                return Some(offer::<$entry, V>(params, visitor));
            })*
            None
        }
    };
}

use crate::games;

catalogue![
    games::mnk::TicTacToeEntry,
    games::mnk::MnkEntry,
    games::connect4::Connect4Entry,
    games::tree::TreeEntry,
    games::morpion::MorpionEntry,
    games::samegame::SameGameEntry,
    games::tsptw::TsptwEntry,
    games::weakschur::WeakSchurEntry,
    games::pig::PigEntry,
    games::backgammon::BackgammonEntry,
    games::carcassonne::CarcassonneEntry,
    games::othello::OthelloEntry,
    games::rolit::RolitEntry,
    games::nim::NimEntry,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Settings;

    /// The family that reaches a visitor method.
    struct Reached;
    impl Visitor for Reached {
        type Output = &'static str;
        fn zero_sum<G: Exact + Picture>(self, _: G) -> &'static str {
            "zero_sum"
        }
        fn zero_sum_features<G: Exact + Picture, E: Evaluator<G>>(
            self,
            _: G,
            _: fn(G) -> Evaluated<G, E>,
            _: bool,
        ) -> &'static str {
            "features"
        }
        fn chance<G: ChanceZeroSum + Picture>(self, _: G) -> &'static str {
            "chance"
        }
        fn stochastic<G: ChanceZeroSum + Picture>(self, _: G) -> &'static str {
            "stochastic"
        }
        fn single<G: SinglePlayer + Picture>(self, _: G) -> &'static str {
            "single"
        }
        fn multi<G: Stochastic + VectorEval + OutOfTurn + Picture>(self, _: G) -> &'static str {
            "multi"
        }
        fn tree(self) -> &'static str {
            "tree"
        }
    }

    /// Every game's declared family is the one its `offer` reaches, names are unique, and every
    /// game builds with its default parameters (TSPTW needs an instance).
    #[test]
    fn families_agree_with_offers() {
        for (i, e) in ENTRIES.iter().enumerate() {
            assert!(!GAMES[..i].contains(&e.name), "{} twice", e.name);
            let mut params = Settings::new();
            if e.name == "tsptw" {
                params.insert("instance".into(), "rc_201.1".into());
            }
            let reached = visit(e.name, &Opts::new(&params, "game parameter"), Reached)
                .expect("listed")
                .unwrap_or_else(|err| panic!("{}: {err}", e.name));
            let want = match e.family {
                Family::ZeroSum { features: true, .. } => "features",
                Family::ZeroSum { .. } => "zero_sum",
                Family::Tree => "tree",
                Family::Multi => "multi",
                Family::Single => "single",
                Family::Chance => "chance",
                Family::Stochastic => "stochastic",
            };
            assert_eq!(reached, want, "{}", e.name);
        }
        assert!(visit("chess", &Opts::new(&Settings::new(), "p"), Reached).is_none());
    }
}
