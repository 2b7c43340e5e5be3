//! The company-data service assembled from its parts: the stores on one database, the fetcher, the lookup, the
//! bulk job, watch and webhook delivery runners, the API and the dashboard, put together from [`Settings`]; [`Server`] starts them
//! as `company-data serve` does, so tests and embedders can run the same server in their own process, and
//! [`metrics`] serves Prometheus' `/metrics`.
//!
//! Nothing is decided here: every rule lives in the crate that owns it (docs/architecture.md). Not here: the
//! command line and its flags (the `company-data` binary turns them into [`Settings`]).
#![deny(missing_docs)]

pub mod mcp;
pub mod metrics;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use account_webhooks::{SystemClock, WebhookSettings, Webhooks};
use accounts::{Accounts, CreatedKey};
use anyhow::Context;
use api_contract::AccountEventType;
use api_keys::{ApiKeys, KeyStore, PgKeyStore, SqliteKeyStore};
use bulk_jobs::{BulkJobs, BulkSettings, Runner};
use company_lookup::{LookupService, LookupSettings};
use company_resolve::{Resolver, ResolverSettings};
use company_watch::{WatchSettings, Watches};
use credit_ledger::{Ledger, PgLedger, SqliteLedger, Tenant, WithTestMode};
use dashboard::{Dashboard, DashboardSettings};
use dashboard_auth::{PgUserStore, SqliteUserStore, UserStore, Users};
use http::Request;
use http_api::{Api, ApiSettings, KeyRate};
use http_serve::ConnectionLimits;
use idempotency::{IdempotencyStore, PgIdempotencyStore, SqliteIdempotencyStore};
use job_store::{JobStore, PgJobStore, SqliteJobStore};
use page_scraper::{Fetcher, FetcherSettings, LinkResolver, LinkResolverSettings};
use pg_pool::PgPool;
use shared_limits::{LimitStore, MemoryLimits, PgLimits};
use snapshot_cache::{PgSnapshotStore, SnapshotStore, SqliteSnapshotStore};
use sqlite_pool::{ServerLock, SqlitePool};
use watch_store::{PgWatchStore, SqliteWatchStore, WatchStore};

/// Where the stores live.
#[derive(Clone, PartialEq, Eq)]
pub enum Database {
    /// One SQLite file, served by one server at a time (the embedded default).
    Sqlite(PathBuf),
    /// A PostgreSQL database, `postgres://USER@HOST:PORT/DB`, shared by any number of servers.
    Postgres(String),
}

impl Database {
    /// A `postgres://` (or `postgresql://`) URL, else a SQLite file path.
    pub fn parse(text: &str) -> Self {
        if pg_pool::is_postgres_url(text) {
            Self::Postgres(text.to_owned())
        } else {
            Self::Sqlite(PathBuf::from(text))
        }
    }
}

impl std::fmt::Display for Database {
    /// The file, or the URL without its password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sqlite(path) => write!(f, "{}", path.display()),
            Self::Postgres(url) => f.write_str(&pg_pool::redacted(url)),
        }
    }
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Database({self})")
    }
}

/// Everything `serve` needs to know.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Where the stores live.
    pub db: Database,
    /// Where live pages come from and how they are fetched (origin, network domain, limits, retries).
    pub fetcher: FetcherSettings,
    /// The lookup's knobs: live time-out, per-account cap on live lookups.
    pub lookup: LookupSettings,
    /// Requests each API key may make; `None` for no limit.
    pub key_rate: Option<KeyRate>,
    /// How shortened website links are followed to a domain a CRM can match; `None` to keep the shortener's.
    pub link_resolver: Option<LinkResolverSettings>,
    /// How domains and names are resolved to pages (the websites' fetching, what is remembered).
    pub resolver: ResolverSettings,
    /// What one client connection may take.
    pub connections: ConnectionLimits,
    /// Always mark dashboard cookies `Secure`.
    pub secure_cookies: bool,
    /// The trusted proxy's client-address header; `None` for the connection's peer.
    pub client_address_header: Option<http::HeaderName>,
    /// Failed authentications allowed per client address.
    pub failed_auth_limit: api_keys::FailureLimit,
    /// This server's name among the servers on one database, stable across its restarts: its credit holds carry
    /// it, so a restart frees them at once.
    pub server_name: String,
    /// The bulk job runner's knobs.
    pub jobs: BulkSettings,
    /// The watch runner's knobs.
    pub watches: WatchSettings,
    /// Webhook delivery's knobs (whether webhooks may go to private addresses, retries, time-outs).
    pub webhooks: WebhookSettings,
    /// The deployment's quotas (an account's own replace them): what jobs, watches, endpoints and keys one
    /// account may hold. They replace the quotas of `jobs`, `watches` and `webhooks`.
    pub quotas: credit_ledger::Quotas,
}

/// The stores of one database.
#[derive(Debug)]
pub struct Stores {
    /// Accounts, keys and sign-ins.
    pub accounts: Arc<Accounts>,
    /// Snapshots of pages and their records.
    pub snapshots: Arc<dyn SnapshotStore>,
    /// Where the origin's pace, the per-key rate and the per-account cap on live lookups are counted: this
    /// process's memory on SQLite (one server), the database on PostgreSQL (totals for every server on it).
    pub limits: Arc<dyn LimitStore>,
    /// Bulk jobs: their inputs, pages, leases and answers.
    pub jobs: Arc<dyn JobStore>,
    /// Watches, their events and the accounts' webhook secrets.
    pub watches: Arc<dyn WatchStore>,
    /// The answers of requests sent with an `Idempotency-Key`.
    pub idempotency: Arc<dyn IdempotencyStore>,
}

/// The stores of one database, whichever its engine.
type StoreParts = (
    Arc<dyn Ledger>,
    Arc<dyn KeyStore>,
    Arc<dyn UserStore>,
    Arc<dyn SnapshotStore>,
    Arc<dyn LimitStore>,
    Arc<dyn JobStore>,
    Arc<dyn WatchStore>,
    Arc<dyn IdempotencyStore>,
);

impl Stores {
    /// Opens (and migrates) every store on the database: the SQLite file, or the PostgreSQL database.
    ///
    /// # Errors
    /// When the database cannot be opened or migrated.
    pub async fn open(db: &Database) -> anyhow::Result<Self> {
        Self::open_as(db, "").await
    }

    /// [`Stores::open`] for a server called `server` (see [`Settings::server_name`]).
    ///
    /// # Errors
    /// When the database cannot be opened or migrated.
    pub async fn open_as(db: &Database, server: &str) -> anyhow::Result<Self> {
        let (ledger, keys, users, snapshots, limits, jobs, watches, idempotency): StoreParts =
            match db {
                Database::Sqlite(path) => {
                    let pool = SqlitePool::open(path).await?;
                    (
                        Arc::new(SqliteLedger::with_pool(pool.clone()).await?),
                        Arc::new(SqliteKeyStore::with_pool(pool.clone()).await?),
                        Arc::new(SqliteUserStore::with_pool(pool.clone()).await?),
                        Arc::new(SqliteSnapshotStore::with_pool(pool.clone()).await?),
                        Arc::new(MemoryLimits::new()),
                        Arc::new(SqliteJobStore::with_pool(pool.clone()).await?),
                        Arc::new(SqliteWatchStore::with_pool(pool.clone()).await?),
                        Arc::new(SqliteIdempotencyStore::with_pool(pool).await?),
                    )
                }
                Database::Postgres(url) => {
                    let pool = PgPool::connect(url).await?;
                    (
                        Arc::new(PgLedger::with_pool(pool.clone()).await?.for_server(server)),
                        Arc::new(PgKeyStore::with_pool(pool.clone()).await?),
                        Arc::new(PgUserStore::with_pool(pool.clone()).await?),
                        Arc::new(PgSnapshotStore::with_pool(pool.clone()).await?),
                        Arc::new(PgLimits::with_pool(pool.clone()).await?),
                        Arc::new(PgJobStore::with_pool(pool.clone()).await?),
                        Arc::new(PgWatchStore::with_pool(pool.clone()).await?),
                        Arc::new(PgIdempotencyStore::with_pool(pool).await?),
                    )
                }
            };
        Ok(Self {
            accounts: Arc::new(Accounts::new(
                // Test-mode keys' accounts spend nothing, whoever bills them.
                Arc::new(WithTestMode::new(ledger)),
                Arc::new(ApiKeys::new(keys)),
                Arc::new(Users::new(users)),
            )),
            snapshots,
            limits,
            jobs,
            watches,
            idempotency,
        })
    }
}

/// The running service's parts, built once at start and shared by all connections.
#[derive(Debug)]
pub struct App {
    /// Accounts, keys and sign-ins.
    pub accounts: Arc<Accounts>,
    /// The lookup every request runs.
    pub lookup: Arc<LookupService>,
    /// Resolves domains and names to pages.
    pub resolver: Arc<Resolver>,
    /// Bulk jobs; [`Server::start`] starts their runner.
    pub jobs: Arc<BulkJobs>,
    /// Watches; [`Server::start`] starts their runner.
    pub watches: Arc<Watches>,
    /// The accounts' webhooks: endpoints, secrets, and the delivery of every event; [`Server::start`] starts
    /// their runner.
    pub webhooks: Arc<Webhooks>,
    /// The answers of requests sent with an `Idempotency-Key`; the upkeep sweeps old ones.
    pub idempotency: Arc<dyn IdempotencyStore>,
    api: Api,
    dashboard: Dashboard,
    connections: ConnectionLimits,
    /// The sandbox's pages and snapshots (test mode), removed when the service ends.
    _sandbox: tempfile::TempDir,
}

impl App {
    /// Opens the database and builds the parts.
    ///
    /// # Errors
    /// When the database cannot be opened or migrated, or the HTTP client cannot be built.
    pub async fn open(settings: &Settings) -> anyhow::Result<Self> {
        let mut stores = Stores::open_as(&settings.db, &settings.server_name).await?;
        stores.accounts = Arc::new((*stores.accounts).clone().with_quotas(settings.quotas));
        stores
            .accounts
            .keys()
            .set_failure_limit(settings.failed_auth_limit);
        let mut lookup = LookupService::new(
            Fetcher::new(settings.fetcher.clone())?.with_limits(Arc::clone(&stores.limits)),
            Arc::clone(&stores.snapshots),
            Arc::clone(stores.accounts.ledger()),
            settings.lookup,
        )
        .with_limits(Arc::clone(&stores.limits));
        if let Some(links) = &settings.link_resolver {
            lookup = lookup.with_link_resolver(LinkResolver::new(links.clone())?);
        }
        let sandbox_dir = tempfile::tempdir().context("making the test-mode sandbox")?;
        let lookup = Arc::new(
            lookup.with_test_mode(
                sandbox(sandbox_dir.path(), &stores, settings)
                    .await
                    .context("making the test-mode sandbox")?,
            ),
        );
        let resolver = Arc::new(Resolver::new(
            Arc::clone(&lookup),
            Arc::clone(&stores.snapshots),
            settings.fetcher.domain.clone(),
            settings.resolver.clone(),
        )?);
        let webhooks = Arc::new(Webhooks::new(
            Arc::clone(&stores.watches),
            Arc::clone(stores.accounts.ledger()),
            WebhookSettings {
                quotas: settings.quotas,
                ..settings.webhooks
            },
            Arc::new(SystemClock),
        )?);
        let watches = Arc::new(Watches::new(
            stores.watches,
            Arc::clone(&lookup),
            WatchSettings {
                quotas: settings.quotas,
                ..settings.watches
            },
            Arc::clone(&webhooks),
        ));
        let jobs = BulkJobs::new(
            stores.jobs,
            Arc::clone(&lookup),
            Arc::clone(stores.accounts.ledger()),
            &settings.server_name,
            BulkSettings {
                quotas: settings.quotas,
                ..settings.jobs
            },
        );
        let domain = settings.fetcher.domain.clone();
        let api = Api::new(
            Arc::clone(&lookup),
            Arc::clone(stores.accounts.keys()) as Arc<dyn http_api::Authenticator>,
            domain.clone(),
            ApiSettings {
                key_rate: settings.key_rate,
                body_timeout: settings.connections.body_timeout,
                client_address_header: settings.client_address_header.clone(),
                quotas: settings.quotas,
            },
        )
        .with_limits(stores.limits)
        .with_health_check(Arc::new(DatabaseHealth(Arc::clone(
            stores.accounts.ledger(),
        ))))
        .with_jobs(Arc::clone(&jobs))
        .with_watches(Arc::clone(&watches))
        .with_webhooks(Arc::clone(&webhooks))
        .with_resolver(Arc::clone(&resolver))
        .with_idempotency(Arc::clone(&stores.idempotency))
        .with_mcp(Arc::new(mcp::McpOverHttp::new()));
        let dashboard = Dashboard::new(
            Arc::clone(&stores.accounts),
            Arc::clone(&lookup),
            domain,
            DashboardSettings {
                secure_cookies: settings.secure_cookies,
                body_timeout: settings.connections.body_timeout,
                client_address_header: settings.client_address_header.clone(),
            },
        )
        .with_jobs(Arc::clone(&jobs))
        .with_watches(Arc::clone(&watches))
        .with_webhooks(Arc::clone(&webhooks))
        .with_resolver(Arc::clone(&resolver));
        Ok(Self {
            accounts: stores.accounts,
            lookup,
            resolver,
            jobs,
            watches,
            webhooks,
            idempotency: stores.idempotency,
            api,
            dashboard,
            connections: settings.connections,
            _sandbox: sandbox_dir,
        })
    }

    /// The API (what `/mcp` and `company-data mcp` call into).
    pub fn api(&self) -> &Api {
        &self.api
    }

    /// Answers one request: the dashboard's paths to the dashboard, everything else to the API.
    pub async fn handle<B>(&self, request: Request<B>) -> http_serve::Response
    where
        B: hyper::body::Body + Unpin,
    {
        if Dashboard::owns(request.uri().path()) {
            self.dashboard.handle(request).await
        } else {
            self.api.handle(request).await
        }
    }

    /// Hands what happened to accounts to their events until the process ends: every second, each job that
    /// became `done`, `paused` or `cancelled` since ([`BulkJobs::endings`]) and each balance that went below its
    /// threshold ([`credit_ledger::Ledger::balance_alerts`]) is announced to its account's endpoints that want
    /// the event, and a job's to its own callback ([`Webhooks::announce_job`], [`Webhooks::announce`]), then
    /// recorded as announced. A sweep, not a hook, so that what happened
    /// survives a crash before it was told; on a shared database every server does it, and an event's id names
    /// what happened, so each endpoint gets it once.
    pub fn spawn_announcer(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let app = Arc::clone(self);
        tokio::spawn(async move {
            let mut every_second = tokio::time::interval(Duration::from_secs(1));
            loop {
                every_second.tick().await;
                if let Err(error) = app.announce_job_endings().await {
                    tracing::warn!(%error, "job endings could not be announced");
                }
                if let Err(error) = app.announce_balance_alerts().await {
                    tracing::warn!(%error, "low balances could not be announced");
                }
            }
        })
    }

    /// One pass of [`App::spawn_announcer`] over job endings: how many it recorded.
    ///
    /// # Errors
    /// When a store fails; what was recorded before stays recorded, the rest is tried again.
    pub async fn announce_job_endings(&self) -> anyhow::Result<usize> {
        let endings = self.jobs.endings(EVENTS_AT_ONCE).await?;
        for ending in &endings {
            if let Some(kind) = ending.kind {
                self.webhooks
                    .announce_job(
                        ending.tenant,
                        &ending.job.to_string(),
                        ending.callback.as_ref(),
                        (kind, ending.event_id.clone(), ending.data.clone()),
                    )
                    .await?;
            }
            self.jobs.announced(ending).await?;
        }
        Ok(endings.len())
    }

    /// One pass of [`App::spawn_announcer`] over low balances: how many alerts it recorded.
    ///
    /// # Errors
    /// When a store fails; what was recorded before stays recorded, the rest is tried again.
    pub async fn announce_balance_alerts(&self) -> anyhow::Result<usize> {
        let ledger = self.lookup.ledger();
        let alerts = ledger.balance_alerts(EVENTS_AT_ONCE).await?;
        for alert in &alerts {
            self.webhooks
                .announce(
                    Tenant::live(alert.account),
                    AccountEventType::AccountBalanceLow,
                    alert.event_id(),
                    serde_json::to_value(alert.data())?,
                )
                .await?;
            ledger.balance_alert_announced(alert).await?;
        }
        Ok(alerts.len())
    }

    /// Runs the periodic upkeep until the process ends: every 10 s, frees credit holds older than any request
    /// can run (a stopped server's, on a shared database); every minute, deletes expired dashboard sessions and
    /// invitations; every hour, forgets history older than its retention, expired idempotency records and
    /// webhook events done for longer than their retention.
    pub fn spawn_upkeep(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let app = Arc::clone(self);
        tokio::spawn(async move {
            let mut every_ten_seconds = tokio::time::interval(Duration::from_secs(10));
            for tick in 0u64.. {
                every_ten_seconds.tick().await;
                if let Err(error) = app.lookup.release_stale_holds().await {
                    tracing::warn!(%error, "stale-hold sweep failed");
                }
                if tick % 6 == 0
                    && let Err(error) = app.accounts.users().delete_expired().await
                {
                    tracing::warn!(%error, "expired-session sweep failed");
                }
                if tick % 360 == 0
                    && let Err(error) = app.lookup.forget_old_history().await
                {
                    tracing::warn!(%error, "history retention sweep failed");
                }
                if tick % 360 == 0
                    && let Err(error) = app.idempotency.forget_expired().await
                {
                    tracing::warn!(%error, "idempotency record sweep failed");
                }
                if tick % 360 == 0
                    && let Err(error) = app.webhooks.forget_done_events().await
                {
                    tracing::warn!(%error, "delivered-event sweep failed");
                }
            }
        })
    }
}

/// The lookup test-mode keys are answered by: the sandbox's pages ([`sandbox_pages`]) as a folder origin in
/// `dir`, its own snapshot store there (a test key never reads a live snapshot, and the reverse), the service's
/// ledger (which charges test-mode tenants nothing) and the service's lookup settings.
async fn sandbox(
    dir: &std::path::Path,
    stores: &Stores,
    settings: &Settings,
) -> anyhow::Result<LookupService> {
    let origin = dir.join("origin");
    sandbox_pages::write_origin(&origin)?;
    let fetcher = Fetcher::new(FetcherSettings::new(
        page_scraper::Origin::Directory(origin),
        settings.fetcher.domain.clone(),
    ))?;
    let snapshots = SqliteSnapshotStore::open(&dir.join("sandbox.db")).await?;
    Ok(LookupService::new(
        fetcher,
        Arc::new(snapshots),
        Arc::clone(stores.accounts.ledger()),
        settings.lookup,
    ))
}

/// `/healthz`'s question: does the database answer a read.
#[derive(Debug)]
struct DatabaseHealth(Arc<dyn Ledger>);

#[async_trait::async_trait]
impl http_api::HealthCheck for DatabaseHealth {
    async fn check(&self) -> Result<(), String> {
        self.0
            .account(accounts::AccountId(0))
            .await
            .map(drop)
            .map_err(|_| "the database does not answer".to_owned())
    }
}

/// The most job endings, or low balances, one pass of [`App::spawn_announcer`] hands on.
const EVENTS_AT_ONCE: u32 = 100;

/// A server ready to accept connections: what `company-data serve` does before it listens, in one place for the
/// command and for tests that run the server in their own process.
#[derive(Debug)]
pub struct Server {
    app: Arc<App>,
    runner: Runner,
    watch_runner: company_watch::Runner,
    delivery_runner: account_webhooks::DeliveryRunner,
    first_key: Option<CreatedKey>,
    /// On SQLite, held while the server lives: no other process serves its file.
    _lock: Option<ServerLock>,
}

impl Server {
    /// Opens the parts, makes the first account and key on an empty database, frees the credit holds this server
    /// left if it stopped mid-request, and starts the upkeep, the bulk job runner (which first takes back the
    /// job leases this server left), the watch runner and the webhooks' delivery runner. On SQLite it first claims the file ([`ServerLock`]),
    /// so every hold is its own; on PostgreSQL its own are those tagged with [`Settings::server_name`], and the
    /// upkeep frees those of servers that do not come back once they are older than any request can run.
    ///
    /// # Errors
    /// When another server serves the SQLite file, or the database cannot be opened.
    pub async fn start(settings: &Settings) -> anyhow::Result<Self> {
        let lock = match &settings.db {
            Database::Sqlite(path) => Some(ServerLock::acquire(path).context("use another --db")?),
            Database::Postgres(_) => None,
        };
        let app = Arc::new(App::open(settings).await.context("starting the service")?);
        let first_key = app.accounts.first_start().await?;
        let released = app.lookup.release_own_holds().await?;
        if released > 0 {
            tracing::warn!(
                released,
                server = settings.server_name,
                "released the credit holds this server left when it stopped"
            );
        }
        app.spawn_upkeep();
        app.spawn_announcer();
        // Ends with the fetcher, when the server is dropped.
        let _proxy_file = app.lookup.follow_proxy_file();
        let runner = app.jobs.start();
        let watch_runner = app.watches.start();
        let delivery_runner = app.webhooks.start();
        Ok(Self {
            app,
            runner,
            watch_runner,
            delivery_runner,
            first_key,
            _lock: lock,
        })
    }

    /// Stops the bulk job runner (leases in flight end and record their answers) without having served: for a
    /// command that used the parts in its own process.
    pub async fn stop(self) {
        self.runner.stop().await;
        self.watch_runner.stop().await;
        self.delivery_runner.stop().await;
    }

    /// The key made on a first start (to show once), if this start made one.
    pub fn first_key(&self) -> Option<&CreatedKey> {
        self.first_key.as_ref()
    }

    /// The parts.
    pub fn app(&self) -> &Arc<App> {
        &self.app
    }

    /// Serves on `listener` until `shutdown` resolves; the lock is released when this returns.
    ///
    /// # Errors
    /// Only when the listener itself fails.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> std::io::Result<()> {
        let served = serve(listener, Arc::clone(&self.app), shutdown).await;
        // Leases in flight end and record their answers; the rest stay for the next start.
        self.runner.stop().await;
        self.watch_runner.stop().await;
        self.delivery_runner.stop().await;
        served
    }
}

/// Serves `app` on `listener` until `shutdown` resolves (see [`http_serve::serve`]).
///
/// # Errors
/// Only when the listener itself fails.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Arc<App>,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let limits = ConnectionLimits {
        // The dashboard's paths that carry a secret never reach the log.
        secret_path_prefixes: dashboard::SECRET_PATH_PREFIXES,
        ..app.connections
    };
    let handler = move |request| {
        let app = Arc::clone(&app);
        async move { app.handle(request).await }
    };
    http_serve::serve(listener, limits, handler, shutdown).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_is_a_file_or_a_url_and_never_shows_its_password() {
        assert_eq!(
            Database::parse("company-data.db"),
            Database::Sqlite(PathBuf::from("company-data.db"))
        );
        let url = Database::parse("postgresql://cd:secret@db.internal:5432/cd?sslmode=require");
        assert!(matches!(url, Database::Postgres(_)));
        let shown = format!("{url} {url:?}");
        assert!(
            !shown.contains("secret") && shown.contains("cd:***@db.internal"),
            "{shown}"
        );
    }
}
