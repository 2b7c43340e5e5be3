//! Posted forms: their media type and size checked, and a session's forms their CSRF token.

use std::collections::HashMap;

use api_contract::MAX_BODY_BYTES;
use http::{Request, header};
use http_serve::BodyError;
use subtle::ConstantTimeEq;

use crate::Parts;
use crate::error::PageError;
use crate::visitor::Visitor;

/// The largest form anyone may send without a session (signing in, accepting an invitation): an email and a
/// password of up to 1000 characters, each percent-encoded, fit in it many times over.
const PUBLIC_FORM_BYTES: usize = 16 * 1024;

/// A form sent without a session, of at most [`PUBLIC_FORM_BYTES`].
pub(crate) async fn read_public_form<B>(
    parts: &Parts,
    request: Request<B>,
) -> Result<HashMap<String, String>, PageError>
where
    B: hyper::body::Body + Unpin,
{
    read_form_up_to(parts, request, PUBLIC_FORM_BYTES).await
}

/// A posted form's fields, after checking its media type, for a form of up to `limit` bytes.
async fn read_form_up_to<B>(
    parts: &Parts,
    request: Request<B>,
    limit: usize,
) -> Result<HashMap<String, String>, PageError>
where
    B: hyper::body::Body + Unpin,
{
    let is_form = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if !is_form {
        return Err(PageError::BadRequest(
            "Send this form from the dashboard page.".to_owned(),
        ));
    }
    let body = http_serve::read_body(request, limit, parts.settings.body_timeout)
        .await
        .map_err(|error| {
            PageError::BadRequest(match error {
                BodyError::TooLarge { limit } => format!(
                    "The form is larger than {} KB: send fewer URLs at once.",
                    limit / 1024
                ),
                _ => "The form did not arrive whole. Send it again.".to_owned(),
            })
        })?;
    serde_urlencoded::from_bytes(&body).map_err(|_| {
        PageError::BadRequest("The form did not arrive whole. Send it again.".to_owned())
    })
}

/// The form's fields, if it carries this session's CSRF token. A form carries at most what an API request does
/// (Try it's URLs).
pub(crate) async fn read_session_form<B>(
    parts: &Parts,
    visitor: &Visitor,
    request: Request<B>,
) -> Result<HashMap<String, String>, PageError>
where
    B: hyper::body::Body + Unpin,
{
    read_session_form_up_to(parts, visitor, request, MAX_BODY_BYTES).await
}

/// [`read_session_form`] for a form of up to `limit` bytes (a bulk job's list).
pub(crate) async fn read_session_form_up_to<B>(
    parts: &Parts,
    visitor: &Visitor,
    request: Request<B>,
    limit: usize,
) -> Result<HashMap<String, String>, PageError>
where
    B: hyper::body::Body + Unpin,
{
    let form = read_form_up_to(parts, request, limit).await?;
    let presented = form.get("csrf").map(String::as_bytes).unwrap_or_default();
    if bool::from(presented.ct_eq(visitor.session.csrf_token.as_bytes())) {
        Ok(form)
    } else {
        Err(PageError::Csrf)
    }
}
