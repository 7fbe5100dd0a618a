//! # gamesolver-shared
//!
//! The library behind the `gamesolver` coordinator and the `gamesolver-worker`: everything that is
//! not HTTP or process management. Its modules are its architecture; arrows point down only.
//!
//! ```text
//!   viz        pictures of positions and results   uses registry, games, model, wire
//!   registry   where a game name meets a kernel    uses plan, games, search, proof, model, wire
//!   plan       job -> tasks -> result              uses search, model, wire
//!   games      rules, catalogue entries, solvers   uses search, model
//!   search     kernels                             uses proof, model, wire
//!   proof      certificate format and checker      uses model, wire
//!   model      game model traits, job settings     uses wire
//!   wire       serde types that cross the network  uses nothing
//! ```
//!
//! Each module uses only modules below it, and direct submodules form no circles;
//! `shared/tests/architecture.rs` checks both.
//!
//! - [`model`]: the game model (course 1.1), its capability traits, and the declared settings of
//!   a job ([`model::settings`]: `Spec`, `Opts`, `SolveError`).
//! - [`games`]: concrete games, each declaring itself to the catalogue ([`games::entry`]). No
//!   kernel names one.
//! - [`search`]: kernels, each generic over the capabilities it needs.
//! - [`plan`]: splits a job into tasks and merges their results; the same code runs in-process
//!   (`gamesolver solve`) and in the coordinator. It owns what it needs of a job
//!   ([`plan::PreparedJob`], [`plan::PlanShape`]); the registry implements it.
//! - [`proof`]: proof certificates and their checker, by the game rules alone.
//! - [`wire`]: job, task and result types as they travel as JSON.
//! - [`registry`]: parses a job's game and algorithm names and runs a task, type-erased.
//! - [`viz`]: board pictures and plots.

pub mod games;
pub mod model;
pub mod plan;
pub mod proof;
pub mod registry;
pub mod search;
pub mod viz;
pub mod wire;
