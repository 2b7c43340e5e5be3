use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use argon2::Argon2;
use argon2::password_hash::{
    PasswordHash, PasswordHasher, PasswordVerifier, SaltString, rand_core::OsRng,
};
use company_model::AccountId;
use sha2::{Digest, Sha256};

use crate::key::STORED_PREFIX_LEN;
use crate::{ApiKey, KeyError, KeyId, KeyRecord, KeyStore, NewKey};

/// A key that passed verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifiedKey {
    /// The key's id (for the ledger and `last_used_at`).
    pub key_id: KeyId,
    /// The account it spends from.
    pub account: AccountId,
}

#[derive(Clone, Copy)]
struct CachedKey {
    verified: VerifiedKey,
    checked_at: Instant,
    touched_at: Instant,
}

/// How often `last_used_at` is written for a busy key.
const TOUCH_EVERY: Duration = Duration::from_mins(1);

/// Creates, verifies, lists and revokes keys over a [`KeyStore`], with the in-memory record of verified keys.
#[derive(Debug)]
pub struct ApiKeys {
    store: Arc<dyn KeyStore>,
    verified: Mutex<HashMap<[u8; 32], CachedKeyDebug>>,
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

/// A hash to verify against when no stored key has the presented prefix, so a miss costs what a hit costs.
static DUMMY_HASH: LazyLock<String> =
    LazyLock::new(|| hash(&ApiKey::generate()).unwrap_or_default());

fn hash(key: &ApiKey) -> Result<String, KeyError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(key.expose().as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| KeyError::Hashing(e.to_string()))
}

fn matches(key: &str, phc: &str) -> bool {
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

    /// Keys over `store`, re-checked every [`ApiKeys::DEFAULT_REVALIDATE_AFTER`].
    pub fn new(store: Arc<dyn KeyStore>) -> Self {
        Self {
            store,
            verified: Mutex::new(HashMap::new()),
            revalidate_after: Self::DEFAULT_REVALIDATE_AFTER,
        }
    }

    /// Changes how long a verified key is trusted without reading its row.
    #[must_use]
    pub fn with_revalidate_after(mut self, after: Duration) -> Self {
        self.revalidate_after = after;
        self
    }

    /// Creates a key for `account`; returns the full key (show it once, it is not kept) and its record.
    ///
    /// # Errors
    /// [`KeyError::Hashing`] or [`KeyError::Backend`].
    pub async fn create(
        &self,
        account: AccountId,
        name: Option<&str>,
    ) -> Result<(ApiKey, KeyRecord), KeyError> {
        let key = ApiKey::generate();
        let for_hash = key.clone();
        let hash = tokio::task::spawn_blocking(move || hash(&for_hash))
            .await
            .map_err(|e| KeyError::Hashing(e.to_string()))??;
        let record = self
            .store
            .insert(NewKey {
                account,
                name: name.map(str::to_owned),
                prefix: key.prefix().to_owned(),
                suffix: key.suffix().to_owned(),
                hash,
            })
            .await?;
        Ok((key, record))
    }

    /// Checks a presented key.
    ///
    /// # Errors
    /// [`KeyError::Invalid`] for anything but an active key (including a revoked one: callers learn no more),
    /// [`KeyError::Backend`] when the store fails.
    pub async fn verify(&self, presented: &str) -> Result<VerifiedKey, KeyError> {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let cached = self.cached(&digest);
        if let Some(entry) = cached {
            if entry.checked_at.elapsed() < self.revalidate_after {
                self.touch_if_due(&digest, entry);
                return Ok(entry.verified);
            }
            // Trusted before: a cheap read of its row instead of another argon2 run.
            let still_active = self
                .store
                .by_id(entry.verified.key_id)
                .await?
                .is_some_and(|r| r.revoked_at.is_none());
            if !still_active {
                self.forget(&digest);
                return Err(KeyError::Invalid);
            }
            self.remember(
                digest,
                CachedKey {
                    checked_at: Instant::now(),
                    ..entry
                },
            );
            self.touch_if_due(&digest, entry);
            return Ok(entry.verified);
        }
        let verified = self.verify_with_argon2(presented).await?;
        let now = Instant::now();
        let entry = CachedKey {
            verified,
            checked_at: now,
            touched_at: now,
        };
        self.remember(digest, entry);
        self.spawn_touch(verified.key_id);
        Ok(verified)
    }

    async fn verify_with_argon2(&self, presented: &str) -> Result<VerifiedKey, KeyError> {
        let Some(key) = ApiKey::parse(presented) else {
            return Err(KeyError::Invalid);
        };
        let candidates: Vec<KeyRecord> = self.store.by_prefix(key.prefix()).await?;
        let secret = key.expose().to_owned();
        let found = tokio::task::spawn_blocking(move || {
            if candidates.is_empty() {
                let _ = matches(&secret, &DUMMY_HASH);
                return None;
            }
            candidates.into_iter().find(|c| matches(&secret, &c.hash))
        })
        .await
        .map_err(|e| KeyError::Hashing(e.to_string()))?;
        match found {
            Some(record) if record.revoked_at.is_none() => Ok(VerifiedKey {
                key_id: record.id,
                account: record.account,
            }),
            _ => Err(KeyError::Invalid),
        }
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
        let prefix: String = text.chars().take(STORED_PREFIX_LEN).collect();
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

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], CachedKeyDebug>> {
        // A panic while holding this lock cannot leave the map inconsistent (single inserts and removes).
        self.verified
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn cached(&self, digest: &[u8; 32]) -> Option<CachedKey> {
        self.lock().get(digest).map(|e| e.0)
    }

    fn remember(&self, digest: [u8; 32], entry: CachedKey) {
        self.lock().insert(digest, CachedKeyDebug(entry));
    }

    fn forget(&self, digest: &[u8; 32]) {
        self.lock().remove(digest);
    }

    fn touch_if_due(&self, digest: &[u8; 32], entry: CachedKey) {
        if entry.touched_at.elapsed() >= TOUCH_EVERY {
            self.remember(
                *digest,
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
