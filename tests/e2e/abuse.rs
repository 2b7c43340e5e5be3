//! Resource abuse (issue 4): slow and idle clients are shed by time-outs while others are served, and a client
//! that hangs up mid-batch leaves no fetch or credit hold behind.

use std::time::{Duration, Instant};

use e2e_harness::{Service, ServiceOptions, TestOrigin};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn address(service: &Service) -> String {
    service.base.trim_start_matches("http://").to_owned()
}

/// Reads until the server closes the connection; returns what it sent, or `None` if it is still open after
/// `wait`.
async fn read_until_closed(stream: &mut TcpStream, wait: Duration) -> Option<Vec<u8>> {
    let mut received = Vec::new();
    let deadline = tokio::time::Instant::now() + wait;
    let mut buffer = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(received),
            Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
        }
    }
}

/// A raw connection that has sent the head of a company-data request with a body of `length` bytes.
async fn post_head(service: &Service, key: &str, length: usize) -> TcpStream {
    let mut stream = TcpStream::connect(address(service)).await.expect("connect");
    let head = format!(
        "POST /v1/network/company-data HTTP/1.1\r\nhost: x\r\nx-api-key: {key}\r\n\
         content-type: application/json\r\ncontent-length: {length}\r\n\r\n"
    );
    stream
        .write_all(head.as_bytes())
        .await
        .expect("send the head");
    stream
}

#[tokio::test]
async fn idle_and_slow_header_connections_are_shed_while_others_are_served() {
    // All from 127.0.0.1: no per-address cap here (http-serve's own tests hold that), the time-outs alone.
    let service = Service::start(ServiceOptions {
        args: vec![
            "--header-timeout",
            "1",
            "--max-connections-per-address",
            "0",
        ],
        ..ServiceOptions::default()
    });
    let address = address(&service);
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(TcpStream::connect(&address).await.expect("connect"));
    }
    // Headers trickled a byte every 100 ms, never finished.
    let mut trickler = TcpStream::connect(&address).await.expect("connect");
    let trickled = async {
        let started = Instant::now();
        // The slow client's pace: a byte every 100 ms.
        let mut pace = tokio::time::interval(Duration::from_millis(100));
        for byte in b"POST /v1/network/company-data HTTP/1.1\r\nhost: x\r\nx-padding: "
            .iter()
            .chain([b'a'; 200].iter())
        {
            pace.tick().await;
            if trickler.write_all(&[*byte]).await.is_err() {
                break;
            }
        }
        let closed = read_until_closed(&mut trickler, Duration::from_secs(3)).await;
        (closed.is_some(), started.elapsed())
    };
    // A connection kept alive after one request, then silent.
    let mut kept = TcpStream::connect(&address).await.expect("connect");
    kept.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("send");
    let mut head = [0u8; 12];
    kept.read_exact(&mut head).await.expect("a response");
    assert_eq!(&head, b"HTTP/1.1 200");

    let served = async {
        let started = Instant::now();
        let reply = service.get("/healthz").await;
        (reply.status, started.elapsed())
    };
    let ((trickler_closed, trickled_for), (status, took)) = tokio::join!(trickled, served);
    assert_eq!(status, 200);
    assert!(
        took < Duration::from_millis(500),
        "a normal request waited {took:?}"
    );
    assert!(trickler_closed, "the slow-header client was not cut off");
    assert!(
        trickled_for < Duration::from_secs(3),
        "cut off after {trickled_for:?}"
    );
    assert!(
        read_until_closed(&mut kept, Duration::from_secs(2))
            .await
            .is_some(),
        "an idle kept-alive connection is still open"
    );
    for stream in &mut idle {
        assert!(
            read_until_closed(stream, Duration::from_secs(2))
                .await
                .is_some(),
            "a connection that never sent a byte is still open"
        );
    }
    assert_eq!(service.get("/healthz").await.status, 200);
}

#[tokio::test]
async fn a_trickled_body_gets_408_and_costs_nothing() {
    let service = Service::start(ServiceOptions {
        args: vec!["--body-timeout", "1"],
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "1");
    let body = json!({ "liUrls": ["https://www.linkedin.com/company/google"] }).to_string();
    let stream = post_head(&service, &key, body.len()).await;
    let started = Instant::now();
    let (mut reader, mut writer) = stream.into_split();
    let trickle = tokio::spawn(async move {
        // The slow client's pace: a byte every 200 ms.
        let mut pace = tokio::time::interval(Duration::from_millis(200));
        for byte in body.bytes() {
            pace.tick().await;
            if writer.write_all(&[byte]).await.is_err() {
                return;
            }
        }
    });
    let mut response = Vec::new();
    let read =
        tokio::time::timeout(Duration::from_secs(5), reader.read_to_end(&mut response)).await;
    trickle.abort();
    assert!(read.is_ok(), "no answer to a trickled body");
    let response = String::from_utf8_lossy(&response);
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(response.contains("\"body_timeout\""), "{response}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "answered after {:?}",
        started.elapsed()
    );
    assert!(
        service
            .cli(&["credits", "show", "--account", "acme"])
            .starts_with("acme: 1 credits")
    );
}

#[tokio::test]
async fn a_client_that_hangs_up_mid_batch_leaves_no_fetch_or_hold() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "50");
    let mut urls: Vec<String> = (0..10)
        .map(|n| format!("https://www.linkedin.com/company/p{}", 900 + n))
        .collect();
    urls.push("https://www.linkedin.com/company/slow".into()); // 3 s
    let body = json!({ "liUrls": urls }).to_string();
    let mut stream = post_head(&service, &key, body.len()).await;
    stream
        .write_all(body.as_bytes())
        .await
        .expect("send the body");
    e2e_harness::eventually(Duration::from_secs(2), "the batch never started", || {
        std::future::ready((origin.hits("/company/slow") > 0).then_some(()))
    })
    .await;
    // The batch holds its 11 credits while it runs.
    assert_eq!(service.available_credits(&key).await, "39");
    drop(stream);
    let hung_up = Instant::now();

    // Within a second (long before the 3 s page would be sent) the fetch is dropped and the hold released.
    e2e_harness::eventually(
        Duration::from_secs(1),
        "after the client left, the fetch was never abandoned",
        || std::future::ready((origin.abandoned() > 0).then_some(())),
    )
    .await;
    e2e_harness::eventually(
        Duration::from_secs(1).saturating_sub(hung_up.elapsed()),
        "a second after the client left, not all 50 credits are available",
        || async { (service.available_credits(&key).await == "50").then_some(()) },
    )
    .await;
    let shown = service.cli(&["credits", "show", "--account", "acme"]);
    assert!(
        shown.starts_with("acme: 50 credits"),
        "nothing is charged: {shown}"
    );
    assert_eq!(
        shown.lines().count(),
        2,
        "only the grant is in the ledger: {shown}"
    );
    let reply = service
        .post(
            &key,
            &json!({ "liUrls": ["https://www.linkedin.com/company/google"] }),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.json);
}

#[tokio::test]
async fn at_the_connection_cap_new_clients_wait_until_idle_ones_are_shed() {
    let service = Service::start(ServiceOptions {
        args: vec!["--max-connections", "5", "--header-timeout", "1"],
        ..ServiceOptions::default()
    });
    let address = address(&service);
    let mut idle = Vec::new();
    for _ in 0..5 {
        idle.push(TcpStream::connect(&address).await.expect("connect"));
    }
    // The kernel queues connections for the server in the order they came, so these five are the ones it
    // takes in before the sixth, whenever it gets to them.
    let started = Instant::now();
    let reply = service.get("/healthz").await;
    let waited = started.elapsed();
    assert_eq!(reply.status, 200);
    assert!(
        waited > Duration::from_millis(500) && waited < Duration::from_secs(3),
        "the sixth client should wait for the idle ones' time-out (1 s), waited {waited:?}"
    );
}
