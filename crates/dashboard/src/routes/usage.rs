//! Usage (`/dashboard/usage`): the last 30 UTC days from the ledger, as charts and a table.

use credit_ledger::{Credits, DailyUsage};
use http::StatusCode;
use maud::html;

use crate::Parts;
use crate::chart;
use crate::error::{Page, internal};
use crate::layout::layout;
use crate::respond::html;
use crate::visitor::Visitor;

/// Days the page covers, today included.
const USAGE_DAYS: i64 = 30;

/// `GET /dashboard/usage`.
pub(crate) async fn page(parts: &Parts, visitor: &Visitor) -> Page {
    let today = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date();
    let first = today
        .checked_sub(jiff::Span::new().days(USAGE_DAYS - 1))
        .map_err(internal)?;
    let since = first
        .to_zoned(jiff::tz::TimeZone::UTC)
        .map_err(internal)?
        .timestamp();
    let days = parts
        .accounts
        .ledger()
        .daily_usage(visitor.live(), since)
        .await?;
    Ok(html(
        StatusCode::OK,
        usage_markup(visitor, first, today, &days),
    ))
}

fn usage_markup(
    visitor: &Visitor,
    first: jiff::civil::Date,
    today: jiff::civil::Date,
    days: &[DailyUsage],
) -> maud::Markup {
    let series = chart::Series::fill(first, today, days);
    // live requests, stored requests, live companies, stored companies, unresolved URLs
    let totals = days.iter().fold([0u64; 5], |t, d| {
        [
            t[0] + d.live.requests,
            t[1] + d.stored.requests,
            t[2] + d.live.returned,
            t[3] + d.stored.returned,
            t[4] + d.live.unresolved + d.stored.unresolved,
        ]
    });
    let credits = days
        .iter()
        .map(|d| d.live.credits.millis() + d.stored.credits.millis())
        .sum::<i64>();
    let body = html! {
        h1 { "Usage, last " (USAGE_DAYS) " days" }
        p.hint { "Per UTC day, from the ledger." }
        p data-testid="usage-totals" {
            (totals[0] + totals[1]) " requests (" (totals[0]) " live, " (totals[1]) " stored), "
            (totals[2] + totals[3]) " companies returned, " (totals[4]) " unresolved, "
            (Credits::from_millis(credits)) " credits."
        }
        ul.legend {
            li { span.swatch.live {} "live" }
            li { span.swatch.stored {} "stored" }
            li { span.swatch.unresolved {} "unresolved" }
        }
        div.charts {
            (chart::bars("Requests", &series, chart::Measure::Requests))
            (chart::bars("Companies returned, and unresolved URLs", &series, chart::Measure::Companies))
            (chart::bars("Credits charged", &series, chart::Measure::Credits))
        }
        details {
            summary { "The numbers, day by day" }
            div.table-wrap {
                table {
                    thead { tr {
                        th { "Day (UTC)" } th.num { "Live requests" } th.num { "Stored requests" }
                        th.num { "Live companies" } th.num { "Stored companies" } th.num { "Unresolved" } th.num { "Credits" }
                    } }
                    tbody {
                        @for day in days.iter().rev() {
                            tr {
                                td { (day.day) }
                                td.num { (day.live.requests) } td.num { (day.stored.requests) }
                                td.num { (day.live.returned) } td.num { (day.stored.returned) }
                                td.num { (day.live.unresolved + day.stored.unresolved) }
                                td.num { (Credits::from_millis(day.live.credits.millis() + day.stored.credits.millis())) }
                            }
                        }
                    }
                }
            }
        }
    };
    layout("Usage", Some(visitor), "/dashboard/usage", &body)
}
