//! Shortened website links followed to where they land, against a shortener on loopback.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use page_scraper::{LinkResolver, LinkResolverSettings, ResolveError, registrable_domain};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A loopback server that answers each request line by the first rule whose path prefix matches: a redirect
/// to its target, or a 200. Keeps the request lines it saw.
struct Shortener {
    address: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Shortener {
    /// Starts the server with the rules `rules` gives for its port.
    async fn start(rules: impl FnOnce(u16) -> Vec<(&'static str, Option<String>)>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let address = listener.local_addr().expect("an address");
        let rules = rules(address.port());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buffer = vec![0u8; 4096];
                let read = stream.read(&mut buffer).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buffer[..read]).into_owned();
                let line = request.lines().next().unwrap_or_default().to_owned();
                let host = request
                    .lines()
                    .find_map(|l| {
                        l.strip_prefix("host: ")
                            .or_else(|| l.strip_prefix("Host: "))
                    })
                    .unwrap_or_default()
                    .to_owned();
                log.lock().expect("log").push(format!("{host} {line}"));
                let path = line.split_whitespace().nth(1).unwrap_or("/");
                let answer = match rules.iter().find(|(prefix, _)| path.starts_with(prefix)) {
                    Some((_, Some(target))) => format!(
                        "HTTP/1.1 301 Moved Permanently\r\nlocation: {target}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                    ),
                    _ => "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"
                        .to_owned(),
                };
                let _ = stream.write_all(answer.as_bytes()).await;
            }
        });
        Self { address, seen }
    }

    fn requests(&self) -> Vec<String> {
        self.seen.lock().expect("log").clone()
    }
}

fn resolver(shortener: &Shortener, allow_private: bool) -> LinkResolver {
    LinkResolver::new(LinkResolverSettings {
        allow_private,
        resolve: ["goo.gle", "bit.ly"]
            .map(|host| (host.to_owned(), shortener.address))
            .into(),
        ..LinkResolverSettings::default()
    })
    .expect("a resolver")
}

#[tokio::test]
async fn a_shortened_link_lands_where_its_redirects_leave_the_shorteners() {
    let shortener = Shortener::start(|_| {
        vec![(
            "/3DLEokh",
            Some("https://careers.google.com/jobs/".to_owned()),
        )]
    })
    .await;
    let port = shortener.address.port();
    let resolver = resolver(&shortener, true);
    let link = format!("http://goo.gle:{port}/3DLEokh");
    // Ten pages with the same link at once follow it once.
    let landings = futures::future::join_all((0..10).map(|_| resolver.landing(&link))).await;
    let landing = landings[0].clone().expect("lands");
    assert!(
        landings.iter().all(|l| l.as_ref() == Ok(&landing)),
        "{landings:?}"
    );
    assert_eq!(landing.as_str(), "https://careers.google.com/jobs/");
    assert_eq!(
        registrable_domain(landing.as_str()).as_deref(),
        Some("google.com")
    );
    // careers.google.com was never requested: only the shortener was.
    assert_eq!(
        shortener.requests(),
        [format!("goo.gle:{port} GET /3DLEokh HTTP/1.1")]
    );
    // Resolved once: the same link again asks nobody.
    assert_eq!(resolver.landing(&link).await.expect("lands"), landing);
    assert_eq!(shortener.requests().len(), 1);
    // A link that is not on a shortener is its own landing, unrequested.
    let site = resolver
        .landing("https://www.audiense.com/")
        .await
        .expect("itself");
    assert_eq!(site.as_str(), "https://www.audiense.com/");
    assert_eq!(shortener.requests().len(), 1);
}

#[tokio::test]
async fn chains_of_shorteners_are_followed_and_bounded() {
    let shortener = Shortener::start(|port| {
        vec![
            ("/chain", Some(format!("http://goo.gle:{port}/last"))),
            ("/last", Some("https://www.example.org/about".to_owned())),
            ("/dead-end", Some("http://goo.gle:1/gone".to_owned())),
            ("/loop", Some("/loop".to_owned())),
            ("/page", None),
        ]
    })
    .await;
    let port = shortener.address.port();
    let resolver = resolver(&shortener, true);
    let landing = resolver
        .landing(&format!("http://bit.ly:{port}/chain"))
        .await;
    assert_eq!(
        landing.map(String::from).as_deref(),
        Ok("https://www.example.org/about")
    );
    assert_eq!(
        shortener.requests(),
        [
            format!("bit.ly:{port} GET /chain HTTP/1.1"),
            format!("goo.gle:{port} GET /last HTTP/1.1")
        ]
    );
    // A hop that cannot be reached (port 1 on loopback): unreachable.
    let unreachable = resolver
        .landing(&format!("http://bit.ly:{port}/dead-end"))
        .await;
    assert!(
        matches!(unreachable, Err(ResolveError::Unreachable(_))),
        "{unreachable:?}"
    );
    let looping = resolver
        .landing(&format!("http://bit.ly:{port}/loop"))
        .await;
    assert_eq!(looping, Err(ResolveError::TooManyRedirects(5)));
    let not_redirecting = resolver
        .landing(&format!("http://goo.gle:{port}/page"))
        .await;
    assert!(
        matches!(not_redirecting, Err(ResolveError::NoRedirect(_))),
        "{not_redirecting:?}"
    );
}

#[tokio::test]
async fn shorteners_on_private_addresses_are_refused_unless_allowed() {
    let shortener =
        Shortener::start(|_| vec![("/", Some("https://www.example.org/".to_owned()))]).await;
    let port = shortener.address.port();
    let resolver = resolver(&shortener, false);
    let refused = resolver.landing(&format!("http://goo.gle:{port}/x")).await;
    assert!(
        matches!(refused, Err(ResolveError::PrivateAddress(_))),
        "{refused:?}"
    );
    assert!(shortener.requests().is_empty(), "nothing was sent");
}
