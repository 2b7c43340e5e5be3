//! Where the company is: its headquarters (JSON-LD's `PostalAddress`, else the Locations section's "Primary"
//! entry split into its parts, else the About row) and its Locations entries.

use company_model::{Address, Location};
use scraper::ElementRef;
use serde_json::Value;

use super::page::{Page, Trail};
use crate::sections;
use crate::text::clean_line;

selectors! {
    LOCATION_ITEMS = r#"ul[data-impression-id="org-locations_show-more-less"] > li"#;
    LOCATION_ADDRESS = r#"div[id^="address-"]"#;
    LOCATION_LINES = r#"div[id^="address-"] > p"#;
    LOCATION_LINK = r#"a[data-tracking-control-name="org-locations_url"]"#;
    ANY = "*";
}

impl Page<'_> {
    /// The headquarters and the locations, each noted on `trail` with the signal that gave it.
    pub(super) fn places(&self, trail: &mut Trail) -> (Option<Address>, Vec<Location>) {
        let (locations, locations_signal) = self.locations();
        let address = self.headquarters_address();
        let about_headquarters = self.about_headquarters();
        let headquarters_signal = if address.is_some() {
            Some("JSON-LD Organization.address")
        } else if locations.iter().any(is_primary) {
            Some("Locations (Primary)")
        } else {
            about_headquarters
                .as_ref()
                .map(|_| "About row \"Headquarters\"")
        };
        let headquarters = headquarters(&locations, address, about_headquarters);
        trail.note(
            "headquarters",
            headquarters.as_ref().and(headquarters_signal),
            &[
                "JSON-LD Organization.address",
                "Locations (Primary)",
                "About row \"Headquarters\"",
            ],
        );
        trail.note(
            "locations",
            (!locations.is_empty()).then_some(locations_signal),
            &[
                "Locations list (data-impression-id)",
                "Locations address blocks (id=address-N)",
            ],
        );
        (headquarters, locations)
    }

    /// The Locations section's entries: the items of its list (`data-impression-id`), else every element
    /// holding an `address-N` block, with the signal that found them.
    fn locations(&self) -> (Vec<Location>, &'static str) {
        let items: Vec<ElementRef<'_>> = self.document.select(&LOCATION_ITEMS).collect();
        if !items.is_empty() {
            return (
                self.locations_in(&items),
                "Locations list (data-impression-id)",
            );
        }
        // Each address block's list item (or, without one, its parent).
        let items: Vec<ElementRef<'_>> = self
            .document
            .select(&LOCATION_ADDRESS)
            .filter_map(|address| {
                address
                    .ancestors()
                    .filter_map(ElementRef::wrap)
                    .find(|a| a.value().name() == "li")
                    .or_else(|| address.parent().and_then(ElementRef::wrap))
            })
            .collect();
        (
            self.locations_in(&items),
            "Locations address blocks (id=address-N)",
        )
    }

    fn locations_in(&self, items: &[ElementRef<'_>]) -> Vec<Location> {
        items
            .iter()
            .filter_map(|item| {
                let lines: Vec<String> = item
                    .select(&LOCATION_LINES)
                    .filter_map(|p| clean_line(&p.text().collect::<String>()))
                    .collect();
                if lines.is_empty() {
                    return None;
                }
                let mut location = Location {
                    street: (lines.len() > 1).then(|| lines[0].clone()),
                    city_state_postal_country: lines.last().cloned(),
                    full_address: Some(lines.join(", ")),
                    get_directions_link: item
                        .select(&LOCATION_LINK)
                        .find_map(|a| a.value().attr("href"))
                        .and_then(|href| sections::canonical_link(href, self.domain)),
                    ..Location::default()
                };
                // The "Primary" tag, found by its text (its classes are the layout's to change).
                let primary = item.select(&ANY).any(|element| {
                    element
                        .children()
                        .filter_map(|c| c.value().as_text())
                        .any(|text| text.trim().eq_ignore_ascii_case("primary"))
                });
                if primary {
                    location.other.insert("isPrimary".into(), Value::Bool(true));
                }
                Some(location)
            })
            .collect()
    }

    /// JSON-LD `Organization.address` (a schema.org `PostalAddress`).
    fn headquarters_address(&self) -> Option<Address> {
        let address = self.organization.as_ref()?.get("address")?;
        let part = |key: &str| {
            address
                .get(key)
                .and_then(Value::as_str)
                .and_then(clean_line)
        };
        let address = Address {
            street: part("streetAddress"),
            locality: part("addressLocality"),
            region: part("addressRegion"),
            postal_code: part("postalCode"),
            country: part("addressCountry"),
            ..Address::default()
        };
        (address != Address::default()).then_some(address)
    }
}

/// Whether a location is the one the page tags "Primary".
fn is_primary(location: &Location) -> bool {
    location.other.get("isPrimary") == Some(&Value::Bool(true))
}

/// Headquarters: the structured address (JSON-LD's, else the Locations section's "Primary" entry split into its
/// parts by [`split_city_line`]), with `fullAddress` as the page shows it (that entry), else the structured
/// parts joined, else the About section's headquarters text.
fn headquarters(
    locations: &[Location],
    address: Option<Address>,
    about_text: Option<String>,
) -> Option<Address> {
    let primary = locations.iter().find(|l| is_primary(l));
    let mut address = address
        .or_else(|| primary.map(address_of_location))
        .unwrap_or_default();
    address.full_address = primary
        .and_then(|l| l.full_address.clone())
        .or_else(|| joined_address(&address))
        .or(about_text);
    (address != Address::default()).then_some(address)
}

/// A Locations entry as a structured address: its first line as `street`, its last line split.
fn address_of_location(location: &Location) -> Address {
    let (locality, region, postal_code, country) = location
        .city_state_postal_country
        .as_deref()
        .map(split_city_line)
        .unwrap_or_default();
    Address {
        street: location.street.clone(),
        locality,
        region,
        postal_code,
        country,
        ..Address::default()
    }
}

/// The parts of a Locations entry's last line, as guest pages print it — `City, Region PostalCode, CC`
/// (`Mountain View, CA 94043, US`, `London, London EC1V2NX, GB`, `Toronto, ON M5V 3L9, CA`,
/// `Amsterdam, North Holland 1012 AB, NL`): the country is the last part when it is a two- or three-letter code;
/// the locality the first part; of the part between, the postal code is its trailing words that hold a digit
/// (US ZIP codes, UK, Canadian and German codes), and for a Dutch code the four digits and the two letters after
/// them; the region what is before it.
fn split_city_line(
    line: &str,
) -> (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
) {
    let mut parts: Vec<&str> = line
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let country = match parts.last() {
        Some(last)
            if parts.len() > 1
                && (2..=3).contains(&last.len())
                && last.chars().all(|c| c.is_ascii_uppercase()) =>
        {
            parts.pop().map(str::to_owned)
        }
        _ => None,
    };
    let locality = (!parts.is_empty()).then(|| parts.remove(0).to_owned());
    let middle = parts.join(", ");
    let words: Vec<&str> = middle.split_whitespace().collect();
    let mut postal_start = words.len();
    while postal_start > 0 && words[postal_start - 1].chars().any(|c| c.is_ascii_digit()) {
        postal_start -= 1;
    }
    // A Dutch code: four digits, then two capital letters.
    if postal_start == words.len()
        && words.len() >= 2
        && words[words.len() - 1].len() == 2
        && words[words.len() - 1]
            .chars()
            .all(|c| c.is_ascii_uppercase())
        && words[words.len() - 2].len() == 4
        && words[words.len() - 2].chars().all(|c| c.is_ascii_digit())
    {
        postal_start = words.len() - 2;
    }
    let text = |w: &[&str]| (!w.is_empty()).then(|| w.join(" "));
    (
        locality,
        text(&words[..postal_start]),
        text(&words[postal_start..]),
        country,
    )
}

/// `street, locality, region postalCode, country`, skipping absent parts (never the text `undefined`).
fn joined_address(address: &Address) -> Option<String> {
    let region_postal = [address.region.as_deref(), address.postal_code.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let parts: Vec<&str> = [
        address.street.as_deref(),
        address.locality.as_deref(),
        Some(region_postal.as_str()),
        address.country.as_deref(),
    ]
    .into_iter()
    .flatten()
    .filter(|p| !p.is_empty())
    .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locations_last_line_splits_into_its_parts() {
        let some = |s: &str| Some(s.to_owned());
        for (line, parts) in [
            (
                "Mountain View, CA 94043, US",
                (some("Mountain View"), some("CA"), some("94043"), some("US")),
            ),
            (
                "London, London EC1V2NX, GB",
                (some("London"), some("London"), some("EC1V2NX"), some("GB")),
            ),
            (
                "London, England EC1V 2NX, GB",
                (
                    some("London"),
                    some("England"),
                    some("EC1V 2NX"),
                    some("GB"),
                ),
            ),
            (
                "Toronto, ON M5V 3L9, CA",
                (some("Toronto"), some("ON"), some("M5V 3L9"), some("CA")),
            ),
            (
                "Amsterdam, North Holland 1012 AB, NL",
                (
                    some("Amsterdam"),
                    some("North Holland"),
                    some("1012 AB"),
                    some("NL"),
                ),
            ),
            (
                "Munich, Bavaria 80331, DE",
                (some("Munich"), some("Bavaria"), some("80331"), some("DE")),
            ),
            ("Paris, FR", (some("Paris"), None, None, some("FR"))),
            ("Singapore", (some("Singapore"), None, None, None)),
        ] {
            assert_eq!(split_city_line(line), parts, "{line}");
        }
    }
}
