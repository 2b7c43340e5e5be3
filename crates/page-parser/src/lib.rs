//! Parsing of professional-network company, school and showcase pages: a pure function from a page's HTML to a
//! [`CompanyRecord`], or to a [`ScrapeError`] that says what the page is instead (sign-in wall, block page, not
//! found, another kind of page). No network, no tokio, no reqwest: what the fuzz targets and embedders that bring
//! their own HTML build.
//!
//! Each field is read from every place the page carries it (the About rows by their label and by their
//! `data-test-id`, sections by their `data-test-id` and by their heading, component classes, the JSON-LD
//! `Organization` with schema.org names, `<meta>` and Open Graph tags), in a fixed order of trust per field
//! (docs/record.md), so that a layout change that removes one place loses nothing. [`parse_page_explained`]
//! says which place each field came from and which expected sections the page lacks.
//!
//! Not here: fetching pages (`page-scraper`), deciding when to fetch, billing.
//!
//! ```
//! use page_parser::parse_page;
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

/// Declares lazily compiled CSS selectors: `selectors! { NAME = "css"; pub(super) SHARED = "css"; ... }`.
macro_rules! selectors {
    ($($vis:vis $name:ident = $css:literal;)*) => {
        $($vis static $name: std::sync::LazyLock<scraper::Selector> = std::sync::LazyLock::new(|| {
            // Constants of this crate: a typo fails every test, so this cannot fail at run time.
            scraper::Selector::parse($css).unwrap_or_else(|e| panic!("invalid built-in selector {:?}: {e}", $css))
        });)*
    };
}

mod error;
mod labels;
mod links;
mod numbers;
mod parse;
mod sections;
mod text;

pub use company_model::CompanyRecord;
pub use error::{Block, FetchFailure, ScrapeError};
pub use links::{URL_SHORTENERS, is_url_shortener, registrable_domain};
pub use numbers::parse_count;
pub use parse::{
    AUTHWALL_PATHS, FieldSource, JobCount, ParsedPage, parse_job_search, parse_page,
    parse_page_explained,
};
