//! Validation and normalization of professional-network page URLs.
//!
//! The service looks pages up, stores snapshots and bills by one normalized form of each page URL, so that
//! `https://uk.linkedin.com/company/Google/about/?trk=x` and `https://www.linkedin.com/company/google` are the
//! same page. This crate owns that form ([`PageUrl`]) and the rules for what a caller may submit
//! ([`PageUrl::parse_submitted`], the pattern of spec 2.1).
//!
//! It is not for fetching pages (`page-scraper`) nor for anything other than company, school and showcase pages.
//!
//! ```
//! use page_url::{NetworkDomain, PageUrl, PageKind};
//!
//! let domain = NetworkDomain::default(); // linkedin.com
//! let url = PageUrl::parse_submitted("https://uk.linkedin.com/company/Audiense/about/?trk=x", &domain)?;
//! assert_eq!(url.as_str(), "https://www.linkedin.com/company/audiense");
//! assert_eq!(url.kind(), PageKind::Company);
//! assert_eq!(url.path(), "/company/audiense");
//! # Ok::<(), page_url::UrlError>(())
//! ```
#![deny(missing_docs)]

mod domain;
mod page;
mod rule;

pub use domain::{
    DomainError, JOB_SEARCH_COMPANY_FILTER, JOB_SEARCH_PATH, NetworkDomain, job_search_path,
};
pub use page::{MAX_URL_LEN, PageKind, PageUrl, UrlError, other_page_kind};
pub use rule::submitted_pattern;
