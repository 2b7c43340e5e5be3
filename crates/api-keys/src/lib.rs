//! API keys: who may call the service, and on which account.
//!
//! - A key is `cdk_` followed by 40 random base62 characters (about 238 bits), shown once at creation
//!   ([`ApiKeys::create`]). The store keeps its prefix (`cdk_` and 8 characters, to recognise it in lists), its
//!   suffix (last 4) and an HMAC-SHA256 digest of the whole key under the deployment's digest key (kept by the
//!   store, one per database), by which the key is found. Nothing stored gives the key back.
//! - [`ApiKeys::verify`] checks a presented key: text not shaped like a key is refused at once; otherwise one
//!   HMAC and, the first time a server sees the key, one indexed read (concurrent first requests of a key share
//!   it). Then the key is remembered in memory by its digest and re-read every
//!   [`ApiKeys::DEFAULT_REVALIDATE_AFTER`], so a revoked key stops working within seconds on every server.
//!   [`ApiKeys::verify_from`] adds a limit on failed authentications per client address ([`FailureLimit`]),
//!   checked before anything is computed, so a flood of made-up keys costs almost nothing.
//! - Keys created before digests were stored as argon2id hashes; such a key moves to its digest the first
//!   time it is used (one argon2 check, once per key). A made-up key never reaches argon2: only a stored
//!   pre-digest row with the same prefix does.
//! - A test-mode key is `cdk_test_` followed by 40 random characters ([`KeyMode::Test`], [`ApiKeys::create_for`]):
//!   it verifies as the account's test-mode tenant ([`company_model::Tenant`]), so what it does is the
//!   sandbox's and never the live account's. Its stored prefix is `cdk_test_` and 8 characters, so lists tell it apart.
//! - [`ApiKey`] never prints its secret in `Debug` or `Display`.
//!
//! [`KeyStore`] is the backend-neutral interface; `SqliteKeyStore` the embedded backend (feature `sqlite`, the
//! default), `PgKeyStore` the backend for several servers on one PostgreSQL database (feature `postgres`).
//! Not here: accounts and credits (`credit-ledger`), HTTP headers, dashboard passwords (`dashboard-auth`,
//! which keeps argon2id: a password is guessable, a key is not).
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use std::sync::Arc;
//! use api_keys::{ApiKeys, SqliteKeyStore};
//! use company_model::{AccountId, Tenant};
//! let dir = tempfile::tempdir()?;
//! let keys = ApiKeys::new(Arc::new(SqliteKeyStore::open(&dir.path().join("keys.db")).await?));
//! let (key, info) = keys.create(AccountId(1), Some("ci")).await?;
//! assert!(format!("{key:?}").contains("redacted"));
//! assert_eq!(keys.verify(key.expose()).await?.tenant, Tenant::live(AccountId(1)));
//! keys.revoke(info.id).await?;
//! assert!(keys.verify(key.expose()).await.is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```
#![deny(missing_docs)]

mod digest;
mod failures;
mod key;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;
mod verify;

pub use failures::FailureLimit;
pub use key::{ApiKey, KEY_PREFIX, KeyMode, TEST_KEY_PREFIX};
#[cfg(feature = "postgres")]
pub use postgres::PgKeyStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteKeyStore;
pub use verify::{ApiKeys, KeyStats, VerifiedKey};

use company_model::{AccountId, Tenant};

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
    /// The key's prefix and its first 8 random characters, e.g. `cdk_AbCd1234` or `cdk_test_AbCd1234`.
    pub prefix: String,
    /// The last 4 characters of the key.
    pub suffix: String,
    /// The HMAC-SHA256 digest of the whole key (64 hex characters); `None` for a key created before digests
    /// and not used since.
    pub digest: Option<String>,
    /// The argon2id hash (PHC string) of a key created before digests, until its first use moves it to its
    /// digest; `None` after.
    pub legacy_hash: Option<String>,
    /// When it was created.
    pub created_at: jiff::Timestamp,
    /// When it last authenticated a request (updated at most once a minute).
    pub last_used_at: Option<jiff::Timestamp>,
    /// When it was revoked; a revoked key never authenticates again.
    pub revoked_at: Option<jiff::Timestamp>,
}

impl KeyRecord {
    /// Live or test, by its stored prefix.
    pub fn mode(&self) -> KeyMode {
        KeyMode::of_text(&self.prefix)
    }

    /// Whose data the key works on: its account, live or in test mode.
    pub fn acts_for(&self) -> Tenant {
        self.mode().acts_for(self.account)
    }

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
    /// HMAC-SHA256 digest of the whole key under the store's digest key, 64 hex characters.
    pub digest: String,
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
    /// The client address has had too many failed authentications ([`FailureLimit`]); nothing was checked.
    #[error("too many failed authentications from this address; retry after {} s", shared_limits::wait_seconds(*retry_after))]
    TooManyFailures {
        /// When the address's window ends.
        retry_after: std::time::Duration,
    },
    /// The account has as many keys (not revoked) as its quota allows; nothing was created.
    #[error(
        "the account has {quota} keys, the most its quota allows; revoke one it no longer uses first"
    )]
    TooManyKeys {
        /// The quota.
        quota: u32,
    },
    /// Checking a key stored before digests failed to run (the blocking pool was shutting down).
    #[error("checking the API key failed: {0}")]
    Hashing(String),
    /// The store failed; its error is the source.
    #[error("the key store failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Where keys live. Implementations must be safe to share between tasks and servers.
#[async_trait::async_trait]
pub trait KeyStore: Send + Sync + std::fmt::Debug {
    /// Stores a new key unless its account has `at_most` keys not revoked already (then `None`: the count and
    /// the insert are one step, so concurrent creations cannot pass the bound).
    async fn insert(&self, key: NewKey, at_most: u32) -> Result<Option<KeyRecord>, KeyError>;
    /// The key whose digest is `digest`.
    async fn by_digest(&self, digest: &str) -> Result<Option<KeyRecord>, KeyError>;
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
    /// Stores the digest of a key created before digests and forgets its argon2 hash.
    async fn set_digest(&self, id: KeyId, digest: &str) -> Result<(), KeyError>;
    /// The deployment's digest key (hex): `proposed` is stored if there is none yet, and whichever is stored
    /// is returned, so every server on one database uses the same.
    async fn digest_key(&self, proposed: &str) -> Result<String, KeyError>;
}
