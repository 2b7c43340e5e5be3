//! Whether a page is the query's: the checks of a page's record against a domain or a name with its hints, and
//! what a page that passes is worth. Pure: no I/O, each check's outcome one [`Evidence`] entry.

use std::collections::HashSet;

use api_contract::{Evidence, ResolveMethod};
use company_model::{CompanyRecord, name_key};
use page_url::PageUrl;

use crate::{MIN_CONFIDENCE, confidence};

/// What a page is checked against.
pub(crate) enum Expect<'a> {
    /// A domain query: the page's website must be on `queried`, or on a domain the queried site redirected to.
    Domain {
        queried: &'a str,
        accepted: &'a HashSet<String>,
    },
    /// A name query, with its hints.
    Name {
        key: &'a str,
        location: Option<&'a str>,
        domain: Option<&'a str>,
    },
}

/// The outcome of checking one page.
pub(crate) struct Verdict {
    /// Whether the page may be returned (its confidence is at least [`MIN_CONFIDENCE`]).
    pub(crate) passed: bool,
    /// What the page is worth: its confidence when it passed, else what it is listed with among the candidates.
    pub(crate) confidence: f64,
    /// What the checks found.
    pub(crate) evidence: Evidence,
}

/// Checks `page`, whose record is `record`, found by `method`, against `expect`.
pub(crate) fn verdict(
    page: &PageUrl,
    record: &CompanyRecord,
    method: ResolveMethod,
    expect: &Expect<'_>,
) -> Verdict {
    let url = Some(page.as_str().to_owned());
    let page_domain = page_domain(record);
    let shown = record
        .website
        .clone()
        .unwrap_or_else(|| "no website".to_owned());
    let rejected = |step: &str, value: Option<String>, note: String| Verdict {
        passed: false,
        confidence: confidence::UNVERIFIED,
        evidence: Evidence {
            step: step.to_owned(),
            url: url.clone(),
            value,
            note,
        },
    };
    match expect {
        Expect::Domain { queried, accepted } => {
            let Some(domain) = page_domain else {
                return rejected(
                    "website",
                    None,
                    "the page shows no website: not taken".to_owned(),
                );
            };
            let exact = domain == *queried;
            if !exact && !accepted.contains(&domain) {
                return rejected(
                    "website",
                    Some(shown),
                    format!("the page's website is on {domain}, not {queried}: not taken"),
                );
            }
            let score = rounded(confidence::of_domain_match(method, exact));
            Verdict {
                passed: true,
                confidence: score,
                evidence: Evidence {
                    step: "website".to_owned(),
                    url,
                    value: Some(shown),
                    note: if exact {
                        format!("the page's website is on {queried}: verified ({score})")
                    } else {
                        format!(
                            "the page's website is on {domain}, where {queried} redirects: verified ({score})"
                        )
                    },
                },
            }
        }
        Expect::Name {
            key,
            location,
            domain: hint,
        } => {
            let page_name = record.company_name.clone().unwrap_or_default();
            if name_key(&page_name) != *key {
                return rejected(
                    "name",
                    Some(page_name.clone()),
                    format!("the page is named `{page_name}`, not `{key}` once folded: not taken"),
                );
            }
            let mut score = confidence::NAME;
            let mut notes = vec![format!("the page is named `{page_name}`")];
            if let Some(hint) = hint {
                if page_domain.as_deref() != Some(*hint) {
                    return rejected(
                        "website",
                        Some(shown),
                        format!(
                            "the page's website is not on {hint}, the query's domain: not taken"
                        ),
                    );
                }
                score = confidence::NAME_AND_DOMAIN;
                notes.push(format!("its website is on {hint}"));
            }
            if let Some(location) = location {
                let places = places_of(record);
                if places.is_empty() {
                    notes.push("it shows no location to compare".to_owned());
                } else if places.iter().any(|p| place_matches(p, location)) {
                    score = rounded((score + confidence::LOCATION_BONUS).min(confidence::MOST));
                    notes.push(format!("it shows an address in {location}"));
                } else {
                    score = score.min(confidence::LOCATION_MISMATCH);
                    notes.push(format!("none of its addresses is in {location}"));
                }
            }
            Verdict {
                passed: score >= MIN_CONFIDENCE,
                confidence: score,
                evidence: Evidence {
                    step: "name".to_owned(),
                    url,
                    value: Some(page_name),
                    note: format!("{} ({score})", notes.join("; ")),
                },
            }
        }
    }
}

/// The registrable domain a page's record shows: its `domain` (where a shortened link lands, when the
/// service followed it), else its website's.
fn page_domain(record: &CompanyRecord) -> Option<String> {
    record
        .domain
        .as_deref()
        .map(|d| d.trim().trim_end_matches('.').to_ascii_lowercase())
        .filter(|d| !d.is_empty())
        .or_else(|| {
            record
                .website
                .as_deref()
                .and_then(page_scraper::registrable_domain)
        })
}

/// A confidence as answered: two decimals.
fn rounded(score: f64) -> f64 {
    (score * 100.0).round() / 100.0
}

/// The address texts of a record: its headquarters' parts and each location's lines.
fn places_of(record: &CompanyRecord) -> Vec<String> {
    let mut places = Vec::new();
    if let Some(hq) = &record.headquarters {
        for part in [&hq.full_address, &hq.locality, &hq.region, &hq.country]
            .into_iter()
            .flatten()
        {
            places.push(part.clone());
        }
    }
    for location in &record.locations {
        for part in [&location.full_address, &location.city_state_postal_country]
            .into_iter()
            .flatten()
        {
            places.push(part.clone());
        }
    }
    places
}

/// Whether `location` (a country, region or city as a person writes it) names `place` or one of its
/// comma-separated parts, compared as [`fold`] reads them; common country names and their codes are one.
fn place_matches(place: &str, location: &str) -> bool {
    let wanted = country_alias(&fold(location));
    let parts: Vec<String> = place.split(',').map(|p| fold(p.trim())).collect();
    parts.iter().any(|part| {
        country_alias(part) == wanted
            || part.split(' ').any(|word| country_alias(word) == wanted)
            || (wanted.len() > 3 && part.contains(&wanted))
    })
}

/// Lower case, accents and surrounding spaces removed.
pub(crate) fn fold(text: &str) -> String {
    company_model::name_key(text)
}

/// A country's two-letter code for its common names (`united states`, `usa` → `us`), else the text.
fn country_alias(text: &str) -> String {
    let code = match text {
        "united states" | "united states of america" | "usa" => "us",
        "united kingdom" | "great britain" | "england" | "gb" => "uk",
        "germany" | "deutschland" => "de",
        "france" => "fr",
        "spain" | "espana" => "es",
        "brazil" | "brasil" => "br",
        "japan" => "jp",
        "india" => "in",
        "canada" => "ca",
        "australia" => "au",
        "netherlands" | "the netherlands" | "nederland" => "nl",
        "ireland" => "ie",
        "italy" | "italia" => "it",
        "switzerland" | "schweiz" | "suisse" => "ch",
        other => other,
    };
    code.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use company_model::Address;
    use page_url::NetworkDomain;

    fn page(slug: &str) -> PageUrl {
        PageUrl::from_path(&format!("/company/{slug}"), &NetworkDomain::default()).expect("a page")
    }

    fn record(name: &str, website: &str, country: &str) -> CompanyRecord {
        CompanyRecord {
            company_name: Some(name.to_owned()),
            website: Some(format!("https://{website}/")),
            headquarters: Some(Address {
                locality: Some("Berlin".to_owned()),
                country: Some(country.to_owned()),
                ..Address::default()
            }),
            ..CompanyRecord::default()
        }
    }

    #[test]
    fn a_page_is_taken_for_a_domain_only_when_its_website_is_on_it_or_where_it_redirects() {
        let accepted = HashSet::from(["acme.test".to_owned(), "acme-new.test".to_owned()]);
        let expect = Expect::Domain {
            queried: "acme.test",
            accepted: &accepted,
        };
        let linked = verdict(
            &page("acme"),
            &record("Acme", "www.acme.test", "DE"),
            ResolveMethod::SiteLink,
            &expect,
        );
        assert!(linked.passed && (linked.confidence - 0.99).abs() < 1e-9);
        let moved = verdict(
            &page("acme"),
            &record("Acme", "acme-new.test", "DE"),
            ResolveMethod::DomainSlug,
            &expect,
        );
        assert!(
            moved.passed && (moved.confidence - 0.89).abs() < 1e-9,
            "{}",
            moved.evidence.note
        );
        let partner = verdict(
            &page("partner"),
            &record("Partner", "partner.test", "DE"),
            ResolveMethod::SiteLink,
            &expect,
        );
        assert!(!partner.passed);
        assert!(
            partner
                .evidence
                .note
                .contains("partner.test, not acme.test")
        );
    }

    #[test]
    fn a_name_passes_by_its_folded_form_and_its_hints() {
        let acme = record("ACME Widgets GmbH", "acme.test", "Germany");
        let by_name = |location: Option<&str>, domain: Option<&str>| {
            verdict(
                &page("acme-widgets"),
                &acme,
                ResolveMethod::NameSlug,
                &Expect::Name {
                    key: "acme widgets",
                    location,
                    domain,
                },
            )
        };
        assert!((by_name(None, None).confidence - 0.85).abs() < 1e-9);
        assert!(
            (by_name(Some("DE"), None).confidence - 0.9).abs() < 1e-9,
            "the code names the country"
        );
        assert!((by_name(Some("berlin"), Some("acme.test")).confidence - 0.99).abs() < 1e-9);
        let elsewhere = by_name(Some("France"), None);
        assert!(!elsewhere.passed && (elsewhere.confidence - 0.75).abs() < 1e-9);
        assert!(!by_name(None, Some("other.test")).passed);
        let other = verdict(
            &page("acme"),
            &record("Acme Rockets", "acme.test", "US"),
            ResolveMethod::NameSlug,
            &Expect::Name {
                key: "acme widgets",
                location: None,
                domain: None,
            },
        );
        assert!(!other.passed);
    }
}
