//! Company websites for the resolver's tests, and the network's pages of the companies they belong to.
//!
//! [`Websites`] is a real HTTP forward proxy on loopback that serves every site itself, by the request's host:
//! the server under test reaches it through `serve --site-proxy`, the documented setting for an egress proxy,
//! so the tests never switch the public-address guard off. `https://` (a `CONNECT`) is refused, as a site
//! without TLS refuses it, and the resolver goes on to `http://`.
//!
//! [`NetworkPages`] is a folder origin (`serve --origin DIR`) of company pages derived from the captured
//! Audiense page (`tests/fixtures/origin/company/audiense.html`, 2024 markup): only its name, page name and
//! website are rewritten, so each derived page is parsed as a real guest page is.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;

/// What one website host answers.
#[derive(Clone, Debug)]
pub enum Site {
    /// A home page with this markup.
    Page(String),
    /// A redirect (301) to this absolute URL.
    Redirect(String),
    /// This status, with an empty body.
    Status(u16),
    /// Never answers.
    Hang,
    /// This markup after this delay.
    Slow(Duration, String),
}

/// The forward proxy that serves every website (see the module docs).
pub struct Websites {
    /// `http://127.0.0.1:<port>`, for `serve --site-proxy`.
    pub proxy: String,
    sites: Arc<Mutex<HashMap<String, Site>>>,
    hits: Arc<Mutex<HashMap<String, Vec<std::time::Instant>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Websites {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Websites {
    /// Serves `sites`, keyed by host (`acme.test`, `www.acme.test`); any other host answers 502, as a proxy
    /// that cannot resolve a name does.
    pub async fn start(sites: HashMap<String, Site>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let proxy = format!("http://{}", listener.local_addr().expect("address"));
        let sites = Arc::new(Mutex::new(sites));
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let (served, counted) = (Arc::clone(&sites), Arc::clone(&hits));
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (sites, hits) = (Arc::clone(&served), Arc::clone(&counted));
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let (sites, hits) = (Arc::clone(&sites), Arc::clone(&hits));
                        async move {
                            Ok::<_, std::convert::Infallible>(answer(&request, &sites, &hits).await)
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self {
            proxy,
            sites,
            hits,
            task,
        }
    }

    /// Requests that reached `host` (`CONNECT`s included).
    pub fn hits(&self, host: &str) -> usize {
        self.arrivals(host).len()
    }

    /// When each request for `host` arrived, in order (`CONNECT`s included).
    pub fn arrivals(&self, host: &str) -> Vec<std::time::Instant> {
        self.hits
            .lock()
            .expect("hits lock")
            .get(host)
            .cloned()
            .unwrap_or_default()
    }

    /// Requests that reached any host.
    pub fn hits_total(&self) -> usize {
        self.hits
            .lock()
            .expect("hits lock")
            .values()
            .map(Vec::len)
            .sum()
    }

    /// Serves `site` at `host` from now on.
    pub fn set(&self, host: &str, site: Site) {
        self.sites
            .lock()
            .expect("sites lock")
            .insert(host.to_owned(), site);
    }
}

async fn answer(
    request: &hyper::Request<hyper::body::Incoming>,
    sites: &Mutex<HashMap<String, Site>>,
    hits: &Mutex<HashMap<String, Vec<std::time::Instant>>>,
) -> hyper::Response<Full<Bytes>> {
    let host = request
        .uri()
        .host()
        .unwrap_or_default()
        .to_ascii_lowercase();
    hits.lock()
        .expect("hits lock")
        .entry(host.clone())
        .or_default()
        .push(std::time::Instant::now());
    let status = |code: u16, body: String| {
        hyper::Response::builder()
            .status(code)
            .header("content-type", "text/html; charset=utf-8")
            .body(Full::new(Bytes::from(body)))
            .expect("a response")
    };
    if request.method() == hyper::Method::CONNECT {
        return status(502, String::new());
    }
    let site = sites.lock().expect("sites lock").get(&host).cloned();
    match site {
        None => status(502, format!("no site {host}")),
        Some(Site::Page(html)) => status(200, html),
        Some(Site::Slow(delay, html)) => {
            tokio::time::sleep(delay).await;
            status(200, html)
        }
        Some(Site::Status(code)) => status(code, String::new()),
        Some(Site::Redirect(to)) => hyper::Response::builder()
            .status(301)
            .header("location", to)
            .body(Full::new(Bytes::new()))
            .expect("a response"),
        Some(Site::Hang) => std::future::pending().await,
    }
}

/// A company's page on the network, for [`NetworkPages`].
#[derive(Clone, Debug)]
pub struct Company<'a> {
    /// `company` or `showcase`.
    pub kind: &'a str,
    /// The page name (`/company/<slug>`).
    pub slug: &'a str,
    /// The name the page shows.
    pub name: &'a str,
    /// The host of the website the page links (`www.acme.test`).
    pub website: &'a str,
}

/// A folder origin of pages derived from the captured Audiense page (see the module docs).
pub struct NetworkPages {
    dir: tempfile::TempDir,
}

impl NetworkPages {
    /// The pages of `companies`.
    pub fn new(companies: &[Company<'_>]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let pages = Self { dir };
        for company in companies {
            pages.add(company);
        }
        pages
    }

    /// Adds (or replaces) one page.
    pub fn add(&self, company: &Company<'_>) {
        let folder = self.dir.path().join(company.kind);
        std::fs::create_dir_all(&folder).expect("folder");
        std::fs::write(
            folder.join(format!("{}.html", company.slug)),
            derived_page(company),
        )
        .expect("page written");
    }

    /// The folder, for `serve --origin`.
    pub fn origin(&self) -> String {
        self.dir.path().display().to_string()
    }
}

/// The captured Audiense page with `company`'s name, page and website in place of Audiense's.
pub fn derived_page(company: &Company<'_>) -> String {
    static CAPTURED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let captured = CAPTURED.get_or_init(|| {
        std::fs::read_to_string(crate::fixtures().join("origin/company/audiense.html"))
            .expect("the captured Audiense page")
    });
    captured
        .replace("www%2Eaudiense%2Ecom", &company.website.replace('.', "%2E"))
        .replace("www.audiense.com", company.website)
        .replace("Audiense", company.name)
        .replace(
            "/company/audiense",
            &format!("/{}/{}", company.kind, company.slug),
        )
}

/// A home page whose markup holds `body` (links, JSON-LD).
pub fn home_page(title: &str, head: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><head><title>{title}</title>{head}</head><body><main><h1>{title}</h1>\
         <p>Welcome.</p></main>{body}</body></html>"
    )
}

/// A company's page as [`NetworkOrigin`] keeps it: [`Company`] with owned parts.
#[derive(Clone, Debug)]
pub struct PageSpec {
    /// `company` or `showcase`.
    pub kind: String,
    /// The page name.
    pub slug: String,
    /// The name the page shows.
    pub name: String,
    /// The host of the website the page links.
    pub website: String,
}

impl PageSpec {
    /// The page as [`derived_page`] takes it.
    pub fn company(&self) -> Company<'_> {
        Company {
            kind: &self.kind,
            slug: &self.slug,
            name: &self.name,
            website: &self.website,
        }
    }
}

/// An HTTP origin on loopback that serves the network's pages of `PageSpec`s (derived from the captured
/// Audiense page as [`NetworkPages`] does, made when asked for) after a delay, and 404 for any other path: the
/// network side of the resolver's benchmark, where a page takes as long as the real network's.
pub struct NetworkOrigin {
    /// `http://127.0.0.1:<port>`, for `serve --origin`.
    pub base: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for NetworkOrigin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl NetworkOrigin {
    /// Serves `pages`, each answer after `delay`.
    pub async fn start(pages: Vec<PageSpec>, delay: Duration) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let by_path: Arc<HashMap<String, PageSpec>> = Arc::new(
            pages
                .into_iter()
                .map(|p| (format!("/{}/{}", p.kind, p.slug), p))
                .collect(),
        );
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let pages = Arc::clone(&by_path);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request: hyper::Request<_>| {
                        let pages = Arc::clone(&pages);
                        async move {
                            tokio::time::sleep(delay).await;
                            let page = pages
                                .get(request.uri().path())
                                .map(|p| derived_page(&p.company()));
                            let (status, body) = match page {
                                Some(html) => (200, html),
                                None => (404, String::new()),
                            };
                            Ok::<_, std::convert::Infallible>(
                                hyper::Response::builder()
                                    .status(status)
                                    .header("content-type", "text/html; charset=utf-8")
                                    .body(Full::new(Bytes::from(body)))
                                    .expect("a response"),
                            )
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { base, task }
    }
}
