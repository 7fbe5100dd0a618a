//! Concrete games. Each implements the model traits it can; no kernel names a game, and the
//! registry is the only place that names both.

pub mod awari;
pub mod backgammon;
pub mod carcassonne;
pub mod connect4;
pub mod data;
pub mod entry;
pub mod exact;
pub mod mnk;
#[cfg(feature = "modules")]
pub mod module;
pub mod morpion;
pub mod nim;
pub mod othello;
pub mod pig;
pub mod rolit;
pub mod samegame;
pub mod tree;
pub mod tsptw;
pub mod weakschur;

pub use exact::{Exact, JobLevelLeaf};

pub(crate) use crate::model::fmix64;
