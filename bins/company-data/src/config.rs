//! The command line's configuration of the server: every `serve` flag, with the environment variable that
//! can set it, and the [`Settings`] they give. Parsing and defaults only; what each setting does is the
//! business of the crate it is handed to.

use std::net::SocketAddr;
use std::time::Duration;

use account_webhooks::WebhookSettings;
use api_keys::FailureLimit;
use bulk_jobs::BulkSettings;
use clap::Args;
use company_lookup::LookupSettings;
use company_resolve::{ResolverSettings, SiteSettings};
use company_watch::WatchSettings;
use credit_ledger::Quotas;
use http_api::KeyRate;
use http_serve::ConnectionLimits;
use page_scraper::{FetcherSettings, LinkResolverSettings, Origin};
use page_url::NetworkDomain;

use server_assembly::{Database, Settings, Stores};

/// `--db`: the database.
#[derive(Args, Clone, Debug)]
pub struct DbArg {
    /// The database: a SQLite file (the embedded default, one server), or a PostgreSQL URL
    /// `postgres://USER[:PASSWORD]@HOST:PORT/DB[?sslmode=require]` that any number of servers share.
    #[arg(long, env = "COMPANY_DATA_DB", default_value = "company-data.db", value_parser = parse_database)]
    pub db: Database,
}

fn parse_database(text: &str) -> Result<Database, String> {
    if text.trim().is_empty() {
        return Err("give a SQLite file or a postgres:// URL".to_owned());
    }
    Ok(Database::parse(text.trim()))
}

impl DbArg {
    /// Opens every store on the database.
    ///
    /// # Errors
    /// When the database cannot be opened or migrated.
    pub async fn open(&self) -> anyhow::Result<Stores> {
        Stores::open(&self.db).await
    }
}

/// `--network-domain`.
#[derive(Args, Clone, Debug)]
pub struct DomainArg {
    /// The professional network's domain; records carry `https://www.<domain>/...` URLs.
    #[arg(long, env = "COMPANY_DATA_NETWORK_DOMAIN", default_value = "linkedin.com", value_parser = parse_domain)]
    pub network_domain: NetworkDomain,
}

fn parse_domain(text: &str) -> Result<NetworkDomain, String> {
    NetworkDomain::parse(text).map_err(|e| e.to_string())
}

/// The flags of `company-data serve`.
#[derive(Args, Clone, Debug)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each is an on/off command-line flag"
)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "COMPANY_DATA_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    #[command(flatten)]
    db: DbArg,
    /// This server's name among the servers on one PostgreSQL database, unique among them and the same across
    /// its restarts: its credit holds carry it, so a restart frees them at once. Default: the host's name and
    /// the `--listen` port, e.g. `web-1:8080` (with port 0, a name of this process alone).
    #[arg(long, env = "COMPANY_DATA_SERVER_NAME")]
    server_name: Option<String>,
    /// Where live pages come from: an http(s) base URL (the page's path is appended) or a folder of captured
    /// pages laid out as `DIR/<company|school|showcase>/<slug>.html`.
    #[arg(
        long,
        env = "COMPANY_DATA_ORIGIN",
        default_value = "https://www.linkedin.com"
    )]
    origin: String,
    #[command(flatten)]
    domain: DomainArg,
    /// Seconds one live lookup may take before it is abandoned (fractions allowed).
    #[arg(long, env = "COMPANY_DATA_LIVE_TIMEOUT", default_value = "25", value_parser = parse_seconds)]
    live_timeout: Duration,
    /// Requests to the origin in flight at once.
    #[arg(long, env = "COMPANY_DATA_ORIGIN_CONCURRENCY", default_value = "16", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    origin_concurrency: u32,
    /// Request starts per second to the origin, spread evenly (0 for no limit; fractions allowed).
    #[arg(long, env = "COMPANY_DATA_ORIGIN_RATE", default_value = "0", value_parser = parse_rate)]
    origin_rate: f64,
    /// Attempts per page, the first included (retries only on blocks, server errors and connection failures,
    /// and only inside the live time-out).
    #[arg(long, env = "COMPANY_DATA_ORIGIN_ATTEMPTS", default_value = "4", value_parser = clap::value_parser!(u32).range(1..=20))]
    origin_attempts: u32,
    /// A User-Agent; repeat for several: each route sends one, always the same (environment: `|`-separated).
    #[arg(
        long = "user-agent",
        env = "COMPANY_DATA_USER_AGENTS",
        value_delimiter = '|'
    )]
    user_agents: Vec<String>,
    /// The page each route says it comes from (`Referer`); empty for none (a typed address, `Sec-Fetch-Site:
    /// none`). By default a search engine's results, the arrival the network walls least.
    #[arg(long, env = "COMPANY_DATA_REFERER", default_value_t = page_scraper::Arrival::default().referer.unwrap_or_default())]
    referer: String,
    /// `Accept-Language` of every route's requests.
    #[arg(long, env = "COMPANY_DATA_ACCEPT_LANGUAGE", default_value_t = page_scraper::Arrival::default().accept_language)]
    accept_language: String,
    /// An outbound proxy (http://, https:// or socks5:// URL); repeat for several, each a route with its own learned
    /// pace and cool-down (docs/operations.md, "Proxies") (environment: `,`-separated).
    #[arg(long = "proxy", env = "COMPANY_DATA_PROXIES", value_delimiter = ',')]
    proxies: Vec<String>,
    /// The proxy file ([`proxy_file_help`] says what it holds and how often it is read).
    #[arg(long, env = "COMPANY_DATA_PROXY_FILE", help = proxy_file_help())]
    proxy_file: Option<std::path::PathBuf>,
    /// Starts per second each route begins at (0: unpaced until the site first pushes back; fractions allowed).
    #[arg(long, env = "COMPANY_DATA_ROUTE_RATE", default_value = "0", value_parser = parse_rate)]
    route_rate: f64,
    /// Seconds a route rests after a block without Retry-After, doubled at each block in a row (default: the fetcher's).
    #[arg(long, env = "COMPANY_DATA_ROUTE_COOL_DOWN", value_parser = parse_seconds)]
    route_cool_down: Option<Duration>,
    /// Requests per second each API key may make, on average (0 for no limit; fractions allowed).
    #[arg(long, env = "COMPANY_DATA_KEY_RATE", default_value = "10", value_parser = parse_rate)]
    key_rate: f64,
    /// Requests an API key may make at once before the rate applies.
    #[arg(long, env = "COMPANY_DATA_KEY_BURST", default_value = "20", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    key_burst: u32,
    /// Failed authentications (keys that are not valid) one client address may send at once, and per minute on
    /// average; past it, its requests get 429 with Retry-After and no key is checked until it earns a try back
    /// (one every 60 s / N). IPv6 counts per /64.
    #[arg(long, env = "COMPANY_DATA_FAILED_AUTH_LIMIT", default_value = "20", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    failed_auth_limit: u32,
    /// Seconds a client has to send a request's headers, and the longest a kept-alive connection may sit idle.
    #[arg(long, env = "COMPANY_DATA_HEADER_TIMEOUT", default_value = "10", value_parser = parse_seconds)]
    header_timeout: Duration,
    /// Seconds a client has to send a request's body.
    #[arg(long, env = "COMPANY_DATA_BODY_TIMEOUT", default_value = "30", value_parser = parse_seconds)]
    body_timeout: Duration,
    /// Client connections open at once; further ones wait in the listen backlog until one closes.
    #[arg(long, env = "COMPANY_DATA_MAX_CONNECTIONS", default_value = "4096", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    max_connections: u32,
    /// Client connections one address may have open at once (IPv6 per /64); one more is closed when accepted.
    /// Default 256, or no cap (0) when `--client-address-header` says a reverse proxy is in front (every
    /// connection then has the proxy's address; cap per client at the proxy).
    #[arg(long, env = "COMPANY_DATA_MAX_CONNECTIONS_PER_ADDRESS", value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    max_connections_per_address: Option<u32>,
    /// Seconds a write to a client may make no progress before its connection is closed (a client that stops
    /// reading its answer).
    #[arg(long, env = "COMPANY_DATA_WRITE_TIMEOUT", default_value = "30", value_parser = parse_seconds)]
    write_timeout: Duration,
    /// Bulk jobs one account may have not yet ended (queued, running, paused) at once; an account's own quota
    /// (`company-data accounts quotas`) replaces it. Test-mode keys' jobs count apart, under the same quota.
    #[arg(long, env = "COMPANY_DATA_QUOTA_OPEN_JOBS", default_value_t = Quotas::default().open_jobs)]
    quota_open_jobs: u32,
    /// URLs of an account's open jobs not yet answered, all together.
    #[arg(long, env = "COMPANY_DATA_QUOTA_QUEUED_URLS", default_value_t = Quotas::default().queued_urls)]
    quota_queued_urls: u64,
    /// Watches one account may have.
    #[arg(long, env = "COMPANY_DATA_QUOTA_WATCHES", default_value_t = Quotas::default().watches)]
    quota_watches: u32,
    /// Webhook endpoints one account may have.
    #[arg(long, env = "COMPANY_DATA_QUOTA_ENDPOINTS", default_value_t = Quotas::default().endpoints)]
    quota_endpoints: u32,
    /// API keys (not revoked, live and test together) one account may have.
    #[arg(long, env = "COMPANY_DATA_QUOTA_KEYS", default_value_t = Quotas::default().keys)]
    quota_keys: u32,
    /// Megabytes of answers one account may have kept for `Idempotency-Key` retries (each kept 24 hours).
    #[arg(long, env = "COMPANY_DATA_QUOTA_IDEMPOTENCY_MB", default_value_t = Quotas::default().idempotency_mb)]
    quota_idempotency_mb: u32,
    /// Live lookups each account may have in flight at once, over all its requests (0 for no cap). A request
    /// that would go over it is answered 429 `too_many_live_lookups`, unless the account has nothing else in flight.
    #[arg(long, env = "COMPANY_DATA_ACCOUNT_LIVE_LOOKUPS", default_value_t = company_lookup::DEFAULT_LIVE_LOOKUPS_PER_ACCOUNT)]
    account_live_lookups: usize,
    /// Bulk job parts (of up to 25 pages each) this server works on at once. Jobs' live fetches go to the origin
    /// after synchronous requests', within --origin-concurrency and --origin-rate.
    #[arg(long, env = "COMPANY_DATA_JOB_WORKERS", default_value = "4", value_parser = clap::value_parser!(u32).range(1..=256))]
    job_workers: u32,
    /// Days a finished bulk job and its results are kept.
    #[arg(long, env = "COMPANY_DATA_JOB_RETENTION_DAYS", default_value = "7", value_parser = clap::value_parser!(u32).range(1..=3650))]
    job_retention_days: u32,
    /// Days a page's history (a point per fetch, its record at each change) is kept. Only the newest fetch's
    /// HTML is kept, whatever this says.
    #[arg(long, env = "COMPANY_DATA_HISTORY_DAYS", default_value = "730", value_parser = clap::value_parser!(u32).range(1..=36500))]
    history_days: u32,
    /// Whose companies a search looks through: `account` (each account the companies it was answered: looked
    /// up, in jobs, resolved, watched; no account sees what another looked up) or `deployment` (every stored
    /// company, for a single-team deployment).
    #[arg(long, env = "COMPANY_DATA_SEARCH_SCOPE", value_enum, default_value_t = SearchScopeArg::Account)]
    search_scope: SearchScopeArg,
    /// Seconds one search may run, from when it has its database connection, before it is stopped (the API
    /// answers 400 `search_timed_out`; fractions allowed). Searches are free: this and `--account-searches`
    /// bound what an account's searches take of the database. Raise it for a store of millions of companies
    /// searched with filters few of them match (`company-data search` takes it too).
    #[arg(long, env = "COMPANY_DATA_SEARCH_TIME_LIMIT", default_value_t = company_lookup::DEFAULT_SEARCH_TIME_LIMIT.as_secs_f64(), value_parser = parse_seconds_number)]
    search_time_limit: f64,
    /// Searches each account may have in flight at once, over every server on one PostgreSQL database (at
    /// least 1); one more gets 429 `too_many_searches`.
    #[arg(long, env = "COMPANY_DATA_ACCOUNT_SEARCHES", default_value_t = company_lookup::DEFAULT_SEARCHES_PER_ACCOUNT, value_parser = clap::value_parser!(u32).range(1..=1_000))]
    account_searches: u32,
    /// Deliver webhooks also to loopback, private and link-local addresses, and accept `http` webhook URLs
    /// (tests and local receivers only; refused by default).
    #[arg(long, env = "COMPANY_DATA_WEBHOOK_ALLOW_PRIVATE")]
    webhook_allow_private: bool,
    /// Seconds before a webhook delivery that failed is tried again; each next retry waits twice as long, up
    /// to an hour apart, for 24 h from the event.
    #[arg(long, env = "COMPANY_DATA_WEBHOOK_FIRST_RETRY",
          default_value_t = WebhookSettings::default().first_retry.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    webhook_first_retry: u64,
    /// Log filter (tracing's EnvFilter syntax), e.g. `info` or `company_data=debug`.
    #[arg(long, env = "COMPANY_DATA_LOG", default_value = "info")]
    pub log: String,
    /// Serve Prometheus metrics at `http://ADDR/metrics` on a listener of its own (e.g. `127.0.0.1:9090`); off
    /// by default, so they are never public by accident. docs/operations.md lists them.
    #[arg(long, env = "COMPANY_DATA_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// How log lines are written to standard error: `text` for people, `json` (one object per line, with the
    /// request's span fields: request_id, account, key prefix, status, duration) for log collectors.
    #[arg(long, env = "COMPANY_DATA_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// The header a trusted reverse proxy puts the client's address in (e.g. `X-Forwarded-For`, last entry
    /// used, or `X-Real-IP`); failed authentications and the dashboard's password forms are limited per client
    /// address. Unset: the connection's peer. Set it only behind a proxy that always sets the header.
    #[arg(long, env = "COMPANY_DATA_CLIENT_ADDRESS_HEADER")]
    client_address_header: Option<http::HeaderName>,
    /// Keep a website on a URL shortener (goo.gle, bit.ly, ...) as the record's `domain` instead of following
    /// the link to the domain it lands on.
    #[arg(long, env = "COMPANY_DATA_NO_LINK_RESOLUTION")]
    no_link_resolution: bool,
    /// Follow shortened links also to shorteners on loopback, private or link-local addresses (tests and local
    /// set-ups only; refused by default).
    #[arg(long, env = "COMPANY_DATA_LINK_RESOLUTION_ALLOW_PRIVATE")]
    link_resolution_allow_private: bool,
    /// `HOST=IP:PORT`: resolve a shortener's host to this address instead of through DNS (repeat for several;
    /// tests and pinned set-ups).
    #[arg(long = "link-resolve", value_parser = parse_resolve)]
    link_resolve: Vec<(String, SocketAddr)>,
    /// Fetch companies' websites (the resolver's home-page step) through this forward proxy
    /// (`http://host:port`), which resolves the sites' names itself: an egress proxy that enforces the
    /// operator's policy, or a test's loopback server. Unset: direct, every name through the public-address
    /// guard.
    #[arg(long, env = "COMPANY_DATA_SITE_PROXY")]
    site_proxy: Option<url::Url>,
    /// `HOST=IP:PORT`: resolve a website's host to this address instead of through DNS (repeat for several);
    /// the public-address guard still refuses private addresses.
    #[arg(long = "site-resolve", value_parser = parse_resolve)]
    site_resolve: Vec<(String, SocketAddr)>,
    /// Seconds one request for a company's home page may take, redirects included (the resolver tries a site at
    /// most four ways: https and http, on its domain and on www.).
    #[arg(long, env = "COMPANY_DATA_SITE_TIMEOUT", default_value = "10", value_parser = parse_seconds)]
    site_timeout: Duration,
    /// Mark the dashboard's cookies `Secure` on every response: set it when a TLS proxy is in front (they are
    /// marked on any request whose `X-Forwarded-Proto` is `https` anyway).
    #[arg(long, env = "COMPANY_DATA_SECURE_COOKIES")]
    secure_cookies: bool,
}

fn parse_resolve(text: &str) -> Result<(String, SocketAddr), String> {
    let (host, address) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not HOST=IP:PORT, e.g. goo.gle=127.0.0.1:8443"))?;
    let address = address
        .parse()
        .map_err(|_| format!("`{address}` is not an IP:PORT, e.g. 127.0.0.1:8443"))?;
    Ok((host.trim().to_ascii_lowercase(), address))
}

fn parse_rate(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && *r >= 0.0)
        .ok_or_else(|| format!("`{text}` is not a number of requests per second (0 for no limit)"))
}

fn parse_seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 3600.0)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| format!("`{text}` is not a number of seconds between 0 and 3600"))
}

/// [`parse_seconds`] as the number, for a flag whose default is a constant's seconds.
fn parse_seconds_number(text: &str) -> Result<f64, String> {
    parse_seconds(text).map(|seconds| seconds.as_secs_f64())
}

/// Trimmed, non-empty values of a repeatable flag.
fn non_empty(values: &[String]) -> Vec<String> {
    values
        .iter()
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
        .collect()
}

/// `--search-scope`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum SearchScopeArg {
    /// Each account searches the companies it was answered.
    Account,
    /// Every account searches every stored company.
    Deployment,
}

/// `--log-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Lines for people.
    Text,
    /// One JSON object per line.
    Json,
}

impl ServeArgs {
    /// The settings these flags give.
    ///
    /// # Errors
    /// When `--origin` is neither an http(s) URL nor a folder.
    pub fn settings(&self) -> anyhow::Result<Settings> {
        let mut fetcher = FetcherSettings::new(
            Origin::parse(&self.origin)?,
            self.domain.network_domain.clone(),
        );
        fetcher.max_concurrency = self.origin_concurrency as usize;
        fetcher.rate_per_second = (self.origin_rate > 0.0).then_some(self.origin_rate);
        fetcher.routes.start_per_second = (self.route_rate > 0.0).then_some(self.route_rate);
        fetcher.routes.cool_down = self.route_cool_down.unwrap_or(fetcher.routes.cool_down);
        fetcher.max_attempts = self.origin_attempts;
        let user_agents = non_empty(&self.user_agents);
        if !user_agents.is_empty() {
            fetcher.user_agents = user_agents;
        }
        fetcher.arrival = page_scraper::Arrival {
            referer: Some(self.referer.trim().to_owned()).filter(|r| !r.is_empty()),
            accept_language: self.accept_language.trim().to_owned(),
        };
        fetcher.proxies = non_empty(&self.proxies);
        fetcher.proxy_file.clone_from(&self.proxy_file);
        Ok(Settings {
            db: self.db.db.clone(),
            fetcher,
            lookup: LookupSettings {
                live_timeout: self.live_timeout,
                live_lookups_per_account: (self.account_live_lookups > 0)
                    .then_some(self.account_live_lookups),
                history_retention: Duration::from_hours(24 * u64::from(self.history_days)),
                search_scope: match self.search_scope {
                    SearchScopeArg::Account => api_contract::SearchScopeName::Account,
                    SearchScopeArg::Deployment => api_contract::SearchScopeName::Deployment,
                },
                search_time_limit: Duration::from_secs_f64(self.search_time_limit),
                searches_per_account: self.account_searches,
            },
            link_resolver: (!self.no_link_resolution).then(|| LinkResolverSettings {
                allow_private: self.link_resolution_allow_private,
                resolve: self.link_resolve.clone(),
                ..LinkResolverSettings::default()
            }),
            resolver: ResolverSettings {
                site: SiteSettings {
                    proxy: self.site_proxy.clone(),
                    resolve: self.site_resolve.clone(),
                    timeout: self.site_timeout,
                    ..SiteSettings::default()
                },
                ..ResolverSettings::default()
            },
            key_rate: (self.key_rate > 0.0).then_some(KeyRate {
                per_second: self.key_rate,
                burst: self.key_burst,
            }),
            connections: ConnectionLimits {
                header_timeout: self.header_timeout,
                body_timeout: self.body_timeout,
                max_connections: self.max_connections as usize,
                max_connections_per_address: match (
                    self.max_connections_per_address,
                    &self.client_address_header,
                ) {
                    (Some(most), _) => most as usize,
                    (None, Some(_)) => 0,
                    (None, None) => ConnectionLimits::default().max_connections_per_address,
                },
                write_timeout: self.write_timeout,
                ..ConnectionLimits::default()
            },
            secure_cookies: self.secure_cookies,
            client_address_header: self.client_address_header.clone(),
            failed_auth_limit: FailureLimit {
                max_failures: self.failed_auth_limit,
                ..FailureLimit::default()
            },
            watches: WatchSettings::default(),
            webhooks: WebhookSettings {
                allow_private: self.webhook_allow_private,
                first_retry: Duration::from_secs(self.webhook_first_retry),
                ..WebhookSettings::default()
            },
            jobs: BulkSettings {
                workers: self.job_workers as usize,
                retention: Duration::from_hours(24 * u64::from(self.job_retention_days)),
                ..BulkSettings::default()
            },
            quotas: Quotas {
                open_jobs: self.quota_open_jobs,
                queued_urls: self.quota_queued_urls,
                watches: self.quota_watches,
                endpoints: self.quota_endpoints,
                keys: self.quota_keys,
                idempotency_mb: self.quota_idempotency_mb,
            },
            server_name: self
                .server_name
                .clone()
                .unwrap_or_else(|| match self.listen.port() {
                    // A port picked at start says nothing stable: a name no other server has, freed by the sweep only.
                    0 => format!(
                        "{}:0-{}-{}",
                        host_name(),
                        std::process::id(),
                        std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0, |since| since.as_nanos())
                    ),
                    port => format!("{}:{port}", host_name()),
                }),
        })
    }
}

/// The machine's host name (Linux: `/proc/sys/kernel/hostname`), or `localhost` (give `--server-name` there).
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// `--proxy-file`'s help, with the poll interval the fetcher uses.
fn proxy_file_help() -> String {
    format!(
        "A file of more proxies, one URL per line (`#` comments); re-read every {} s while serving, and when it \
         changes the routes become `--proxy` and its lines (routes that stay keep what they learned)",
        page_scraper::PROXY_FILE_POLL.as_secs()
    )
}
