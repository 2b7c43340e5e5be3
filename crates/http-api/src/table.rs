//! The route table: every endpoint the API serves, listed once ([`ENDPOINTS`], each declared beside its handler),
//! and the routes built from them (each path once, with the endpoints of its methods). Dispatch
//! (`dispatch.rs`), the `Allow` header of a 405, the metric label of a request and the `paths` of the OpenAPI
//! document are all read from here.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::account::{GET_ACCOUNT, UPDATE_ACCOUNT};
use crate::company_data::COMPANY_DATA;
use crate::discovery::{GET_LLMS_TXT, GET_OPENAPI_DOCUMENT};
use crate::endpoint::{Endpoint, Part};
use crate::endpoints::{
    CREATE_WEBHOOK_ENDPOINT, DELETE_WEBHOOK_ENDPOINT, LIST_WEBHOOK_DELIVERIES,
    LIST_WEBHOOK_ENDPOINTS, PING_WEBHOOK_ENDPOINT,
};
use crate::events::LIST_EVENTS;
use crate::health::GET_HEALTH;
use crate::history::GET_COMPANY_HISTORY;
use crate::jobs::{CANCEL_JOB, CREATE_JOB, DELETE_JOB, GET_JOB, GET_JOB_RESULTS, LIST_JOBS};
use crate::mcp::MCP;
use crate::resolve::RESOLVE;
use crate::search::SEARCH_COMPANIES;
use crate::watches::{CREATE_WATCHES, DELETE_WATCH, GET_WATCH, LIST_WATCHES};

/// Every endpoint, in the order the OpenAPI document and `Allow` list them (a path's methods in the order of
/// their first mention here).
pub(crate) static ENDPOINTS: &[&Endpoint] = &[
    &COMPANY_DATA,
    &RESOLVE,
    &SEARCH_COMPANIES,
    &GET_OPENAPI_DOCUMENT,
    &GET_LLMS_TXT,
    &GET_HEALTH,
    &LIST_JOBS,
    &CREATE_JOB,
    &GET_JOB,
    &DELETE_JOB,
    &CANCEL_JOB,
    &GET_JOB_RESULTS,
    &GET_COMPANY_HISTORY,
    &LIST_WATCHES,
    &CREATE_WATCHES,
    &GET_WATCH,
    &DELETE_WATCH,
    &GET_ACCOUNT,
    &UPDATE_ACCOUNT,
    &LIST_WEBHOOK_ENDPOINTS,
    &CREATE_WEBHOOK_ENDPOINT,
    &DELETE_WEBHOOK_ENDPOINT,
    &PING_WEBHOOK_ENDPOINT,
    &LIST_WEBHOOK_DELIVERIES,
    &LIST_EVENTS,
    &MCP,
];

/// One route of the API: a path, its [`Part`], and the endpoint of each of its methods.
pub(crate) type Route = http_serve::Route<&'static Endpoint, Part>;

/// The routes of [`ENDPOINTS`], each path once, in the order of its first endpoint; built on first use.
pub(crate) fn routes() -> &'static [Route] {
    static ROUTES: LazyLock<&'static [Route]> = LazyLock::new(|| {
        let mut order: Vec<&'static str> = Vec::new();
        let mut methods: HashMap<&'static str, Vec<(http::Method, &'static Endpoint)>> =
            HashMap::new();
        for &endpoint in ENDPOINTS {
            if !methods.contains_key(endpoint.path) {
                order.push(endpoint.path);
            }
            methods
                .entry(endpoint.path)
                .or_default()
                .push((endpoint.method.clone(), endpoint));
        }
        let routes: Vec<Route> = order
            .into_iter()
            .map(|path| {
                let methods = methods.remove(path).unwrap_or_default();
                Route {
                    path,
                    // Every method of a path is served by one part (a test holds the declarations to it).
                    tag: methods
                        .first()
                        .map_or(Part::Core, |(_, endpoint)| endpoint.part),
                    methods: Vec::leak(methods),
                }
            })
            .collect();
        // Built once for the life of the process, as a constant table would be.
        Vec::leak(routes)
    });
    &ROUTES
}

/// The route a path names and its `{id}`, from a router built from [`routes`] on first use; a trailing `/` is
/// forgiven (`/jobs/` is the jobs collection).
pub(crate) fn route(path: &str) -> Option<(&'static Route, Option<String>)> {
    let found = TABLE.find(path)?;
    Some((found.route, found.param("id").map(str::to_owned)))
}

/// The router of [`routes`], built on the first lookup.
static TABLE: LazyLock<http_serve::RouteTable<&'static Endpoint, Part>> =
    LazyLock::new(|| http_serve::RouteTable::new(routes()));

#[cfg(test)]
mod tests {
    use api_contract::paths::{JOB_RESULTS, JOBS};
    use http::Method;

    use super::*;

    #[test]
    fn every_path_matches_its_own_route_and_ids_are_one_segment() {
        TABLE.check().expect("matchit takes every path");
        for route in routes() {
            let path = route.path.replace("{id}", "12");
            let (found, id) = route_of(&path);
            assert_eq!(found, route.path, "{path}");
            assert_eq!(id.is_some(), route.path.contains("{id}"));
        }
        assert_eq!(route_of(&format!("{JOBS}/")).0, JOBS);
        assert_eq!(
            route_of(&format!("{JOBS}/x/results")),
            (JOB_RESULTS, Some("x".to_owned()))
        );
        for unknown in [
            "/v1/network/company-data/jobsx",
            "/v1/network/company-data/jobs/12/other",
            "/v1/network/company-data/watches/3/results",
            "/wp-admin.php",
            "/",
            "",
        ] {
            assert!(route(unknown).is_none(), "{unknown}");
        }
    }

    fn route_of(path: &str) -> (&'static str, Option<String>) {
        let (route, id) = route(path).expect(path);
        (route.path, id)
    }

    #[test]
    fn allow_lists_head_after_get_and_endpoints_follow_methods() {
        let (jobs, _) = route(JOBS).expect("jobs");
        assert_eq!(jobs.allow(), "GET, HEAD, POST");
        let head = jobs.operation(&Method::HEAD).expect("HEAD is GET");
        assert_eq!(head.operation_id, "listCompanyDataJobs");
        assert!(jobs.operation(&Method::PUT).is_none());
    }

    /// Each endpoint once: its operation id and its method on its path are its own, and every method of a path
    /// is served by the same part (a route has one).
    #[test]
    fn every_endpoint_is_declared_once_and_a_path_has_one_part() {
        let ids: std::collections::HashSet<&str> = ENDPOINTS
            .iter()
            .map(|endpoint| endpoint.operation_id)
            .collect();
        assert_eq!(ids.len(), ENDPOINTS.len(), "every operation id once");
        let methods: std::collections::HashSet<(&str, &str)> = ENDPOINTS
            .iter()
            .map(|endpoint| (endpoint.path, endpoint.method.as_str()))
            .collect();
        assert_eq!(
            methods.len(),
            ENDPOINTS.len(),
            "every method of a path once"
        );
        for route in routes() {
            for (method, endpoint) in route.methods {
                assert_eq!(
                    (endpoint.part, &endpoint.method, endpoint.path),
                    (route.tag, method, route.path)
                );
            }
        }
        assert_eq!(
            routes()
                .iter()
                .map(|route| route.methods.len())
                .sum::<usize>(),
            ENDPOINTS.len()
        );
    }
}
