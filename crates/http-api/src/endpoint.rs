//! One declaration per endpoint: an [`Endpoint`] says, once, a method and path's operation id, the part of the
//! API that serves it, who may call it, what body it reads, whether it takes `Idempotency-Key`, its OpenAPI
//! operation object and its handler. Each is written beside its handler (`jobs.rs`, `watches.rs`, …); the route
//! table ([`crate::table`]) lists them, and dispatch, `Allow`, the metrics label and the OpenAPI document are all
//! built from that list. Dispatch does what the declaration says before the handler runs (the key checked, the
//! media type, the `Idempotency-Key`, the body read within its bound), so a handler starts from a [`Call`].

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use company_lookup::Caller;
use http::Method;
use http_serve::Response;
use serde_json::Value;

use crate::api::Api;
use crate::auth::CredentialsError;
use crate::doc::Context;
use crate::error::ApiError;

/// Which of the API's parts serves an endpoint: the jobs, watches, webhook endpoints, resolver and MCP endpoints
/// answer 404 until the host adds them ([`crate::Api::with_jobs`], [`crate::Api::with_watches`], …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// Always served.
    Core,
    /// Served once bulk jobs are set.
    Jobs,
    /// Served once watches are set.
    Watches,
    /// Served once the accounts' webhooks (their endpoints) are set.
    Webhooks,
    /// Served once the resolver is set.
    Resolve,
    /// Served once the MCP endpoint is set; not an operation of the OpenAPI document.
    Mcp,
}

/// Who may call an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Anyone: no key is read.
    Public,
    /// A valid API key, counted against the key's request rate (401 and 429 before anything is read).
    Key,
    /// A valid API key, not counted against its rate: `/mcp`, whose tool calls are each counted as the request
    /// of the API they make.
    KeyUncounted,
}

/// What body an endpoint reads, and at most how many bytes of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reads {
    /// None: a body sent is not read.
    Nothing,
    /// JSON (`application/json` or any `application/*+json`; else 415), at most this many bytes (413).
    Json(usize),
    /// Any bytes, at most this many (the MCP messages, whose media type their transport checks).
    Bytes(usize),
}

/// An endpoint's handler: the API and the call, read as its declaration says.
pub(crate) type Handler =
    for<'a> fn(
        &'a Api,
        Call,
    ) -> Pin<Box<dyn Future<Output = Result<Response, ApiError>> + Send + 'a>>;

/// One method of one path, declared once.
#[derive(Debug)]
pub(crate) struct Endpoint {
    /// The method (`HEAD` is answered wherever `GET` is).
    pub(crate) method: Method,
    /// The path as matched and as the OpenAPI document writes it (`{id}` stands for one segment), from
    /// [`api_contract::paths`].
    pub(crate) path: &'static str,
    /// The OpenAPI `operationId` (kept from the first published documents, so generated clients keep their
    /// method names).
    pub(crate) operation_id: &'static str,
    /// The part of the API that serves it.
    pub(crate) part: Part,
    /// Who may call it.
    pub(crate) access: Access,
    /// The body it reads.
    pub(crate) reads: Reads,
    /// Whether it creates or charges, and so takes `Idempotency-Key` (docs/api.md, "Idempotent retries").
    pub(crate) idempotent: bool,
    /// Its OpenAPI operation object, without what the declaration gives (`operationId`, `security`,
    /// `Idempotency-Key`, the common headers); `None` for an endpoint the document does not describe (`/mcp`,
    /// which MCP's own specification does).
    pub(crate) doc: Option<fn(&Context<'_>) -> Value>,
    /// What answers it.
    pub(crate) run: Handler,
}

impl Endpoint {
    /// Whether it takes an API key (and so answers with the `RateLimit-*` headers where the key is counted).
    pub(crate) fn keyed(&self) -> bool {
        self.access != Access::Public
    }
}

/// A request as its endpoint's handler receives it: the head, the path's `{id}`, and what dispatch read for the
/// declaration.
#[derive(Debug)]
pub(crate) struct Call {
    /// The request's method, URI, headers and extensions.
    pub(crate) head: http::request::Parts,
    /// The path's `{id}` segment, for a path that has one.
    pub(crate) id: Option<String>,
    /// The path of the route, as declared (whatever trailing `/` was sent): what an idempotency fingerprint
    /// names.
    pub(crate) route: &'static str,
    /// Who is asking, on an endpoint of [`Access::Key`].
    pub(crate) caller: Option<Caller>,
    /// The `Idempotency-Key` sent, on an idempotent endpoint.
    pub(crate) idempotency_key: Option<String>,
    /// The body, on an endpoint that reads one (else empty).
    pub(crate) body: Bytes,
}

impl Call {
    /// Who is asking.
    ///
    /// # Errors
    /// [`CredentialsError::Missing`] on an endpoint whose declaration does not check a key: a handler that asks
    /// for a caller must be declared [`Access::Key`].
    pub(crate) fn caller(&self) -> Result<Caller, ApiError> {
        self.caller
            .ok_or(ApiError::Credentials(CredentialsError::Missing))
    }

    /// The request's idempotency fingerprint: the method, its route and its body. A retry sent to the same
    /// route with or without a trailing `/` is the same request.
    pub(crate) fn fingerprint(&self) -> String {
        idempotency::fingerprint(self.head.method.as_str(), self.route, &self.body)
    }

    /// The query string, if any.
    pub(crate) fn query(&self) -> Option<&str> {
        self.head.uri.query()
    }
}
