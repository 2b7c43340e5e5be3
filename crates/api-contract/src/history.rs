//! The answer of `GET /v1/network/company-data/history`.

use company_model::CompanyHistory;
use serde::Serialize;

/// The 200 body of `GET /v1/network/company-data/history`: the company-data endpoint's `message` and
/// `status_code`, then the history's members, in that order.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "CompanyHistory")]
pub struct HistoryResponse {
    /// Always `Success`.
    pub message: &'static str,
    /// The HTTP status, 200.
    pub status_code: u16,
    /// The history.
    #[serde(flatten)]
    pub history: CompanyHistory,
}

impl HistoryResponse {
    /// The body of a history found.
    pub fn new(history: CompanyHistory) -> Self {
        Self {
            message: "Success",
            status_code: 200,
            history,
        }
    }
}
