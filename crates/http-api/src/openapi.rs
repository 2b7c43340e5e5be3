//! The service's OpenAPI 3.1 description, served at `GET /openapi.json` (spec 1.8).
//!
//! Its `paths` are the route table's ([`crate::table::ROUTES`]): each route's path, each method's operation
//! object from [`operation`], `Idempotency-Key` where [`Operation::idempotent`] says so and the `RateLimit-*`
//! headers where [`Operation::keyed`] does. Every bound, price and time-out in it is read from the crate that
//! owns it, and the end-to-end tests validate real responses against it.

use std::time::Duration;

use bulk_jobs::output::CsvCells;
use company_model::{
    CompanyDataResponse, CreatedWatches, DEFAULT_RESOLVE_WINDOW, ErrorBody, HistoryResponse,
    JobInfo, JobList, MAX_AGE_HOURS, MAX_BODY_BYTES, MAX_ENDPOINTS, MAX_JOB_BODY_BYTES,
    MAX_JOB_URLS, MAX_URLS, RequestBody, ResolveBody, ResolveResponse, WATCH_EVERY_HOURS,
    WatchBody, WatchInfo, WatchList, WebhookEvent, paths,
};
use company_resolve::MIN_CONFIDENCE;
use credit_ledger::{HISTORY_PRICE, LIVE_PRICE, MAX_SETTINGS_BYTES, STORED_PRICE};
use page_url::NetworkDomain;
use serde_json::{Map, Value, json};

use crate::paging::{
    DEFAULT_DELIVERIES_PER_PAGE, DEFAULT_JOBS_PER_PAGE, DEFAULT_WATCHES_PER_PAGE,
    MOST_DELIVERIES_PER_PAGE, MOST_JOBS_PER_PAGE, MOST_RESULTS_PER_PAGE, MOST_WATCHES_PER_PAGE,
};
use crate::table::{Operation, Part, ROUTES};

fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    })
}

/// An error answer that tells the client when to retry (`Retry-After`, whole seconds).
fn retried_error(description: &str) -> Value {
    json!({
        "description": description,
        "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer", "minimum": 1}}},
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    })
}

/// 503 of the operations added after the first (their stores' failures).
fn unavailable() -> Value {
    retried_error(
        "`database_unavailable` or `service_unavailable`: a store failed. Nothing was charged. Retry.",
    )
}

/// Why a key-bearing request may get 429 before its operation runs.
const REFUSED_429: &str = "`rate_limited`: the key sent requests faster than its limit (`serve --key-rate`, \
     `--key-burst`). `too_many_failed_authentications`: this client address sent too many keys that are not \
     valid (`serve --failed-auth-limit`: that many at once, then one more try earned every 60 s divided by that \
     number); nothing is checked for it until it has earned a try back (`Retry-After`).";

/// 429 of the key's request rate or of the client's failed authentications.
fn rate_limited() -> Value {
    retried_error(REFUSED_429)
}

/// `X-Credits-Charged` / `X-Credits-Remaining`: a decimal number of credits.
fn credits_header(description: &str) -> Value {
    json!({"description": description, "schema": {"type": "string", "pattern": r"^[0-9]+(\.[0-9]{1,3})?$"}})
}

/// What the texts of the document state about the server it describes.
struct Context<'a> {
    domain: &'a NetworkDomain,
    body_seconds: f64,
}

/// The whole document, for a server on `domain` with these time-outs (stated in the texts), taking `http`
/// webhook URLs when `http_webhooks` (a server that allows private webhook addresses, for tests).
pub fn openapi_document(
    domain: &NetworkDomain,
    live_timeout: Duration,
    body_timeout: Duration,
    http_webhooks: bool,
) -> Value {
    let live_seconds = live_timeout.as_secs_f64();
    let context = Context {
        domain,
        body_seconds: body_timeout.as_secs_f64(),
    };
    let mut paths = Map::new();
    // `/mcp` speaks MCP's JSON-RPC, which its own specification describes.
    for route in ROUTES.iter().filter(|route| route.tag != Part::Mcp) {
        let mut item = Map::new();
        if route.path.contains("{id}") {
            let of = if route.path.starts_with(paths::WEBHOOK_ENDPOINTS) {
                "webhook endpoint"
            } else if route.path.starts_with(paths::WATCHES) {
                "watch"
            } else {
                "job"
            };
            item.insert(
                "parameters".to_owned(),
                json!([{"name": "id", "in": "path", "required": true, "description": format!("The {of}'s id."),
                        "schema": {"type": "string", "pattern": company_model::ID_PATTERN}}]),
            );
        }
        for (method, op) in route.methods {
            let mut operation = operation(*op, &context);
            if let Some(fields) = operation.as_object_mut() {
                fields.insert("operationId".to_owned(), json!(op.operation_id()));
                if !op.keyed() {
                    fields.insert("security".to_owned(), json!([]));
                }
            }
            if op.idempotent() {
                add_idempotency(&mut operation);
            }
            add_common_headers(&mut operation, op.keyed());
            item.insert(method.as_str().to_ascii_lowercase(), operation);
        }
        paths.insert(route.path.to_owned(), Value::Object(item));
    }
    let schemas = derived_schemas(domain, http_webhooks);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "company-data",
            "version": "2026-05-16",
            "summary": "Company records from professional-network company, school and showcase pages.",
            "description": format!(
                "Send 1 to {MAX_URLS} page URLs, get one normalized company record per resolved URL. A freshness \
                 window of 0 fetches live ({LIVE_PRICE} credit per returned company); a window above 0, up to \
                 {MAX_AGE_HOURS} hours, may serve a stored snapshot fetched inside it ({STORED_PRICE} credit per \
                 returned company). Duplicates after normalization are fetched and billed once. URLs that could \
                 not be resolved are listed in `unresolved` and not billed. Request bodies are limited to \
                 {MAX_BODY_BYTES} bytes; one live lookup to {live_seconds} s on this server. Test-mode keys \
                 (`cdk_test_…`) are answered the same way from the server's sample pages, never from the network, \
                 and spend nothing."
            ),
        },
        "tags": [
            {"name": "Company Data", "description": "Company records from page URLs."},
            {"name": "Webhooks", "description": "The account's webhook endpoints and the account events sent to them."}
        ],
        "security": [{"bearerAuth": []}, {"xApiKey": []}, {"apiKey": []}, {"companyDataApiKey": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "API key"},
                "xApiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "api-key"},
                "companyDataApiKey": {"type": "apiKey", "in": "header", "name": "x-company-data-api-key"},
            },
            "schemas": schemas,
        },
        "webhooks": webhooks(),
    })
}

/// The OpenAPI operation object of `op` (without its `operationId`, `security` and common headers, which
/// [`openapi_document`] adds from the route table).
fn operation(op: Operation, context: &Context<'_>) -> Value {
    let Context {
        domain,
        body_seconds,
    } = *context;
    let job = json!({"application/json": {"schema": {"$ref": "#/components/schemas/Job"}}});
    let watch = json!({"application/json": {"schema": {"$ref": "#/components/schemas/Watch"}}});
    let unauthorized =
        error_response("Missing, malformed, conflicting, invalid or revoked API key.");
    let bad_id = error_response("`invalid_query`: the id is not a whole number above 0.");
    let job_not_found = error_response("`job_not_found`: the account has no job with this id.");
    let watch_not_found =
        error_response("`watch_not_found`: the account has no watch with this id.");
    let endpoint_not_found =
        error_response("`endpoint_not_found`: the account has no webhook endpoint with this id.");
    let delivery = company_watch::WatchSettings::default();
    let (window_hours, timeout_seconds) = (
        delivery.retry_window.as_secs() / 3600,
        delivery.delivery_timeout.as_secs(),
    );
    let kept_days = company_lookup::DEFAULT_HISTORY_RETENTION.as_secs() / 86_400;
    match op {
        Operation::GetCompanyData => json!({
            "summary": "Get company data",
            "tags": ["Company Data"],
            "requestBody": {
                "required": true,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CompanyRequest"}}}
            },
            "responses": {
                "200": {
                    "description": "Records of the resolved URLs, in input order, and the unresolved ones.",
                    "headers": {
                        "X-Credits-Charged": credits_header("Credits charged for this request."),
                        "X-Credits-Remaining": credits_header("The account's balance after the charge."),
                        "Retry-After": {
                            "description": "When some URLs are unresolved as `blocked` or `authwall`: seconds until \
                                the service has a route to the network free again (the largest of their \
                                `retry_after_seconds`); send those URLs again then.",
                            "schema": {"type": "integer", "minimum": 1}
                        },
                    },
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CompanyResponse"}}}
                },
                "400": error_response("Invalid request body or unsupported URL; `details` lists every problem."),
                "401": error_response("Missing, malformed, conflicting, invalid or revoked API key."),
                "402": error_response("Insufficient credits for every requested company; nothing was fetched."),
                "408": error_response(&format!("The request body did not arrive within the body time-out ({body_seconds} s on this server).")),
                "413": error_response(&format!("Request body larger than {MAX_BODY_BYTES} bytes.")),
                "415": error_response("The body is not sent as `application/json`."),
                "429": {
                    "description": format!("{REFUSED_429} `too_many_live_lookups`: the account already has as many live lookups in flight as it may (`serve --account-live-lookups`); nothing was fetched or charged."),
                    "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer", "minimum": 1}}},
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
                },
                "503": {
                    "description": "`database_unavailable`: the database is down or restarting; `service_unavailable`: another store failed. Nothing was charged. Retry.",
                    "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer", "minimum": 1}}},
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
                },
                "504": error_response("No URL resolved and a live lookup timed out; nothing was charged."),
            }
        }),
        Operation::ResolveCompanyPages => json!({
            "summary": "Resolve website domains and company names to company pages",
            "description": format!(
                "Each query is a website `domain` (or a URL on it) or a company `name` (with optional `location` \
                 and `domain` hints). A domain is resolved from the stored pages whose website is on it, then the \
                 links on the company's own home page (`<a href>`, `rel=\"me\"`, JSON-LD `sameAs`), then the pages \
                 named after it; a name from the stored pages of that name and the pages named after it. Every page \
                 is verified by its own website (or name) before it is returned, with `confidence` at least \
                 {MIN_CONFIDENCE}; each step is listed in `evidence`. A resolved query costs what its page's record \
                 costs ({LIVE_PRICE} credit verified live with `maxAgeHours: 0`, {STORED_PRICE} credit with a \
                 window above 0, the default here being {default_hours} hours); `\"enrich\": true` adds the record \
                 at no extra cost; unresolved queries cost nothing.",
                default_hours = DEFAULT_RESOLVE_WINDOW.seconds() / 3600.0
            ),
            "tags": ["Company Data"],
            "requestBody": {
                "required": true,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ResolveRequest"}}}
            },
            "responses": {
                "200": {
                    "description": "One result per resolved query and one entry per unresolved query, in query order.",
                    "headers": {
                        "X-Credits-Charged": credits_header("Credits charged for this request."),
                        "X-Credits-Remaining": credits_header("The account's balance after the charge."),
                        "Retry-After": {
                            "description": "When some queries are unresolved as `blocked`: seconds until the network \
                                may be asked again (the largest of their `retry_after_seconds`).",
                            "schema": {"type": "integer", "minimum": 1}
                        },
                    },
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ResolveResponse"}}}
                },
                "400": error_response("Invalid request body; `details` lists every problem."),
                "401": error_response("Missing, malformed, conflicting, invalid or revoked API key."),
                "402": error_response("Insufficient credits to pay for every query; nothing was done, or (rarely, when the balance was spent meanwhile) nothing was charged."),
                "403": error_response("`not_in_test_mode`: a test-mode key (`cdk_test_…`) cannot resolve domains and names, which needs the network; nothing was done."),
                "408": error_response(&format!("The request body did not arrive within the body time-out ({body_seconds} s on this server).")),
                "413": error_response(&format!("Request body larger than {MAX_BODY_BYTES} bytes.")),
                "415": error_response("The body is not sent as `application/json`."),
                "429": rate_limited(),
                "503": unavailable(),
            }
        }),
        Operation::Mcp => Value::Null,
        Operation::GetLlmsTxt => json!({
            "summary": "This API and its MCP tools, described for LLMs (llms.txt)",
            "security": [],
            "responses": {"200": {"description": "Markdown: each operation of this document and each MCP tool on one line.", "content": {"text/markdown": {"schema": {"type": "string"}}}}}
        }),
        Operation::GetOpenApiDocument => json!({
            "summary": "This document",
            "security": [],
            "responses": {"200": {"description": "The OpenAPI 3.1 document.", "content": {"application/json": {"schema": {"type": "object"}}}}}
        }),
        Operation::GetHealth => json!({
            "summary": "Health",
            "security": [],
            "responses": {
                "200": {"description": "The server is up and its database answers.", "content": {"application/json": {"schema": {
                    "type": "object", "required": ["status"], "properties": {"status": {"const": "ok"}}
                }}}},
                "503": {
                    "description": "The server cannot serve requests: its database does not answer.",
                    "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer", "minimum": 1}}},
                    "content": {"application/json": {"schema": {
                        "type": "object", "required": ["status", "message"],
                        "properties": {"status": {"const": "unavailable"}, "message": {"type": "string"}}
                    }}}
                }
            }
        }),
        Operation::GetAccount => json!({
            "summary": "The caller's account: balance, credits held, usage this month",
            "description": "Free. Reads the ledger of the key's account: the settled balance, what requests in flight hold, and the charges since the first of the current month (UTC).",
            "tags": ["Company Data"],
            "responses": {
                "200": {"description": "The account.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}},
                "401": error_response("Missing, malformed, conflicting, invalid or revoked API key."),
                "429": rate_limited(),
                "503": unavailable()
            }
        }),
        Operation::UpdateAccount => json!({
            "summary": "Change the account's settings: the low-balance threshold",
            "description": "Free. A JSON Merge Patch (RFC 7396; `application/merge-patch+json` or `application/json`): a member sent replaces the setting, `null` removes it. With a threshold set, the account's webhook endpoints that want `account.balance_low` are told once each time a charge takes the balance below it (at once when the threshold is set above the balance); a grant that lifts the balance to the threshold or above lets the next fall tell them again. Answers the account as `GET` does.",
            "tags": ["Webhooks"],
            "requestBody": {"required": true, "content": {
                "application/merge-patch+json": {"schema": {"$ref": "#/components/schemas/AccountUpdate"}},
                "application/json": {"schema": {"$ref": "#/components/schemas/AccountUpdate"}}
            }},
            "responses": {
                "200": {"description": "The account, with the settings applied.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}},
                "400": error_response("Invalid body; `details` lists every problem."),
                "401": unauthorized,
                "408": error_response("The request body did not arrive within the body time-out."),
                "413": error_response(&format!("Request body larger than {MAX_SETTINGS_BYTES} bytes.")),
                "415": error_response("The body is not sent as JSON."),
                "429": rate_limited(),
                "503": unavailable()
            }
        }),
        Operation::CreateJob => json!({
            "summary": "Start a bulk job",
            "description": format!("Looks up 1 to {MAX_JOB_URLS} page URLs in the background, priced as the synchronous endpoint: each distinct page that resolves is charged once ({LIVE_PRICE} live, {STORED_PRICE} with a freshness window), unresolved ones never. A job whose account runs out of credits pauses (`insufficient_credits`) and resumes by itself when credits are added."),
            "tags": ["Company Data"],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/JobRequest"}}}},
            "responses": {
                "202": {"description": "Accepted; the job runs in the background.",
                        "headers": {"Location": {"description": "The job's URL.", "schema": {"type": "string"}}},
                        "content": job},
                "400": error_response("Invalid body or unsupported URL; `details` lists every problem."),
                "401": error_response("Missing, malformed, conflicting, invalid or revoked API key."),
                "408": error_response("The request body did not arrive within the body time-out."),
                "413": error_response(&format!("Request body larger than {MAX_JOB_BODY_BYTES} bytes.")),
                "409": error_response("`too_many_open_jobs` or `too_many_queued_urls`: the account holds as much of the job queue as its quotas allow (jobs not yet ended; their URLs not yet answered); the message says the quota and what to do."),
                "415": error_response("The body is not sent as `application/json`."),
                "429": rate_limited(),
                "503": unavailable(),
            }
        }),
        Operation::ListJobs => json!({
            "summary": "List the account's jobs, newest first",
            "tags": ["Company Data"],
            "parameters": [
                {"name": "before", "in": "query", "description": "Only jobs older than this job id (the next page).",
                 "schema": {"type": "integer", "minimum": 1, "maximum": i64::MAX}},
                {"name": "limit", "in": "query", "description": "Jobs per page.",
                 "schema": {"type": "integer", "minimum": 1, "maximum": MOST_JOBS_PER_PAGE, "default": DEFAULT_JOBS_PER_PAGE}}
            ],
            "responses": {
                "200": {"description": "A page of jobs.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/JobList"}}}},
                "400": error_response("`invalid_query`: `before` or `limit` is not a number in range."),
                "401": error_response("Missing, malformed, conflicting, invalid or revoked API key."),
                "429": rate_limited(),
                "503": unavailable(),
            }
        }),
        Operation::GetJob => json!({
            "summary": "A job's progress",
            "tags": ["Company Data"],
            "responses": {
                "200": {"description": "The job.", "content": job},
                "401": error_response("Missing, malformed, conflicting, invalid or revoked API key."),
                "400": error_response("`invalid_query`: the id is not a whole number above 0."),
                "404": error_response("`job_not_found`: the account has no job with this id."),
                "429": rate_limited(),
                "503": unavailable(),
            }
        }),
        Operation::CancelJob => json!({
            "summary": "Cancel a job: nothing more is fetched or charged; its results are kept",
            "description": "Pages already being fetched when the cancel arrives are still recorded and charged; no other page is fetched. Cancelling a job that has ended changes nothing. Safe to repeat.",
            "tags": ["Company Data"],
            "responses": {
                "200": {"description": "The job, `cancelled` (or as it was if it had already ended).", "content": job},
                "400": bad_id,
                "401": unauthorized,
                "404": job_not_found,
                "429": rate_limited(),
                "503": unavailable(),
            }
        }),
        Operation::DeleteJob => json!({
            "summary": "Delete a job and its results",
            "description": "A job that has not ended is cancelled first (pages already being fetched may still be charged). Afterwards the job and its results are gone: its URLs answer 404 `job_not_found`.",
            "tags": ["Company Data"],
            "responses": {
                "204": {"description": "Deleted."},
                "400": bad_id,
                "401": unauthorized,
                "404": job_not_found,
                "429": rate_limited(),
                "503": unavailable(),
            }
        }),
        Operation::GetJobResults => json!({
            "summary": "A job's results so far, in input order",
            "description": "One NDJSON line (or CSV row with `Accept: text/csv`) per answered input position: the record or the unresolved entry the synchronous endpoint gives for that URL, with its 0-based `position`. Positions not answered yet are left out. Kept after the job ends for the server's job retention (`serve --job-retention-days`).",
            "tags": ["Company Data"],
            "parameters": [
                {"name": "from", "in": "query", "description": "First input position (0-based).",
                 "schema": {"type": "integer", "minimum": 0, "maximum": i64::MAX, "default": 0}},
                {"name": "limit", "in": "query", "description": "Input positions per page.",
                 "schema": {"type": "integer", "minimum": 1, "maximum": MOST_RESULTS_PER_PAGE,
                            "default": MOST_RESULTS_PER_PAGE}},
                {"name": CsvCells::QUERY, "in": "query", "description": "How CSV cells are written: `safe` gives a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return (and is not a number) a leading `'`, so a spreadsheet opens it as text (OWASP's rule against CSV injection: page text is someone else's); `raw` writes every cell as the data has it. NDJSON is not affected.",
                 "schema": {"type": "string", "enum": CsvCells::ALL.map(CsvCells::as_str),
                            "default": CsvCells::default().as_str()}}
            ],
            "responses": {
                "200": {
                    "description": "Results of the positions in the page that are answered.",
                    "headers": {"Link": {"description": "`<…?from=N&limit=M>; rel=\"next\"` while positions remain after this page.", "schema": {"type": "string"}}},
                    "content": {
                        "application/x-ndjson": {"schema": {"type": "string"}},
                        "text/csv": {"schema": {"type": "string"}}
                    }
                },
                "400": error_response("`invalid_query`: the id, `from` or `limit` is not a number in range."),
                "401": error_response("Missing, malformed, conflicting, invalid or revoked API key."),
                "404": error_response("`job_not_found`: the account has no job with this id."),
                "429": rate_limited(),
                "503": unavailable(),
            }
        }),
        Operation::GetCompanyHistory => json!({
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
                "401": error_response("Missing, malformed, conflicting, invalid or revoked API key."),
                "402": error_response("`insufficient_credits`: the account cannot pay for the history."),
                "404": error_response("`not_found`: no snapshot of this page is stored (look it up or watch it first); nothing was charged."),
                "429": rate_limited(),
                "503": unavailable()
            }
        }),
        Operation::CreateWatches => json!({
            "summary": "Watch pages for changes",
            "description": format!("One watch per distinct page. Each refreshes its page every `everyHours` (a live lookup, {LIVE_PRICE} credit each time it resolves), compares the record with the one it saw before over `fields`, and on a change POSTs a `company.changed` event (schema `WebhookEvent`) to `webhookUrl`, signed in the `Company-Data-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\">` with the account's webhook secret. Delivered at least once: retried with exponential backoff for {window_hours} h on a non-2xx answer or a {timeout_seconds} s time-out, then the watch is disabled. Redirects are not followed; addresses that are not public are refused."),
            "tags": ["Company Data"],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WatchRequest"}}}},
            "responses": {
                "201": {"description": "Created; nothing is fetched or charged until the first refresh.",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CreatedWatches"}}}},
                "400": error_response("Invalid body; `details` lists every problem."),
                "401": unauthorized,
                "408": error_response("The request body did not arrive within the body time-out."),
                "413": error_response(&format!("Request body larger than {MAX_BODY_BYTES} bytes.")),
                "409": error_response("`too_many_watches`: this request's watches would take the account past its quota of watches; none was created."),
                "415": error_response("The body is not sent as `application/json`."),
                "429": rate_limited(),
                "503": unavailable(),
            }
        }),
        Operation::ListWatches => json!({
            "summary": "List the account's watches, oldest first",
            "tags": ["Company Data"],
            "parameters": [
                {"name": "after", "in": "query", "description": "Only watches with ids above this one (the next page).",
                 "schema": {"type": "integer", "minimum": 1, "maximum": i64::MAX}},
                {"name": "limit", "in": "query", "description": "Watches per page.",
                 "schema": {"type": "integer", "minimum": 1, "maximum": MOST_WATCHES_PER_PAGE, "default": DEFAULT_WATCHES_PER_PAGE}}
            ],
            "responses": {
                "200": {"description": "A page of watches.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WatchList"}}}},
                "400": error_response("`invalid_query`: `after` or `limit` is not a number in range."),
                "401": unauthorized,
                "429": rate_limited(),
                "503": unavailable(),
            }
        }),
        Operation::GetWatch => json!({
            "summary": "A watch, its last check and its last delivery",
            "tags": ["Company Data"],
            "responses": {
                "200": {"description": "The watch.", "content": watch},
                "400": bad_id, "401": unauthorized, "404": watch_not_found, "429": rate_limited(), "503": unavailable(),
            }
        }),
        Operation::ListWebhookEndpoints => json!({
            "summary": "List the account's webhook endpoints",
            "tags": ["Webhooks"],
            "responses": {
                "200": {"description": "Every endpoint of the account, by id.",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WebhookEndpointList"}}}},
                "401": unauthorized, "429": rate_limited(), "503": unavailable(),
            }
        }),
        Operation::CreateWebhookEndpoint => json!({
            "summary": "Register a webhook endpoint for the account's events",
            "description": format!("The endpoint receives the account events it names (schema `AccountEvent`: `job.finished`, `job.paused`, `job.cancelled`, `account.balance_low`), signed as watch events are (`Company-Data-Signature` with the account's webhook secret), retried with backoff for {window_hours} h on a non-2xx answer or a {timeout_seconds} s time-out; then the endpoint is disabled. At most {MAX_ENDPOINTS} per account. Nothing is charged."),
            "tags": ["Webhooks"],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WebhookEndpointRequest"}}}},
            "responses": {
                "201": {"description": "Registered.",
                        "headers": {"Location": {"description": "The endpoint's path.", "schema": {"type": "string"}}},
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WebhookEndpoint"}}}},
                "400": error_response("Invalid body; `details` lists every problem."),
                "401": unauthorized,
                "408": error_response("The request body did not arrive within the body time-out."),
                "409": error_response(&format!("`too_many_endpoints`: the account has as many endpoints as its quota allows ({MAX_ENDPOINTS} unless the operator set another).")),
                "413": error_response(&format!("Request body larger than {MAX_BODY_BYTES} bytes.")),
                "415": error_response("The body is not sent as `application/json`."),
                "429": rate_limited(),
                "503": unavailable(),
            }
        }),
        Operation::DeleteWebhookEndpoint => json!({
            "summary": "Delete a webhook endpoint: nothing more is sent to it",
            "tags": ["Webhooks"],
            "responses": {
                "204": {"description": "Deleted, with its deliveries."},
                "400": bad_id, "401": unauthorized, "404": endpoint_not_found, "429": rate_limited(), "503": unavailable(),
            }
        }),
        Operation::PingWebhookEndpoint => json!({
            "summary": "Send the endpoint a signed test event",
            "description": "Queues a `ping` event (schema `AccountEvent`, `data.endpoint_id`) for the endpoint, whatever events it receives; it is sent within about a second and retried like any event. Follow it in the endpoint's deliveries.",
            "tags": ["Webhooks"],
            "responses": {
                "202": {"description": "Queued.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WebhookPing"}}}},
                "400": bad_id, "401": unauthorized,
                "404": error_response("`endpoint_not_found`: the account has no enabled webhook endpoint with this id."),
                "429": rate_limited(), "503": unavailable(),
            }
        }),
        Operation::ListWebhookDeliveries => json!({
            "summary": "An endpoint's deliveries, newest first, each with its status",
            "tags": ["Webhooks"],
            "parameters": [
                {"name": "limit", "in": "query", "description": "Deliveries per page.",
                 "schema": {"type": "integer", "minimum": 1, "maximum": MOST_DELIVERIES_PER_PAGE, "default": DEFAULT_DELIVERIES_PER_PAGE}}
            ],
            "responses": {
                "200": {"description": "The newest deliveries.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WebhookDeliveryList"}}}},
                "400": error_response("`invalid_query`: the id, or `limit`, is not a number in range."),
                "401": unauthorized, "404": endpoint_not_found, "429": rate_limited(), "503": unavailable(),
            }
        }),
        Operation::DeleteWatch => json!({
            "summary": "Stop watching: no more refreshes, charges or deliveries",
            "tags": ["Company Data"],
            "responses": {
                "204": {"description": "Deleted, with its undelivered events."},
                "400": bad_id, "401": unauthorized, "404": watch_not_found, "429": rate_limited(), "503": unavailable(),
            }
        }),
    }
}

/// The schemas derived from the Rust types that (de)serialize the bodies (`company-model` with its `schema`
/// feature; their doc comments are the descriptions), with what only this server knows added: its network's
/// page-URL pattern on each URL of a request, the webhook URL rule it applies, the bounds their owners keep
/// (`WATCH_EVERY_HOURS`, `WATCH_FIELDS`), and a job's larger list (`JobRequest`).
fn derived_schemas(domain: &NetworkDomain, http_webhooks: bool) -> Map<String, Value> {
    use schemars::generate::{Contract, SchemaSettings};
    let mut generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.definitions_path = "/components/schemas".into();
            // Answers are what the types serialize (a member skipped when empty is optional); requests are
            // described by the same rule, as the types are written to match it.
            settings.contract = Contract::Serialize;
        })
        .into_generator();
    generator.subschema_for::<RequestBody>();
    generator.subschema_for::<CompanyDataResponse>();
    generator.subschema_for::<ResolveBody>();
    generator.subschema_for::<ResolveResponse>();
    generator.subschema_for::<ErrorBody>();
    generator.subschema_for::<JobInfo>();
    generator.subschema_for::<JobList>();
    generator.subschema_for::<HistoryResponse>();
    generator.subschema_for::<WatchBody>();
    generator.subschema_for::<WatchInfo>();
    generator.subschema_for::<WatchList>();
    generator.subschema_for::<CreatedWatches>();
    generator.subschema_for::<WebhookEvent>();
    generator.subschema_for::<company_model::EndpointBody>();
    generator.subschema_for::<company_model::EndpointInfo>();
    generator.subschema_for::<company_model::EndpointList>();
    generator.subschema_for::<company_model::DeliveryList>();
    generator.subschema_for::<company_model::PingAnswer>();
    generator.subschema_for::<company_model::AccountEventBody>();
    generator.subschema_for::<credit_ledger::AccountSummary>();
    generator.subschema_for::<credit_ledger::AccountSettings>();
    let schemas = generator.take_definitions(true);
    let (low, high) = (*WATCH_EVERY_HOURS.start(), *WATCH_EVERY_HOURS.end());
    let added = [
        (
            "/CompanyRequest/properties/liUrls/items",
            json!({"pattern": page_url::submitted_pattern(domain)}),
        ),
        (
            "/WatchRequest/properties/liUrls/items",
            json!({"pattern": page_url::submitted_pattern(domain)}),
        ),
        (
            "/WatchRequest/properties/webhookUrl",
            json!({"pattern": company_model::webhook_url_pattern(http_webhooks)}),
        ),
        (
            "/WatchRequest/properties/everyHours",
            json!({"minimum": low, "maximum": high}),
        ),
        (
            "/WatchRequest/properties/fields",
            json!({"uniqueItems": true, "items": {"enum": company_model::WATCH_FIELDS}}),
        ),
        (
            "/Watch/properties/every_hours",
            json!({"minimum": low, "maximum": high}),
        ),
        (
            "/JobList/properties/jobs",
            json!({"maxItems": MOST_JOBS_PER_PAGE}),
        ),
        (
            "/WatchList/properties/watches",
            json!({"maxItems": MOST_WATCHES_PER_PAGE}),
        ),
        (
            "/CreatedWatches/properties/watches",
            json!({"maxItems": MAX_URLS}),
        ),
        (
            "/WebhookEndpointRequest/properties/url",
            json!({"pattern": company_model::webhook_url_pattern(http_webhooks)}),
        ),
        (
            "/WebhookEndpointRequest/properties/events",
            json!({"uniqueItems": true}),
        ),
        (
            "/WebhookEndpointList/properties/endpoints",
            json!({"maxItems": MAX_ENDPOINTS}),
        ),
        (
            "/WebhookDeliveryList/properties/deliveries",
            json!({"maxItems": MOST_DELIVERIES_PER_PAGE}),
        ),
    ];
    let mut schemas = Value::Object(schemas);
    for (pointer, members) in added {
        if let (Some(Value::Object(target)), Value::Object(members)) =
            (schemas.pointer_mut(pointer), members)
        {
            target.extend(members);
        }
    }
    let Value::Object(mut schemas) = schemas else {
        return Map::new();
    };
    if let Some(mut job) = schemas.get("CompanyRequest").cloned() {
        if let Some(urls) = job
            .pointer_mut("/properties/liUrls")
            .and_then(Value::as_object_mut)
        {
            urls.insert("maxItems".to_owned(), Value::from(MAX_JOB_URLS));
            // An input is a URL or an object carrying the caller's metadata (`CompanyRequest::from_job_json`).
            if let Some(url) = urls.remove("items") {
                urls.insert("items".to_owned(), company_model::job_input_schema(&url));
            }
        }
        // A job puts refused pages back rather than falling back (`CompanyRequest::from_job_json`).
        if let Some(properties) = job
            .pointer_mut("/properties")
            .and_then(Value::as_object_mut)
        {
            properties.remove("staleIfError");
        }
        if let Some(job) = job.as_object_mut() {
            job.insert(
                "description".to_owned(),
                Value::from(format!(
                    "The body of a bulk job: as `CompanyRequest`, with up to {MAX_JOB_URLS} URLs and without \
                     `staleIfError`."
                )),
            );
        }
        schemas.insert("JobRequest".to_owned(), job);
    }
    schemas
}

/// OpenAPI 3.1's `webhooks`: the request this service sends to a watch's `webhookUrl`.
fn webhooks() -> Value {
    let delivery = company_watch::WatchSettings::default();
    let (window_hours, timeout_seconds) = (
        delivery.retry_window.as_secs() / 3600,
        delivery.delivery_timeout.as_secs(),
    );
    // Both kinds of event are sent the same way: signed, with the event's id, retried until a 2xx.
    let signed = |id: &str, summary: &str, description: String, schema: &str| {
        json!({
            "post": {
                "operationId": id,
                "summary": summary,
                "description": description,
                "parameters": [
                    {"name": "Company-Data-Signature", "in": "header", "required": true,
                     "description": "`t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\">`, keyed with the account's webhook secret.",
                     "schema": {"type": "string", "pattern": "^t=[0-9]+,v1=[0-9a-f]{64}$"}},
                    {"name": "Company-Data-Event-Id", "in": "header", "required": true,
                     "description": "The event's `id`.", "schema": {"type": "string"}}
                ],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}},
                "responses": {"2XX": {"description": "Received; not sent again."}}
            }
        })
    };
    json!({
        "companyChanged": signed(
            "companyChanged",
            "A watched page changed",
            format!("Sent to the watch's `webhookUrl`. Verify `Company-Data-Signature` over the raw body before trusting it; answer 2xx within {timeout_seconds} s, else the event is sent again (same `id`) with backoff for {window_hours} h."),
            "WebhookEvent",
        ),
        "accountEvent": signed(
            "accountEvent",
            "An account event: a job finished, paused or was cancelled, the balance ran low, or a test ping",
            format!("Sent to each of the account's webhook endpoints that receives the event's `type` (a `ping` to the endpoint it was asked for). Signed and retried as `companyChanged` is: verify `Company-Data-Signature`, answer 2xx within {timeout_seconds} s, drop duplicates by `id` (retries for {window_hours} h send the same `id`)."),
            "AccountEvent",
        ),
    })
}

/// `Idempotency-Key` on an operation that creates or charges, with the answers it adds.
fn add_idempotency(operation: &mut Value) {
    let hours = idempotency::KEEP_FOR.as_secs() / 3600;
    let parameter = json!({
        "name": "Idempotency-Key", "in": "header", "required": false,
        "description": format!("Makes retries safe: the same key with the same request within {hours} hours gets the first (successful) answer again, with `Idempotent-Replayed: true`, and is charged once. Keys are per account; a UUID per logical request is typical."),
        "schema": {"type": "string", "pattern": format!("^[!-~]{{1,{}}}$", idempotency::MAX_KEY_LEN)}
    });
    let replayed = json!({"description": "`true` when this is the stored answer of an earlier request with the same `Idempotency-Key`.", "schema": {"const": "true"}});
    let Some(operation) = operation.as_object_mut() else {
        return;
    };
    if let Some(parameters) = operation
        .entry("parameters")
        .or_insert_with(|| json!([]))
        .as_array_mut()
    {
        parameters.push(parameter);
    }
    let Some(Value::Object(responses)) = operation.get_mut("responses") else {
        return;
    };
    for (status, response) in responses.iter_mut() {
        if status.starts_with('2')
            && let Some(response) = response.as_object_mut()
            && let Some(headers) = response
                .entry("headers")
                .or_insert_with(|| json!({}))
                .as_object_mut()
        {
            headers.insert("Idempotent-Replayed".to_owned(), replayed.clone());
        }
    }
    let in_use = "`idempotency_key_in_use`: the first request with this `Idempotency-Key` is still running; retry to get its answer.";
    // An operation with 409s of its own (a quota) keeps them, with this one beside them.
    let conflict = match responses
        .get("409")
        .and_then(|r| r.get("description"))
        .and_then(Value::as_str)
    {
        Some(own) => retried_error(&format!("{own} {in_use}")),
        None => retried_error(in_use),
    };
    responses.insert("409".to_owned(), conflict);
    if let Some(Value::Object(limited)) = responses.get_mut("429")
        && let Some(Value::String(text)) = limited.get_mut("description")
    {
        *text = format!(
            "{text} `idempotency_storage_full`: the account's answers kept for `Idempotency-Key` retries reached its quota; send the request without the header, or retry after `Retry-After`."
        );
    }
    responses.insert(
        "422".to_owned(),
        error_response(&format!("`idempotency_key_reused`: this `Idempotency-Key` was used with another request in the last {hours} hours.")),
    );
    if let Some(Value::Object(bad)) = responses.get_mut("400")
        && let Some(Value::String(text)) = bad.get_mut("description")
    {
        *text = format!(
            "{text} `invalid_idempotency_key`: the `Idempotency-Key` header is not 1 to {} visible ASCII characters.",
            idempotency::MAX_KEY_LEN
        );
    }
}

/// `X-Request-Id` on every response (the server's id of the request, the client's own when it sent a
/// well-formed one, also in the log and in error bodies), and, on an operation that takes a key, the
/// `RateLimit-*` headers on every response except the 401 of a refused key.
fn add_common_headers(operation: &mut Value, keyed: bool) {
    let header = json!({
        "description": "The request's id: the client's `X-Request-Id` when it is 1 to 64 characters of `A-Z a-z 0-9 - _ . :`, else one the server made. The server's log lines of the request carry it.",
        "schema": {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,64}$"}
    });
    let count = |description: &str| json!({"description": description, "schema": {"type": "integer", "minimum": 0}});
    let rate_headers = [
        (
            "RateLimit-Limit",
            count(
                "Requests the key may send at once when its allowance is whole (`serve --key-burst`).",
            ),
        ),
        (
            "RateLimit-Remaining",
            count("Requests the key may send now without waiting; 0 on a `rate_limited` 429."),
        ),
        (
            "RateLimit-Reset",
            count("Whole seconds until the key's allowance is whole again."),
        ),
    ];
    let Some(Value::Object(responses)) = operation.get_mut("responses") else {
        return;
    };
    for (status, response) in responses.iter_mut() {
        let Some(response) = response.as_object_mut() else {
            continue;
        };
        let headers = response.entry("headers").or_insert_with(|| json!({}));
        let Some(headers) = headers.as_object_mut() else {
            continue;
        };
        headers.insert("X-Request-Id".to_owned(), header.clone());
        // Set once the key is verified: on every answer but a refused key's.
        if keyed && status != "401" {
            for (name, value) in &rate_headers {
                headers.insert((*name).to_owned(), value.clone());
            }
        }
    }
}
