use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tracing::{Instrument, info, warn};

use crate::Response;

/// Time given to requests in flight at shutdown.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// What one client connection may take; slow or idle clients are shed by these.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// Time for a request's headers to arrive, counted from the connection's start or the previous response:
    /// also the longest a kept-alive HTTP/1.1 connection sits idle, and the HTTP/2 ping interval and time-out.
    /// Default 10 s.
    pub header_timeout: Duration,
    /// Time for a request's body to arrive, for handlers that read it with [`crate::read_body`]. Default 30 s.
    pub body_timeout: Duration,
    /// Connections open at once; the accept loop waits while this many are open, and further clients queue in
    /// the kernel's listen backlog. Default 4096.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 4096,
        }
    }
}

/// Serves HTTP/1.1 and HTTP/2 (cleartext) on `listener` with `handler` until `shutdown` resolves, then lets
/// requests in flight finish (up to 30 s). Connections are bounded by `limits`.
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
    // HTTP/2 connections are pinged while idle and closed when the peer stops answering.
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(limits.header_timeout)
        .keep_alive_timeout(limits.header_timeout);
    let open_connections = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
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
        let handler = handler.clone();
        let builder = builder.clone();
        let watcher = graceful.watcher();
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
            let service = hyper::service::service_fn(move |request| {
                let handler = handler.clone();
                async move { Ok::<_, std::convert::Infallible>(logged(handler, request).await) }
            });
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            if let Err(error) = watcher.watch(connection.into_owned()).await {
                tracing::debug!(%peer, error = %error, "connection ended with an error");
            }
            drop(permit);
        });
    }
    info!("shutting down: waiting for requests in flight");
    if tokio::time::timeout(DRAIN_TIMEOUT, graceful.shutdown())
        .await
        .is_err()
    {
        warn!("requests still in flight after {DRAIN_TIMEOUT:?}; stopping anyway");
    }
    Ok(())
}

/// Runs the handler inside a `request` span and logs the outcome.
async fn logged<H, F>(handler: H, request: http::Request<Incoming>) -> Response
where
    H: Fn(http::Request<Incoming>) -> F,
    F: Future<Output = Response>,
{
    let started = Instant::now();
    let span =
        tracing::info_span!("request", method = %request.method(), path = %request.uri().path());
    let response = handler(request).instrument(span.clone()).await;
    span.in_scope(|| {
        info!(
            status = response.status().as_u16(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "served"
        );
    });
    response
}
