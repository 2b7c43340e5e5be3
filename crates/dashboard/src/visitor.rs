//! Who is signed in, for one request, and which account they are looking at.

use accounts::AccountId;
use credit_ledger::{Account, Tenant};
use dashboard_auth::{Session, User};
use http::HeaderMap;

use crate::Parts;
use crate::error::PageError;
use crate::respond::{SESSION_COOKIE, cookie, query_param};

/// Who is signed in, for one request.
#[derive(Clone)]
pub(crate) struct Visitor {
    pub(crate) user: User,
    pub(crate) session: Session,
    /// The account shown: the user's own, or for an admin any account picked with `?account=`.
    pub(crate) account: Account,
    /// Every account, for an admin's account picker; empty for others.
    pub(crate) all_accounts: Vec<Account>,
}

impl Visitor {
    /// Whose data the pages show and change: the shown account's live data. Test mode belongs to a key
    /// (`cdk_test_…`), not to a person signed in.
    pub(crate) fn live(&self) -> Tenant {
        Tenant::live(self.account.id)
    }

    /// The visitor of a request with a live session cookie; `None` without one.
    pub(crate) async fn of(
        parts: &Parts,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<Option<Self>, PageError> {
        let Some(token) = cookie(headers, SESSION_COOKIE) else {
            return Ok(None);
        };
        let Some((session, user)) = parts.accounts.users().session(token).await? else {
            return Ok(None);
        };
        let ledger = parts.accounts.ledger();
        let all_accounts = if user.admin {
            ledger.accounts().await?
        } else {
            Vec::new()
        };
        let picked = query_param(query, "account")
            .and_then(|id| id.parse().ok())
            .map(AccountId)
            .filter(|id| user.may_manage(*id))
            .unwrap_or(user.account);
        let account = ledger.account(picked).await?.ok_or(PageError::NotFound)?;
        Ok(Some(Self {
            user,
            session,
            account,
            all_accounts,
        }))
    }

    /// `path` for the account shown (`?account=` only when an admin looks at another one than their own).
    pub(crate) fn link(&self, path: &str) -> String {
        self.link_for(path, self.account.id)
    }

    /// `path` for `account` (`?account=` only when it is not the visitor's own).
    pub(crate) fn link_for(&self, path: &str, account: AccountId) -> String {
        if account == self.user.account {
            path.to_owned()
        } else {
            let separator = if path.contains('?') { '&' } else { '?' };
            format!("{path}{separator}account={}", account.0)
        }
    }

    /// Refuses what only an admin may do.
    pub(crate) fn require_admin(&self) -> Result<(), PageError> {
        if self.user.admin {
            Ok(())
        } else {
            Err(PageError::Forbidden)
        }
    }

    /// The same visitor with the accounts read again (after a change of balances or accounts).
    pub(crate) async fn refreshed(&self, parts: &Parts) -> Result<Self, PageError> {
        Ok(Self {
            all_accounts: parts.accounts.ledger().accounts().await?,
            ..self.clone()
        })
    }
}
