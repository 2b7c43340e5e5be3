//! A webhook receiver on loopback ([`Receiver`]): a real HTTP server that keeps every request it got, for the
//! tests of whatever sends webhooks.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A request the receiver got: its headers (names in lower case) and body.
#[derive(Clone, Debug)]
pub struct Received {
    /// Its headers, names in lower case, in the order sent.
    pub headers: Vec<(String, String)>,
    /// Its body as text.
    pub body: String,
}

impl Received {
    /// The value of header `name` (lower case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A webhook receiver on loopback, answering every request with the status last set ([`Receiver::answer_with`],
/// 200 at first) and keeping what it got.
pub struct Receiver {
    /// The loopback port it listens on.
    pub port: u16,
    got: Arc<Mutex<Vec<Received>>>,
    status: Arc<Mutex<u16>>,
}

impl Receiver {
    /// Starts listening on a free loopback port.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        let (got, status) = (
            Arc::new(Mutex::new(Vec::new())),
            Arc::new(Mutex::new(200u16)),
        );
        let (seen, answer) = (Arc::clone(&got), Arc::clone(&status));
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut data = Vec::new();
                let mut buffer = [0u8; 8192];
                // Read the head, then the body its Content-Length announces.
                let received = loop {
                    let Ok(n) = stream.read(&mut buffer).await else {
                        break None;
                    };
                    if n == 0 {
                        break None;
                    }
                    data.extend_from_slice(&buffer[..n]);
                    let text = String::from_utf8_lossy(&data).into_owned();
                    let Some((head, body)) = text.split_once("\r\n\r\n") else {
                        continue;
                    };
                    let headers: Vec<(String, String)> = head
                        .lines()
                        .skip(1)
                        .filter_map(|l| l.split_once(':'))
                        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
                        .collect();
                    let length: usize = headers
                        .iter()
                        .find(|(n, _)| n == "content-length")
                        .and_then(|(_, v)| v.parse().ok())
                        .unwrap_or(0);
                    if body.len() >= length {
                        break Some(Received {
                            headers,
                            body: body.to_owned(),
                        });
                    }
                };
                let status = *answer.lock().expect("lock");
                if let Some(received) = received {
                    seen.lock().expect("lock").push(received);
                }
                let reply = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            }
        });
        Self { port, got, status }
    }

    /// What it got so far, oldest first.
    pub fn received(&self) -> Vec<Received> {
        self.got.lock().expect("lock").clone()
    }

    /// Answers `status` from now on.
    pub fn answer_with(&self, status: u16) {
        *self.status.lock().expect("lock") = status;
    }
}
