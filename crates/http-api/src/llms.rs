//! `GET /llms.txt`: a short description of the API and its MCP tools for LLMs (the llms.txt convention:
//! a title, a summary, then sections of links with notes), written from the OpenAPI document this API serves
//! and the tools its MCP endpoint lists — no second hand-written copy.

use std::fmt::Write as _;

use bytes::Bytes;
use serde_json::Value;

use crate::api::Api;

impl Api {
    /// The text of `/llms.txt`, written on first use.
    pub fn llms_txt(&self) -> Bytes {
        self.llms_cache()
            .get_or_init(|| {
                let document: Value = serde_json::from_slice(&self.openapi()).unwrap_or_default();
                let tools = self
                    .mcp_endpoint()
                    .map(|endpoint| endpoint.tools())
                    .unwrap_or_default();
                Bytes::from(write(&document, &tools))
            })
            .clone()
    }
}

/// The text, from the OpenAPI `document` and the MCP `tools` (name, description).
fn write(document: &Value, tools: &[(String, String)]) -> String {
    let info = &document["info"];
    let mut text = format!(
        "# {}\n\n> {}\n\n{}\n\n",
        info["title"].as_str().unwrap_or("company-data"),
        info["summary"].as_str().unwrap_or_default(),
        info["description"].as_str().unwrap_or_default()
    );
    // Who needs a key, and in which headers: the document's security schemes and its operations without one.
    let schemes: Vec<String> = document["components"]["securitySchemes"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(_, scheme)| match scheme["scheme"].as_str() {
            Some("bearer") => "`Authorization: Bearer <key>`".to_owned(),
            _ => format!("`{}`", scheme["name"].as_str().unwrap_or_default()),
        })
        .collect();
    let open: Vec<String> = document["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, item)| {
            item.as_object()
                .into_iter()
                .flatten()
                .all(|(_, operation)| operation["security"].as_array().is_some_and(Vec::is_empty))
        })
        .map(|(path, _)| format!("`{path}`"))
        .collect();
    let _ = write!(
        text,
        "Every route but {} takes an API key, in one of {}. Errors are JSON: `error` (a stable code), \
         `message` (what went wrong and the fix), `status_code`.\n\n## API\n\n",
        open.join(", "),
        schemes.join(", ")
    );
    for (path, item) in document["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            let Some(summary) = operation["summary"].as_str() else {
                continue;
            };
            let _ = write!(
                text,
                "- [{} {path}](/openapi.json): {summary}.",
                method.to_ascii_uppercase()
            );
            if let Some(description) = operation["description"].as_str() {
                let _ = write!(text, " {}", first_sentence(description));
            }
            text.push('\n');
        }
    }
    if !tools.is_empty() {
        text.push_str(
            "\n## MCP tools\n\nServed over Streamable HTTP at `POST /mcp` (the same API key headers) and over \
             stdio by `company-data mcp`; each tool is one call of the route it names, billed as that route.\n\n",
        );
        for (name, description) in tools {
            let _ = writeln!(text, "- `{name}`: {description}");
        }
    }
    text.push_str(
        "\n## Optional\n\n- [OpenAPI 3.1 document](/openapi.json): every route, body and answer.\n",
    );
    text
}

/// The first sentence of a description: up to the first `. ` (or all of it).
fn first_sentence(text: &str) -> &str {
    text.find(". ").map_or(text, |end| &text[..=end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_operation_and_tool_is_one_line() {
        let document = serde_json::json!({
            "info": {"title": "company-data", "summary": "Records.", "description": "Send URLs."},
            "paths": {"/v1/account": {"get": {"summary": "The account", "description": "Free. Reads the ledger."}},
                      "/healthz": {"get": {"summary": "Health", "security": []}}},
            "components": {"securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer"},
                "xApiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"}}}
        });
        let text = write(&document, &[("get_account".into(), "Free.".into())]);
        assert!(
            text.starts_with("# company-data\n\n> Records.\n\nSend URLs.\n"),
            "{text}"
        );
        assert!(
            text.contains("- [GET /v1/account](/openapi.json): The account. Free.\n"),
            "{text}"
        );
        assert!(
            text.contains("- [GET /healthz](/openapi.json): Health.\n"),
            "{text}"
        );
        assert!(text.contains("- `get_account`: Free.\n"), "{text}");
        assert!(
            text.contains("Every route but `/healthz` takes an API key, in one of `Authorization: Bearer <key>`, `x-api-key`."),
            "{text}"
        );
    }
}
