//! The game catalogue: every game the registry knows, one line each.
//!
//! A game declares itself once, in its own module, by a descriptor that implements [`GameEntry`]:
//! its name, its parameters (with defaults and bounds), how it is built from checked parameters,
//! and which capabilities it offers to a [`Visitor`]. Preparing a job, checking a proof, drawing
//! a board, perft, the lists of games and the declared parameters are visitors of this catalogue
//! or derived from it. Adding a game is its own file plus one line in the list at the end.

use super::{Opts, SolveError, Spec};
pub use crate::games::entry::{BookFn, BookRequest, Family, GameEntry, TablesFn, Visitor};

/// What the catalogue knows of a game without building it.
#[derive(Clone, Copy, Debug)]
pub struct Info {
    /// [`GameEntry::NAME`].
    pub name: &'static str,
    /// [`GameEntry::PARAMS`].
    pub params: &'static [Spec],
    /// [`GameEntry::FAMILY`].
    pub family: Family,
    /// [`GameEntry::BOOK`].
    pub book: Option<BookFn>,
    /// [`GameEntry::TABLES`].
    pub tables: Option<TablesFn>,
    /// [`GameEntry::POSITION_FILE`].
    pub position_file: bool,
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

/// Names of the games with an opening-book builder (`gamesolver book`).
pub fn book_games() -> Vec<&'static str> {
    ENTRIES
        .iter()
        .filter(|e| e.book.is_some())
        .map(|e| e.name)
        .collect()
}

/// Names of the games with endgame databases (`gamesolver tables`).
pub fn table_games() -> Vec<&'static str> {
    ENTRIES
        .iter()
        .filter(|e| e.tables.is_some())
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
            book: <$entry as GameEntry>::BOOK,
            tables: <$entry as GameEntry>::TABLES,
            position_file: <$entry as GameEntry>::POSITION_FILE,
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
    games::awari::AwariEntry,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Exact;
    use crate::model::single::SinglePlayer;
    use crate::model::{ChanceZeroSum, OutOfTurn, Picture, Stochastic, VectorEval};
    use crate::search::eval::{Evaluated, Evaluator};
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
            let book_option = matches!(e.family, Family::ZeroSum { book: true, .. });
            assert_eq!(
                e.book.is_some(),
                book_option,
                "{}: BOOK and the family's book",
                e.name
            );
        }
        assert!(visit("chess", &Opts::new(&Settings::new(), "p"), Reached).is_none());
    }
}
