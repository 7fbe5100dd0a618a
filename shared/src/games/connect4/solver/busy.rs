//! The threads' "busy" table for ABDADA (Weill 1996): which positions some thread is searching
//! right now, so another thread can leave them for later (see the module doc of [`super`],
//! "Threads").
//!
//! A small direct-mapped array of `AtomicU64`, apart from the transposition table (whose entry
//! format is not touched): a slot holds a position's key (folded to 50 bits: keys of boards of
//! more than 50 bits may then share a mark, which only costs order) and how many threads are
//! inside it (high 8 bits). A slot whose count is 0 is free for any key; a slot held by another
//! key is not taken (the position is then simply not marked: another thread will not defer it,
//! which costs work, never correctness). The table only steers which child a thread searches
//! first; no answer is read from it.

use std::sync::atomic::{AtomicU64, Ordering};

const KEY_MASK: u64 = (1 << 50) - 1;
const ONE: u64 = 1 << 56;

/// Slots in a search's busy table (32 KiB: only the nodes near the root are marked).
pub(crate) const SLOTS: usize = 1 << 12;

/// Most threads the 8-bit count can hold.
pub(crate) const MAX_THREADS: u64 = 255;

/// A fresh busy table for one search.
pub(crate) fn table() -> Vec<AtomicU64> {
    (0..SLOTS).map(|_| AtomicU64::new(0)).collect()
}

/// `key` in the slot's 50 key bits: keys below `2^50` are themselves.
#[inline(always)]
fn fold(key: u64) -> u64 {
    (key ^ (key >> 50)) & KEY_MASK
}

#[inline(always)]
fn slot(slots: &[AtomicU64], key: u64) -> &AtomicU64 {
    let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    &slots[((h as u128 * slots.len() as u128) >> 64) as usize]
}

/// How [`enter`] went.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Entry {
    /// Marked: call [`leave`] when done.
    Marked,
    /// Another key holds the slot: nothing marked (search without a mark).
    Collision,
    /// Only with `exclusive`: another thread is inside `key`; nothing marked.
    Busy,
}

/// Marks `key` as searched by one more thread. With `exclusive`, only if no thread is inside it
/// yet: the test and the mark are one atomic step, so of two threads reaching a position at the
/// same moment exactly one enters it (threads that search the same tree in step would otherwise
/// both see it free and both enter).
#[inline]
pub(crate) fn enter(slots: &[AtomicU64], key: u64, exclusive: bool) -> Entry {
    let key = fold(key);
    let s = slot(slots, key);
    let mut w = s.load(Ordering::Relaxed);
    loop {
        let new = if w & KEY_MASK == key {
            if exclusive && w >= ONE {
                return Entry::Busy;
            }
            w + ONE
        } else if w < ONE {
            key | ONE
        } else {
            return Entry::Collision;
        };
        match s.compare_exchange_weak(w, new, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return Entry::Marked,
            Err(x) => w = x,
        }
    }
}

/// Undoes one [`Entry::Marked`] [`enter`] of `key` (the slot still holds `key`: a slot with a
/// count above 0 never changes key).
#[inline]
pub(crate) fn leave(slots: &[AtomicU64], key: u64) {
    let key = fold(key);
    slot(slots, key).fetch_sub(ONE, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_busy(slots: &[AtomicU64], key: u64) -> bool {
        let w = slot(slots, key).load(Ordering::Relaxed);
        w & KEY_MASK == key && w >= ONE
    }

    #[test]
    fn enter_and_leave_count_threads_per_key() {
        let t = table();
        let k = 12345;
        assert!(!is_busy(&t, k));
        assert_eq!(enter(&t, k, true), Entry::Marked);
        assert_eq!(enter(&t, k, true), Entry::Busy);
        assert_eq!(enter(&t, k, false), Entry::Marked);
        assert!(is_busy(&t, k));
        leave(&t, k);
        assert!(is_busy(&t, k));
        leave(&t, k);
        assert!(!is_busy(&t, k));
        assert_eq!(enter(&t, k, true), Entry::Marked);
        leave(&t, k);
        // A key sharing the slot of a busy key is not marked; once free, it is.
        let other = (k + 1..)
            .find(|&o| std::ptr::eq(slot(&t, o), slot(&t, k)))
            .unwrap();
        assert_eq!(enter(&t, k, false), Entry::Marked);
        assert_eq!(enter(&t, other, true), Entry::Collision);
        assert_eq!(enter(&t, other, false), Entry::Collision);
        assert!(!is_busy(&t, other));
        leave(&t, k);
        assert_eq!(enter(&t, other, true), Entry::Marked);
        assert!(is_busy(&t, other) && !is_busy(&t, k));
        leave(&t, other);
    }
}
