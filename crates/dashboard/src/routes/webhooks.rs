//! Webhooks (`/dashboard/webhooks`): the account's webhook endpoints for its account events — register one, send
//! it a signed test `ping`, delete it, see its deliveries (`/dashboard/webhooks/{id}`) — and the low-balance
//! threshold that `account.balance_low` is sent at.
//!
//! Validation, bounds and views are the API's: an endpoint goes through [`EndpointRequest::from_json`] and the
//! threshold through [`AccountSettings::from_json`], so the forms refuse what the API refuses with its words; the
//! lists are [`endpoint_info`] and [`delivery_info`], what `GET /v1/webhook-endpoints` shows.

use std::sync::Arc;

use account_webhooks::{WebhookError, Webhooks, delivery_info, endpoint_info};
use api_contract::{
    AccountEventType, DeliveryState, EndpointDeliveryInfo, EndpointInfo, EndpointRequest,
    EndpointStatus, MAX_ENDPOINTS,
};
use credit_ledger::AccountSettings;
use http::{Request, StatusCode};
use maud::{Markup, html};
use watch_store::EndpointId;

use crate::Parts;
use crate::error::{Page, PageError, internal};
use crate::forms::read_session_form_up_to;
use crate::layout::{csrf, layout, time};
use crate::respond::{html, redirect};
use crate::visitor::Visitor;

/// Deliveries listed on an endpoint's page (the API's largest page).
const DELIVERIES_LISTED: u32 = 100;
/// The largest form these pages take: a URL and a few boxes.
const FORM_BYTES: usize = 8 * 1024;

fn webhooks(parts: &Parts) -> Result<&Arc<Webhooks>, PageError> {
    parts.webhooks.as_ref().ok_or(PageError::NotFound)
}

/// `GET /dashboard/webhooks`.
pub(crate) async fn page(parts: &Parts, visitor: &Visitor) -> Page {
    render(parts, visitor, StatusCode::OK, None).await
}

async fn render(
    parts: &Parts,
    visitor: &Visitor,
    status: StatusCode,
    refused: Option<String>,
) -> Page {
    let endpoints: Vec<EndpointInfo> = webhooks(parts)?
        .endpoints(visitor.live())
        .await
        .map_err(internal)?
        .iter()
        .map(endpoint_info)
        .collect();
    Ok(html(
        status,
        webhooks_markup(visitor, &endpoints, refused.as_deref()),
    ))
}

/// `POST /dashboard/webhooks`: registers the form's endpoint.
pub(crate) async fn add<B>(parts: &Parts, visitor: &Visitor, request: Request<B>) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let webhooks = webhooks(parts)?;
    let form = read_session_form_up_to(parts, visitor, request, FORM_BYTES).await?;
    let events: Vec<&str> = AccountEventType::ALL
        .into_iter()
        .map(AccountEventType::as_str)
        .filter(|name| form.contains_key(*name))
        .collect();
    let body = serde_json::json!({
        "url": form.get("url").map_or("", |u| u.trim()),
        "events": events,
    });
    let refused = |message: String| render(parts, visitor, StatusCode::BAD_REQUEST, Some(message));
    // The same validation, and so the same messages, as an endpoint sent to the API.
    let parsed = match EndpointRequest::from_json(
        body.to_string().as_bytes(),
        webhooks.settings().allow_private,
    ) {
        Ok(parsed) => parsed,
        Err(invalid) => return refused(invalid.to_string()).await,
    };
    match webhooks.create_endpoint(visitor.live(), &parsed).await {
        Ok(_) => Ok(redirect(&visitor.link("/dashboard/webhooks"))),
        Err(too_many @ WebhookError::TooManyEndpoints { .. }) => {
            let message = crate::error::sentence(&too_many);
            render(parts, visitor, StatusCode::CONFLICT, Some(message)).await
        }
        Err(other) => Err(internal(other)),
    }
}

/// `POST /dashboard/webhooks/{id}/delete`.
pub(crate) async fn delete<B>(
    parts: &Parts,
    visitor: &Visitor,
    request: Request<B>,
    id: &str,
) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let webhooks = webhooks(parts)?;
    read_session_form_up_to(parts, visitor, request, FORM_BYTES).await?;
    let deleted = webhooks
        .delete_endpoint(visitor.live(), endpoint_id(id)?)
        .await
        .map_err(internal)?;
    if !deleted {
        return Err(PageError::NotFound);
    }
    Ok(redirect(&visitor.link("/dashboard/webhooks")))
}

/// `POST /dashboard/webhooks/{id}/ping`: queues a signed `ping`, then shows the endpoint's deliveries with it.
pub(crate) async fn ping<B>(parts: &Parts, visitor: &Visitor, request: Request<B>, id: &str) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let webhooks = webhooks(parts)?;
    read_session_form_up_to(parts, visitor, request, FORM_BYTES).await?;
    let endpoint = endpoint_id(id)?;
    webhooks
        .ping(visitor.live(), endpoint)
        .await
        .map_err(|error| match error {
            WebhookError::TooManyPings { retry_after } => PageError::TooMany {
                message: crate::error::sentence(&error),
                retry_after,
            },
            other => internal(other),
        })?
        .ok_or(PageError::NotFound)?;
    Ok(redirect(
        &visitor.link(&format!("/dashboard/webhooks/{endpoint}")),
    ))
}

/// `GET /dashboard/webhooks/{id}`: the endpoint and its deliveries, newest first.
pub(crate) async fn deliveries(parts: &Parts, visitor: &Visitor, id: &str) -> Page {
    let webhooks = webhooks(parts)?;
    let id = endpoint_id(id)?;
    let endpoint = webhooks
        .endpoints(visitor.live())
        .await
        .map_err(internal)?
        .iter()
        .find(|e| e.id == id)
        .map(endpoint_info)
        .ok_or(PageError::NotFound)?;
    let deliveries: Vec<EndpointDeliveryInfo> = webhooks
        .endpoint_events(visitor.live(), Some(id), DELIVERIES_LISTED)
        .await
        .map_err(internal)?
        .iter()
        .map(delivery_info)
        .collect();
    Ok(html(
        StatusCode::OK,
        deliveries_markup(visitor, &endpoint, &deliveries),
    ))
}

/// `POST /dashboard/webhooks/threshold`: sets the low-balance threshold (a blank field removes it).
pub(crate) async fn threshold<B>(parts: &Parts, visitor: &Visitor, request: Request<B>) -> Page
where
    B: hyper::body::Body + Unpin,
{
    webhooks(parts)?;
    let form = read_session_form_up_to(parts, visitor, request, FORM_BYTES).await?;
    let typed = form.get("threshold").map_or("", |t| t.trim());
    // The field's text as the JSON value the API would be sent: blank is null, a number is itself.
    let value = if typed.is_empty() {
        Some(serde_json::Value::Null)
    } else {
        serde_json::from_str::<serde_json::Number>(typed)
            .ok()
            .map(serde_json::Value::Number)
    };
    let parsed = match value {
        Some(value) => AccountSettings::from_json(
            serde_json::json!({ "low_balance_threshold": value })
                .to_string()
                .as_bytes(),
        )
        .map_err(|invalid| invalid.to_string()),
        None => Err(format!(
            "`{typed}` is not a number: write the credits below which to be told, e.g. 25, or leave it blank \
             for no alert."
        )),
    };
    let settings = match parsed {
        Ok(settings) => settings,
        Err(message) => {
            return render(parts, visitor, StatusCode::BAD_REQUEST, Some(message)).await;
        }
    };
    if let Some(threshold) = settings.low_balance_threshold {
        parts
            .accounts
            .ledger()
            .set_low_balance_threshold(visitor.live(), threshold)
            .await?;
    }
    Ok(redirect(&visitor.link("/dashboard/webhooks")))
}

/// The id in the path, or 404.
fn endpoint_id(id: &str) -> Result<EndpointId, PageError> {
    id.parse()
        .ok()
        .filter(|n: &i64| *n > 0)
        .map(EndpointId)
        .ok_or(PageError::NotFound)
}

fn webhooks_markup(visitor: &Visitor, endpoints: &[EndpointInfo], refused: Option<&str>) -> Markup {
    let threshold = visitor.account.low_balance_threshold;
    let body = html! {
        h1 { "Webhooks" }
        p { "Endpoints receive the account's events, POSTed as JSON and signed with the account's webhook secret "
            "(the one its watches' events are signed with: show or rotate it on the Watches page) in " code { "Company-Data-Signature" }
            ". A delivery that fails is retried with backoff for a day; then the endpoint is disabled. "
            "See the README, \"Webhooks\", to verify the signature." }
        @if let Some(message) = refused {
            p.notice.error role="alert" { (message) }
        }
        section.card {
            h2 { "Low-balance alert" }
            p {
                @if let Some(threshold) = threshold {
                    "Endpoints that receive " code { "account.balance_low" } " are told once each time the balance ("
                    (visitor.account.balance) " credits) falls below " strong data-testid="threshold" { (threshold) } " credits."
                } @else {
                    "No threshold is set: " code { "account.balance_low" } " is never sent."
                }
            }
            form.row method="post" action=(visitor.link("/dashboard/webhooks/threshold")) {
                (csrf(visitor))
                div {
                    label for="threshold" { "Threshold in credits (blank for none)" }
                    input #threshold name="threshold" inputmode="decimal" value=[threshold.map(|t| t.to_string())];
                }
                button type="submit" { "Save" }
            }
        }
        form.card method="post" action=(visitor.link("/dashboard/webhooks")) {
            (csrf(visitor))
            h2 { "Add an endpoint" }
            label for="endpoint-url" { "URL (https)" }
            input #endpoint-url type="url" name="url" required placeholder="https://example.com/hooks/company-data";
            fieldset {
                legend { "Events" }
                @for kind in AccountEventType::ALL {
                    label.check {
                        input type="checkbox" name=(kind.as_str()) checked[kind != AccountEventType::AccountBalanceLow];
                        " " code { (kind.as_str()) }
                    }
                }
            }
            button type="submit" { "Add" }
            p.hint { "At most " (MAX_ENDPOINTS) " endpoints per account." }
        }
        @if endpoints.is_empty() {
            p { "No endpoints yet." }
        } @else {
            table data-testid="endpoints" {
                thead { tr { th { "URL" } th { "Events" } th { "Status" } th { "Last delivery" } th {} } }
                tbody {
                    @for endpoint in endpoints {
                        tr {
                            td { a href=(visitor.link(&format!("/dashboard/webhooks/{}", endpoint.id))) { (endpoint.url) } }
                            td { @for (n, kind) in endpoint.events.iter().enumerate() { @if n > 0 { ", " } code { (kind.as_str()) } } }
                            td {
                                @match endpoint.status {
                                    EndpointStatus::Enabled => "enabled",
                                    EndpointStatus::Disabled => span.notice.error {
                                        "disabled" @if let Some(reason) = &endpoint.disabled_reason { ": " (reason) }
                                    },
                                }
                            }
                            td {
                                @if let Some(delivery) = &endpoint.last_delivery {
                                    (time(delivery.at)) " · "
                                    @match (&delivery.error, delivery.status) {
                                        (None, Some(status)) => { "delivered (" (status) ")" },
                                        (Some(error), _) => { "failed: " (error) },
                                        (None, None) => { "delivered" },
                                    }
                                }
                            }
                            td {
                                @if endpoint.status == EndpointStatus::Enabled {
                                    form.inline method="post" action=(visitor.link(&format!("/dashboard/webhooks/{}/ping", endpoint.id))) {
                                        (csrf(visitor)) button.link type="submit" { "Ping" }
                                    }
                                }
                                form.inline method="post" action=(visitor.link(&format!("/dashboard/webhooks/{}/delete", endpoint.id))) {
                                    (csrf(visitor)) button.link type="submit" { "Delete" }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    layout("Webhooks", Some(visitor), "/dashboard/webhooks", &body)
}

fn deliveries_markup(
    visitor: &Visitor,
    endpoint: &EndpointInfo,
    deliveries: &[EndpointDeliveryInfo],
) -> Markup {
    let body = html! {
        h1 { "Deliveries to " (endpoint.url) }
        p { a href=(visitor.link("/dashboard/webhooks")) { "← Webhooks" } }
        @if deliveries.is_empty() {
            p { "Nothing was sent to this endpoint yet." }
        } @else {
            table data-testid="deliveries" {
                thead { tr { th { "Event" } th { "Type" } th { "Made" } th { "Status" } th.num { "Attempts" } th { "Last answer" } } }
                tbody {
                    @for delivery in deliveries {
                        tr {
                            td { code { (delivery.event_id) } }
                            td { code { (delivery.kind) } }
                            td { (time(delivery.created_at)) }
                            td {
                                @match delivery.status {
                                    DeliveryState::Delivered => { "delivered" @if let Some(at) = delivery.delivered_at { " " (time(at)) } },
                                    DeliveryState::Pending => { "pending" @if let Some(at) = delivery.next_attempt_at { ", next " (time(at)) } },
                                    DeliveryState::Failed => span.notice.error { "failed" },
                                }
                            }
                            td.num { (delivery.attempts) }
                            td {
                                @if let Some(status) = delivery.last_status { (status) }
                                @if let Some(error) = &delivery.last_error { " " (error) }
                            }
                        }
                    }
                }
            }
        }
    };
    layout(
        "Webhook deliveries",
        Some(visitor),
        "/dashboard/webhooks",
        &body,
    )
}
