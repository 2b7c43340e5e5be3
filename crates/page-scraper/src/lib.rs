//! Fetching and parsing of professional-network company, school and showcase pages.
//!
//! Two halves, usable apart:
//! - [`parse_page`]: a pure function from a page's HTML to a [`CompanyRecord`], or to a [`ScrapeError`] that
//!   says what the page is instead (sign-in wall, block page, not found, another kind of page). No network.
//! - [`Fetcher`]: gets a page from an [`Origin`]: the real site, any HTTP server that serves the same paths
//!   (tests, demos, a caching proxy), or a folder of captured pages. [`Fetcher::scrape`] fetches and parses,
//!   within the limits of [`FetcherSettings`]: requests in flight and per second, retries with backoff and
//!   `Retry-After` inside the caller's deadline, user agents and proxies rotated on blocks, and one upstream
//!   fetch per page however many callers want it at once.
//!
//! Each field is read from every place the page carries it (the About rows by their label and by their
//! `data-test-id`, sections by their `data-test-id` and by their heading, component classes, the JSON-LD
//! `Organization` with schema.org names, `<meta>` and Open Graph tags), in a fixed order of trust per field
//! (docs/record.md), so that a layout change that removes one place loses nothing. [`parse_page_explained`]
//! says which place each field came from and which expected sections the page lacks.
//!
//! Not here: deciding when to fetch (freshness, caching), billing, HTTP serving.
//!
//! ```
//! use page_scraper::parse_page;
//! use page_url::{NetworkDomain, PageUrl};
//!
//! let domain = NetworkDomain::default();
//! let url = PageUrl::parse_submitted("https://www.linkedin.com/company/acme", &domain)?;
//! let html = r#"<html><head><link rel="canonical" href="https://www.linkedin.com/company/acme"></head>
//!   <body><h1 class="top-card-layout__title">Acme</h1>
//!   <h3 class="top-card-layout__first-subline">Springfield <span></span> 1,234 followers</h3></body></html>"#;
//! let record = parse_page(html, &url, &domain)?;
//! assert_eq!(record.company_name.as_deref(), Some("Acme"));
//! assert_eq!(record.follower_count, Some(1234));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

/// Declares lazily compiled CSS selectors: `selectors! { NAME = "css"; ... }`.
macro_rules! selectors {
    ($($name:ident = $css:literal;)*) => {
        $(static $name: std::sync::LazyLock<scraper::Selector> = std::sync::LazyLock::new(|| {
            // Constants of this crate: a typo fails every test, so this cannot fail at run time.
            scraper::Selector::parse($css).unwrap_or_else(|e| panic!("invalid built-in selector {:?}: {e}", $css))
        });)*
    };
}

#[cfg(feature = "fetch")]
mod coverage;
mod error;
#[cfg(feature = "fetch")]
mod fetch;
mod links;
mod numbers;
mod parse;
#[cfg(feature = "fetch")]
mod resolve;
mod sections;
mod text;

pub use company_model::CompanyRecord;
#[cfg(feature = "fetch")]
pub use coverage::{CoverageReport, CoverageRules, FieldCoverage, FieldShare, FilledFields};
pub use error::ScrapeError;
#[cfg(feature = "fetch")]
pub use fetch::{Fetcher, FetcherSettings, Origin, OriginError, Priority, ScrapedPage};
pub use links::{URL_SHORTENERS, is_url_shortener, registrable_domain};
pub use numbers::parse_count;
pub use parse::{FieldSource, ParsedPage, parse_page, parse_page_explained};
#[cfg(feature = "fetch")]
pub use resolve::{
    LinkResolver, LinkResolverSettings, ResolveError, check_literal_host, is_public_address,
    private_address_refused, public_only_client,
};
