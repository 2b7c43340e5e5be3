//! The published pattern and the validator are one rule: over generated strings — URLs built from the pieces
//! that decide (hosts, kinds, dots, percent-encodings valid and not, control and space characters, non-ASCII)
//! and arbitrary text — a URL is accepted exactly when the pattern matches it, and an accepted one reads back
//! from its canonical text.

use page_url::{MAX_URL_LEN, NetworkDomain, PageUrl, submitted_pattern};
use proptest::prelude::*;

/// The pattern as JSON Schema and Python read it: `$` also before one final newline.
fn pattern_admits(pattern: &regex::Regex, url: &str) -> bool {
    url.chars().count() <= MAX_URL_LEN && pattern.is_match(url.strip_suffix('\n').unwrap_or(url))
}

const PREFIXES: &[&str] = &[
    "https://www.linkedin.com/",
    "https://linkedin.com/",
    "https://uk.linkedin.com/",
    "https://a-1.linkedin.com/",
    "https://UK.linkedin.com/",
    "https://a.b.linkedin.com/",
    "http://www.linkedin.com/",
    "https://www.linkedin.com:443/",
    "https://user@linkedin.com/",
    "https://evil-linkedin.com/",
    "https://www.linkedin.com",
    "",
];

const KINDS: &[&str] = &[
    "company/",
    "school/",
    "showcase/",
    "Company/",
    "in/",
    "company",
    "",
];

const PIECES: &[&str] = &[
    "a",
    "Z",
    "0",
    "google",
    "-",
    ".",
    "..",
    "_",
    "~",
    "!",
    "$",
    "&",
    "'",
    "(",
    ")",
    "*",
    "+",
    ",",
    ";",
    "=",
    ":",
    "@",
    "/",
    "?",
    "#",
    "%",
    "%2",
    "%2e",
    "%2E",
    "%2F",
    "%20",
    "%41",
    "%7f",
    "%7E",
    "%00",
    "%C3%A9",
    "%c3%a9",
    "%C2%85",
    "%C2%A0",
    "%C3",
    "%FF",
    "%ED%A0%80",
    "%F0%9F%98%80",
    "%F4%90%80%80",
    "%E2%80%8B",
    "é",
    "\u{a0}",
    "\u{85}",
    "\u{7f}",
    "\u{0}",
    "\u{2028}",
    " ",
    "\t",
    "\n",
    "\r",
    "\\",
    "\"",
    "<",
    ">",
    "{",
    "|",
    "^",
    "`",
    "[",
    "]",
    "ß",
    "日",
    "😀",
];

fn built_url() -> impl Strategy<Value = String> {
    (
        prop::sample::select(PREFIXES),
        prop::sample::select(KINDS),
        prop::collection::vec(prop::sample::select(PIECES), 0..10),
    )
        .prop_map(|(prefix, kind, pieces)| format!("{prefix}{kind}{}", pieces.concat()))
}

fn arbitrary_after_a_valid_start() -> impl Strategy<Value = String> {
    any::<String>().prop_map(|tail| format!("https://www.linkedin.com/company/{tail}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn built_urls_are_accepted_exactly_when_the_pattern_matches(url in built_url()) {
        let domain = NetworkDomain::default();
        let pattern = regex::Regex::new(&submitted_pattern(&domain)).expect("the pattern compiles");
        let accepted = PageUrl::parse_submitted(&url, &domain);
        prop_assert_eq!(pattern_admits(&pattern, &url), accepted.is_ok(), "{:?}: {:?}", url, accepted);
        // What is accepted is stored by its canonical text, which reads back as the same page.
        if let Ok(page) = accepted {
            prop_assert_eq!(PageUrl::from_canonical(page.as_str()), Ok(page.clone()), "{:?}", url);
        }
    }

    #[test]
    fn arbitrary_text_is_accepted_exactly_when_the_pattern_matches(url in arbitrary_after_a_valid_start()) {
        let domain = NetworkDomain::default();
        let pattern = regex::Regex::new(&submitted_pattern(&domain)).expect("the pattern compiles");
        let accepted = PageUrl::parse_submitted(&url, &domain);
        prop_assert_eq!(pattern_admits(&pattern, &url), accepted.is_ok(), "{:?}: {:?}", url, accepted);
    }
}

#[test]
fn the_pattern_compiles_for_other_networks_and_names_their_domain() {
    for name in ["linkedin.com", "example.co.uk"] {
        let domain = NetworkDomain::parse(name).expect("valid");
        let pattern = submitted_pattern(&domain);
        assert!(pattern.contains(&name.replace('.', "\\.")), "{pattern}");
        let compiled = regex::Regex::new(&pattern).expect("compiles");
        assert!(compiled.is_match(&format!(
            "https://www.{name}/company/caf%C3%A9/about/?trk=x#top"
        )));
        assert!(!compiled.is_match(&format!("https://www.{name}/company/%FF")));
    }
}
