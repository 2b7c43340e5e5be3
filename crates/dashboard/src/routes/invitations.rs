//! Accepting an invitation (`/dashboard/invitations/<token>`): the invited person picks a password.

use accounts::AccountsError;
use dashboard_auth::{AuthError, Invitation};
use http::{Request, StatusCode};
use maud::{Markup, html};

use crate::Parts;
use crate::error::Page;
use crate::forms::read_public_form;
use crate::layout::layout;
use crate::respond::html;
use crate::routes::sign_in::signed_in;

/// `GET`: the password form, or why the link does not work.
pub(crate) async fn form(parts: &Parts, token: &str, error: Option<&str>) -> Page {
    let invitation = parts.accounts.users().invitation(token).await?;
    let status = match (&invitation, error) {
        (None, _) => StatusCode::NOT_FOUND,
        (Some(_), Some(_)) => StatusCode::BAD_REQUEST,
        (Some(_), None) => StatusCode::OK,
    };
    Ok(html(status, invitation_page(invitation.as_ref(), error)))
}

/// `POST`: sets the password, signs the new user in.
pub(crate) async fn accept<B>(parts: &Parts, request: Request<B>, token: &str, secure: bool) -> Page
where
    B: hyper::body::Body + Unpin,
{
    // The link's secret token is the proof here, as a CSRF token is elsewhere: a cross-site form cannot know it.
    let client = parts.client_address(&request);
    let form = read_public_form(parts, request).await?;
    let password = form.get("password").map(String::as_str).unwrap_or_default();
    if form.get("confirm").map(String::as_str) != Some(password) {
        return self::form(parts, token, Some("The two passwords differ.")).await;
    }
    let users = parts.accounts.users();
    match users.accept_invitation(token, password, client).await {
        Ok((_, session, _)) => Ok(signed_in(&session, secure)),
        Err(AuthError::InvitationInvalid) => self::form(parts, token, None).await,
        Err(error @ (AuthError::AddressLimited { .. } | AuthError::Busy { .. })) => {
            Err(error.into())
        }
        Err(error) => {
            let message = crate::error::refusal(AccountsError::Users(error))?;
            self::form(parts, token, Some(&message)).await
        }
    }
}

fn invitation_page(invitation: Option<&Invitation>, error: Option<&str>) -> Markup {
    let body = html! {
        div.card.narrow {
            @if let Some(invitation) = invitation {
                h1 { "Choose a password" }
                p { "You were invited to manage an account as " strong { (invitation.email) } "." }
                @if let Some(error) = error {
                    p.notice.error role="alert" { (error) }
                }
                form method="post" {
                    label for="password" { "Password" }
                    input #password type="password" name="password" autocomplete="new-password"
                        minlength=(dashboard_auth::MIN_PASSWORD_CHARS) required aria-describedby="password-hint";
                    p.hint #password-hint { "At least " (dashboard_auth::MIN_PASSWORD_CHARS) " characters." }
                    label for="confirm" { "The same password again" }
                    input #confirm type="password" name="confirm" autocomplete="new-password" required;
                    button type="submit" { "Create my sign-in" }
                }
            } @else {
                h1 { "This invitation is not valid any more" }
                p { "It was used already or it expired. Ask your admin for a new one." }
            }
        }
    };
    layout("Invitation", None, "", &body)
}
