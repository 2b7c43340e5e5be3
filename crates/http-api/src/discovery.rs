//! `GET /openapi.json` and `GET /llms.txt`: how clients, code generators and agents find out what this API
//! does. Both are written from the endpoints' declarations once, on first use ([`Api::openapi`],
//! [`Api::llms_txt`]).

use api_contract::paths;
use http::{Method, StatusCode};
use http_serve::Response;
use serde_json::{Value, json};

use crate::api::Api;
use crate::doc::Context;
use crate::endpoint::{Access, Endpoint, Part, Reads};
use crate::respond::bytes_response;

/// `GET /openapi.json`.
pub(crate) const GET_OPENAPI_DOCUMENT: Endpoint = Endpoint {
    method: Method::GET,
    path: paths::OPENAPI,
    operation_id: "getOpenApiDocument",
    part: Part::Core,
    access: Access::Public,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(openapi_doc),
    run: |api, _| Box::pin(std::future::ready(Ok(api.openapi_document()))),
};

/// `GET /llms.txt`.
pub(crate) const GET_LLMS_TXT: Endpoint = Endpoint {
    method: Method::GET,
    path: paths::LLMS_TXT,
    operation_id: "getLlmsTxt",
    part: Part::Core,
    access: Access::Public,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(llms_txt_doc),
    run: |api, _| Box::pin(std::future::ready(Ok(api.llms_document()))),
};

impl Api {
    /// `GET /openapi.json`: the document.
    fn openapi_document(&self) -> Response {
        bytes_response(StatusCode::OK, self.openapi(), "application/json")
    }

    /// `GET /llms.txt`: the text.
    fn llms_document(&self) -> Response {
        bytes_response(
            StatusCode::OK,
            self.llms_txt(),
            "text/markdown; charset=utf-8",
        )
    }
}

/// The OpenAPI operation of `GET /openapi.json`.
fn openapi_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "This document",
        "security": [],
        "responses": {"200": {"description": "The OpenAPI 3.1 document.", "content": {"application/json": {"schema": {"type": "object"}}}}}
    })
}

/// The OpenAPI operation of `GET /llms.txt`.
fn llms_txt_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "This API and its MCP tools, described for LLMs (llms.txt)",
        "security": [],
        "responses": {"200": {"description": "Markdown: each operation of this document and each MCP tool on one line.", "content": {"text/markdown": {"schema": {"type": "string"}}}}}
    })
}
