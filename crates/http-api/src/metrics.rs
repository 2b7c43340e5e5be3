//! What the API records about each request through the `metrics` facade (a no-op until the host installs a
//! recorder; the server installs Prometheus'). Names and labels are listed in docs/operations.md.

use std::time::Duration;

use crate::account::ACCOUNT_PATH;
use crate::history::HISTORY_PATH;
use crate::jobs::JOBS_PATH;
use crate::watches::WATCHES_PATH;

/// The route a path belongs to, as a metric label: the path with ids replaced by `{id}`, or `other` for a path
/// the API does not serve (so that made-up paths cannot grow the number of series).
pub(crate) fn route_label(path: &str) -> &'static str {
    const COMPANY_DATA: &str = "/v1/network/company-data";
    let collection = |base: &'static str, one: &'static str, results: Option<&'static str>| {
        let rest = path.strip_prefix(base)?;
        if rest.is_empty() {
            return Some(base);
        }
        let rest = rest.strip_prefix('/')?;
        match rest.split_once('/') {
            None if !rest.is_empty() => Some(one),
            Some((_, "results")) => results,
            _ => None,
        }
    };
    match path {
        COMPANY_DATA => COMPANY_DATA,
        HISTORY_PATH => HISTORY_PATH,
        ACCOUNT_PATH => ACCOUNT_PATH,
        "/openapi.json" => "/openapi.json",
        "/healthz" => "/healthz",
        _ => collection(
            JOBS_PATH,
            "/v1/network/company-data/jobs/{id}",
            Some("/v1/network/company-data/jobs/{id}/results"),
        )
        .or_else(|| collection(WATCHES_PATH, "/v1/network/company-data/watches/{id}", None))
        .unwrap_or("other"),
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_become_placeholders_and_unknown_paths_one_label() {
        for (path, label) in [
            ("/v1/network/company-data", "/v1/network/company-data"),
            ("/v1/network/company-data/jobs", JOBS_PATH),
            (
                "/v1/network/company-data/jobs/17",
                "/v1/network/company-data/jobs/{id}",
            ),
            (
                "/v1/network/company-data/jobs/17/results",
                "/v1/network/company-data/jobs/{id}/results",
            ),
            (
                "/v1/network/company-data/watches/3",
                "/v1/network/company-data/watches/{id}",
            ),
            ("/v1/network/company-data/watches/3/results", "other"),
            ("/v1/network/company-data/jobsx", "other"),
            ("/v1/account", ACCOUNT_PATH),
            ("/wp-admin.php", "other"),
        ] {
            assert_eq!(route_label(path), label, "{path}");
        }
    }
}
