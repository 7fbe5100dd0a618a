//! Search kernels, one per file, each generic over the model capabilities it needs.
//!
//! Every kernel takes a [`Control`] (limits, stop flag, progress) and returns its value from
//! the point of view documented in its module, plus the number of nodes it searched.

pub mod control;
pub use control::{Control, StopReason};

pub mod alphabeta;
pub mod bestreply;
pub mod engine;
pub mod eval;
pub mod expectimax;
pub mod maxn;
pub mod mcts;
pub mod minimax;
pub mod nmcs;
pub(crate) mod node;
pub mod nrpa;
pub mod paranoid;
pub mod pns;
pub(crate) mod pool;
pub mod retrograde;
pub mod stack;
pub mod star1;
pub mod star2;
pub mod star25;
pub use stack::{run_on_kernel_stack, KERNEL_STACK_BYTES};
