//! Golden tests: the captured pages in `tests/fixtures/` against their hand-checked records.

mod drift;
mod kinds;
mod layouts;

use std::path::PathBuf;

use page_parser::{ScrapeError, parse_page};
use page_url::{NetworkDomain, PageUrl};
use serde_json::Value;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

fn read(path: &str) -> String {
    let path = fixtures().join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn parse(path: &str, url: &str) -> Result<Value, ScrapeError> {
    let domain = NetworkDomain::default();
    let url = PageUrl::parse_submitted(url, &domain).expect("fixture URL is valid");
    parse_page(&read(path), &url, &domain).map(|r| serde_json::to_value(r).expect("serializes"))
}

/// True when `got` holds everything `want` does: equal values, and for objects every member of `want` (the
/// record may carry more members in its open objects than the hand-checked file lists).
fn covers(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Object(got), Value::Object(want)) => want
            .iter()
            .all(|(k, w)| got.get(k).is_some_and(|g| covers(g, w))),
        _ => got == want,
    }
}

fn assert_golden(page: &str, url: &str, expected: &str) {
    let record = parse(page, url).expect("a company page");
    let expected: Value = serde_json::from_str(&read(expected)).expect("expected JSON");
    let mut mismatches = Vec::new();
    for (key, want) in expected.as_object().expect("object") {
        if key.starts_with('_') {
            continue;
        }
        // List sections are pinned by their item count.
        let got = match (&record[key], want) {
            (Value::Array(items), Value::Number(_)) => Value::from(items.len()),
            (got, _) => got.clone(),
        };
        if !covers(&got, want) {
            mismatches.push(format!("{key}: expected {want}, got {got}"));
        }
    }
    assert!(mismatches.is_empty(), "{page}:\n{}", mismatches.join("\n"));
    assert_nothing_empty(page, "", &record);
}

/// Never null, never an empty string, array or object, at any depth.
fn assert_nothing_empty(page: &str, path: &str, value: &Value) {
    let empty = match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(members) => members.is_empty(),
        _ => false,
    };
    assert!(!empty, "{page}: {path} is empty");
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                assert_nothing_empty(page, &format!("{path}/{i}"), item);
            }
        }
        Value::Object(members) => {
            for (key, member) in members {
                assert_nothing_empty(page, &format!("{path}/{key}"), member);
            }
        }
        _ => {}
    }
}

#[test]
fn google_2025_matches_its_golden_record() {
    assert_golden(
        "origin/company/google.html",
        "https://www.linkedin.com/company/google",
        "expected/company-google-2025.expected.json",
    );
}

#[test]
fn audiense_2024_matches_its_golden_record() {
    // Submitted with the uk. subdomain the page's canonical link uses.
    assert_golden(
        "origin/company/audiense.html",
        "https://uk.linkedin.com/company/audiense",
        "expected/company-audiense-2024.expected.json",
    );
}

/// The employee count from each place a layout shows it, the captured Audiense page rewritten so that only that
/// place holds it: its JSON-LD taken out, the face pile's `p.face-pile__text` renamed, its link's text in each
/// wording the layouts used.
#[test]
fn the_employee_count_is_read_from_each_place_a_layout_shows_it() {
    let html = read("origin/company/audiense.html");
    let start = html
        .find(r#"<script type="application/ld+json">"#)
        .expect("has JSON-LD");
    let end = start + html[start..].find("</script>").expect("closed") + "</script>".len();
    let without_ld = format!("{}{}", &html[..start], &html[end..]);
    assert!(
        without_ld.contains("face-pile__text"),
        "the capture's face pile"
    );
    let domain = NetworkDomain::default();
    let url = PageUrl::parse_submitted("https://www.linkedin.com/company/audiense", &domain)
        .expect("valid");
    for wording in [
        "View all 69 employees",
        "See all 69 employees on LinkedIn",
        "Discover all 69 employees",
    ] {
        let rewritten = without_ld
            .replace("face-pile__text", "face-pile__caption")
            .replace("View all 69 employees", wording);
        let parsed =
            page_parser::parse_page_explained(&rewritten, &url, &domain).expect("a company page");
        assert_eq!(parsed.record.employee_count_on_li, Some(69), "{wording}");
        let signal = parsed
            .fields
            .iter()
            .find(|f| f.field == "employee_count_on_li")
            .and_then(|f| f.signal)
            .unwrap_or_default();
        assert!(signal.contains("call to action"), "{wording}: {signal}");
    }
}

/// Whether `value` holds a string with a control character other than whitespace.
fn holds_control_characters(value: &Value) -> bool {
    match value {
        Value::String(text) => text.chars().any(|c| c.is_control() && !c.is_whitespace()),
        Value::Array(items) => items.iter().any(holds_control_characters),
        Value::Object(members) => members.values().any(holds_control_characters),
        _ => false,
    }
}

/// JSON-LD may escape any character (`\u0000`), HTML a control character by reference (`&#1;`), a link by percent
/// (`%00`): the captured Audiense page with control characters put in its JSON-LD name, address and description,
/// in its Locations text and in its website's redirect link gives a record with none (a NUL in a record member
/// failed every PostgreSQL write of it): spaces where they were, and the website from the row's text.
#[test]
fn control_characters_put_in_a_page_reach_no_record_member() {
    let html = read("origin/company/audiense.html");
    let put_in = [
        (r#""name":"Audiense""#, r#""name":"Audi\u0000ense\u0007""#),
        (
            r#""addressLocality":"London""#,
            r#""addressLocality":"Lon\u0000don""#,
        ),
        ("The Audiense platform", r"The\u001bAudiense\u0000platform"),
        (
            "London, London EC1V2NX, GB",
            "London, London EC1V&#1;2NX, GB",
        ),
        (
            "url=http%3A%2F%2Fwww%2Eaudiense%2Ecom&amp;",
            "url=http%3A%2F%2Fwww%2Eaudiense%2Ecom%00&amp;",
        ),
    ];
    let mut changed = html.clone();
    for (from, to) in put_in {
        assert!(changed.contains(from), "the capture holds {from}");
        changed = changed.replacen(from, to, 1);
    }
    let domain = NetworkDomain::default();
    let url = PageUrl::parse_submitted("https://www.linkedin.com/company/audiense", &domain)
        .expect("valid");
    let record = parse_page(&changed, &url, &domain).expect("still a company page");
    let value = serde_json::to_value(&record).expect("serializes");
    assert!(!holds_control_characters(&value), "{value:#}");
    assert_eq!(record.company_name.as_deref(), Some("Audi ense"));
    assert_eq!(record.website.as_deref(), Some("http://www.audiense.com"));
    let description = record.description.expect("description");
    assert!(
        description.starts_with("The Audiense platform"),
        "{description}"
    );
    assert!(
        value.to_string().contains("EC1V 2NX"),
        "the Locations text read"
    );
}

#[test]
fn without_json_ld_the_visible_page_gives_the_same_core_fields() {
    let html = read("origin/company/audiense.html");
    let start = html
        .find(r#"<script type="application/ld+json">"#)
        .expect("has JSON-LD");
    let end = start + html[start..].find("</script>").expect("closed") + "</script>".len();
    let stripped = format!("{}{}", &html[..start], &html[end..]);
    let domain = NetworkDomain::default();
    let url = PageUrl::parse_submitted("https://www.linkedin.com/company/audiense", &domain)
        .expect("valid");
    let record = parse_page(&stripped, &url, &domain).expect("still a company page");
    assert_eq!(record.company_name.as_deref(), Some("Audiense"));
    assert_eq!(record.employee_count_on_li, Some(69));
    assert_eq!(record.follower_count, Some(5750));
    assert_eq!(record.website.as_deref(), Some("http://www.audiense.com"));
    assert_eq!(
        record.slogan.as_deref(),
        Some(
            "Put consumer segmentation and cultural understanding at the center of your strategy."
        )
    );
    let description = record.description.expect("About section text");
    assert!(
        description.starts_with("The Audiense platform combines"),
        "{description}"
    );
    assert!(record.logo.is_some_and(|l| l.contains("audiense_logo")));
}

/// The sign-up wall of 2026: public parsers of that year report a page keyed `d_registration-cold-join`, about
/// 68,000 characters, whose canonical link points at the home page. Made from the real 2026 sign-in wall capture
/// (a wall page of that year, 77 KB) with those two facts put in: it is a wall, at its full size, not the guest
/// home page's bounce (a block, which would send its route into quarantine).
#[test]
fn the_2026_sign_up_wall_is_a_wall_at_its_real_size() {
    let captured = read("pages/authwall-profile-2026.html");
    let wall = captured
        .replace("auth_wall_desktop_profile", "d_registration-cold-join")
        .replace(
            r#"<link rel="canonical" href="/authwall">"#,
            r#"<link rel="canonical" href="https://www.linkedin.com/">"#,
        );
    assert!(wall.contains(r#"content="d_registration-cold-join""#));
    assert!(
        !wall.contains(r#"href="/authwall""#),
        "no canonical to the sign-in wall is left"
    );
    assert!(wall.len() > 60_000, "{} bytes", wall.len());
    let domain = NetworkDomain::default();
    let page = PageUrl::parse_submitted("https://www.linkedin.com/company/google", &domain)
        .expect("valid");
    assert_eq!(
        parse_page(&wall, &page, &domain),
        Err(ScrapeError::Authwall)
    );
    // The same page keyed as the guest home page is the bounce: the key decides.
    let home = wall.replace("d_registration-cold-join", "d_homepage-guest-home");
    assert!(matches!(
        parse_page(&home, &page, &domain),
        Err(ScrapeError::Blocked { .. })
    ));
}

#[test]
fn pages_that_are_not_company_pages_say_what_they_are() {
    let url = "https://www.linkedin.com/company/google";
    assert_eq!(
        parse("pages/authwall-profile-2026.html", url),
        Err(ScrapeError::Authwall)
    );
    assert!(matches!(
        parse("pages/blocked-guest-homepage-2024.html", url),
        Err(ScrapeError::Blocked { .. })
    ));
    assert!(matches!(
        parse("pages/blocked-999-2021.html", url),
        Err(ScrapeError::Blocked { .. })
    ));
    let not_found =
        "<html><head><title>Page Not Found | LinkedIn</title></head><body></body></html>";
    let domain = NetworkDomain::default();
    let page = PageUrl::parse_submitted(url, &domain).expect("valid");
    assert_eq!(
        parse_page(not_found, &page, &domain),
        Err(ScrapeError::NotFound)
    );
    let profile = r#"<html><head><link rel="canonical" href="https://www.linkedin.com/in/someone"></head></html>"#;
    assert!(matches!(
        parse_page(profile, &page, &domain),
        Err(ScrapeError::WrongPageKind { .. })
    ));
    assert_eq!(
        parse_page("<html></html>", &page, &domain),
        Err(ScrapeError::Unparseable)
    );
    // Pages saved while signed in are the network's app, not a guest page: named as such, not "unparseable".
    for signed_in in [
        "pages/loggedin-company-audiense-2017.html",
        "pages/loggedin-company-facebook-fragment-2018.html",
    ] {
        assert_eq!(
            parse(signed_in, url),
            Err(ScrapeError::SignedIn),
            "{signed_in}"
        );
    }
}

fn record_of(html: &str, url: &str) -> Value {
    let domain = NetworkDomain::default();
    let url = PageUrl::parse_submitted(url, &domain).expect("valid URL");
    serde_json::to_value(parse_page(html, &url, &domain).expect("a company page"))
        .expect("serializes")
}

#[test]
fn raw_browser_saved_and_minified_forms_give_the_same_record() {
    let url = "https://www.linkedin.com/company/google";
    let raw = read("origin/company/google.html");
    let expected = record_of(&raw, url);
    // A browser's lazy loader moves data-delayed-url into src.
    let saved = raw.replace("data-delayed-url=", "src=");
    assert_eq!(record_of(&saved, url), expected, "browser-saved form");
    // Minified: no whitespace between tags.
    let mut minified = String::with_capacity(raw.len());
    let mut pending_space = false;
    for c in raw.chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space && !(c == '<' && minified.ends_with('>')) {
            minified.push(' ');
        }
        pending_space = false;
        minified.push(c);
    }
    let minified_record = record_of(&minified, url);
    for key in [
        "company_name",
        "company_id",
        "website",
        "headquarters",
        "locations",
        "similar_pages",
        "funding_info",
        "employees_on_li",
    ] {
        assert_eq!(minified_record[key], expected[key], "minified: {key}");
    }
    assert_eq!(
        minified_record["updates"].as_array().map(Vec::len),
        Some(10)
    );
}

/// The real guest job search (`d_jobs_guest_search`, app version 2.0.2949, June 2026; tests/fixtures/SOURCES.md):
/// its header prints "2000+", a floor, not the count.
#[test]
fn the_job_search_counts_open_jobs_and_says_when_the_count_is_a_floor() {
    let html = read("pages/jobs-guest-search-2026.html");
    assert_eq!(
        page_parser::parse_job_search(&html),
        Ok(page_parser::JobCount {
            count: 2000,
            lower_bound: true
        })
    );
    // The same page served for a company page is not a company page.
    let domain = NetworkDomain::default();
    let url =
        PageUrl::parse_submitted("https://www.linkedin.com/company/acme", &domain).expect("URL");
    assert!(parse_page(&html, &url, &domain).is_err());
    // A company page is not a job search.
    assert!(matches!(
        page_parser::parse_job_search(&read("origin/company/google.html")),
        Err(ScrapeError::WrongPageKind { .. })
    ));
}
