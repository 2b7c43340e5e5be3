//! API keys: who may call the service, and on which account.
//!
//! - A key is `cdk_` followed by 40 random base62 characters (about 238 bits), shown once at creation
//!   ([`ApiKeys::create`]). The store keeps only its prefix (first 12 characters, used to find the row), its
//!   suffix (last 4, to recognise it in lists) and an argon2id hash (spec 5.3).
//! - [`ApiKeys::verify`] checks a presented key. Argon2 runs once per key on the blocking pool; then the key is
//!   remembered in memory (by its SHA-256 digest, never in clear) and re-checked against the store every
//!   [`ApiKeys::DEFAULT_REVALIDATE_AFTER`], so a revoked key stops working within seconds on every server. An
//!   unknown prefix still costs one argon2 verification, so timing does not tell which prefixes exist.
//! - [`ApiKey`] never prints its secret in `Debug` or `Display`.
//!
//! [`KeyStore`] is the backend-neutral interface; `SqliteKeyStore` the embedded backend (feature `sqlite`, the
//! default), `PgKeyStore` the backend for several servers on one PostgreSQL database (feature `postgres`).
//! Not here: accounts and credits (`credit-ledger`), HTTP headers.
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use std::sync::Arc;
//! use api_keys::{ApiKeys, SqliteKeyStore};
//! use company_model::AccountId;
//! let dir = tempfile::tempdir()?;
//! let keys = ApiKeys::new(Arc::new(SqliteKeyStore::open(&dir.path().join("keys.db")).await?));
//! let (key, info) = keys.create(AccountId(1), Some("ci")).await?;
//! assert!(format!("{key:?}").contains("redacted"));
//! assert_eq!(keys.verify(key.expose()).await?.account, AccountId(1));
//! keys.revoke(info.id).await?;
//! assert!(keys.verify(key.expose()).await.is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```
#![deny(missing_docs)]

mod key;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;
mod verify;

pub use key::{ApiKey, KEY_PREFIX};
#[cfg(feature = "postgres")]
pub use postgres::PgKeyStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteKeyStore;
pub use verify::{ApiKeys, VerifiedKey};

use company_model::AccountId;

/// The id of a stored key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(pub i64);

impl std::fmt::Display for KeyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A stored key, without its secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRecord {
    /// Its id.
    pub id: KeyId,
    /// The account it spends from.
    pub account: AccountId,
    /// A label given at creation.
    pub name: Option<String>,
    /// The first 12 characters of the key, e.g. `cdk_AbCd1234`.
    pub prefix: String,
    /// The last 4 characters of the key.
    pub suffix: String,
    /// The argon2id hash of the whole key, in PHC string form.
    pub hash: String,
    /// When it was created.
    pub created_at: jiff::Timestamp,
    /// When it last authenticated a request (updated at most once a minute).
    pub last_used_at: Option<jiff::Timestamp>,
    /// When it was revoked; a revoked key never authenticates again.
    pub revoked_at: Option<jiff::Timestamp>,
}

impl KeyRecord {
    /// How lists show the key: `cdk_AbCd1234…wxyz`.
    pub fn masked(&self) -> String {
        format!("{}…{}", self.prefix, self.suffix)
    }
}

/// A key to store.
#[derive(Clone, Debug)]
pub struct NewKey {
    /// The account it spends from.
    pub account: AccountId,
    /// An optional label.
    pub name: Option<String>,
    /// First 12 characters.
    pub prefix: String,
    /// Last 4 characters.
    pub suffix: String,
    /// Argon2id PHC hash of the whole key.
    pub hash: String,
}

/// Why a key was not accepted, or a key operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// No active key matches (unknown, malformed, or wrong secret). Deliberately says no more.
    #[error("the API key is not valid")]
    Invalid,
    /// No key has the id or prefix an operator named ([`ApiKeys::find`]).
    #[error("no key is `{0}`; list the keys to find its id or prefix")]
    NoSuchKey(String),
    /// Several keys share the prefix an operator named ([`ApiKeys::find`]); name the key by its id.
    #[error("several keys start with `{0}`; name the key by its id")]
    AmbiguousPrefix(String),
    /// Hashing failed (should not happen with valid parameters).
    #[error("hashing the API key failed: {0}")]
    Hashing(String),
    /// The store failed; its error is the source.
    #[error("the key store failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Where keys live. Implementations must be safe to share between tasks and servers.
#[async_trait::async_trait]
pub trait KeyStore: Send + Sync + std::fmt::Debug {
    /// Stores a new key.
    async fn insert(&self, key: NewKey) -> Result<KeyRecord, KeyError>;
    /// Keys whose prefix is `prefix` (normally one).
    async fn by_prefix(&self, prefix: &str) -> Result<Vec<KeyRecord>, KeyError>;
    /// The key with this id.
    async fn by_id(&self, id: KeyId) -> Result<Option<KeyRecord>, KeyError>;
    /// All keys, oldest first.
    async fn list(&self) -> Result<Vec<KeyRecord>, KeyError>;
    /// Marks a key revoked; false when no such key or already revoked.
    async fn revoke(&self, id: KeyId) -> Result<bool, KeyError>;
    /// Records that a key was used at `at`.
    async fn touch(&self, id: KeyId, at: jiff::Timestamp) -> Result<(), KeyError>;
}
