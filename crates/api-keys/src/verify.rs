use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordVerifier};
use company_model::{AccountId, Tenant};

use crate::digest::DigestKey;
use crate::failures::{FailedAttempts, FailureLimit};
use crate::key::{KeyMode, stored_prefix_len};
use crate::{ApiKey, KeyError, KeyId, KeyRecord, KeyStore, NewKey};

/// A key that passed verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifiedKey {
    /// The key's id (for the ledger and `last_used_at`).
    pub key_id: KeyId,
    /// Whose data it works on: its account, live or in test mode ([`KeyRecord::acts_for`]).
    pub tenant: Tenant,
}

/// What verification has cost on this server since it started: counts, for metrics and for tests that show a
/// flood costs nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyStats {
    /// Presented texts refused for their shape alone (not `cdk_` + 40 base62 characters): no digest, no read.
    pub refused_shape: u64,
    /// Requests refused because their client address had too many failures ([`KeyError::TooManyFailures`]).
    pub refused_client: u64,
    /// HMAC digests computed (one per well-shaped key presented, trusted or not).
    pub digests: u64,
    /// Keys looked up in the store because this server had not verified them yet (concurrent first requests
    /// of one key share one lookup).
    pub lookups: u64,
    /// Argon2 verifications of keys created before digests (each such key moves to its digest at first use).
    pub argon2_checks: u64,
}

#[derive(Debug, Default)]
struct Counters {
    refused_shape: AtomicU64,
    refused_client: AtomicU64,
    digests: AtomicU64,
    lookups: AtomicU64,
    argon2_checks: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Counts a refusal in `company_data_auth_refusals_total{reason}`: `shape`, `client_limit` or `invalid`.
fn refused(reason: &'static str) {
    metrics::counter!("company_data_auth_refusals_total", "reason" => reason).increment(1);
}

#[derive(Clone, Copy)]
struct CachedKey {
    verified: VerifiedKey,
    checked_at: Instant,
    touched_at: Instant,
}

/// How often `last_used_at` is written for a busy key.
const TOUCH_EVERY: Duration = Duration::from_mins(1);

/// Creates, verifies, lists and revokes keys over a [`KeyStore`], with the in-memory record of verified keys
/// and of failed attempts per client address.
#[derive(Debug)]
pub struct ApiKeys {
    store: Arc<dyn KeyStore>,
    /// The deployment's digest key, read from (or first written to) the store at first use.
    digest_key: tokio::sync::OnceCell<DigestKey>,
    /// Keys verified on this server, by digest.
    verified: Mutex<HashMap<String, CachedKeyDebug>>,
    /// One lock per digest being looked up, so concurrent first requests of a key share one lookup.
    in_flight: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    failures: FailedAttempts,
    counters: Counters,
    revalidate_after: Duration,
}

/// `CachedKey` with a `Debug` that shows nothing of the digest.
#[derive(Clone, Copy)]
struct CachedKeyDebug(CachedKey);

impl std::fmt::Debug for CachedKeyDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "key {}", self.0.verified.key_id)
    }
}

/// Whether `key` matches a key stored before digests, as an argon2id PHC string.
fn matches_legacy(key: &str, phc: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|parsed| {
        Argon2::default()
            .verify_password(key.as_bytes(), &parsed)
            .is_ok()
    })
}

impl ApiKeys {
    /// How long a verified key is trusted before its row is read again: the most a revocation takes to reach
    /// a running server.
    pub const DEFAULT_REVALIDATE_AFTER: Duration = Duration::from_secs(2);

    /// Keys over `store`, re-checked every [`ApiKeys::DEFAULT_REVALIDATE_AFTER`], failures limited per client
    /// address by [`FailureLimit::default`].
    pub fn new(store: Arc<dyn KeyStore>) -> Self {
        Self {
            store,
            digest_key: tokio::sync::OnceCell::new(),
            verified: Mutex::new(HashMap::new()),
            in_flight: Mutex::new(HashMap::new()),
            failures: FailedAttempts::new(FailureLimit::default()),
            counters: Counters::default(),
            revalidate_after: Self::DEFAULT_REVALIDATE_AFTER,
        }
    }

    /// Changes how long a verified key is trusted without reading its row.
    #[must_use]
    pub fn with_revalidate_after(mut self, after: Duration) -> Self {
        self.revalidate_after = after;
        self
    }

    /// Changes how many failed authentications a client address may have ([`ApiKeys::verify_from`]); counts
    /// so far are kept.
    pub fn set_failure_limit(&self, limit: FailureLimit) {
        self.failures.set_limit(limit);
    }

    /// What verification has cost on this server so far.
    pub fn stats(&self) -> KeyStats {
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        KeyStats {
            refused_shape: read(&self.counters.refused_shape),
            refused_client: read(&self.counters.refused_client),
            digests: read(&self.counters.digests),
            lookups: read(&self.counters.lookups),
            argon2_checks: read(&self.counters.argon2_checks),
        }
    }

    async fn digest_key(&self) -> Result<&DigestKey, KeyError> {
        self.digest_key
            .get_or_try_init(|| async {
                let stored = self.store.digest_key(&DigestKey::generate_hex()).await?;
                DigestKey::from_hex(&stored).ok_or_else(|| {
                    KeyError::Backend(
                        "the stored API-key digest key is not 64 hex characters".into(),
                    )
                })
            })
            .await
    }

    /// Creates a key for `account`; returns the full key (show it once, it is not kept) and its record.
    ///
    /// # Errors
    /// [`KeyError::Backend`].
    pub async fn create(
        &self,
        account: AccountId,
        name: Option<&str>,
    ) -> Result<(ApiKey, KeyRecord), KeyError> {
        self.create_for(account, name, KeyMode::Live, u32::MAX)
            .await
    }

    /// Creates a key of `mode` for `account` ([`KeyMode::Test`]: a `cdk_test_…` key that acts for the account's
    /// test mode) unless the account has `at_most` keys not revoked already (live and test together); returns
    /// the full key and its record.
    ///
    /// # Errors
    /// [`KeyError::TooManyKeys`] (nothing created), [`KeyError::Backend`].
    pub async fn create_for(
        &self,
        account: AccountId,
        name: Option<&str>,
        mode: KeyMode,
        at_most: u32,
    ) -> Result<(ApiKey, KeyRecord), KeyError> {
        let key = ApiKey::generate_for(mode);
        let digest = self.digest_key().await?.digest(&key);
        let record = self
            .store
            .insert(
                NewKey {
                    account,
                    name: name.map(str::to_owned),
                    prefix: key.prefix().to_owned(),
                    suffix: key.suffix().to_owned(),
                    digest,
                },
                at_most,
            )
            .await?
            .ok_or(KeyError::TooManyKeys { quota: at_most })?;
        Ok((key, record))
    }

    /// Checks a presented key, without a limit on failures: for callers that have no client address (the
    /// command line, an embedder's own checks). Requests from a network go through [`ApiKeys::verify_from`].
    ///
    /// Text that is not shaped like a key is refused without a digest or a read; a well-shaped key costs one
    /// HMAC (about a microsecond) and, the first time this server sees it, one indexed read.
    ///
    /// # Errors
    /// [`KeyError::Invalid`] for anything but an active key (including a revoked one: callers learn no more),
    /// [`KeyError::Backend`] when the store fails.
    pub async fn verify(&self, presented: &str) -> Result<VerifiedKey, KeyError> {
        let Some(key) = ApiKey::parse(presented) else {
            bump(&self.counters.refused_shape);
            refused("shape");
            return Err(KeyError::Invalid);
        };
        let digest = self.digest_key().await?.digest(&key);
        bump(&self.counters.digests);
        if let Some(verified) = self.trusted(&digest).await? {
            return Ok(verified);
        }
        // Concurrent first requests of one key wait for the first one's lookup instead of each doing their own.
        let lock = Arc::clone(self.lock_in_flight().entry(digest.clone()).or_default());
        let looked_up = {
            let _turn = lock.lock().await;
            match self.trusted(&digest).await {
                Ok(Some(verified)) => Ok(verified),
                Ok(None) => self.look_up(&key, &digest).await,
                Err(error) => Err(error),
            }
        };
        self.lock_in_flight().remove(&digest);
        looked_up
    }

    /// [`ApiKeys::verify`] for a request from `client`: refused with [`KeyError::TooManyFailures`], before
    /// anything is computed, when the address has no failed authentication left ([`FailureLimit`]); a refusal of the key counts as one failure. Either failure is answered after
    /// [`FailureLimit::delay`].
    ///
    /// # Errors
    /// [`KeyError::TooManyFailures`], [`KeyError::Invalid`], [`KeyError::Backend`].
    pub async fn verify_from(
        &self,
        client: IpAddr,
        presented: &str,
    ) -> Result<VerifiedKey, KeyError> {
        if let Err(retry_after) = self.failures.check(client) {
            bump(&self.counters.refused_client);
            refused("client_limit");
            tokio::time::sleep(self.failures.delay()).await;
            return Err(KeyError::TooManyFailures { retry_after });
        }
        let verified = self.verify(presented).await;
        if matches!(verified, Err(KeyError::Invalid)) {
            self.failures.record(client).await;
            tokio::time::sleep(self.failures.delay()).await;
        }
        verified
    }

    /// The key this server verified before, re-read from the store when its trust has lapsed.
    async fn trusted(&self, digest: &str) -> Result<Option<VerifiedKey>, KeyError> {
        let Some(entry) = self.cached(digest) else {
            return Ok(None);
        };
        if entry.checked_at.elapsed() < self.revalidate_after {
            self.touch_if_due(digest, entry);
            return Ok(Some(entry.verified));
        }
        let still_active = self
            .store
            .by_id(entry.verified.key_id)
            .await?
            .is_some_and(|r| r.revoked_at.is_none());
        if !still_active {
            self.forget(digest);
            return Err(KeyError::Invalid);
        }
        self.remember(
            digest,
            CachedKey {
                checked_at: Instant::now(),
                ..entry
            },
        );
        self.touch_if_due(digest, entry);
        Ok(Some(entry.verified))
    }

    /// Finds the key by its digest or, for a key created before digests, by argon2 against the rows of its
    /// prefix that have no digest yet (and then stores its digest, so this happens once per key).
    async fn look_up(&self, key: &ApiKey, digest: &str) -> Result<VerifiedKey, KeyError> {
        bump(&self.counters.lookups);
        metrics::counter!("company_data_key_lookups_total").increment(1);
        let record = match self.store.by_digest(digest).await? {
            Some(record) => Some(record),
            None => self.look_up_legacy(key, digest).await?,
        };
        let Some(record) = record.filter(|r| r.revoked_at.is_none()) else {
            refused("invalid");
            return Err(KeyError::Invalid);
        };
        let verified = VerifiedKey {
            key_id: record.id,
            tenant: record.acts_for(),
        };
        let now = Instant::now();
        self.remember(
            digest,
            CachedKey {
                verified,
                checked_at: now,
                touched_at: now,
            },
        );
        self.spawn_touch(verified.key_id);
        Ok(verified)
    }

    async fn look_up_legacy(
        &self,
        key: &ApiKey,
        digest: &str,
    ) -> Result<Option<KeyRecord>, KeyError> {
        let candidates: Vec<KeyRecord> = self
            .store
            .by_prefix(key.prefix())
            .await?
            .into_iter()
            .filter(|c| c.legacy_hash.is_some())
            .collect();
        if candidates.is_empty() {
            return Ok(None);
        }
        bump(&self.counters.argon2_checks);
        metrics::counter!("company_data_key_argon2_checks_total").increment(1);
        let secret = key.expose().to_owned();
        let found = tokio::task::spawn_blocking(move || {
            candidates.into_iter().find(|c| {
                c.legacy_hash
                    .as_deref()
                    .is_some_and(|phc| matches_legacy(&secret, phc))
            })
        })
        .await
        .map_err(|e| KeyError::Hashing(e.to_string()))?;
        if let Some(record) = &found {
            self.store.set_digest(record.id, digest).await?;
            tracing::info!(key_id = %record.id, "API key moved from argon2 to its digest");
        }
        Ok(found)
    }

    /// All keys, oldest first.
    ///
    /// # Errors
    /// [`KeyError::Backend`].
    pub async fn list(&self) -> Result<Vec<KeyRecord>, KeyError> {
        self.store.list().await
    }

    /// The keys of one account (revoked ones included), oldest first.
    ///
    /// # Errors
    /// [`KeyError::Backend`].
    pub async fn of_account(&self, account: AccountId) -> Result<Vec<KeyRecord>, KeyError> {
        let mut keys = self.store.list().await?;
        keys.retain(|k| k.account == account);
        Ok(keys)
    }

    /// The key `id` if it belongs to `account`; `None` for another account's key as for no key, so a caller
    /// learns nothing of other accounts.
    ///
    /// # Errors
    /// [`KeyError::Backend`].
    pub async fn of_account_by_id(
        &self,
        account: AccountId,
        id: KeyId,
    ) -> Result<Option<KeyRecord>, KeyError> {
        Ok(self.store.by_id(id).await?.filter(|k| k.account == account))
    }

    /// The key named by an operator: its id (`17`), its prefix (`cdk_AbCd1234`) or its masked form
    /// (`cdk_AbCd1234…wxyz`, as lists show it); any text that starts with the whole prefix finds the key.
    ///
    /// # Errors
    /// [`KeyError::NoSuchKey`] when nothing matches, [`KeyError::AmbiguousPrefix`] when several keys share
    /// the prefix (name it by id then), [`KeyError::Backend`].
    pub async fn find(&self, id_or_prefix: &str) -> Result<KeyRecord, KeyError> {
        let text = id_or_prefix.trim();
        if let Ok(id) = text.parse::<i64>() {
            return self
                .store
                .by_id(KeyId(id))
                .await?
                .ok_or_else(|| KeyError::NoSuchKey(text.to_owned()));
        }
        let prefix: String = text.chars().take(stored_prefix_len(text)).collect();
        let mut matches = self.store.by_prefix(&prefix).await?;
        match matches.len() {
            0 => Err(KeyError::NoSuchKey(prefix)),
            1 => Ok(matches.remove(0)),
            _ => Err(KeyError::AmbiguousPrefix(prefix)),
        }
    }

    /// Revokes a key; on this server it stops working at once, on others within the revalidation interval.
    /// Returns false when there is no such active key.
    ///
    /// # Errors
    /// [`KeyError::Backend`].
    pub async fn revoke(&self, id: KeyId) -> Result<bool, KeyError> {
        let revoked = self.store.revoke(id).await?;
        self.lock().retain(|_, entry| entry.0.verified.key_id != id);
        Ok(revoked)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CachedKeyDebug>> {
        // A panic while holding this lock cannot leave the map inconsistent (single inserts and removes).
        self.verified
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lock_in_flight(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<()>>>> {
        self.in_flight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn cached(&self, digest: &str) -> Option<CachedKey> {
        self.lock().get(digest).map(|e| e.0)
    }

    fn remember(&self, digest: &str, entry: CachedKey) {
        self.lock().insert(digest.to_owned(), CachedKeyDebug(entry));
    }

    fn forget(&self, digest: &str) {
        self.lock().remove(digest);
    }

    fn touch_if_due(&self, digest: &str, entry: CachedKey) {
        if entry.touched_at.elapsed() >= TOUCH_EVERY {
            self.remember(
                digest,
                CachedKey {
                    touched_at: Instant::now(),
                    ..entry
                },
            );
            self.spawn_touch(entry.verified.key_id);
        }
    }

    fn spawn_touch(&self, id: KeyId) {
        let store = Arc::clone(&self.store);
        tokio::spawn(async move {
            if let Err(error) = store.touch(id, jiff::Timestamp::now()).await {
                tracing::warn!(key_id = %id, %error, "could not record key use");
            }
        });
    }
}
