//! The domain model of the company-data service: the company record (spec 2.3) as the parser fills it
//! ([`CompanyRecord`]) and the stores keep it ([`RecordJson`], the record's JSON text, served without parsing it
//! again); what else a lookup yields ([`RecordSource`], [`UnresolvedCode`]); a page's history of records
//! ([`CompanyHistory`], the members a watch compares); the one rule for comparing company names
//! ([`name_key`]); a record's compact row as a search lists it ([`CompanyRow`]) and how searched text is folded
//! ([`search_words`]); and whose data a request works on: the account
//! that owns keys and credits ([`AccountId`]) in a [`Mode`] (live or test), a [`Tenant`].
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
mod search;
mod tenant;

pub use history::{
    CHANGE_FIELDS, CompanyHistory, FieldChange, HistoryPoint, PAGE_FIELDS, WATCH_FIELDS,
    change_fields_text, changed_members,
};
pub use names::{LEGAL_SUFFIXES, name_key, name_slugs};
pub use outcome::{RecordSource, UnresolvedCode};
pub use record::{
    Address, CompanyRecord, Employee, FundingInfo, FundingRound, Location, OpenMembers, PageCard,
    PartProvenance, PostAuthor, Product, Provenance, Update,
};
pub use record_json::{Members, NotARecord, RECORD_FORMAT, RecordJson};
pub use search::{
    CompanyRow, GROWTH_DAYS, MAX_WORD_BYTES, PREFIX_MIN_CHARS, Range, RangeEnd, RowPlace,
    SearchAfter, SearchPage, SearchQuery, SearchScope, SearchSort, fold_label, search_text,
    search_words,
};
pub use tenant::{AccountId, Mode, Tenant};
