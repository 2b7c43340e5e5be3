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
    /// The network refused the request: HTTP 999 or 429, its challenge page, or the guest home page it bounces
    /// scrapers to; or no route to it was free.
    #[error("the network refused the request ({by})")]
    Blocked {
        /// What showed the block.
        by: Block,
    },
    /// The URL led to a page of another kind (a profile, a job, the home page).
    #[error("the URL led to a page that is not a company, school or showcase page ({found})")]
    WrongPageKind {
        /// Where it led, e.g. a path.
        found: String,
    },
    /// The page could not be fetched: connection error, server error, unreadable body.
    #[error("the page could not be fetched: {0}")]
    Fetch(FetchFailure),
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

/// What showed that the network refused a request ([`ScrapeError::Blocked`]). Its text is what the
/// `unresolved` entry's message says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Block {
    /// HTTP 999, the network's refusal.
    #[error("HTTP 999")]
    Http999,
    /// HTTP 429: rate limited (usually with `Retry-After`).
    #[error("HTTP 429, rate limited")]
    Http429,
    /// The page the network serves with HTTP 999's challenge (a tracking script, no title).
    #[error("the HTTP 999 challenge page")]
    ChallengePage,
    /// A redirect to the network's home page instead of the page asked for.
    #[error("redirected to the home page")]
    RedirectedHome,
    /// The guest home page served in place of the page asked for (its page key or canonical says so).
    #[error("bounced to the guest home page")]
    GuestHomePage,
    /// Nothing was sent: every route of this server to the network is cooling down after it pushed back, or
    /// busy, until the route it would use is free in `ready_in_seconds`.
    #[error(
        "every route is cooling down after the site pushed back, or busy; the next is free in {ready_in_seconds} s"
    )]
    NoRoute {
        /// Whole seconds until that route is free (at least 1): the wait a refusal tells.
        ready_in_seconds: u64,
    },
}

/// Why a page could not be fetched ([`ScrapeError::Fetch`]). Its text is what the `unresolved` entry's message
/// says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FetchFailure {
    /// The origin did not answer within the time allowed.
    #[error("the origin did not answer: timed out")]
    TimedOut,
    /// No connection to the origin could be opened.
    #[error("could not connect to the origin")]
    Unreachable,
    /// No connection through the named proxy could be opened.
    #[error("could not connect through the proxy {proxy}")]
    ProxyUnreachable {
        /// The proxy's name, as the route pool shows it (no password).
        proxy: String,
    },
    /// The request failed otherwise on its way (the HTTP client's words).
    #[error("{0}")]
    Request(String),
    /// The origin answered with a status that is neither a page nor a refusal (a 5xx, say).
    #[error("the origin answered HTTP {0}")]
    Status(u16),
    /// The origin redirected to a host that is not the origin or one of the network's https hosts.
    #[error("the origin redirected off the network, to {to}: not followed")]
    RedirectedOff {
        /// Where the redirect pointed.
        to: String,
    },
    /// The answer's body could not be read whole: broken off, too large, or in an encoding not asked for.
    #[error("{0}")]
    Body(String),
    /// This server could not do the work: its fetcher or parsers stopped, or a captured page could not be read.
    #[error("{0}")]
    Internal(String),
}
