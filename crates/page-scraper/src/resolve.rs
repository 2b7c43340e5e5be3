//! Where a shortened website link lands, found without ever contacting anything but the shorteners.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use url::Url;

use page_parser::is_url_shortener;
use public_address::{check_literal_host, private_address_refused, public_only_client_resolving};

/// The longest a failure to follow a link is remembered.
const FAILURES_REMEMBERED_FOR: Duration = Duration::from_mins(10);

/// How [`LinkResolver`] follows shortened links.
#[derive(Clone, Debug)]
pub struct LinkResolverSettings {
    /// Redirects followed at most (each a request to a shortener). Default 5.
    pub max_redirects: u32,
    /// Time for the whole resolution of one link. Default 3 s.
    pub timeout: Duration,
    /// Allow shorteners whose addresses are loopback, private, link-local or otherwise not public (tests and
    /// local set-ups only). Default false: such an address is refused before any connection, so a page cannot
    /// make the service reach inside its own network.
    pub allow_private: bool,
    /// Hosts resolved to fixed addresses instead of through DNS (`host` → address), as curl's `--resolve`;
    /// for tests and pinned set-ups. The address rules above still apply.
    pub resolve: Vec<(String, SocketAddr)>,
    /// How long a link's landing is remembered; the same link is not followed again meanwhile. A failure is
    /// remembered for at most ten minutes. Default 24 hours.
    pub remember_for: Duration,
}

impl Default for LinkResolverSettings {
    fn default() -> Self {
        Self {
            max_redirects: 5,
            timeout: Duration::from_secs(3),
            allow_private: false,
            resolve: Vec::new(),
            remember_for: Duration::from_hours(24),
        }
    }
}

/// Why a link's landing was not found; the record keeps the link's own domain then.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The link is not a URL, or not http(s).
    #[error("`{0}` is not an http(s) URL")]
    NotAUrl(String),
    /// The shortener's address is loopback, private, link-local or otherwise not public.
    #[error("{0} is not a public address")]
    PrivateAddress(String),
    /// The shortener answered without a redirect, or with a redirect to nowhere.
    #[error("{0} did not redirect")]
    NoRedirect(String),
    /// Still on a shortener after the most redirects allowed.
    #[error("more than {0} redirects")]
    TooManyRedirects(u32),
    /// The connection failed, or the time-out passed.
    #[error("the shortener could not be reached: {0}")]
    Unreachable(String),
}

/// Follows shortened links (the hosts of [`crate::URL_SHORTENERS`]) to where they land: it requests each
/// shortener in turn, reads its redirect, and stops at the first URL that is not on a shortener, without
/// requesting it. Addresses that are not public are refused (see [`LinkResolverSettings::allow_private`]),
/// at connection time, so a DNS answer cannot change between the check and the connection. Results are
/// remembered per link. Cheap to clone.
#[derive(Clone, Debug)]
pub struct LinkResolver {
    client: reqwest::Client,
    settings: Arc<LinkResolverSettings>,
    remembered: Arc<Mutex<Remembered>>,
    /// One lock per link being followed, so that a batch of pages with the same link follows it once.
    following: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
}

/// Links followed: when, and where they landed (or why not).
type Remembered = HashMap<String, (Instant, Result<Url, ResolveError>)>;

impl LinkResolver {
    /// A resolver with these settings.
    ///
    /// # Errors
    /// [`ResolveError::Unreachable`] when the HTTP client cannot be built.
    pub fn new(settings: LinkResolverSettings) -> Result<Self, ResolveError> {
        let client = public_only_client_resolving(
            settings.allow_private,
            settings.resolve.clone(),
            settings.timeout,
        )
        .map_err(|e| ResolveError::Unreachable(e.to_string()))?;
        Ok(Self {
            client,
            settings: Arc::new(settings),
            remembered: Arc::new(Mutex::new(HashMap::new())),
            following: Arc::new(Mutex::new(HashMap::new())),
        })
    }

    /// Where `link` lands: `link` itself when it is not on a shortener (nothing is requested), else the first
    /// URL of its redirects that is not.
    ///
    /// # Errors
    /// [`ResolveError`]: not a URL, a private address, no redirect, too many redirects, unreachable.
    pub async fn landing(&self, link: &str) -> Result<Url, ResolveError> {
        let url = Url::parse(link).map_err(|_| ResolveError::NotAUrl(link.to_owned()))?;
        if !is_url_shortener(url.as_str()) {
            return Ok(url);
        }
        if let Some(known) = self.remembered(link) {
            return known;
        }
        let turn = Arc::clone(
            self.following
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .entry(link.to_owned())
                .or_default(),
        );
        let _turn = turn.lock().await;
        // Whoever held the turn before may have followed it.
        if let Some(known) = self.remembered(link) {
            return known;
        }
        let followed = tokio::time::timeout(self.settings.timeout, self.follow(url))
            .await
            .unwrap_or_else(|_| Err(ResolveError::Unreachable("time-out".to_owned())));
        self.lock()
            .insert(link.to_owned(), (Instant::now(), followed.clone()));
        self.following
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(link);
        followed
    }

    async fn follow(&self, mut url: Url) -> Result<Url, ResolveError> {
        for _ in 0..self.settings.max_redirects {
            if !matches!(url.scheme(), "http" | "https") {
                return Err(ResolveError::NotAUrl(url.to_string()));
            }
            check_literal_host(&url, self.settings.allow_private)
                .map_err(ResolveError::PrivateAddress)?;
            let response = self.client.get(url.clone()).send().await.map_err(|error| {
                match private_address_refused(&error) {
                    Some(refused) => ResolveError::PrivateAddress(refused),
                    None => ResolveError::Unreachable(error.to_string()),
                }
            })?;
            let next = response
                .status()
                .is_redirection()
                .then(|| response.headers().get(reqwest::header::LOCATION))
                .flatten()
                .and_then(|location| location.to_str().ok())
                .and_then(|location| url.join(location).ok())
                .ok_or_else(|| {
                    ResolveError::NoRedirect(url.host_str().unwrap_or("?").to_owned())
                })?;
            if !is_url_shortener(next.as_str()) {
                return Ok(next);
            }
            url = next;
        }
        Err(ResolveError::TooManyRedirects(self.settings.max_redirects))
    }

    fn remembered(&self, link: &str) -> Option<Result<Url, ResolveError>> {
        let mut remembered = self.lock();
        match remembered.get(link) {
            Some((at, result)) if at.elapsed() < self.remember(result) => Some(result.clone()),
            Some(_) => {
                remembered.remove(link);
                None
            }
            None => None,
        }
    }

    /// How long a result is remembered.
    fn remember(&self, result: &Result<Url, ResolveError>) -> Duration {
        match result {
            Ok(_) => self.settings.remember_for,
            Err(_) => self.settings.remember_for.min(FAILURES_REMEMBERED_FOR),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Remembered> {
        // A panic while holding this lock cannot leave the map inconsistent (single inserts and removes).
        self.remembered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
