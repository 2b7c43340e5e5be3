//! A request's answer from its pages' outcomes: every input position in order, what it costs, the metrics of
//! what was served, and the advice an unresolved entry gives.

use std::collections::HashMap;

use api_contract::{
    CompanyDataResponse, CompanyRequest, CompanyResult, MAX_COPIES_PER_PAGE, RecordFields,
    UnresolvedUrl,
};
use company_model::{RecordSource, UnresolvedCode};
use credit_ledger::{Charge, Credits, price_per_record};
use page_scraper::ScrapeError;
use page_url::PageUrl;

use crate::outcome::PageOutcome;
use crate::settings::Caller;

/// The 200 body, every requested URL in order with its page's outcome, and what it costs: each page found at its
/// source's price ([`price_per_record`]; a URL repeated in the request is one page, charged once, and answered
/// for its first [`MAX_COPIES_PER_PAGE`] copies only, the rest `duplicate`).
pub(crate) fn answer(
    caller: Caller,
    request: &CompanyRequest,
    outcomes: &HashMap<PageUrl, PageOutcome>,
    reference: Option<String>,
) -> (CompanyDataResponse, Charge) {
    let missing = PageOutcome::Failed {
        code: UnresolvedCode::FetchFailed,
        message: "The page was not looked up. Retry.".to_owned(),
        retry_after: None,
    };
    let mut results = Vec::new();
    let mut unresolved = Vec::new();
    let mut copies: HashMap<&PageUrl, usize> = HashMap::new();
    for url in &request.urls {
        let copy = copies.entry(&url.page).or_insert(0);
        *copy += 1;
        if *copy > MAX_COPIES_PER_PAGE {
            unresolved.push(UnresolvedUrl {
                original_li_url: url.original.clone(),
                error: UnresolvedCode::Duplicate,
                message: format!(
                    "This page is in the request more than {MAX_COPIES_PER_PAGE} times; its first \
                     {MAX_COPIES_PER_PAGE} copies are answered (and it is charged once). Send each page once: \
                     its record is the same."
                ),
                retry_after_seconds: None,
            });
            continue;
        }
        // Every distinct page has an outcome; `missing` only guards against a future change breaking that.
        match outcomes.get(&url.page).unwrap_or(&missing) {
            PageOutcome::Found { snapshot, source } => results.push(CompanyResult {
                original_li_url: url.original.clone(),
                // `fields` shapes the answer only: the page is looked up, stored and billed whole.
                record: RecordFields::apply(request.fields.as_ref(), &snapshot.record),
                source: *source,
                fetched_at: snapshot.fetched_at,
            }),
            PageOutcome::Failed {
                code,
                message,
                retry_after,
            } => unresolved.push(UnresolvedUrl {
                original_li_url: url.original.clone(),
                error: *code,
                message: message.clone(),
                retry_after_seconds: retry_after.map(shared_limits::wait_seconds),
            }),
        }
    }
    // Each distinct page once, at its source's price (nothing in test mode).
    let priced = outcomes
        .values()
        .filter_map(|outcome| match outcome {
            PageOutcome::Found { source, .. } => Some(price_per_record(request.window, *source)),
            PageOutcome::Failed { .. } => None,
        })
        .fold(Credits::ZERO, Credits::saturating_add);
    let charge = Charge {
        amount: credit_ledger::billed(caller.tenant, priced),
        key_id: caller.key_id,
        urls_requested: request.urls.len() as u32,
        urls_returned: results.len() as u32,
        live: request.window.is_live(),
        reference,
    };
    let response = CompanyDataResponse {
        message: "Success".to_owned(),
        status_code: 200,
        results,
        unresolved,
    };
    (response, charge)
}

/// Counts a billed answer: `company_data_records_total{source}`, `company_data_unresolved_total{reason}` and
/// `company_data_credits_charged_millis_total` (thousandths of a credit, so the counter stays whole).
pub(crate) fn record_served(response: &CompanyDataResponse, charge: &Charge) {
    // One increment per label, not per record: a 200-URL answer touches the registry a few times.
    for source in [
        RecordSource::Live,
        RecordSource::Stored,
        RecordSource::Stale,
    ] {
        let count = response
            .results
            .iter()
            .filter(|r| r.source == source)
            .count();
        if count > 0 {
            metrics::counter!("company_data_records_total", "source" => source.as_str())
                .increment(count as u64);
        }
    }
    for code in UnresolvedCode::ALL {
        let count = response
            .unresolved
            .iter()
            .filter(|u| u.error == code)
            .count();
        if count > 0 {
            metrics::counter!("company_data_unresolved_total", "reason" => code.as_str())
                .increment(count as u64);
        }
    }
    metrics::counter!("company_data_credits_charged_millis_total")
        .increment(u64::try_from(charge.amount.millis()).unwrap_or(0));
}

/// The `unresolved` message: what happened and what the caller can do.
pub(crate) fn advice(error: &ScrapeError) -> String {
    let what_to_do = match error {
        ScrapeError::NotFound => "Check the URL: the page may have been renamed or removed.",
        ScrapeError::WrongPageKind { .. } => "Send the URL of a company, school or showcase page.",
        ScrapeError::Authwall | ScrapeError::Blocked { .. } => {
            "The network is limiting access; retry later, or send a freshness window to accept a stored snapshot."
        }
        ScrapeError::Unparseable => {
            "The page layout was not recognised; report the URL so the parser can learn it."
        }
        _ => "Retry later.",
    };
    let mut sentence = error.to_string();
    if let Some(first) = sentence.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    format!("{sentence}. {what_to_do}")
}
