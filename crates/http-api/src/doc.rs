//! The pieces each endpoint's OpenAPI operation object is written from (an answer that is an error, one that
//! says when to retry, the billing headers) and what the document's texts state about the server it describes
//! ([`Context`]). Every endpoint's own prose is beside its handler ([`crate::endpoint::Endpoint::doc`]).

use page_url::NetworkDomain;
use serde_json::{Value, json};

/// What the texts of the document state about the server it describes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Context<'a> {
    /// The network whose page URLs the server takes (the URL patterns).
    pub(crate) domain: &'a NetworkDomain,
    /// The body time-out, in seconds.
    pub(crate) body_seconds: f64,
}

/// An error answer: `description`, with the `Error` body.
pub(crate) fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    })
}

/// An error answer that tells the client when to retry (`Retry-After`, whole seconds).
pub(crate) fn retried_error(description: &str) -> Value {
    json!({
        "description": description,
        "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer", "minimum": 1}}},
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    })
}

/// 503 of the operations added after the first (their stores' failures).
pub(crate) fn unavailable() -> Value {
    retried_error(
        "`database_unavailable` or `service_unavailable`: a store failed. Nothing was charged. Retry.",
    )
}

/// Why a key-bearing request may get 429 before its operation runs; the window over which failed keys are earned
/// back is the one `api_keys::FailureLimit` counts with.
pub(crate) fn refused_429() -> String {
    let window = api_keys::FailureLimit::default().window.as_secs();
    format!(
        "`rate_limited`: the key sent requests faster than its limit (`serve --key-rate`, `--key-burst`). \
         `too_many_failed_authentications`: this client address sent too many keys that are not valid (`serve \
         --failed-auth-limit`: that many at once, then one more try earned every {window} s divided by that \
         number); nothing is checked for it until it has earned a try back (`Retry-After`)."
    )
}

/// 429 of the key's request rate or of the client's failed authentications.
pub(crate) fn rate_limited() -> Value {
    retried_error(&refused_429())
}

/// 401 of a key-bearing operation.
pub(crate) fn unauthorized() -> Value {
    error_response("Missing, malformed, conflicting, invalid or revoked API key.")
}

/// 400 of an `{id}` that is not an id.
pub(crate) fn bad_id() -> Value {
    error_response("`invalid_query`: the id is not a whole number above 0.")
}

/// `X-Credits-Charged` / `X-Credits-Remaining`: a decimal number of credits.
pub(crate) fn credits_header(description: &str) -> Value {
    json!({"description": description, "schema": {"type": "string", "pattern": r"^[0-9]+(\.[0-9]{1,3})?$"}})
}

/// A JSON answer whose body is the schema `name`.
pub(crate) fn json_content(name: &str) -> Value {
    json!({"application/json": {"schema": {"$ref": format!("#/components/schemas/{name}")}}})
}

/// How long webhook deliveries are retried, in hours, and how long each may take, in seconds (what the
/// watches' and endpoints' texts state).
pub(crate) fn delivery_terms() -> (u64, u64) {
    let delivery = account_webhooks::WebhookSettings::default();
    (
        delivery.retry_window.as_secs() / 3600,
        delivery.delivery_timeout.as_secs(),
    )
}
