//! The record's `domain` when the page's website is a shortened link: followed, on a shortener on loopback, to
//! the domain it lands on; kept in the snapshot so a stored answer never follows it again; refused on a
//! private address unless allowed.

use std::sync::{Arc, Mutex};

use e2e_harness::{Service, ServiceOptions, fixtures};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::GOOGLE;

/// A shortener on loopback that sends every request to `https://careers.google.com/jobs/`; counts them.
async fn shortener() -> (u16, Arc<Mutex<usize>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let port = listener.local_addr().expect("an address").port();
    let count = Arc::new(Mutex::new(0));
    let counter = Arc::clone(&count);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buffer = [0u8; 2048];
            let _ = stream.read(&mut buffer).await;
            *counter.lock().expect("count") += 1;
            let _ = stream
                .write_all(
                    b"HTTP/1.1 301 Moved Permanently\r\nlocation: https://careers.google.com/jobs/\r\n\
                      content-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
        }
    });
    (port, count)
}

/// A folder origin with the Google page, its website link pointing at the loopback shortener's port (the page
/// links `https://goo.gle/3DLEokh`; a test cannot listen on 443 with goo.gle's certificate).
fn origin_with_shortened_website(port: u16) -> tempfile::TempDir {
    let page =
        std::fs::read_to_string(fixtures().join("origin/company/google.html")).expect("the page");
    let linked = "url=https%3A%2F%2Fgoo%2Egle%2F3DLEokh";
    assert!(page.contains(linked), "the captured page links goo.gle");
    let page = page.replace(
        linked,
        &format!("url=http%3A%2F%2Fgoo%2Egle%3A{port}%2F3DLEokh"),
    );
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("company")).expect("company/");
    std::fs::write(dir.path().join("company/google.html"), page).expect("written");
    dir
}

#[tokio::test]
async fn a_shortened_website_gives_the_domain_it_lands_on_once() {
    let (port, requests) = shortener().await;
    let origin = origin_with_shortened_website(port);
    let resolve = format!("goo.gle=127.0.0.1:{port}");
    let service = Service::start(ServiceOptions {
        origin: origin.path().display().to_string(),
        args: vec![
            "--link-resolution-allow-private",
            "--link-resolve",
            &resolve,
        ],
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10");
    let live = service.post(&key, &json!({ "liUrls": [GOOGLE] })).await;
    assert_eq!(live.status, 200, "{}", live.json);
    let record = &live.json["results"][0];
    assert_eq!(record["domain"], "google.com");
    assert_eq!(
        record["website"],
        format!("http://goo.gle:{port}/3DLEokh"),
        "the website as the page shows it"
    );
    assert_eq!(*requests.lock().expect("count"), 1);

    // A stored answer is the snapshot's: the link is not followed again.
    let stored = service
        .post(&key, &json!({ "liUrls": [GOOGLE], "maxAgeHours": 24 }))
        .await;
    assert_eq!(stored.json["results"][0]["source"], "stored");
    assert_eq!(stored.json["results"][0]["domain"], "google.com");
    assert_eq!(*requests.lock().expect("count"), 1);

    // Parsing the stored page again keeps the domain found by following the link.
    service.cli(&["reparse"]);
    let after = service
        .post(&key, &json!({ "liUrls": [GOOGLE], "maxAgeHours": 24 }))
        .await;
    assert_eq!(after.json["results"][0]["domain"], "google.com");
    assert_eq!(*requests.lock().expect("count"), 1);
}

#[tokio::test]
async fn a_shortener_on_a_private_address_is_refused_by_default() {
    let (port, requests) = shortener().await;
    let origin = origin_with_shortened_website(port);
    let resolve = format!("goo.gle=127.0.0.1:{port}");
    let service = Service::start(ServiceOptions {
        origin: origin.path().display().to_string(),
        args: vec!["--link-resolve", &resolve],
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10");
    let live = service.post(&key, &json!({ "liUrls": [GOOGLE] })).await;
    assert_eq!(live.status, 200, "{}", live.json);
    assert_eq!(
        live.json["results"][0]["domain"], "goo.gle",
        "the shortener's, as before"
    );
    assert_eq!(
        *requests.lock().expect("count"),
        0,
        "nothing was sent to a private address"
    );
}
