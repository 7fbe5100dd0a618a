//! The coordinator's HTTP server: its own accept loop over hyper, so that no client can stall it.
//!
//! `axum::serve` has neither a header-read timeout nor a connection cap, so this module runs the
//! loop itself (hyper's HTTP/1 connection, a semaphore of connection slots, hyper-util's graceful
//! shutdown). Body and handler timeouts and the cap on event streams live in [`crate::api`].
//!
//! - A request head must be complete within [`HttpLimits::header_timeout`] of its first byte, and
//!   a connection with no request in flight closes after [`HttpLimits::idle_timeout`]. A watchdog
//!   per connection keeps both clocks, since hyper's `header_read_timeout` mixes the two (its timer
//!   is still set to their sum as a backstop).
//! - At most [`HttpLimits::max_connections`] connections: a newcomer evicts the oldest one with no
//!   request in flight (as nginx reuses idle keep-alive connections), or is accepted and closed at
//!   once, so `accept` keeps draining the backlog and never runs out of file descriptors.
//! - A head hyper cannot read gets hyper's own empty 400, 431 or 414 before any handler; the socket
//!   wrapper recognises those answers (an error status, `content-length: 0`, no content type) and
//!   writes the usual JSON error in their place ([`parse_error_answer`]).

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, Semaphore};

/// Default of [`HttpLimits::header_timeout`].
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default of [`HttpLimits::idle_timeout`].
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default of [`HttpLimits::body_timeout`].
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(15);
/// Default of [`HttpLimits::request_timeout`].
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Most connections served by default; fewer when the open-file limit is lower
/// ([`default_max_connections`]).
pub const MAX_DEFAULT_CONNECTIONS: usize = 10_000;
/// File descriptors kept free for everything but client connections (the store's files, the
/// listener, local workers' pipes, logs) when the connection cap is derived from the limit.
pub const FD_RESERVE: u64 = 64;
/// How long requests in flight get to finish after SIGTERM before their connections are
/// dropped (inside the 20 s grace period of the compose file and the k8s manifest).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// How long a new connection waits for the slot of an evicted one.
const EVICTION_WAIT: Duration = Duration::from_millis(200);

/// Limits of the HTTP server (`gamesolver serve` flags).
#[derive(Clone, Debug)]
pub struct HttpLimits {
    /// Time to send a whole request head, from its first byte.
    pub header_timeout: Duration,
    /// Time a connection may stay without a request (from its opening or its previous answer).
    pub idle_timeout: Duration,
    /// Time to send a whole request body, counted from the end of its head.
    pub body_timeout: Duration,
    /// Time to answer a request, except event streams and worker long polls (503 past it).
    pub request_timeout: Duration,
    /// Connections served at once (`None`: [`default_max_connections`]).
    pub max_connections: Option<usize>,
    /// Event streams (`/v1/jobs/{id}/events`) open at once (`None`: a quarter of the
    /// connections); 503 past it.
    pub max_event_streams: Option<usize>,
    /// Serve `/metrics` without the API token even when one is set.
    pub open_metrics: bool,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_connections: None,
            max_event_streams: None,
            open_metrics: false,
        }
    }
}

impl HttpLimits {
    /// The connection cap in force.
    pub fn connections(&self) -> usize {
        self.max_connections
            .unwrap_or_else(default_max_connections)
            .max(1)
    }

    /// The event stream cap in force.
    pub fn event_streams(&self) -> usize {
        self.max_event_streams
            .unwrap_or_else(|| self.connections() / 4)
            .max(1)
    }
}

/// Counters and gauges of the HTTP server, shared by the accept loop, the event stream handler
/// and `/metrics`.
#[derive(Debug)]
pub struct HttpStats {
    /// Event stream slots ([`HttpLimits::event_streams`]).
    pub event_slots: Arc<Semaphore>,
    /// The event stream cap.
    pub max_event_streams: usize,
    /// The connection cap.
    pub max_connections: usize,
    /// Connections open now.
    pub connections_open: AtomicUsize,
    /// Connections closed to make room for a new one (idle or still sending their head).
    pub connections_evicted: AtomicU64,
    /// Connections closed at once because every slot was busy.
    pub connections_refused: AtomicU64,
    /// Event streams refused with 503.
    pub event_streams_refused: AtomicU64,
}

impl HttpStats {
    /// Fresh counters for `limits`.
    pub fn new(limits: &HttpLimits) -> Arc<HttpStats> {
        let streams = limits.event_streams();
        Arc::new(HttpStats {
            event_slots: Arc::new(Semaphore::new(streams)),
            max_event_streams: streams,
            max_connections: limits.connections(),
            connections_open: AtomicUsize::new(0),
            connections_evicted: AtomicU64::new(0),
            connections_refused: AtomicU64::new(0),
            event_streams_refused: AtomicU64::new(0),
        })
    }

    /// Event streams open now.
    pub fn event_streams_open(&self) -> usize {
        self.max_event_streams - self.event_slots.available_permits()
    }
}

/// The soft limit on open files after [`raise_nofile_limit`], if it can be read.
#[cfg(unix)]
pub fn nofile_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every unix
    Some(lim.rlim_cur as u64)
}

#[cfg(not(unix))]
pub fn nofile_limit() -> Option<u64> {
    None
}

/// Raises the soft limit on open files to the hard limit (every process may; most systems start
/// services at 1024 soft with a far higher hard limit). Returns the soft limit in force.
/// Hand-written over libc: two calls, no crate needed.
#[cfg(unix)]
pub fn raise_nofile_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return None;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every unix
    Some(lim.rlim_cur as u64)
}

#[cfg(not(unix))]
pub fn raise_nofile_limit() -> Option<u64> {
    None
}

/// The default connection cap: three quarters of what the open-file limit leaves after
/// [`FD_RESERVE`], at most [`MAX_DEFAULT_CONNECTIONS`] (at least 16).
pub fn default_max_connections() -> usize {
    match nofile_limit() {
        Some(n) => {
            let room = n.saturating_sub(FD_RESERVE) * 3 / 4;
            (room.min(MAX_DEFAULT_CONNECTIONS as u64) as usize).max(16)
        }
        None => 1024,
    }
}

/// One served connection, as the accept loop sees it.
struct Conn {
    /// Requests whose answer is not finished (hyper serves one at a time per connection).
    busy: AtomicUsize,
    /// Notified to close the connection at once.
    evict: Notify,
    /// When the connection last became idle, and when the first byte of the next request head
    /// arrived (if it has).
    clock: Mutex<(Instant, Option<Instant>)>,
    /// Notified when `busy` or `clock` changes (the watchdog recomputes its deadline).
    changed: Notify,
}

impl Conn {
    fn new() -> Conn {
        Conn {
            busy: AtomicUsize::new(0),
            evict: Notify::new(),
            clock: Mutex::new((Instant::now(), None)),
            changed: Notify::new(),
        }
    }

    /// When the connection must be closed if nothing changes: `None` while a request is in
    /// flight.
    fn deadline(&self, limits: &HttpLimits) -> Option<Instant> {
        if self.busy.load(Ordering::SeqCst) > 0 {
            return None;
        }
        Some(match *self.clock.lock() {
            (_, Some(head)) => head + limits.header_timeout,
            (idle, None) => idle + limits.idle_timeout,
        })
    }

    /// Resolves when the connection has overstayed its header or idle time.
    async fn watchdog(&self, limits: &HttpLimits) {
        loop {
            let changed = self.changed.notified();
            match self.deadline(limits) {
                None => changed.await,
                Some(at) => {
                    tokio::select! {
                        _ = changed => {}
                        _ = tokio::time::sleep_until(at.into()) => {
                            if self.deadline(limits).is_some_and(|d| d <= Instant::now()) {
                                return;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Marks a connection busy from a request's head to the end of its answer's body.
struct BusyGuard(Arc<Conn>);

impl BusyGuard {
    fn new(conn: Arc<Conn>) -> BusyGuard {
        conn.busy.fetch_add(1, Ordering::SeqCst);
        conn.clock.lock().1 = None;
        conn.changed.notify_one();
        BusyGuard(conn)
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        *self.0.clock.lock() = (Instant::now(), None);
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
        self.0.changed.notify_one();
    }
}

/// The client's socket, noting the first byte of a request head that arrives while no request
/// is in flight (the header clock starts there), and writing a JSON error in place of hyper's
/// empty answer to a head it cannot read.
struct Watched {
    io: tokio::net::TcpStream,
    conn: Arc<Conn>,
    /// The JSON error being written in place of hyper's answer: its bytes, how many are out,
    /// and how many bytes of hyper's it stands for (claimed written once it is all out).
    replacing: Option<(Vec<u8>, usize, usize)>,
}

impl Watched {
    /// Writes the replacement answer, if one is under way (or `bufs` start hyper's answer to a
    /// head it could not read); `None` when hyper's bytes go out as they are.
    fn poll_replace(
        &mut self,
        cx: &mut Context<'_>,
        first: &[u8],
        total: usize,
    ) -> Option<Poll<std::io::Result<usize>>> {
        if self.replacing.is_none() {
            self.replacing = parse_error_answer(first).map(|answer| (answer, 0, total));
        }
        let (answer, sent, claimed) = self.replacing.as_mut()?;
        while *sent < answer.len() {
            match tokio::io::AsyncWrite::poll_write(Pin::new(&mut self.io), cx, &answer[*sent..]) {
                Poll::Ready(Ok(0)) => {
                    return Some(Poll::Ready(Err(std::io::ErrorKind::WriteZero.into())))
                }
                Poll::Ready(Ok(n)) => *sent += n,
                Poll::Ready(Err(e)) => return Some(Poll::Ready(Err(e))),
                Poll::Pending => return Some(Poll::Pending),
            }
        }
        let claimed = (*claimed).min(total);
        self.replacing = None;
        Some(Poll::Ready(Ok(claimed)))
    }
}

/// The JSON error to send in place of `head` when `head` is hyper's own answer to a request
/// head it could not read: `HTTP/1.1 400`, `431` or `414`, no body, no content type (every
/// handler's error names its JSON content type). `None` for anything else.
pub fn parse_error_answer(head: &[u8]) -> Option<Vec<u8>> {
    let (status, code, message) = if head.starts_with(b"HTTP/1.1 400 ") {
        (
            "400 Bad Request",
            "bad_request",
            "malformed HTTP request: its request line or a header field cannot be read",
        )
    } else if head.starts_with(b"HTTP/1.1 431 ") {
        (
            "431 Request Header Fields Too Large",
            "header_too_large",
            "the request head is too large (too many or too long header fields)",
        )
    } else if head.starts_with(b"HTTP/1.1 414 ") {
        (
            "414 URI Too Long",
            "uri_too_long",
            "the request target is too long",
        )
    } else {
        return None;
    };
    let end = head.windows(4).position(|w| w == b"\r\n\r\n")?;
    let fields = String::from_utf8_lossy(&head[..end + 2]).to_ascii_lowercase();
    if !fields.contains("\r\ncontent-length: 0\r\n") || fields.contains("\r\ncontent-type:") {
        return None;
    }
    let body = serde_json::json!({"error": {"code": code, "message": message}}).to_string();
    Some(
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before && self.conn.busy.load(Ordering::SeqCst) == 0 {
            let mut clock = self.conn.clock.lock();
            if clock.1.is_none() {
                clock.1 = Some(Instant::now());
                self.conn.changed.notify_one();
            }
        }
        r
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if let Some(p) = self.poll_replace(cx, buf, buf.len()) {
            return p;
        }
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let first = bufs
            .iter()
            .find(|b| !b.is_empty())
            .map_or(&[][..], |b| &b[..]);
        let total = bufs.iter().map(|b| b.len()).sum();
        if let Some(p) = self.poll_replace(cx, first, total) {
            return p;
        }
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// An answer body that keeps its connection marked busy until it is sent (an event stream
/// stays busy while it is open, so it is never evicted as idle).
struct Guarded {
    inner: axum::body::Body,
    _guard: BusyGuard,
}

impl http_body::Body for Guarded {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets requests in flight finish
/// for up to [`SHUTDOWN_GRACE`].
pub async fn run(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    limits: &HttpLimits,
    stats: Arc<HttpStats>,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let slots = Arc::new(Semaphore::new(stats.max_connections));
    let conns: Arc<Mutex<BTreeMap<u64, Arc<Conn>>>> = Default::default();
    let mut next_id = 0u64;
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    const MAX_READ_BUFFER: usize = 64 << 10;
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(limits.idle_timeout + limits.header_timeout)
        // A connection's read buffer (hyper's default is about 400 KiB): at the connection
        // cap that default alone could hold gigabytes of half-sent heads. Bodies stream
        // through it; a head past it is refused with 431.
        .max_buf_size(MAX_READ_BUFFER)
        .keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(e) => {
                    // Out of file descriptors or a connection reset before it was accepted:
                    // the cap leaves headroom, so this is rare; pause so as not to spin.
                    tracing::warn!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let permit = match slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => match make_room(&conns, &slots, &stats).await {
                Some(p) => p,
                None => {
                    stats.connections_refused.fetch_add(1, Ordering::Relaxed);
                    drop(stream);
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        next_id += 1;
        let id = next_id;
        let conn = Arc::new(Conn::new());
        conns.lock().insert(id, conn.clone());
        stats.connections_open.fetch_add(1, Ordering::Relaxed);
        let service = {
            let conn = conn.clone();
            let app = app.clone();
            hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let guard = BusyGuard::new(conn.clone());
                let fut = tower::ServiceExt::oneshot(app.clone(), req);
                async move {
                    let resp = match fut.await {
                        Ok(r) => r,
                        Err(e) => match e {},
                    };
                    Ok::<_, Infallible>(resp.map(|inner| Guarded {
                        inner,
                        _guard: guard,
                    }))
                }
            })
        };
        let served = graceful.watch(builder.serve_connection(
            hyper_util::rt::TokioIo::new(Watched {
                io: stream,
                conn: conn.clone(),
                replacing: None,
            }),
            service,
        ));
        let (conns, stats, limits) = (conns.clone(), stats.clone(), limits.clone());
        tokio::spawn(async move {
            tokio::select! {
                r = served => log_connection_end(peer, r),
                _ = conn.evict.notified() => {}
                _ = conn.watchdog(&limits) => {
                    tracing::debug!("{peer}: closed, idle or a request head too slow");
                }
            }
            conns.lock().remove(&id);
            stats.connections_open.fetch_sub(1, Ordering::Relaxed);
            drop(permit);
        });
    }
    drop(listener);
    drain(&conns, graceful).await;
}

/// After the shutdown signal: connections without a request in flight (idle, or a head still
/// arriving) close now; the others finish their answer (hyper's graceful shutdown ends
/// keep-alive after it), for up to [`SHUTDOWN_GRACE`].
async fn drain(
    conns: &Mutex<BTreeMap<u64, Arc<Conn>>>,
    graceful: hyper_util::server::graceful::GracefulShutdown,
) {
    for conn in conns.lock().values() {
        if conn.busy.load(Ordering::SeqCst) == 0 {
            conn.evict.notify_one();
        }
    }
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            "requests still in flight {} s after the shutdown signal: closing their connections",
            SHUTDOWN_GRACE.as_secs()
        );
    }
}

/// All slots are taken: closes the oldest connection without a request in flight and waits
/// briefly for its slot. `None` when every connection is busy.
async fn make_room(
    conns: &Mutex<BTreeMap<u64, Arc<Conn>>>,
    slots: &Arc<Semaphore>,
    stats: &HttpStats,
) -> Option<tokio::sync::OwnedSemaphorePermit> {
    let victim = {
        let mut conns = conns.lock();
        let id = conns
            .iter()
            .find(|(_, c)| c.busy.load(Ordering::SeqCst) == 0)
            .map(|(id, _)| *id)?;
        // Out of the map at once, so the next newcomer picks another victim.
        conns.remove(&id)?
    };
    victim.evict.notify_one();
    stats.connections_evicted.fetch_add(1, Ordering::Relaxed);
    tokio::time::timeout(EVICTION_WAIT, slots.clone().acquire_owned())
        .await
        .ok()?
        .ok()
}

fn log_connection_end(peer: SocketAddr, r: Result<(), hyper::Error>) {
    if let Err(e) = r {
        if e.is_timeout() {
            tracing::debug!("{peer}: closed, no complete request head in time");
        } else {
            tracing::debug!("{peer}: connection ended: {e}");
        }
    }
}

/// Whether `listen` names an address beyond loopback (`0.0.0.0:8080`, a LAN address; not
/// `127.0.0.1:8080`, `[::1]:8080` or `localhost:8080`). An address that does not resolve is left
/// to the bind, which reports it.
pub fn beyond_loopback(listen: &str) -> bool {
    use std::net::ToSocketAddrs;
    match listen.to_socket_addrs() {
        Ok(mut addrs) => addrs.any(|a| !a.ip().is_loopback()),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::parse_error_answer;

    /// hyper's answers to heads it cannot read become JSON errors; a handler's answer (JSON,
    /// with its content type) and a body are left alone.
    #[test]
    fn hyper_parse_errors_become_json() {
        let hyper = |status: &str| {
            format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\ndate: Sat, 06 Dec 2025 19:00:00 GMT\r\n\r\n")
        };
        for (status, code) in [
            ("400 Bad Request", "bad_request"),
            ("431 Request Header Fields Too Large", "header_too_large"),
            ("414 URI Too Long", "uri_too_long"),
        ] {
            let answer = parse_error_answer(hyper(status).as_bytes()).unwrap();
            let text = String::from_utf8(answer).unwrap();
            let (head, body) = text.split_once("\r\n\r\n").unwrap();
            assert!(
                head.starts_with(&format!("HTTP/1.1 {status}\r\n")),
                "{head}"
            );
            assert!(
                head.contains(&format!("content-length: {}", body.len())),
                "{head}"
            );
            let v: serde_json::Value = serde_json::from_str(body).unwrap();
            assert_eq!(v["error"]["code"], code);
        }
        let handler = "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n";
        assert!(parse_error_answer(handler.as_bytes()).is_none());
        let json = "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n{}";
        assert!(parse_error_answer(json.as_bytes()).is_none());
        assert!(parse_error_answer(hyper("200 OK").as_bytes()).is_none());
        assert!(parse_error_answer(b"HTTP/1.1 400 Bad Request\r\ncontent-len").is_none());
    }
}
