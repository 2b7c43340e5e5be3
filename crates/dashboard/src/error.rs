//! The dashboard's failures and their HTTP statuses (`layout::error_response` renders them as pages).

use accounts::AccountsError;
use api_keys::KeyError;
use company_lookup::LookupError;
use credit_ledger::LedgerError;
use dashboard_auth::AuthError;
use http::StatusCode;
use http_serve::Response;

/// What a page handler returns.
pub(crate) type Page = Result<Response, PageError>;

/// Why a dashboard request failed; rendered as an HTML page with the status.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PageError {
    #[error("This page does not exist.")]
    NotFound,
    #[error(
        "This form has expired or did not come from this dashboard. Go back, reload the page and try again."
    )]
    Csrf,
    #[error("Only an admin can do this.")]
    Forbidden,
    #[error("{0}")]
    BadRequest(String),
    /// Refused by a quota: 409.
    #[error("{0}")]
    Conflict(String),
    /// Refused for want of credits: 402, as the API answers.
    #[error("{0}")]
    PaymentRequired(String),
    /// Refused for the key's mode (a test key where the network is needed): 403, as the API answers.
    #[error("{0}")]
    NotForThisKey(String),
    /// No page answered within the live time-out: 504, as the API answers.
    #[error("{0}")]
    TimedOut(String),
    #[error("Use {allow} for this page.")]
    MethodNotAllowed { allow: String },
    /// Refused for a limit (password forms from one address, the account's live lookups or searches in flight,
    /// webhook pings): 429 with `Retry-After`.
    #[error("{message}")]
    TooMany {
        message: String,
        retry_after: std::time::Duration,
    },
    /// The service cannot take this now (every password hashing thread busy): 503 with `Retry-After`.
    #[error("{message}")]
    Busy {
        message: String,
        retry_after: std::time::Duration,
    },
    /// A store failed; logged with its source chain, shown without detail.
    #[error("Something went wrong on our side (a store did not answer). Try again in a moment.")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl PageError {
    /// The HTTP status of the error page.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Csrf | Self::Forbidden | Self::NotForThisKey(_) => StatusCode::FORBIDDEN,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::PaymentRequired(_) => StatusCode::PAYMENT_REQUIRED,
            Self::TimedOut(_) => StatusCode::GATEWAY_TIMEOUT,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::TooMany { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Busy { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// Any failure of a store or of the machinery: an internal error.
pub(crate) fn internal(error: impl std::error::Error + Send + Sync + 'static) -> PageError {
    PageError::Internal(Box::new(error))
}

impl From<KeyError> for PageError {
    fn from(error: KeyError) -> Self {
        internal(error)
    }
}

impl From<LedgerError> for PageError {
    fn from(error: LedgerError) -> Self {
        internal(error)
    }
}

impl From<bulk_jobs::BulkError> for PageError {
    fn from(error: bulk_jobs::BulkError) -> Self {
        internal(error)
    }
}

impl From<AuthError> for PageError {
    fn from(error: AuthError) -> Self {
        match error {
            AuthError::AddressLimited { retry_after } => Self::TooMany {
                message: sentence(&error),
                retry_after,
            },
            AuthError::Busy { retry_after } => Self::Busy {
                message: sentence(&error),
                retry_after,
            },
            other => internal(other),
        }
    }
}

impl PageError {
    /// How long the client should wait before sending again, for the `Retry-After` header.
    pub(crate) fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            Self::TooMany { retry_after, .. } | Self::Busy { retry_after, .. } => {
                Some(*retry_after)
            }
            _ => None,
        }
    }
}

impl From<AccountsError> for PageError {
    fn from(error: AccountsError) -> Self {
        match error {
            AccountsError::Users(error) => error.into(),
            other => internal(other),
        }
    }
}

/// What a person is told when a form's request is refused for a reason they can act on (e.g. a taken email, a
/// weak password, an unknown account); `Err` for a failure of the service itself.
pub(crate) fn refusal(error: AccountsError) -> Result<String, PageError> {
    match error {
        AccountsError::Users(
            error @ (AuthError::InvalidEmail(_)
            | AuthError::EmailTaken(_)
            | AuthError::WeakPassword
            | AuthError::InvitationInvalid),
        ) => Ok(sentence(&error)),
        AccountsError::Ledger(LedgerError::UnknownAccount(name)) => {
            Ok(format!("There is no account {name}."))
        }
        AccountsError::Ledger(LedgerError::InvalidAmount(_)) => {
            Ok("Write an amount above zero, e.g. 100 or 0.5.".to_owned())
        }
        other => Err(other.into()),
    }
}

/// What a form shows when the lookup refused the request for a reason the person can act on, with the API's
/// status for it: credits (402, with `credits_advice` after the reason: what the page offers instead), a test
/// key where the network is needed or a server without test mode (403), the live-lookup cap (429, with its wait
/// for `Retry-After`), a time-out (504); `Err` for a failure of the service itself.
pub(crate) fn lookup_refusal(
    error: LookupError,
    credits_advice: &str,
) -> Result<PageError, PageError> {
    match error {
        error @ LookupError::Ledger(LedgerError::InsufficientCredits { .. }) => Ok(
            PageError::PaymentRequired(format!("{} {credits_advice}", sentence(&error))),
        ),
        error @ LookupError::NotInTestMode { .. } => Ok(PageError::NotForThisKey(format!(
            "{} Pick a live key for this.",
            sentence(&error)
        ))),
        // Its message says to use a live key already.
        error @ LookupError::TestModeUnavailable => Ok(PageError::NotForThisKey(sentence(&error))),
        error @ LookupError::TooManyLiveLookups { retry_after, .. } => Ok(PageError::TooMany {
            message: format!(
                "{} Nothing was fetched or charged: try again in {} s, or pick a freshness window so that \
                 stored snapshots answer.",
                sentence(&error),
                http_serve::retry_after_seconds(retry_after)
            ),
            retry_after,
        }),
        error @ LookupError::TimedOut { .. } => Ok(PageError::TimedOut(format!(
            "{} Try again, or pick a freshness window so that stored snapshots answer.",
            sentence(&error)
        ))),
        other => Err(internal(other)),
    }
}

/// A library error's message as a sentence on a page: first letter in upper case, a full stop at the end.
pub(crate) fn sentence(error: &impl std::fmt::Display) -> String {
    format!("{}.", capitalized(&error.to_string()))
}

/// The sentence with its first letter in upper case.
pub(crate) fn capitalized(sentence: &str) -> String {
    let mut chars = sentence.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect::<String>()
    })
}
