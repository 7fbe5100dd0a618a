//! The engine's transposition table: packed, lock-free, shared by all search threads.
//!
//! Contract: [`Table::probe`] returns an entry only when its stored key equals the full 64-bit key
//! (so with a perfect key, [`crate::model::Hashed::HASH_IS_KEY`], a hit is the same position); an
//! entry's value is a fail-soft bound with its [`Bound`], turned into a cut only where the window
//! allows, never into an exact value. A slot is two words, a bucket four slots (one cache line):
//! ```text
//! check = key ^ mix64(data) ^ salt
//! data  = | gen:8 | work:6 | move:8 | draft:8 | bound:2 | value:32 |
//! value side to move's view; bound 0 empty, 1 Lower, 2 Upper, 3 Exact; draft 255 = exact;
//! move index + 1 in the generated list (0 none); work log2 of the nodes below (priority)
//! ```
//! Reuse without clearing: every use has its own `salt` ([`Table::reset`] draws a new one, so old
//! entries fail their check at no cost; [`Table::recycle`] / [`Table::take`] pool the memory).
//! Lock-free reads: writers store `data` then `check`; a torn read passes the check only by a
//! 2^-64 coincidence. Replacement: same key, else empty, else least priority (older generation,
//! then least work below, after Breuker, Uiterwijk and van den Herik, "Replacement Schemes for
//! Transposition Tables", 1994, then lowest draft); the new entry is always stored. The arguments
//! in full: docs/kernels.md, "Engine transposition table".

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

/// What a stored value says about the true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The true value is at least the stored value (the search failed high).
    Lower,
    /// The true value is at most the stored value (the search failed low).
    Upper,
    /// The stored value is the true value.
    Exact,
}

/// Draft of an entry written by an exact (not depth-limited) search.
pub const DRAFT_EXACT: u8 = 255;
/// "No move" in an entry.
pub const NO_MOVE: u8 = u8::MAX;

/// One decoded entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The value, from the point of view of the side to move.
    pub value: i32,
    /// What the value means.
    pub bound: Bound,
    /// Remaining depth it was searched to ([`DRAFT_EXACT`] for exact search).
    pub draft: u8,
    /// Index of the best move in the generated list, or [`NO_MOVE`].
    pub mv: u8,
    /// log2 of the nodes below.
    pub work: u8,
}

const SLOTS: usize = 4;

/// SplitMix64's finaliser: a bijective 64-bit mix.
#[inline(always)]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Four slots of (check, data).
#[repr(C, align(64))]
struct Bucket {
    words: [AtomicU64; 2 * SLOTS],
}

const _: () = assert!(std::mem::size_of::<Bucket>() == 64);
const _: () = assert!(std::mem::align_of::<Bucket>() == 64);

impl Entry {
    fn pack(self, generation: u8) -> u64 {
        let bound = match self.bound {
            Bound::Lower => 1u64,
            Bound::Upper => 2,
            Bound::Exact => 3,
        };
        let mv = if self.mv == NO_MOVE {
            0
        } else {
            self.mv as u64 + 1
        };
        (self.value as u32 as u64)
            | bound << 32
            | (self.draft as u64) << 34
            | mv << 42
            | ((self.work.min(63)) as u64) << 50
            | (generation as u64) << 56
    }

    fn unpack(data: u64) -> Option<Entry> {
        let bound = match (data >> 32) & 3 {
            0 => return None,
            1 => Bound::Lower,
            2 => Bound::Upper,
            _ => Bound::Exact,
        };
        let mv = ((data >> 42) & 0xFF) as u8;
        Some(Entry {
            value: data as u32 as i32,
            bound,
            draft: (data >> 34) as u8,
            mv: if mv == 0 { NO_MOVE } else { mv - 1 },
            work: ((data >> 50) & 63) as u8,
        })
    }
}

/// Asks Linux for transparent huge pages (2 MB) on the whole 2 MB pages inside `ptr..ptr+len`,
/// before the memory is first touched: a large table probed at random then costs one TLB entry
/// per 2 MB instead of per 4 KB (on Connect Four, where most of a probe's time is the miss, this
/// is the larger part of the time per node). A refusal changes nothing but speed.
#[allow(unused_variables)]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = (ptr as usize).next_multiple_of(HUGE);
        let end = (ptr as usize + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside one live allocation of ours; MADV_HUGEPAGE does
            // not change its contents or validity.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// The table. Share it by reference between threads; all operations take `&self`.
pub struct Table {
    buckets: Box<[Bucket]>,
    generation: AtomicU8,
    salt: u64,
}

/// Counter behind the salts.
static SALTS: AtomicU64 = AtomicU64::new(1);
/// Tables of finished jobs, kept for reuse.
static POOL: Mutex<Vec<Table>> = Mutex::new(Vec::new());
/// Most memory the pool keeps (a few default-sized tables).
const POOL_BYTES: usize = 256 << 20;

fn fresh_salt() -> u64 {
    mix64(SALTS.fetch_add(1, Ordering::Relaxed))
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table({} buckets)", self.buckets.len())
    }
}

impl Table {
    /// A table of at most `bytes` bytes (at least one bucket). Fails with a message, never
    /// aborts, when the memory cannot be had. The memory is zeroed here (touched once), on
    /// huge pages where the system allows them.
    pub fn with_bytes(bytes: usize) -> Result<Table, String> {
        let n = (bytes / std::mem::size_of::<Bucket>()).max(1);
        let layout = std::alloc::Layout::array::<Bucket>(n)
            .map_err(|_| format!("table of {bytes} bytes is too large"))?;
        // SAFETY: the layout has non-zero size (n >= 1, 64 bytes each). The memory is zeroed
        // before use, and an all-zero Bucket is valid (AtomicU64 has the representation of
        // u64), so it holds n initialised Buckets; Box takes ownership with the same layout it
        // frees with. `advise_huge_pages` only gives the kernel a hint about the range.
        let buckets = unsafe {
            let ptr = std::alloc::alloc(layout) as *mut Bucket;
            if ptr.is_null() {
                return Err(format!("cannot allocate a table of {} MB", bytes >> 20));
            }
            advise_huge_pages(ptr as *mut u8, layout.size());
            std::ptr::write_bytes(ptr, 0, n);
            Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n))
        };
        Ok(Table {
            buckets,
            generation: AtomicU8::new(0),
            salt: fresh_salt(),
        })
    }

    /// A table of `bytes` (as [`Table::with_bytes`]), reusing a pooled one of that size if
    /// there is one (reset, so it is empty).
    pub fn take(bytes: usize) -> Result<Table, String> {
        let n = (bytes / std::mem::size_of::<Bucket>()).max(1);
        let pooled = {
            let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
            pool.iter()
                .position(|t| t.buckets.len() == n)
                .map(|i| pool.swap_remove(i))
        };
        match pooled {
            Some(mut t) => {
                t.reset();
                Ok(t)
            }
            None => Table::with_bytes(bytes),
        }
    }

    /// Gives the table back to the pool for [`Table::take`] (the oldest pooled tables are freed
    /// beyond a budget).
    pub fn recycle(self) {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        pool.push(self);
        while pool.iter().map(Table::bytes).sum::<usize>() > POOL_BYTES {
            pool.remove(0);
        }
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<Bucket>()
    }

    /// Forgets every entry at once (a new salt; see the module doc).
    pub fn reset(&mut self) {
        self.salt = fresh_salt();
    }

    /// The table's memory as plain 64-bit words, and its salt: for a game's specialised solver
    /// with its own entry layout (it must XOR the salt into what it stores, so that
    /// [`Table::reset`] forgets its entries too, and must treat words it did not write as
    /// garbage). The engine's entries and a solver's must not share one table in one use.
    pub fn raw_words(&self) -> (&[AtomicU64], u64) {
        // SAFETY: `Bucket` is `repr(C)` holding only `[AtomicU64; 2 * SLOTS]` (size asserted 64
        // bytes, no padding), so `n` buckets are `n * 2 * SLOTS` contiguous `AtomicU64`s that
        // live as long as `self`.
        let words = unsafe {
            std::slice::from_raw_parts(
                self.buckets.as_ptr() as *const AtomicU64,
                self.buckets.len() * 2 * SLOTS,
            )
        };
        (words, self.salt)
    }

    /// Starts a new search generation: entries of older ones are replaced first.
    pub fn new_generation(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
    }

    #[inline(always)]
    fn bucket(&self, key: u64) -> &Bucket {
        // Perfect keys (bitboards) have their entropy in few bits: mix, then map to [0, n).
        let i = ((mix64(key) as u128 * self.buckets.len() as u128) >> 64) as usize;
        &self.buckets[i]
    }

    /// The entry stored for `key`, if any.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let b = self.bucket(key);
        for s in 0..SLOTS {
            let data = b.words[2 * s + 1].load(Ordering::Relaxed);
            let check = b.words[2 * s].load(Ordering::Relaxed);
            if check ^ mix64(data) ^ self.salt == key {
                if let Some(e) = Entry::unpack(data) {
                    return Some(e);
                }
            }
        }
        None
    }

    /// Stores `entry` for `key` (see the module doc for which slot it takes). A move of
    /// [`NO_MOVE`] keeps the move already stored for the same key.
    #[inline]
    pub fn store(&self, key: u64, mut entry: Entry) {
        let b = self.bucket(key);
        let generation = self.generation.load(Ordering::Relaxed);
        let mut victim = 0;
        let mut victim_priority = u32::MAX;
        for s in 0..SLOTS {
            let data = b.words[2 * s + 1].load(Ordering::Relaxed);
            let check = b.words[2 * s].load(Ordering::Relaxed);
            // Entries of an earlier use (another salt) look like other keys' entries; their old
            // generation makes them the first to go.
            let old = Entry::unpack(data);
            let Some(old) = old else {
                if victim_priority > 0 {
                    victim = s;
                    victim_priority = 0;
                }
                continue;
            };
            if check ^ mix64(data) ^ self.salt == key {
                if entry.mv == NO_MOVE {
                    entry.mv = old.mv;
                }
                victim = s;
                break;
            }
            let current = ((data >> 56) as u8 == generation) as u32;
            let priority = 1 + (current << 16 | (old.work as u32) << 8 | old.draft as u32);
            if priority < victim_priority {
                victim = s;
                victim_priority = priority;
            }
        }
        let data = entry.pack(generation);
        b.words[2 * victim + 1].store(data, Ordering::Relaxed);
        b.words[2 * victim].store(key ^ mix64(data) ^ self.salt, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_keys_are_checked() {
        let t = Table::with_bytes(1 << 12).unwrap();
        let e = Entry {
            value: -1234,
            bound: Bound::Upper,
            draft: 7,
            mv: 3,
            work: 20,
        };
        t.store(42, e);
        assert_eq!(t.probe(42), Some(e));
        assert_eq!(t.probe(43), None);
        // A move-less store keeps the old move.
        t.store(
            42,
            Entry {
                mv: NO_MOVE,
                bound: Bound::Exact,
                ..e
            },
        );
        assert_eq!(t.probe(42).unwrap().mv, 3);
        assert_eq!(t.probe(42).unwrap().bound, Bound::Exact);
        let e2 = Entry {
            value: i32::MIN + 1,
            bound: Bound::Lower,
            draft: DRAFT_EXACT,
            mv: NO_MOVE,
            work: 63,
        };
        t.store(0, e2);
        assert_eq!(t.probe(0), Some(e2));
        // A reset forgets everything; a recycled table comes back empty.
        let mut t = t;
        t.reset();
        assert_eq!(t.probe(0), None);
        assert_eq!(t.probe(42), None);
        t.store(5, e);
        let bytes = t.bytes();
        t.recycle();
        let t = Table::take(bytes).unwrap();
        assert_eq!(t.probe(5), None);
    }

    #[test]
    fn a_full_bucket_keeps_the_most_work() {
        // One bucket: every key lands in it.
        let t = Table::with_bytes(64).unwrap();
        for k in 0..4u64 {
            t.store(
                k,
                Entry {
                    value: k as i32,
                    bound: Bound::Exact,
                    draft: 1,
                    mv: NO_MOVE,
                    work: 10 + k as u8,
                },
            );
        }
        t.store(
            9,
            Entry {
                value: 9,
                bound: Bound::Exact,
                draft: 1,
                mv: NO_MOVE,
                work: 1,
            },
        );
        assert!(t.probe(0).is_none(), "the least work goes");
        assert!(t.probe(3).is_some() && t.probe(9).is_some());
        // Older generations go first, whatever their work.
        t.new_generation();
        t.store(
            10,
            Entry {
                value: 10,
                bound: Bound::Exact,
                draft: 1,
                mv: NO_MOVE,
                work: 0,
            },
        );
        t.store(
            11,
            Entry {
                value: 11,
                bound: Bound::Exact,
                draft: 1,
                mv: NO_MOVE,
                work: 0,
            },
        );
        assert!(t.probe(10).is_some() && t.probe(11).is_some());
    }
}
