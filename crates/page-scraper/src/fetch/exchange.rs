//! One request to the origin: an HTTP `GET` through a route (what its answer says: a page, a wall, a block, a
//! redirect off the network), or a file of a folder origin; and the routes' HTTP clients, one per proxy or one
//! direct, each one browser.

use page_parser::{AUTHWALL_PATHS, Block, FetchFailure, ScrapeError};
use page_url::PageUrl;
use url::Url;

use super::failure::{Failure, retry_after};
use super::parsers::Body;
use super::settings::{FetcherSettings, Origin, OriginError};
use crate::routes::Route;

/// What a request asks the origin for.
#[derive(Clone, Copy, Debug)]
pub(super) enum Target<'a> {
    /// A company, school or showcase page.
    Page(&'a PageUrl),
    /// The guest job search filtered by one company (`/jobs/search?f_C=<id>`): its open-jobs count.
    JobSearch {
        /// The company page's numeric id.
        company_id: u64,
    },
}

/// Where a request ended.
#[derive(Clone, Debug)]
pub(super) enum Landed {
    /// A company, school or showcase page (after redirects).
    Page(PageUrl),
    /// The guest job search.
    JobSearch,
}

/// One request for `target`: through `route` to an HTTP origin, or a file of a folder origin (a page at
/// `<kind>/<slug>.html`, a company's job search at `jobs/<company id>.html`).
pub(super) async fn fetch_once(
    settings: &FetcherSettings,
    target: Target<'_>,
    route: Option<&Route>,
) -> Result<(Landed, Body), Failure> {
    match (&settings.origin, route) {
        (Origin::Http(base), Some(route)) => fetch_http(settings, base, target, route).await,
        (Origin::Http(_), None) => Err(ScrapeError::Fetch(FetchFailure::Internal(
            "no route to the origin was taken".into(),
        ))
        .into()),
        (Origin::Directory(dir), _) => {
            let (path, landed) = match target {
                Target::Page(url) => (
                    dir.join(url.kind().as_str())
                        .join(format!("{}.html", url.slug())),
                    Landed::Page(url.clone()),
                ),
                Target::JobSearch { company_id } => (
                    dir.join("jobs").join(format!("{company_id}.html")),
                    Landed::JobSearch,
                ),
            };
            match tokio::fs::read(&path).await {
                Ok(bytes) => Ok((landed, Body { bytes, gzip: false })),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    Err(ScrapeError::NotFound.into())
                }
                Err(e) => Err(ScrapeError::Fetch(FetchFailure::Internal(format!(
                    "reading the captured page failed: {e}"
                )))
                .into()),
            }
        }
    }
}

async fn fetch_http(
    settings: &FetcherSettings,
    base: &Url,
    target: Target<'_>,
    route: &Route,
) -> Result<(Landed, Body), Failure> {
    let path = match target {
        Target::Page(url) => url.path().to_owned(),
        Target::JobSearch { company_id } => page_url::job_search_path(company_id),
    };
    let address = format!("{}{path}", base.as_str().trim_end_matches('/'));
    let mut response = route.client.get(&address).send().await.map_err(|e| {
        let through_proxy = route.via_proxy;
        // Only a connection that could not be opened says the proxy is down: a kept-alive one the proxy
        // closed fails a request too, and the next opens a new one.
        let unreachable = e.is_connect();
        let failure = if unreachable && through_proxy {
            FetchFailure::ProxyUnreachable {
                proxy: route.name.clone(),
            }
        } else if unreachable {
            FetchFailure::Unreachable
        } else if e.is_timeout() {
            FetchFailure::TimedOut
        } else {
            FetchFailure::Request(e.to_string())
        };
        Failure {
            unreachable,
            proxy_failed: through_proxy && (unreachable || (e.is_request() && !e.is_timeout())),
            ..ScrapeError::Fetch(failure).into()
        }
    })?;
    let final_path = response.url().path().to_owned();
    if AUTHWALL_PATHS.iter().any(|p| final_path.starts_with(p)) {
        return Err(ScrapeError::Authwall.into());
    }
    let status = response.status().as_u16();
    let retry_after = retry_after(response.headers());
    let refused = |error: ScrapeError| Failure {
        retry_after,
        ..error.into()
    };
    match status {
        200 => {}
        999 => {
            return Err(refused(ScrapeError::Blocked { by: Block::Http999 }));
        }
        429 => {
            return Err(refused(ScrapeError::Blocked { by: Block::Http429 }));
        }
        404 | 410 => return Err(ScrapeError::NotFound.into()),
        300..=399 => {
            return Err(ScrapeError::Fetch(FetchFailure::RedirectedOff {
                to: redirect_target(&response),
            })
            .into());
        }
        code => {
            return Err(refused(ScrapeError::Fetch(FetchFailure::Status(code))));
        }
    }
    let landed = match target {
        _ if final_path == "/" => {
            return Err(ScrapeError::Blocked {
                by: Block::RedirectedHome,
            }
            .into());
        }
        Target::Page(_) => match PageUrl::from_path(&final_path, &settings.domain) {
            Ok(final_url) => Landed::Page(final_url),
            Err(_) => return Err(ScrapeError::WrongPageKind { found: final_path }.into()),
        },
        // Still the search filtered by this company: a redirect to a broader search would count other
        // companies' jobs as this one's.
        Target::JobSearch { company_id }
            if final_path.trim_end_matches('/') == page_url::JOB_SEARCH_PATH
                && response.url().query_pairs().any(|(name, value)| {
                    name == page_url::JOB_SEARCH_COMPANY_FILTER && value == company_id.to_string()
                }) =>
        {
            Landed::JobSearch
        }
        Target::JobSearch { .. } => {
            let found = match response.url().query() {
                Some(query) if final_path.starts_with(page_url::JOB_SEARCH_PATH) => {
                    format!("{final_path} without the company's filter ({query})")
                }
                _ => final_path,
            };
            return Err(ScrapeError::WrongPageKind { found }.into());
        }
    };
    let gzip = match response
        .headers()
        .get(reqwest::header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("" | "identity") => false,
        Some("gzip" | "x-gzip") => true,
        Some(other) => {
            return Err(ScrapeError::Fetch(FetchFailure::Body(format!(
                "the origin sent the page with Content-Encoding `{other}`, which was not asked for (only gzip is)"
            )))
            .into());
        }
    };
    let limit = settings.max_page_bytes;
    let expected = response.content_length().unwrap_or(0);
    let mut body = Vec::with_capacity(usize::try_from(expected).unwrap_or(limit).min(limit));
    while let Some(chunk) = response.chunk().await.map_err(|e| {
        ScrapeError::Fetch(FetchFailure::Body(format!("the page body broke off: {e}")))
    })? {
        if body.len() + chunk.len() > limit {
            return Err(ScrapeError::Fetch(FetchFailure::Body(format!(
                "the page is larger than {limit} bytes"
            )))
            .into());
        }
        body.extend_from_slice(&chunk);
    }
    Ok((landed, Body { bytes: body, gzip }))
}

/// One route per proxy in `proxies`, or one direct route when there is none: each its own client (connection
/// pool, cookie jar) sending one browser's headers (`browser.rs`: the `n`-th of the settings' user agents for
/// the `n`-th proxy, arriving as [`FetcherSettings::arrival`] says).
pub(crate) fn build_routes(
    settings: &FetcherSettings,
    proxies: &[String],
) -> Result<Vec<Route>, OriginError> {
    let builder = |n: usize| {
        let mut headers = super::browser::navigation_headers(
            &settings.user_agents[n % settings.user_agents.len()],
            &settings.arrival,
        );
        // Asked for and decoded here (not by reqwest), so a page waits for a parser compressed and its
        // compressed bytes are what the snapshot store keeps.
        headers.insert(
            reqwest::header::ACCEPT_ENCODING,
            reqwest::header::HeaderValue::from_static("gzip"),
        );
        reqwest::Client::builder()
            .default_headers(headers)
            // The workspace builds reqwest without its decoders; these keep the client from decoding even
            // when another crate in an embedder's build turns them on (Cargo unifies features).
            .no_gzip()
            .no_brotli()
            .no_zstd()
            .no_deflate()
            .connect_timeout(settings.connect_timeout)
            .pool_max_idle_per_host(settings.max_concurrency)
            .redirect(redirect_policy(settings))
            // A route keeps the cookies the site sets, as one browser would.
            .cookie_store(true)
    };
    if proxies.is_empty() {
        Ok(vec![Route {
            name: "direct".to_owned(),
            via_proxy: false,
            identity: 0,
            client: builder(0)
                .no_proxy()
                .build()
                .map_err(|e| OriginError::Client(e.to_string()))?,
        }])
    } else {
        proxies
            .iter()
            .enumerate()
            .map(|(n, proxy_url)| {
                use std::hash::{Hash, Hasher};
                let name = route_name(proxy_url)
                    .ok_or_else(|| OriginError::BadProxy(masked_proxy(proxy_url)))?;
                let proxy = reqwest::Proxy::all(proxy_url)
                    .map_err(|_| OriginError::BadProxy(masked_proxy(proxy_url)))?;
                let mut digest = std::collections::hash_map::DefaultHasher::new();
                proxy_url.hash(&mut digest);
                Ok(Route {
                    name,
                    via_proxy: true,
                    identity: digest.finish(),
                    client: builder(n)
                        .proxy(proxy)
                        .build()
                        .map_err(|e| OriginError::Client(e.to_string()))?,
                })
            })
            .collect()
    }
}

/// Redirects the fetcher follows: at most [`MAX_REDIRECTS`], each to the origin's own host and port or, over
/// https, to the network's domain or one of its subdomains (`uk.linkedin.com` → `www.linkedin.com`). A page of
/// the origin cannot send a route (its cookies, its proxy's address) to any other host; such a redirect ends
/// the request and is answered as a failure that names where it pointed.
fn redirect_policy(settings: &FetcherSettings) -> reqwest::redirect::Policy {
    let origin = match &settings.origin {
        Origin::Http(base) => base
            .host_str()
            .map(|host| (host.to_ascii_lowercase(), base.port_or_known_default())),
        Origin::Directory(_) => None,
    };
    let domain = settings.domain.as_str().to_owned();
    reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
        }
        let url = attempt.url();
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        let same_origin = origin.as_ref().is_some_and(|(origin_host, port)| {
            *origin_host == host && url.port_or_known_default() == *port
        });
        if same_origin || (url.scheme() == "https" && on_network(&host, &domain)) {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// Redirects followed for one page.
const MAX_REDIRECTS: usize = 5;

/// Whether `host` is the network's `domain` or one of its subdomains.
fn on_network(host: &str, domain: &str) -> bool {
    host.strip_suffix(domain)
        .is_some_and(|rest| rest.is_empty() || rest.ends_with('.'))
}

/// Where a redirect the fetcher did not follow pointed, for its failure: scheme and host only, so that no
/// query string (a token of someone else's) reaches a log.
fn redirect_target(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|location| response.url().join(location.to_str().ok()?).ok())
        .map_or_else(
            || "nowhere".to_owned(),
            |url| format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default()),
        )
}

/// A route's name: `direct`, or the proxy's URL without its credentials; `None` for text that is not a URL.
fn route_name(proxy: &str) -> Option<String> {
    let mut url = Url::parse(proxy).ok()?;
    url.set_username("").ok()?;
    url.set_password(None).ok()?;
    Some(url.as_str().trim_end_matches('/').to_owned())
}

/// A proxy setting as it may be shown (errors, logs): its username and password replaced by `****`; in text that does not
/// parse as a URL, everything between `//` (or the start) and the last `@`, which is where credentials would be.
pub(crate) fn masked_proxy(proxy: &str) -> String {
    if let Ok(mut url) = Url::parse(proxy)
        && url.has_host()
    {
        // A username alone is the secret with many proxy providers (`http://TOKEN@proxy`): both are masked.
        if !url.username().is_empty() {
            let _ = url.set_username("****");
        }
        if url.password().is_some() {
            let _ = url.set_password(Some("****"));
        }
        return url.as_str().trim_end_matches('/').to_owned();
    }
    match proxy.rsplit_once('@') {
        Some((before, after)) => {
            let scheme = before.find("//").map_or("", |at| &before[..at + 2]);
            format!("{scheme}****@{after}")
        }
        None => proxy.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxies_are_shown_without_their_password() {
        assert_eq!(
            masked_proxy("socks5://scraper:hunter2@proxy.example:1080"),
            "socks5://****:****@proxy.example:1080"
        );
        assert_eq!(
            masked_proxy("http://customer-token-123@proxy.example:8080"),
            "http://****@proxy.example:8080"
        );
        assert_eq!(
            masked_proxy("http://proxy.example:3128"),
            "http://proxy.example:3128"
        );
        assert_eq!(
            masked_proxy("http://a:b@c@proxy.example:99999"),
            "http://****@proxy.example:99999"
        );
        assert!(on_network("www.linkedin.com", "linkedin.com"));
        assert!(on_network("linkedin.com", "linkedin.com"));
        assert!(!on_network("evil-linkedin.com", "linkedin.com"));
        assert!(!on_network("linkedin.com.evil.example", "linkedin.com"));
    }
}
