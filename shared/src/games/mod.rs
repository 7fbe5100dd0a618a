//! Concrete games. Each implements the model traits it can; no kernel names a game, and the
//! registry is the only place that names both.

pub mod mnk;
pub mod othello;
pub mod tree;
