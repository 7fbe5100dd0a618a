//! How a running kernel is told to stop, and how it reports progress.
//!
//! Every kernel polls [`Control::should_stop`] every few thousand nodes. A stop is never an
//! error: the kernel returns what it has, marked as incomplete where that matters (an
//! iterative-deepening search returns its deepest finished iteration; a threshold search that
//! did not finish says it decided nothing).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a kernel stopped early: the wire's type, since results carry it.
pub use crate::wire::StopReason;

/// Progress that a kernel publishes while it runs; the worker forwards the latest to the
/// coordinator with its heartbeat.
pub type ProgressSink = Arc<dyn Fn(serde_json::Value) + Send + Sync>;

/// Limits and the stop flag shared by a kernel's threads. Cheap to clone.
#[derive(Clone)]
pub struct Control {
    cancel: Arc<AtomicBool>,
    deadline: Option<Instant>,
    node_limit: Option<u64>,
    nodes: Arc<AtomicU64>,
    /// Nodes of this control and of every task control made from it ([`Control::for_task`]),
    /// counted as they are searched: what a progress display reads while a task runs.
    live: Arc<AtomicU64>,
    started: Instant,
    progress: Option<ProgressSink>,
    threads: usize,
    artifacts: Option<Arc<dyn crate::search::retrograde::artifacts::Artifacts>>,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("deadline", &self.deadline)
            .field("node_limit", &self.node_limit)
            .finish()
    }
}

impl Default for Control {
    fn default() -> Self {
        Self::unlimited()
    }
}

impl Control {
    /// No limits.
    pub fn unlimited() -> Self {
        Control {
            cancel: Arc::new(AtomicBool::new(false)),
            deadline: None,
            node_limit: None,
            nodes: Arc::new(AtomicU64::new(0)),
            live: Arc::new(AtomicU64::new(0)),
            started: Instant::now(),
            progress: None,
            threads: 1,
            artifacts: None,
        }
    }
    /// With an optional time limit and node limit.
    pub fn with_limits(time: Option<Duration>, node_limit: Option<u64>) -> Self {
        let mut c = Self::unlimited();
        c.deadline = time.map(|t| c.started + t);
        c.node_limit = node_limit;
        c
    }
    /// The control of one task of a job run with this control: the same cancel flag, progress
    /// sink and threads, the earlier of this deadline and `time` from now, and a node count of
    /// its own limited to `node_limit` (job limits count nodes per task). The caller adds the
    /// task's nodes to this control's count when it ends ([`Control::add_nodes`]).
    pub fn for_task(&self, time: Option<Duration>, node_limit: Option<u64>) -> Control {
        let now = Instant::now();
        let deadline = match (self.deadline, time.map(|t| now + t)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let node_limit = match (self.node_limit, node_limit) {
            // This control's own budget is what is left of it.
            (Some(a), Some(b)) => Some(a.saturating_sub(self.nodes()).min(b)),
            (Some(a), None) => Some(a.saturating_sub(self.nodes())),
            (None, b) => b,
        };
        Control {
            cancel: self.cancel.clone(),
            deadline,
            node_limit,
            nodes: Arc::new(AtomicU64::new(0)),
            live: self.live.clone(),
            started: self.started,
            progress: self.progress.clone(),
            threads: self.threads,
            artifacts: self.artifacts.clone(),
        }
    }
    /// Shares an external cancel flag (set by the worker when the coordinator cancels).
    pub fn with_cancel_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = flag;
        self
    }
    /// Sets how many threads the kernel may use (the worker's or the CLI's `--threads`). A job
    /// option `threads` overrides it for kernels that read it.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }
    /// Threads the kernel may use (at least 1).
    pub fn threads(&self) -> usize {
        self.threads
    }
    /// Installs the artifact store of the runner (a worker's: the coordinator's artifacts
    /// with a local cache), for kernels that exchange databases (distributed retrograde builds).
    pub fn with_artifacts(
        mut self,
        artifacts: Arc<dyn crate::search::retrograde::artifacts::Artifacts>,
    ) -> Self {
        self.artifacts = Some(artifacts);
        self
    }
    /// The runner's artifact store, if it has one.
    pub fn artifacts(&self) -> Option<&Arc<dyn crate::search::retrograde::artifacts::Artifacts>> {
        self.artifacts.as_ref()
    }
    /// Installs a progress sink.
    pub fn with_progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }
    /// Asks every thread of the kernel to stop.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
    /// The cancel flag, to hand to another component.
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }
    /// Adds `n` searched nodes to the shared count (call in batches, not per node).
    #[inline]
    pub fn add_nodes(&self, n: u64) {
        if n > 0 {
            self.nodes.fetch_add(n, Ordering::Relaxed);
            self.live.fetch_add(n, Ordering::Relaxed);
        }
    }
    /// Counts the nodes of `sub`, a task control made from this one that has finished, as this
    /// control's own (they were counted live as they were searched).
    pub fn absorb(&self, sub: &Control) {
        self.nodes.fetch_add(sub.nodes(), Ordering::Relaxed);
    }
    /// Counts live nodes into `counter` (shared with a progress display) instead of a counter
    /// of its own; task controls made from this one count there too.
    pub fn with_live_nodes(mut self, counter: Arc<AtomicU64>) -> Self {
        self.live = counter;
        self
    }
    /// Nodes searched so far under this control and its task controls, running ones included.
    pub fn live_nodes(&self) -> u64 {
        self.live.load(Ordering::Relaxed)
    }
    /// Nodes counted so far by all threads.
    pub fn nodes(&self) -> u64 {
        self.nodes.load(Ordering::Relaxed)
    }
    /// Time since the control was made.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
    /// The reason to stop now, if any. Costs an atomic load and, with a deadline, a clock read:
    /// call it every few thousand nodes.
    pub fn should_stop(&self) -> Option<StopReason> {
        if self.cancel.load(Ordering::Relaxed) {
            return Some(StopReason::Cancelled);
        }
        if let Some(limit) = self.node_limit {
            if self.nodes() >= limit {
                return Some(StopReason::Nodes);
            }
        }
        if let Some(d) = self.deadline {
            if Instant::now() >= d {
                return Some(StopReason::Time);
            }
        }
        None
    }
    /// Publishes progress (no-op without a sink).
    pub fn report(&self, progress: serde_json::Value) {
        if let Some(sink) = &self.progress {
            sink(progress);
        }
    }
    /// Whether anybody listens to progress (so kernels can skip building it).
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }
}
