//! Serving HTTP on hyper with the limits a server on a public address needs, for any handler.
//!
//! - [`serve`] accepts connections on a listener until a shutdown future resolves, speaks HTTP/1.1 and
//!   cleartext HTTP/2, and sheds clients that are slow or idle ([`ConnectionLimits`]); requests in flight at
//!   shutdown get up to 30 s to finish. Every request gets a [`RequestId`] (the client's `X-Request-Id` when
//!   well-formed), returned as `X-Request-Id` and carried by its log lines, and is logged with its method,
//!   path, status and time; the connection's peer is in the request's extensions ([`ClientAddr`]).
//! - [`read_body`] reads a request body up to a size limit and within a time-out, never buffering more than
//!   the limit.
//!
//! - [`Routes`] is a route table: each path written once with the operation each method runs, matched with
//!   matchit; a handler asks it which operation a request is, and what `Allow` says when there is none.
//!
//! Not here: what a route does, authentication, error bodies: the handler decides every response. The API
//! (`http-api`) and the dashboard (`dashboard`) are such handlers.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! use bytes::Bytes;
//! use http_body_util::Full;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let handler = |_request| async { http::Response::new(Full::new(Bytes::from("hello"))) };
//! http_serve::serve(listener, http_serve::ConnectionLimits::default(), handler, std::future::pending()).await
//! # }
//! ```
#![deny(missing_docs)]

mod body;
mod routes;
mod server;

pub use body::{BodyError, read_body};
pub use routes::{Found, Route, Routes};
pub use server::{ClientAddr, ConnectionLimits, REQUEST_ID, RequestId, serve};

/// The response type of every handler: a whole body in memory.
pub type Response = http::Response<http_body_util::Full<bytes::Bytes>>;
