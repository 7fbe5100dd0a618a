//! Helper threads kept alive across searches, so a search with `threads` > 1 does not spawn and
//! join threads for every null-window probe (a job runs one probe after another).
//!
//! One process-wide pool: [`run`] hands the helpers a task (a closure called with the helper's
//! number, 1..=n), runs the caller's own part, then withdraws the task and waits only for the
//! helpers that started it (a helper that wakes after the task was withdrawn skips it). So the
//! task may borrow from the caller's stack: it is never called after [`run`] returns, even if
//! the caller's part panics. If the pool is in use (two searches at once in one process), the
//! second one runs on scoped threads of its own, as before the pool.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

type Task<'a> = dyn Fn(u64) + Sync + 'a;

/// A task with its lifetime erased (see [`run`] for why it stays valid while a helper uses it).
#[derive(Clone, Copy)]
struct TaskPtr(*const Task<'static>);
// SAFETY: the pointee is `Sync` (shared calls from any thread are fine) and is only called
// while the `run` that published it waits for the caller (see `run`).
unsafe impl Send for TaskPtr {}

struct State {
    task: Option<TaskPtr>,
    /// Bumped for every task, so a helper runs each task at most once.
    generation: u64,
    /// Helpers `1..=wanted` run the current task.
    wanted: u64,
    /// Helpers spawned so far (numbered 1..=spawned).
    spawned: u64,
    /// Helpers inside the current task right now.
    inside: usize,
    /// A helper's task panicked (reported to the caller of `run`).
    panicked: bool,
}

struct Pool {
    state: Mutex<State>,
    wake: Condvar,
    idle: Condvar,
}

static POOL: OnceLock<Pool> = OnceLock::new();
static BUSY: AtomicBool = AtomicBool::new(false);

fn lock(p: &Pool) -> MutexGuard<'_, State> {
    p.state.lock().unwrap_or_else(|e| e.into_inner())
}

fn helper(p: &'static Pool, id: u64) {
    let mut seen = 0;
    let mut st = lock(p);
    loop {
        while st.generation == seen {
            st = p.wake.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        seen = st.generation;
        let Some(task) = st.task.filter(|_| id <= st.wanted) else {
            continue;
        };
        st.inside += 1;
        drop(st);
        // SAFETY: `run` withdraws the task and waits until `inside` is 0 before it returns, so
        // the closure is alive for this call.
        let ok =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*task.0)(id) }))
                .is_ok();
        st = lock(p);
        st.inside -= 1;
        st.panicked |= !ok;
        if st.inside == 0 {
            p.idle.notify_all();
        }
    }
}

/// Withdraws the published task and waits for the helpers inside it (also on unwind).
struct Withdraw(&'static Pool);

impl Drop for Withdraw {
    fn drop(&mut self) {
        let mut st = lock(self.0);
        st.task = None;
        while st.inside > 0 {
            st = self.0.idle.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        let panicked = std::mem::take(&mut st.panicked);
        drop(st);
        BUSY.store(false, Ordering::Release);
        if panicked && !std::thread::panicking() {
            panic!("a search thread panicked");
        }
    }
}

/// Runs `task(1..=helpers)` on helper threads while the caller runs `main`; returns `main`'s
/// result once no helper is inside `task` any more. `task` must return promptly once `main` is
/// done (the caller signals it, e.g. with a stop flag set at the end of `main`).
pub(crate) fn run<R>(helpers: u64, task: &Task<'_>, main: impl FnOnce() -> R) -> R {
    if helpers == 0 {
        return main();
    }
    if BUSY.swap(true, Ordering::Acquire) {
        // Another search holds the pool: threads of our own for this one.
        return std::thread::scope(|scope| {
            let hs: Vec<_> = (1..=helpers)
                .map(|i| scope.spawn(move || task(i)))
                .collect();
            let r = main();
            for h in hs {
                h.join().expect("a search thread panicked");
            }
            r
        });
    }
    let p = POOL.get_or_init(|| Pool {
        state: Mutex::new(State {
            task: None,
            generation: 0,
            wanted: 0,
            spawned: 0,
            inside: 0,
            panicked: false,
        }),
        wake: Condvar::new(),
        idle: Condvar::new(),
    });
    {
        let mut st = lock(p);
        while st.spawned < helpers {
            st.spawned += 1;
            let id = st.spawned;
            std::thread::Builder::new()
                .name(format!("search-helper-{id}"))
                .spawn(move || helper(p, id))
                .expect("spawn a search thread");
        }
        // SAFETY (lifetime erasure): the task is withdrawn and every helper inside it has left
        // before `Withdraw` is dropped, which happens before this function returns or unwinds.
        let ptr: *const Task<'_> = task;
        st.task = Some(TaskPtr(unsafe {
            std::mem::transmute::<*const Task<'_>, *const Task<'static>>(ptr)
        }));
        st.generation += 1;
        st.wanted = helpers;
    }
    let guard = Withdraw(p);
    p.wake.notify_all();
    let r = main();
    drop(guard);
    r
}
