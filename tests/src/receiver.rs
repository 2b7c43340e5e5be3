//! A webhook receiver on loopback: a real HTTP server that keeps every request it gets (headers and body) and
//! answers 503 to the first few, then 200, as a receiver that is down for a while does.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};

/// One request the receiver got.
#[derive(Clone, Debug)]
pub struct Received {
    /// Its headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// Its body as text.
    pub body: String,
    /// The status it was answered with.
    pub answered: u16,
}

impl Received {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_default()
    }
}

/// The receiver (see the module docs); stops when dropped.
pub struct WebhookReceiver {
    /// `http://127.0.0.1:<port>/hooks`, the URL to register.
    pub url: String,
    got: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WebhookReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl WebhookReceiver {
    /// A receiver that answers 503 to its first `failures` requests and 200 to the rest.
    pub async fn start(failures: usize) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/hooks", listener.local_addr().expect("address"));
        let got = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&got);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let seen = Arc::clone(&seen);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |request: hyper::Request<hyper::body::Incoming>| {
                            let seen = Arc::clone(&seen);
                            async move {
                                let headers = request
                                    .headers()
                                    .iter()
                                    .map(|(n, v)| {
                                        (n.as_str().to_owned(), v.to_str().unwrap_or("").to_owned())
                                    })
                                    .collect();
                                let body = request
                                    .into_body()
                                    .collect()
                                    .await
                                    .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
                                    .unwrap_or_default();
                                let mut seen = seen.lock().expect("lock");
                                let answered = if seen.len() < failures { 503 } else { 200 };
                                seen.push(Received {
                                    headers,
                                    body,
                                    answered,
                                });
                                let response = hyper::Response::builder()
                                    .status(answered)
                                    .body(Full::new(Bytes::new()))
                                    .expect("a response");
                                Ok::<_, std::convert::Infallible>(response)
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { url, got, task }
    }

    /// Every request so far, in arrival order.
    pub fn received(&self) -> Vec<Received> {
        self.got.lock().expect("lock").clone()
    }
}
