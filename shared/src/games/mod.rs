//! Concrete games. Each implements the model traits it can; no kernel names a game, and the
//! registry is the only place that names both.

pub mod connect4;
pub mod backgammon;
pub mod mnk;
pub mod pig;
pub mod tree;
pub mod data;
pub mod morpion;
pub mod samegame;
pub mod tsptw;
pub mod weakschur;
