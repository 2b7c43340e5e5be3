//! What the API records about each request through the `metrics` facade (a no-op until the host installs a
//! recorder; the server installs Prometheus'). Names and labels are listed in docs/operations.md. The route label
//! is the route table's path (`/v1/network/company-data/jobs/{id}`), or `other`.

use std::time::Duration;

/// Counts one answered request and its duration.
pub(crate) fn record_request(
    route: &'static str,
    method: &http::Method,
    status: u16,
    took: Duration,
) {
    metrics::counter!(
        "company_data_http_requests_total",
        "route" => route,
        "method" => method.as_str().to_owned(),
        "status" => status.to_string()
    )
    .increment(1);
    metrics::histogram!("company_data_http_request_duration_seconds", "route" => route)
        .record(took.as_secs_f64());
}
