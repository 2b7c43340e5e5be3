//! The published OpenAPI document against its committed copy, `docs/openapi.json`.
//!
//! Clients generate code from that file, so every change to the document's paths, operations or schemas must
//! be intended: this test names each JSON Pointer whose value changed. After an intended change, write the new
//! copy with `COMPANY_DATA_BLESS=1 cargo test -p http-api --test it document` and commit it with the change.

use std::path::PathBuf;

use company_lookup::LookupSettings;
use http_api::{ApiSettings, openapi_document};
use page_url::NetworkDomain;
use serde_json::Value;

/// The committed copy: the document of a default server (`serve` with no flags).
fn committed_path() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/openapi.json"
    ))
}

/// Every place where `before` and `after` differ, as `pointer: before -> after` lines (`-` where absent).
fn differences(
    pointer: &str,
    before: Option<&Value>,
    after: Option<&Value>,
    out: &mut Vec<String>,
) {
    match (before, after) {
        (Some(Value::Object(old)), Some(Value::Object(new))) => {
            let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                differences(
                    &format!("{pointer}/{escaped}"),
                    old.get(key),
                    new.get(key),
                    out,
                );
            }
        }
        (Some(Value::Array(old)), Some(Value::Array(new))) if old.len() == new.len() => {
            for (index, (old, new)) in old.iter().zip(new).enumerate() {
                differences(&format!("{pointer}/{index}"), Some(old), Some(new), out);
            }
        }
        (old, new) if old != new => {
            let show =
                |value: Option<&Value>| value.map_or_else(|| "-".to_owned(), Value::to_string);
            out.push(format!("{pointer}: {} -> {}", show(old), show(new)));
        }
        _ => {}
    }
}

#[test]
fn the_published_document_is_the_committed_one() {
    let document = openapi_document(
        &NetworkDomain::default(),
        LookupSettings::default().live_timeout,
        ApiSettings::default().body_timeout,
        false,
    );
    let text = serde_json::to_string_pretty(&document).expect("a document serializes") + "\n";
    let path = committed_path();
    if std::env::var_os("COMPANY_DATA_BLESS").is_some() {
        std::fs::write(&path, &text).expect("docs/openapi.json is writable");
        return;
    }
    let committed: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    let mut changed = Vec::new();
    differences("", Some(&committed), Some(&document), &mut changed);
    assert!(
        changed.is_empty(),
        "the OpenAPI document differs from docs/openapi.json at {} places (if intended, run \
         `COMPANY_DATA_BLESS=1 cargo test -p http-api --test it document` and commit the file):\n{}",
        changed.len(),
        changed.join("\n")
    );
}

/// The document speaks to clients: no description carries rustdoc's link syntax (`[`Name`]`), which names Rust
/// items a client cannot follow.
#[test]
fn descriptions_carry_no_rustdoc_links() {
    let text = std::fs::read_to_string(committed_path()).expect("docs/openapi.json");
    let links: Vec<&str> = text
        .match_indices("[`")
        .map(|(at, _)| &text[at..text.len().min(at + 60)])
        .collect();
    assert!(
        links.is_empty(),
        "rustdoc links in the document: {links:#?}"
    );
}

/// The diff itself: a member added, removed or changed is each named by its pointer, and equal documents have
/// none.
#[test]
fn differences_name_each_changed_pointer() {
    let before = serde_json::json!({"a": {"b": 1, "c/d": [1, 2]}, "gone": true});
    let after = serde_json::json!({"a": {"b": 2, "c/d": [1, 3]}, "new": "x"});
    let mut changed = Vec::new();
    differences("", Some(&before), Some(&after), &mut changed);
    assert_eq!(
        changed,
        [
            "/a/b: 1 -> 2",
            "/a/c~1d/1: 2 -> 3",
            "/gone: true -> -",
            "/new: - -> \"x\""
        ]
    );
    changed.clear();
    differences("", Some(&before), Some(&before), &mut changed);
    assert!(changed.is_empty());
}
