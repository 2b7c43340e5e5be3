//! The pure parser: HTML of one page → [`CompanyRecord`] or the reason it is not a company page.

use std::collections::HashMap;

use company_model::{Address, CompanyRecord, Location, PageCard};
use page_url::{NetworkDomain, PageKind, PageUrl};
use scraper::{ElementRef, Html, Selector};
use serde_json::Value;

use crate::labels::{Counted, about_key, count_beside};
use crate::links::registrable_domain;
use crate::numbers::Count;
use crate::text::{clean_block, clean_line};
use crate::{Block, ScrapeError, sections};

/// Parses one page into a record.
///
/// `page_url` is the page that was fetched (after redirects); it gives `final_li_url` when the page has no
/// canonical link. Links are written on `domain` in their canonical `https://www.<domain>/...` form. Each field
/// is read from every place the page carries it, in a fixed order of trust (docs/record.md), so a layout change
/// that removes one of them loses nothing; [`parse_page_explained`] says which place each field came from.
///
/// # Errors
/// [`ScrapeError::Authwall`], [`ScrapeError::Blocked`], [`ScrapeError::NotFound`] or
/// [`ScrapeError::WrongPageKind`] when the page is one of those instead of a company page;
/// [`ScrapeError::Unparseable`] when it has no company name in any source.
pub fn parse_page(
    html: &str,
    page_url: &PageUrl,
    domain: &NetworkDomain,
) -> Result<CompanyRecord, ScrapeError> {
    parse_page_explained(html, page_url, domain).map(|parsed| parsed.record)
}

/// Where one field of a record came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldSource {
    /// The record member, e.g. `company_name`.
    pub field: &'static str,
    /// The signal it was read from, e.g. `JSON-LD Organization.name` or `About row "Industry"`; `None` when no
    /// signal on the page had it (the member is absent from the record).
    pub signal: Option<&'static str>,
    /// Every signal looked at, in order of trust.
    pub tried: Vec<&'static str>,
}

/// A company page parsed, with the account of where each field came from.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedPage {
    /// The record.
    pub record: CompanyRecord,
    /// Every field of the record, in the record's order, with its source.
    pub fields: Vec<FieldSource>,
    /// The sections a logged-out company page carries that this one lacks, by the network's own headings
    /// (`About us`, `Locations`, ...): a page that lacks several that pages usually have is a sign the layout
    /// changed.
    pub missing_sections: Vec<&'static str>,
}

/// [`parse_page`], with the source of every field and the sections the page lacks.
///
/// # Errors
/// As [`parse_page`].
pub fn parse_page_explained(
    html: &str,
    page_url: &PageUrl,
    domain: &NetworkDomain,
) -> Result<ParsedPage, ScrapeError> {
    let document = Html::parse_document(html);
    // One pass collects every element the network labels with `data-test-id` (sections, About rows); the
    // extractors then search inside those subtrees instead of walking the whole page once per field.
    let mut labelled = HashMap::new();
    for element in document.select(&LABELLED) {
        if let Some(id) = element.value().attr("data-test-id") {
            labelled.entry(id).or_insert(element);
        }
    }
    let page = Page {
        about_rows: about_rows_by_label(&document),
        headed: sections_by_heading(&document),
        document: &document,
        labelled,
        domain,
        organization: json_ld_organization(&document),
    };
    page.refuse_non_company_pages()?;
    let mut trail = Trail::default();
    let record = page.record(page_url, &mut trail);
    if record.company_name.is_none() {
        return Err(ScrapeError::Unparseable);
    }
    let missing_sections = SECTIONS
        .iter()
        .filter(|section| page.section(section).is_none())
        .map(|section| section.heading)
        .collect();
    Ok(ParsedPage {
        record,
        fields: trail.fields,
        missing_sections,
    })
}

/// The record of which signal gave each field.
#[derive(Default)]
struct Trail {
    fields: Vec<FieldSource>,
}

/// One place a field may be read from: its name, and how to read it.
type Signal<'f, T> = (&'static str, &'f dyn Fn() -> Option<T>);

impl Trail {
    /// The first signal, in order, that gives a value; the field and that signal are recorded.
    fn pick<T>(&mut self, field: &'static str, signals: &[Signal<'_, T>]) -> Option<T> {
        let found = signals
            .iter()
            .find_map(|(name, read)| read().map(|value| (*name, value)));
        self.fields.push(FieldSource {
            field,
            signal: found.as_ref().map(|(name, _)| *name),
            tried: signals.iter().map(|(name, _)| *name).collect(),
        });
        found.map(|(_, value)| value)
    }

    /// Records a field whose source was decided elsewhere, from the signals in `tried`.
    fn note(&mut self, field: &'static str, signal: Option<&'static str>, tried: &[&'static str]) {
        self.fields.push(FieldSource {
            field,
            signal,
            tried: tried.to_vec(),
        });
    }
}

/// A section of a logged-out company page: the network's `data-test-id` for it and its heading, and the two
/// signals' names as `scrape --explain` prints them.
struct Section {
    test_id: &'static str,
    /// The heading's text, or its beginning (`Employees at` is followed by the company's name).
    heading: &'static str,
    by_id: &'static str,
    by_heading: &'static str,
}

/// A [`Section`] from its `data-test-id` and heading.
macro_rules! section {
    ($test_id:literal, $heading:literal) => {
        Section {
            test_id: $test_id,
            heading: $heading,
            by_id: concat!("section data-test-id=", $test_id),
            by_heading: concat!("section headed \"", $heading, "\""),
        }
    };
}

/// The sections the parser reads, found by `data-test-id`, else by their heading.
const ABOUT: Section = section!("about-us", "About us");
const LOCATIONS: Section = section!("locations", "Locations");
const EMPLOYEES: Section = section!("employees-at", "Employees at");
const UPDATES: Section = section!("updates", "Updates");
const SIMILAR: Section = section!("similar-pages", "Similar pages");
/// The heading the similar pages had before "Similar pages" (the `data-test-id` is the same).
const ALSO_VIEWED: Section = section!("similar-pages", "People also viewed");
const AFFILIATED: Section = section!("affiliated-pages", "Affiliated pages");
const PRODUCTS: Section = section!("products", "Products");
const FUNDING: Section = section!("funding", "Funding");
/// Sections every logged-out company page seen so far carries; the others (products, affiliated pages,
/// funding) depend on the company.
const SECTIONS: [Section; 4] = [ABOUT, LOCATIONS, EMPLOYEES, UPDATES];

selectors! {
    TITLE = "title";
    SCRIPT = "script";
    CODE = "code";
    // The signed-in app's data blobs and top card, which no guest page carries.
    SIGNED_IN = r#"code[id^="bpr-guid-"], [class*="org-top-card"]"#;
    CANONICAL = r#"link[rel="canonical"]"#;
    OG_URL = r#"meta[property="og:url"]"#;
    PAGE_KEY = r#"meta[name="pageKey"]"#;
    JSON_LD = r#"script[type="application/ld+json"]"#;
    TOP_TITLE = "h1.top-card-layout__title";
    TOP_HEADLINE = "h2.top-card-layout__headline";
    // The first line as one heading, or (in layouts that split it) as items: location, followers.
    TOP_FIRST_SUBLINE = "h3.top-card-layout__first-subline, .top-card__subline-item";
    TOP_SECOND_SUBLINE = "h4.top-card-layout__second-subline";
    TOP_LOGO = "img.top-card-layout__entity-image";
    COVER = "img.cover-img__image";
    COVER_EMBED = r#"img[data-embed-id="cover-image"]"#;
    FACE_PILE_TEXT = "p.face-pile__text";
    // The face pile's link (earlier layouts put the count in its text rather than a `p`), and the top card's
    // lines and calls to action.
    FACE_PILE_CTA = r#"a[data-tracking-control-name*="face-pile-cta"], a[data-tracking-control-name^="org-employees_cta"], a[href*="face-pile-cta"], a.face-pile, a.face-pile__cta"#;
    TOP_CARD = r#"[class*="top-card-layout__"]"#;
    ORG_URN = r#"[data-semaphore-content-urn^="urn:li:organization:"]"#;
    ENTITY_URN = r#"[data-entity-id^="urn:li:organization:"]"#;
    OG_TITLE = r#"meta[property="og:title"]"#;
    OG_IMAGE = r#"meta[property="og:image"]"#;
    META_DESCRIPTION = r#"meta[name="description"], meta[property="og:description"]"#;
    LABELLED = "[data-test-id]";
    // About rows: a definition list's `<div><dt>…</dt><dd>…</dd></div>`, or (earlier layouts) a
    // `.basic-info-item` whose first child is the label and the next its value.
    DL_ROWS = "dl > div, .basic-info-item";
    DT = "dt";
    DD = "dd";
    LINK = "a";
    HEADING = "h2";
    PARAGRAPH = "p";
    LOCATION_ITEMS = r#"ul[data-impression-id="org-locations_show-more-less"] > li"#;
    LOCATION_ADDRESS = r#"div[id^="address-"]"#;
    LOCATION_LINES = r#"div[id^="address-"] > p"#;
    LOCATION_LINK = r#"a[data-tracking-control-name="org-locations_url"]"#;
    ANY = "*";
}

/// Paths of the network's sign-in wall and login pages.
pub const AUTHWALL_PATHS: [&str; 5] = [
    "/authwall",
    "/login",
    "/uas/login",
    "/signup",
    "/checkpoint",
];

struct Page<'a> {
    document: &'a Html,
    labelled: HashMap<&'a str, ElementRef<'a>>,
    /// The About section's rows by their label (`dt` text, lower case), e.g. `company size` → the row.
    about_rows: HashMap<String, ElementRef<'a>>,
    /// Sections by their heading (`h2` text on one line).
    headed: Vec<(String, ElementRef<'a>)>,
    domain: &'a NetworkDomain,
    organization: Option<serde_json::Map<String, Value>>,
}

/// The About rows of the page (`<div><dt>Label</dt><dd>value</dd></div>` in a `dl`, or a `.basic-info-item`) by
/// their label's key (`labels::about_key`: lower case, any language's label as its English key).
fn about_rows_by_label(document: &Html) -> HashMap<String, ElementRef<'_>> {
    let mut rows = HashMap::new();
    for row in document.select(&DL_ROWS) {
        let label = row
            .select(&DT)
            .next()
            .or_else(|| row.children().find_map(ElementRef::wrap))
            .and_then(|label| clean_line(&label.text().collect::<String>()));
        if let Some(label) = label {
            rows.entry(about_key(&label)).or_insert(row);
        }
    }
    rows
}

/// Every `section` with its own heading: the first `h2` whose nearest enclosing section it is (a section that
/// holds other sections is not named by their headings).
fn sections_by_heading(document: &Html) -> Vec<(String, ElementRef<'_>)> {
    let mut sections: Vec<(String, ElementRef<'_>)> = Vec::new();
    for heading in document.select(&HEADING) {
        let Some(section) = heading
            .ancestors()
            .filter_map(ElementRef::wrap)
            .find(|a| a.value().name() == "section")
        else {
            continue;
        };
        if sections.iter().any(|(_, s)| s.id() == section.id()) {
            continue;
        }
        if let Some(text) = clean_line(&heading.text().collect::<String>()) {
            sections.push((text, section));
        }
    }
    sections
}

impl Page<'_> {
    /// Recognises the pages the network serves instead of a company page.
    fn refuse_non_company_pages(&self) -> Result<(), ScrapeError> {
        let canonical = self.attr(&CANONICAL, "href");
        let canonical_path = canonical.as_deref().map(path_of).unwrap_or_default();
        if AUTHWALL_PATHS.iter().any(|p| canonical_path.starts_with(p)) {
            return Err(ScrapeError::Authwall);
        }
        let page_key = self.attr(&PAGE_KEY, "content").unwrap_or_default();
        if page_key.starts_with("auth_wall") {
            return Err(ScrapeError::Authwall);
        }
        let looks_like_company = self.organization.is_some() || self.first(&TOP_TITLE).is_some();
        if looks_like_company {
            return Ok(());
        }
        let title = self.text(&TITLE).unwrap_or_default().to_lowercase();
        if self.signed_in() {
            return Err(ScrapeError::SignedIn);
        }
        if page_key.contains("homepage-guest") || canonical_path == "/" {
            return Err(ScrapeError::Blocked {
                by: Block::GuestHomePage,
            });
        }
        let challenge_script = self
            .document
            .select(&SCRIPT)
            .any(|s| s.text().any(|t| t.contains("trkCode=")));
        if challenge_script && title.is_empty() {
            return Err(ScrapeError::Blocked {
                by: Block::ChallengePage,
            });
        }
        if title.contains("page not found")
            || page_key.contains("404")
            || page_key.contains("not_found")
        {
            return Err(ScrapeError::NotFound);
        }
        if !canonical_path.is_empty() && PageUrl::from_path(&canonical_path, self.domain).is_err() {
            return Err(ScrapeError::WrongPageKind {
                found: canonical_path,
            });
        }
        Err(ScrapeError::Unparseable)
    }

    /// Whether this is the network's signed-in app: its data blobs (`<code id="bpr-guid-…">`), its top card's
    /// `org-top-card` classes, or its `com.linkedin.voyager` payloads — none of which a guest page carries.
    fn signed_in(&self) -> bool {
        self.first(&SIGNED_IN).is_some()
            || self
                .document
                .select(&CODE)
                .take(64)
                .any(|code| code.text().any(|t| t.contains("com.linkedin.voyager")))
    }

    /// Every field, each from the first signal that has it (docs/record.md lists them in order).
    fn record(&self, page_url: &PageUrl, trail: &mut Trail) -> CompanyRecord {
        let ld = |key: &str| self.organization.as_ref().and_then(|o| o.get(key));
        let ld_text = |key: &str| ld(key).and_then(Value::as_str).and_then(clean_block);
        let company_name = trail.pick(
            "company_name",
            &[
                ("JSON-LD Organization.name", &|| ld_text("name")),
                ("top card title (h1.top-card-layout__title)", &|| {
                    self.text(&TOP_TITLE)
                }),
                ("og:title", &|| self.og_title()),
            ],
        );
        let company_id = trail.pick(
            "company_id",
            &[
                ("data-semaphore-content-urn", &|| {
                    self.organization_id(&ORG_URN, "data-semaphore-content-urn")
                }),
                ("data-entity-id", &|| {
                    self.organization_id(&ENTITY_URN, "data-entity-id")
                }),
            ],
        );
        let final_li_url = trail.pick(
            "final_li_url",
            &[
                ("canonical link", &|| self.network_page(&CANONICAL, "href")),
                ("og:url", &|| self.network_page(&OG_URL, "content")),
                ("the URL fetched", &|| Some(page_url.as_str().to_owned())),
            ],
        );
        let website = trail.pick(
            "website",
            &[
                ("About row \"Website\"", &|| {
                    website_in(self.labelled_row("website"))
                }),
                ("About row data-test-id about-us__website", &|| {
                    website_in(self.section_by_id("about-us__website"))
                }),
                ("JSON-LD Organization.sameAs", &|| {
                    ld_text("sameAs").filter(|s| s.starts_with("http"))
                }),
            ],
        );
        let domain = website.as_deref().and_then(registrable_domain);
        trail.note(
            "domain",
            domain.as_ref().map(|_| "the website's registrable domain"),
            &["the website's registrable domain"],
        );
        let logo = trail.pick(
            "logo",
            &[
                ("JSON-LD Organization.logo", &|| {
                    ld("logo")
                        .and_then(|logo| logo.get("contentUrl").or(Some(logo)))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                }),
                (
                    "top card image (img.top-card-layout__entity-image)",
                    &|| self.image(&TOP_LOGO),
                ),
                ("og:image", &|| self.attr(&OG_IMAGE, "content")),
            ],
        );
        let banner_img = trail.pick(
            "banner_img",
            &[
                ("cover image (img.cover-img__image)", &|| self.image(&COVER)),
                ("cover image (data-embed-id=cover-image)", &|| {
                    self.image(&COVER_EMBED)
                }),
            ],
        );
        let description = trail.pick(
            "description",
            &[
                // JSON-LD text verbatim: it is the page's own plain text, line breaks and all.
                ("JSON-LD Organization.description", &|| {
                    ld("description")
                        .and_then(Value::as_str)
                        .filter(|d| !d.trim().is_empty())
                        .map(str::to_owned)
                }),
                (
                    "About description (data-test-id about-us__description)",
                    &|| {
                        self.section_by_id("about-us__description")
                            .and_then(|e| clean_block(&e.text().collect::<String>()))
                    },
                ),
                ("the paragraph of the section \"About us\"", &|| {
                    self.about_paragraph()
                }),
            ],
        );
        let slogan = trail.pick(
            "slogan",
            &[
                ("JSON-LD Organization.slogan", &|| ld_text("slogan")),
                (
                    "top card second line (h4.top-card-layout__second-subline)",
                    &|| self.text(&TOP_SECOND_SUBLINE),
                ),
            ],
        );
        let industries = trail.pick(
            "industries",
            &[
                ("About row \"Industry\"", &|| {
                    row_value(self.labelled_row("industry"))
                }),
                ("About row data-test-id about-us__industry", &|| {
                    row_value(self.section_by_id("about-us__industry"))
                }),
                ("top card headline (h2.top-card-layout__headline)", &|| {
                    self.text(&TOP_HEADLINE)
                }),
            ],
        );
        let company_type = trail.pick(
            "type",
            &[
                ("About row \"Type\"", &|| {
                    row_value(self.labelled_row("type"))
                }),
                ("About row data-test-id about-us__organizationType", &|| {
                    row_value(self.section_by_id("about-us__organizationType"))
                }),
            ],
        );
        let founded = trail.pick(
            "founded",
            &[
                ("About row \"Founded\"", &|| {
                    row_value(self.labelled_row("founded")).and_then(|t| t.parse().ok())
                }),
                ("About row data-test-id about-us__foundedOn", &|| {
                    row_value(self.section_by_id("about-us__foundedOn"))
                        .and_then(|t| t.parse().ok())
                }),
            ],
        );
        let company_size = trail.pick(
            "company_size",
            &[
                ("About row \"Company size\"", &|| {
                    row_value(self.labelled_row("company size"))
                }),
                ("About row data-test-id about-us__size", &|| {
                    row_value(self.section_by_id("about-us__size"))
                }),
            ],
        );
        let employee_count_on_li = trail.pick(
            "employee_count_on_li",
            &[
                ("JSON-LD Organization.numberOfEmployees", &|| {
                    ld("numberOfEmployees")
                        .and_then(|n| n.get("value"))
                        .and_then(Value::as_u64)
                }),
                ("face pile (p.face-pile__text)", &|| {
                    self.count_in(&FACE_PILE_TEXT, Counted::Employees)
                }),
                (
                    "face-pile call to action (\"See all N employees on LinkedIn\")",
                    &|| self.count_in(&FACE_PILE_CTA, Counted::Employees),
                ),
                ("top card (\"N employees\")", &|| {
                    self.count_in(&TOP_CARD, Counted::Employees)
                }),
            ],
        );
        // The top card's count when exact; the meta description's when the top card rounds it (`5.7K`).
        let subline_followers = self.count_beside_in(&TOP_FIRST_SUBLINE, Counted::Followers);
        let follower_count = trail.pick(
            "follower_count",
            &[
                (
                    "top card first line (h3.top-card-layout__first-subline, .top-card__subline-item)",
                    &|| subline_followers.filter(|c| !c.rounded).map(|c| c.value),
                ),
                ("meta description (\"N followers on\")", &|| {
                    self.meta_follower_count()
                }),
                ("top card first line, rounded (\"5.7K followers\")", &|| {
                    subline_followers.map(|c| c.value)
                }),
            ],
        );
        let kind = final_li_url
            .as_deref()
            .and_then(|url| PageUrl::from_canonical(url).ok())
            .map(|page| page.kind());
        let school = kind == Some(PageKind::School);
        let showcase = kind == Some(PageKind::Showcase);
        let school_count = |trail: &mut Trail, field: &'static str, counted: Counted| {
            let signals: [Signal<'_, u64>; 3] = [
                ("face pile (p.face-pile__text)", &|| {
                    self.count_in(&FACE_PILE_TEXT, counted)
                }),
                ("face-pile call to action", &|| {
                    self.count_in(&FACE_PILE_CTA, counted)
                }),
                ("top card", &|| self.count_in(&TOP_CARD, counted)),
            ];
            if school {
                trail.pick(field, &signals)
            } else {
                trail.note(field, None, &[]);
                None
            }
        };
        let alumni_count_on_li = school_count(trail, "alumni_count_on_li", Counted::Alumni);
        let student_count_on_li = school_count(trail, "student_count_on_li", Counted::Students);
        let specialties = trail
            .pick(
                "specialties",
                &[
                    ("About row \"Specialties\"", &|| {
                        row_value(self.labelled_row("specialties"))
                    }),
                    ("About row data-test-id about-us__specialties", &|| {
                        row_value(self.section_by_id("about-us__specialties"))
                    }),
                ],
            )
            .map(|t| split_specialties(&t))
            .unwrap_or_default();
        let (locations, locations_signal) = self.locations();
        let address = self.headquarters_address();
        let about_headquarters = row_value(self.labelled_row("headquarters"))
            .or_else(|| row_value(self.section_by_id("about-us__headquarters")));
        let headquarters_signal = if address.is_some() {
            Some("JSON-LD Organization.address")
        } else if locations.iter().any(is_primary) {
            Some("Locations (Primary)")
        } else {
            about_headquarters
                .as_ref()
                .map(|_| "About row \"Headquarters\"")
        };
        let headquarters = headquarters(&locations, address, about_headquarters);
        trail.note(
            "headquarters",
            headquarters.as_ref().and(headquarters_signal),
            &[
                "JSON-LD Organization.address",
                "Locations (Primary)",
                "About row \"Headquarters\"",
            ],
        );
        trail.note(
            "locations",
            (!locations.is_empty()).then_some(locations_signal),
            &[
                "Locations list (data-impression-id)",
                "Locations address blocks (id=address-N)",
            ],
        );
        let funding_info = self.list_section(trail, "funding_info", &[FUNDING], sections::funding);
        let products = self
            .list_section(trail, "products", &[PRODUCTS], |s| {
                Some(sections::products(s, self.domain))
            })
            .unwrap_or_default();
        let updates = self
            .list_section(trail, "updates", &[UPDATES], |s| {
                Some(sections::updates(s, self.domain))
            })
            .unwrap_or_default();
        let similar_pages = self
            .list_section(trail, "similar_pages", &[SIMILAR, ALSO_VIEWED], |s| {
                Some(sections::cards(s, self.domain))
            })
            .unwrap_or_default();
        let affiliated_pages = self
            .list_section(trail, "affiliated_pages", &[AFFILIATED], |s| {
                Some(sections::cards(s, self.domain))
            })
            .unwrap_or_default();
        let employees_on_li = self
            .list_section(trail, "employees_on_li", &[EMPLOYEES], |s| {
                Some(sections::employees(s, self.domain))
            })
            .unwrap_or_default();
        let parent_company = trail.pick(
            "parent_company",
            &[
                ("JSON-LD Organization.parentOrganization", &|| {
                    showcase.then(|| self.parent_organization()).flatten()
                }),
                // A showcase page's affiliated pages are its parent and its sibling showcases: the one company
                // page among them is the parent; with several (a subsidiary listed too), none is taken.
                ("the one company page among \"Affiliated pages\"", &|| {
                    if !showcase {
                        return None;
                    }
                    let mut companies = affiliated_pages
                        .iter()
                        .filter(|card| card.link.as_deref().is_some_and(is_company_page));
                    match (companies.next(), companies.next()) {
                        (Some(parent), None) => Some(parent.clone()),
                        _ => None,
                    }
                }),
            ],
        );
        // Logged-out pages show no count of the company's own open jobs ("Browse jobs" lists keyword searches),
        // so it stays absent rather than guessed.
        trail.note("job_count", None, &[]);
        CompanyRecord {
            company_name,
            company_id,
            final_li_url,
            domain,
            website,
            logo,
            banner_img,
            description,
            slogan,
            industries,
            company_type,
            founded,
            company_size,
            employee_count_on_li,
            follower_count,
            alumni_count_on_li,
            student_count_on_li,
            parent_company,
            specialties,
            headquarters,
            locations,
            funding_info,
            products,
            updates,
            similar_pages,
            affiliated_pages,
            employees_on_li,
            job_count: None,
        }
    }

    /// A list section read by `read`, found by its `data-test-id` or its heading (the first of `sections`
    /// the page has, for a section whose heading changed); the field's source says which. A section that is
    /// there but gives nothing counts as absent.
    fn list_section<'s, T: HasItems>(
        &'s self,
        trail: &mut Trail,
        field: &'static str,
        sections: &[Section],
        read: impl Fn(ElementRef<'s>) -> Option<T>,
    ) -> Option<T> {
        let found = sections.iter().find_map(|section| {
            self.section_by_id(section.test_id)
                .map(|s| (s, section.by_id))
                .or_else(|| {
                    self.section_by_heading(section.heading)
                        .map(|s| (s, section.by_heading))
                })
        });
        let value = found
            .and_then(|(element, _)| read(element))
            .filter(HasItems::has_items);
        let mut tried = Vec::new();
        for section in sections {
            for how in [section.by_id, section.by_heading] {
                if !tried.contains(&how) {
                    tried.push(how);
                }
            }
        }
        trail.note(field, value.as_ref().and(found.map(|(_, how)| how)), &tried);
        value
    }

    /// A section by its `data-test-id`, else by its heading.
    fn section(&self, section: &Section) -> Option<ElementRef<'_>> {
        self.section_by_id(section.test_id)
            .or_else(|| self.section_by_heading(section.heading))
    }

    /// The element the page labels `data-test-id="<id>"` (a section or an About row).
    fn section_by_id(&self, id: &str) -> Option<ElementRef<'_>> {
        self.labelled.get(id).copied()
    }

    /// The section whose heading is `heading`, or starts with it and a space (`Employees at Google`).
    fn section_by_heading(&self, heading: &str) -> Option<ElementRef<'_>> {
        self.headed
            .iter()
            .find(|(text, _)| {
                text.eq_ignore_ascii_case(heading)
                    || (text.len() > heading.len()
                        && text.is_char_boundary(heading.len())
                        && text[..heading.len()].eq_ignore_ascii_case(heading)
                        && text[heading.len()..].starts_with(' '))
            })
            .map(|(_, section)| *section)
    }

    /// The About row whose label is `label` (lower case).
    fn labelled_row(&self, label: &str) -> Option<ElementRef<'_>> {
        self.about_rows.get(label).copied()
    }

    /// The About section's own paragraph (its description), outside its rows.
    fn about_paragraph(&self) -> Option<String> {
        let section = self.section_by_heading(ABOUT.heading)?;
        section
            .select(&PARAGRAPH)
            .filter(|p| {
                !p.ancestors()
                    .any(|a| a.value().as_element().is_some_and(|e| e.name() == "dl"))
            })
            .find_map(|p| clean_block(&p.text().collect::<String>()))
    }

    /// `og:title` without the network's name after ` | `.
    fn og_title(&self) -> Option<String> {
        let title = self.attr(&OG_TITLE, "content")?;
        clean_line(title.split(" | ").next().unwrap_or(&title))
    }

    /// JSON-LD `Organization.parentOrganization` (an object or the first of a list) as a card: its `name` as
    /// `title`, its `url` as `link` (canonical when a page of the network).
    fn parent_organization(&self) -> Option<PageCard> {
        let parent = self.organization.as_ref()?.get("parentOrganization")?;
        let parent = match parent {
            Value::Array(items) => items.first()?,
            other => other,
        };
        let text = |key: &str| parent.get(key).and_then(Value::as_str).and_then(clean_line);
        let card = PageCard {
            title: text("name"),
            link: text("url").map(|url| {
                PageUrl::normalize(&url, self.domain).map_or(url, |page| page.as_str().to_owned())
            }),
            ..PageCard::default()
        };
        (card.title.is_some() || card.link.is_some()).then_some(card)
    }

    /// The organization id in an `urn:li:organization:<id>` attribute.
    fn organization_id(&self, selector: &Selector, attribute: &str) -> Option<u64> {
        self.document
            .select(selector)
            .filter_map(|e| e.value().attr(attribute))
            .find_map(|urn| urn.strip_prefix("urn:li:organization:")?.parse().ok())
    }

    /// The page an attribute names, when it is a supported page of the network, in canonical form.
    fn network_page(&self, selector: &Selector, attribute: &str) -> Option<String> {
        self.attr(selector, attribute)
            .and_then(|url| PageUrl::normalize(&url, self.domain).ok())
            .map(|page| page.as_str().to_owned())
    }

    /// "Google | 37,814,363 followers on LinkedIn. ...": the count beside the followers word.
    fn meta_follower_count(&self) -> Option<u64> {
        self.document.select(&META_DESCRIPTION).find_map(|meta| {
            let content = meta.value().attr("content")?;
            count_beside(content, Counted::Followers).map(|c| c.value)
        })
    }

    fn first(&self, selector: &Selector) -> Option<ElementRef<'_>> {
        self.document.select(selector).next()
    }

    fn attr(&self, selector: &Selector, name: &str) -> Option<String> {
        self.document
            .select(selector)
            .find_map(|e| e.value().attr(name))
            .and_then(clean_line)
    }

    /// The first match's text on one line (whitespace collapsed), or `None` when blank.
    fn text(&self, selector: &Selector) -> Option<String> {
        self.document
            .select(selector)
            .find_map(|e| clean_line(&e.text().collect::<String>()))
    }

    /// An image URL from `src`, or from `data-delayed-url` where the lazy loader has not run.
    fn image(&self, selector: &Selector) -> Option<String> {
        self.first(selector).and_then(sections::image_url)
    }

    /// The count beside a word of `counted` in the first element of `selector` that has one
    /// (`labels::count_beside`: `See all 1,234 employees on LinkedIn`, `Acme · 1,234 employees`).
    fn count_in(&self, selector: &Selector, counted: Counted) -> Option<u64> {
        self.count_beside_in(selector, counted).map(|c| c.value)
    }

    /// [`Page::count_in`], saying whether the page rounded the count.
    fn count_beside_in(&self, selector: &Selector, counted: Counted) -> Option<Count> {
        self.document
            .select(selector)
            .find_map(|element| count_beside(&element.text().collect::<String>(), counted))
    }

    /// The Locations section's entries: the items of its list (`data-impression-id`), else every element
    /// holding an `address-N` block, with the signal that found them.
    fn locations(&self) -> (Vec<Location>, &'static str) {
        let items: Vec<ElementRef<'_>> = self.document.select(&LOCATION_ITEMS).collect();
        if !items.is_empty() {
            return (
                self.locations_in(&items),
                "Locations list (data-impression-id)",
            );
        }
        // Each address block's list item (or, without one, its parent).
        let items: Vec<ElementRef<'_>> = self
            .document
            .select(&LOCATION_ADDRESS)
            .filter_map(|address| {
                address
                    .ancestors()
                    .filter_map(ElementRef::wrap)
                    .find(|a| a.value().name() == "li")
                    .or_else(|| address.parent().and_then(ElementRef::wrap))
            })
            .collect();
        (
            self.locations_in(&items),
            "Locations address blocks (id=address-N)",
        )
    }

    fn locations_in(&self, items: &[ElementRef<'_>]) -> Vec<Location> {
        items
            .iter()
            .filter_map(|item| {
                let lines: Vec<String> = item
                    .select(&LOCATION_LINES)
                    .filter_map(|p| clean_line(&p.text().collect::<String>()))
                    .collect();
                if lines.is_empty() {
                    return None;
                }
                let mut location = Location {
                    street: (lines.len() > 1).then(|| lines[0].clone()),
                    city_state_postal_country: lines.last().cloned(),
                    full_address: Some(lines.join(", ")),
                    get_directions_link: item
                        .select(&LOCATION_LINK)
                        .find_map(|a| a.value().attr("href"))
                        .and_then(|href| sections::canonical_link(href, self.domain)),
                    ..Location::default()
                };
                // The "Primary" tag, found by its text (its classes are the layout's to change).
                let primary = item.select(&ANY).any(|element| {
                    element
                        .children()
                        .filter_map(|c| c.value().as_text())
                        .any(|text| text.trim().eq_ignore_ascii_case("primary"))
                });
                if primary {
                    location.other.insert("isPrimary".into(), Value::Bool(true));
                }
                Some(location)
            })
            .collect()
    }

    /// JSON-LD `Organization.address` (a schema.org `PostalAddress`).
    fn headquarters_address(&self) -> Option<Address> {
        let address = self.organization.as_ref()?.get("address")?;
        let part = |key: &str| {
            address
                .get(key)
                .and_then(Value::as_str)
                .and_then(clean_line)
        };
        let address = Address {
            street: part("streetAddress"),
            locality: part("addressLocality"),
            region: part("addressRegion"),
            postal_code: part("postalCode"),
            country: part("addressCountry"),
            ..Address::default()
        };
        (address != Address::default()).then_some(address)
    }
}

/// The website in an About row: its link, unwrapped from the network's `/redir/redirect?url=` link, else
/// its text when that is a bare domain.
fn website_in(row: Option<ElementRef<'_>>) -> Option<String> {
    let value = row_value_element(row?)?;
    let href = std::iter::once(value)
        .chain(value.select(&LINK))
        .find_map(|a| {
            (a.value().name() == "a")
                .then(|| a.value().attr("href"))
                .flatten()
        })
        .map(str::to_owned);
    let from_link = href.and_then(|href| {
        let url = url::Url::parse(&href).ok()?;
        if url.path().starts_with("/redir/redirect") {
            url.query_pairs()
                .find(|(k, _)| k == "url")
                .map(|(_, v)| v.into_owned())
        } else {
            Some(href)
        }
    });
    from_link.or_else(|| row_value(row).filter(|t| t.contains('.') && !t.contains(' ')))
}

/// The value of an About row: its `<dd>`, else (a `.basic-info-item`) the element after its label.
fn row_value_element(row: ElementRef<'_>) -> Option<ElementRef<'_>> {
    row.select(&DD)
        .next()
        .or_else(|| row.children().filter_map(ElementRef::wrap).nth(1))
}

/// The value of a row, on one line.
fn row_value(row: Option<ElementRef<'_>>) -> Option<String> {
    row_value_element(row?).and_then(|value| clean_line(&value.text().collect::<String>()))
}

/// Whether a canonical link is a company page (`https://www.<domain>/company/<slug>`).
fn is_company_page(link: &str) -> bool {
    PageUrl::from_canonical(link).is_ok_and(|page| page.kind() == PageKind::Company)
}

/// Whether a location is the one the page tags "Primary".
fn is_primary(location: &Location) -> bool {
    location.other.get("isPrimary") == Some(&Value::Bool(true))
}

/// What a list section gave: nothing counts as absent.
trait HasItems {
    fn has_items(&self) -> bool;
}

impl<T> HasItems for Vec<T> {
    fn has_items(&self) -> bool {
        !self.is_empty()
    }
}

impl HasItems for company_model::FundingInfo {
    fn has_items(&self) -> bool {
        *self != company_model::FundingInfo::default()
    }
}

/// Headquarters: the structured address (JSON-LD's, else the Locations section's "Primary" entry split into its
/// parts by [`split_city_line`]), with `fullAddress` as the page shows it (that entry), else the structured
/// parts joined, else the About section's headquarters text.
fn headquarters(
    locations: &[Location],
    address: Option<Address>,
    about_text: Option<String>,
) -> Option<Address> {
    let primary = locations.iter().find(|l| is_primary(l));
    let mut address = address
        .or_else(|| primary.map(address_of_location))
        .unwrap_or_default();
    address.full_address = primary
        .and_then(|l| l.full_address.clone())
        .or_else(|| joined_address(&address))
        .or(about_text);
    (address != Address::default()).then_some(address)
}

/// A Locations entry as a structured address: its first line as `street`, its last line split.
fn address_of_location(location: &Location) -> Address {
    let (locality, region, postal_code, country) = location
        .city_state_postal_country
        .as_deref()
        .map(split_city_line)
        .unwrap_or_default();
    Address {
        street: location.street.clone(),
        locality,
        region,
        postal_code,
        country,
        ..Address::default()
    }
}

/// The parts of a Locations entry's last line, as guest pages print it — `City, Region PostalCode, CC`
/// (`Mountain View, CA 94043, US`, `London, London EC1V2NX, GB`, `Toronto, ON M5V 3L9, CA`,
/// `Amsterdam, North Holland 1012 AB, NL`): the country is the last part when it is a two- or three-letter code;
/// the locality the first part; of the part between, the postal code is its trailing words that hold a digit
/// (US ZIP codes, UK, Canadian and German codes), and for a Dutch code the four digits and the two letters after
/// them; the region what is before it.
fn split_city_line(
    line: &str,
) -> (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
) {
    let mut parts: Vec<&str> = line
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let country = match parts.last() {
        Some(last)
            if parts.len() > 1
                && (2..=3).contains(&last.len())
                && last.chars().all(|c| c.is_ascii_uppercase()) =>
        {
            parts.pop().map(str::to_owned)
        }
        _ => None,
    };
    let locality = (!parts.is_empty()).then(|| parts.remove(0).to_owned());
    let middle = parts.join(", ");
    let words: Vec<&str> = middle.split_whitespace().collect();
    let mut postal_start = words.len();
    while postal_start > 0 && words[postal_start - 1].chars().any(|c| c.is_ascii_digit()) {
        postal_start -= 1;
    }
    // A Dutch code: four digits, then two capital letters.
    if postal_start == words.len()
        && words.len() >= 2
        && words[words.len() - 1].len() == 2
        && words[words.len() - 1]
            .chars()
            .all(|c| c.is_ascii_uppercase())
        && words[words.len() - 2].len() == 4
        && words[words.len() - 2].chars().all(|c| c.is_ascii_digit())
    {
        postal_start = words.len() - 2;
    }
    let text = |w: &[&str]| (!w.is_empty()).then(|| w.join(" "));
    (
        locality,
        text(&words[..postal_start]),
        text(&words[postal_start..]),
        country,
    )
}

/// `street, locality, region postalCode, country`, skipping absent parts (never the text `undefined`).
fn joined_address(address: &Address) -> Option<String> {
    let region_postal = [address.region.as_deref(), address.postal_code.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let parts: Vec<&str> = [
        address.street.as_deref(),
        address.locality.as_deref(),
        Some(region_postal.as_str()),
        address.country.as_deref(),
    ]
    .into_iter()
    .flatten()
    .filter(|p| !p.is_empty())
    .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The page's JSON-LD organization: a top-level object or an `@graph` item whose `@type` is a schema.org
/// `Organization` (or a subtype used for schools and companies).
fn json_ld_organization(document: &Html) -> Option<serde_json::Map<String, Value>> {
    const TYPES: [&str; 5] = [
        "Organization",
        "Corporation",
        "EducationalOrganization",
        "CollegeOrUniversity",
        "School",
    ];
    document.select(&JSON_LD).find_map(|script| {
        let value: Value = serde_json::from_str(&script.text().collect::<String>()).ok()?;
        let candidates = match value.get("@graph") {
            Some(Value::Array(items)) => items.clone(),
            _ => vec![value],
        };
        candidates.into_iter().find_map(|item| match item {
            Value::Object(object)
                if object
                    .get("@type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| TYPES.contains(&t)) =>
            {
                Some(object)
            }
            _ => None,
        })
    })
}

/// `a, b, and c` → `[a, b, c]`, the way the About section lists specialties.
fn split_specialties(text: &str) -> Vec<String> {
    text.split(',')
        .map(|part| {
            let part = part.trim();
            part.strip_prefix("and ").unwrap_or(part).trim().to_owned()
        })
        .filter(|part| !part.is_empty())
        .collect()
}

/// The path of an absolute or root-relative URL, without query or fragment.
fn path_of(url: &str) -> String {
    let without_origin = match url.find("://") {
        Some(scheme_end) => {
            let after = &url[scheme_end + 3..];
            after.find('/').map_or("/", |i| &after[i..])
        }
        None => url,
    };
    without_origin
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specialties_split_like_the_page_lists_them() {
        assert_eq!(
            split_specialties("search, ads, and software"),
            ["search", "ads", "software"]
        );
        assert_eq!(split_specialties("one"), ["one"]);
    }

    #[test]
    fn paths() {
        assert_eq!(
            path_of("https://www.linkedin.com/authwall?trk=x"),
            "/authwall"
        );
        assert_eq!(path_of("/authwall"), "/authwall");
        assert_eq!(path_of("https://www.linkedin.com"), "/");
    }

    #[test]
    fn a_locations_last_line_splits_into_its_parts() {
        let some = |s: &str| Some(s.to_owned());
        for (line, parts) in [
            (
                "Mountain View, CA 94043, US",
                (some("Mountain View"), some("CA"), some("94043"), some("US")),
            ),
            (
                "London, London EC1V2NX, GB",
                (some("London"), some("London"), some("EC1V2NX"), some("GB")),
            ),
            (
                "London, England EC1V 2NX, GB",
                (
                    some("London"),
                    some("England"),
                    some("EC1V 2NX"),
                    some("GB"),
                ),
            ),
            (
                "Toronto, ON M5V 3L9, CA",
                (some("Toronto"), some("ON"), some("M5V 3L9"), some("CA")),
            ),
            (
                "Amsterdam, North Holland 1012 AB, NL",
                (
                    some("Amsterdam"),
                    some("North Holland"),
                    some("1012 AB"),
                    some("NL"),
                ),
            ),
            (
                "Munich, Bavaria 80331, DE",
                (some("Munich"), some("Bavaria"), some("80331"), some("DE")),
            ),
            ("Paris, FR", (some("Paris"), None, None, some("FR"))),
            ("Singapore", (some("Singapore"), None, None, None)),
        ] {
            assert_eq!(split_city_line(line), parts, "{line}");
        }
    }
}
