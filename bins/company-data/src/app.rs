//! Wiring: one SQLite pool shared by the three stores, the fetcher, the lookup service.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use api_keys::{ApiKey, ApiKeys, SqliteKeyStore};
use company_lookup::{LookupService, LookupSettings};
use credit_ledger::{Credits, Ledger, SqliteLedger};
use dashboard_auth::{SqliteUserStore, Users};
use page_scraper::{Fetcher, FetcherSettings};
use page_url::NetworkDomain;
use snapshot_cache::SqliteSnapshotStore;
use sqlite_pool::SqlitePool;

/// Everything `serve` needs to know.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The SQLite file.
    pub db: PathBuf,
    /// Where live pages come from and how they are fetched (origin, network domain, limits, retries).
    pub fetcher: FetcherSettings,
    /// Time-out of one live lookup.
    pub live_timeout: Duration,
    /// Requests per second each API key may make, and the burst it may make at once; `None` for no limit.
    pub key_rate: Option<(f64, u32)>,
    /// Live lookups each account may have in flight at once; `None` for no cap.
    pub live_lookups_per_account: Option<usize>,
    /// What one client connection may take.
    pub connections: ConnectionLimits,
    /// Always mark dashboard cookies `Secure` (set it when a TLS proxy is in front; cookies are also marked
    /// `Secure` on any request whose `X-Forwarded-Proto` is `https`).
    pub secure_cookies: bool,
}

/// What one client connection may take; slow or idle clients are shed by these.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// Time for a request's headers to arrive, counted from the connection's start or the previous response:
    /// also the longest a kept-alive HTTP/1.1 connection sits idle.
    pub header_timeout: Duration,
    /// Time for a request's body to arrive (408 after it).
    pub body_timeout: Duration,
    /// Connections open at once; the accept loop waits while this many are open.
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

/// The parts a request uses. Built once at start, shared by all connections.
#[derive(Debug)]
pub struct App {
    pub(crate) keys: ApiKeys,
    pub(crate) ledger: Arc<dyn Ledger>,
    pub(crate) lookup: LookupService,
    pub(crate) domain: NetworkDomain,
    pub(crate) openapi: bytes::Bytes,
    pub(crate) connections: ConnectionLimits,
    /// Per-key request-rate limit (GCRA), in this server's memory.
    pub(crate) key_rate: Option<governor::DefaultKeyedRateLimiter<i64>>,
    /// People who sign in to the dashboard, and their sessions.
    pub(crate) users: Users,
    /// Dashboard settings.
    pub(crate) dashboard: DashboardSettings,
}

/// What the dashboard needs to know besides the stores.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DashboardSettings {
    /// Mark cookies `Secure` on every response.
    pub(crate) secure_cookies: bool,
}

/// The key made on the first start, to print once.
#[derive(Debug)]
pub struct FirstKey {
    /// The full key.
    pub key: ApiKey,
    /// The account it spends from.
    pub account: String,
    /// Its starting credits.
    pub credits: Credits,
}

/// Name and starting credits of the account made on the first start.
const FIRST_ACCOUNT: &str = "default";
const FIRST_CREDITS: Credits = Credits::from_millis(100_000);

impl App {
    /// Opens the database and builds the parts.
    ///
    /// # Errors
    /// When the database cannot be opened or migrated, or the HTTP client cannot be built.
    pub async fn open(settings: &Settings) -> anyhow::Result<Self> {
        let pool = SqlitePool::open(&settings.db).await?;
        let keys = ApiKeys::new(Arc::new(SqliteKeyStore::with_pool(pool.clone()).await?));
        let ledger: Arc<dyn Ledger> = Arc::new(SqliteLedger::with_pool(pool.clone()).await?);
        let users = Users::new(Arc::new(SqliteUserStore::with_pool(pool.clone()).await?));
        let snapshots = Arc::new(SqliteSnapshotStore::with_pool(pool).await?);
        let fetcher = Fetcher::new(settings.fetcher.clone())?;
        let lookup = LookupService::new(
            fetcher,
            snapshots,
            Arc::clone(&ledger),
            LookupSettings {
                live_timeout: settings.live_timeout,
                live_lookups_per_account: settings.live_lookups_per_account,
            },
        );
        let domain = settings.fetcher.domain.clone();
        let openapi = serde_json::to_vec_pretty(&crate::openapi::document(&domain))
            .context("serializing the OpenAPI document")?
            .into();
        let key_rate = settings.key_rate.and_then(|(per_second, burst)| {
            let quota = governor::Quota::with_period(Duration::from_secs_f64(1.0 / per_second))?
                .allow_burst(std::num::NonZeroU32::new(burst.max(1))?);
            Some(governor::RateLimiter::keyed(quota))
        });
        Ok(Self {
            keys,
            ledger,
            lookup,
            domain,
            openapi,
            connections: settings.connections,
            key_rate,
            users,
            dashboard: DashboardSettings {
                secure_cookies: settings.secure_cookies,
            },
        })
    }

    /// On a database with no key at all, makes the `default` account with 100 credits and a key for it.
    ///
    /// # Errors
    /// When the stores fail.
    pub async fn ensure_first_key(&self) -> anyhow::Result<Option<FirstKey>> {
        if !self.keys.list().await?.is_empty() {
            return Ok(None);
        }
        let account = self.ledger.ensure_account(FIRST_ACCOUNT).await?;
        self.ledger
            .grant(account.id, FIRST_CREDITS, "first start")
            .await?;
        let (key, _) = self.keys.create(account.id, Some("first key")).await?;
        Ok(Some(FirstKey {
            key,
            account: account.name,
            credits: FIRST_CREDITS,
        }))
    }

    /// Frees every credit hold: at start, once [`lock_database`] has shown that no other server uses the file,
    /// all holds were left by a server that stopped mid-request.
    ///
    /// # Errors
    /// When the ledger fails.
    pub async fn release_all_holds(&self) -> anyhow::Result<u64> {
        Ok(self
            .ledger
            .release_stale(jiff::Timestamp::now() + jiff::SignedDuration::from_secs(1))
            .await?)
    }

    /// Deletes dashboard sessions and invitation links past their end (they are refused anyway; this keeps
    /// the tables small).
    ///
    /// # Errors
    /// When the store fails.
    pub async fn delete_expired_sessions(&self) -> anyhow::Result<u64> {
        Ok(self.users.delete_expired().await?)
    }

    /// Frees credit holds older than the longest a request can run (a safety net while running).
    ///
    /// # Errors
    /// When the ledger fails.
    pub async fn release_stale_holds(&self) -> anyhow::Result<u64> {
        let longest_request = self.lookup.settings().live_timeout + Duration::from_mins(1);
        let cutoff = jiff::Timestamp::now() - jiff::SignedDuration::try_from(longest_request)?;
        Ok(self.ledger.release_stale(cutoff).await?)
    }
}

/// Takes an exclusive lock on `<db>.lock` for the life of the process, so that one server at a time serves a
/// SQLite file (the operating system drops the lock when the process ends, even by SIGKILL). Holding it proves
/// that credit holds in the file belong to no running request. Several servers share one database through a
/// server database backend, not through SQLite.
///
/// # Errors
/// When another server holds the lock, or the lock file cannot be created.
pub fn lock_database(db: &std::path::Path) -> anyhow::Result<std::fs::File> {
    let mut path = db.as_os_str().to_owned();
    path.push(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| {
            format!(
                "cannot create the lock file {}",
                std::path::Path::new(&path).display()
            )
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "another company-data server is serving {}; stop it first, or give this one its own --db",
            db.display()
        ),
        Err(std::fs::TryLockError::Error(error)) => Err(error)
            .with_context(|| format!("cannot lock {}", std::path::Path::new(&path).display())),
    }
}
