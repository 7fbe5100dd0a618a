//! Prometheus text exposition of the coordinator's counters and gauges (`GET /metrics`).
//!
//! Counters only grow while the process lives (they restart at 0 with the coordinator, as
//! Prometheus expects of counters); gauges are read from the scheduler at scrape time.

use crate::scheduler::Scheduler;
use std::fmt::Write;

/// Appends the HTTP counters kept by the coordinator itself.
pub fn render_http(out: &mut String, event_streams: u64, status_reads: u64) {
    for (name, help, v) in [
        (
            "gamesolver_event_streams_total",
            "Job event streams opened (GET /v1/jobs/{id}/events).",
            event_streams,
        ),
        (
            "gamesolver_status_reads_total",
            "Job statuses read (GET /v1/jobs/{id}).",
            status_reads,
        ),
    ] {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}"
        );
    }
}

/// Appends how long the scheduler's lock was held: the longest single hold (a gauge: heavy work
/// under the lock, a slow disk's commit or a thread waiting for a core show here), the total (a
/// counter) and the most CPU time one hold used (a gauge: only work under the lock shows here).
pub fn render_lock(out: &mut String, max_us: u64, total_us: u64, work_max_us: u64) {
    let secs = |us: u64| us as f64 / 1e6;
    let _ = writeln!(
        out,
        "# HELP gamesolver_scheduler_lock_hold_max_seconds Longest single hold of the scheduler's lock.\n\
         # TYPE gamesolver_scheduler_lock_hold_max_seconds gauge\n\
         gamesolver_scheduler_lock_hold_max_seconds {}\n\
         # HELP gamesolver_scheduler_lock_hold_seconds_total Time the scheduler's lock was held.\n\
         # TYPE gamesolver_scheduler_lock_hold_seconds_total counter\n\
         gamesolver_scheduler_lock_hold_seconds_total {}\n\
         # HELP gamesolver_scheduler_lock_work_max_seconds Most CPU time a single hold of the scheduler's lock used.\n\
         # TYPE gamesolver_scheduler_lock_work_max_seconds gauge\n\
         gamesolver_scheduler_lock_work_max_seconds {}",
        secs(max_us),
        secs(total_us),
        secs(work_max_us)
    );
}

/// Appends the HTTP server's gauges and counters (connections and event streams).
pub fn render_server(out: &mut String, h: &crate::http::HttpStats) {
    use std::sync::atomic::Ordering::Relaxed;
    for (name, kind, help, v) in [
        (
            "gamesolver_http_connections_open",
            "gauge",
            "HTTP connections open.",
            h.connections_open.load(Relaxed) as u64,
        ),
        (
            "gamesolver_http_connections_max",
            "gauge",
            "HTTP connections served at once (--max-connections).",
            h.max_connections as u64,
        ),
        (
            "gamesolver_http_connections_evicted_total",
            "counter",
            "Idle connections closed to make room for a new one at the cap.",
            h.connections_evicted.load(Relaxed),
        ),
        (
            "gamesolver_http_connections_refused_total",
            "counter",
            "Connections closed at once because every slot was busy.",
            h.connections_refused.load(Relaxed),
        ),
        (
            "gamesolver_event_streams_open",
            "gauge",
            "Job event streams open (at most --max-event-streams).",
            h.event_streams_open() as u64,
        ),
        (
            "gamesolver_event_streams_refused_total",
            "counter",
            "Job event streams refused with 503 at the cap.",
            h.event_streams_refused.load(Relaxed),
        ),
    ] {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}"
        );
    }
}

/// Renders the metrics page; `deleted`: jobs the retention policy deleted since start, by
/// state (no longer counted in `gamesolver_jobs`).
pub fn render(s: &Scheduler, deleted: &[(&'static str, u64)]) -> String {
    let (c, mut states, queue, running, slots) = s.metrics();
    for (state, n) in deleted {
        if let Some(v) = states.get_mut(state) {
            *v = v.saturating_sub(*n);
        }
    }
    let mut out = String::new();
    let mut counter = |name: &str, help: &str, v: u64| {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}"
        );
    };
    counter(
        "gamesolver_jobs_submitted_total",
        "Jobs accepted since start.",
        c.jobs_submitted,
    );
    counter(
        "gamesolver_tasks_leased_total",
        "Task leases granted (attempts).",
        c.tasks_leased,
    );
    counter(
        "gamesolver_tasks_done_total",
        "Task results accepted.",
        c.tasks_done,
    );
    counter(
        "gamesolver_task_failures_total",
        "Task attempts that failed on a worker.",
        c.task_failures,
    );
    counter(
        "gamesolver_leases_expired_total",
        "Leases that expired without a heartbeat.",
        c.leases_expired,
    );
    counter(
        "gamesolver_leases_released_total",
        "Leases given back by workers shutting down.",
        c.leases_released,
    );
    counter(
        "gamesolver_results_duplicate_total",
        "Results posted again for a finished lease.",
        c.results_duplicate,
    );
    counter(
        "gamesolver_results_refused_total",
        "Reports and heartbeats refused (expired, foreign or unknown lease).",
        c.results_refused,
    );
    counter(
        "gamesolver_results_unneeded_total",
        "Results that came after their task was no longer needed (counted as cancelled).",
        c.results_unneeded,
    );
    counter(
        "gamesolver_results_invalid_total",
        "Results refused by the job's checks or over the proof size limit (failed attempts).",
        c.results_invalid,
    );
    let _ = writeln!(
        out,
        "# HELP gamesolver_jobs Jobs by state.\n# TYPE gamesolver_jobs gauge"
    );
    for (state, n) in states {
        let _ = writeln!(out, "gamesolver_jobs{{state=\"{state}\"}} {n}");
    }
    let mut gauge = |name: &str, help: &str, v: usize| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
    };
    gauge(
        "gamesolver_queue_depth",
        "Tasks waiting for a worker.",
        queue,
    );
    gauge(
        "gamesolver_tasks_running",
        "Tasks leased to workers now.",
        running,
    );
    gauge(
        "gamesolver_worker_slots",
        "Task slots of the workers seen recently.",
        slots,
    );
    gauge(
        "gamesolver_workers_known",
        "Workers in the coordinator's registry (live, or within two lease times of their last contact).",
        s.known_workers(),
    );
    out
}

/// Appends the store's size and what retention did (`crate::retention`).
pub fn render_store(out: &mut String, r: &crate::retention::Retention) {
    let b = r.store_bytes();
    let _ = writeln!(
        out,
        "# HELP gamesolver_store_bytes The job store by part: db (live pages of the SQLite file), \
         db_file (the file on disk), wal, artifacts (file artifacts).\n\
         # TYPE gamesolver_store_bytes gauge"
    );
    for (part, v) in [
        ("db", b.db_live),
        ("db_file", b.db_file),
        ("wal", b.wal),
        ("artifacts", b.artifacts),
    ] {
        let _ = writeln!(out, "gamesolver_store_bytes{{part=\"{part}\"}} {v}");
    }
    let (jobs, artifacts, pages, refused) = r.counters();
    let max = r.config().max_store_mb << 20;
    for (name, kind, help, v) in [
        (
            "gamesolver_store_quota_bytes",
            "gauge",
            "What the disk quota counts (db + wal + artifacts + jobs accepted since the last sweep).",
            b.total(),
        ),
        (
            "gamesolver_store_max_bytes",
            "gauge",
            "The disk quota (--max-store-mb; 0: none).",
            max,
        ),
        (
            "gamesolver_jobs_deleted_total",
            "counter",
            "Finished jobs deleted by the retention policy.",
            jobs,
        ),
        (
            "gamesolver_artifacts_deleted_total",
            "counter",
            "File artifacts deleted with the jobs that alone named them.",
            artifacts,
        ),
        (
            "gamesolver_store_pages_vacuumed_total",
            "counter",
            "Free pages of the SQLite file given back to the file system.",
            pages,
        ),
        (
            "gamesolver_store_quota_refusals_total",
            "counter",
            "Jobs refused with 429 because the store was over --max-store-mb.",
            refused,
        ),
    ] {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}"
        );
    }
}
