//! A watch's `webhookUrl` is accepted exactly when the published pattern matches it, over generated strings:
//! URLs built from the pieces that decide (schemes, hosts, ports, user info, spaces, brackets) and arbitrary
//! text after a valid start.

use api_contract::{MAX_WEBHOOK_URL_LEN, WatchRequest, webhook_url_pattern};
use page_url::NetworkDomain;
use proptest::prelude::*;

fn accepted(url: &str, allow_http: bool) -> bool {
    let body = serde_json::json!({
        "liUrls": ["https://www.linkedin.com/company/google"],
        "everyHours": 24,
        "webhookUrl": url,
    });
    WatchRequest::from_json(
        body.to_string().as_bytes(),
        &NetworkDomain::default(),
        allow_http,
    )
    .is_ok()
}

/// The pattern as JSON Schema and Python read it: `$` also before one final newline.
fn admitted(url: &str, allow_http: bool) -> bool {
    let pattern = regex::Regex::new(&webhook_url_pattern(allow_http)).expect("compiles");
    url.chars().count() <= MAX_WEBHOOK_URL_LEN
        && pattern.is_match(url.strip_suffix('\n').unwrap_or(url))
}

const SCHEMES: &[&str] = &["https://", "http://", "HTTPS://", "ftp://", "https:/", ""];
const HOSTS: &[&str] = &[
    "example.com",
    "hooks.example.com",
    "EXAMPLE.com",
    "a-b.example",
    "a--b.example",
    "-a.example",
    "localhost",
    "127.0.0.1",
    "256.1.1.1",
    "1.2.3",
    "0x7f.0.0.1",
    "[::1]",
    "xn--nxasmq6b.example",
    "user@example.com",
    "user:pw@example.com",
    "exa mple.com",
    "example.123",
    "",
    "ex_ample.com",
];
const PORTS: &[&str] = &[
    "", ":443", ":8080", ":65535", ":65536", ":0", ":99999", ":", ":x",
];
const TAILS: &[&str] = &[
    "",
    "/",
    "/hooks/company",
    "/a%20b",
    "/%zz",
    "/a b",
    "/[x]",
    "/{x}",
    "/|",
    "/\\",
    "?x=1",
    "?x=1 2",
    "#frag",
    "#a b",
    "/é",
    "\n",
    "\t",
    "/\u{0}",
    "/@",
    "/:x",
];

fn built() -> impl Strategy<Value = String> {
    (
        prop::sample::select(SCHEMES),
        prop::sample::select(HOSTS),
        prop::sample::select(PORTS),
        prop::collection::vec(prop::sample::select(TAILS), 0..4),
    )
        .prop_map(|(scheme, host, port, tails)| format!("{scheme}{host}{port}{}", tails.concat()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn built_webhook_urls_are_accepted_exactly_when_the_pattern_matches(url in built(), allow_http in any::<bool>()) {
        prop_assert_eq!(admitted(&url, allow_http), accepted(&url, allow_http), "{:?} (http allowed: {})", url, allow_http);
    }

    #[test]
    fn arbitrary_text_after_a_valid_start_too(tail in any::<String>(), allow_http in any::<bool>()) {
        let url = format!("https://hooks.example.com{tail}");
        prop_assert_eq!(admitted(&url, allow_http), accepted(&url, allow_http), "{:?}", url);
    }
}
