//! The connection limits a stranger meets (issue 40), on real sockets on loopback: a reader that stops reading
//! frees its slot after the write time-out, one address cannot hold more than its share of connections, and an
//! HTTP/2 connection that only answers pings is closed when idle.

use std::net::SocketAddr;
use std::time::Duration;

use http_serve::{ConnectionLimits, Response, full, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// `/big` answers 64 MiB (more than loopback's socket buffers hold), `/medium` 8 MiB, both as one frame;
/// anything else `ok`.
async fn handler(request: http::Request<hyper::body::Incoming>) -> Response {
    if request.uri().path() == "/big" {
        http::Response::new(full(vec![b'x'; 64 << 20]))
    } else if request.uri().path() == "/medium" {
        http::Response::new(full(vec![b'x'; 8 << 20]))
    } else {
        http::Response::new(full("ok"))
    }
}

/// A server with `limits` on a free loopback port; stopped when the test's runtime ends.
async fn start(limits: ConnectionLimits) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let address = listener.local_addr().expect("an address");
    tokio::spawn(serve(listener, limits, handler, std::future::pending()));
    address
}

/// A connection from the loopback address `from` (127.0.0.0/8 is all this machine's).
async fn connect_from(from: &str, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("a socket");
    socket
        .bind(format!("{from}:0").parse().expect("an address"))
        .expect("bound");
    socket.connect(to).await.expect("connected")
}

/// Sends `GET path` and reads until the server closes or `wait` passes; what arrived, `None` on time-out.
async fn get(stream: &mut TcpStream, path: &str, wait: Duration) -> Option<String> {
    let request = format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut received = Vec::new();
    match tokio::time::timeout(wait, stream.read_to_end(&mut received)).await {
        Ok(_) => Some(String::from_utf8_lossy(&received).into_owned()),
        Err(_) => None,
    }
}

#[tokio::test]
async fn a_client_that_stops_reading_frees_its_slot_after_the_write_timeout() {
    let address = start(ConnectionLimits {
        max_connections: 1,
        write_timeout: Duration::from_millis(500),
        ..ConnectionLimits::default()
    })
    .await;
    // The only slot: a client that asks for a large answer and never reads it.
    let mut stalled = TcpStream::connect(address).await.expect("connected");
    stalled
        .write_all(b"GET /big HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("sent");
    // The next client waits in the backlog until the stalled one's write times out, then is served (with the
    // default 30 s time-out it would still be waiting when this gives up).
    let mut next = TcpStream::connect(address).await.expect("connected");
    let answer = get(&mut next, "/", Duration::from_secs(10)).await;
    assert!(
        answer
            .as_deref()
            .is_some_and(|a| a.starts_with("HTTP/1.1 200")),
        "{answer:?}"
    );
    drop(stalled);
}

#[tokio::test]
async fn one_address_cannot_take_every_connection() {
    let address = start(ConnectionLimits {
        max_connections_per_address: 2,
        ..ConnectionLimits::default()
    })
    .await;
    // Two connections of 127.0.0.1 that send nothing (each held until the header time-out)...
    let _held = [
        connect_from("127.0.0.1", address).await,
        connect_from("127.0.0.1", address).await,
    ];
    // ...so its third is closed unanswered, while another address is served.
    let mut third = connect_from("127.0.0.1", address).await;
    let refused = get(&mut third, "/", Duration::from_secs(5)).await;
    assert_eq!(refused.as_deref(), Some(""), "closed without an answer");
    let mut other = connect_from("127.0.0.2", address).await;
    let served = get(&mut other, "/", Duration::from_secs(5)).await;
    assert!(
        served
            .as_deref()
            .is_some_and(|a| a.starts_with("HTTP/1.1 200")),
        "{served:?}"
    );
}

#[tokio::test]
async fn an_idle_http2_connection_is_closed_though_it_answers_pings() {
    let address = start(ConnectionLimits {
        header_timeout: Duration::from_millis(500),
        ..ConnectionLimits::default()
    })
    .await;
    let tcp = TcpStream::connect(address).await.expect("connected");
    let (mut client, connection) = h2::client::handshake(tcp)
        .await
        .expect("an HTTP/2 handshake");
    // The client's side of the connection answers the server's pings for as long as it runs.
    let running = tokio::spawn(connection);
    let request = http::Request::get("http://x/").body(()).expect("a request");
    let (answer, _) = client.send_request(request, true).expect("sent");
    let answer = answer.await.expect("an answer");
    assert_eq!(answer.status(), 200);
    let mut body = answer.into_body();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.expect("a chunk");
        let _ = body.flow_control().release_capacity(chunk.len());
    }
    // Idle from now on: the server ends the connection (GOAWAY, then close) after the header time-out, while the
    // client still holds it open.
    let ended = tokio::time::timeout(Duration::from_secs(5), running).await;
    assert!(ended.is_ok(), "the idle HTTP/2 connection is still open");
    drop(client);
}

#[tokio::test]
async fn an_http2_client_that_never_opens_its_window_is_dropped() {
    let address = start(ConnectionLimits {
        write_timeout: Duration::from_millis(500),
        ..ConnectionLimits::default()
    })
    .await;
    let tcp = TcpStream::connect(address).await.expect("connected");
    // A window of 0: the server may send headers, never a byte of a body, so no socket write is ever pending.
    let (mut client, connection) = h2::client::Builder::new()
        .initial_window_size(0)
        .handshake::<_, bytes::Bytes>(tcp)
        .await
        .expect("an HTTP/2 handshake");
    let running = tokio::spawn(connection);
    let request = http::Request::get("http://x/big")
        .body(())
        .expect("a request");
    let (answer, _) = client.send_request(request, true).expect("sent");
    let answer = answer.await.expect("the head of the answer");
    assert_eq!(answer.status(), 200);
    // The body never moves: the connection is dropped after the write time-out, though the client holds it.
    let ended = tokio::time::timeout(Duration::from_secs(5), running).await;
    assert!(ended.is_ok(), "the stalled HTTP/2 connection is still open");
    drop((client, answer));
}

#[tokio::test]
async fn a_slow_http2_reader_that_keeps_reading_is_not_cut_off() {
    let address = start(ConnectionLimits {
        header_timeout: Duration::from_secs(2),
        write_timeout: Duration::from_millis(1500),
        ..ConnectionLimits::default()
    })
    .await;
    let tcp = TcpStream::connect(address).await.expect("connected");
    let (mut client, connection) = h2::client::handshake(tcp)
        .await
        .expect("an HTTP/2 handshake");
    let running = tokio::spawn(connection);
    let request = http::Request::get("http://x/medium")
        .body(())
        .expect("a request");
    let (answer, _) = client.send_request(request, true).expect("sent");
    let mut body = answer.await.expect("the head of the answer").into_body();
    // 8 MiB in one frame of the server's body, taken at about 1.6 MB a second by opening the window a chunk at a
    // time: five seconds in all, past the write and header time-outs, yet always moving. The server takes no
    // second frame from its body until h2 has sent the first, and may drop the body once h2 holds it: only the
    // bytes written show the connection busy.
    let mut received = 0usize;
    let mut pace = tokio::time::interval(Duration::from_millis(10));
    while let Some(chunk) = body.data().await {
        let Ok(chunk) = chunk else { break };
        received += chunk.len();
        pace.tick().await;
        let _ = body.flow_control().release_capacity(chunk.len());
    }
    assert_eq!(received, 8 << 20, "cut off after {received} bytes");
    drop(client);
    running.abort();
}
