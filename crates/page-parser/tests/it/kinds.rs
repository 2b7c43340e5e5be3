//! School and showcase pages. No guest capture of either exists, so these pages are synthetic: derived from the
//! captured company pages (tests/fixtures/SOURCES.md says so) by changing what the page says it is and what a
//! school or showcase page shows instead — a school's alumni and students where a company shows employees, its
//! industry and type; a showcase's parent company. The derivations are tree edits of the real pages.

use page_parser::parse_page_explained;
use page_url::{NetworkDomain, PageUrl};
use serde_json::{Value, json};

use super::drift::{Drift, apply, ids, retree, signal_of};
use super::layouts::{edit_elements, edit_json_ld, edit_texts};

const SCHOOL: &str = "https://www.linkedin.com/school/audiense-university";
const SHOWCASE: &str = "https://www.linkedin.com/showcase/google-cloud";

/// The page key a guest page of `url`'s kind carries. School and showcase pages do not carry the company page's
/// `d_org_guest_company_overview`: they share only the `d_org_guest` prefix (issue 42). No capture shows their
/// full keys, so these are the prefix and the kind, which is all the parser may rely on.
fn page_key(url: &str) -> &'static str {
    if url.contains("/school/") {
        "d_org_guest_school"
    } else if url.contains("/showcase/") {
        "d_org_guest_showcase"
    } else {
        "d_org_guest_company_overview"
    }
}

/// The page's canonical link, `og:url` and JSON-LD `url` set to `url`, and its page key to its kind's.
fn claim(html: &str, url: &str) -> String {
    let html = edit_json_ld(html, |organization| {
        organization.insert("url".into(), Value::from(url));
    });
    retree(&html, |document| {
        edit_elements(
            document,
            r#"link[rel="canonical"], meta[property="og:url"]"#,
            |element| {
                for (name, value) in &mut element.attrs {
                    if matches!(&*name.local, "href" | "content") {
                        *value = url.into();
                    }
                }
            },
        );
        edit_elements(document, r#"meta[name="pageKey"]"#, |element| {
            for (name, value) in &mut element.attrs {
                if &*name.local == "content" {
                    *value = page_key(url).into();
                }
            }
        });
    })
}

/// The page key the page carries.
fn key_of(html: &str) -> Option<String> {
    let document = scraper::Html::parse_document(html);
    let selector = scraper::Selector::parse(r#"meta[name="pageKey"]"#).expect("selector");
    document
        .select(&selector)
        .next()
        .and_then(|meta| meta.value().attr("content"))
        .map(str::to_owned)
}

#[test]
fn school_and_showcase_pages_carry_their_own_keys_and_the_mobile_key_is_a_guest_page() {
    let school = school_page(SCHOOL);
    assert_eq!(key_of(&school).as_deref(), Some("d_org_guest_school"));
    assert_eq!(
        parse(&school, SCHOOL).record.final_li_url.as_deref(),
        Some(SCHOOL)
    );
    let showcase = claim(&super::read("origin/company/google.html"), SHOWCASE);
    assert_eq!(key_of(&showcase).as_deref(), Some("d_org_guest_showcase"));
    assert_eq!(
        parse(&showcase, SHOWCASE).record.final_li_url.as_deref(),
        Some(SHOWCASE)
    );
    // The mobile page's key (`p_org_guest_company_overview`) names a guest company page too.
    let company = "https://www.linkedin.com/company/google";
    let mobile = super::read("origin/company/google.html").replace(
        r#"content="d_org_guest_company_overview""#,
        r#"content="p_org_guest_company_overview""#,
    );
    assert_eq!(
        key_of(&mobile).as_deref(),
        Some("p_org_guest_company_overview")
    );
    assert_eq!(
        parse(&mobile, company).record.company_name.as_deref(),
        Some("Google")
    );
}

/// The captured Audiense page as a school's page shows the same things: JSON-LD `CollegeOrUniversity` without
/// an employee count, "Higher Education", "Educational", the face pile counting alumni and the top card's first
/// line the students.
fn school_page(url: &str) -> String {
    let html = edit_json_ld(
        &super::read("origin/company/audiense.html"),
        |organization| {
            organization.insert("@type".into(), Value::from("CollegeOrUniversity"));
            organization.remove("numberOfEmployees");
        },
    );
    let html = retree(&html, |document| {
        edit_texts(document, "dd", |text| {
            text.replace("Advertising Services", "Higher Education")
                .replace("Privately Held", "Educational")
        });
        edit_texts(document, "h2.top-card-layout__headline", |text| {
            text.replace("Advertising Services", "Higher Education")
        });
        edit_texts(document, "p.face-pile__text", |text| {
            text.replace("View all 69 employees", "See all 4,210 alumni")
        });
        edit_texts(document, "h3.top-card-layout__first-subline", |text| {
            text.replace("5,750 followers", "· 1,800 students · 5,750 followers")
        });
    });
    claim(&html, url)
}

fn parse(html: &str, url: &str) -> page_parser::ParsedPage {
    let domain = NetworkDomain::default();
    let page = PageUrl::parse_submitted(url, &domain).expect("a valid URL");
    parse_page_explained(html, &page, &domain).expect("a page the parser reads")
}

#[test]
fn a_school_page_gives_its_alumni_students_industry_and_type() {
    let parsed = parse(&school_page(SCHOOL), SCHOOL);
    let record = &parsed.record;
    assert_eq!(record.final_li_url.as_deref(), Some(SCHOOL));
    assert_eq!(record.company_name.as_deref(), Some("Audiense"));
    assert_eq!(record.alumni_count_on_li, Some(4_210));
    assert_eq!(record.student_count_on_li, Some(1_800));
    assert_eq!(
        record.employee_count_on_li, None,
        "alumni are not employees"
    );
    assert_eq!(record.follower_count, Some(5_750));
    assert_eq!(record.industries.as_deref(), Some("Higher Education"));
    assert_eq!(record.company_type.as_deref(), Some("Educational"));
    assert_eq!(record.founded, Some(2011));
    assert!(record.parent_company.is_none());
    assert_eq!(
        signal_of(&parsed.fields, "alumni_count_on_li"),
        Some("face pile (p.face-pile__text)")
    );
    assert_eq!(
        signal_of(&parsed.fields, "student_count_on_li"),
        Some("top card")
    );
    // The same page claimed as a company page: school counts are a school's only.
    let company = "https://www.linkedin.com/company/audiense";
    let parsed = parse(&school_page(company), company);
    assert_eq!(parsed.record.alumni_count_on_li, None);
    assert_eq!(parsed.record.student_count_on_li, None);
}

#[test]
fn a_showcase_page_gives_its_parent_company() {
    let google = super::read("origin/company/google.html");
    // JSON-LD `parentOrganization`.
    let html = claim(
        &edit_json_ld(&google, |organization| {
            organization.insert(
                "parentOrganization".into(),
                json!({"@type": "Organization", "name": "Google",
                       "url": "https://www.linkedin.com/company/google"}),
            );
        }),
        SHOWCASE,
    );
    let parsed = parse(&html, SHOWCASE);
    assert_eq!(parsed.record.final_li_url.as_deref(), Some(SHOWCASE));
    let parent = parsed.record.parent_company.as_ref().expect("a parent");
    assert_eq!(parent.title.as_deref(), Some("Google"));
    assert_eq!(
        parent.link.as_deref(),
        Some("https://www.linkedin.com/company/google")
    );
    assert_eq!(
        signal_of(&parsed.fields, "parent_company"),
        Some("JSON-LD Organization.parentOrganization")
    );
    assert_eq!(
        parsed.record.industries.as_deref(),
        Some("Software Development")
    );

    // Without JSON-LD, Google's affiliated pages hold four company pages (YouTube, CapitalG, ...): no parent is
    // guessed.
    let without_ld = claim(&apply(Drift::WithoutJsonLd, &google), SHOWCASE);
    let parsed = parse(&without_ld, SHOWCASE);
    assert!(parsed.record.affiliated_pages.len() > 40);
    assert_eq!(parsed.record.parent_company, None);

    // With one company page among them (the other company cards taken out), that page is the parent.
    let one_company = retree(&without_ld, |document| {
        let others: Vec<_> = ids(document, r#"li a.base-card[href*="/company/"]"#)
            .into_iter()
            .filter(|id| {
                document
                    .tree
                    .get(*id)
                    .and_then(scraper::ElementRef::wrap)
                    .and_then(|a| a.value().attr("href"))
                    .is_some_and(|href| !href.contains("/company/youtube"))
            })
            .collect();
        for id in others {
            if let Some(mut card) = document.tree.get_mut(id) {
                card.detach();
            }
        }
    });
    let parsed = parse(&one_company, SHOWCASE);
    let parent = parsed.record.parent_company.as_ref().expect("a parent");
    assert_eq!(parent.title.as_deref(), Some("YouTube"));
    assert_eq!(
        parent.link.as_deref(),
        Some("https://www.linkedin.com/company/youtube")
    );
    assert_eq!(
        signal_of(&parsed.fields, "parent_company"),
        Some("the one company page among \"Affiliated pages\"")
    );
    // A company page with the same sections has no parent: the member is a showcase's.
    let company = "https://www.linkedin.com/company/google";
    let parsed = parse(&claim(&one_company, company), company);
    assert_eq!(parsed.record.parent_company, None);
}
