//! Change over time: a page's counts as points, and which record members changed between two snapshots
//! (`GET /v1/network/company-data/history`, watches).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::{CompanyRecord, RecordJson};

/// Every top-level record member a watch may name in its `fields`: first the [`CHANGE_FIELDS`], then the counts
/// that move on most fetches (`follower_count`, `employee_count_on_li`), then `job_count`, which is not on the page
/// (a watch that names it fetches it with each refresh: `include`). Names as in the record's JSON.
pub const WATCH_FIELDS: [&str; 22] = [
    "company_name",
    "company_id",
    "final_li_url",
    "domain",
    "website",
    "logo",
    "banner_img",
    "description",
    "slogan",
    "industries",
    "type",
    "founded",
    "company_size",
    "specialties",
    "headquarters",
    "locations",
    "funding_info",
    "products",
    "affiliated_pages",
    "follower_count",
    "employee_count_on_li",
    "job_count",
];

/// The [`WATCH_FIELDS`] read from the page itself: all but `job_count` (what a parse can fill, which the
/// parser's field coverage counts).
pub const PAGE_FIELDS: &[&str] = WATCH_FIELDS.split_at(21).0;

/// The members whose difference between two snapshots is a change: history's `changes`, and what a watch
/// compares when it names no `fields`. Not the counts (they are history's `points`), nor the sections that differ
/// on nearly every fetch (`updates`, `similar_pages`, `employees_on_li`, `job_count`).
pub const CHANGE_FIELDS: &[&str] = WATCH_FIELDS.split_at(19).0;

/// One snapshot's counts (history `points`): members absent when the page did not show them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HistoryPoint {
    /// When the page was fetched (RFC 3339).
    pub fetched_at: jiff::Timestamp,
    /// Followers on the network (record `follower_count`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follower_count: Option<u64>,
    /// Members who list the company as employer (record `employee_count_on_li`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub employee_count_on_li: Option<u64>,
    /// The size band as shown (record `company_size`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_size: Option<String>,
    /// Open jobs (record `job_count`): only for fetches that included it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_count: Option<u64>,
    /// With `job_count`: whether it is a floor the job search showed (record `job_count_is_lower_bound`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_count_is_lower_bound: Option<bool>,
}

impl HistoryPoint {
    /// The point of a record fetched at `fetched_at`.
    pub fn of(record: &CompanyRecord, fetched_at: jiff::Timestamp) -> Self {
        Self {
            fetched_at,
            follower_count: record.follower_count,
            employee_count_on_li: record.employee_count_on_li,
            company_size: record.company_size.clone(),
            job_count: record.job_count,
            job_count_is_lower_bound: record.job_count_is_lower_bound,
        }
    }
}

/// One member that differs between two snapshots: its JSON value before and after (`null` when the page did
/// not show it).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FieldChange {
    /// When the snapshot that first showed `after` was fetched.
    pub fetched_at: jiff::Timestamp,
    /// The record member, e.g. `website` (one a watch can follow: `WATCH_FIELDS`).
    pub field: String,
    /// Its value in the earlier snapshot.
    pub before: Value,
    /// Its value in the later one.
    pub after: Value,
}

/// The members of `fields` whose values differ between `before` and `after`, in the order of `fields`, each
/// stamped `fetched_at` (when `after` was fetched). Records that are not JSON objects compare as empty.
pub fn changed_members(
    before: &RecordJson,
    after: &RecordJson,
    fields: &[&str],
    fetched_at: jiff::Timestamp,
) -> Vec<FieldChange> {
    let (before, after) = (members(before), members(after));
    fields
        .iter()
        .filter_map(|field| {
            let old = before.get(*field).unwrap_or(&Value::Null);
            let new = after.get(*field).unwrap_or(&Value::Null);
            (old != new).then(|| FieldChange {
                fetched_at,
                field: (*field).to_owned(),
                before: old.clone(),
                after: new.clone(),
            })
        })
        .collect()
}

/// The [`CHANGE_FIELDS`] of `record` as one JSON object text with its members in a fixed order: two snapshots
/// with equal texts show no change. Stores keep a digest of it to store a snapshot's record only when it
/// changed.
pub fn change_fields_text(record: &RecordJson) -> String {
    let all = members(record);
    let kept: Map<String, Value> = CHANGE_FIELDS
        .iter()
        .filter_map(|field| all.get(*field).map(|v| ((*field).to_owned(), v.clone())))
        .collect();
    Value::Object(kept).to_string()
}

fn members(record: &RecordJson) -> Map<String, Value> {
    serde_json::from_str(record.as_str()).unwrap_or_default()
}

/// A page's history (`GET /v1/network/company-data/history`): its points and its changes, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CompanyHistory {
    /// The page the history belongs to (the URL it resolved to).
    pub final_li_url: String,
    /// One point per stored fetch inside the range asked for.
    pub points: Vec<HistoryPoint>,
    /// Every member that changed between consecutive snapshots (of those a watch follows by default,
    /// `CHANGE_FIELDS`), for the snapshots fetched inside the range (the earlier snapshot may be older).
    pub changes: Vec<FieldChange>,
}

impl CompanyHistory {
    /// The history of `final_li_url` from its `points` and its distinct records `states` (each with when it was
    /// first fetched, oldest first), limited to fetches in `from..=to`.
    pub fn new(
        final_li_url: String,
        points: Vec<HistoryPoint>,
        states: &[(jiff::Timestamp, RecordJson)],
        from: jiff::Timestamp,
        to: jiff::Timestamp,
    ) -> Self {
        let in_range = |at: jiff::Timestamp| from <= at && at <= to;
        let points = points
            .into_iter()
            .filter(|p| in_range(p.fetched_at))
            .collect();
        let changes = states
            .windows(2)
            .filter(|pair| in_range(pair[1].0))
            .flat_map(|pair| changed_members(&pair[0].1, &pair[1].1, CHANGE_FIELDS, pair[1].0))
            .collect();
        Self {
            final_li_url,
            points,
            changes,
        }
    }

    /// True when the range holds neither a point nor a change (nothing is charged for it).
    pub fn is_empty(&self) -> bool {
        self.points.is_empty() && self.changes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(json: &str) -> RecordJson {
        RecordJson::from_stored(json.to_owned()).expect("object")
    }

    #[test]
    fn change_fields_are_the_watch_fields_without_the_counts() {
        assert!(CHANGE_FIELDS.contains(&"affiliated_pages"));
        let counts = ["follower_count", "employee_count_on_li", "job_count"];
        assert!(counts.iter().all(|count| !CHANGE_FIELDS.contains(count)));
        assert_eq!(WATCH_FIELDS.len(), CHANGE_FIELDS.len() + counts.len());
        assert_eq!(WATCH_FIELDS[CHANGE_FIELDS.len()..], counts);
        assert_eq!(
            PAGE_FIELDS,
            &WATCH_FIELDS[..WATCH_FIELDS.len() - 1],
            "all but job_count, which no page shows"
        );
    }

    #[test]
    fn members_that_differ_are_listed_with_both_values() {
        let at = jiff::Timestamp::UNIX_EPOCH;
        let before =
            record(r#"{"company_name":"A","website":"https://a.example","follower_count":1}"#);
        let after = record(r#"{"company_name":"A","industries":"Software","follower_count":2}"#);
        let changes = changed_members(&before, &after, CHANGE_FIELDS, at);
        let named: Vec<(&str, &Value, &Value)> = changes
            .iter()
            .map(|c| (c.field.as_str(), &c.before, &c.after))
            .collect();
        assert_eq!(
            named,
            [
                ("website", &Value::from("https://a.example"), &Value::Null),
                ("industries", &Value::Null, &Value::from("Software")),
            ]
        );
        assert_eq!(
            change_fields_text(&before),
            change_fields_text(&record(
                r#"{"follower_count":9,"website":"https://a.example","company_name":"A"}"#
            )),
            "counts and member order do not count"
        );
    }
}
