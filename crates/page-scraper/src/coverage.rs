//! The layout-change alarm: for each record field, the share of live parses of company pages that filled it,
//! and an alarm when a field's recent share falls far below its own level over the past week.
//!
//! When the network changes its layout, the parser usually does not fail: a section it no longer finds leaves
//! its fields empty on every page, silently. Each field's share is kept over two windows:
//! - **recent**: the last [`CoverageRules::recent_parses`] live parses of company pages (50);
//! - **baseline**: the parses before those, over the past [`CoverageRules::baseline`] (7 days), in hourly
//!   buckets.
//!
//! A field is **alarmed** when the recent window is full, the baseline holds at least as many parses, the
//! field's baseline share is at least [`CoverageRules::min_baseline_share`] (a field rarely filled says little
//! when it is missing), and its recent share is under [`CoverageRules::drop_below`] (a half) of its baseline
//! share. Turning on, an alarm logs a warning naming the field and pages that lacked it; it turns off when the
//! share recovers. Shares are exported as `company_data_field_fill_ratio{field, window}` and alarms as
//! `company_data_layout_alarm{field}` through the `metrics` facade.
//!
//! Counted in this process's memory: a restart starts over, and each server of a deployment judges its own
//! parses (each sees the same layout). Fields are [`company_model::PAGE_FIELDS`].

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use company_model::PAGE_FIELDS;
use page_url::PageUrl;

use page_parser::CompanyRecord;

/// Pages kept per field as examples of what lacked it.
const EXAMPLES: usize = 5;

/// When a field's drop is an alarm.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoverageRules {
    /// Parses in the recent window; the alarm needs it full. Default 50.
    pub recent_parses: usize,
    /// How far back the baseline reaches. Default 7 days.
    pub baseline: Duration,
    /// The recent share below which (as a fraction of the baseline share) a field is alarmed. Default 0.5.
    pub drop_below: f64,
    /// Fields filled on fewer of the baseline's parses than this share are not judged. Default 0.2.
    pub min_baseline_share: f64,
}

impl Default for CoverageRules {
    fn default() -> Self {
        Self {
            recent_parses: 50,
            baseline: Duration::from_hours(24 * 7),
            drop_below: 0.5,
            min_baseline_share: 0.2,
        }
    }
}

/// One field's state, as the Admin page and the metrics show it.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldShare {
    /// The record member, e.g. `description`.
    pub field: &'static str,
    /// Share of the recent window's parses that filled it (0 to 1); `None` before any parse.
    pub recent: Option<f64>,
    /// Share of the baseline's parses that filled it; `None` while the baseline is empty.
    pub baseline: Option<f64>,
    /// Whether the field is alarmed.
    pub alarmed: bool,
    /// Pages of the recent window that lacked it, newest first (up to 5).
    pub lacking: Vec<String>,
}

/// A snapshot of every field's share.
#[derive(Clone, Debug, PartialEq)]
pub struct CoverageReport {
    /// Parses in the recent window.
    pub recent_parses: usize,
    /// Parses in the baseline.
    pub baseline_parses: u64,
    /// One entry per field of [`company_model::PAGE_FIELDS`], in that order.
    pub fields: Vec<FieldShare>,
}

impl CoverageReport {
    /// The alarmed fields.
    pub fn alarms(&self) -> impl Iterator<Item = &FieldShare> {
        self.fields.iter().filter(|f| f.alarmed)
    }
}

/// Which fields one parse filled: bit `i` for `PAGE_FIELDS[i]`.
type Filled = u32;

/// One hour of the baseline.
#[derive(Clone, Copy)]
struct Bucket {
    hour: u64,
    parses: u64,
    filled: [u64; PAGE_FIELDS.len()],
}

#[derive(Default)]
struct State {
    recent: VecDeque<(Filled, String)>,
    baseline: VecDeque<Bucket>,
    alarmed: Filled,
}

/// The field shares of one fetcher's live parses. Cheap to update: a bit set per parse, a count per field.
pub struct FieldCoverage {
    rules: CoverageRules,
    state: Mutex<State>,
}

impl std::fmt::Debug for FieldCoverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FieldCoverage")
            .field("rules", &self.rules)
            .finish_non_exhaustive()
    }
}

/// Whether a record member holds something: not absent, null, empty text, an empty list or an empty object.
fn is_filled(value: Option<&serde_json::Value>) -> bool {
    match value {
        None | Some(serde_json::Value::Null) => false,
        Some(serde_json::Value::String(text)) => !text.trim().is_empty(),
        Some(serde_json::Value::Array(items)) => !items.is_empty(),
        Some(serde_json::Value::Object(members)) => !members.is_empty(),
        Some(_) => true,
    }
}

/// Which of [`company_model::PAGE_FIELDS`] one record filled (not absent, null, empty text, list or object).
/// Made where the record is parsed (the fetcher does it on its parser thread: it serializes the record), and
/// counted by [`FieldCoverage::observe`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilledFields(Filled);

impl FilledFields {
    /// The fields `record` filled.
    pub fn of(record: &CompanyRecord) -> Self {
        let Ok(serde_json::Value::Object(members)) = serde_json::to_value(record) else {
            return Self(0);
        };
        Self(
            PAGE_FIELDS
                .iter()
                .enumerate()
                .filter(|(_, field)| is_filled(members.get(**field)))
                .fold(0, |bits, (i, _)| bits | (1 << i)),
        )
    }
}

fn hour_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs() / 3600)
}

impl FieldCoverage {
    /// Empty, judged by `rules`.
    pub fn new(rules: CoverageRules) -> Self {
        Self {
            rules,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every change is a few counts and pushes: a panic cannot leave it half-done in a way that matters.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts one live parse of the page `url`, which filled `filled`; pages that are not company pages are not
    /// counted.
    pub fn observe(&self, url: &PageUrl, filled: FilledFields) {
        if url.kind() != page_url::PageKind::Company {
            return;
        }
        self.observe_filled(filled.0, url.to_string(), hour_now());
    }

    fn observe_filled(&self, filled: Filled, page: String, hour: u64) {
        let report = {
            let mut state = self.lock();
            state.recent.push_back((filled, page));
            while state.recent.len() > self.rules.recent_parses {
                if let Some((old, _)) = state.recent.pop_front() {
                    add_to_baseline(&mut state.baseline, old, hour);
                }
            }
            let oldest = hour.saturating_sub(self.rules.baseline.as_secs() / 3600);
            while state.baseline.front().is_some_and(|b| b.hour < oldest) {
                state.baseline.pop_front();
            }
            let report = self.report_of(&state);
            let now: Filled = report
                .fields
                .iter()
                .enumerate()
                .filter(|(_, f)| f.alarmed)
                .fold(0, |bits, (i, _)| bits | (1 << i));
            let newly = now & !state.alarmed;
            state.alarmed = now;
            (report, newly)
        };
        let (report, newly) = report;
        for (i, share) in report.fields.iter().enumerate() {
            export(share);
            if newly & (1 << i) != 0 {
                tracing::warn!(
                    field = share.field,
                    recent_share = share.recent.unwrap_or_default(),
                    baseline_share = share.baseline.unwrap_or_default(),
                    pages = ?share.lacking,
                    "layout change? `{}` is filled on far fewer live company pages than over the past week; \
                     check these pages against the parser",
                    share.field
                );
            }
        }
    }

    /// Every field's shares and alarms now.
    pub fn report(&self) -> CoverageReport {
        self.report_of(&self.lock())
    }

    fn report_of(&self, state: &State) -> CoverageReport {
        let recent_parses = state.recent.len();
        let baseline_parses: u64 = state.baseline.iter().map(|b| b.parses).sum();
        let fields = PAGE_FIELDS
            .iter()
            .enumerate()
            .map(|(i, field)| {
                let bit = 1 << i;
                let recent_filled = state.recent.iter().filter(|(f, _)| f & bit != 0).count();
                let recent =
                    (recent_parses > 0).then(|| recent_filled as f64 / recent_parses as f64);
                let baseline_filled: u64 = state.baseline.iter().map(|b| b.filled[i]).sum();
                let baseline =
                    (baseline_parses > 0).then(|| baseline_filled as f64 / baseline_parses as f64);
                let alarmed = recent_parses >= self.rules.recent_parses
                    && baseline_parses >= self.rules.recent_parses as u64
                    && match (recent, baseline) {
                        (Some(recent), Some(baseline)) => {
                            baseline >= self.rules.min_baseline_share
                                && recent < baseline * self.rules.drop_below
                        }
                        _ => false,
                    };
                let lacking = state
                    .recent
                    .iter()
                    .rev()
                    .filter(|(f, _)| f & bit == 0)
                    .take(EXAMPLES)
                    .map(|(_, page)| page.clone())
                    .collect();
                FieldShare {
                    field,
                    recent,
                    baseline,
                    alarmed,
                    lacking,
                }
            })
            .collect();
        CoverageReport {
            recent_parses,
            baseline_parses,
            fields,
        }
    }
}

fn add_to_baseline(baseline: &mut VecDeque<Bucket>, filled: Filled, hour: u64) {
    if baseline.back().is_none_or(|b| b.hour != hour) {
        baseline.push_back(Bucket {
            hour,
            parses: 0,
            filled: [0; PAGE_FIELDS.len()],
        });
    }
    if let Some(bucket) = baseline.back_mut() {
        bucket.parses += 1;
        for (i, count) in bucket.filled.iter_mut().enumerate() {
            if filled & (1 << i) != 0 {
                *count += 1;
            }
        }
    }
}

fn export(share: &FieldShare) {
    for (window, value) in [("recent", share.recent), ("baseline", share.baseline)] {
        if let Some(value) = value {
            metrics::gauge!("company_data_field_fill_ratio", "field" => share.field, "window" => window)
                .set(value);
        }
    }
    metrics::gauge!("company_data_layout_alarm", "field" => share.field).set(if share.alarmed {
        1.0
    } else {
        0.0
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Filled = (1 << PAGE_FIELDS.len()) - 1;

    fn bit(field: &str) -> Filled {
        1 << PAGE_FIELDS
            .iter()
            .position(|f| *f == field)
            .expect("a field")
    }

    #[test]
    fn a_field_that_stops_being_filled_is_alarmed_and_recovers() {
        let coverage = FieldCoverage::new(CoverageRules::default());
        for i in 0..100 {
            coverage.observe_filled(ALL, format!("p{i}"), 1000);
        }
        assert_eq!(coverage.report().alarms().count(), 0, "normal pages");
        let without = ALL & !bit("description");
        for i in 0..49 {
            coverage.observe_filled(without, format!("broken{i}"), 1000);
        }
        // 49 of 50 recent parses lack it: 2% against 100%.
        let alarmed: Vec<_> = coverage.report().alarms().map(|f| f.field).collect();
        assert_eq!(alarmed, ["description"]);
        let share = coverage
            .report()
            .fields
            .into_iter()
            .find(|f| f.field == "description")
            .expect("the field");
        assert_eq!(share.lacking.first().map(String::as_str), Some("broken48"));
        assert_eq!(share.lacking.len(), EXAMPLES);
        for i in 0..50 {
            coverage.observe_filled(ALL, format!("fixed{i}"), 1001);
        }
        assert_eq!(coverage.report().alarms().count(), 0, "recovered");
    }

    #[test]
    fn no_alarm_without_enough_parses_or_for_rarely_filled_fields() {
        let coverage = FieldCoverage::new(CoverageRules::default());
        // A field filled on 10% of pages, then on none: too rare to judge.
        for i in 0..200 {
            let filled = if i < 150 && i % 10 == 0 {
                ALL
            } else {
                ALL & !bit("funding_info")
            };
            coverage.observe_filled(filled, format!("p{i}"), 1000);
        }
        assert_eq!(coverage.report().alarms().count(), 0);
        // A drop seen before the baseline holds 50 parses is not judged.
        let early = FieldCoverage::new(CoverageRules::default());
        for i in 0..60 {
            let filled = if i < 10 { ALL } else { ALL & !bit("website") };
            early.observe_filled(filled, format!("p{i}"), 1000);
        }
        assert_eq!(early.report().alarms().count(), 0);
    }

    #[test]
    fn the_baseline_forgets_hours_older_than_a_week() {
        let coverage = FieldCoverage::new(CoverageRules::default());
        for i in 0..100 {
            coverage.observe_filled(ALL, format!("p{i}"), 1000);
        }
        assert_eq!(coverage.report().baseline_parses, 50);
        coverage.observe_filled(ALL, "late".to_owned(), 1000 + 24 * 7 + 1);
        assert_eq!(
            coverage.report().baseline_parses,
            1,
            "only the parse that left the recent window now"
        );
    }
}
