//! Try it (`/dashboard/try`): a real request as one of the account's keys, billed and in the ledger.
//!
//! The freshness windows offered are [`FreshnessWindow::CHOICES`] and their prices
//! [`credit_ledger::price_per_company`]: the page asks the crates that own those rules, and hands the prices to
//! its script in `data-price` attributes, so it cannot offer what the API refuses or quote another price.

use api_contract::{
    CompanyRequest, FreshnessWindow, Includes, MAX_QUERIES, MAX_URLS, ResolveRequest,
};
use api_keys::KeyRecord;
use company_lookup::Caller;
use credit_ledger::{Credits, LIVE_PRICE, STORED_PRICE, price_per_company};
use http::{Request, StatusCode};
use maud::{Markup, html};

use crate::Parts;
use crate::error::{Page, PageError, internal, lookup_refusal};
use crate::forms::read_session_form;
use crate::layout::{
    chosen_includes, csrf, include_choices, key_label, layout, tell_when_to_retry,
};
use crate::respond::html;
use crate::visitor::Visitor;

/// What each line of the form is: the member of a request body it becomes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LineKind {
    /// A page URL (`POST /v1/network/company-data`).
    PageUrl,
    /// A website domain (`POST /v1/network/company-data/resolve`, `{"domain": …}`).
    Domain,
    /// A company name (`POST /v1/network/company-data/resolve`, `{"name": …}`).
    Name,
}

impl LineKind {
    const ALL: [LineKind; 3] = [LineKind::PageUrl, LineKind::Domain, LineKind::Name];

    /// The form's value.
    fn value(self) -> &'static str {
        match self {
            LineKind::PageUrl => "url",
            LineKind::Domain => "domain",
            LineKind::Name => "name",
        }
    }

    fn label(self) -> &'static str {
        match self {
            LineKind::PageUrl => "a page URL",
            LineKind::Domain => "a website domain (resolved to its page)",
            LineKind::Name => "a company name (resolved to its page)",
        }
    }
}

/// What the form was sent with.
struct TryInput<'a> {
    urls: &'a [String],
    kind: LineKind,
    /// `maxAgeSeconds` as sent.
    window_seconds: f64,
    /// The window, when that is one a request may send.
    window: Option<FreshnessWindow>,
    /// The key picked, if it is one of the account's active keys.
    key: Option<i64>,
    /// The parts ticked (`include`; page URLs only).
    include: Includes,
}

/// What a request returned.
struct TryResult {
    json: String,
    charged: Credits,
    remaining: Credits,
}

/// `GET /dashboard/try`.
pub(crate) async fn page(parts: &Parts, visitor: &Visitor) -> Page {
    let keys = active_keys(parts, visitor).await?;
    Ok(html(StatusCode::OK, try_markup(visitor, &keys, None, None)))
}

async fn active_keys(parts: &Parts, visitor: &Visitor) -> Result<Vec<KeyRecord>, PageError> {
    let mut keys = parts.accounts.keys().of_account(visitor.account.id).await?;
    keys.retain(|k| k.revoked_at.is_none());
    Ok(keys)
}

/// `POST /dashboard/try`: validates the form as the API validates a body, runs the lookup as the picked key.
pub(crate) async fn run<B>(parts: &Parts, visitor: &Visitor, request: Request<B>) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let form = read_session_form(parts, visitor, request).await?;
    let keys = active_keys(parts, visitor).await?;
    let kind = LineKind::ALL
        .into_iter()
        .find(|k| form.get("kind").map(String::as_str) == Some(k.value()))
        .unwrap_or(LineKind::PageUrl);
    // A name may hold spaces: lines, not words, are the entries then.
    let urls: Vec<String> = form
        .get("urls")
        .map(|u| match kind {
            LineKind::Name => u
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect(),
            LineKind::PageUrl | LineKind::Domain => {
                u.split_whitespace().map(str::to_owned).collect()
            }
        })
        .unwrap_or_default();
    let window_seconds = form
        .get("max_age_seconds")
        .and_then(|w| w.trim().parse::<f64>().ok())
        .unwrap_or(f64::NAN);
    let key = form
        .get("key")
        .and_then(|k| k.parse().ok())
        .and_then(|id: i64| keys.iter().find(|k| k.id.0 == id));
    let mut input = TryInput {
        urls: &urls,
        kind,
        window_seconds,
        window: FreshnessWindow::from_seconds(window_seconds),
        key: None,
        include: chosen_includes(&form),
    };
    let Some(key) = key else {
        let refusal = Err("Pick an active key: create one on the Keys page first.".to_owned());
        return Ok(html(
            StatusCode::BAD_REQUEST,
            try_markup(visitor, &keys, Some(&input), Some(refusal)),
        ));
    };
    input.key = Some(key.id.0);
    // A test key's lookups are its account's test mode's, as over the API.
    let caller = Caller {
        tenant: key.acts_for(),
        key_id: Some(key.id.0),
    };
    let outcome = match (kind, &parts.resolver) {
        (LineKind::Domain | LineKind::Name, Some(resolver)) => {
            resolve(resolver, caller, kind, &urls, input.window_seconds).await?
        }
        _ => look_up(parts, caller, &urls, input.window_seconds, input.include).await?,
    };
    let status = outcome
        .as_ref()
        .map_or_else(PageError::status, |_| StatusCode::OK);
    let mut response = html(
        status,
        try_markup(
            visitor,
            &keys,
            Some(&input),
            Some(outcome.as_ref().map_err(ToString::to_string)),
        ),
    );
    if let Err(refused) = &outcome {
        tell_when_to_retry(&mut response, refused);
    }
    Ok(response)
}

/// What Try it says after "insufficient credits".
const CREDITS_ADVICE: &str = "Ask an admin to grant credits (Admin page), or pick a freshness window to pay the stored price.";

/// The lines as page URLs, validated and looked up as `POST /v1/network/company-data` would.
async fn look_up(
    parts: &Parts,
    caller: Caller,
    urls: &[String],
    window_seconds: f64,
    include: Includes,
) -> Result<Result<TryResult, PageError>, PageError> {
    // The same validation, and so the same messages, as a request to the API.
    let mut body = serde_json::json!({ "liUrls": urls, "maxAgeSeconds": window_seconds });
    if !include.is_empty() {
        body["include"] = serde_json::json!(include.parts());
    }
    let parsed = match CompanyRequest::from_json(body.to_string().as_bytes(), &parts.domain) {
        Err(invalid) => return Ok(Err(PageError::BadRequest(invalid.to_string()))),
        Ok(parsed) => parsed,
    };
    Ok(match parts.lookup.run(caller, &parsed).await {
        Ok(outcome) => Ok(TryResult {
            json: pretty(&outcome.response.to_json().map_err(internal)?)?,
            charged: outcome.charged,
            remaining: outcome.remaining,
        }),
        Err(refused) => Err(lookup_refusal(refused, CREDITS_ADVICE)?),
    })
}

/// The lines as domains or names, validated and resolved as `POST /v1/network/company-data/resolve` would.
async fn resolve(
    resolver: &company_resolve::Resolver,
    caller: Caller,
    kind: LineKind,
    lines: &[String],
    window_seconds: f64,
) -> Result<Result<TryResult, PageError>, PageError> {
    let member = kind.value();
    let queries: Vec<serde_json::Value> = lines
        .iter()
        .map(|line| serde_json::json!({ member: line }))
        .collect();
    let body = serde_json::json!({ "queries": queries, "maxAgeSeconds": window_seconds });
    let parsed = match ResolveRequest::from_json(body.to_string().as_bytes()) {
        Err(invalid) => return Ok(Err(PageError::BadRequest(invalid.to_string()))),
        Ok(parsed) => parsed,
    };
    Ok(match resolver.resolve(caller, &parsed).await {
        Ok(outcome) => Ok(TryResult {
            json: pretty(&serde_json::to_vec(&outcome.response).map_err(internal)?)?,
            charged: outcome.charged,
            remaining: outcome.remaining,
        }),
        Err(refused) => Err(lookup_refusal(refused, CREDITS_ADVICE)?),
    })
}

/// JSON indented, in the API's own member order (a `Value` would sort the members).
fn pretty(json: &[u8]) -> Result<String, PageError> {
    let mut pretty = Vec::new();
    serde_transcode::transcode(
        &mut serde_json::Deserializer::from_slice(json),
        &mut serde_json::Serializer::pretty(&mut pretty),
    )
    .map_err(internal)?;
    String::from_utf8(pretty).map_err(internal)
}

/// How a list of windows names a window (Try it's, the Jobs page's).
pub(crate) fn window_label(window: FreshnessWindow) -> String {
    if window.is_live() {
        "live (fetch now)".to_owned()
    } else {
        format!("stored, {window}")
    }
}

fn try_markup(
    visitor: &Visitor,
    keys: &[KeyRecord],
    input: Option<&TryInput<'_>>,
    outcome: Option<Result<&TryResult, String>>,
) -> Markup {
    let selected = input.map_or(Some(FreshnessWindow::MAX), |i| i.window);
    let urls = input.map(|i| i.urls.join("\n")).unwrap_or_default();
    let body = html! {
        h1 { "Try it" }
        p { "Runs a real request as the key you pick: it is billed to " (visitor.account.name) " and shows in the ledger." }
        form.card method="post" action=(visitor.link("/dashboard/try")) {
            (csrf(visitor))
            label for="try-kind" { "Each line is" }
            select #try-kind name="kind" {
                @for kind in LineKind::ALL {
                    option value=(kind.value()) selected[Some(kind) == input.map(|i| i.kind)] { (kind.label()) }
                }
            }
            label for="try-urls" { "Page URLs, website domains or company names, one per line (at most " (MAX_URLS.min(MAX_QUERIES)) ")" }
            textarea #try-urls name="urls" required aria-describedby="try-estimate" placeholder="https://www.linkedin.com/company/google" { (urls) }
            p.hint #try-estimate aria-live="polite" {
                (LIVE_PRICE) " credit per company fetched live, " (STORED_PRICE)
                " per company with a freshness window, whether from a page URL or a domain or name resolved to \
                 its page; nothing for lines that cannot be resolved."
            }
            (include_choices("try", input.map_or(Includes::NONE, |i| i.include)))
            div.row {
                div {
                    label for="try-key" { "Key" }
                    select #try-key name="key" required {
                        @for key in keys { option value=(key.id.0) selected[Some(key.id.0) == input.and_then(|i| i.key)] { (key_label(key)) } }
                    }
                }
                div {
                    label for="try-window" { "Freshness" }
                    select #try-window name="max_age_seconds" {
                        @for window in FreshnessWindow::CHOICES {
                            option value=(window.seconds()) data-price=(price_per_company(window))
                                selected[Some(window) == selected] { (window_label(window)) }
                        }
                    }
                }
                button type="submit" { "Run" }
            }
            @if keys.is_empty() {
                p.notice.warn { "This account has no active key. " a href=(visitor.link("/dashboard/keys")) { "Create one" } " first." }
            }
        }
        @match outcome {
            Some(Ok(result)) => {
                p.notice.ok role="status" data-testid="try-cost" {
                    "Charged " (result.charged) " credits; " (result.remaining) " remaining."
                }
                pre data-testid="try-json" { code { (result.json) } }
            }
            Some(Err(message)) => { p.notice.error role="alert" { (message) } }
            None => {}
        }
    };
    layout("Try it", Some(visitor), "/dashboard/try", &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_named_as_people_say_them() {
        assert_eq!(window_label(FreshnessWindow::LIVE), "live (fetch now)");
        assert_eq!(
            window_label(FreshnessWindow::MAX),
            "stored, up to 24 hours old"
        );
    }
}
