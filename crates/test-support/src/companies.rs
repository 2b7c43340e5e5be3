//! Companies generated from captured records for the search tests and the search benchmark: every member a
//! search reads varied (some absent, some repeated so that sorts meet ties, labels in other case and accents than
//! filters send), deterministically, so a failure repeats.

use company_model::{Address, CompanyRecord};

/// One generated company: its page's slug (`gen-<n>`), its record and when it was fetched.
#[derive(Clone, Debug)]
pub struct Generated {
    /// `gen-<n>`: the page is `https://www.linkedin.com/company/gen-<n>`.
    pub slug: String,
    /// The record.
    pub record: CompanyRecord,
    /// `now` less `n` minutes.
    pub fetched_at: jiff::Timestamp,
}

/// The words generated names and descriptions are made of (each name has one, each description one more).
pub const WORDS: [&str; 6] = [
    "quantum",
    "robotics",
    "logistics",
    "genomics",
    "payments",
    "analytics",
];

/// A small deterministic generator (a linear congruential one).
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % sides as u64) as usize
    }

    fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.roll(from.len())]
    }
}

/// `count` companies, the `n`th made from `bases[n % bases.len()]` (records parsed from captured pages), fetched
/// `n` minutes before `now`.
///
/// # Panics
/// When `bases` is empty.
pub fn generated(bases: &[CompanyRecord], count: usize, now: jiff::Timestamp) -> Vec<Generated> {
    let industries = [
        Some("Software Development"),
        Some("IT Services and IT Consulting"),
        Some("Biotechnology Research"),
        Some("Retail"),
        None,
    ];
    let sizes = [
        Some("11-50 employees"),
        Some("51-200 employees"),
        Some("10,001+ employees"),
        None,
    ];
    let types = [Some("Privately Held"), Some("Public Company"), None];
    let places = [
        (Some("US"), Some("California"), Some("Mountain View")),
        (Some("DE"), Some("Berlin"), Some("Berlin")),
        (Some("ES"), Some("Madrid"), Some("Madrid")),
        (Some("CH"), Some("Zürich"), Some("Zürich")),
        (None, None, None),
    ];
    let specialties = [
        "AI",
        "Cloud",
        "Search",
        "Marketing",
        "Audience Intelligence",
        "Security",
    ];
    let mut dice = Dice(44);
    (0..count)
        .map(|n| {
            let mut record = bases[n % bases.len()].clone();
            let word = dice.pick(&WORDS);
            record.company_name = Some(format!(
                "{} {} {n}",
                record.company_name.clone().unwrap_or_default(),
                capitalized(word)
            ));
            record.description = Some(format!(
                "{} We build {} products.",
                record.description.clone().unwrap_or_default(),
                dice.pick(&WORDS)
            ));
            record.industries = dice.pick(&industries).map(str::to_owned);
            record.company_size = dice.pick(&sizes).map(str::to_owned);
            record.company_type = dice.pick(&types).map(str::to_owned);
            // Counts from a small set a quarter of the time, so sorts meet ties.
            let count = |dice: &mut Dice| match dice.roll(4) {
                0 => None,
                1 => Some(*dice.pick(&[10u64, 500, 5_000])),
                _ => Some(dice.roll(300_000) as u64),
            };
            record.employee_count_on_li = count(&mut dice);
            record.follower_count = count(&mut dice);
            record.founded =
                (dice.roll(5) > 0).then(|| 1950 + i32::try_from(dice.roll(75)).unwrap_or(0));
            let (country, region, locality) = *dice.pick(&places);
            record.headquarters = country.map(|_| Address {
                country: country.map(str::to_owned),
                region: region.map(str::to_owned),
                locality: locality.map(str::to_owned),
                ..Address::default()
            });
            record.specialties = specialties
                .iter()
                .filter(|_| dice.roll(3) == 0)
                .map(|s| (*s).to_owned())
                .collect();
            if dice.roll(4) == 0 {
                record.website = None;
            }
            Generated {
                slug: format!("gen-{n}"),
                record,
                fetched_at: now - jiff::SignedDuration::from_mins(i64::try_from(n).unwrap_or(0)),
            }
        })
        .collect()
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
