//! The pure parser: HTML of one page → [`CompanyRecord`] or the reason it is not a company page.

use std::collections::HashMap;

use company_model::{Address, CompanyRecord, Location};
use page_url::{NetworkDomain, PageUrl};
use scraper::{ElementRef, Html, Selector};
use serde_json::Value;

use crate::{ScrapeError, numbers::parse_count, sections};

/// Parses one page into a record.
///
/// `page_url` is the page that was fetched (after redirects); it gives `final_li_url` when the page has no
/// canonical link. Links are written on `domain` in their canonical `https://www.<domain>/...` form.
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
        document: &document,
        labelled,
        domain,
        organization: json_ld_organization(&document),
    };
    page.refuse_non_company_pages()?;
    let record = page.record(page_url);
    if record.company_name.is_none() {
        return Err(ScrapeError::Unparseable);
    }
    Ok(record)
}

selectors! {
    TITLE = "title";
    SCRIPT = "script";
    CANONICAL = r#"link[rel="canonical"]"#;
    OG_URL = r#"meta[property="og:url"]"#;
    PAGE_KEY = r#"meta[name="pageKey"]"#;
    JSON_LD = r#"script[type="application/ld+json"]"#;
    TOP_TITLE = "h1.top-card-layout__title";
    TOP_HEADLINE = "h2.top-card-layout__headline";
    TOP_FIRST_SUBLINE = "h3.top-card-layout__first-subline";
    TOP_SECOND_SUBLINE = "h4.top-card-layout__second-subline";
    TOP_LOGO = "img.top-card-layout__entity-image";
    COVER = "img.cover-img__image";
    FACE_PILE_TEXT = "p.face-pile__text";
    ORG_URN = r#"[data-semaphore-content-urn^="urn:li:organization:"]"#;
    LABELLED = "[data-test-id]";
    DD = "dd";
    DD_LINK = "dd a";
    LOCATION_ITEMS = r#"ul[data-impression-id="org-locations_show-more-less"] > li"#;
    LOCATION_TAG = "span.tag-sm";
    LOCATION_LINES = r#"div[id^="address-"] > p"#;
    LOCATION_LINK = r#"a[data-tracking-control-name="org-locations_url"]"#;
}

/// Paths of the network's sign-in wall and login pages.
pub(crate) const AUTHWALL_PATHS: [&str; 5] = [
    "/authwall",
    "/login",
    "/uas/login",
    "/signup",
    "/checkpoint",
];

struct Page<'a> {
    document: &'a Html,
    labelled: HashMap<&'a str, ElementRef<'a>>,
    domain: &'a NetworkDomain,
    organization: Option<serde_json::Map<String, Value>>,
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
        if page_key.contains("homepage-guest") || canonical_path == "/" {
            return Err(ScrapeError::Blocked {
                reason: "bounced to the guest home page".into(),
            });
        }
        let challenge_script = self
            .document
            .select(&SCRIPT)
            .any(|s| s.text().any(|t| t.contains("trkCode=")));
        if challenge_script && title.is_empty() {
            return Err(ScrapeError::Blocked {
                reason: "the HTTP 999 challenge page".into(),
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

    fn record(&self, page_url: &PageUrl) -> CompanyRecord {
        let ld = |key: &str| self.organization.as_ref().and_then(|o| o.get(key));
        let ld_text = |key: &str| ld(key).and_then(Value::as_str).and_then(clean_block);
        let website = self
            .website()
            .or_else(|| ld_text("sameAs").filter(|s| s.starts_with("http")));
        let locations = self.locations();
        let headquarters = headquarters(
            &locations,
            self.headquarters_address(),
            self.about_row("about-us__headquarters"),
        );
        CompanyRecord {
            company_name: ld_text("name").or_else(|| self.text(&TOP_TITLE)),
            company_id: self.company_id(),
            final_li_url: Some(self.final_url(page_url)),
            domain: website.as_deref().and_then(registrable_domain),
            website,
            logo: ld("logo")
                .and_then(|logo| logo.get("contentUrl").or(Some(logo)))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| self.image(&TOP_LOGO)),
            banner_img: self.image(&COVER),
            // JSON-LD text verbatim: it is the page's own plain text, line breaks and all.
            description: ld("description")
                .and_then(Value::as_str)
                .filter(|d| !d.trim().is_empty())
                .map(str::to_owned)
                .or_else(|| {
                    self.section("about-us__description")
                        .and_then(|e| clean_block(&e.text().collect::<String>()))
                }),
            slogan: ld_text("slogan").or_else(|| self.text(&TOP_SECOND_SUBLINE)),
            industries: self
                .about_row("about-us__industry")
                .or_else(|| self.text(&TOP_HEADLINE)),
            company_type: self.about_row("about-us__organizationType"),
            founded: self
                .about_row("about-us__foundedOn")
                .and_then(|t| t.parse().ok()),
            company_size: self.about_row("about-us__size"),
            employee_count_on_li: ld("numberOfEmployees")
                .and_then(|n| n.get("value"))
                .and_then(Value::as_u64)
                .or_else(|| self.text(&FACE_PILE_TEXT).as_deref().and_then(parse_count)),
            follower_count: self.follower_count(),
            specialties: self
                .about_row("about-us__specialties")
                .map(|t| split_specialties(&t))
                .unwrap_or_default(),
            headquarters,
            locations,
            funding_info: self.section("funding").and_then(sections::funding),
            products: self
                .section("products")
                .map(|s| sections::products(s, self.domain))
                .unwrap_or_default(),
            updates: self
                .section("updates")
                .map(|s| sections::updates(s, self.domain))
                .unwrap_or_default(),
            similar_pages: self
                .section("similar-pages")
                .map(|s| sections::cards(s, self.domain))
                .unwrap_or_default(),
            affiliated_pages: self
                .section("affiliated-pages")
                .map(|s| sections::cards(s, self.domain))
                .unwrap_or_default(),
            employees_on_li: self
                .section("employees-at")
                .map(|s| sections::employees(s, self.domain))
                .unwrap_or_default(),
            // Logged-out pages show no count of the company's own open jobs ("Browse jobs" lists keyword
            // searches), so it stays absent rather than guessed.
            job_count: None,
        }
    }

    /// The element the page labels `data-test-id="<id>"` (a section or an About row).
    fn section(&self, id: &str) -> Option<ElementRef<'_>> {
        self.labelled.get(id).copied()
    }

    /// The value (`<dd>`) of an About row, on one line.
    fn about_row(&self, id: &str) -> Option<String> {
        self.section(id)?
            .select(&DD)
            .find_map(|dd| clean_line(&dd.text().collect::<String>()))
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

    fn company_id(&self) -> Option<u64> {
        self.document
            .select(&ORG_URN)
            .filter_map(|e| e.value().attr("data-semaphore-content-urn"))
            .find_map(|urn| urn.strip_prefix("urn:li:organization:")?.parse().ok())
    }

    /// The canonical link or `og:url` when it names a supported page, else the page that was fetched.
    fn final_url(&self, page_url: &PageUrl) -> String {
        [self.attr(&CANONICAL, "href"), self.attr(&OG_URL, "content")]
            .into_iter()
            .flatten()
            .find_map(|url| PageUrl::normalize(&url, self.domain).ok())
            .unwrap_or_else(|| page_url.clone())
            .as_str()
            .to_owned()
    }

    /// The About section's website link, unwrapped from the network's `/redir/redirect?url=` link.
    fn website(&self) -> Option<String> {
        let href = self
            .section("about-us__website")
            .and_then(|row| row.select(&DD_LINK).find_map(|a| a.value().attr("href")))
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
        from_link.or_else(|| {
            self.about_row("about-us__website")
                .filter(|t| t.contains('.') && !t.contains(' '))
        })
    }

    /// "Mountain View, CA · 37,814,363 followers": the count before the word, after the last separator.
    fn follower_count(&self) -> Option<u64> {
        let element = self.first(&TOP_FIRST_SUBLINE)?;
        let text: String = element.text().collect();
        let last_part = text.rsplit(['·', '•']).next().unwrap_or(&text);
        // The location and the count are separated by an empty `<span class="before:middot">`, so the text
        // holds no middot: take the last number-bearing run instead.
        let tail = last_part.split_whitespace().collect::<Vec<_>>();
        let word = tail
            .iter()
            .rposition(|w| w.chars().any(|c| c.is_ascii_digit()))?;
        parse_count(&tail[word..].join(" "))
    }

    fn locations(&self) -> Vec<Location> {
        self.document
            .select(&LOCATION_ITEMS)
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
                let primary = item.select(&LOCATION_TAG).any(|tag| {
                    tag.text()
                        .collect::<String>()
                        .trim()
                        .eq_ignore_ascii_case("primary")
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

/// Headquarters: the structured address, with `fullAddress` as the page shows it (the "Primary" entry of the
/// Locations section), else the structured parts joined, else the About section's headquarters text.
fn headquarters(
    locations: &[Location],
    address: Option<Address>,
    about_text: Option<String>,
) -> Option<Address> {
    let primary = locations
        .iter()
        .find(|l| l.other.get("isPrimary") == Some(&Value::Bool(true)))
        .and_then(|l| l.full_address.clone());
    let mut address = address.unwrap_or_default();
    address.full_address = primary.or_else(|| joined_address(&address)).or(about_text);
    (address != Address::default()).then_some(address)
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

/// Collapses all whitespace to single spaces and trims; `None` when nothing is left.
pub(crate) fn clean_line(text: &str) -> Option<String> {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!line.is_empty()).then_some(line)
}

/// Trims the ends and each line's indentation but keeps line breaks; `None` when blank.
fn clean_block(text: &str) -> Option<String> {
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
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

/// The registrable domain (public-suffix aware) of a website URL: `http://www.arcom.com.br/x` → `arcom.com.br`.
fn registrable_domain(website: &str) -> Option<String> {
    let with_scheme = if website.contains("://") {
        website.to_owned()
    } else {
        format!("http://{website}")
    };
    let host = url::Url::parse(&with_scheme)
        .ok()?
        .host_str()?
        .to_ascii_lowercase();
    let domain = psl::domain_str(&host)?;
    Some(domain.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_are_registrable() {
        for (website, expected) in [
            ("http://www.audiense.com", Some("audiense.com")),
            ("https://goo.gle/3DLEokh", Some("goo.gle")),
            ("http://www.arcom.com.br", Some("arcom.com.br")),
            ("https://shop.example.co.uk/path", Some("example.co.uk")),
            ("www.example.org", Some("example.org")),
            ("not a url", None),
        ] {
            assert_eq!(
                registrable_domain(website).as_deref(),
                expected,
                "{website}"
            );
        }
    }

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
}
