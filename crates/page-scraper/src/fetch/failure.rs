//! One failed attempt and what it tells: the error, the wait the origin asked for (`Retry-After`), what the route
//! met (for the pool to learn from), and the metrics' outcome label.

use std::time::Duration;

use page_parser::{Block, FetchFailure, ScrapeError};

use crate::routes::Met;

/// One failed attempt, with the wait the origin asked for.
pub(super) struct Failure {
    pub(super) error: ScrapeError,
    pub(super) retry_after: Option<Duration>,
    /// The connection could not be opened (through a proxy: the proxy is down).
    pub(super) unreachable: bool,
    /// It went through a proxy, and the proxy failed it: it could not be connected to, or the request could not
    /// be sent to it (a kept-alive connection it had closed). An origin that fails behind a proxy is the
    /// proxy's 5xx instead.
    pub(super) proxy_failed: bool,
    /// No route is free before the deadline: another attempt cannot do better.
    pub(super) final_: bool,
}

impl From<ScrapeError> for Failure {
    fn from(error: ScrapeError) -> Self {
        Self {
            error,
            retry_after: None,
            unreachable: false,
            proxy_failed: false,
            final_: false,
        }
    }
}

impl Failure {
    /// No route (or no connection to send on) before the deadline; the soonest route is free in `ready_in`.
    pub(super) fn no_route(ready_in: Duration) -> Self {
        Self {
            error: ScrapeError::Blocked {
                by: Block::NoRoute {
                    ready_in_seconds: shared_limits::wait_seconds(ready_in),
                },
            },
            retry_after: Some(ready_in),
            unreachable: false,
            proxy_failed: false,
            final_: true,
        }
    }

    /// What the route met, for the pool to learn from.
    pub(super) fn met(&self) -> Met {
        match (&self.error, self.retry_after) {
            // A refusal that says when to come back (429's `Retry-After`) is waited out, not quarantined.
            (ScrapeError::Blocked { .. }, Some(wait)) => Met::RateLimited(wait),
            (ScrapeError::Blocked { .. }, _) => Met::Blocked,
            (ScrapeError::Authwall, _) => Met::Authwall,
            (ScrapeError::NotFound | ScrapeError::WrongPageKind { .. }, _) => Met::Answer,
            _ if self.unreachable => Met::Unreachable,
            _ => Met::Failed,
        }
    }
}

/// `Retry-After` (RFC 9110 10.2.3) as a delay: delay-seconds, or an HTTP date.
pub(super) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = jiff::fmt::rfc2822::parse(value).ok()?;
    let wait = date.timestamp().duration_since(jiff::Timestamp::now());
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

/// The `outcome` label of an origin fetch or a parse: `ok`, or what failed. Blocks are told apart by the answer
/// that showed them (`blocked_999`, `blocked_429`, `blocked` for the guest home page), and a fetch that ran out
/// of time is `timed_out`, so that an operator sees which defence the network raised.
pub(crate) fn outcome_label(error: &ScrapeError) -> &'static str {
    match error {
        ScrapeError::Blocked {
            by: Block::Http999 | Block::ChallengePage,
        } => "blocked_999",
        ScrapeError::Blocked { by: Block::Http429 } => "blocked_429",
        ScrapeError::Fetch(FetchFailure::TimedOut) => "timed_out",
        other => other.code().as_str(),
    }
}

/// Counts one request to the origin in `company_data_origin_fetches_total{outcome}` and its time in
/// `company_data_origin_fetch_duration_seconds{outcome}`.
pub(super) fn record_fetch(error: Option<&ScrapeError>, took: Duration) {
    let outcome = error.map_or("ok", outcome_label);
    metrics::counter!("company_data_origin_fetches_total", "outcome" => outcome).increment(1);
    metrics::histogram!("company_data_origin_fetch_duration_seconds", "outcome" => outcome)
        .record(took.as_secs_f64());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The metric's outcome is read from the failure's kind, not from its words: a route free in 999 s is not a
    /// 999, and the texts of the answers stay as they were.
    #[test]
    fn outcomes_come_from_the_kind_of_failure() {
        let blocked = |by| ScrapeError::Blocked { by };
        assert_eq!(outcome_label(&blocked(Block::Http999)), "blocked_999");
        assert_eq!(outcome_label(&blocked(Block::ChallengePage)), "blocked_999");
        assert_eq!(outcome_label(&blocked(Block::Http429)), "blocked_429");
        let no_route = blocked(Block::NoRoute {
            ready_in_seconds: 999,
        });
        assert_eq!(outcome_label(&no_route), "blocked");
        assert_eq!(
            outcome_label(&ScrapeError::Fetch(FetchFailure::TimedOut)),
            "timed_out"
        );
        assert_eq!(
            outcome_label(&ScrapeError::Fetch(FetchFailure::Status(502))),
            "fetch_failed"
        );
        assert_eq!(
            blocked(Block::Http429).to_string(),
            "the network refused the request (HTTP 429, rate limited)"
        );
        assert_eq!(
            ScrapeError::Fetch(FetchFailure::Status(502)).to_string(),
            "the page could not be fetched: the origin answered HTTP 502"
        );
    }

    #[test]
    fn retry_after_forms() {
        let mut headers = reqwest::header::HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", "3".parse().expect("header"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(3)));
        headers.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().expect("header"),
        );
        assert_eq!(
            retry_after(&headers),
            Some(Duration::ZERO),
            "a date in the past means now"
        );
        headers.insert("retry-after", "soon".parse().expect("header"));
        assert_eq!(retry_after(&headers), None);
    }
}
