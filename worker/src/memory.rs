//! The worker's memory budget as a limit, not a hope: a counting global allocator.
//!
//! Kernels size their tables from a job's `memory_mb` (cut to a slot's share of `--memory-mb`),
//! but a kernel can still grow past it (a proof tree, a search tree without a node cap, a bug),
//! and the operating system would then end the process, or the machine, at its own time. So the
//! binaries that run kernels (`gamesolver-worker`, and `gamesolver`, whose local workers run the
//! same code) install [`CountingAlloc`] as their global allocator:
//! - every allocation and free adjusts one process-wide counter of live heap bytes
//!   ([`allocated`]), a relaxed atomic add;
//! - the worker checks the soft limit between heartbeats (`run_lease`): past it, the running tasks
//!   are stopped through their stop flag and fail with the reason named (an attempt);
//! - the hard limit ([`set_hard_limit`], well above the soft one) refuses the allocation that
//!   would cross it; the process aborts, which costs one worker and counts as an attempt when its
//!   lease expires, so a kernel faster than the soft check never takes the machine with it.
//!
//! A library crate cannot choose its binaries' allocator: each binary declares
//! `#[global_allocator] static A: CountingAlloc = CountingAlloc;`. Where none did (tests, the
//! benchmark harness), [`installed`] is false and no limit applies.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
static HARD_LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The system allocator with a count of live bytes and an optional hard limit.
pub struct CountingAlloc;

impl CountingAlloc {
    #[inline]
    fn admit(&self, size: usize) -> bool {
        let before = ALLOCATED.fetch_add(size, Ordering::Relaxed);
        if before.saturating_add(size) > HARD_LIMIT.load(Ordering::Relaxed) {
            ALLOCATED.fetch_sub(size, Ordering::Relaxed);
            return false;
        }
        true
    }
}

// SAFETY: every call is forwarded to `System` with the same layout; the counter never affects
// which memory is returned, only whether an allocation is refused (a null pointer, which the
// `GlobalAlloc` contract allows).
unsafe impl GlobalAlloc for CountingAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !self.admit(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc(layout);
        if p.is_null() {
            ALLOCATED.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !self.admit(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc_zeroed(layout);
        if p.is_null() {
            ALLOCATED.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        ALLOCATED.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !self.admit(new_size - old) {
            return std::ptr::null_mut();
        }
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            if new_size > old {
                ALLOCATED.fetch_sub(new_size - old, Ordering::Relaxed);
            }
        } else if new_size < old {
            ALLOCATED.fetch_sub(old - new_size, Ordering::Relaxed);
        }
        p
    }
}

/// Live heap bytes of this process, when [`CountingAlloc`] is its allocator.
pub fn allocated() -> Option<usize> {
    installed().then(|| ALLOCATED.load(Ordering::Relaxed))
}

/// Whether [`CountingAlloc`] is this process's allocator: an allocation moved the counter.
/// (Any running Rust program has allocated by the time it asks.)
pub fn installed() -> bool {
    if INSTALLED.load(Ordering::Relaxed) {
        return true;
    }
    let probe = std::hint::black_box(vec![0u8; 4096]);
    let seen = ALLOCATED.load(Ordering::Relaxed) >= probe.len();
    drop(probe);
    if seen {
        INSTALLED.store(true, Ordering::Relaxed);
    }
    seen
}

/// Refuses any allocation that would take the live heap past `bytes` (the process then aborts,
/// see the module doc). `usize::MAX`: no limit.
pub fn set_hard_limit(bytes: usize) {
    HARD_LIMIT.store(bytes, Ordering::Relaxed);
}

/// The hard limit for a worker whose budget is `memory_mb`: half again the budget plus
/// 256 MiB, far enough above the soft limit that the soft check stops a kernel first unless it
/// allocates hundreds of megabytes between two checks.
pub fn hard_limit_for(memory_mb: u64) -> usize {
    let mb = memory_mb.saturating_add(memory_mb / 2).saturating_add(256);
    usize::try_from(mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX)
}

/// The soft limit for a worker whose budget is `memory_mb`: the budget plus 64 MiB for the
/// worker itself (its HTTP client, cached jobs, the kernels' small allocations).
pub fn soft_limit_for(memory_mb: u64) -> usize {
    usize::try_from(memory_mb.saturating_add(64).saturating_mul(1 << 20)).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_leave_room_between_soft_and_hard() {
        for mb in [1u64, 256, 4096, 1 << 20] {
            assert!(soft_limit_for(mb) < hard_limit_for(mb), "{mb}");
            assert!(soft_limit_for(mb) >= (mb as usize) << 20);
        }
        // Tests do not install the allocator: no limit applies to them.
        assert!(!installed());
        assert_eq!(allocated(), None);
    }
}
