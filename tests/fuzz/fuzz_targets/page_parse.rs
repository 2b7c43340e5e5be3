//! Page parsing: any bytes as a company page. Never panics, whatever the markup; an accepted page has a name.
#![no_main]

mod allocation_limit;

#[global_allocator]
static ALLOCATOR: allocation_limit::Limited = allocation_limit::Limited;

use libfuzzer_sys::fuzz_target;
use page_url::{NetworkDomain, PageUrl};

fuzz_target!(|html: &[u8]| {
    let domain = NetworkDomain::default();
    let url = PageUrl::from_canonical("https://www.linkedin.com/company/google")
        .expect("a canonical URL");
    let html = String::from_utf8_lossy(html);
    if let Ok(record) = page_parser::parse_page(&html, &url, &domain) {
        assert!(
            record
                .company_name
                .is_some_and(|name| !name.trim().is_empty())
        );
    }
});
