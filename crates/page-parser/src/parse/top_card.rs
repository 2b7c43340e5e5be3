//! The page's identity and its counts: the name, id and canonical URL, the logo, cover and slogan, and the
//! employee, follower, alumni and student counts, from JSON-LD, the top card (`top-card-layout__*`), the face
//! pile and the meta tags, each in its order of trust (docs/record.md).

use page_url::PageUrl;
use serde_json::Value;

use super::page::{CANONICAL, Page, Signal, TOP_TITLE, Trail};
use crate::labels::{Counted, count_beside};
use crate::text::clean_line;

selectors! {
    OG_URL = r#"meta[property="og:url"]"#;
    // Also the industry's last resort (`about.rs`).
    pub(super) TOP_HEADLINE = "h2.top-card-layout__headline";
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
}

impl Page<'_> {
    pub(super) fn company_name(&self, trail: &mut Trail) -> Option<String> {
        trail.pick(
            "company_name",
            &[
                ("JSON-LD Organization.name", &|| self.ld_text("name")),
                ("top card title (h1.top-card-layout__title)", &|| {
                    self.text(&TOP_TITLE)
                }),
                ("og:title", &|| self.og_title()),
            ],
        )
    }

    pub(super) fn company_id(&self, trail: &mut Trail) -> Option<u64> {
        trail.pick(
            "company_id",
            &[
                ("data-semaphore-content-urn", &|| {
                    self.organization_id(&ORG_URN, "data-semaphore-content-urn")
                }),
                ("data-entity-id", &|| {
                    self.organization_id(&ENTITY_URN, "data-entity-id")
                }),
            ],
        )
    }

    /// The page's canonical URL; `page_url`, the page fetched, when the page names none.
    pub(super) fn final_li_url(&self, trail: &mut Trail, page_url: &PageUrl) -> Option<String> {
        trail.pick(
            "final_li_url",
            &[
                ("canonical link", &|| self.network_page(&CANONICAL, "href")),
                ("og:url", &|| self.network_page(&OG_URL, "content")),
                ("the URL fetched", &|| Some(page_url.as_str().to_owned())),
            ],
        )
    }

    pub(super) fn logo(&self, trail: &mut Trail) -> Option<String> {
        trail.pick(
            "logo",
            &[
                ("JSON-LD Organization.logo", &|| {
                    self.ld("logo")
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
        )
    }

    pub(super) fn banner_img(&self, trail: &mut Trail) -> Option<String> {
        trail.pick(
            "banner_img",
            &[
                ("cover image (img.cover-img__image)", &|| self.image(&COVER)),
                ("cover image (data-embed-id=cover-image)", &|| {
                    self.image(&COVER_EMBED)
                }),
            ],
        )
    }

    pub(super) fn slogan(&self, trail: &mut Trail) -> Option<String> {
        trail.pick(
            "slogan",
            &[
                ("JSON-LD Organization.slogan", &|| self.ld_text("slogan")),
                (
                    "top card second line (h4.top-card-layout__second-subline)",
                    &|| self.text(&TOP_SECOND_SUBLINE),
                ),
            ],
        )
    }

    pub(super) fn employee_count(&self, trail: &mut Trail) -> Option<u64> {
        trail.pick(
            "employee_count_on_li",
            &[
                ("JSON-LD Organization.numberOfEmployees", &|| {
                    self.ld("numberOfEmployees")
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
        )
    }

    /// The top card's count when exact; the meta description's when the top card rounds it (`5.7K`).
    pub(super) fn follower_count(&self, trail: &mut Trail) -> Option<u64> {
        let subline_followers = self.count_beside_in(&TOP_FIRST_SUBLINE, Counted::Followers);
        trail.pick(
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
        )
    }

    /// A school's count of `counted` (alumni, students) as `field`; a page that is not a school's has none.
    pub(super) fn school_count(
        &self,
        trail: &mut Trail,
        field: &'static str,
        counted: Counted,
        school: bool,
    ) -> Option<u64> {
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
    }

    /// `og:title` without the network's name after ` | `.
    fn og_title(&self) -> Option<String> {
        let title = self.attr(&OG_TITLE, "content")?;
        clean_line(title.split(" | ").next().unwrap_or(&title))
    }

    /// The organization id in an `urn:li:organization:<id>` attribute.
    fn organization_id(&self, selector: &scraper::Selector, attribute: &str) -> Option<u64> {
        self.document
            .select(selector)
            .filter_map(|e| e.value().attr(attribute))
            .find_map(|urn| urn.strip_prefix("urn:li:organization:")?.parse().ok())
    }

    /// The page an attribute names, when it is a supported page of the network, in canonical form.
    fn network_page(&self, selector: &scraper::Selector, attribute: &str) -> Option<String> {
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
}
