//! Fetching a company's own home page: its own client (a clear `User-Agent`, no cookies), the public-address
//! guard on every hop, bounded redirects, a size and a time limit, a cap on sites fetched at once and a pause
//! between requests to one host.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use company_model::AccountId;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use url::Url;

/// How websites are fetched.
#[derive(Clone, Debug)]
pub struct SiteSettings {
    /// A forward proxy every website request goes through (`http://host:port`), which then resolves the
    /// sites' names itself: the operator's egress policy (a proxy such as Smokescreen), or the loopback server
    /// tests serve their websites from. `None` (the default): direct, each name resolved through the
    /// public-address guard.
    pub proxy: Option<Url>,
    /// `(host, address)`: resolve these hosts to these addresses instead of through DNS (the guard still
    /// refuses private ones).
    pub resolve: Vec<(String, SocketAddr)>,
    /// How long one way of reaching a site may take, redirects included (a site is tried at most four ways:
    /// `https` and `http`, on its domain and on `www.`). Default 10 s.
    pub timeout: Duration,
    /// The most of a home page read, in bytes; the rest is not read (the links a resolver looks for are in
    /// the first megabytes). Default 2 MiB.
    pub max_bytes: usize,
    /// Redirects followed from the first URL. Default 5.
    pub max_redirects: usize,
    /// Sites fetched at once by this server. Default 32.
    pub concurrency: usize,
    /// Of those, the most one account's requests may fetch at once, so sites that never answer (a tarpit a
    /// tenant names) hold that account's share for their time-out and never every place. Default 8.
    pub per_account: usize,
    /// The least time between two requests to one host. Default 1 s.
    pub per_host_interval: Duration,
    /// The `User-Agent` sent.
    pub user_agent: String,
}

/// The `User-Agent` of website fetches: says who fetches and why, so a site's owner can tell.
pub const SITE_USER_AGENT: &str = concat!(
    "company-data/",
    env!("CARGO_PKG_VERSION"),
    " (resolves a company's website to its company page; reads the home page only)"
);

impl Default for SiteSettings {
    fn default() -> Self {
        Self {
            proxy: None,
            resolve: Vec::new(),
            timeout: Duration::from_secs(10),
            max_bytes: 2 * 1024 * 1024,
            max_redirects: 5,
            concurrency: 32,
            per_account: 8,
            per_host_interval: Duration::from_secs(1),
            user_agent: SITE_USER_AGENT.to_owned(),
        }
    }
}

/// A home page as fetched.
#[derive(Clone, Debug)]
pub(crate) struct HomePage {
    /// Each URL asked for, the first included, the last the page's.
    pub hops: Vec<Url>,
    /// Its markup (at most [`SiteSettings::max_bytes`], invalid UTF-8 replaced).
    pub html: String,
    /// The HTTP status it was answered with.
    pub status: u16,
}

/// Why a site could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    /// The guard refused the address.
    #[error(
        "{0} is not a public address (the public-address guard refuses private, loopback and link-local ones)"
    )]
    Private(String),
    /// No answer (connection, TLS, DNS, time-out).
    #[error("no answer from {url}: {reason}")]
    Unreachable {
        /// The URL asked for.
        url: String,
        /// What failed.
        reason: String,
    },
    /// An answer that is not a page.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL asked for.
        url: String,
        /// Its status.
        status: u16,
    },
    /// Too many redirects, or one to something other than http(s).
    #[error("{0}")]
    Redirects(String),
    /// The host's requests are queued past the site time-out (one request per host per
    /// [`SiteSettings::per_host_interval`]).
    #[error("{0} is being asked too often; its turn would come after the site time-out")]
    Paced(String),
    /// The client could not be built (TLS set-up, a bad proxy URL).
    #[error("the website client could not be built: {0}")]
    Client(String),
}

/// Fetches home pages under [`SiteSettings`].
#[derive(Debug)]
pub(crate) struct SiteFetcher {
    client: reqwest::Client,
    /// The network whose pages a redirect may lead to (followed no further).
    network: Option<page_url::NetworkDomain>,
    settings: SiteSettings,
    at_once: Semaphore,
    /// Each account's share of `at_once` ([`SiteSettings::per_account`]); accounts with nothing in flight are
    /// dropped once there are many.
    shares: Mutex<HashMap<AccountId, Arc<Semaphore>>>,
    /// When each host may be asked again.
    next_by_host: Mutex<HashMap<String, Instant>>,
}

impl SiteFetcher {
    pub(crate) fn new(
        settings: SiteSettings,
        network: Option<page_url::NetworkDomain>,
    ) -> Result<Self, SiteError> {
        let mut builder = public_address::guarded_builder(false, settings.resolve.clone())
            .user_agent(settings.user_agent.clone())
            .connect_timeout(settings.timeout);
        if let Some(proxy) = &settings.proxy {
            builder = builder.proxy(
                reqwest::Proxy::all(proxy.as_str())
                    .map_err(|e| SiteError::Client(e.to_string()))?,
            );
        }
        let client = builder
            .build()
            .map_err(|e| SiteError::Client(e.to_string()))?;
        Ok(Self {
            client,
            network,
            at_once: Semaphore::new(settings.concurrency.max(1)),
            shares: Mutex::new(HashMap::new()),
            settings,
            next_by_host: Mutex::new(HashMap::new()),
        })
    }

    /// The home page of `domain` for `account`'s request: `https://domain/`, then `http://domain/`, then the same
    /// on `www.domain`, the first that answers with a page; else every attempt's failure, first first. Waits for
    /// a place of the account's share first, then of the server's.
    pub(crate) async fn home_page(
        &self,
        account: AccountId,
        domain: &str,
    ) -> Result<HomePage, Vec<SiteError>> {
        let share = self.share_of(account);
        let Ok(_share) = share.acquire().await else {
            return Err(vec![SiteError::Client(
                "the site fetcher is closed".to_owned(),
            )]);
        };
        let Ok(_permit) = self.at_once.acquire().await else {
            return Err(vec![SiteError::Client(
                "the site fetcher is closed".to_owned(),
            )]);
        };
        let mut failures = Vec::new();
        for host in [domain.to_owned(), format!("www.{domain}")] {
            for scheme in ["https", "http"] {
                let Ok(start) = Url::parse(&format!("{scheme}://{host}/")) else {
                    continue;
                };
                let deadline = Instant::now() + self.settings.timeout;
                match tokio::time::timeout_at(deadline, self.follow(start.clone())).await {
                    Ok(Ok(page)) => return Ok(page),
                    Ok(Err(error)) => failures.push(error),
                    Err(_) => failures.push(SiteError::Unreachable {
                        url: start.to_string(),
                        reason: format!("no page within {} s", self.settings.timeout.as_secs_f64()),
                    }),
                }
            }
        }
        Err(failures)
    }

    /// The account's share of the server's places.
    fn share_of(&self, account: AccountId) -> Arc<Semaphore> {
        let per_account = self.settings.per_account.max(1);
        let mut shares = self
            .shares
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if shares.len() > 1_000 {
            shares.retain(|_, share| share.available_permits() < per_account);
        }
        Arc::clone(
            shares
                .entry(account)
                .or_insert_with(|| Arc::new(Semaphore::new(per_account))),
        )
    }

    /// Follows redirects from `start` to a page, checking each hop with the guard.
    async fn follow(&self, start: Url) -> Result<HomePage, SiteError> {
        let mut hops = vec![start];
        loop {
            let Some(url) = hops.last().cloned() else {
                return Err(SiteError::Redirects("no URL to fetch".to_owned()));
            };
            public_address::check_literal_host(&url, false).map_err(SiteError::Private)?;
            // Paced per scheme and host: a refused https attempt does not delay the http one.
            self.wait_for_host(&format!(
                "{}://{}",
                url.scheme(),
                url.host_str().unwrap_or_default()
            ))
            .await?;
            let response = self
                .client
                .get(url.clone())
                .header(
                    reqwest::header::ACCEPT,
                    "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
                )
                .send()
                .await
                .map_err(
                    |error| match public_address::private_address_refused(&error) {
                        Some(host) => SiteError::Private(host),
                        None => SiteError::Unreachable {
                            url: url.to_string(),
                            reason: error_chain(&error),
                        },
                    },
                )?;
            let status = response.status();
            if status.is_redirection() {
                let location = response
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .and_then(|l| url.join(l).ok());
                let Some(next) = location.filter(|n| matches!(n.scheme(), "http" | "https")) else {
                    return Err(SiteError::Redirects(format!(
                        "{url} redirects (HTTP {}) to no http(s) URL",
                        status.as_u16()
                    )));
                };
                if hops.len() > self.settings.max_redirects {
                    return Err(SiteError::Redirects(format!(
                        "{} redirects from {} and more: the most followed is {}",
                        hops.len(),
                        hops[0],
                        self.settings.max_redirects
                    )));
                }
                // A site that sends its visitors to its page on the network names the page itself; the page
                // is read by the lookup, through its routes, not by this client.
                if self.network.as_ref().is_some_and(|network| {
                    page_url::PageUrl::normalize(next.as_str(), network).is_ok()
                }) {
                    hops.push(next);
                    return Ok(HomePage {
                        hops,
                        html: String::new(),
                        status: status.as_u16(),
                    });
                }
                hops.push(next);
                continue;
            }
            if !status.is_success() {
                return Err(SiteError::Status {
                    url: url.to_string(),
                    status: status.as_u16(),
                });
            }
            let html = self.read_limited(response, &url).await?;
            return Ok(HomePage {
                hops,
                html,
                status: status.as_u16(),
            });
        }
    }

    /// The body, up to [`SiteSettings::max_bytes`].
    async fn read_limited(
        &self,
        mut response: reqwest::Response,
        url: &Url,
    ) -> Result<String, SiteError> {
        let mut body = Vec::new();
        while body.len() < self.settings.max_bytes {
            match response.chunk().await {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                Ok(None) => break,
                Err(error) => {
                    return Err(SiteError::Unreachable {
                        url: url.to_string(),
                        reason: error_chain(&error),
                    });
                }
            }
        }
        body.truncate(self.settings.max_bytes);
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// Waits until `host` (`scheme://host`) may be asked again, and books the next turn; refuses when that turn
    /// is further away than a site may take (the host is being asked too often: waiting would only time out).
    async fn wait_for_host(&self, host: &str) -> Result<(), SiteError> {
        let now = Instant::now();
        let turn = {
            let Ok(mut next) = self.next_by_host.lock() else {
                return Ok(());
            };
            if next.len() > 10_000 {
                next.retain(|_, at| *at > now);
            }
            let turn = next.get(host).copied().unwrap_or(now).max(now);
            if turn > now + self.settings.timeout {
                return Err(SiteError::Paced(host.to_owned()));
            }
            next.insert(host.to_owned(), turn + self.settings.per_host_interval);
            turn
        };
        tokio::time::sleep_until(turn).await;
        Ok(())
    }
}

/// An error with its causes, as one line.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
