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
//! `shared/tests/architecture.rs` checks that each module uses only modules below it and that
//! direct submodules form no circles. Games declare themselves to the catalogue ([`games::entry`])
//! and no kernel names one; kernels are generic over the [`model`] traits they need; [`plan`] owns
//! what it needs of a job ([`plan::PreparedJob`]), which the registry implements.

pub mod games;
pub mod model;
pub mod plan;
pub mod proof;
pub mod registry;
pub mod search;
pub mod viz;
pub mod wire;
