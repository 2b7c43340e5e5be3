//! Answering a dashboard request: its page found in the table ([`crate::table`]); the visitor, for a page that
//! needs a session; then the one `match` from an operation to its handler.

use http::Request;

use crate::error::{Page, PageError};
use crate::routes::{
    admin, credits, invitations, jobs, keys, search, sign_in, try_it, usage, watches, webhooks,
};
use crate::table::{Access, Op, page};
use crate::visitor::Visitor;
use crate::{Parts, respond};

/// The answer to a request under the dashboard's prefix (`secure`: cookies get `Secure`).
pub(crate) async fn dispatch<B>(parts: &Parts, request: Request<B>, secure: bool) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let found = page(request.uri().path());
    let id = found
        .as_ref()
        .and_then(|(_, id)| id.clone())
        .unwrap_or_default();
    let public = found
        .as_ref()
        .is_some_and(|(route, _)| route.tag == Access::Anyone);
    if public {
        let op = found
            .as_ref()
            .and_then(|(route, _)| route.operation(request.method()));
        return match (op, found) {
            (Some(Op::Stylesheet), _) => {
                Ok(respond::asset(respond::CSS, "text/css; charset=utf-8"))
            }
            (Some(Op::Script), _) => Ok(respond::asset(
                respond::JS,
                "text/javascript; charset=utf-8",
            )),
            (Some(Op::SignInForm), _) => Ok(sign_in::form(request.headers(), secure)),
            (Some(Op::SignIn), _) => sign_in::submit(parts, request, secure).await,
            (Some(Op::InvitationForm), _) => invitations::form(parts, &id, None).await,
            (Some(Op::AcceptInvitation), _) => {
                invitations::accept(parts, request, &id, secure).await
            }
            (_, Some((route, _))) => Err(PageError::MethodNotAllowed {
                allow: route.allow(),
            }),
            (_, None) => Err(PageError::NotFound),
        };
    }
    // Everything else needs a session (even to learn that a page does not exist); without one, the browser
    // goes to the sign-in page.
    let is_get = matches!(*request.method(), http::Method::GET | http::Method::HEAD);
    let Some(visitor) = Visitor::of(parts, request.uri().query(), request.headers()).await? else {
        return if is_get {
            Ok(respond::redirect("/dashboard/sign-in"))
        } else {
            Err(PageError::Csrf)
        };
    };
    let Some((route, _)) = found else {
        return Err(PageError::NotFound);
    };
    let Some(op) = route.operation(request.method()) else {
        return Err(PageError::MethodNotAllowed {
            allow: route.allow(),
        });
    };
    run(parts, &visitor, op, request, &id, secure).await
}

/// The handler of each signed-in operation.
async fn run<B>(
    parts: &Parts,
    visitor: &Visitor,
    op: Op,
    request: Request<B>,
    id: &str,
    secure: bool,
) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let query = request.uri().query().map(str::to_owned);
    let query = query.as_deref();
    match op {
        Op::Home => Ok(respond::redirect("/dashboard/keys")),
        Op::Keys => keys::page(parts, visitor).await,
        Op::CreateKey => keys::create(parts, visitor, request).await,
        Op::RevokeKeyForm => Ok(keys::revoke_page(
            visitor,
            &keys::revocable(parts, visitor, id).await?,
        )),
        Op::RevokeKey => {
            let key = keys::revocable(parts, visitor, id).await?;
            keys::revoke(parts, visitor, request, key).await
        }
        Op::Credits => credits::page(parts, visitor, query).await,
        Op::CreditsCsv => credits::csv(parts, visitor).await,
        Op::Usage => usage::page(parts, visitor).await,
        Op::TryIt => try_it::page(parts, visitor).await,
        Op::RunTryIt => try_it::run(parts, visitor, request).await,
        Op::Jobs => jobs::page(parts, visitor).await,
        Op::StartJob => jobs::start(parts, visitor, request).await,
        Op::JobResultsCsv => jobs::download(parts, visitor, id, true).await,
        Op::JobResultsNdjson => jobs::download(parts, visitor, id, false).await,
        Op::CancelJob => jobs::cancel(parts, visitor, request, id).await,
        Op::Watches => watches::page(parts, visitor).await,
        Op::AddWatch => watches::add(parts, visitor, request).await,
        Op::RemoveWatch => watches::remove(parts, visitor, request, id).await,
        Op::WebhookSecret => watches::secret(parts, visitor, request, false).await,
        Op::RotateWebhookSecret => watches::secret(parts, visitor, request, true).await,
        Op::History => watches::history(parts, visitor, query).await,
        Op::Search => search::page(parts, visitor, query).await,
        Op::SearchCsv => search::csv(parts, visitor, query).await,
        Op::Webhooks => webhooks::page(parts, visitor).await,
        Op::AddEndpoint => webhooks::add(parts, visitor, request).await,
        Op::EndpointDeliveries => webhooks::deliveries(parts, visitor, id).await,
        Op::PingEndpoint => webhooks::ping(parts, visitor, request, id).await,
        Op::DeleteEndpoint => webhooks::delete(parts, visitor, request, id).await,
        Op::LowBalanceThreshold => webhooks::threshold(parts, visitor, request).await,
        Op::Admin => admin::page(parts, visitor, None).await,
        Op::Grant => admin::grant(parts, visitor, request).await,
        Op::Invite => admin::invite(parts, visitor, request).await,
        Op::SetQuotas => admin::quotas(parts, visitor, request).await,
        Op::RemoveUser => {
            admin::offboard(parts, visitor, request, id, admin::Offboard::Remove).await
        }
        Op::EndSessions => {
            admin::offboard(parts, visitor, request, id, admin::Offboard::EndSessions).await
        }
        Op::SetPassword => {
            admin::offboard(parts, visitor, request, id, admin::Offboard::SetPassword).await
        }
        Op::WithdrawInvitation => admin::withdraw(parts, visitor, request).await,
        Op::SignOut => sign_in::sign_out(parts, visitor, request, secure).await,
        // Public operations are answered before the session is read.
        Op::Stylesheet
        | Op::Script
        | Op::SignInForm
        | Op::SignIn
        | Op::InvitationForm
        | Op::AcceptInvitation => Err(PageError::NotFound),
    }
}
