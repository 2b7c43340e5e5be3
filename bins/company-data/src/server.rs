//! The HTTP server: connections, routes, and the company-data handler.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use api_keys::KeyError;
use bytes::Bytes;
use company_lookup::{Caller, LookupError};
use company_model::CompanyRequest;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tracing::{Instrument, info, warn};

use crate::api_error::ApiError;
use crate::{App, auth};

/// Largest request body accepted: 100 KB (102,400 bytes, the way HTTP tooling counts a KB); larger is 413.
pub const MAX_BODY_BYTES: usize = 100 * 1024;
/// How much of an oversized body is read and discarded before answering 413.
const DRAIN_BYTES: usize = 1024 * 1024;
/// Time given to requests in flight at shutdown.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves HTTP/1.1 and HTTP/2 (cleartext) on `listener` until `shutdown` resolves, then lets requests in flight
/// finish (up to 30 s). Connections are bounded by the app's [`crate::ConnectionLimits`]: headers (and idle
/// keep-alive) and bodies have time-outs, and at most `max_connections` are open at once.
///
/// # Errors
/// Only when the listener itself fails; connection errors are logged and the server goes on.
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let limits = app.connections;
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // hyper starts the header time-out when a connection opens and again after each response, so it also closes
    // idle kept-alive connections.
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    // HTTP/2 connections are pinged while idle and closed when the peer stops answering.
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(limits.header_timeout)
        .keep_alive_timeout(limits.header_timeout);
    let open_connections = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        // At the cap, stop accepting: further clients wait in the kernel's backlog instead of costing memory here.
        let permit = tokio::select! {
            permit = Arc::clone(&open_connections).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let app = Arc::clone(&app);
        let builder = builder.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            // The protocol sniffing of `auto` has no time-out of its own: a client that connects and sends
            // nothing would be kept forever.
            let mut first = [0u8; 1];
            if !matches!(
                tokio::time::timeout(limits.header_timeout, stream.peek(&mut first)).await,
                Ok(Ok(1..))
            ) {
                tracing::debug!(%peer, "connection closed: nothing sent within the header time-out");
                return;
            }
            let service =
                hyper::service::service_fn(move |request| handle(Arc::clone(&app), request));
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            if let Err(error) = watcher.watch(connection.into_owned()).await {
                tracing::debug!(%peer, error = %error, "connection ended with an error");
            }
            drop(permit);
        });
    }
    info!("shutting down: waiting for requests in flight");
    if tokio::time::timeout(DRAIN_TIMEOUT, graceful.shutdown())
        .await
        .is_err()
    {
        warn!("requests still in flight after {DRAIN_TIMEOUT:?}; stopping anyway");
    }
    Ok(())
}

async fn handle(
    app: Arc<App>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let span = tracing::info_span!("request", %method, %path);
    let response = route(&app, request)
        .instrument(span.clone())
        .await
        .unwrap_or_else(ApiError::into_response);
    span.in_scope(|| {
        info!(
            status = response.status().as_u16(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "served"
        );
    });
    Ok(response)
}

async fn route(app: &App, request: Request<Incoming>) -> Result<Response<Full<Bytes>>, ApiError> {
    let read_only = matches!(*request.method(), Method::GET | Method::HEAD);
    match request.uri().path() {
        "/v1/network/company-data" if request.method() == Method::POST => {
            company_data(app, request).await
        }
        "/v1/network/company-data" => Err(ApiError::MethodNotAllowed { allow: "POST" }),
        "/openapi.json" if read_only => Ok(bytes_response(
            StatusCode::OK,
            app.openapi.clone(),
            "application/json",
        )),
        "/healthz" if read_only => Ok(json_response(
            StatusCode::OK,
            &serde_json::json!({"status": "ok"}),
        )),
        "/openapi.json" | "/healthz" => Err(ApiError::MethodNotAllowed { allow: "GET, HEAD" }),
        path if path == "/dashboard" || path.starts_with("/dashboard/") => {
            Ok(crate::dashboard::route(app, request).await)
        }
        _ => Err(ApiError::NotFound),
    }
}

/// `POST /v1/network/company-data`: auth, body, validation, lookup, billing headers.
async fn company_data(
    app: &App,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, ApiError> {
    let caller = authenticate(app, request.headers()).await?;
    require_json(request.headers())?;
    let body = read_body(request, app.connections.body_timeout).await?;
    let parsed = CompanyRequest::from_json(&body, &app.domain).map_err(ApiError::InvalidRequest)?;
    let outcome = app
        .lookup
        .run(caller, &parsed)
        .await
        .map_err(|error| match error {
            LookupError::InsufficientCredits {
                available,
                required,
            } => ApiError::InsufficientCredits {
                available,
                required,
            },
            LookupError::TooManyLiveLookups {
                in_flight,
                needed,
                limit,
                retry_after,
            } => ApiError::TooManyLiveLookups {
                in_flight,
                needed,
                limit,
                retry_after,
            },
            timed_out @ LookupError::TimedOut { .. } => {
                ApiError::LiveTimeout(timed_out.to_string())
            }
            other => ApiError::Unavailable(other.into()),
        })?;
    // Written by copying each record's stored text, not through serde (see `CompanyDataResponse::to_json`).
    let mut response = json_bytes_response(StatusCode::OK, outcome.response.to_json());
    for (name, value) in [
        ("x-credits-charged", outcome.charged),
        ("x-credits-remaining", outcome.remaining),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value.to_string()) {
            response.headers_mut().insert(name, value);
        }
    }
    Ok(response)
}

/// The caller of a key-bearing request: the key verified, then its request rate checked.
#[cfg(not(feature = "bench-no-auth"))]
async fn authenticate(app: &App, headers: &HeaderMap) -> Result<Caller, ApiError> {
    let key = auth::presented_key(headers)?;
    let verified = app.keys.verify(&key).await.map_err(|error| match error {
        KeyError::Invalid => ApiError::InvalidApiKey,
        other => ApiError::Unavailable(other.into()),
    })?;
    if let Some(Err(not_until)) = app
        .key_rate
        .as_ref()
        .map(|limiter| limiter.check_key(&verified.key_id.0))
    {
        let now = governor::clock::Clock::now(&governor::clock::DefaultClock::default());
        return Err(ApiError::RateLimited {
            retry_after: not_until.wait_time_from(now),
        });
    }
    Ok(Caller {
        account: verified.account,
        key_id: Some(verified.key_id.0),
    })
}

/// Benchmark-only build (`--features bench-no-auth`, never shipped): every request is the first account's, with
/// no key check and no rate limit, to measure what authentication costs.
#[cfg(feature = "bench-no-auth")]
#[allow(clippy::unused_async)]
async fn authenticate(_app: &App, _headers: &HeaderMap) -> Result<Caller, ApiError> {
    Ok(Caller {
        account: company_model::AccountId(1),
        key_id: None,
    })
}

/// `application/json`, with or without parameters, or any `application/*+json`.
fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let media_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    let is_json = media_type == "application/json"
        || (media_type.starts_with("application/") && media_type.ends_with("+json"));
    if is_json {
        Ok(())
    } else {
        Err(ApiError::UnsupportedMediaType)
    }
}

/// Reads the body, refusing more than [`MAX_BODY_BYTES`] as it arrives (never buffering more than that) and
/// giving up (408) on a body that has not arrived whole within `timeout`.
///
/// An oversized body is read on and discarded up to [`DRAIN_BYTES`] more before the 413 is sent (a lingering
/// close): closing a socket with unread data makes the kernel send a reset, which can destroy the 413 before the
/// client reads it. Bodies declared larger than that are refused at once.
pub(crate) async fn read_body(
    request: Request<Incoming>,
    timeout: Duration,
) -> Result<Bytes, ApiError> {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > (MAX_BODY_BYTES + DRAIN_BYTES) as u64) {
        return Err(ApiError::BodyTooLarge);
    }
    let mut body = request.into_body();
    let read = async {
        let mut collected = Vec::new();
        let mut seen = 0usize;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| ApiError::BodyUnreadable)?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            seen += data.len();
            if seen > MAX_BODY_BYTES + DRAIN_BYTES {
                break;
            }
            if seen <= MAX_BODY_BYTES {
                collected.extend_from_slice(&data);
            }
        }
        if seen > MAX_BODY_BYTES {
            Err(ApiError::BodyTooLarge)
        } else {
            Ok(Bytes::from(collected))
        }
    };
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or(Err(ApiError::BodyTimeout))
}

/// A JSON response; API answers are never cached by intermediaries.
pub(crate) fn json_response(
    status: StatusCode,
    body: &impl serde::Serialize,
) -> Response<Full<Bytes>> {
    json_bytes_response(status, serde_json::to_vec(body))
}

/// A JSON response from serialized bytes, or a 500 if they could not be written.
fn json_bytes_response(
    status: StatusCode,
    body: Result<Vec<u8>, serde_json::Error>,
) -> Response<Full<Bytes>> {
    match body {
        Ok(bytes) => bytes_response(status, bytes.into(), "application/json"),
        Err(error) => {
            tracing::error!(%error, "could not serialize a response");
            bytes_response(StatusCode::INTERNAL_SERVER_ERROR, Bytes::from_static(
                br#"{"error":"internal_error","message":"The response could not be written. Retry.","status_code":500}"#,
            ), "application/json")
        }
    }
}

fn bytes_response(
    status: StatusCode,
    body: Bytes,
    content_type: &'static str,
) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
