//! Bitboard words for Connect Four: the board of a W x H game needs W * (H + 1) bits.
//!
//! [`Word`] is the handful of operations the board needs (and, or, xor, not, shifts, wrapping
//! add and subtract, population count). `u64` and `u128` implement it with their native
//! instructions; [`Wide<N>`] is an `N` x 64-bit word for larger boards (multi-word add and
//! shift with carries). The registry picks the smallest word that holds the board, so the 7 x 6
//! game runs on a plain `u64`.
//!
//! Contract: bits at or above [`Word::BITS`] are dropped by shifts (as `checked_shl` would give
//! zero), never a panic; add and subtract wrap.

use std::fmt::Debug;
use std::hash::Hash;
use std::ops::{BitAnd, BitOr, BitXor, Not, Shl, Shr};

/// A fixed-width bit set with arithmetic, used as a Connect Four bitboard.
pub trait Word:
    Copy
    + Eq
    + Hash
    + Debug
    + Default
    + Send
    + Sync
    + 'static
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
{
    /// Number of bits.
    const BITS: u32;
    /// All bits clear.
    const ZERO: Self;
    /// The word with only bit `i` set (`i < BITS`).
    fn bit(i: u32) -> Self;
    /// Whether bit `i` is set.
    fn has(self, i: u32) -> bool {
        !(self & Self::bit(i)).is_zero()
    }
    /// Sum modulo 2^BITS.
    fn add(self, other: Self) -> Self;
    /// Difference modulo 2^BITS.
    fn sub(self, other: Self) -> Self;
    /// Number of set bits.
    fn count_ones(self) -> u32;
    /// Whether no bit is set.
    fn is_zero(self) -> bool;
    /// Index of the lowest set bit (`BITS` when zero).
    fn trailing_zeros(self) -> u32;
    /// A 64-bit hash of the word; the identity for words of at most 64 bits.
    fn hash64(self) -> u64;
}

/// `Word` for a native unsigned integer: every operation is the integer's own instruction;
/// `$hash` folds the word into 64 bits.
macro_rules! native_word {
    ($t:ty, $hash:expr) => {
        impl Word for $t {
            const BITS: u32 = <$t>::BITS;
            const ZERO: Self = 0;
            #[inline(always)]
            fn bit(i: u32) -> Self {
                1 << i
            }
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn sub(self, other: Self) -> Self {
                self.wrapping_sub(other)
            }
            #[inline(always)]
            fn count_ones(self) -> u32 {
                <$t>::count_ones(self)
            }
            #[inline(always)]
            fn is_zero(self) -> bool {
                self == 0
            }
            #[inline(always)]
            fn trailing_zeros(self) -> u32 {
                <$t>::trailing_zeros(self)
            }
            #[inline(always)]
            fn hash64(self) -> u64 {
                let hash: fn($t) -> u64 = $hash;
                hash(self)
            }
        }
    };
}

native_word!(u64, |w| w);
native_word!(u128, |w| mix64(mix64(w as u64) ^ (w >> 64) as u64));

/// SplitMix64's finaliser: a bijective 64-bit mix (used to fold wide words into a hash).
#[inline(always)]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An `N` x 64-bit word, least significant limb first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Wide<const N: usize>(pub [u64; N]);

impl<const N: usize> Default for Wide<N> {
    fn default() -> Self {
        Wide([0; N])
    }
}

impl<const N: usize> BitAnd for Wide<N> {
    type Output = Self;
    #[inline]
    fn bitand(self, o: Self) -> Self {
        let mut r = self.0;
        for (a, b) in r.iter_mut().zip(o.0) {
            *a &= b;
        }
        Wide(r)
    }
}

impl<const N: usize> BitOr for Wide<N> {
    type Output = Self;
    #[inline]
    fn bitor(self, o: Self) -> Self {
        let mut r = self.0;
        for (a, b) in r.iter_mut().zip(o.0) {
            *a |= b;
        }
        Wide(r)
    }
}

impl<const N: usize> BitXor for Wide<N> {
    type Output = Self;
    #[inline]
    fn bitxor(self, o: Self) -> Self {
        let mut r = self.0;
        for (a, b) in r.iter_mut().zip(o.0) {
            *a ^= b;
        }
        Wide(r)
    }
}

impl<const N: usize> Not for Wide<N> {
    type Output = Self;
    #[inline]
    fn not(self) -> Self {
        let mut r = self.0;
        for a in r.iter_mut() {
            *a = !*a;
        }
        Wide(r)
    }
}

impl<const N: usize> Shl<u32> for Wide<N> {
    type Output = Self;
    #[inline]
    fn shl(self, s: u32) -> Self {
        let (q, r) = ((s / 64) as usize, s % 64);
        let mut out = [0u64; N];
        for i in (q..N).rev() {
            let src = i - q;
            let mut v = self.0[src] << r;
            if r > 0 && src > 0 {
                v |= self.0[src - 1] >> (64 - r);
            }
            out[i] = v;
        }
        Wide(out)
    }
}

impl<const N: usize> Shr<u32> for Wide<N> {
    type Output = Self;
    #[inline]
    fn shr(self, s: u32) -> Self {
        let (q, r) = ((s / 64) as usize, s % 64);
        let mut out = [0u64; N];
        for (i, o) in out.iter_mut().enumerate().take(N.saturating_sub(q)) {
            let src = i + q;
            let mut v = self.0[src] >> r;
            if r > 0 && src + 1 < N {
                v |= self.0[src + 1] << (64 - r);
            }
            *o = v;
        }
        Wide(out)
    }
}

impl<const N: usize> Word for Wide<N> {
    const BITS: u32 = 64 * N as u32;
    const ZERO: Self = Wide([0; N]);
    #[inline]
    fn bit(i: u32) -> Self {
        let mut r = [0u64; N];
        r[(i / 64) as usize] = 1 << (i % 64);
        Wide(r)
    }
    #[inline]
    fn add(self, o: Self) -> Self {
        let mut r = [0u64; N];
        let mut carry = false;
        for ((r, a), b) in r.iter_mut().zip(self.0).zip(o.0) {
            let (s1, c1) = a.overflowing_add(b);
            let (s2, c2) = s1.overflowing_add(carry as u64);
            *r = s2;
            carry = c1 || c2;
        }
        Wide(r)
    }
    #[inline]
    fn sub(self, o: Self) -> Self {
        let mut r = [0u64; N];
        let mut borrow = false;
        for ((r, a), b) in r.iter_mut().zip(self.0).zip(o.0) {
            let (d1, b1) = a.overflowing_sub(b);
            let (d2, b2) = d1.overflowing_sub(borrow as u64);
            *r = d2;
            borrow = b1 || b2;
        }
        Wide(r)
    }
    #[inline]
    fn count_ones(self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
    #[inline]
    fn is_zero(self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
    #[inline]
    fn trailing_zeros(self) -> u32 {
        for (i, &w) in self.0.iter().enumerate() {
            if w != 0 {
                return i as u32 * 64 + w.trailing_zeros();
            }
        }
        Self::BITS
    }
    #[inline]
    fn hash64(self) -> u64 {
        let mut h = 0x9E37_79B9_7F4A_7C15u64;
        for w in self.0 {
            h = mix64(h ^ w);
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn to_wide(x: u128) -> Wide<2> {
        Wide([x as u64, (x >> 64) as u64])
    }

    /// `Wide<2>` agrees with `u128` on every operation (random operands and shifts).
    #[test]
    fn wide_matches_u128() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for _ in 0..20_000 {
            let (a, b): (u128, u128) = (rng.gen(), rng.gen());
            let s = rng.gen_range(0..128u32);
            let (wa, wb) = (to_wide(a), to_wide(b));
            assert_eq!(wa.add(wb), to_wide(a.wrapping_add(b)));
            assert_eq!(wa.sub(wb), to_wide(a.wrapping_sub(b)));
            assert_eq!(wa << s, to_wide(a << s));
            assert_eq!(wa >> s, to_wide(a >> s));
            assert_eq!(wa & wb, to_wide(a & b));
            assert_eq!(wa | wb, to_wide(a | b));
            assert_eq!(wa ^ wb, to_wide(a ^ b));
            assert_eq!(!wa, to_wide(!a));
            assert_eq!(Word::count_ones(wa), a.count_ones());
            assert_eq!(Word::trailing_zeros(wa), a.trailing_zeros());
            assert_eq!(Wide::<2>::bit(s), to_wide(1u128 << s));
        }
        assert_eq!(Word::trailing_zeros(Wide::<3>::ZERO), 192);
    }
}
