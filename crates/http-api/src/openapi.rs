//! The service's OpenAPI 3.1 description, served at `GET /openapi.json` (spec 1.8).
//!
//! Its `paths` are the route table's ([`crate::table::routes`]): each route's path, each method's operation
//! object written beside its handler ([`crate::endpoint::Endpoint::doc`]), with `operationId`, `security`,
//! `Idempotency-Key` and the `RateLimit-*` headers added as the endpoint's declaration says. Every bound,
//! price and time-out in it is read from the crate that owns it; the end-to-end tests validate real responses
//! against it, and `docs/openapi.json` is the committed copy a test holds it to.

use std::time::Duration;

use api_contract::schema::ServerPatterns;
use api_contract::{
    CompanyDataResponse, CreatedWatches, ErrorBody, HistoryResponse, JobInfo, JobList,
    MAX_AGE_HOURS, MAX_BODY_BYTES, MAX_URLS, RequestBody, ResolveBody, ResolveResponse, WatchBody,
    WatchInfo, WatchList, WebhookEvent, headers, paths,
};
use bytes::Bytes;
use credit_ledger::{LIVE_PRICE, STORED_PRICE};
use page_url::NetworkDomain;
use serde_json::{Map, Value, json};

use crate::api::Api;
use crate::doc::{Context, error_response, rate_limited, retried_error, unauthorized, unavailable};
use crate::table::routes;

impl Api {
    /// The OpenAPI 3.1 document this API serves at `/openapi.json`, as JSON text.
    pub fn openapi(&self) -> Bytes {
        self.openapi_cache()
            .get_or_init(|| {
                let http_webhooks = self
                    .webhooks()
                    .is_some_and(|webhooks| webhooks.settings().allow_private);
                let document = openapi_document(
                    self.domain(),
                    self.lookup().settings().live_timeout,
                    self.body_timeout(),
                    http_webhooks,
                );
                // A `Value` always serializes; the fallback only keeps this infallible.
                serde_json::to_vec_pretty(&document)
                    .map(Bytes::from)
                    .unwrap_or_default()
            })
            .clone()
    }
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
    let mut documented = Map::new();
    // Endpoints without a `doc` (`/mcp`, which speaks MCP's JSON-RPC) are described by their own specification.
    for route in routes() {
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
                        "schema": {"type": "string", "pattern": api_contract::ID_PATTERN}}]),
            );
        }
        for (method, endpoint) in route.methods {
            let Some(doc) = endpoint.doc else {
                continue;
            };
            let mut operation = doc(&context);
            if let Some(fields) = operation.as_object_mut() {
                fields.insert("operationId".to_owned(), json!(endpoint.operation_id));
                if !endpoint.keyed() {
                    fields.insert("security".to_owned(), json!([]));
                }
            }
            if endpoint.keyed() {
                add_keyed_errors(&mut operation);
            }
            if endpoint.idempotent {
                add_idempotency(&mut operation);
            }
            add_common_headers(&mut operation, endpoint.keyed());
            item.insert(method.as_str().to_ascii_lowercase(), operation);
        }
        if item.keys().any(|key| key != "parameters") {
            documented.insert(route.path.to_owned(), Value::Object(item));
        }
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
        "paths": documented,
        "components": {
            "securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "API key"},
                "xApiKey": {"type": "apiKey", "in": "header", "name": headers::X_API_KEY},
                "apiKey": {"type": "apiKey", "in": "header", "name": headers::API_KEY},
                "companyDataApiKey": {"type": "apiKey", "in": "header", "name": headers::X_COMPANY_DATA_API_KEY},
            },
            "schemas": schemas,
        },
        "webhooks": webhooks(),
    })
}

/// The schemas derived from the Rust types that (de)serialize the bodies (`api-contract` with its `schema`
/// feature; their doc comments are the descriptions, their bounds the types' schemars attributes), with the two
/// patterns only this server knows filled in (`api_contract::schema::ServerPatterns`: its network's page URLs,
/// the webhook URLs it takes).
fn derived_schemas(domain: &NetworkDomain, http_webhooks: bool) -> Map<String, Value> {
    use schemars::generate::{Contract, SchemaSettings};
    let mut generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.definitions_path = "/components/schemas".into();
            // Answers are what the types serialize (a member skipped when empty is optional); requests are
            // described by the same rule, as the types are written to match it.
            settings.contract = Contract::Serialize;
        })
        // The two patterns that depend on this server: its network's page URLs, the webhook URLs it takes.
        .with_transform(ServerPatterns::new(domain, http_webhooks))
        .into_generator();
    generator.subschema_for::<RequestBody>();
    generator.subschema_for::<CompanyDataResponse>();
    generator.subschema_for::<ResolveBody>();
    generator.subschema_for::<ResolveResponse>();
    generator.subschema_for::<api_contract::SearchBody>();
    generator.subschema_for::<api_contract::SearchResponse>();
    generator.subschema_for::<ErrorBody>();
    generator.subschema_for::<JobInfo>();
    generator.subschema_for::<JobList>();
    generator.subschema_for::<HistoryResponse>();
    generator.subschema_for::<WatchBody>();
    generator.subschema_for::<WatchInfo>();
    generator.subschema_for::<WatchList>();
    generator.subschema_for::<CreatedWatches>();
    generator.subschema_for::<WebhookEvent>();
    generator.subschema_for::<api_contract::EndpointBody>();
    generator.subschema_for::<api_contract::EndpointInfo>();
    generator.subschema_for::<api_contract::EndpointList>();
    generator.subschema_for::<api_contract::DeliveryList>();
    generator.subschema_for::<api_contract::EventList>();
    generator.subschema_for::<api_contract::PingAnswer>();
    generator.subschema_for::<api_contract::AccountEventBody>();
    generator.subschema_for::<credit_ledger::AccountSummary>();
    generator.subschema_for::<api_contract::AccountUpdate>();
    generator.subschema_for::<api_contract::JobBody>();
    generator.take_definitions(true)
}

/// OpenAPI 3.1's `webhooks`: the request this service sends to a watch's `webhookUrl`.
fn webhooks() -> Value {
    let delivery = account_webhooks::WebhookSettings::default();
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
            "An account event: a job finished, paused or was cancelled, the balance ran low, a watched page changed, or a test ping",
            format!("Sent to each of the account's webhook endpoints that receives the event's `type` (a `ping` to the endpoint it was asked for). Signed and retried as `companyChanged` is: verify `Company-Data-Signature`, answer 2xx within {timeout_seconds} s, drop duplicates by `id` (retries for {window_hours} h send the same `id`)."),
            "AccountEvent",
        ),
    })
}

/// The answers a key-bearing operation may give before it runs, where its own prose does not say more: a refused
/// key (401), the key's rate or the client's failed keys (429), a store that failed (503).
fn add_keyed_errors(operation: &mut Value) {
    let Some(Value::Object(responses)) = operation.get_mut("responses") else {
        return;
    };
    for (status, answer) in [
        ("401", unauthorized()),
        ("429", rate_limited()),
        ("503", unavailable()),
    ] {
        responses.entry(status).or_insert(answer);
    }
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
