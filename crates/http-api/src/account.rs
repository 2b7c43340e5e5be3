//! `GET /v1/account`: the caller's account, balance, credits held and usage this month. Free.

use http::{Request, StatusCode};
use http_serve::Response;

use company_lookup::LookupError;

use crate::api::Api;
use crate::error::ApiError;
use crate::respond::json_response;

impl Api {
    /// `GET /v1/account`: 200 with [`credit_ledger::AccountSummary`]; nothing is charged.
    pub(crate) async fn account<B>(&self, request: &Request<B>) -> Result<Response, ApiError> {
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        let summary = credit_ledger::account_summary(
            self.lookup().ledger().as_ref(),
            caller.account,
            jiff::Timestamp::now(),
        )
        .await
        .map_err(LookupError::Ledger)?
        // A verified key's account always exists; a missing one is the store's inconsistency.
        .ok_or_else(|| {
            LookupError::Ledger(credit_ledger::LedgerError::Backend(
                "the key's account is missing".into(),
            ))
        })?;
        Ok(json_response(StatusCode::OK, &summary))
    }
}
