//! What looking a page up yields, besides its record: where the record came from ([`RecordSource`]), or why
//! there is none ([`UnresolvedCode`], which the parser gives its failures and the API lists).

use serde::{Deserialize, Serialize};

/// Where a record came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum RecordSource {
    /// Fetched from the network for this request.
    Live,
    /// Served from a snapshot stored inside the request's freshness window.
    Stored,
    /// Served from the newest stored snapshot, older than the request's freshness window, because the live fetch
    /// failed (the network refused it, showed its sign-in wall, timed out or could not be reached) and the
    /// request sent `staleIfError: true`. Billed at the stored price; `fetched_at` says how old it is.
    Stale,
}

impl RecordSource {
    /// The source as serialized: `live`, `stored` or `stale`.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordSource::Live => "live",
            RecordSource::Stored => "stored",
            RecordSource::Stale => "stale",
        }
    }

    /// The source named `name` as [`RecordSource::as_str`] writes it; anything else reads as `stored` (rows
    /// written before a source had a name).
    pub fn from_name(name: &str) -> Self {
        match name {
            "live" => RecordSource::Live,
            "stale" => RecordSource::Stale,
            _ => RecordSource::Stored,
        }
    }
}

/// Why a URL did not resolve. Serialized in snake_case (`not_found`, ...); the set is stable and documented in
/// the OpenAPI description.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum UnresolvedCode {
    /// The network has no such page (HTTP 404 or its "page not found" page).
    NotFound,
    /// The network answered with its sign-in wall instead of the page.
    Authwall,
    /// The network refused the request (HTTP 999 or 429, or its bounce page).
    Blocked,
    /// The URL led to a page that is not a company, school or showcase page.
    WrongPageKind,
    /// The live lookup did not finish inside the live time-out.
    TimedOut,
    /// The page could not be fetched (connection error, server error, bad body).
    FetchFailed,
    /// The page was fetched but holds no company data the parser recognises.
    Unparseable,
    /// The page is in the request more often than one request answers a page (`MAX_COPIES_PER_PAGE` of the API
    /// contract): this copy is not answered; its first copies are, and the page is charged once.
    Duplicate,
}

impl UnresolvedCode {
    /// All codes, for documentation.
    pub const ALL: [UnresolvedCode; 8] = [
        UnresolvedCode::NotFound,
        UnresolvedCode::Authwall,
        UnresolvedCode::Blocked,
        UnresolvedCode::WrongPageKind,
        UnresolvedCode::TimedOut,
        UnresolvedCode::FetchFailed,
        UnresolvedCode::Unparseable,
        UnresolvedCode::Duplicate,
    ];

    /// The code as serialized, e.g. `not_found`.
    pub fn as_str(self) -> &'static str {
        match self {
            UnresolvedCode::NotFound => "not_found",
            UnresolvedCode::Authwall => "authwall",
            UnresolvedCode::Blocked => "blocked",
            UnresolvedCode::WrongPageKind => "wrong_page_kind",
            UnresolvedCode::TimedOut => "timed_out",
            UnresolvedCode::FetchFailed => "fetch_failed",
            UnresolvedCode::Unparseable => "unparseable",
            UnresolvedCode::Duplicate => "duplicate",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RecordSource;

    #[test]
    fn a_source_reads_back_from_its_name() {
        for source in [
            RecordSource::Live,
            RecordSource::Stored,
            RecordSource::Stale,
        ] {
            assert_eq!(RecordSource::from_name(source.as_str()), source);
            assert_eq!(
                serde_json::to_value(source).expect("serializes"),
                source.as_str(),
                "the name is the serialized one"
            );
        }
    }
}
