//! The names of the wire, each written once: every path of the HTTP API ([`paths`]) and every header name it
//! reads or writes beyond HTTP's own ([`headers`]). The server's route table and OpenAPI document, the MCP
//! tools, the Rust client and the end-to-end tests all name them from here, so a path or a header cannot drift
//! between the server and its clients.

/// The API's paths. A path with an `{id}` segment is a template (as OpenAPI and the route table write it):
/// [`with_id`](paths::with_id) fills it.
pub mod paths {
    /// Expands to `/v1/network/company-data` followed by `$tail`: the prefix of the company-data routes,
    /// written once.
    macro_rules! company_data {
        ($tail:literal) => {
            concat!("/v1/network/company-data", $tail)
        };
    }

    /// `POST`: company records from page URLs (spec 2).
    pub const COMPANY_DATA: &str = company_data!("");
    /// `POST`: website domains and company names resolved to pages.
    pub const RESOLVE: &str = company_data!("/resolve");
    /// `POST`: the stored companies searched by filters and words.
    pub const SEARCH: &str = company_data!("/search");
    /// `GET`: a page's history of records.
    pub const HISTORY: &str = company_data!("/history");
    /// `GET` and `POST`: the bulk jobs' collection.
    pub const JOBS: &str = company_data!("/jobs");
    /// `GET` and `DELETE`: one job.
    pub const JOB: &str = company_data!("/jobs/{id}");
    /// `POST`: cancels a job.
    pub const JOB_CANCEL: &str = company_data!("/jobs/{id}/cancel");
    /// `GET`: a job's answers, NDJSON or CSV.
    pub const JOB_RESULTS: &str = company_data!("/jobs/{id}/results");
    /// `GET` and `POST`: the watches' collection.
    pub const WATCHES: &str = company_data!("/watches");
    /// `GET` and `DELETE`: one watch.
    pub const WATCH: &str = company_data!("/watches/{id}");
    /// `GET` and `PATCH`: the caller's account.
    pub const ACCOUNT: &str = "/v1/account";
    /// `GET` and `POST`: the account's webhook endpoints.
    pub const WEBHOOK_ENDPOINTS: &str = "/v1/webhook-endpoints";
    /// `DELETE`: one webhook endpoint.
    pub const WEBHOOK_ENDPOINT: &str = "/v1/webhook-endpoints/{id}";
    /// `POST`: sends a webhook endpoint a ping event.
    pub const WEBHOOK_ENDPOINT_PING: &str = "/v1/webhook-endpoints/{id}/ping";
    /// `GET`: a webhook endpoint's deliveries.
    pub const WEBHOOK_ENDPOINT_DELIVERIES: &str = "/v1/webhook-endpoints/{id}/deliveries";
    /// `GET`: the account's events, oldest first (the feed for clients that poll rather than receive webhooks).
    pub const EVENTS: &str = "/v1/events";
    /// `GET`: the OpenAPI 3.1 document.
    pub const OPENAPI: &str = "/openapi.json";
    /// `GET`: the API and its MCP tools described for LLMs.
    pub const LLMS_TXT: &str = "/llms.txt";
    /// `GET`: whether the server can serve.
    pub const HEALTH: &str = "/healthz";
    /// `POST`: MCP over Streamable HTTP.
    pub const MCP: &str = "/mcp";

    /// `template` with its `{id}` segment replaced by `id` (`with_id(JOB, "7")` is
    /// `/v1/network/company-data/jobs/7`). `id` is used as given: ids are whole numbers.
    pub fn with_id(template: &str, id: &str) -> String {
        template.replacen("{id}", id, 1)
    }
}

/// Header names, lower case as `http` writes them (HTTP field names are case-insensitive, RFC 9110 §5.1).
pub mod headers {
    /// Response: the credits a request was charged, a decimal number (`0.5`, `2`).
    pub const X_CREDITS_CHARGED: &str = "x-credits-charged";
    /// Response: the account's balance after the charge, a decimal number.
    pub const X_CREDITS_REMAINING: &str = "x-credits-remaining";
    /// Request: the client's key for retrying a `POST` safely (a retry with it gets the first answer).
    pub const IDEMPOTENCY_KEY: &str = "idempotency-key";
    /// Response: `true` on an answer replayed for an `Idempotency-Key` seen before.
    pub const IDEMPOTENT_REPLAYED: &str = "idempotent-replayed";
    /// Request: the API key, besides `Authorization: Bearer` (spec 5 names all four).
    pub const X_API_KEY: &str = "x-api-key";
    /// Request: the API key, another spelling.
    pub const API_KEY: &str = "api-key";
    /// Request: the API key, the service's own spelling.
    pub const X_COMPANY_DATA_API_KEY: &str = "x-company-data-api-key";
    /// The headers other than `Authorization` that may carry the API key, in the order they are read.
    pub const KEY_HEADERS: [&str; 3] = [X_API_KEY, API_KEY, X_COMPANY_DATA_API_KEY];
    /// Response: the key's request limit (IETF RateLimit header fields draft).
    pub const RATELIMIT_LIMIT: &str = "ratelimit-limit";
    /// Response: the requests the key has left in its window.
    pub const RATELIMIT_REMAINING: &str = "ratelimit-remaining";
    /// Response: seconds until the key's limit resets.
    pub const RATELIMIT_RESET: &str = "ratelimit-reset";
}

#[cfg(test)]
mod tests {
    use super::paths::{self, with_id};

    #[test]
    fn templates_fill_their_one_id() {
        assert_eq!(with_id(paths::JOB, "7"), "/v1/network/company-data/jobs/7");
        assert_eq!(
            with_id(paths::WEBHOOK_ENDPOINT_PING, "12"),
            "/v1/webhook-endpoints/12/ping"
        );
        assert_eq!(with_id(paths::JOBS, "7"), paths::JOBS);
    }
}
