//! What a caller may submit as a page URL, written once as a regular expression: the published `pattern` of the
//! API's URL members is [`submitted_pattern`], and [`crate::PageUrl::parse_submitted`] accepts exactly the URLs
//! it matches (then normalizes them), so a generated client and the server agree on every URL.
//!
//! The grammar, after spec 2.1's `^https://([a-z0-9-]+\.)?<domain>/(company|school|showcase)/.+`, made precise
//! where `.+` would admit URLs that name no page:
//! - `https://`, an optional one-label subdomain of `a-z 0-9 -`, the network domain, `/`, the kind, `/`;
//! - the page name: one or more of RFC 3986's path characters (unreserved, sub-delimiters, `:`, `@`), percent-
//!   encoded UTF-8 of any character but a control character or `.`, and raw characters from U+00A0 up; not `.`
//!   or `..` (a dot segment, which names the page above);
//! - then, optionally, sub-pages (`/about/`: path characters without `.` or `%`), a query and a fragment, both
//!   without spaces or control characters.
//!
//! The pattern uses only what ECMA-262 (JSON Schema's `pattern`), Python's `re` and Rust's `regex` read alike;
//! `$` before one final `\n` is read as Python reads it (the validator accepts that newline and drops it).

use crate::NetworkDomain;

/// Hex digit, either case.
const HEX: &str = "[0-9A-Fa-f]";
/// A UTF-8 continuation byte, percent-encoded: `%80`–`%BF`.
const CONT: &str = "%[89ABab][0-9A-Fa-f]";

/// RFC 3986 path characters kept raw in a page name: unreserved but `.`, sub-delimiters, `:` and `@`.
const RAW: &str = "[A-Za-z0-9_~!$&'()*+,;=:@-]";

/// A percent-encoded UTF-8 character that is neither a control character (C0, DEL, C1) nor `.` (RFC 3629's
/// well-formed sequences).
fn percent_encoded_character() -> String {
    let ascii = "%(?:2[0-9A-Da-dFf]|[3-6][0-9A-Fa-f]|7[0-9A-Ea-e])";
    let two = format!("%(?:[Cc]2%[ABab]{HEX}|[Cc][3-9A-Fa-f]{CONT}|[Dd][0-9A-Fa-f]{CONT})");
    let three = format!(
        "%(?:[Ee]0%[ABab]{HEX}{CONT}|[Ee][1-9A-Ca-cEeFf]{CONT}{CONT}|[Ee][Dd]%[89]{HEX}{CONT})"
    );
    let four = format!(
        "%(?:[Ff]0%(?:9{HEX}|[ABab]{HEX}){CONT}{CONT}|[Ff][1-3]{CONT}{CONT}{CONT}|[Ff]4%8{HEX}{CONT}{CONT})"
    );
    format!("(?:{ascii}|{two}|{three}|{four})")
}

/// The page name: tokens that are not `.`, or dots, but never exactly `.` or `..`.
fn page_name() -> String {
    let token = format!("(?:{RAW}|{}|[^\\x00-\\x9F])", percent_encoded_character());
    let any = format!("(?:{token}|\\.)");
    format!("(?:\\.{{0,2}}{token}{any}*|\\.{{3,}}{any}*)")
}

/// The regular expression a submitted page URL on `domain` must match (ECMA-262, as JSON Schema reads
/// `pattern`).
pub fn submitted_pattern(domain: &NetworkDomain) -> String {
    let domain = domain.as_str().replace('.', "\\.");
    let sub_pages = "(?:/[A-Za-z0-9_~!$&'()*+,;=:@/-]*)?";
    let query = "(?:\\?[^#\\x00-\\x20\\x7F]*)?";
    let fragment = "(?:#[^\\x00-\\x20\\x7F]*)?";
    format!(
        "^https://(?:[a-z0-9-]+\\.)?{domain}/(?:company|school|showcase)/{}{sub_pages}{query}{fragment}$",
        page_name()
    )
}

/// Whether the pattern of `domain` matches `input` (each domain's pattern compiled once).
pub(crate) fn admits(domain: &NetworkDomain, input: &str) -> bool {
    use std::collections::HashMap;
    use std::sync::{Arc, LazyLock, PoisonError, RwLock};
    // One network per server in practice: every submitted URL takes the read lock, the first one compiles.
    static COMPILED: LazyLock<RwLock<HashMap<String, Arc<regex::Regex>>>> =
        LazyLock::new(|| RwLock::new(HashMap::new()));
    let known = COMPILED
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(domain.as_str())
        .cloned();
    let compiled = if let Some(regex) = known {
        regex
    } else {
        // The pattern is built from constants and an escaped domain: it always compiles (a test says so).
        let Ok(regex) = regex::Regex::new(&submitted_pattern(domain)) else {
            return false;
        };
        let regex = Arc::new(regex);
        COMPILED
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(domain.as_str().to_owned(), Arc::clone(&regex));
        regex
    };
    compiled.is_match(input)
}
