//! `Idempotency-Key` records: a client that retries a request with the same key gets the first answer again
//! instead of a second run (and a second charge).
//!
//! A record is per account and key. [`IdempotencyStore::begin`] claims the key for a request whose
//! [`fingerprint`] (method, path and body) it keeps, or says why not: the same key already answered
//! ([`Begin::Done`], with the stored answer to replay), is still running ([`Begin::Running`]), or came with
//! another request ([`Begin::Mismatch`]). The claim lasts [`IdempotencyStore::begin`]'s `lease` and is renewed
//! by its request while it runs ([`IdempotencyStore::renew`]), so a server that died mid-request does not hold
//! the key forever and a long request never loses it to its own retry. [`IdempotencyStore::finish`] stores the answer;
//! [`IdempotencyStore::abandon`] drops the claim of a request whose answer should not be replayed (a failure
//! a retry may get past), so the next try runs. Records older than [`KEEP_FOR`] count as absent and are swept
//! by [`IdempotencyStore::forget_before`].
//!
//! [`IdempotencyStore`] is the backend-neutral interface; `SqliteIdempotencyStore` the embedded backend (feature
//! `sqlite`, the default), `PgIdempotencyStore` the backend for several servers on one PostgreSQL database
//! (feature `postgres`). Not here: which requests are idempotent, which answers are kept, HTTP (the API decides).
#![deny(missing_docs)]

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

use std::time::Duration;

use company_model::Tenant;
use sha2::{Digest, Sha256};

#[cfg(feature = "postgres")]
pub use postgres::PgIdempotencyStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteIdempotencyStore;

/// How long an answer is kept for retries: 24 hours.
pub const KEEP_FOR: Duration = Duration::from_hours(24);

/// The longest key accepted, in characters.
pub const MAX_KEY_LEN: usize = 255;

/// Whether `key` may be an idempotency key: 1 to [`MAX_KEY_LEN`] visible ASCII characters (a UUID, a job name).
pub fn key_allowed(key: &str) -> bool {
    (1..=MAX_KEY_LEN).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_graphic())
}

/// What identifies a request for its key: SHA-256 of its method, path and body, in hex.
pub fn fingerprint(method: &str, path: &str, body: &[u8]) -> String {
    let mut hasher = Sha256::new();
    for part in [method.as_bytes(), b"\n", path.as_bytes(), b"\n", body] {
        hasher.update(part);
    }
    hex::encode(hasher.finalize())
}

/// A stored answer, as the API replays it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The headers worth replaying (content type, credits, location), as name and value.
    pub headers: Vec<(String, String)>,
    /// The body as sent.
    pub body: Vec<u8>,
}

/// What [`IdempotencyStore::begin`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Begin {
    /// The key is this request's now: run it, then finish or abandon.
    Started,
    /// The key already answered this request: replay the answer.
    Done(StoredAnswer),
    /// The key's first request is still running (on this server or another).
    Running,
    /// The key was used with another request (method, path or body differ).
    Mismatch,
}

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
#[error("the idempotency store failed: {0}")]
pub struct IdempotencyError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

/// Where idempotency records live. Implementations must be safe to share between tasks and servers: `begin`
/// is atomic, so of two requests with one key exactly one is [`Begin::Started`].
#[async_trait::async_trait]
pub trait IdempotencyStore: Send + Sync + std::fmt::Debug {
    /// Claims `key` of `tenant` for the request `fingerprint` at `now` for `lease`, or says why not. A record
    /// older than [`KEEP_FOR`], or a claim whose lease ended without an answer, is taken over.
    async fn begin(
        &self,
        tenant: Tenant,
        key: &str,
        fingerprint: &str,
        now: jiff::Timestamp,
        lease: Duration,
    ) -> Result<Begin, IdempotencyError>;
    /// Stores the answer of the request that holds `key`.
    async fn finish(
        &self,
        tenant: Tenant,
        key: &str,
        answer: &StoredAnswer,
    ) -> Result<(), IdempotencyError>;
    /// Extends the running claim on `key` to `now + lease`: the request holding it renews it while it runs, so
    /// the claim lapses only when its server stops renewing (it died), never under a request that takes longer
    /// than one lease. False when there is no running claim (it was answered or abandoned).
    async fn renew(
        &self,
        tenant: Tenant,
        key: &str,
        now: jiff::Timestamp,
        lease: Duration,
    ) -> Result<bool, IdempotencyError>;
    /// Drops the claim of the request that holds `key`, so a retry runs again.
    async fn abandon(&self, tenant: Tenant, key: &str) -> Result<(), IdempotencyError>;
    /// Deletes records made before `cutoff`; returns how many. Also recounts each account's
    /// [`IdempotencyStore::stored_bytes`] from the records kept, so the count never drifts for long.
    async fn forget_before(&self, cutoff: jiff::Timestamp) -> Result<u64, IdempotencyError>;
    /// The bytes of answers the account has kept (each answer's body, counted when it is stored and recounted
    /// when old records are forgotten): what its quota on them is checked against before a key is claimed.
    async fn stored_bytes(&self, tenant: Tenant) -> Result<u64, IdempotencyError>;

    /// Deletes the records older than [`KEEP_FOR`] (they answer nothing any more); returns how many.
    async fn forget_expired(&self) -> Result<u64, IdempotencyError> {
        let keep = jiff::SignedDuration::try_from(KEEP_FOR).unwrap_or(jiff::SignedDuration::ZERO);
        self.forget_before(jiff::Timestamp::now() - keep).await
    }
}

/// The headers of a stored answer as JSON text (`[[name, value], …]`), for the backends' one column.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn headers_text(headers: &[(String, String)]) -> String {
    serde_json::to_string(headers).unwrap_or_else(|_| "[]".to_owned())
}

/// [`headers_text`] read back; text that does not parse gives no headers.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn headers_from_text(text: &str) -> Vec<(String, String)> {
    serde_json::from_str(text).unwrap_or_default()
}
