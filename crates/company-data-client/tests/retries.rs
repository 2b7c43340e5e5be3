//! The client against a real HTTP server on loopback that refuses as servers do: what it retries, how long it
//! waits, which key it sends, and what it reports.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use company_data_client::{Client, ClientError, RequestBody, Retry};
use http_body_util::{BodyExt, Full};

/// What the server saw of one request.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    idempotency_key: Option<String>,
    authorization: Option<String>,
}

/// One canned answer: the status, one extra header, the body.
type Canned = (u16, Option<(&'static str, &'static str)>, &'static str);

/// A loopback server that answers the n-th request with `answers[n]` (status, extra header, body) and records
/// each request.
async fn server(answers: Vec<Canned>) -> (SocketAddr, Arc<Mutex<Vec<Seen>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let answers = Arc::new(answers);
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (log, answers) = (Arc::clone(&log), Arc::clone(&answers));
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        let (log, answers) = (Arc::clone(&log), Arc::clone(&answers));
                        async move {
                            let header = |name: &str| {
                                request
                                    .headers()
                                    .get(name)
                                    .and_then(|v| v.to_str().ok())
                                    .map(str::to_owned)
                            };
                            let seen = Seen {
                                method: request.method().to_string(),
                                path: request.uri().to_string(),
                                idempotency_key: header("idempotency-key"),
                                authorization: header("authorization"),
                            };
                            let _ = request.into_body().collect().await;
                            let n = {
                                let mut log = log.lock().expect("log");
                                log.push(seen);
                                log.len() - 1
                            };
                            let (status, extra, body) = answers[n.min(answers.len() - 1)];
                            let mut response = hyper::Response::new(Full::new(Bytes::from_static(
                                body.as_bytes(),
                            )));
                            *response.status_mut() =
                                hyper::StatusCode::from_u16(status).expect("status");
                            response
                                .headers_mut()
                                .insert("content-type", "application/json".parse().expect("value"));
                            if let Some((name, value)) = extra {
                                response
                                    .headers_mut()
                                    .insert(name, value.parse().expect("value"));
                            }
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
    (address, seen)
}

fn quick() -> Retry {
    Retry {
        attempts: 3,
        first_wait: Duration::from_millis(5),
        longest_wait: Duration::from_millis(20),
    }
}

const UNAVAILABLE: &str =
    r#"{"error":"database_unavailable","message":"Retry.","status_code":503}"#;
const ANSWER: &str = r#"{"message":"Success","status_code":200,"results":[],"unresolved":[]}"#;

#[tokio::test]
async fn a_refused_post_is_sent_again_with_the_same_idempotency_key_and_charged_once() {
    let (address, seen) = server(vec![
        (503, Some(("retry-after", "5")), UNAVAILABLE),
        (200, Some(("x-credits-charged", "0.5")), ANSWER),
    ])
    .await;
    let client = Client::new(&format!("http://{address}"), "cdk_test_key")
        .expect("client")
        .with_retry(quick());
    let body = RequestBody {
        li_urls: vec!["https://www.linkedin.com/company/google".into()],
        ..RequestBody::default()
    };
    let started = std::time::Instant::now();
    let answer = client
        .company_data(&body)
        .await
        .expect("the second try answers");
    // Retry-After (5 s) is capped by the policy's longest wait.
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(answer.credits_charged, Some(0.5));
    let seen = seen.lock().expect("log").clone();
    assert_eq!(seen.len(), 2);
    assert!(
        seen.iter()
            .all(|s| s.method == "POST" && s.path == "/v1/network/company-data")
    );
    assert!(seen[0].idempotency_key.is_some());
    assert_eq!(
        seen[0].idempotency_key, seen[1].idempotency_key,
        "one key for every try"
    );
    assert_eq!(
        seen[0].authorization.as_deref(),
        Some("Bearer cdk_test_key")
    );

    // The next call is another request: another key.
    let (address, seen) = server(vec![(200, None, ANSWER)]).await;
    let client = Client::new(&format!("http://{address}/"), "k").expect("client");
    client.company_data(&body).await.expect("answers");
    client.company_data(&body).await.expect("answers");
    let seen = seen.lock().expect("log").clone();
    assert_ne!(seen[0].idempotency_key, seen[1].idempotency_key);
}

#[tokio::test]
async fn refusals_a_retry_cannot_mend_are_reported_at_once_with_the_servers_code() {
    let (address, seen) = server(vec![(
        402,
        None,
        r#"{"error":"insufficient_credits","message":"Add credits.","status_code":402,"request_id":"r-1"}"#,
    )])
    .await;
    let client = Client::new(&format!("http://{address}"), "k")
        .expect("client")
        .with_retry(quick());
    let error = client
        .company_data(&RequestBody::default())
        .await
        .expect_err("402");
    match &error {
        ClientError::Api { status, body } => {
            assert_eq!(
                (*status, body.error.as_str(), body.request_id.as_deref()),
                (402, "insufficient_credits", Some("r-1"))
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(error.to_string().contains("Add credits."), "{error}");
    assert_eq!(seen.lock().expect("log").len(), 1, "not retried");

    // A store that stays down: every attempt is made, then the last refusal is reported.
    let (address, seen) = server(vec![(503, None, UNAVAILABLE)]).await;
    let client = Client::new(&format!("http://{address}"), "k")
        .expect("client")
        .with_retry(quick());
    let error = client.job("7").await.expect_err("503");
    assert!(
        matches!(error, ClientError::Api { status: 503, .. }),
        "{error:?}"
    );
    let seen = seen.lock().expect("log").clone();
    assert_eq!(seen.len(), 3);
    assert!(
        seen.iter()
            .all(|s| s.method == "GET" && s.idempotency_key.is_none())
    );
}

#[tokio::test]
async fn a_server_that_is_not_there_is_unreachable_after_the_retries() {
    // A port that was just free: nothing listens on it.
    let address = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address")
    };
    let client = Client::new(&format!("http://{address}"), "k")
        .expect("client")
        .with_retry(quick());
    let error = client.account().await.expect_err("nobody listens");
    assert!(
        matches!(error, ClientError::Unreachable { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains(&address.to_string()), "{error}");
}
