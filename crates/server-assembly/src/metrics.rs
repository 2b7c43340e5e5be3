//! `serve --metrics-listen`: the Prometheus recorder behind the `metrics` facade the crates record through, and
//! `GET /metrics` on a listener of its own (never the API's, so it is not public by accident).

use std::sync::OnceLock;

use http::{Method, StatusCode, header};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Bucket bounds of every `*_seconds` histogram: 1 ms to 25 s, where request and fetch times fall.
const SECONDS_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0,
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The process's recorder, installed on the first call (later calls, e.g. a second server in one test process,
/// share it).
///
/// # Errors
/// When another recorder was installed by someone else.
pub fn recorder() -> anyhow::Result<&'static PrometheusHandle> {
    if let Some(handle) = HANDLE.get() {
        return Ok(handle);
    }
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".to_owned()), SECONDS_BUCKETS)?
        .install_recorder()?;
    // Histograms need their upkeep run now and then.
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(5));
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });
    Ok(HANDLE.get_or_init(|| handle))
}

/// Serves `GET /metrics` (Prometheus text format 0.0.4) on `listener` until `shutdown` resolves.
///
/// # Errors
/// Only when the listener itself fails.
pub async fn serve(
    listener: tokio::net::TcpListener,
    handle: &'static PrometheusHandle,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let handler = move |request: http::Request<hyper::body::Incoming>| async move {
        let (status, body) = match (request.method(), request.uri().path()) {
            (&Method::GET | &Method::HEAD, "/metrics") => (StatusCode::OK, handle.render()),
            (_, "/metrics") => (StatusCode::METHOD_NOT_ALLOWED, "GET only\n".to_owned()),
            _ => (
                StatusCode::NOT_FOUND,
                "metrics are at /metrics\n".to_owned(),
            ),
        };
        let mut response = http::Response::new(http_serve::full(body));
        *response.status_mut() = status;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        );
        response
    };
    http_serve::serve(
        listener,
        http_serve::ConnectionLimits::default(),
        handler,
        shutdown,
    )
    .await
}
