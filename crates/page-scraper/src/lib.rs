//! Fetching professional-network company, school and showcase pages, and parsing them with `page-parser`.
//!
//! [`Fetcher`] gets a page from an [`Origin`]: the real site, any HTTP server that serves the same paths (tests,
//! demos, a caching proxy), or a folder of captured pages. [`Fetcher::scrape`] fetches and parses, within the
//! limits of [`FetcherSettings`]: requests in flight and per second, retries with backoff and `Retry-After` inside
//! the caller's deadline, and one upstream fetch per page however many callers want it at once. Pages go through
//! routes (direct, or one per proxy), each looking like one browser and learning the pace the origin tolerates
//! from its address, cooling down after push-back ([`RouteSettings`], [`Fetcher::routes`]). [`FieldCoverage`] watches which fields live parses fill (the layout-change alarm);
//! [`LinkResolver`] follows shortened website links, through the public-address guard (`public-address`).
//!
//! The parser's API is re-exported ([`parse_page`], [`ScrapeError`], ...), so a crate that fetches needs this one
//! crate; one that only parses takes `page-parser` alone.
//!
//! Not here: deciding when to fetch (freshness, caching), billing, HTTP serving.
#![deny(missing_docs)]

mod coverage;
mod fetch;
mod following;
mod proxy_file;
mod resolve;
mod routes;

pub use coverage::{CoverageReport, CoverageRules, FieldCoverage, FieldShare, FilledFields};
pub use fetch::{Arrival, Fetcher, FetcherSettings, Origin, OriginError, Priority, ScrapedPage};
pub use page_parser::{
    Block, CompanyRecord, FetchFailure, FieldSource, JobCount, ParsedPage, ScrapeError,
    URL_SHORTENERS, is_url_shortener, parse_count, parse_job_search, parse_page,
    parse_page_explained, registrable_domain,
};
pub use proxy_file::{PROXY_FILE_POLL, RouteChange};
pub use resolve::{LinkResolver, LinkResolverSettings, ResolveError};
pub use routes::{BAN_MARGIN, CALM, RESTART_PER_SECOND, RouteSettings, RouteState, RouteStatus};
