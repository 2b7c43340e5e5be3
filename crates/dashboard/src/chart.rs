//! The charts, as inline SVG drawn on the server (no script, no canvas): usage as stacked bars per day, a page's
//! history as lines with its changes marked.

use credit_ledger::{DailyUsage, UsageCounts};
use maud::{Markup, html};

const WIDTH: f64 = 420.0;
const HEIGHT: f64 = 200.0;
const LEFT: f64 = 52.0;
const BOTTOM: f64 = 24.0;
const TOP: f64 = 10.0;
const LIVE: &str = "#0b5fff";
const STORED: &str = "#8250df";
const UNRESOLVED: &str = "#9a6700";

/// One entry per day of the window, zero where nothing was charged.
pub(crate) struct Series(Vec<(jiff::civil::Date, UsageCounts, UsageCounts)>);

impl Series {
    pub(crate) fn fill(
        first: jiff::civil::Date,
        last: jiff::civil::Date,
        days: &[DailyUsage],
    ) -> Self {
        let mut series = Vec::new();
        let mut day = first;
        while day <= last {
            let found = days.iter().find(|d| d.day == day);
            series.push((
                day,
                found.map(|d| d.live).unwrap_or_default(),
                found.map(|d| d.stored).unwrap_or_default(),
            ));
            match day.tomorrow() {
                Ok(next) => day = next,
                Err(_) => break,
            }
        }
        Self(series)
    }
}

/// What a chart counts.
#[derive(Clone, Copy)]
pub(crate) enum Measure {
    Requests,
    Companies,
    Credits,
}

impl Measure {
    /// The stacked segments of one day: (label, colour, value).
    fn segments(
        self,
        live: &UsageCounts,
        stored: &UsageCounts,
    ) -> Vec<(&'static str, &'static str, f64)> {
        match self {
            Self::Requests => vec![
                ("live", LIVE, live.requests as f64),
                ("stored", STORED, stored.requests as f64),
            ],
            Self::Companies => vec![
                ("live", LIVE, live.returned as f64),
                ("stored", STORED, stored.returned as f64),
                (
                    "unresolved",
                    UNRESOLVED,
                    (live.unresolved + stored.unresolved) as f64,
                ),
            ],
            Self::Credits => vec![
                ("live", LIVE, live.credits.as_f64()),
                ("stored", STORED, stored.credits.as_f64()),
            ],
        }
    }
}

/// The non-zero segments with where each starts: (colour, base, value).
fn stacked(segments: &[(&'static str, &'static str, f64)]) -> Vec<(&'static str, f64, f64)> {
    let mut base = 0.0;
    let mut out = Vec::new();
    for &(_, colour, value) in segments {
        if value > 0.0 {
            out.push((colour, base, value));
        }
        base += value;
    }
    out
}

/// A round axis maximum at or above `max`: 1, 2 or 5 times a power of ten.
fn nice_ceiling(max: f64) -> f64 {
    if max <= 0.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(max.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|step| step * magnitude)
        .find(|candidate| *candidate >= max)
        .unwrap_or(max)
}

fn number(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

pub(crate) fn bars(title: &str, series: &Series, measure: Measure) -> Markup {
    let days = series.0.len().max(1) as f64;
    let plot_width = WIDTH - LEFT - 4.0;
    let plot_height = HEIGHT - TOP - BOTTOM;
    let band = plot_width / days;
    let day_totals: Vec<f64> = series
        .0
        .iter()
        .map(|(_, live, stored)| measure.segments(live, stored).iter().map(|s| s.2).sum())
        .collect();
    let max = day_totals.iter().copied().fold(0.0, f64::max);
    let total: f64 = day_totals.iter().sum();
    let ceiling = nice_ceiling(max);
    let y = |value: f64| TOP + plot_height * (1.0 - value / ceiling);
    let summary = format!(
        "{title}: {} in all over {} days, at most {} in a day",
        number(total),
        series.0.len(),
        number(max)
    );
    html! {
        figure {
            figcaption { (title) }
            svg.chart viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img" aria-label=(summary) xmlns="http://www.w3.org/2000/svg" {
                @for fraction in [0.0, 0.5, 1.0] {
                    line x1=(LEFT) x2=(WIDTH - 4.0) y1=(y(ceiling * fraction)) y2=(y(ceiling * fraction)) stroke="#d0d7de" stroke-width="1" {}
                    text x=(LEFT - 6.0) y=(y(ceiling * fraction) + 4.0) text-anchor="end" font-size="14" fill="#57606a" { (number(ceiling * fraction)) }
                }
                @for (index, (day, live, stored)) in series.0.iter().enumerate() {
                    @let x = LEFT + band * index as f64 + band * 0.15;
                    @let segments = measure.segments(live, stored);
                    g {
                        title { (day) ": " (segments.iter().map(|(label, _, value)| format!("{} {label}", number(*value))).collect::<Vec<_>>().join(", ")) }
                        @for (colour, base, value) in stacked(&segments) {
                            rect x=(format!("{x:.1}")) y=(format!("{:.1}", y(base + value))) width=(format!("{:.1}", band * 0.7))
                                height=(format!("{:.1}", (y(base) - y(base + value)).max(1.0))) fill=(colour) {}
                        }
                        // A transparent full-height hit area so the day's tooltip shows anywhere in its column.
                        rect x=(format!("{:.1}", LEFT + band * index as f64)) y=(TOP) width=(format!("{band:.1}")) height=(plot_height) fill="transparent" {}
                    }
                }
                @for (index, anchor) in [(0, "start"), (series.0.len() / 2, "middle"), (series.0.len().saturating_sub(1), "end")] {
                    @if let Some((day, _, _)) = series.0.get(index) {
                        @let x = match anchor { "start" => LEFT + band * index as f64, "end" => LEFT + band * (index as f64 + 1.0), _ => LEFT + band * (index as f64 + 0.5) };
                        text x=(format!("{x:.1}")) y=(HEIGHT - 6.0) text-anchor=(anchor) font-size="14" fill="#57606a" {
                            (day.strftime("%b %d"))
                        }
                    }
                }
            }
        }
    }
}

/// A page's followers and employees over its fetches, one line chart each (their scales differ a hundredfold),
/// with a dashed mark at every fetch that changed a member (its `title` names them).
pub(crate) fn history_chart(history: &company_model::CompanyHistory) -> Markup {
    let series = [
        (
            "Followers",
            LIVE,
            history
                .points
                .iter()
                .filter_map(|p| Some((p.fetched_at, p.follower_count? as f64)))
                .collect::<Vec<_>>(),
        ),
        (
            "Employees on the network",
            STORED,
            history
                .points
                .iter()
                .filter_map(|p| Some((p.fetched_at, p.employee_count_on_li? as f64)))
                .collect::<Vec<_>>(),
        ),
    ];
    let (Some(first), Some(last)) = (history.points.first(), history.points.last()) else {
        return html! {};
    };
    let (start, end) = (
        first.fetched_at.as_millisecond() as f64,
        last.fetched_at.as_millisecond() as f64,
    );
    let x = |at: jiff::Timestamp| {
        let span = (end - start).max(1.0);
        LEFT + (at.as_millisecond() as f64 - start) / span * (WIDTH - LEFT - 10.0)
    };
    let mut marks: Vec<(jiff::Timestamp, Vec<&str>)> = Vec::new();
    for change in &history.changes {
        match marks.last_mut() {
            Some((at, fields)) if *at == change.fetched_at => fields.push(&change.field),
            _ => marks.push((change.fetched_at, vec![&change.field])),
        }
    }
    html! {
        @for (label, colour, points) in &series {
            @if !points.is_empty() {
                @let low = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
                @let high = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
                @let y = |value: f64| {
                    let range = (high - low).max(1.0);
                    HEIGHT - BOTTOM - (value - low) / range * (HEIGHT - BOTTOM - TOP)
                };
                @let line = points.iter().map(|(at, value)| format!("{:.1},{:.1}", x(*at), y(*value))).collect::<Vec<_>>().join(" ");
                figure {
                    figcaption { (label) }
                    svg.chart viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img" aria-label=(format!("{label} over time")) {
                        text x="4" y=(TOP + 8.0) font-size="11" { (format_count(high)) }
                        text x="4" y=(HEIGHT - BOTTOM) font-size="11" { (format_count(low)) }
                        @for (at, fields) in &marks {
                            line x1=(format!("{:.1}", x(*at))) x2=(format!("{:.1}", x(*at))) y1=(TOP) y2=(HEIGHT - BOTTOM)
                                 stroke=(UNRESOLVED) stroke-dasharray="4 3" data-change=(fields.join(", ")) {
                                title { (fields.join(", ")) " changed" }
                            }
                        }
                        polyline points=(line) fill="none" stroke=(*colour) stroke-width="2" {}
                        @for (at, value) in points {
                            circle cx=(format!("{:.1}", x(*at))) cy=(format!("{:.1}", y(*value))) r="2.5" fill=(*colour) {
                                title { (format_count(*value)) " on " (at.strftime("%Y-%m-%d")) }
                            }
                        }
                        text x=(LEFT) y=(HEIGHT - 6.0) font-size="11" { (first.fetched_at.strftime("%Y-%m-%d")) }
                        text x=(WIDTH - 10.0) y=(HEIGHT - 6.0) font-size="11" text-anchor="end" { (last.fetched_at.strftime("%Y-%m-%d")) }
                    }
                }
            }
        }
    }
}

/// A count with thousands separators, e.g. `37,814,363`.
fn format_count(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::float_cmp)] // the maxima are exact small integers
    fn axis_maxima_are_round() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(3.0), 5.0);
        assert_eq!(nice_ceiling(17.0), 20.0);
        assert_eq!(nice_ceiling(200.0), 200.0);
        assert_eq!(nice_ceiling(201.0), 500.0);
    }
}
