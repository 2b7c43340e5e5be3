//! The domain model of the company-data service: the company record (spec 2.3) as the parser fills it
//! ([`CompanyRecord`]) and the stores keep it ([`RecordJson`], the record's JSON text, served without parsing it
//! again); what else a lookup yields ([`RecordSource`], [`UnresolvedCode`]); a page's history of records
//! ([`CompanyHistory`], the members a watch compares); the one rule for comparing company names
//! ([`name_key`]); and the account that owns keys and credits ([`AccountId`]).
//!
//! Plain data with serde, no I/O. Not here: the API's request, response and error bodies and their validation
//! (the `api-contract` crate, above this one), how pages are fetched or parsed, prices, storage, HTTP. A crate
//! that only reads or writes records (the parser, the snapshot cache) depends on this one alone, so a change to
//! the wire contract does not rebuild it.
//!
//! ```
//! use company_model::{CompanyRecord, RecordJson};
//!
//! let record = CompanyRecord { company_name: Some("Audiense".into()), ..CompanyRecord::default() };
//! let stored = RecordJson::from_record(&record);
//! assert_eq!(stored.as_str(), r#"{"company_name":"Audiense"}"#);
//! assert_eq!(stored.to_record().expect("a record"), record);
//! ```
#![deny(missing_docs)]

mod history;
mod names;
mod outcome;
mod record;
mod record_json;

pub use history::{
    CHANGE_FIELDS, CompanyHistory, FieldChange, HistoryPoint, WATCH_FIELDS, change_fields_text,
    changed_members,
};
pub use names::{LEGAL_SUFFIXES, name_key, name_slugs};
pub use outcome::{RecordSource, UnresolvedCode};
pub use record::{
    Address, CompanyRecord, Employee, FundingInfo, FundingRound, Location, OpenMembers, PageCard,
    PostAuthor, Product, Update,
};
pub use record_json::{Members, NotARecord, RECORD_FORMAT, RecordJson};

/// The id of a customer account: the owner of API keys and of a credit balance.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct AccountId(pub i64);

impl AccountId {
    /// The account's test twin: the account a test-mode key (`cdk_test_…`) acts for. Its id is the live
    /// account's negated, so every store keyed by account (jobs, watches, webhook endpoints, idempotency
    /// records) keeps test data apart from live data without a column of its own, and the ledger can tell a
    /// test account by its id alone.
    /// Account ids start at 1 (a store's serial); the id 0 has no twin and reads as live.
    #[must_use]
    pub fn test_twin(self) -> Self {
        // Saturating: no id overflows (`i64::MIN.abs()` would), whatever a row or a test holds.
        Self(-self.0.saturating_abs())
    }

    /// Whether this is a test twin ([`AccountId::test_twin`]).
    pub fn is_test(self) -> bool {
        self.0 < 0
    }

    /// The live account: itself, or the account a test twin belongs to.
    #[must_use]
    pub fn live(self) -> Self {
        Self(self.0.saturating_abs())
    }
}

impl std::fmt::Display for AccountId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::AccountId;

    #[test]
    fn twins_and_live_accounts_map_both_ways_without_overflow() {
        let account = AccountId(42);
        assert!(account.test_twin().is_test() && !account.is_test());
        assert_eq!(account.test_twin().live(), account);
        assert_eq!(account.test_twin().test_twin(), account.test_twin());
        for extreme in [AccountId(i64::MIN), AccountId(i64::MAX)] {
            assert!(extreme.test_twin().is_test());
            assert!(!extreme.live().is_test());
        }
    }
}
