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
pub mod morpion;
pub mod nim;
pub mod othello;
pub mod pig;
pub mod rolit;
pub mod samegame;
pub mod tree;
pub mod tsptw;
pub mod weakschur;

pub use exact::Exact;

/// The 64-bit finaliser of MurmurHash3 (a bijection with good avalanche).
#[inline(always)]
pub(crate) fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}
