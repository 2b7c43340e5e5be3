//! `/v1/account`: the caller's account, balance, credits held and usage this month (`GET`), and its settings
//! (`PATCH`: the low-balance threshold). Free.

use api_contract::MAX_SETTINGS_BYTES;
use credit_ledger::{AccountSettings, AccountSummary, LedgerError};
use http::{Method, StatusCode};
use http_serve::Response;
use serde_json::{Value, json};

use api_contract::paths;
use company_lookup::LookupError;
use company_model::Tenant;

use crate::api::Api;
use crate::doc::{Context, error_response};
use crate::endpoint::{Access, Call, Endpoint, Part, Reads};
use crate::error::ApiError;
use crate::respond::json_response;

/// `GET /v1/account`.
pub(crate) const GET_ACCOUNT: Endpoint = Endpoint {
    method: Method::GET,
    path: paths::ACCOUNT,
    operation_id: "getAccount",
    part: Part::Core,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(account_doc),
    run: |api, call| Box::pin(api.account(call)),
};

/// `PATCH /v1/account`.
pub(crate) const UPDATE_ACCOUNT: Endpoint = Endpoint {
    method: Method::PATCH,
    path: paths::ACCOUNT,
    operation_id: "updateAccount",
    part: Part::Core,
    access: Access::Key,
    reads: Reads::Json(MAX_SETTINGS_BYTES),
    idempotent: false,
    doc: Some(update_account_doc),
    run: |api, call| Box::pin(api.update_account(call)),
};

impl Api {
    /// `GET /v1/account`: 200 with [`credit_ledger::AccountSummary`]; nothing is charged.
    async fn account(&self, call: Call) -> Result<Response, ApiError> {
        let caller = call.caller()?;
        Ok(json_response(
            StatusCode::OK,
            &self.summary(caller.tenant).await?,
        ))
    }

    /// `PATCH /v1/account`: applies [`AccountSettings`] (a JSON Merge Patch), then answers as `GET` does.
    async fn update_account(&self, call: Call) -> Result<Response, ApiError> {
        let caller = call.caller()?;
        let settings = AccountSettings::from_json(&call.body)?;
        if let Some(threshold) = settings.low_balance_threshold {
            self.lookup()
                .ledger()
                .set_low_balance_threshold(caller.tenant, threshold)
                .await
                .map_err(LookupError::Ledger)?;
        }
        Ok(json_response(
            StatusCode::OK,
            &self.summary(caller.tenant).await?,
        ))
    }

    async fn summary(&self, tenant: Tenant) -> Result<AccountSummary, ApiError> {
        Ok(credit_ledger::account_summary(
            self.lookup().ledger().as_ref(),
            tenant,
            jiff::Timestamp::now(),
        )
        .await
        .map_err(LookupError::Ledger)?
        // A verified key's account always exists; a missing one is the store's inconsistency.
        .ok_or_else(|| {
            LookupError::Ledger(LedgerError::Backend("the key's account is missing".into()))
        })?)
    }
}

/// The OpenAPI operation of `GET /v1/account`.
fn account_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "The caller's account: balance, credits held, usage this month",
        "description": "Free. Reads the ledger of the key's account: the settled balance, what requests in flight hold, and the charges since the first of the current month (UTC).",
        "tags": ["Company Data"],
        "responses": {
            "200": {"description": "The account.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}},
        }
    })
}

/// The OpenAPI operation of `PATCH /v1/account`.
fn update_account_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "Change the account's settings: the low-balance threshold",
        "description": "Free. A JSON Merge Patch (RFC 7396; `application/merge-patch+json` or `application/json`): a member sent replaces the setting, `null` removes it. With a threshold set, the account's webhook endpoints that want `account.balance_low` are told once each time a charge takes the balance below it (at once when the threshold is set above the balance); a grant that lifts the balance to the threshold or above lets the next fall tell them again. Answers the account as `GET` does.",
        "tags": ["Webhooks"],
        "requestBody": {"required": true, "content": {
            "application/merge-patch+json": {"schema": {"$ref": "#/components/schemas/AccountUpdate"}},
            "application/json": {"schema": {"$ref": "#/components/schemas/AccountUpdate"}}
        }},
        "responses": {
            "200": {"description": "The account, with the settings applied.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Account"}}}},
            "400": error_response("Invalid body; `details` lists every problem."),
            "408": error_response("The request body did not arrive within the body time-out."),
            "413": error_response(&format!("Request body larger than {MAX_SETTINGS_BYTES} bytes.")),
            "415": error_response("The body is not sent as JSON."),
        }
    })
}
