//! What every store of the service is built on, whichever engine (`sqlite-pool` or `pg-pool`):
//!
//! - [`StoreError`]: a store's failure with its [`FailureKind`], so that a caller can tell "the database is
//!   unavailable, try again" from "the database refused this" without knowing the driver
//!   ([`is_unavailable`] finds it anywhere in an error's chain);
//! - [`time`]: how a time is kept in a column (milliseconds since the Unix epoch in SQLite, `timestamptz` in
//!   PostgreSQL) and read back as a [`jiff::Timestamp`].
//!
//! Not here: any driver, table or query; the pools classify their drivers' errors, the stores own their
//! tables and their migrations.
//!
//! ```
//! use store_base::{FailureKind, StoreError, is_unavailable};
//!
//! let down = StoreError::new(FailureKind::Unavailable, std::io::Error::other("connection refused"));
//! let wrapped: Box<dyn std::error::Error + Send + Sync> = Box::new(down);
//! assert!(is_unavailable(wrapped.as_ref()));
//! assert_eq!(wrapped.to_string(), "connection refused");
//! ```
#![deny(missing_docs)]

use std::error::Error;

pub mod time;

/// What a store's failure means to its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailureKind {
    /// The database cannot be reached (down, restarting, out of connections): the same request may succeed in
    /// a moment, and nothing it asked for was done.
    Unavailable,
    /// The database answered and refused or failed the statement: retrying the same request will not help.
    Refused,
}

/// A store's failure: its [`FailureKind`] and the driver's error, whose message (and chain of sources) it shows
/// unchanged.
#[derive(Debug)]
pub struct StoreError {
    kind: FailureKind,
    source: Box<dyn Error + Send + Sync>,
}

impl StoreError {
    /// `source` classified as `kind`.
    pub fn new(kind: FailureKind, source: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        Self {
            kind,
            source: source.into(),
        }
    }

    /// What the failure means to the caller.
    pub fn kind(&self) -> FailureKind {
        self.kind
    }

    /// The driver's error.
    pub fn driver_error(&self) -> &(dyn Error + Send + Sync + 'static) {
        self.source.as_ref()
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.source.fmt(f)
    }
}

impl Error for StoreError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source.source()
    }
}

/// Whether `error`, or any error in its chain of sources, is a [`StoreError`] of [`FailureKind::Unavailable`]:
/// the test an HTTP layer answers "503, retry" by.
pub fn is_unavailable(error: &(dyn Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(failure) = error.downcast_ref::<StoreError>() {
            return failure.kind == FailureKind::Unavailable;
        }
        next = error.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error that wraps another, as a store's own error type wraps its backend's.
    #[derive(Debug, thiserror::Error)]
    #[error("the store failed")]
    struct Wrapping(#[source] Box<dyn Error + Send + Sync>);

    #[test]
    fn the_kind_is_found_anywhere_in_the_chain() {
        let unavailable = Wrapping(Box::new(StoreError::new(
            FailureKind::Unavailable,
            "no connection",
        )));
        assert!(is_unavailable(&unavailable));
        let refused = Wrapping(Box::new(StoreError::new(
            FailureKind::Refused,
            "duplicate key",
        )));
        assert!(!is_unavailable(&refused));
        assert!(!is_unavailable(&Wrapping("plain".into())));
    }

    #[test]
    fn the_message_is_the_drivers() {
        let error = StoreError::new(FailureKind::Refused, "duplicate key value");
        assert_eq!(error.to_string(), "duplicate key value");
        assert_eq!(error.kind(), FailureKind::Refused);
        assert_eq!(error.driver_error().to_string(), "duplicate key value");
    }
}
