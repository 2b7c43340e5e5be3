use company_model::UnresolvedCode;

/// Why a page did not give a record. Each variant maps to one [`UnresolvedCode`] ([`ScrapeError::code`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScrapeError {
    /// The network has no such page: HTTP 404/410, its "page not found" page, or no file in a folder origin.
    #[error("the network has no page at this address")]
    NotFound,
    /// The network answered with its sign-in wall (a redirect to `/authwall` or `/login`, or the wall's page).
    #[error("the network showed its sign-in wall instead of the page")]
    Authwall,
    /// The network refused the request: HTTP 999 or 429, or the guest home page it bounces scrapers to.
    #[error("the network refused the request ({reason})")]
    Blocked {
        /// What showed the block, e.g. `HTTP 999`.
        reason: String,
    },
    /// The URL led to a page of another kind (a profile, a job, the home page).
    #[error("the URL led to a page that is not a company, school or showcase page ({found})")]
    WrongPageKind {
        /// Where it led, e.g. a path.
        found: String,
    },
    /// The page could not be fetched: connection error, server error, unreadable body.
    #[error("the page could not be fetched: {0}")]
    Fetch(String),
    /// The page was fetched but has none of the markup the parser reads.
    #[error("the page holds no company data the parser recognises")]
    Unparseable,
    /// The page is the network's signed-in app (a page saved while signed in), not the logged-out guest page
    /// the parser reads: its data sits in the app's own JSON blobs (`<code id="bpr-guid-…">`), not in the
    /// guest markup.
    #[error(
        "the page was saved while signed in: it is the network's signed-in app, not the guest page"
    )]
    SignedIn,
}

impl ScrapeError {
    /// The stable code reported in the API's `unresolved` list.
    pub fn code(&self) -> UnresolvedCode {
        match self {
            ScrapeError::NotFound => UnresolvedCode::NotFound,
            ScrapeError::Authwall => UnresolvedCode::Authwall,
            ScrapeError::Blocked { .. } => UnresolvedCode::Blocked,
            ScrapeError::WrongPageKind { .. } => UnresolvedCode::WrongPageKind,
            ScrapeError::Fetch(_) => UnresolvedCode::FetchFailed,
            ScrapeError::Unparseable | ScrapeError::SignedIn => UnresolvedCode::Unparseable,
        }
    }

    /// True when a retry later may succeed (blocks, the sign-in wall and fetch failures), false when the answer
    /// is final (not found, another kind of page, unrecognised markup).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ScrapeError::Blocked { .. } | ScrapeError::Fetch(_) | ScrapeError::Authwall
        )
    }
}
