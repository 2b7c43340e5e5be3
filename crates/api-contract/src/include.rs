//! `include`: the parts of a record a request must ask for by name, because each costs the origin more requests
//! per company than the page itself.

/// One part of a record fetched only when a request names it in `include` (company data, bulk jobs, resolve with
/// `enrich`). Each costs one more origin request per company fetched live, and no credits: the contract prices
/// per company.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Include {
    /// `job_count`: the company's open jobs, read from the network's guest job search filtered by the company's
    /// id (`/jobs/search?f_C=<company_id>`), with `job_count_is_lower_bound` when the search shows a floor
    /// ("2,000+") and the search's own `fetched_at` in the record's `provenance`.
    JobCount,
}

impl Include {
    /// Every part, in the order the documentation lists them.
    pub const ALL: [Include; 1] = [Include::JobCount];

    /// The name a request sends: `job_count`.
    pub fn as_str(self) -> &'static str {
        match self {
            Include::JobCount => "job_count",
        }
    }

    /// The part named `name`, as a request sends it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|part| part.as_str() == name)
    }
}

/// The parts one request includes: a set of [`Include`]s (empty by default, which fetches only the page).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Includes {
    job_count: bool,
}

impl Includes {
    /// Nothing beyond the page.
    pub const NONE: Includes = Includes { job_count: false };

    /// The set of the parts `sent` names (a part named twice is the part once).
    pub fn of(sent: &[Include]) -> Self {
        let mut includes = Self::NONE;
        for part in sent {
            match part {
                Include::JobCount => includes.job_count = true,
            }
        }
        includes
    }

    /// Whether the set holds `part`.
    pub fn contains(self, part: Include) -> bool {
        match part {
            Include::JobCount => self.job_count,
        }
    }

    /// True when nothing beyond the page is asked for.
    pub fn is_empty(self) -> bool {
        self == Self::NONE
    }

    /// The parts held, in [`Include::ALL`]'s order (as a request would send them, and as a store keeps them).
    pub fn parts(self) -> Vec<Include> {
        Include::ALL
            .into_iter()
            .filter(|part| self.contains(*part))
            .collect()
    }

    /// The parts' names joined with commas (`job_count`), empty for none: the form a store keeps.
    pub fn to_names(self) -> String {
        self.parts()
            .iter()
            .map(|part| part.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The set [`Includes::to_names`] wrote; names it does not know (written by a newer server) are skipped.
    pub fn from_names(names: &str) -> Self {
        let parts: Vec<Include> = names
            .split(',')
            .filter_map(|name| Include::from_name(name.trim()))
            .collect();
        Self::of(&parts)
    }
}

/// `include`'s schema: distinct [`Include`] names, listed as an `enum` (so a name that is not one is refused
/// with the names that are).
pub(crate) fn include_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = Include::ALL.iter().map(|part| part.as_str()).collect();
    schemars::json_schema!({
        "type": "array",
        "items": {"type": "string", "enum": names},
        "maxItems": Include::ALL.len(),
        "uniqueItems": true,
        "examples": [["job_count"]],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_the_stored_form() {
        assert_eq!(Includes::NONE.to_names(), "");
        assert_eq!(Includes::from_names(""), Includes::NONE);
        let jobs = Includes::of(&[Include::JobCount, Include::JobCount]);
        assert!(jobs.contains(Include::JobCount));
        assert_eq!(jobs.to_names(), "job_count");
        assert_eq!(Includes::from_names("job_count"), jobs);
        assert_eq!(Includes::from_names("job_count,later_part"), jobs);
        assert_eq!(
            serde_json::to_string(&jobs.parts()).expect("serializes"),
            r#"["job_count"]"#
        );
    }
}
