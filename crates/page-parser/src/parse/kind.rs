//! What the page is: a company, school or showcase page, or what the network serves instead (its sign-in wall,
//! a block, a "page not found" page, another kind of page, the signed-in app), read from the canonical link, the
//! page key (`<meta name="pageKey">`, [`KeyFamily`]) and the title.

use page_url::PageUrl;

use super::page::{CANONICAL, Page, TOP_TITLE};
use crate::{Block, ScrapeError};

/// Paths of the network's sign-in wall and login pages.
pub const AUTHWALL_PATHS: [&str; 5] = [
    "/authwall",
    "/login",
    "/uas/login",
    "/signup",
    "/checkpoint",
];

selectors! {
    TITLE = "title";
    SCRIPT = "script";
    CODE = "code";
    // The signed-in app's data blobs and top card, which no guest page carries.
    SIGNED_IN = r#"code[id^="bpr-guid-"], [class*="org-top-card"]"#;
    pub(super) PAGE_KEY = r#"meta[name="pageKey"]"#;
}

/// What a page's key (`<meta name="pageKey" content="…">`) says the page is, by the family its name starts
/// with. The key names the page the network chose to serve, whatever the URL asked for and however large the
/// page is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyFamily {
    /// A guest organization page: `d_org_guest…` (desktop; company, school and showcase pages share only this
    /// prefix) or `p_org_guest…` (mobile, e.g. `p_org_guest_company_overview`).
    OrgGuest,
    /// A wall instead of the page: the sign-in wall (`auth_wall…`, `authwall…`), the sign-up wall
    /// (`d_registration…`, e.g. 2026's `d_registration-cold-join`, about 68,000 characters with a canonical link
    /// to the home page) or a security checkpoint (`d_checkpoint…`).
    Wall,
    /// The guest home page scrapers are bounced to (`d_homepage-guest-home`).
    GuestHome,
    /// The guest job search (`d_jobs_guest_search`), where a company's open jobs are counted.
    JobSearch,
    /// No key, or one of another family.
    Other,
}

impl KeyFamily {
    /// The family of `key`.
    pub(crate) fn of(key: &str) -> Self {
        let key = key.trim().to_ascii_lowercase();
        let starts = |prefixes: &[&str]| prefixes.iter().any(|p| key.starts_with(p));
        if starts(&["auth_wall", "authwall", "d_registration", "d_checkpoint"]) {
            Self::Wall
        } else if starts(&["d_org_guest", "p_org_guest"]) {
            Self::OrgGuest
        } else if key.contains("homepage-guest") {
            Self::GuestHome
        } else if key.starts_with("d_jobs_guest_search") {
            Self::JobSearch
        } else {
            Self::Other
        }
    }
}

impl Page<'_> {
    /// Recognises the pages the network serves instead of a company page.
    pub(super) fn refuse_non_company_pages(&self) -> Result<(), ScrapeError> {
        let canonical = self.attr(&CANONICAL, "href");
        let canonical_path = canonical.as_deref().map(path_of).unwrap_or_default();
        if AUTHWALL_PATHS.iter().any(|p| canonical_path.starts_with(p)) {
            return Err(ScrapeError::Authwall);
        }
        let page_key = self.attr(&PAGE_KEY, "content").unwrap_or_default();
        // Before the canonical link is read for the home page: the sign-up wall points its canonical there, and
        // is a wall (a lighter answer for the route that met it), not the bounce that means a ban.
        let family = KeyFamily::of(&page_key);
        if family == KeyFamily::Wall {
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
        if family == KeyFamily::GuestHome || canonical_path == "/" {
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
}

/// The path of an absolute or root-relative URL, without query or fragment.
pub(super) fn path_of(url: &str) -> String {
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
    fn page_keys_by_family() {
        for wall in [
            "auth_wall_desktop_profile",
            "authwall",
            "d_registration-cold-join",
            "d_checkpoint_lg_consumerLogin",
        ] {
            assert_eq!(KeyFamily::of(wall), KeyFamily::Wall, "{wall}");
        }
        for page in [
            "d_org_guest_company_overview",
            "p_org_guest_company_overview",
        ] {
            assert_eq!(KeyFamily::of(page), KeyFamily::OrgGuest, "{page}");
        }
        assert_eq!(KeyFamily::of("d_homepage-guest-home"), KeyFamily::GuestHome);
        assert_eq!(KeyFamily::of(""), KeyFamily::Other);
        assert_eq!(
            KeyFamily::of("d_flagship3_profile_view_base"),
            KeyFamily::Other
        );
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
