use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tracing::{Instrument, info, warn};

use crate::Response;

/// Time given to requests in flight at shutdown.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// What one client connection may take; slow or idle clients are shed by these.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// Time for a request's headers to arrive, counted from the connection's start or the previous response:
    /// also the longest a kept-alive connection sits idle with no request in flight (HTTP/1.1 and HTTP/2: an
    /// HTTP/2 client that only answers pings is closed too, with a GOAWAY), and the HTTP/2 ping interval and
    /// time-out. Default 10 s.
    pub header_timeout: Duration,
    /// Time for a request's body to arrive, for handlers that read it with [`crate::read_body`]. Default 30 s.
    pub body_timeout: Duration,
    /// Connections open at once; the accept loop waits while this many are open, and further clients queue in
    /// the kernel's listen backlog. Default 4096.
    pub max_connections: usize,
    /// Connections one client address may have open at once (IPv6 per /64); one more is closed as soon as it is
    /// accepted, so one client cannot take the slots of [`ConnectionLimits::max_connections`] from the others.
    /// 0: no cap (the right setting behind a reverse proxy, whose address every connection has). Default 256.
    pub max_connections_per_address: usize,
    /// Time a write to the client may make no progress before the connection is closed: a client that stops
    /// reading its response frees its connection after this. Default 30 s.
    pub write_timeout: Duration,
    /// Path prefixes whose rest is a secret (an invitation link's token, `/dashboard/invitations/`): such a path
    /// is logged as the prefix followed by `<redacted>`, so no log line carries the secret. Default none.
    pub secret_path_prefixes: &'static [&'static str],
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 4096,
            max_connections_per_address: 256,
            write_timeout: Duration::from_secs(30),
            secret_path_prefixes: &[],
        }
    }
}

/// Serves HTTP/1.1 and HTTP/2 (cleartext) on `listener` with `handler` until `shutdown` resolves, then lets
/// requests in flight finish (up to 30 s). Connections are bounded by `limits`: how many in all and per client
/// address, how long headers, an idle connection and a stalled write may take.
///
/// # Errors
/// None in practice: accept failures (e.g. out of file descriptors) are logged and retried, connection errors
/// are logged and the server goes on. The `Result` leaves room for listener set-up failures.
pub async fn serve<H, F>(
    listener: TcpListener,
    limits: ConnectionLimits,
    handler: H,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    H: Fn(http::Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response> + Send + 'static,
{
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // hyper starts the header time-out when a connection opens and again after each response, so it also closes
    // idle kept-alive connections.
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    // HTTP/2 connections are pinged while idle and closed when the peer stops answering; one that answers is
    // closed by the idle check below.
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(limits.header_timeout)
        .keep_alive_timeout(limits.header_timeout);
    let open_connections = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let per_address = PerAddress::new(limits.max_connections_per_address);
    let (stopping, stop) = tokio::sync::watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        // At the cap, stop accepting: further clients wait in the kernel's backlog instead of costing memory here.
        let permit = tokio::select! {
            permit = Arc::clone(&open_connections).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(slot) = per_address.enter(peer.ip()) else {
            tracing::debug!(%peer, "connection closed: its address has as many open as it may");
            metrics::counter!("company_data_connections_refused_total", "why" => "per_address")
                .increment(1);
            continue;
        };
        let handler = handler.clone();
        let builder = builder.clone();
        let mut stop = stop.clone();
        tokio::spawn(async move {
            // The protocol sniffing of `auto` has no time-out of its own: a client that connects and sends
            // nothing would be kept forever.
            let mut first = [0u8; 1];
            if !matches!(
                tokio::time::timeout(limits.header_timeout, stream.peek(&mut first)).await,
                Ok(Ok(1..))
            ) {
                tracing::debug!(%peer, "connection closed: nothing sent within the header time-out");
                return;
            }
            let activity = Arc::new(Activity::new());
            let service = {
                let activity = Arc::clone(&activity);
                hyper::service::service_fn(move |mut request: http::Request<Incoming>| {
                    let handler = handler.clone();
                    let activity = Arc::clone(&activity);
                    request.extensions_mut().insert(ClientAddr(peer));
                    async move {
                        let busy = Busy::new(&activity);
                        let response = logged(handler, request, limits.secret_path_prefixes).await;
                        // The connection stays busy until the body is sent, and its progress is watched.
                        let response = response.map(|body| Tracked::wrap(body, &activity));
                        drop(busy);
                        Ok::<_, std::convert::Infallible>(response)
                    }
                })
            };
            // A write that makes no progress for the write time-out fails, and the connection with it.
            let mut io = tokio_io_timeout::TimeoutStream::new(stream);
            io.set_write_timeout(Some(limits.write_timeout));
            let io = Counted {
                inner: Box::pin(io),
                written: Arc::clone(&activity.written),
            };
            let connection = builder
                .serve_connection(TokioIo::new(io), service)
                .into_owned();
            tokio::pin!(connection);
            let mut check =
                tokio::time::interval((limits.header_timeout / 4).max(Duration::from_millis(10)));
            check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            // Once a graceful close began: when the connection is dropped whatever is still open on it.
            let mut closing_until: Option<tokio::time::Instant> = None;
            loop {
                tokio::select! {
                    ended = connection.as_mut() => {
                        if let Err(error) = ended {
                            tracing::debug!(%peer, error = %error, "connection ended with an error");
                        }
                        break;
                    }
                    // Shutdown: requests in flight finish, then the connection closes.
                    _ = stop.changed(), if closing_until.is_none() => {
                        closing_until = Some(tokio::time::Instant::now() + DRAIN_TIMEOUT);
                        connection.as_mut().graceful_shutdown();
                    }
                    _ = check.tick() => {
                        let now = tokio::time::Instant::now();
                        activity.note_bytes_written();
                        // Past its deadline and with nothing moving (h2 may still be sending what a body gave it).
                        if closing_until.is_some_and(|until| now >= until)
                            && activity.quiet_for() >= limits.write_timeout
                        {
                            tracing::debug!(%peer, "connection dropped: still open after its graceful close");
                            break;
                        }
                        // A response that stopped moving, neither a frame taken from its body nor bytes of it
                        // written (an HTTP/2 client that never opens its flow-control window: nothing is pending,
                        // so no write can time out), ends the connection.
                        if activity.stalled_for() >= limits.write_timeout {
                            tracing::debug!(%peer, "connection dropped: a response made no progress");
                            break;
                        }
                        if closing_until.is_none() && activity.idle_for() >= limits.header_timeout {
                            tracing::debug!(%peer, "connection closed: idle");
                            closing_until = Some(now + limits.write_timeout);
                            connection.as_mut().graceful_shutdown();
                        }
                    }
                }
            }
            drop(slot);
            drop(permit);
        });
    }
    info!("shutting down: waiting for requests in flight");
    let _ = stopping.send(true);
    // Every connection holds a permit until it ends: all of them back means every connection ended.
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout(DRAIN_TIMEOUT, open_connections.acquire_many(all))
        .await
        .is_err()
    {
        warn!("requests still in flight after {DRAIN_TIMEOUT:?}; stopping anyway");
    }
    Ok(())
}

/// What a connection is doing: requests whose handlers run, response bodies still being sent, when it last did
/// anything and when a body last moved. The idle check closes it after the header time-out with nothing in
/// flight; a body that does not move for the write time-out drops it.
#[derive(Debug)]
struct Activity {
    /// Handlers running and bodies not yet sent.
    in_flight: std::sync::atomic::AtomicUsize,
    /// Bodies not yet sent.
    bodies: std::sync::atomic::AtomicUsize,
    /// Of those, bodies waiting for their own next frame (the server is the slow side, not the client).
    producing: std::sync::atomic::AtomicUsize,
    /// When the last handler or body ended.
    last: std::sync::Mutex<tokio::time::Instant>,
    /// When a body last gave a frame to send, or the connection last wrote a good number of bytes.
    progress: std::sync::Mutex<tokio::time::Instant>,
    /// Bytes written to the client so far ([`Counted`]).
    written: Arc<std::sync::atomic::AtomicU64>,
    /// `written` when progress was last stamped from it.
    written_seen: std::sync::atomic::AtomicU64,
}

impl Activity {
    fn new() -> Self {
        let now = tokio::time::Instant::now();
        Self {
            in_flight: std::sync::atomic::AtomicUsize::new(0),
            bodies: std::sync::atomic::AtomicUsize::new(0),
            producing: std::sync::atomic::AtomicUsize::new(0),
            last: std::sync::Mutex::new(now),
            progress: std::sync::Mutex::new(now),
            written: Arc::default(),
            written_seen: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Counts bytes written since the last look as progress once they are more than an HTTP/2 connection's
    /// pings and acknowledgements (a few dozen bytes): a slow reader taking a large frame bit by bit is moving,
    /// a client whose window stays shut is not.
    fn note_bytes_written(&self) {
        const PROGRESS_BYTES: u64 = 1024;
        let written = self.written.load(std::sync::atomic::Ordering::Relaxed);
        let seen = self.written_seen.load(std::sync::atomic::Ordering::Relaxed);
        if written.saturating_sub(seen) >= PROGRESS_BYTES {
            self.written_seen
                .store(written, std::sync::atomic::Ordering::Relaxed);
            Self::stamp(&self.progress);
        }
    }

    fn stamp(cell: &std::sync::Mutex<tokio::time::Instant>) {
        *cell
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = tokio::time::Instant::now();
    }

    fn since(cell: &std::sync::Mutex<tokio::time::Instant>) -> Duration {
        cell.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .elapsed()
    }

    /// How long the connection has had nothing in flight and written nothing of note (zero while it has: an
    /// HTTP/2 connection may still be sending what a body that already ended gave it).
    fn idle_for(&self) -> Duration {
        if self.in_flight.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            return Duration::ZERO;
        }
        Self::since(&self.last).min(self.quiet_for())
    }

    /// How long since anything moved: a body's frame taken, or bytes written.
    fn quiet_for(&self) -> Duration {
        Self::since(&self.progress)
    }

    /// How long the bodies being sent have waited for the client to take their last frame (zero when none is
    /// being sent, or one is waiting for its own data: a slow answer is not a stalled client).
    fn stalled_for(&self) -> Duration {
        if self.bodies.load(std::sync::atomic::Ordering::SeqCst) == 0
            || self.producing.load(std::sync::atomic::Ordering::SeqCst) > 0
        {
            return Duration::ZERO;
        }
        Self::since(&self.progress)
    }
}

/// A handler or a body in flight on a connection, counted until dropped.
struct Busy(Arc<Activity>);

impl Busy {
    fn new(activity: &Arc<Activity>) -> Self {
        activity
            .in_flight
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Self(Arc::clone(activity))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        Activity::stamp(&self.0.last);
        self.0
            .in_flight
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The client's connection, counting the bytes written to it (progress of a response sent a frame at a time).
struct Counted<S> {
    inner: std::pin::Pin<Box<S>>,
    written: Arc<std::sync::atomic::AtomicU64>,
}

impl<S: tokio::io::AsyncRead> tokio::io::AsyncRead for Counted<S> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.inner.as_mut().poll_read(cx, buf)
    }
}

impl<S: tokio::io::AsyncWrite> tokio::io::AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let polled = self.inner.as_mut().poll_write(cx, buf);
        if let std::task::Poll::Ready(Ok(n)) = &polled {
            self.written
                .fetch_add(*n as u64, std::sync::atomic::Ordering::Relaxed);
        }
        polled
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let polled = self.inner.as_mut().poll_write_vectored(cx, bufs);
        if let std::task::Poll::Ready(Ok(n)) = &polled {
            self.written
                .fetch_add(*n as u64, std::sync::atomic::Ordering::Relaxed);
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.inner.as_mut().poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.inner.as_mut().poll_shutdown(cx)
    }
}

/// A response body counted as in flight on its connection until it is dropped (sent whole, or abandoned), its
/// frames stamped as progress.
struct Tracked {
    inner: crate::Body,
    _busy: Busy,
    activity: Arc<Activity>,
    /// The last poll found no frame ready: the body is producing, counted in `Activity::producing`.
    producing: bool,
}

impl Tracked {
    fn wrap(inner: crate::Body, activity: &Arc<Activity>) -> crate::Body {
        use http_body_util::BodyExt;
        activity
            .bodies
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Activity::stamp(&activity.progress);
        Self {
            inner,
            _busy: Busy::new(activity),
            activity: Arc::clone(activity),
            producing: false,
        }
        .boxed_unsync()
    }

    /// Records whether the body is waiting for its own data.
    fn set_producing(&mut self, producing: bool) {
        if producing != self.producing {
            self.producing = producing;
            if producing {
                self.activity
                    .producing
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            } else {
                self.activity
                    .producing
                    .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.set_producing(false);
        self.activity
            .bodies
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl hyper::body::Body for Tracked {
    type Data = bytes::Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let polled = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            std::task::Poll::Pending => self.set_producing(true),
            std::task::Poll::Ready(Some(Ok(_))) => {
                self.set_producing(false);
                Activity::stamp(&self.activity.progress);
            }
            std::task::Poll::Ready(_) => self.set_producing(false),
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// Open connections per client address (IPv6 per /64), capped.
#[derive(Clone, Debug)]
struct PerAddress {
    most: usize,
    open: Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>,
}

/// One open connection of an address; leaves when dropped.
struct AddressSlot {
    counts: Option<(PerAddress, std::net::IpAddr)>,
}

impl PerAddress {
    fn new(most: usize) -> Self {
        Self {
            most,
            open: Arc::default(),
        }
    }

    /// A slot for one more connection of `client`, or `None` at the cap.
    fn enter(&self, client: std::net::IpAddr) -> Option<AddressSlot> {
        if self.most == 0 {
            return Some(AddressSlot { counts: None });
        }
        let key = shared_limits::address_bucket(client);
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = open.entry(key).or_insert(0);
        if *count >= self.most {
            return None;
        }
        *count += 1;
        Some(AddressSlot {
            counts: Some((self.clone(), key)),
        })
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        if let Some((per_address, key)) = &self.counts {
            let mut open = per_address
                .open
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(count) = open.get_mut(key) {
                *count -= 1;
                if *count == 0 {
                    open.remove(key);
                }
            }
        }
    }
}

/// The address of the connection a request came on, in the request's extensions. Behind a reverse proxy it is
/// the proxy's; a handler that trusts the proxy reads the client's from the proxy's header instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddr(pub SocketAddr);

/// The client's address, the one rule for every handler that counts per client: from the trusted reverse
/// proxy's header `trusted_header` when one is configured and the request carries it (its last entry: the one
/// that proxy added, e.g. in `X-Forwarded-For: spoofed, client`), else the connection's peer as [`serve`]
/// recorded it ([`ClientAddr`]); `None` when neither is there (a request that did not come through [`serve`]).
/// Configure a header only behind a proxy that sets it: otherwise clients could choose their address.
pub fn client_address(
    headers: &http::HeaderMap,
    extensions: &http::Extensions,
    trusted_header: Option<&http::HeaderName>,
) -> Option<std::net::IpAddr> {
    let from_proxy = trusted_header
        .and_then(|name| headers.get_all(name).iter().next_back())
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.rsplit(',').next())
        .and_then(|last| last.trim().parse().ok());
    from_proxy.or_else(|| extensions.get::<ClientAddr>().map(|peer| peer.0.ip()))
}

/// The request's id, in the request's extensions and returned as `X-Request-Id` on its response: the client's
/// own `X-Request-Id` when it is well-formed (1 to 64 characters of `A-Z a-z 0-9 - _ . :`), else 32 random hex
/// digits. Every log line of the request carries it, and a handler may put it in error bodies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestId(pub String);

/// The request-id header.
pub const REQUEST_ID: http::HeaderName = http::HeaderName::from_static("x-request-id");

impl RequestId {
    /// The client's id from `headers` when well-formed, else a new one.
    pub fn from_headers(headers: &http::HeaderMap) -> Self {
        headers
            .get(&REQUEST_ID)
            .and_then(|value| value.to_str().ok())
            .filter(|text| Self::well_formed(text))
            .map_or_else(Self::generate, |text| Self(text.to_owned()))
    }

    /// Whether `text` may be used as a request id as sent: it goes into logs and headers unescaped.
    pub fn well_formed(text: &str) -> bool {
        (1..=64).contains(&text.len())
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
    }

    fn generate() -> Self {
        let bits: u128 = rand::random();
        Self(format!("{bits:032x}"))
    }
}

/// Runs the handler inside a `request` span and logs the outcome. The span has the fields `method`, `path`,
/// `request_id`, and `account`, `mode`, `key`, `records`, `credits` left empty for the handler to record on
/// `tracing::Span::current()` once it knows them (the API does).
async fn logged<H, F>(
    handler: H,
    mut request: http::Request<Incoming>,
    secret_path_prefixes: &[&str],
) -> Response
where
    H: Fn(http::Request<Incoming>) -> F,
    F: Future<Output = Response>,
{
    let started = Instant::now();
    let id = RequestId::from_headers(request.headers());
    let span = tracing::info_span!(
        "request",
        method = %request.method(),
        path = %loggable_path(request.uri().path(), secret_path_prefixes),
        request_id = %id.0,
        account = tracing::field::Empty,
        mode = tracing::field::Empty,
        key = tracing::field::Empty,
        records = tracing::field::Empty,
        credits = tracing::field::Empty,
    );
    let header = http::HeaderValue::from_str(&id.0).ok();
    request.extensions_mut().insert(id);
    let mut response = handler(request).instrument(span.clone()).await;
    if let Some(header) = header {
        response.headers_mut().insert(REQUEST_ID, header);
    }
    span.in_scope(|| {
        info!(
            status = response.status().as_u16(),
            duration_ms = started.elapsed().as_secs_f64() * 1000.0,
            "served"
        );
    });
    response
}

/// `path` as a log line may show it: under one of `secret_path_prefixes`, the prefix and `<redacted>`.
fn loggable_path<'a>(path: &'a str, secret_path_prefixes: &[&str]) -> std::borrow::Cow<'a, str> {
    match secret_path_prefixes
        .iter()
        .find(|prefix| path.len() > prefix.len() && path.starts_with(**prefix))
    {
        Some(prefix) => format!("{prefix}<redacted>").into(),
        None => path.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_paths_are_logged_without_their_secret() {
        let secret = ["/dashboard/invitations/"];
        assert_eq!(
            loggable_path("/dashboard/invitations/AbC123secretToken", &secret),
            "/dashboard/invitations/<redacted>"
        );
        assert_eq!(
            loggable_path("/dashboard/invitations/", &secret),
            "/dashboard/invitations/"
        );
        assert_eq!(loggable_path("/dashboard/keys", &secret), "/dashboard/keys");
        assert_eq!(
            loggable_path("/dashboard/invitations/x", &[]),
            "/dashboard/invitations/x"
        );
    }

    #[test]
    fn request_ids_are_kept_when_well_formed_and_made_otherwise() {
        let mut headers = http::HeaderMap::new();
        headers.insert(REQUEST_ID, http::HeaderValue::from_static("abc-123_x.y:z"));
        assert_eq!(RequestId::from_headers(&headers).0, "abc-123_x.y:z");
        for bad in ["", "has space", "quote\"", &"x".repeat(65)] {
            headers.insert(
                REQUEST_ID,
                http::HeaderValue::from_str(bad).expect("header value"),
            );
            let id = RequestId::from_headers(&headers).0;
            assert_ne!(id, bad);
            assert_eq!(id.len(), 32);
            assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        }
        let (a, b) = (
            RequestId::from_headers(&http::HeaderMap::new()),
            RequestId::from_headers(&http::HeaderMap::new()),
        );
        assert_ne!(a, b);
    }
}
