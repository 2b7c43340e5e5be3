//! The route table: every path the API serves, written once, with the methods it takes and the operation each
//! method runs (an [`http_serve::Route`]). Dispatch (`dispatch.rs`), the `Allow` header of a 405, the metric label
//! of a request and the `paths` of the OpenAPI document are all read from [`ROUTES`]; the operation's handler and
//! its OpenAPI object are `match`es over [`Operation`], so the compiler holds a new route to both.

use http::Method;

/// What one method of one path does. Its name is the OpenAPI `operationId` in upper camel case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Operation {
    /// `POST /v1/network/company-data`.
    GetCompanyData,
    /// `POST /v1/network/company-data/resolve`.
    ResolveCompanyPages,
    /// `GET /openapi.json`.
    GetOpenApiDocument,
    /// `GET /healthz`.
    GetHealth,
    /// `GET /llms.txt`.
    GetLlmsTxt,
    /// `GET /v1/network/company-data/history`.
    GetCompanyHistory,
    /// `GET /v1/account`.
    GetAccount,
    /// `PATCH /v1/account`.
    UpdateAccount,
    /// `POST /v1/network/company-data/jobs`.
    CreateJob,
    /// `GET /v1/network/company-data/jobs`.
    ListJobs,
    /// `GET /v1/network/company-data/jobs/{id}`.
    GetJob,
    /// `DELETE /v1/network/company-data/jobs/{id}`.
    DeleteJob,
    /// `POST /v1/network/company-data/jobs/{id}/cancel`.
    CancelJob,
    /// `GET /v1/network/company-data/jobs/{id}/results`.
    GetJobResults,
    /// `POST /v1/network/company-data/watches`.
    CreateWatches,
    /// `GET /v1/network/company-data/watches`.
    ListWatches,
    /// `GET /v1/network/company-data/watches/{id}`.
    GetWatch,
    /// `DELETE /v1/network/company-data/watches/{id}`.
    DeleteWatch,
    /// `GET /v1/webhook-endpoints`.
    ListWebhookEndpoints,
    /// `POST /v1/webhook-endpoints`.
    CreateWebhookEndpoint,
    /// `DELETE /v1/webhook-endpoints/{id}`.
    DeleteWebhookEndpoint,
    /// `POST /v1/webhook-endpoints/{id}/ping`.
    PingWebhookEndpoint,
    /// `GET /v1/webhook-endpoints/{id}/deliveries`.
    ListWebhookDeliveries,
    /// `POST /mcp`: MCP over Streamable HTTP (the protocol's own specification describes it, not the OpenAPI
    /// document).
    Mcp,
}

impl Operation {
    /// The OpenAPI `operationId` (kept from the first published documents, so generated clients keep their
    /// method names).
    pub(crate) fn operation_id(self) -> &'static str {
        match self {
            Self::GetCompanyData => "getLinkedInCompanyData",
            Self::ResolveCompanyPages => "resolveCompanyPages",
            Self::GetOpenApiDocument => "getOpenApiDocument",
            Self::GetHealth => "getHealth",
            Self::GetLlmsTxt => "getLlmsTxt",
            Self::GetCompanyHistory => "getCompanyHistory",
            Self::GetAccount => "getAccount",
            Self::UpdateAccount => "updateAccount",
            Self::CreateJob => "createCompanyDataJob",
            Self::ListJobs => "listCompanyDataJobs",
            Self::GetJob => "getCompanyDataJob",
            Self::DeleteJob => "deleteCompanyDataJob",
            Self::CancelJob => "cancelCompanyDataJob",
            Self::GetJobResults => "getCompanyDataJobResults",
            Self::CreateWatches => "createCompanyWatches",
            Self::ListWatches => "listCompanyWatches",
            Self::GetWatch => "getCompanyWatch",
            Self::DeleteWatch => "deleteCompanyWatch",
            Self::ListWebhookEndpoints => "listWebhookEndpoints",
            Self::CreateWebhookEndpoint => "createWebhookEndpoint",
            Self::DeleteWebhookEndpoint => "deleteWebhookEndpoint",
            Self::PingWebhookEndpoint => "pingWebhookEndpoint",
            Self::ListWebhookDeliveries => "listWebhookDeliveries",
            Self::Mcp => "mcp",
        }
    }

    /// Whether the operation takes an API key (and so counts against the key's rate).
    pub(crate) fn keyed(self) -> bool {
        !matches!(
            self,
            Self::GetOpenApiDocument | Self::GetHealth | Self::GetLlmsTxt
        )
    }

    /// Whether the operation creates or charges, and so takes `Idempotency-Key` (docs/api.md, "Idempotent
    /// retries").
    pub(crate) fn idempotent(self) -> bool {
        matches!(
            self,
            Self::GetCompanyData
                | Self::ResolveCompanyPages
                | Self::CreateJob
                | Self::CreateWatches
                | Self::CreateWebhookEndpoint
        )
    }
}

/// Which of the API's parts serves a route: the jobs and watches answer 404 until the host adds them
/// ([`crate::Api::with_jobs`], [`crate::Api::with_watches`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// Always served.
    Core,
    /// Served once bulk jobs are set.
    Jobs,
    /// Served once watches are set.
    Watches,
    /// Served once the resolver is set.
    Resolve,
    /// Served once the MCP endpoint is set; not an operation of the OpenAPI document.
    Mcp,
}

/// One route of the API: its [`Part`] is the tag.
pub(crate) type Route = http_serve::Route<Operation, Part>;

use company_model::paths::{
    ACCOUNT, COMPANY_DATA, HEALTH, HISTORY, JOB, JOB_CANCEL, JOB_RESULTS, JOBS, LLMS_TXT, MCP,
    OPENAPI, RESOLVE, WATCH, WATCHES, WEBHOOK_ENDPOINT, WEBHOOK_ENDPOINT_DELIVERIES,
    WEBHOOK_ENDPOINT_PING, WEBHOOK_ENDPOINTS,
};

/// Every route, in the order the OpenAPI document lists them.
pub(crate) const ROUTES: &[Route] = &[
    Route {
        path: COMPANY_DATA,
        tag: Part::Core,
        methods: &[(Method::POST, Operation::GetCompanyData)],
    },
    Route {
        path: RESOLVE,
        tag: Part::Resolve,
        methods: &[(Method::POST, Operation::ResolveCompanyPages)],
    },
    Route {
        path: OPENAPI,
        tag: Part::Core,
        methods: &[(Method::GET, Operation::GetOpenApiDocument)],
    },
    Route {
        path: LLMS_TXT,
        tag: Part::Core,
        methods: &[(Method::GET, Operation::GetLlmsTxt)],
    },
    Route {
        path: HEALTH,
        tag: Part::Core,
        methods: &[(Method::GET, Operation::GetHealth)],
    },
    Route {
        path: JOBS,
        tag: Part::Jobs,
        methods: &[
            (Method::GET, Operation::ListJobs),
            (Method::POST, Operation::CreateJob),
        ],
    },
    Route {
        path: JOB,
        tag: Part::Jobs,
        methods: &[
            (Method::GET, Operation::GetJob),
            (Method::DELETE, Operation::DeleteJob),
        ],
    },
    Route {
        path: JOB_CANCEL,
        tag: Part::Jobs,
        methods: &[(Method::POST, Operation::CancelJob)],
    },
    Route {
        path: JOB_RESULTS,
        tag: Part::Jobs,
        methods: &[(Method::GET, Operation::GetJobResults)],
    },
    Route {
        path: HISTORY,
        tag: Part::Core,
        methods: &[(Method::GET, Operation::GetCompanyHistory)],
    },
    Route {
        path: WATCHES,
        tag: Part::Watches,
        methods: &[
            (Method::GET, Operation::ListWatches),
            (Method::POST, Operation::CreateWatches),
        ],
    },
    Route {
        path: WATCH,
        tag: Part::Watches,
        methods: &[
            (Method::GET, Operation::GetWatch),
            (Method::DELETE, Operation::DeleteWatch),
        ],
    },
    Route {
        path: ACCOUNT,
        tag: Part::Core,
        methods: &[
            (Method::GET, Operation::GetAccount),
            (Method::PATCH, Operation::UpdateAccount),
        ],
    },
    Route {
        path: WEBHOOK_ENDPOINTS,
        tag: Part::Watches,
        methods: &[
            (Method::GET, Operation::ListWebhookEndpoints),
            (Method::POST, Operation::CreateWebhookEndpoint),
        ],
    },
    Route {
        path: WEBHOOK_ENDPOINT,
        tag: Part::Watches,
        methods: &[(Method::DELETE, Operation::DeleteWebhookEndpoint)],
    },
    Route {
        path: WEBHOOK_ENDPOINT_PING,
        tag: Part::Watches,
        methods: &[(Method::POST, Operation::PingWebhookEndpoint)],
    },
    Route {
        path: WEBHOOK_ENDPOINT_DELIVERIES,
        tag: Part::Watches,
        methods: &[(Method::GET, Operation::ListWebhookDeliveries)],
    },
    Route {
        path: MCP,
        tag: Part::Mcp,
        methods: &[(Method::POST, Operation::Mcp)],
    },
];

/// The route a path names and its `{id}`, from a router built from [`ROUTES`] on first use; a trailing `/` is
/// forgiven (`/jobs/` is the jobs collection).
pub(crate) fn route(path: &str) -> Option<(&'static Route, Option<String>)> {
    let found = TABLE.find(path)?;
    Some((found.route, found.param("id").map(str::to_owned)))
}

/// The router of [`ROUTES`], built on the first lookup.
static TABLE: http_serve::RouteTable<Operation, Part> = http_serve::RouteTable::new(ROUTES);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_matches_its_own_route_and_ids_are_one_segment() {
        TABLE.check().expect("matchit takes every path");
        for route in ROUTES {
            let path = route.path.replace("{id}", "12");
            let (found, id) = route_of(&path);
            assert_eq!(found, route.path, "{path}");
            assert_eq!(id.is_some(), route.path.contains("{id}"));
        }
        assert_eq!(route_of(&format!("{JOBS}/")).0, JOBS);
        assert_eq!(
            route_of(&format!("{JOBS}/x/results")),
            (
                "/v1/network/company-data/jobs/{id}/results",
                Some("x".to_owned())
            )
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
    fn allow_lists_head_after_get_and_operations_follow_methods() {
        let (jobs, _) = route(JOBS).expect("jobs");
        assert_eq!(jobs.allow(), "GET, HEAD, POST");
        assert_eq!(jobs.operation(&Method::HEAD), Some(Operation::ListJobs));
        assert_eq!(jobs.operation(&Method::PUT), None);
        let ids: std::collections::HashSet<&str> = ROUTES
            .iter()
            .flat_map(|route| route.methods.iter().map(|(_, op)| op.operation_id()))
            .collect();
        assert_eq!(
            ids.len(),
            ROUTES
                .iter()
                .map(|route| route.methods.len())
                .sum::<usize>(),
            "every operation once"
        );
    }
}
