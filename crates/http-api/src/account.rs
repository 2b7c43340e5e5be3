//! `/v1/account`: the caller's account, balance, credits held and usage this month (`GET`), and its settings
//! (`PATCH`: the low-balance threshold). Free.

use credit_ledger::{AccountSettings, AccountSummary, LedgerError, MAX_SETTINGS_BYTES};
use http::{Request, StatusCode};
use http_serve::Response;

use company_lookup::LookupError;
use company_model::AccountId;

use crate::api::Api;
use crate::error::ApiError;
use crate::request::require_json;
use crate::respond::json_response;

impl Api {
    /// `GET /v1/account`: 200 with [`credit_ledger::AccountSummary`]; nothing is charged.
    pub(crate) async fn account<B>(&self, request: &Request<B>) -> Result<Response, ApiError> {
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        Ok(json_response(
            StatusCode::OK,
            &self.summary(caller.account).await?,
        ))
    }

    /// `PATCH /v1/account`: applies [`AccountSettings`] (a JSON Merge Patch), then answers as `GET` does.
    pub(crate) async fn update_account<B>(&self, request: Request<B>) -> Result<Response, ApiError>
    where
        B: hyper::body::Body + Unpin,
    {
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        require_json(request.headers())?;
        let body = http_serve::read_body(request, MAX_SETTINGS_BYTES, self.body_timeout()).await?;
        let settings = AccountSettings::from_json(&body)?;
        if let Some(threshold) = settings.low_balance_threshold {
            self.lookup()
                .ledger()
                .set_low_balance_threshold(caller.account, threshold)
                .await
                .map_err(LookupError::Ledger)?;
        }
        Ok(json_response(
            StatusCode::OK,
            &self.summary(caller.account).await?,
        ))
    }

    async fn summary(&self, account: AccountId) -> Result<AccountSummary, ApiError> {
        Ok(credit_ledger::account_summary(
            self.lookup().ledger().as_ref(),
            account,
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
