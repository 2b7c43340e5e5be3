//! The company record of spec 2.3 and its open objects.
//!
//! Every field is optional: a value the page does not show is absent from the JSON, never `null`, `""` or
//! `[]`. Open objects carry their known members as fields (names from `shared/spec/record-members.md`, which
//! existing clients read) and anything else the page shows in [`OpenMembers`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Members of an open object beyond the known ones, in the same camelCase style.
pub type OpenMembers = BTreeMap<String, serde_json::Value>;

/// One company, school or showcase page as a record (spec 2.3, "Company result" minus the per-request members
/// that the API contract's `CompanyResult` adds).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CompanyRecord {
    /// Display name: JSON-LD `Organization.name`, else the top card's `h1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_name: Option<String>,
    /// The network's organization id, from `urn:li:organization:<id>` on the page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_id: Option<u64>,
    /// Canonical URL of the page that was parsed (`https://www.<network>/company/<slug>`), after redirects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub final_li_url: Option<String>,
    /// Registrable domain of `website`, e.g. `audiense.com` (public-suffix aware).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// The company's website as the page links it, unwrapped from the network's redirect link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website: Option<String>,
    /// Logo image URL (JSON-LD `Organization.logo.contentUrl`, else the top card image).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logo: Option<String>,
    /// Cover (banner) image URL, from the top card's cover image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub banner_img: Option<String>,
    /// The "About us" description (JSON-LD `Organization.description`, else the About section text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Tagline (JSON-LD `Organization.slogan`, else the top card's second subline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slogan: Option<String>,
    /// Primary industry as the network labels it, e.g. `Software Development`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub industries: Option<String>,
    /// Organization type as shown, e.g. `Public Company`, `Privately Held`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub company_type: Option<String>,
    /// Founding year, e.g. `2011`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub founded: Option<i32>,
    /// The network's size bucket as shown, e.g. `51-200 employees`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_size: Option<String>,
    /// Members on the network who list the company as employer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub employee_count_on_li: Option<u64>,
    /// Followers on the network.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follower_count: Option<u64>,
    /// School pages: members on the network who list the school in their education (the page's "N alumni").
    /// Absent on company and showcase pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alumni_count_on_li: Option<u64>,
    /// School pages: the students the page counts ("N students"), when it shows them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub student_count_on_li: Option<u64>,
    /// Showcase pages: the company page the showcase belongs to (`title`, `link`). Absent on company and school
    /// pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_company: Option<PageCard>,
    /// Open jobs: the count in the header of the network's guest job search filtered by the company's id
    /// (`/jobs/search?f_C=<company_id>`, `span.results-context-header__job-count`), fetched only when a request
    /// includes `job_count` (the company page itself shows no count), then kept with the snapshot, so a later
    /// stored answer has it whether that request includes it or not. See `provenance.job_count`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_count: Option<u64>,
    /// Set with `job_count`: true when the search shows a floor rather than the count ("2,000+" is
    /// `job_count: 2000` and `true`), false when it is the count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_count_is_lower_bound: Option<bool>,
    /// Specialties, split the way the page lists them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub specialties: Vec<String>,
    /// Primary headquarters address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headquarters: Option<Address>,
    /// Office locations of the "Locations" section.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<Location>,
    /// The "Funding" section.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub funding_info: Option<FundingInfo>,
    /// The "Products" section.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub products: Vec<Product>,
    /// Recent posts of the "Updates" section.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub updates: Vec<Update>,
    /// The "Similar pages" section.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub similar_pages: Vec<PageCard>,
    /// The "Affiliated pages" section (subsidiaries, showcases, acquired companies).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub affiliated_pages: Vec<PageCard>,
    /// The "Employees at" sample of member profiles.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub employees_on_li: Vec<Employee>,
    /// Where the parts fetched apart from the page come from, when and how each fetch went; absent when the
    /// snapshot was fetched without any (by requests without `include`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

/// The record's `provenance`: one entry per part of the record fetched apart from the page.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Provenance {
    /// `job_count` and `job_count_is_lower_bound`: the guest job search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_count: Option<PartProvenance>,
    /// Entries of parts this version does not know.
    #[serde(flatten)]
    pub other: OpenMembers,
}

/// How one part of the record was fetched: from where, when, and, when it could not be read, why. A part that
/// could not be read is absent from the record (never `null`); its entry says why.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PartProvenance {
    /// The page the part was read from, e.g. `https://www.linkedin.com/jobs/search?f_C=1441`; absent when
    /// nothing was fetched (the record has no `company_id` to search by).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_url: Option<String>,
    /// When the part was fetched (RFC 3339, UTC): its own time, a little after the page's `fetched_at`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub fetched_at: Option<jiff::Timestamp>,
    /// Why the part is absent, as an unresolved URL's `error` names it: `blocked`, `authwall`, `timed_out` or
    /// `fetch_failed` (asking again may read it), `unparseable` or `wrong_page_kind` (the search showed no count
    /// the parser reads), `not_found` (with `source_url`: the search is gone; without: the page shows no
    /// `company_id` to search by). Absent when it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<crate::UnresolvedCode>,
    /// With `error`: what happened and what to do, in a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A postal address (spec 2.3 `headquarters`); all members are strings as the page shows them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Address {
    /// The address on one line, its parts joined by `", "`, as the page shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_address: Option<String>,
    /// Street line (JSON-LD `PostalAddress.streetAddress`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub street: Option<String>,
    /// City (JSON-LD `addressLocality`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locality: Option<String>,
    /// State or region (JSON-LD `addressRegion`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Postal code (JSON-LD `postalCode`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    /// Two-letter country code (JSON-LD `addressCountry`), e.g. `US`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub other: OpenMembers,
}

/// One office of the "Locations" section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Location {
    /// First address line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub street: Option<String>,
    /// The last address line, e.g. `Mountain View, CA 94043, US`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub city_state_postal_country: Option<String>,
    /// All address lines joined by `", "`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_address: Option<String>,
    /// The "Get directions" map link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub get_directions_link: Option<String>,
    /// Other members (e.g. `isPrimary`).
    #[serde(flatten)]
    pub other: OpenMembers,
}

/// The "Funding" section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FundingInfo {
    /// Total rounds the page counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number_of_funding_rounds: Option<u32>,
    /// The most recent round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_round: Option<FundingRound>,
    /// Other members (e.g. `investors`).
    #[serde(flatten)]
    pub other: OpenMembers,
}

/// One funding round.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FundingRound {
    /// Round type as shown, e.g. `Series A`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub round_type: Option<String>,
    /// Date of the round, `YYYY-MM-DD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Amount as shown, e.g. `US$ 25.0M`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub money_raised: Option<String>,
    /// The amount in US dollars, when the page gives it in a form that can be read as a number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub money_raised_usd: Option<u64>,
    /// How exact `money_raised_usd` is, e.g. `estimate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub money_raised_usd_qualifier: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub other: OpenMembers,
}

/// One card of the "Products" section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Product {
    /// Product name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Product description or category as shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub other: OpenMembers,
}

/// A card that links another page (similar and affiliated pages).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PageCard {
    /// The page's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The page's canonical URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// Its industry as shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub industry: Option<String>,
    /// Its location as shown, e.g. `Uberlândia, MG`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// Its logo URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logo: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub other: OpenMembers,
}

/// One profile of the "Employees at" sample.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Employee {
    /// The person's name as shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Their headline as shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Their profile URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub other: OpenMembers,
}

/// The author of a post.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PostAuthor {
    /// Author name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Author page URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

/// One post of the "Updates" section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Update {
    /// The post's text, line breaks kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post_text: Option<String>,
    /// Relative age as shown: `1w`, `4mo`, `1y`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Reaction count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reactions: Option<u64>,
    /// Comment count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comments: Option<u64>,
    /// Image URLs of the post.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<String>,
    /// Who posted it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post_author: Option<PostAuthor>,
    /// Other members (`linksInPostText`, `header`, `nestedPost`, ...).
    #[serde(flatten)]
    pub other: OpenMembers,
}

impl CompanyRecord {
    /// The record's top-level members as JSON names them, in the record's order (`company_name`, `company_id`,
    /// `final_li_url`, …, `type` for [`CompanyRecord::company_type`]): read from the type's serde derive, so this
    /// is never a second list to keep in step.
    pub fn members() -> &'static [&'static str] {
        serde_aux::serde_introspection::serde_introspect::<CompanyRecord>()
    }
}

impl CompanyRecord {
    /// The names of [`CompanyRecord::flat`]'s columns, in order: the record's scalar members by their JSON names,
    /// `specialties` joined, the headquarters' parts as `headquarters_<part>`, and a showcase's parent company as
    /// `parent_company_title` and `parent_company_link`. A CSV of records (bulk job
    /// results, `company-data enrich`) uses these as its header.
    pub const FLAT_COLUMNS: [&'static str; 28] = [
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
        "employee_count_on_li",
        "follower_count",
        "job_count",
        "specialties",
        "headquarters_full_address",
        "headquarters_street",
        "headquarters_locality",
        "headquarters_region",
        "headquarters_postal_code",
        "headquarters_country",
        "alumni_count_on_li",
        "student_count_on_li",
        "parent_company_title",
        "parent_company_link",
        // Last, so that the columns before it stay where CSVs written before it had them.
        "job_count_is_lower_bound",
    ];

    /// Members that say something about another member, as (qualifier, member): a field selection that keeps the
    /// member keeps its qualifiers, so a count comes with whether it is a floor, and a missing count with why.
    /// `job_count_is_lower_bound` and `provenance` (where and when the count was read, or why it could not be)
    /// qualify `job_count`. Naming a qualifier alone keeps only it.
    pub const QUALIFIERS: [(&'static str, &'static str); 2] = [
        ("job_count_is_lower_bound", "job_count"),
        ("provenance", "job_count"),
    ];

    /// The record member a column of [`CompanyRecord::FLAT_COLUMNS`] comes from: `headquarters` for the
    /// `headquarters_<part>` columns, `parent_company` for `parent_company_title` and `_link`, else the column's
    /// own name. A field selection keeps the columns of the members it keeps.
    pub fn flat_column_member(column: &str) -> &str {
        ["headquarters", "parent_company"]
            .into_iter()
            .find(|member| {
                column
                    .strip_prefix(member)
                    .is_some_and(|rest| rest.starts_with('_'))
            })
            .unwrap_or(column)
    }

    /// The record as one row of [`CompanyRecord::FLAT_COLUMNS`]: numbers in decimal, booleans as `true` or
    /// `false`, `specialties` joined with `"; "`, an absent value as an empty string. Lists of objects (locations, updates, employees, ...) are left
    /// out: a row has no place for them.
    pub fn flat(&self) -> [String; 28] {
        let text = |value: &Option<String>| value.clone().unwrap_or_default();
        let number = |value: Option<u64>| value.map(|n| n.to_string()).unwrap_or_default();
        let hq = self.headquarters.clone().unwrap_or_default();
        let parent = self.parent_company.clone().unwrap_or_default();
        [
            text(&self.company_name),
            number(self.company_id),
            text(&self.final_li_url),
            text(&self.domain),
            text(&self.website),
            text(&self.logo),
            text(&self.banner_img),
            text(&self.description),
            text(&self.slogan),
            text(&self.industries),
            text(&self.company_type),
            self.founded.map(|n| n.to_string()).unwrap_or_default(),
            text(&self.company_size),
            number(self.employee_count_on_li),
            number(self.follower_count),
            number(self.job_count),
            self.specialties.join("; "),
            text(&hq.full_address),
            text(&hq.street),
            text(&hq.locality),
            text(&hq.region),
            text(&hq.postal_code),
            text(&hq.country),
            number(self.alumni_count_on_li),
            number(self.student_count_on_li),
            text(&parent.title),
            text(&parent.link),
            self.job_count_is_lower_bound
                .map(|floor| floor.to_string())
                .unwrap_or_default(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_values_are_omitted_not_null() {
        let record = CompanyRecord {
            company_name: Some("Audiense".into()),
            headquarters: Some(Address {
                locality: Some("London".into()),
                ..Address::default()
            }),
            ..CompanyRecord::default()
        };
        let json = serde_json::to_string(&record).expect("serializes");
        assert_eq!(
            json,
            r#"{"company_name":"Audiense","headquarters":{"locality":"London"}}"#
        );
    }

    #[test]
    fn member_names_match_what_clients_read() {
        let record = CompanyRecord {
            company_type: Some("Privately Held".into()),
            headquarters: Some(Address {
                full_address: Some("a".into()),
                postal_code: Some("b".into()),
                ..Address::default()
            }),
            locations: vec![Location {
                city_state_postal_country: Some("c".into()),
                get_directions_link: Some("d".into()),
                ..Location::default()
            }],
            ..CompanyRecord::default()
        };
        let value = serde_json::to_value(&record).expect("serializes");
        assert_eq!(value["type"], "Privately Held");
        assert_eq!(value["headquarters"]["fullAddress"], "a");
        assert_eq!(value["headquarters"]["postalCode"], "b");
        assert_eq!(value["locations"][0]["cityStatePostalCountry"], "c");
        assert_eq!(value["locations"][0]["getDirectionsLink"], "d");
        let back: CompanyRecord = serde_json::from_value(value).expect("round trip");
        assert_eq!(back, record);
    }
}
