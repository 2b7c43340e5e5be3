//! `POST /v1/network/company-data/search`: the stored companies searched by filters and words, as compact rows,
//! free (docs/api.md, "Searching stored companies").

use api_contract::{MAX_BODY_BYTES, MAX_SEARCH_ROWS, SearchRequest, paths};
use http::{Method, StatusCode};
use http_serve::Response;
use serde_json::{Value, json};

use crate::api::Api;
use crate::doc::{Context, error_response, refused_429, retried_error};
use crate::endpoint::{Access, Call, Endpoint, Part, Reads};
use crate::error::ApiError;
use crate::respond::json_response;

/// `POST /v1/network/company-data/search`.
pub(crate) const SEARCH_COMPANIES: Endpoint = Endpoint {
    method: Method::POST,
    path: paths::SEARCH,
    operation_id: "searchCompanies",
    part: Part::Core,
    access: Access::Key,
    reads: Reads::Json(MAX_BODY_BYTES),
    // A search changes nothing: a retry is the same search.
    idempotent: false,
    doc: Some(search_doc),
    run: |api, call| Box::pin(api.search(call)),
};

impl Api {
    /// `POST /search`: 200 `{results, next_cursor, scope}`; nothing is charged.
    async fn search(&self, call: Call) -> Result<Response, ApiError> {
        let request = SearchRequest::from_json(&call.body)?;
        let answer = self.lookup().search(call.caller()?, &request).await?;
        Ok(json_response(StatusCode::OK, &answer))
    }
}

/// The OpenAPI operation of `POST /v1/network/company-data/search`.
fn search_doc(context: &Context<'_>) -> Value {
    let body_seconds = context.body_seconds;
    json!({
        "summary": "Search the stored companies by filters and words",
        "description": format!(
            "Filters on the records' own members (industry, size band, type, headquarters country, region and \
             city, specialties, employee and follower counts, founding year, website, when the page was \
             fetched) and words `q` found in the name, slogan, description or specialties. Every filter given \
             must match; a list matches any of its values, compared without case or accents; a range whose \
             `min` is above its `max` matches nothing. Words must all be found, each as a whole word or, from 3 \
             characters, as the start of one. By default an account searches the companies it was answered \
             (looked up, in jobs, resolved, watched); a deployment started with `--search-scope deployment` \
             searches every stored company (`scope` says which). Answers compact rows, up to {MAX_SEARCH_ROWS} \
             a page, with `next_cursor` for the next; nothing is charged. The whole record of a row is a stored \
             lookup of its `final_li_url` (`POST /v1/network/company-data` with `maxAgeHours` above 0)."
        ),
        "tags": ["Company Data"],
        "requestBody": {
            "required": true,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SearchRequest"}}}
        },
        "responses": {
            "200": {
                "description": "A page of companies, in the search's order; nothing charged.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SearchResponse"}}}
            },
            "400": error_response(&format!(
                "Invalid request body (`details` lists every problem), or a search that ran longer than the \
                 server's search time limit ({} s unless `serve --search-time-limit` sets another) and was \
                 stopped (`search_timed_out`: narrow it with filters or words; nothing was charged).",
                company_lookup::DEFAULT_SEARCH_TIME_LIMIT.as_secs_f64()
            )),
            "408": error_response(&format!("The request body did not arrive within the body time-out ({body_seconds} s on this server).")),
            "413": error_response(&format!("Request body larger than {MAX_BODY_BYTES} bytes.")),
            "415": error_response("The body is not sent as `application/json`."),
            "429": retried_error(&format!(
                "{} `too_many_searches`: the account already has as many searches in flight as it may ({} unless \
                 `serve --account-searches` sets another); nothing was searched.",
                refused_429(),
                company_lookup::DEFAULT_SEARCHES_PER_ACCOUNT
            )),
        }
    })
}
