//! The compact form of a record that a search answers ([`CompanyRow`]), and the one rule for how text is compared
//! when it is searched ([`search_words`], [`fold_label`]).

use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::CompanyRecord;

/// A company as a search lists it: who it is, what it does, how big, where, and when its page was fetched. Every
/// member is the record's own, under the record's name, so a client that reads records reads rows; the whole
/// record is one stored lookup of `final_li_url` away.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CompanyRow {
    /// The page's canonical URL: the snapshot's URL (the page the fetch resolved to).
    pub final_li_url: String,
    /// Display name (the record's `company_name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_name: Option<String>,
    /// The network's organization id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_id: Option<u64>,
    /// Registrable domain of the website, e.g. `audiense.com`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// The company's website as the page links it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website: Option<String>,
    /// Logo image URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logo: Option<String>,
    /// Primary industry as the network labels it, e.g. `Software Development`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub industries: Option<String>,
    /// Organization type as shown, e.g. `Privately Held`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub company_type: Option<String>,
    /// Founding year.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub founded: Option<i32>,
    /// The network's size band as shown, e.g. `51-200 employees`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_size: Option<String>,
    /// Members on the network who list the company as employer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub employee_count_on_li: Option<u64>,
    /// Followers of the page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follower_count: Option<u64>,
    /// Where the headquarters are: the record's `headquarters` with its `country`, `region` and `locality` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headquarters: Option<RowPlace>,
    /// When the page was fetched from the network (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched_at: Option<jiff::Timestamp>,
}

/// Where a [`CompanyRow`]'s headquarters are (members of the record's `headquarters`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RowPlace {
    /// Two-letter country code, e.g. `US`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// State or region as shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// City as shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locality: Option<String>,
}

impl CompanyRow {
    /// The row of `record`, the snapshot of page `final_li_url` fetched at `fetched_at`.
    pub fn of(final_li_url: &str, record: &CompanyRecord, fetched_at: jiff::Timestamp) -> Self {
        let headquarters = record.headquarters.as_ref().map(|hq| RowPlace {
            country: hq.country.clone(),
            region: hq.region.clone(),
            locality: hq.locality.clone(),
        });
        Self {
            final_li_url: final_li_url.to_owned(),
            company_name: record.company_name.clone(),
            company_id: record.company_id,
            domain: record.domain.clone(),
            website: record.website.clone(),
            logo: record.logo.clone(),
            industries: record.industries.clone(),
            company_type: record.company_type.clone(),
            founded: record.founded,
            company_size: record.company_size.clone(),
            employee_count_on_li: record.employee_count_on_li,
            follower_count: record.follower_count,
            headquarters: headquarters.filter(|place| *place != RowPlace::default()),
            fetched_at: Some(fetched_at),
        }
    }
}

/// A label as a filter compares it (industry, size band, type, country, region, city, specialty): NFKD with
/// accents dropped, lower case, whitespace runs as one space, trimmed. `Zürich` and ` zurich ` are one label;
/// `Software Development` and `Software` are not.
///
/// ```
/// assert_eq!(company_model::fold_label("  Zürich "), "zurich");
/// assert_eq!(company_model::fold_label("Software  Development"), "software development");
/// ```
pub fn fold_label(label: &str) -> String {
    let folded: String = label
        .nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect();
    folded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The words of a text as full-text search indexes and matches them: [`fold_label`]'s folding, then split at
/// every character that is not a letter or digit. Both engines index these words and nothing else, so SQLite
/// and PostgreSQL find the same companies for the same query.
///
/// ```
/// assert_eq!(company_model::search_words("Cloud-native Security, Inc."), ["cloud", "native", "security", "inc"]);
/// ```
pub fn search_words(text: &str) -> Vec<String> {
    fold_label(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}
