//! What a fetcher is configured with: where pages come from ([`Origin`]) and its limits ([`FetcherSettings`]).

use std::path::PathBuf;
use std::time::Duration;

use page_url::NetworkDomain;
use url::Url;

use crate::routes::RouteSettings;

/// Where live pages come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// An HTTP(S) server that serves the network's paths: the real site (`https://www.linkedin.com`), or a
    /// test or caching server. The page's path (`/company/google`) is appended to this base.
    Http(Url),
    /// A folder of captured pages laid out as `<dir>/<company|school|showcase>/<slug>.html`, the slug as in the
    /// canonical URL (percent-encoded, lower case). A missing file is a page that does not exist.
    Directory(PathBuf),
}

/// Why a fetcher setting was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OriginError {
    /// An `http(s)://` origin that is not a valid URL with a host.
    #[error(
        "the origin `{0}` is not a valid http(s) URL with a host; write it like `https://www.linkedin.com`"
    )]
    BadUrl(String),
    /// A folder origin that does not exist or is not a folder.
    #[error(
        "the origin folder `{0}` does not exist or is not a folder; give an http(s) URL or a folder of captured pages laid out as <dir>/company/<slug>.html"
    )]
    NotAFolder(PathBuf),
    /// A proxy URL reqwest does not accept; its username and password (or, for text that is not a URL, whatever
    /// stands before an `@`) are written as `****`.
    #[error(
        "the proxy `{0}` is not usable; write it as http://host:port, https://host:port or socks5://host:port"
    )]
    BadProxy(String),
    /// The HTTP client could not be built (TLS set-up).
    #[error("the HTTP client could not be set up: {0}")]
    Client(String),
    /// The proxy file ([`FetcherSettings::proxy_file`]) could not be read, or lists no proxy.
    #[error(
        "the proxy file `{path}` {reason}; list one proxy URL per line (http://host:port, https://host:port or socks5://host:port; `#` starts a comment)"
    )]
    ProxyFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

impl Origin {
    /// Reads an origin setting: text starting with `http://` or `https://` is a URL, anything else a folder.
    ///
    /// # Errors
    /// [`OriginError::BadUrl`] or [`OriginError::NotAFolder`].
    pub fn parse(text: &str) -> Result<Self, OriginError> {
        if text.starts_with("http://") || text.starts_with("https://") {
            let url = Url::parse(text).map_err(|_| OriginError::BadUrl(text.to_owned()))?;
            if url.host_str().is_none() {
                return Err(OriginError::BadUrl(text.to_owned()));
            }
            Ok(Origin::Http(url))
        } else {
            let path = PathBuf::from(text);
            if !path.is_dir() {
                return Err(OriginError::NotAFolder(path));
            }
            Ok(Origin::Directory(path))
        }
    }
}

/// How the [`Fetcher`] talks to its origin. Build with [`FetcherSettings::new`] and change fields as needed.
///
/// [`Fetcher`]: crate::Fetcher
#[derive(Clone, Debug)]
pub struct FetcherSettings {
    /// Where pages come from.
    pub origin: Origin,
    /// The network whose canonical URLs records carry, whatever the origin.
    pub domain: NetworkDomain,
    /// `User-Agent` values: route `n` sends the `n`-th (in turn), always the same one, with the headers that
    /// browser sends ([`Arrival`](crate::Arrival): client hints that agree with it). Never empty.
    pub user_agents: Vec<String>,
    /// How every route arrives at a page: by default from a search engine's results.
    pub arrival: crate::Arrival,
    /// Outbound proxies (`http://`, `https://`, `socks5://` URLs), one route each; empty (and no
    /// [`FetcherSettings::proxy_file`]) for one direct route.
    pub proxies: Vec<String>,
    /// A file of more proxies, one URL per line (`#` comments, blank lines ignored), read at start and followed
    /// by [`Fetcher::follow_proxy_file`]: when it changes, the routes become `proxies` and its lines.
    ///
    /// [`Fetcher::follow_proxy_file`]: crate::Fetcher::follow_proxy_file
    pub proxy_file: Option<PathBuf>,
    /// How each route's pace and cool-down react to the origin's push-back.
    pub routes: RouteSettings,
    /// Time allowed to open a connection.
    pub connect_timeout: Duration,
    /// Largest page read, in bytes of HTML (after decompression); a larger page is a fetch failure.
    pub max_page_bytes: usize,
    /// Requests to the origin in flight at once.
    pub max_concurrency: usize,
    /// Request starts per second, spread evenly; `None` for no pacing. With [`Fetcher::with_limits`] on a shared
    /// store, for every server together.
    ///
    /// [`Fetcher::with_limits`]: crate::Fetcher::with_limits
    pub rate_per_second: Option<f64>,
    /// Attempts per page, the first included. Retries happen only on blocks, the sign-in wall, server errors
    /// and connection failures, and only while the caller's deadline leaves time; after push-back the retry
    /// takes another route (or waits for one).
    pub max_attempts: u32,
    /// First retry delay; doubled each retry up to [`FetcherSettings::backoff_max`], with full jitter.
    pub backoff_base: Duration,
    /// Longest retry delay (a `Retry-After` longer than the deadline allows ends the retries instead).
    pub backoff_max: Duration,
}

impl FetcherSettings {
    /// Settings with the defaults: three desktop browser user agents, no proxy, 5 s to connect, pages up to
    /// 8 MiB, 16 requests in flight, no pacing, 4 attempts with backoff from 250 ms to 5 s.
    pub fn new(origin: Origin, domain: NetworkDomain) -> Self {
        let user_agents = [
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36",
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Safari/605.1.15",
            "Mozilla/5.0 (X11; Linux x86_64; rv:131.0) Gecko/20100101 Firefox/131.0",
        ];
        Self {
            origin,
            domain,
            user_agents: user_agents.iter().map(|ua| (*ua).to_owned()).collect(),
            arrival: crate::Arrival::default(),
            proxies: Vec::new(),
            proxy_file: None,
            routes: RouteSettings::default(),
            connect_timeout: Duration::from_secs(5),
            max_page_bytes: 8 * 1024 * 1024,
            max_concurrency: 16,
            rate_per_second: None,
            max_attempts: 4,
            backoff_base: Duration::from_millis(250),
            backoff_max: Duration::from_secs(5),
        }
    }
}
