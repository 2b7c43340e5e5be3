//! The origin's redirects (issue 40): followed on the origin's own host and to the network's hosts, never to
//! another host, which must not see a single request from a route. And what a route's requests look like
//! (issue 42): one browser arriving from a search engine, its client hints agreeing with its user agent. And the
//! company's guest job search, fetched through the same routes for its open-jobs count (issue 42).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use page_scraper::{Fetcher, FetcherSettings, Origin, OriginError, ScrapeError};
use page_url::{NetworkDomain, PageUrl};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

/// A loopback server that answers a path by the first rule whose prefix matches it (a redirect to the
/// location), else the captured guest job search for `/jobs/search` and the captured Google page for anything
/// else, keeping each request's path and head.
struct Server {
    address: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Server {
    async fn start(rules: Vec<(&'static str, String)>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let address = listener.local_addr().expect("an address");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let heads = Arc::new(Mutex::new(Vec::new()));
        let (log, head_log) = (Arc::clone(&seen), Arc::clone(&heads));
        let page = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/origin/company/google.html"
        ))
        .expect("the captured Google page");
        let job_search = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/pages/jobs-guest-search-2026.html"
        ))
        .expect("the captured job search");
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buffer = vec![0u8; 8192];
                let read = stream.read(&mut buffer).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buffer[..read]).into_owned();
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
                log.lock().expect("log").push(path.clone());
                let head = request
                    .split("\r\n\r\n")
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                head_log.lock().expect("log").push(head);
                let body = if path.starts_with("/jobs/search") {
                    &job_search
                } else {
                    &page
                };
                let mut answer = match rules.iter().find(|(prefix, _)| path.starts_with(prefix)) {
                    Some((_, location)) => format!(
                        "HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                    )
                    .into_bytes(),
                    None => format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    )
                    .into_bytes(),
                };
                if answer.starts_with(b"HTTP/1.1 200") {
                    answer.extend_from_slice(body);
                }
                let _ = stream.write_all(&answer).await;
            }
        });
        Self {
            address,
            seen,
            heads,
        }
    }

    fn requests(&self) -> Vec<String> {
        self.seen.lock().expect("log").clone()
    }

    /// The value of header `name` (lower case) in each request's head, in order.
    fn header(&self, name: &str) -> Vec<Option<String>> {
        self.heads
            .lock()
            .expect("log")
            .iter()
            .map(|head| {
                head.lines().skip(1).find_map(|line| {
                    let (n, v) = line.split_once(':')?;
                    n.trim()
                        .eq_ignore_ascii_case(name)
                        .then(|| v.trim().to_owned())
                })
            })
            .collect()
    }
}

fn fetcher(origin: &Server) -> Fetcher {
    let mut settings = FetcherSettings::new(
        Origin::Http(
            url::Url::parse(&format!("http://{}", origin.address)).expect("the origin's URL"),
        ),
        NetworkDomain::default(),
    );
    settings.max_attempts = 1;
    Fetcher::new(settings).expect("a fetcher")
}

fn page(path: &str) -> PageUrl {
    PageUrl::parse_submitted(
        &format!("https://www.linkedin.com{path}"),
        &NetworkDomain::default(),
    )
    .expect("a page URL")
}

#[tokio::test]
async fn a_redirect_to_another_host_is_not_followed() {
    // Another server on loopback, named `localhost`: a different host from the origin's `127.0.0.1`.
    let elsewhere = Server::start(Vec::new()).await;
    let origin = Server::start(vec![
        (
            "/company/moved",
            format!(
                "http://localhost:{}/company/google",
                elsewhere.address.port()
            ),
        ),
        ("/company/old-name", "/company/google".to_owned()),
    ])
    .await;
    let fetcher = fetcher(&origin);
    let deadline = Instant::now() + Duration::from_secs(10);

    let refused = fetcher
        .scrape(&page("/company/moved"), deadline)
        .await
        .expect_err("a redirect off the network is refused");
    let ScrapeError::Fetch(failure) = refused else {
        panic!("a fetch failure, got {refused:?}");
    };
    let reason = failure.to_string();
    assert!(
        reason.contains("redirected off the network, to http://localhost"),
        "{reason}"
    );
    assert!(
        elsewhere.requests().is_empty(),
        "the other host saw nothing"
    );

    // On the origin's own host the redirect is followed, and the page is the one it ended on.
    let scraped = fetcher
        .scrape(&page("/company/old-name"), deadline)
        .await
        .expect("the redirect on the origin is followed");
    assert_eq!(
        scraped.final_url.as_str(),
        "https://www.linkedin.com/company/google"
    );
    assert_eq!(
        origin.requests(),
        ["/company/moved", "/company/old-name", "/company/google"]
    );
}

/// The default route is a Chromium browser on Windows arriving from a search result: its `Sec-CH-UA` names the
/// version its `User-Agent` does, its platform hint the same platform, and it says where it came from.
#[tokio::test]
async fn a_route_looks_like_one_browser_arriving_from_a_search_engine() {
    let origin = Server::start(Vec::new()).await;
    fetcher(&origin)
        .scrape(
            &page("/company/google"),
            Instant::now() + Duration::from_secs(10),
        )
        .await
        .expect("the page");
    let one = |name: &str| origin.header(name).pop().flatten();
    let user_agent = one("user-agent").expect("a user agent");
    let version = user_agent
        .split("Chrome/")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .expect("a Chrome user agent by default");
    let hints = one("sec-ch-ua").expect("client hints");
    assert!(
        hints.contains(&format!(r#""Google Chrome";v="{version}""#)),
        "{hints} against {user_agent}"
    );
    assert!(user_agent.contains("Windows"), "{user_agent}");
    assert_eq!(one("sec-ch-ua-platform").as_deref(), Some(r#""Windows""#));
    assert_eq!(one("referer").as_deref(), Some("https://www.google.com/"));
    assert_eq!(one("sec-fetch-site").as_deref(), Some("cross-site"));
    assert_eq!(one("sec-fetch-mode").as_deref(), Some("navigate"));
    assert!(one("accept").is_some_and(|a| a.starts_with("text/html")));
}

#[test]
fn a_refused_proxy_never_shows_its_password() {
    let mut settings = FetcherSettings::new(
        Origin::Http(url::Url::parse("http://127.0.0.1:9").expect("url")),
        NetworkDomain::default(),
    );
    for (proxy, shown) in [
        // A port out of range: not a URL, so the credentials cannot be told apart; all before `@` goes.
        (
            "http://scraper:hunter2-secret@proxy.example:99999",
            "http://****@proxy.example:99999",
        ),
        (
            "not a url:hunter2-secret@proxy.example",
            "****@proxy.example",
        ),
    ] {
        settings.proxies = vec![proxy.to_owned()];
        let error = Fetcher::new(settings.clone()).expect_err("not a usable proxy");
        assert!(matches!(error, OriginError::BadProxy(_)), "{error:?}");
        let message = error.to_string();
        assert!(!message.contains("hunter2"), "{message}");
        assert!(message.contains(shown), "{message}");
    }
}

#[tokio::test]
async fn the_open_jobs_count_comes_from_the_companys_guest_job_search_through_the_routes() {
    use page_scraper::{JobCount, Priority};
    let origin = Server::start(vec![
        ("/jobs/search?f_C=7", "/authwall?trk=guest".to_owned()),
        (
            "/jobs/search?f_C=8",
            "/jobs/search?keywords=python".to_owned(),
        ),
    ])
    .await;
    let fetcher = fetcher(&origin);
    let deadline = Instant::now() + Duration::from_secs(10);
    let count = fetcher
        .job_count(1441, deadline, Priority::Interactive)
        .await
        .expect("a count");
    assert_eq!(
        count,
        JobCount {
            count: 2000,
            lower_bound: true
        },
        "the capture's header prints 2000+"
    );
    assert_eq!(origin.requests(), ["/jobs/search?f_C=1441"]);
    assert_eq!(
        fetcher.routes()[0].attempts,
        1,
        "through the route pool, paced and counted like a page"
    );
    // A search the network walls is the wall, not a count.
    assert_eq!(
        fetcher.job_count(7, deadline, Priority::Interactive).await,
        Err(ScrapeError::Authwall)
    );

    // A search that lost the company's filter on the way would count every company's jobs.
    assert!(matches!(
        fetcher.job_count(8, deadline, Priority::Interactive).await,
        Err(ScrapeError::WrongPageKind { .. })
    ));

    // A folder origin keeps a company's search at `jobs/<id>.html`.
    let dir = tempfile::tempdir().expect("a folder");
    std::fs::create_dir(dir.path().join("jobs")).expect("jobs/");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/pages/jobs-guest-search-2026.html"
        ),
        dir.path().join("jobs/1441.html"),
    )
    .expect("copied");
    let folder = Fetcher::new(FetcherSettings::new(
        Origin::Directory(dir.path().to_path_buf()),
        NetworkDomain::default(),
    ))
    .expect("a fetcher");
    assert_eq!(
        folder
            .job_count(1441, deadline, Priority::Background)
            .await
            .map(|c| c.count),
        Ok(2000)
    );
    assert_eq!(
        folder.job_count(1, deadline, Priority::Background).await,
        Err(ScrapeError::NotFound)
    );
}
