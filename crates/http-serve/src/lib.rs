//! Serving HTTP on hyper with the limits a server on a public address needs, for any handler.
//!
//! - [`serve`] accepts connections on a listener until a shutdown future resolves, speaks HTTP/1.1 and
//!   cleartext HTTP/2, and sheds clients that are slow or idle ([`ConnectionLimits`]); requests in flight at
//!   shutdown get up to 30 s to finish. Every request gets a [`RequestId`] (the client's `X-Request-Id` when
//!   well-formed), returned as `X-Request-Id` and carried by its log lines, and is logged with its method,
//!   path, status and time; the connection's peer is in the request's extensions ([`ClientAddr`]).
//! - [`read_body`] (or [`read_body_of`], from its parts) reads a request body up to a size limit and within a
//!   time-out, never buffering more than the limit; a response's [`Body`] is [`full`] or [`streamed`] chunk by chunk.
//!
//! - [`RouteTable`] is a route table: each path written once with the operation each method runs, matched with
//!   matchit; a handler asks it which operation a request is, and what `Allow` says when there is none.
//!
//! Not here: what a route does, authentication, error bodies: the handler decides every response. The API
//! (`http-api`) and the dashboard (`dashboard`) are such handlers.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let handler = |_request| async { http::Response::new(http_serve::full("hello")) };
//! http_serve::serve(listener, http_serve::ConnectionLimits::default(), handler, std::future::pending()).await
//! # }
//! ```
#![deny(missing_docs)]

mod body;
mod routes;
mod server;

pub use body::{BodyError, read_body, read_body_of};
pub use routes::{Found, Route, RouteTable};
pub use server::{ClientAddr, ConnectionLimits, REQUEST_ID, RequestId, client_address, serve};

/// A wait as `Retry-After` gives it (RFC 9110's delay-seconds): [`shared_limits::wait_seconds`], whole seconds
/// rounded up, the rule the library crates' refusal messages tell their waits by too.
pub fn retry_after_seconds(wait: std::time::Duration) -> u64 {
    shared_limits::wait_seconds(wait)
}

/// A response body: whole in memory ([`full`]) or produced chunk by chunk as the client reads ([`streamed`]).
pub type Body = http_body_util::combinators::UnsyncBoxBody<bytes::Bytes, std::io::Error>;

/// The response type of every handler.
pub type Response = http::Response<Body>;

/// A body of `bytes`, whole.
pub fn full(bytes: impl Into<bytes::Bytes>) -> Body {
    use http_body_util::BodyExt;
    http_body_util::Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// A body streamed from `chunks`: each is written as the connection takes it, so an answer of any size needs
/// one chunk in memory at a time. An error ends the body early: the client sees the connection close before
/// the end (HTTP/1.1 chunked encoding without its last chunk; an HTTP/2 stream reset).
pub fn streamed<S>(chunks: S) -> Body
where
    S: futures::Stream<Item = Result<bytes::Bytes, std::io::Error>> + Send + 'static,
{
    use futures::TryStreamExt;
    use http_body_util::BodyExt;
    http_body_util::StreamBody::new(chunks.map_ok(hyper::body::Frame::data)).boxed_unsync()
}
