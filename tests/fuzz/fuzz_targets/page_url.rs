//! URL normalization: any string, submitted or found in a page. Never panics; what it accepts has one normalized
//! form that parses back to itself.
#![no_main]

mod allocation_limit;

#[global_allocator]
static ALLOCATOR: allocation_limit::Limited = allocation_limit::Limited;

use libfuzzer_sys::fuzz_target;
use page_url::{NetworkDomain, PageUrl};

fuzz_target!(|input: &str| {
    let domain = NetworkDomain::default();
    for parsed in [
        PageUrl::parse_submitted(input, &domain),
        PageUrl::normalize(input, &domain),
    ] {
        let Ok(url) = parsed else { continue };
        let again = PageUrl::from_canonical(url.as_str()).expect("a normalized URL parses back");
        assert_eq!(again, url, "normalization is idempotent");
        assert!(!url.slug().is_empty(), "a page has a slug");
        let renormalized =
            PageUrl::normalize(url.as_str(), &domain).expect("normal form is accepted");
        assert_eq!(renormalized, url);
    }
});
