//! Request-body validation: any bytes. Never panics; an accepted body holds 1 to 200 URLs and a window within
//! the spec's range, and a refused one names at least one problem.
#![no_main]

mod allocation_limit;

#[global_allocator]
static ALLOCATOR: allocation_limit::Limited = allocation_limit::Limited;

use api_contract::CompanyRequest;
use libfuzzer_sys::fuzz_target;
use page_url::NetworkDomain;

fuzz_target!(|body: &[u8]| {
    match CompanyRequest::from_json(body, &NetworkDomain::default()) {
        Ok(request) => {
            assert!((1..=200).contains(&request.urls.len()));
            assert!(request.window.duration() <= std::time::Duration::from_secs(86_400));
        }
        Err(invalid) => assert!(!invalid.problems.is_empty()),
    }
});
