//! What the bodies' JSON Schemas leave to the server that publishes them: the two patterns that depend on how the
//! server runs (the page URLs of its network, and whether it takes `http` webhooks). A property declares that it
//! takes one with a marker keyword ([`PAGE_URL`], [`WEBHOOK_URL`]) beside its other schemars attributes, and
//! [`ServerPatterns`], a schemars transform, fills each marker with its pattern when a server generates the
//! schemas. Every other bound is written on the type itself. When a body is read, the same markers name the
//! strings the server checks itself (`crate::validation`).

use page_url::NetworkDomain;
use schemars::Schema;
use schemars::transform::{Transform, transform_subschemas};
use serde_json::Value;

/// Marker keyword: this string is a page URL, matched by the server's `page_url::submitted_pattern`.
pub const PAGE_URL: &str = "x-page-url";
/// Marker keyword: this string is a webhook URL, matched by `webhook_url_pattern` as the server allows them.
pub const WEBHOOK_URL: &str = "x-webhook-url";

/// For `#[schemars(transform = …)]` on a webhook URL: marks it as one.
pub(crate) fn webhook_url(schema: &mut Schema) {
    schema.insert(WEBHOOK_URL.to_owned(), Value::Bool(true));
}

/// Marks a string schema as a page URL.
pub(crate) fn page_url(schema: &mut Schema) {
    schema.insert(PAGE_URL.to_owned(), Value::Bool(true));
}

/// For `#[schemars(transform = …)]` on a list of page URLs: marks its items as page URLs.
pub(crate) fn page_url_items(schema: &mut Schema) {
    if let Some(items) = schema.get_mut("items").and_then(Value::as_object_mut) {
        items.insert(PAGE_URL.to_owned(), Value::Bool(true));
    }
}

/// Fills every [`PAGE_URL`] and [`WEBHOOK_URL`] marker of a schema and its subschemas with the pattern of a
/// server on `domain` that takes `http` webhooks or not. Use it with `SchemaSettings::with_transform`.
#[derive(Clone, Debug)]
pub struct ServerPatterns {
    /// `None`: the markers are removed and no pattern is stated ([`ServerPatterns::unknown`]).
    page_url: Option<String>,
    webhook_url: Option<String>,
}

impl ServerPatterns {
    /// The patterns of a server on `domain`, taking `http` webhook URLs when `http_webhooks` (a server that allows
    /// private webhook addresses, for tests).
    pub fn new(domain: &NetworkDomain, http_webhooks: bool) -> Self {
        Self {
            page_url: Some(page_url::submitted_pattern(domain)),
            webhook_url: Some(crate::webhook_url_pattern(http_webhooks)),
        }
    }

    /// For a schema published where the server is not known (the MCP tools, which relay to whichever server
    /// they are given): the markers are removed and the server checks the values.
    pub fn unknown() -> Self {
        Self {
            page_url: None,
            webhook_url: None,
        }
    }
}

impl Transform for ServerPatterns {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(object) = schema.as_object_mut() {
            for (marker, pattern) in [(PAGE_URL, &self.page_url), (WEBHOOK_URL, &self.webhook_url)]
            {
                if object.remove(marker).is_some()
                    && let Some(pattern) = pattern
                {
                    object.insert("pattern".to_owned(), Value::String(pattern.clone()));
                }
            }
        }
        transform_subschemas(self, schema);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_become_the_servers_patterns_at_any_depth() {
        let mut schema = schemars::json_schema!({
            "type": "object",
            "properties": {
                "urls": {"type": "array", "items": {"type": "string", "x-page-url": true}},
                "hook": {"type": "string", "x-webhook-url": true},
            }
        });
        let domain = NetworkDomain::default();
        ServerPatterns::new(&domain, true).transform(&mut schema);
        let text = serde_json::to_string(&schema).expect("serializes");
        assert!(
            !text.contains("x-page-url") && !text.contains("x-webhook-url"),
            "{text}"
        );
        assert_eq!(
            schema.as_value()["properties"]["urls"]["items"]["pattern"],
            Value::String(page_url::submitted_pattern(&domain))
        );
        assert_eq!(
            schema.as_value()["properties"]["hook"]["pattern"],
            Value::String(crate::webhook_url_pattern(true))
        );
        let mut unknown = schemars::json_schema!({"type": "string", "x-page-url": true});
        ServerPatterns::unknown().transform(&mut unknown);
        assert_eq!(unknown, schemars::json_schema!({"type": "string"}));
    }
}
