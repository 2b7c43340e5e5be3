//! Getting a page's HTML from the configured origin.

use std::path::PathBuf;
use std::time::Duration;

use page_url::{NetworkDomain, PageUrl};
use reqwest::StatusCode;
use url::Url;

use crate::{CompanyRecord, ScrapeError, parse_page};

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

/// Why an origin setting was refused.
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
    /// The HTTP client could not be built (TLS set-up).
    #[error("the HTTP client could not be set up: {0}")]
    Client(String),
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

/// How the [`Fetcher`] talks to its origin.
#[derive(Clone, Debug)]
pub struct FetcherSettings {
    /// Where pages come from.
    pub origin: Origin,
    /// The network whose canonical URLs records carry, whatever the origin.
    pub domain: NetworkDomain,
    /// `User-Agent` sent to HTTP origins.
    pub user_agent: String,
    /// Time allowed to open a connection.
    pub connect_timeout: Duration,
    /// Largest page body read, in bytes; a larger page is a fetch failure.
    pub max_page_bytes: usize,
}

impl FetcherSettings {
    /// Settings with the defaults: a desktop browser's user agent, 5 s to connect, pages up to 8 MiB.
    pub fn new(origin: Origin, domain: NetworkDomain) -> Self {
        Self {
            origin,
            domain,
            user_agent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                         Chrome/126.0.0.0 Safari/537.36"
                .to_owned(),
            connect_timeout: Duration::from_secs(5),
            max_page_bytes: 8 * 1024 * 1024,
        }
    }
}

/// A page fetched and parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct ScrapedPage {
    /// The page's record.
    pub record: CompanyRecord,
    /// The page the request ended on after redirects, normalized (e.g. `/company/1441` → `/company/google`).
    /// Snapshots are stored under it as well as under the requested URL.
    pub final_url: PageUrl,
}

/// Fetches pages from one origin with a pooled HTTP client. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Fetcher {
    settings: FetcherSettings,
    client: reqwest::Client,
}

impl Fetcher {
    /// Builds a fetcher and its connection pool.
    ///
    /// # Errors
    /// [`OriginError::Client`] when the HTTP client cannot be built.
    pub fn new(settings: FetcherSettings) -> Result<Self, OriginError> {
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in [
            (
                "accept",
                "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            ),
            ("accept-language", "en-US,en;q=0.9"),
        ] {
            headers.insert(name, reqwest::header::HeaderValue::from_static(value));
        }
        let client = reqwest::Client::builder()
            .user_agent(settings.user_agent.clone())
            .default_headers(headers)
            .connect_timeout(settings.connect_timeout)
            .redirect(reqwest::redirect::Policy::limited(5))
            .build()
            .map_err(|e| OriginError::Client(e.to_string()))?;
        Ok(Self { settings, client })
    }

    /// The settings this fetcher was built with.
    pub fn settings(&self) -> &FetcherSettings {
        &self.settings
    }

    /// Fetches a page and parses it (the parse runs on the blocking pool: a page is a few hundred KB of HTML).
    ///
    /// The caller bounds the time (the service's live time-out); dropping the future abandons the fetch.
    ///
    /// # Errors
    /// The [`ScrapeError`] that says why the URL gave no record.
    pub async fn scrape(&self, url: &PageUrl) -> Result<ScrapedPage, ScrapeError> {
        let (final_url, html) = self.fetch_html(url).await?;
        let domain = self.settings.domain.clone();
        let parse_url = final_url.clone();
        let record = tokio::task::spawn_blocking(move || parse_page(&html, &parse_url, &domain))
            .await
            .map_err(|e| ScrapeError::Fetch(format!("the parser stopped: {e}")))??;
        // The page's own canonical link is the best final URL; fall back to where the fetch ended.
        let final_url = record
            .final_li_url
            .as_deref()
            .and_then(|u| PageUrl::normalize(u, &self.settings.domain).ok())
            .unwrap_or(final_url);
        Ok(ScrapedPage { record, final_url })
    }

    /// Fetches a page's HTML and the normalized URL it ended on.
    ///
    /// # Errors
    /// [`ScrapeError`] for HTTP statuses and redirects that mean the page is not there or not given to us.
    pub async fn fetch_html(&self, url: &PageUrl) -> Result<(PageUrl, String), ScrapeError> {
        match &self.settings.origin {
            Origin::Http(base) => self.fetch_http(base, url).await,
            Origin::Directory(dir) => {
                let path = dir
                    .join(url.kind().as_str())
                    .join(format!("{}.html", url.slug()));
                match tokio::fs::read(&path).await {
                    Ok(bytes) => Ok((url.clone(), String::from_utf8_lossy(&bytes).into_owned())),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        Err(ScrapeError::NotFound)
                    }
                    Err(e) => Err(ScrapeError::Fetch(format!(
                        "reading the captured page failed: {e}"
                    ))),
                }
            }
        }
    }

    async fn fetch_http(
        &self,
        base: &Url,
        url: &PageUrl,
    ) -> Result<(PageUrl, String), ScrapeError> {
        let target = format!("{}{}", base.as_str().trim_end_matches('/'), url.path());
        let mut response = self.client.get(&target).send().await.map_err(|e| {
            ScrapeError::Fetch(if e.is_connect() {
                "could not connect to the origin".into()
            } else {
                e.to_string()
            })
        })?;
        let final_path = response.url().path().to_owned();
        if [
            "/authwall",
            "/login",
            "/uas/login",
            "/signup",
            "/checkpoint",
        ]
        .iter()
        .any(|p| final_path.starts_with(p))
        {
            return Err(ScrapeError::Authwall);
        }
        let status = response.status();
        match status.as_u16() {
            999 => {
                return Err(ScrapeError::Blocked {
                    reason: "HTTP 999".into(),
                });
            }
            429 => {
                return Err(ScrapeError::Blocked {
                    reason: "HTTP 429, rate limited".into(),
                });
            }
            404 | 410 => return Err(ScrapeError::NotFound),
            _ if status == StatusCode::OK => {}
            code => {
                return Err(ScrapeError::Fetch(format!(
                    "the origin answered HTTP {code}"
                )));
            }
        }
        let final_url = match PageUrl::from_path(&final_path, &self.settings.domain) {
            Ok(final_url) => final_url,
            Err(_) if final_path == "/" => {
                return Err(ScrapeError::Blocked {
                    reason: "redirected to the home page".into(),
                });
            }
            Err(_) => return Err(ScrapeError::WrongPageKind { found: final_path }),
        };
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| ScrapeError::Fetch(format!("the page body broke off: {e}")))?
        {
            if body.len() + chunk.len() > self.settings.max_page_bytes {
                return Err(ScrapeError::Fetch(format!(
                    "the page is larger than {} bytes",
                    self.settings.max_page_bytes
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((final_url, String::from_utf8_lossy(&body).into_owned()))
    }
}
