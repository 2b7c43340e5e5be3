//! What the page is: a company, school or showcase page, or what the network serves instead (its sign-in wall,
//! a block, a "page not found" page, another kind of page, the signed-in app), read from the canonical link, the
//! page key and the title.

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
    PAGE_KEY = r#"meta[name="pageKey"]"#;
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
    fn paths() {
        assert_eq!(
            path_of("https://www.linkedin.com/authwall?trk=x"),
            "/authwall"
        );
        assert_eq!(path_of("/authwall"), "/authwall");
        assert_eq!(path_of("https://www.linkedin.com"), "/");
    }
}
