//! `GET /v1/network/company-data/history`: a page's points and changes over time (docs/api.md, "History").

use api_contract::paths;
use credit_ledger::HISTORY_PRICE;
use http::{Method, StatusCode};
use http_serve::Response;
use page_url::PageUrl;
use serde_json::{Value, json};

use crate::api::Api;
use crate::doc::{Context, credits_header, error_response};
use crate::endpoint::{Access, Call, Endpoint, Part, Reads};
use crate::error::ApiError;
use crate::respond::{credits_headers, json_response};

/// What the query asks for: the page and the range (inclusive).
#[derive(Debug)]
struct Asked {
    page: PageUrl,
    from: jiff::Timestamp,
    to: jiff::Timestamp,
}

/// `GET /v1/network/company-data/history`.
pub(crate) const GET_COMPANY_HISTORY: Endpoint = Endpoint {
    method: Method::GET,
    path: paths::HISTORY,
    operation_id: "getCompanyHistory",
    part: Part::Core,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(history_doc),
    run: |api, call| Box::pin(api.history(call)),
};

/// Reads and checks the history's query.
fn history_query(query: Option<&str>, domain: &page_url::NetworkDomain) -> Result<Asked, ApiError> {
    let api_contract::HistoryQuery { li_url, from, to } = crate::request::query(query)?;
    let page = li_url.ok_or_else(|| {
        ApiError::InvalidQuery(
            "`liUrl` is missing; send the page's URL, e.g. `?liUrl=https://www.linkedin.com/company/google`"
                .into(),
        )
    })?;
    let page = PageUrl::parse_submitted(&page, domain).map_err(|error| {
        ApiError::InvalidQuery(format!(
            "`liUrl` is not a company, school or showcase page URL: {error}; send e.g. \
             `https://www.{}/company/google`",
            domain.as_str()
        ))
    })?;
    let time = |name: &str, value: Option<String>, default: jiff::Timestamp| {
        match value {
        None => Ok(default),
        Some(text) => text.parse::<jiff::Timestamp>().map_err(|_| {
            ApiError::InvalidQuery(format!(
                "`{name}` is `{text}`; send an RFC 3339 time with its offset, e.g. `2026-01-31T00:00:00Z`"
            ))
        }),
    }
    };
    // A `from` after `to` is an empty range (no point, no change, nothing charged), not an error: the two
    // parameters' order is not something the published schema can state.
    let from = time("from", from, jiff::Timestamp::MIN)?;
    let to = time("to", to, jiff::Timestamp::MAX)?;
    Ok(Asked { page, from, to })
}

impl Api {
    /// `GET /history?liUrl=…&from=…&to=…`: 200 `{message, status_code, final_li_url, points, changes}` with the
    /// billing headers, 404 `not_found` when the page has no stored snapshot.
    async fn history(&self, call: Call) -> Result<Response, ApiError> {
        let caller = call.caller()?;
        let query = history_query(call.query(), self.domain())?;
        let outcome = self
            .lookup()
            .history(caller, &query.page, query.from, query.to)
            .await?
            .ok_or(ApiError::NoHistory)?;
        let mut response = json_response(
            StatusCode::OK,
            &api_contract::HistoryResponse::new(outcome.history),
        );
        credits_headers(&mut response, Some(outcome.charged), outcome.remaining);
        Ok(response)
    }
}

/// The OpenAPI operation of `GET …/history`.
fn history_doc(context: &Context<'_>) -> Value {
    let domain = context.domain;
    let kept_days = company_lookup::DEFAULT_HISTORY_RETENTION.as_secs() / 86_400;
    json!({
        "summary": "A page's followers, employees and size over time, and what changed",
        "description": format!("Every stored fetch of the page is a point; `changes` lists each of the record members {} that differs between consecutive fetches. Both oldest first, limited to fetches between `from` and `to`. Costs {HISTORY_PRICE} credits when the range holds a point or a change, nothing otherwise. History is kept for the server's `--history-days` ({kept_days} by default).", company_model::CHANGE_FIELDS.join(", ")),
        "tags": ["Company Data"],
        "parameters": [
            {"name": "liUrl", "in": "query", "required": true, "description": "The page's URL, as the company-data endpoint takes it.",
             "schema": {"type": "string", "pattern": page_url::submitted_pattern(domain)}},
            {"name": "from", "in": "query", "description": "Only fetches at or after this time (RFC 3339).",
             "schema": {"type": "string", "format": "date-time"}},
            {"name": "to", "in": "query", "description": "Only fetches at or before this time (RFC 3339).",
             "schema": {"type": "string", "format": "date-time"}}
        ],
        "responses": {
            "200": {
                "description": "The history in the range.",
                "headers": {
                    "x-credits-charged": credits_header("Credits charged for this request."),
                    "x-credits-remaining": credits_header("The account's balance after the charge (absent when nothing was charged).")
                },
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CompanyHistory"}}}
            },
            "400": error_response("`invalid_query`: `liUrl` missing or not a page URL, a time not in RFC 3339, or an unknown parameter."),
            "402": error_response("`insufficient_credits`: the account cannot pay for the history."),
            "404": error_response("`not_found`: no snapshot of this page is stored (look it up or watch it first); nothing was charged."),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(query: &str) -> Result<Asked, String> {
        history_query(Some(query), &page_url::NetworkDomain::default()).map_err(|e| e.to_string())
    }

    #[test]
    fn the_query_names_a_page_and_an_ordered_range() {
        let query = parsed(
            "liUrl=https%3A%2F%2Fuk.linkedin.com%2Fcompany%2Fgoogle%2F&from=2026-01-01T00:00:00Z",
        )
        .expect("valid");
        assert_eq!(
            query.page.as_str(),
            "https://www.linkedin.com/company/google"
        );
        assert_eq!(query.from.to_string(), "2026-01-01T00:00:00Z");
        assert_eq!(query.to, jiff::Timestamp::MAX);
        for (bad, says) in [
            ("", "`liUrl` is missing"),
            ("liUrl=https://www.linkedin.com/in/someone", "not a company"),
            (
                "liUrl=https://www.linkedin.com/company/a&from=yesterday",
                "RFC 3339",
            ),
            (
                "liUrl=https://www.linkedin.com/company/a&form=x",
                "unknown field `form`",
            ),
            (
                "liUrl=https://www.linkedin.com/company/a&liUrl=x",
                "duplicate field `liUrl`",
            ),
        ] {
            let error = parsed(bad).expect_err(bad);
            assert!(error.contains(says), "{bad}: {error}");
        }
    }
}
