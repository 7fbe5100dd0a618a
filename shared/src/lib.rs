//! # gamesolver-shared
//!
//! The library behind the `gamesolver` coordinator and the `gamesolver-worker`: everything that is
//! not HTTP or process management. Its modules are its architecture; arrows point down only.
//!
//! ```text
//!              registry            the one place where a game name meets a kernel name
//!            /    |     \
//!      search/  games/   plan/     kernels | rules | job -> tasks -> result
//!            \    |     /
//!            model/   wire         game model traits | serde types that cross the network
//! ```
//!
//! - [`model`]: the game model (course 1.1) and its capability traits.
//! - [`games`]: concrete games. No kernel names one.
//! - [`search`]: kernels, each generic over the capabilities it needs.
//! - [`plan`]: splits a job into tasks and merges their results; the same code runs in-process
//!   (`gamesolver solve`) and in the coordinator.
//! - [`wire`]: job, task and result types as they travel as JSON.
//! - [`registry`]: parses a job's game and algorithm names and runs a task, type-erased.

pub mod games;
pub mod model;
pub mod plan;
pub mod registry;
pub mod search;
pub mod viz;
pub mod wire;
