//! The tools: each one route of the API, its input schema the route's own body type, its output the route's
//! answer as structured content with a short text an agent can read.

use std::fmt::Write as _;
use std::sync::Arc;

use api_contract::{
    CompanyDataResponse, CreatedWatches, DEFAULT_RESOLVE_WINDOW, ErrorBody, GROWTH_DAYS,
    HistoryQuery, HistoryResponse, MAX_AGE_HOURS, MAX_QUERIES, MAX_SEARCH_ROWS, MAX_URLS,
    RequestBody, ResolveBody, ResolveResponse, SearchBody, SearchResponse, WatchBody, WatchList,
    WatchListQuery, WatchPath, headers, paths,
};
use credit_ledger::{AccountSummary, HISTORY_PRICE, LIVE_PRICE, STORED_PRICE};
use http::{HeaderMap, Method};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use crate::backend::{ApiAnswer, ApiCall, Backend};

/// The member of a tool call's `_meta` that carries its `Idempotency-Key`.
pub const IDEMPOTENCY_META: &str = "idempotencyKey";

/// One tool: its name, what it tells an agent, and the API route it calls.
pub struct ToolSpec {
    /// The tool's name, e.g. `get_companies`.
    pub name: &'static str,
    /// A title for people.
    pub title: &'static str,
    /// The method of the route it calls.
    pub method: Method,
    /// The route's path; `{id}` is the `id` argument, and the arguments of a `GET` are its query.
    pub path: &'static str,
    /// The description an agent reads, prices included (from `credit-ledger`).
    description: fn() -> String,
    /// The JSON Schema of its arguments: the route's body type's.
    input: fn() -> JsonObject,
    /// The JSON Schema of its structured content: the route's answer type's (none for an answer without a
    /// body).
    output: Option<fn() -> JsonObject>,
    /// The short text beside the structured content.
    summary: fn(&Value, &HeaderMap) -> String,
}

/// Every tool, in the order `tools/list` gives them.
pub static TOOLS: [ToolSpec; 8] = [
    ToolSpec {
        name: "get_companies",
        title: "Company records from page URLs",
        method: Method::POST,
        path: paths::COMPANY_DATA,
        description: || {
            format!(
                "Company records for 1 to {MAX_URLS} LinkedIn company, school or showcase page URLs (`liUrls`), in \
                 input order; URLs that could not be read are listed in `unresolved` with the reason, and cost \
                 nothing. Costs {LIVE_PRICE} credit per record fetched live (no `maxAgeHours`, or 0), \
                 {STORED_PRICE} credit per record with a freshness window (`maxAgeHours` up to {MAX_AGE_HOURS}: a stored snapshot \
                 that recent is served without fetching). Send `fields` (e.g. [\"company_name\", \"website\"]) to \
                 get only those record members: smaller answers, the same price. Send `include: [\"job_count\"]` to \
                 add each company's open-jobs count (one more page fetched per company, the same price; a stored \
                 snapshot without it is fetched again)."
            )
        },
        input: schema::<RequestBody>,
        output: Some(schema::<CompanyDataResponse>),
        summary: |body, headers| {
            format!(
                "{} records, {} unresolved{}.{}",
                count(body, "results"),
                count(body, "unresolved"),
                charged(headers),
                unresolved_lines(body, "li_url"),
            )
        },
    },
    ToolSpec {
        name: "resolve_companies",
        title: "Company pages from domains or names",
        method: Method::POST,
        path: paths::RESOLVE,
        description: || {
            let default_hours = DEFAULT_RESOLVE_WINDOW.duration().as_secs() / 3600;
            format!(
                "The LinkedIn page of each of 1 to {MAX_QUERIES} queries — a website `domain` (`stripe.com`) or a company \
                 `name` with optional `location` and `domain` hints — verified by the page itself, with the \
                 evidence and a confidence; `\"enrich\": true` adds each page's record at no extra cost (`fields` keeps \
                 only the named members; `include: [\"job_count\"]` adds the open-jobs count). Costs \
                 {LIVE_PRICE} credit per query resolved live (`maxAgeHours: 0`), {STORED_PRICE} credit with a window \
                 (the default, {default_hours} hours); unresolved queries cost nothing."
            )
        },
        input: schema::<ResolveBody>,
        output: Some(schema::<ResolveResponse>),
        summary: |body, headers| {
            format!(
                "{} resolved, {} unresolved{}.{}",
                count(body, "results"),
                count(body, "unresolved"),
                charged(headers),
                unresolved_lines(body, "query"),
            )
        },
    },
    ToolSpec {
        name: "search_companies",
        title: "Search the stored companies",
        method: Method::POST,
        path: paths::SEARCH,
        description: || {
            format!(
                "Finds companies among those already looked up (by default the ones this account was answered), \
                 without fetching: filters on industry (`industries`, the network's labels such as \
                 \"Software Development\"), size band, type, headquarters `countries` (two-letter codes), \
                 `regions`, `localities`, `specialties`, `employeeCount` and `followerCount` ranges \
                 ({{\"min\": 1000}}), `employeeGrowth` (percent over {GROWTH_DAYS} days, from the history), `founded`, \
                 `hasWebsite`, `fetchedAt`; and words `q` found in the name, \
                 slogan, description or specialties. Sort by `relevance`, `followers`, `employees` or \
                 `freshness`; up to {MAX_SEARCH_ROWS} compact rows a page, `next_cursor` for the next (send it \
                 as `cursor`). Free; a row's whole record is `get_companies` of its `final_li_url` with \
                 `maxAgeHours` (at {STORED_PRICE} credit)."
            )
        },
        input: schema::<SearchBody>,
        output: Some(schema::<SearchResponse>),
        summary: |body, _| {
            let more = if body["next_cursor"].is_string() {
                "; more with `cursor`"
            } else {
                ""
            };
            let mut text = format!("{} companies{more}.", count(body, "results"));
            for row in body["results"].as_array().into_iter().flatten() {
                let _ = write!(
                    text,
                    "\n- {} ({})",
                    row["company_name"].as_str().unwrap_or("unnamed"),
                    row["final_li_url"].as_str().unwrap_or_default()
                );
            }
            text
        },
    },
    ToolSpec {
        name: "get_account",
        title: "Credits and usage",
        method: Method::GET,
        path: paths::ACCOUNT,
        description: || {
            "The account of the API key in use: its balance, the credits held for requests in flight, what a new \
             request may spend, and this month's usage. Free."
                .to_owned()
        },
        input: no_arguments,
        output: Some(schema::<AccountSummary>),
        summary: |body, _| {
            format!(
                "Balance {} credits, {} held, {} available.",
                body["balance"], body["held"], body["available"]
            )
        },
    },
    ToolSpec {
        name: "get_company_history",
        title: "A page's history",
        method: Method::GET,
        path: paths::HISTORY,
        description: || {
            format!(
                "A page's followers, employees and size at each stored fetch (`points`), and each change of its \
                 record's members between fetches (`changes`), oldest first, optionally between `from` and `to` \
                 (RFC 3339). Costs {HISTORY_PRICE} credit when the range holds a point or a change, nothing \
                 otherwise."
            )
        },
        input: schema::<HistoryQuery>,
        output: Some(schema::<HistoryResponse>),
        summary: |body, headers| {
            format!(
                "{} points, {} changes{}.",
                count(body, "points"),
                count(body, "changes"),
                charged(headers)
            )
        },
    },
    ToolSpec {
        name: "create_watch",
        title: "Watch pages for changes",
        method: Method::POST,
        path: paths::WATCHES,
        description: || {
            format!(
                "Watches 1 to {MAX_URLS} pages (`liUrls`): each is refreshed every `everyHours`, and a change of the \
                 members in `fields` is POSTed, signed, to `webhookUrl`. Creating costs nothing; each refresh \
                 costs {LIVE_PRICE} credit when the page resolves."
            )
        },
        input: schema::<WatchBody>,
        output: Some(schema::<CreatedWatches>),
        summary: |body, _| format!("{} watches created.", count(body, "watches")),
    },
    ToolSpec {
        name: "list_watches",
        title: "The account's watches",
        method: Method::GET,
        path: paths::WATCHES,
        description: || {
            "The account's watches, oldest first, a page at a time (`after` the last id of the previous page). \
             Free."
                .to_owned()
        },
        input: schema::<WatchListQuery>,
        output: Some(schema::<WatchList>),
        summary: |body, _| {
            let more = if body["next"].is_string() {
                "; more after the last"
            } else {
                ""
            };
            format!("{} watches{more}.", count(body, "watches"))
        },
    },
    ToolSpec {
        name: "delete_watch",
        title: "Stop watching a page",
        method: Method::DELETE,
        path: paths::WATCH,
        description: || {
            "Stops a watch (`id` from `create_watch` or `list_watches`): no more refreshes, charges or \
             deliveries. Free."
                .to_owned()
        },
        input: schema::<WatchPath>,
        output: None,
        summary: |_, _| "Deleted.".to_owned(),
    },
];

/// Every tool of [`TOOLS`] as `tools/list` describes it: built once, at first use (each schema is derived from
/// its type then), not on every `tools/list` or tool call.
pub fn tools() -> &'static [Tool] {
    static BUILT: std::sync::LazyLock<Vec<Tool>> =
        std::sync::LazyLock::new(|| TOOLS.iter().map(ToolSpec::tool).collect());
    &BUILT
}

/// The JSON Schema of `T`, as the OpenAPI document publishes it, without the patterns only the server the tools
/// are relayed to knows (its network's page URLs; the API checks them).
fn schema<T: schemars::JsonSchema>() -> JsonObject {
    let generator = schemars::generate::SchemaSettings::default()
        .with_transform(api_contract::schema::ServerPatterns::unknown())
        .into_generator();
    match serde_json::to_value(generator.into_root_schema_for::<T>()) {
        Ok(Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

/// The schema of a tool that takes no arguments.
fn no_arguments() -> JsonObject {
    match serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}) {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

fn count(body: &Value, member: &str) -> usize {
    body[member].as_array().map_or(0, Vec::len)
}

/// `; 3 credits charged, 97 left` from the billing headers.
fn charged(headers: &HeaderMap) -> String {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    match (
        header(headers::X_CREDITS_CHARGED),
        header(headers::X_CREDITS_REMAINING),
    ) {
        (Some(charged), Some(left)) => format!("; {charged} credits charged, {left} left"),
        (Some(charged), None) => format!("; {charged} credits charged"),
        _ => String::new(),
    }
}

/// One line per unresolved entry: what it was (its `member`), its `error` and message.
fn unresolved_lines(body: &Value, member: &str) -> String {
    let mut lines = String::new();
    for entry in body["unresolved"].as_array().into_iter().flatten() {
        let what = match &entry[member] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let _ = write!(
            lines,
            "\n- {what}: {} ({})",
            entry["error"].as_str().unwrap_or("unresolved"),
            entry["message"].as_str().unwrap_or_default()
        );
    }
    lines
}

impl ToolSpec {
    /// The tool as `tools/list` describes it.
    pub fn tool(&self) -> Tool {
        let tool = Tool::new(self.name, (self.description)(), Arc::new((self.input)()))
            .with_title(self.title);
        match self.output {
            Some(output) => tool.with_raw_output_schema(Arc::new(output())),
            None => tool,
        }
    }

    /// The API call for the given arguments (the body, for a `POST`; a `GET` takes none), made in `context`.
    fn call(&self, arguments: Option<JsonObject>, context: http::Extensions) -> ApiCall {
        let arguments = arguments.unwrap_or_default();
        let text = |value: &Value| match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        // The id goes into the path percent-encoded, so no argument can name another route.
        let id = arguments.get("id").map(text).unwrap_or_default();
        let mut path_and_query = self.path.replace(
            "{id}",
            &url::form_urlencoded::byte_serialize(id.as_bytes()).collect::<String>(),
        );
        if self.method == Method::GET && !arguments.is_empty() {
            let mut query = url::form_urlencoded::Serializer::new(String::new());
            for (name, value) in &arguments {
                query.append_pair(name, &text(value));
            }
            path_and_query = format!("{path_and_query}?{}", query.finish());
        }
        ApiCall {
            context,
            method: self.method.clone(),
            path_and_query,
            body: (self.method == Method::POST).then_some(Value::Object(arguments)),
            idempotency_key: None,
        }
    }

    /// The tool's result for the API's answer: structured content and a summary on a 2xx, else a tool error
    /// with the API's error body.
    fn result(&self, answer: &ApiAnswer) -> CallToolResult {
        let body: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
        if answer.status.is_success() && self.output.is_none() {
            return CallToolResult::success(vec![ContentBlock::text((self.summary)(
                &body,
                &answer.headers,
            ))]);
        }
        if answer.status.is_success() {
            let mut result = CallToolResult::structured(body.clone());
            result.content = vec![ContentBlock::text((self.summary)(&body, &answer.headers))];
            return result;
        }
        // The API's message names each problem and its fix already.
        let text = serde_json::from_value::<ErrorBody>(body.clone()).map_or_else(
            |_| format!("the API answered {}", answer.status),
            |error| format!("{}: {}", error.error, error.message),
        );
        let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
        result.structured_content = (body != Value::Null).then_some(body);
        result
    }
}

/// The MCP server: [`TOOLS`], each answered through `B`.
pub struct CompanyDataTools<B> {
    backend: Arc<B>,
}

impl<B> Clone for CompanyDataTools<B> {
    fn clone(&self) -> Self {
        Self {
            backend: Arc::clone(&self.backend),
        }
    }
}

impl<B: Backend> CompanyDataTools<B> {
    /// The tools, calling the API through `backend`.
    pub fn new(backend: B) -> Self {
        Self {
            backend: Arc::new(backend),
        }
    }

    /// Asks the API whether the key is accepted (`GET /v1/account`, free), so that a host given a missing,
    /// revoked or mistyped key hears so before any tool runs.
    ///
    /// # Errors
    /// [`KeyRefused`] with the API's message (or why the API could not be asked).
    pub async fn check_key(&self) -> Result<(), KeyRefused> {
        let answer = self
            .backend
            .send(ApiCall {
                method: Method::GET,
                path_and_query: paths::ACCOUNT.to_owned(),
                body: None,
                idempotency_key: None,
                context: http::Extensions::new(),
            })
            .await
            .map_err(|error| KeyRefused(error.to_string()))?;
        if answer.status.is_success() {
            return Ok(());
        }
        Err(KeyRefused(
            serde_json::from_slice::<ErrorBody>(&answer.body).map_or_else(
                |_| format!("the API answered {}", answer.status),
                |error| format!("{}: {}", error.error, error.message),
            ),
        ))
    }
}

/// The API refused the key the tools were given, or could not be asked.
#[derive(Debug, thiserror::Error)]
#[error("the API key was not accepted: {0}")]
pub struct KeyRefused(String);

impl<B: Backend> ServerHandler for CompanyDataTools<B> {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("company-data", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Company records from LinkedIn company, school and showcase pages, and the page of a \
                 company's domain or name. Tools spend the API key's credits as the HTTP API does; each \
                 tool's description gives its price.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools().to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools().iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(spec) = TOOLS.iter().find(|t| t.name == request.name) else {
            let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool `{}`; the tools are {}",
                    request.name,
                    names.join(", ")
                ),
                None,
            ));
        };
        // Over Streamable HTTP, the HTTP request's parts: its extensions are the host's context for the call.
        let parts = context.extensions.get::<http::request::Parts>();
        let http_context = parts
            .map(|parts| parts.extensions.clone())
            .unwrap_or_default();
        // A retry of a call that spends credits is charged once when it names its first try: the request's
        // `_meta.idempotencyKey`, or over HTTP the `Idempotency-Key` header of the POST that carried it.
        // (rmcp moves the request's `_meta` into the context.)
        let idempotency_key = context
            .meta
            .0
            .get(IDEMPOTENCY_META)
            .or_else(|| request.meta.as_ref()?.0.get(IDEMPOTENCY_META))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| {
                parts
                    .and_then(|parts| parts.headers.get(headers::IDEMPOTENCY_KEY))
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_owned)
            });
        let mut call = spec.call(request.arguments, http_context);
        call.idempotency_key = idempotency_key;
        let result = match self.backend.send(call).await {
            Ok(answer) => spec.result(&answer),
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error.to_string())]),
        };
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_takes_an_object_states_its_price_and_is_found_by_name() {
        let free = ["get_account", "list_watches", "delete_watch"];
        for spec in &TOOLS {
            let tool = spec.tool();
            assert_eq!(
                tool.input_schema.get("type"),
                Some(&Value::from("object")),
                "{}",
                spec.name
            );
            if let Some(output) = tool.output_schema.as_ref() {
                assert_eq!(
                    output.get("type"),
                    Some(&Value::from("object")),
                    "{}",
                    spec.name
                );
            }
            let description = tool.description.as_deref().unwrap_or_default();
            if free.contains(&spec.name) {
                assert!(description.ends_with("Free."), "{description}");
            } else {
                assert!(description.contains(" credit"), "{description}");
            }
            assert_eq!(spec.call(None, http::Extensions::new()).method, spec.method);
        }
        // The input schema of `get_companies` is the published request body's: the same members.
        let properties = TOOLS[0].tool().input_schema["properties"].clone();
        for member in ["liUrls", "maxAgeHours", "maxAgeSeconds", "staleIfError"] {
            assert!(properties.get(member).is_some(), "{member}");
        }
    }

    #[test]
    fn a_refusal_is_a_tool_error_with_the_api_s_code_and_message() {
        let body = serde_json::json!({"error": "insufficient_credits", "status_code": 402,
            "message": "The account has 0 credits available; this request needs 1. Fix: grant credits."});
        let answer = ApiAnswer {
            status: http::StatusCode::PAYMENT_REQUIRED,
            headers: HeaderMap::new(),
            body: serde_json::to_vec(&body).expect("serializes"),
        };
        let result = TOOLS[0].result(&answer);
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.structured_content, Some(body));
        let text = serde_json::to_value(&result.content)
            .expect("serializes")
            .to_string();
        assert!(
            text.contains("insufficient_credits: The account has 0 credits"),
            "{text}"
        );
    }
}
