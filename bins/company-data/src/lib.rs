//! The company-data server: HTTP on hyper over the library crates.
//!
//! [`App`] wires the stores, the fetcher and the lookup together from [`Settings`]; [`serve`] runs the HTTP
//! server on a listener until a shutdown future resolves (tests bind port 0 and pass their own shutdown).
//! The routes, the one mapping from errors to HTTP statuses, and the OpenAPI document live here and nowhere
//! else; the library crates know nothing of HTTP. The dashboard (`/dashboard`, server-rendered HTML) is served by
//! the same server over the same parts.

// The benchmark-only build leaves the key checks unused.
#![cfg_attr(feature = "bench-no-auth", allow(dead_code, unused_imports))]
#![recursion_limit = "512"] // the OpenAPI document is one large `json!` literal

mod api_error;
mod app;
mod auth;
mod dashboard;
mod openapi;
mod server;

pub use app::{App, ConnectionLimits, FirstKey, Settings, lock_database};
pub use server::{MAX_BODY_BYTES, serve};
