//! The `Api` handle: its parts, its settings, and who is calling (the key verified, its rate checked).
//! Answering requests is `dispatch.rs`'s; each operation's handler is in a module of its own.

use std::sync::Arc;
use std::time::Duration;

use account_webhooks::Webhooks;
use api_contract::headers::{RATELIMIT_LIMIT, RATELIMIT_REMAINING, RATELIMIT_RESET};
use api_keys::{ApiKey, VerifiedKey};
use bulk_jobs::BulkJobs;
use bytes::Bytes;
use company_lookup::{Caller, LookupService};
use company_resolve::Resolver;
use company_watch::Watches;
use http::{HeaderMap, HeaderValue};
use idempotency::IdempotencyStore;
use page_url::NetworkDomain;
use shared_limits::{LimitStore, MemoryLimits, RateGate, RateStatus};

use crate::KeyRate;
use crate::auth::{Authenticator, presented_key};
use crate::error::ApiError;
use crate::mcp_endpoint::McpEndpoint;

/// What the API needs to know besides its parts.
#[derive(Clone, Debug)]
pub struct ApiSettings {
    /// The rate each API key may send requests at (counted per key id, in the store given to
    /// [`Api::with_limits`]); `None` for no limit. Default: 10 per second, 20 at once.
    pub key_rate: Option<KeyRate>,
    /// Time for a request's body to arrive (408 after it). Default 30 s.
    pub body_timeout: Duration,
    /// The header a trusted reverse proxy puts the client's address in (e.g. `X-Forwarded-For`, whose last
    /// entry is the one the proxy added, or `X-Real-IP`). `None` (the default): the connection's peer address,
    /// which is right when clients connect directly. Failed authentications are limited per this address.
    /// Set it only behind a proxy that sets the header: otherwise clients could choose their address.
    pub client_address_header: Option<http::HeaderName>,
    /// The deployment's quotas; here [`credit_ledger::Quotas::idempotency_mb`], the answers an account may have
    /// kept for `Idempotency-Key` retries (an account's own quota replaces it).
    pub quotas: credit_ledger::Quotas,
}

impl Default for ApiSettings {
    fn default() -> Self {
        Self {
            key_rate: Some(KeyRate {
                per_second: 10.0,
                burst: 20,
            }),
            body_timeout: Duration::from_secs(30),
            client_address_header: None,
            quotas: credit_ledger::Quotas::default(),
        }
    }
}

/// The API: a cheap handle (an `Arc` inside) to clone into each connection.
#[derive(Clone, Debug)]
pub struct Api(Arc<Inner>);

#[derive(Clone, Debug)]
struct Inner {
    lookup: Arc<LookupService>,
    authenticator: Arc<dyn Authenticator>,
    domain: NetworkDomain,
    settings: ApiSettings,
    key_rate: Option<Arc<RateGate>>,
    /// `/openapi.json`, serialized on first use (it states the parts' settings).
    openapi: std::sync::OnceLock<Bytes>,
    /// `/llms.txt`, written on first use from the document and the MCP tools.
    llms: std::sync::OnceLock<Bytes>,
    /// What `/healthz` asks.
    health: Option<Arc<dyn HealthCheck>>,
    /// The bulk jobs behind `/v1/network/company-data/jobs`.
    jobs: Option<Arc<BulkJobs>>,
    /// The watches behind `/v1/network/company-data/watches`.
    watches: Option<Arc<Watches>>,
    /// The accounts' webhooks behind `/v1/webhook-endpoints`.
    webhooks: Option<Arc<Webhooks>>,
    /// The resolver behind `/v1/network/company-data/resolve`.
    resolver: Option<Arc<Resolver>>,
    /// Where `Idempotency-Key` answers are kept.
    idempotency: Option<Arc<dyn IdempotencyStore>>,
    /// The MCP transport behind `/mcp`.
    mcp: Option<Arc<dyn McpEndpoint>>,
}

/// What `GET /healthz` asks besides "the process answers": typically whether the database answers.
#[async_trait::async_trait]
pub trait HealthCheck: Send + Sync + std::fmt::Debug {
    /// `Err` with a short reason when the service cannot serve requests (`/healthz` then answers 503).
    async fn check(&self) -> Result<(), String>;
}

impl Api {
    /// The API over a lookup service, checking keys with `authenticator`, accepting page URLs on `domain`; the
    /// per-key rate counted in this process until [`Api::with_limits`] says where. The jobs, the watches, the
    /// idempotency store and the health check are added with their `with_*` methods, as the dashboard's and the
    /// lookup's parts are.
    pub fn new(
        lookup: Arc<LookupService>,
        authenticator: Arc<dyn Authenticator>,
        domain: NetworkDomain,
        settings: ApiSettings,
    ) -> Self {
        let key_rate = settings
            .key_rate
            .and_then(|rate| RateGate::new(Arc::new(MemoryLimits::new()), rate))
            .map(Arc::new);
        Self(Arc::new(Inner {
            lookup,
            authenticator,
            domain,
            key_rate,
            settings,
            openapi: std::sync::OnceLock::new(),
            llms: std::sync::OnceLock::new(),
            health: None,
            jobs: None,
            watches: None,
            webhooks: None,
            resolver: None,
            idempotency: None,
            mcp: None,
        }))
    }

    /// The same API with `change` made to its parts (a clone of them when the API is already shared).
    fn changed(self, change: impl FnOnce(&mut Inner)) -> Self {
        let mut inner = Arc::unwrap_or_clone(self.0);
        change(&mut inner);
        // The document states the parts' settings: written again on first use.
        inner.openapi = std::sync::OnceLock::new();
        inner.llms = std::sync::OnceLock::new();
        Self(Arc::new(inner))
    }

    /// The same API with the per-key rate counted in `limits` (bucket `key:<key id>`): on a store several
    /// servers share, each key's rate is a total for the deployment.
    #[must_use]
    pub fn with_limits(self, limits: Arc<dyn LimitStore>) -> Self {
        self.changed(|inner| {
            inner.key_rate = inner
                .settings
                .key_rate
                .and_then(|rate| RateGate::new(limits, rate))
                .map(Arc::new);
        })
    }

    /// The same API keeping the answers of requests sent with an `Idempotency-Key` in `store`, so that a retry
    /// with the same key gets the first answer and is charged once. Without it the header is checked for its
    /// form and otherwise ignored.
    #[must_use]
    pub fn with_idempotency(self, store: Arc<dyn IdempotencyStore>) -> Self {
        self.changed(|inner| inner.idempotency = Some(store))
    }

    pub(crate) fn idempotency(&self) -> Option<Arc<dyn IdempotencyStore>> {
        self.0.idempotency.clone()
    }

    /// The same API serving bulk jobs from `jobs` under `/v1/network/company-data/jobs`. Without them those
    /// paths are 404.
    #[must_use]
    pub fn with_jobs(self, jobs: Arc<BulkJobs>) -> Self {
        self.changed(|inner| inner.jobs = Some(jobs))
    }

    /// The same API resolving domains and names with `resolver` under `/v1/network/company-data/resolve`.
    /// Without it that path is 404.
    #[must_use]
    pub fn with_resolver(self, resolver: Arc<Resolver>) -> Self {
        self.changed(|inner| inner.resolver = Some(resolver))
    }

    /// The same API serving watches from `watches` under `/v1/network/company-data/watches`. Without them those
    /// paths are 404.
    #[must_use]
    pub fn with_watches(self, watches: Arc<Watches>) -> Self {
        self.changed(|inner| inner.watches = Some(watches))
    }

    /// The same API serving the accounts' webhook endpoints from `webhooks` under `/v1/webhook-endpoints`.
    /// Without them those paths are 404.
    #[must_use]
    pub fn with_webhooks(self, webhooks: Arc<Webhooks>) -> Self {
        self.changed(|inner| inner.webhooks = Some(webhooks))
    }

    /// The same API answering `POST /mcp` with `endpoint` (the MCP tools over Streamable HTTP), once the
    /// request's key is verified. Without it `/mcp` is 404.
    #[must_use]
    pub fn with_mcp(self, endpoint: Arc<dyn McpEndpoint>) -> Self {
        self.changed(|inner| inner.mcp = Some(endpoint))
    }

    /// The same API with `/healthz` asking `check`. Without one, `/healthz` says only that the process answers.
    #[must_use]
    pub fn with_health_check(self, check: Arc<dyn HealthCheck>) -> Self {
        self.changed(|inner| inner.health = Some(check))
    }

    pub(crate) fn body_timeout(&self) -> Duration {
        self.0.settings.body_timeout
    }

    pub(crate) fn lookup(&self) -> &LookupService {
        &self.0.lookup
    }

    pub(crate) fn domain(&self) -> &NetworkDomain {
        &self.0.domain
    }

    /// The OpenAPI document's text, once written ([`Api::openapi`]).
    pub(crate) fn openapi_cache(&self) -> &std::sync::OnceLock<Bytes> {
        &self.0.openapi
    }

    /// The bulk jobs, when added.
    pub(crate) fn resolver(&self) -> Option<&Arc<Resolver>> {
        self.0.resolver.as_ref()
    }

    /// The bulk jobs, when added.
    pub(crate) fn jobs(&self) -> Option<&Arc<BulkJobs>> {
        self.0.jobs.as_ref()
    }

    /// The watches, when added.
    pub(crate) fn watches(&self) -> Option<&Arc<Watches>> {
        self.0.watches.as_ref()
    }

    /// The accounts' webhooks, when added.
    pub(crate) fn webhooks(&self) -> Option<&Arc<Webhooks>> {
        self.0.webhooks.as_ref()
    }

    /// Where `/llms.txt` is kept once written.
    pub(crate) fn llms_cache(&self) -> &std::sync::OnceLock<Bytes> {
        &self.0.llms
    }

    /// The MCP endpoint, when added.
    pub(crate) fn mcp_endpoint(&self) -> Option<&Arc<dyn McpEndpoint>> {
        self.0.mcp.as_ref()
    }

    /// What `/healthz` asks, when added.
    pub(crate) fn health_check(&self) -> Option<&Arc<dyn HealthCheck>> {
        self.0.health.as_ref()
    }

    /// The caller of a key-bearing request: the key verified (failures limited per client address), then its
    /// request rate checked.
    pub(crate) async fn authenticate(
        &self,
        headers: &HeaderMap,
        extensions: &http::Extensions,
    ) -> Result<Caller, ApiError> {
        let verified = self.verify_key(headers, extensions).await?;
        if let Some(gate) = &self.0.key_rate {
            let checked = gate.check(&format!("key:{}", verified.key_id.0)).await;
            if let Some(cell) = extensions.get::<RateCell>() {
                let _ = cell
                    .0
                    .set(*checked.as_ref().unwrap_or_else(|refused| &refused.status));
            }
            checked.map_err(|refused| ApiError::RateLimited {
                retry_after: refused.retry_after,
            })?;
        }
        Ok(Caller {
            tenant: verified.tenant,
            key_id: Some(verified.key_id.0),
        })
    }

    /// The key of a key-bearing request verified (failures limited per client address), its rate not counted.
    pub(crate) async fn verify_key(
        &self,
        headers: &HeaderMap,
        extensions: &http::Extensions,
    ) -> Result<VerifiedKey, ApiError> {
        let key = presented_key(headers)?;
        let client = self.client_address(headers, extensions);
        let verified = self.0.authenticator.authenticate(&key, client).await?;
        // Logged with the request: the account, and the key's prefix (never the key).
        let span = tracing::Span::current();
        span.record("account", verified.tenant.account.0);
        span.record("mode", verified.tenant.mode.label());
        if let Some(key) = ApiKey::parse(&key) {
            span.record("key", key.prefix());
        }
        Ok(verified)
    }
}

impl Api {
    /// The deployment's quotas ([`ApiSettings::quotas`]).
    pub(crate) fn quotas(&self) -> &credit_ledger::Quotas {
        &self.0.settings.quotas
    }

    /// The client's address, by http-serve's one rule ([`http_serve::client_address`]) with this API's trusted
    /// proxy header.
    fn client_address(
        &self,
        headers: &HeaderMap,
        extensions: &http::Extensions,
    ) -> Option<std::net::IpAddr> {
        http_serve::client_address(
            headers,
            extensions,
            self.0.settings.client_address_header.as_ref(),
        )
    }
}

/// Where the caller's key stands against its rate, set once the key is checked: `handle` turns it into the
/// `RateLimit-*` headers of the response, whatever the answer.
#[derive(Clone, Debug, Default)]
pub(crate) struct RateCell(pub(crate) Arc<std::sync::OnceLock<RateStatus>>);

/// `RateLimit-Limit` (the burst), `RateLimit-Remaining` (requests that may go now) and `RateLimit-Reset`
/// (whole seconds until the burst is whole again), as the IETF RateLimit header fields draft names them.
pub(crate) fn rate_limit_headers(headers: &mut HeaderMap, status: &RateStatus) {
    let reset = status.reset.as_secs() + u64::from(status.reset.subsec_nanos() > 0);
    for (name, value) in [
        (RATELIMIT_LIMIT, u64::from(status.limit)),
        (RATELIMIT_REMAINING, u64::from(status.remaining)),
        (RATELIMIT_RESET, reset),
    ] {
        headers.insert(name, HeaderValue::from(value));
    }
}
