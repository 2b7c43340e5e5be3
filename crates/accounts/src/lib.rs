//! Setting up customers: one façade over the ledger, the API keys and the dashboard's sign-ins, so that the
//! first start, the command line and the dashboard provision accounts the same way.
//!
//! - [`Accounts::first_start`]: on a database without keys, the `default` account with
//!   [`FIRST_START_CREDITS`] and a key for it.
//! - [`Accounts::create_key`]: an account (made if missing), optional credits, a new key.
//! - [`Accounts::create_sign_in`] and [`Accounts::invite`]: people who manage an account in the dashboard.
//! - [`Accounts::grant`]: credits with a ledger note.
//!
//! The parts stay reachable ([`Accounts::ledger`], [`Accounts::keys`], [`Accounts::users`]) for what only
//! reads or checks. Not here: prices and billing of requests (`credit-ledger`, `company-lookup`), key
//! verification (`api-keys`), sessions (`dashboard-auth`), HTTP.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use std::sync::Arc;
//! use accounts::{Accounts, KeyMode};
//! use api_keys::{ApiKeys, SqliteKeyStore};
//! use credit_ledger::{Credits, SqliteLedger};
//! use dashboard_auth::{SqliteUserStore, Users};
//! let dir = tempfile::tempdir()?;
//! let pool = sqlite_pool::SqlitePool::open(&dir.path().join("accounts.db")).await?;
//! let accounts = Accounts::new(
//!     Arc::new(SqliteLedger::with_pool(pool.clone()).await?),
//!     Arc::new(ApiKeys::new(Arc::new(SqliteKeyStore::with_pool(pool.clone()).await?))),
//!     Arc::new(Users::new(Arc::new(SqliteUserStore::with_pool(pool).await?))),
//! );
//! let made = accounts.create_key("acme", Some(Credits::parse("50")?), Some("CRM sync"), KeyMode::Live).await?;
//! assert_eq!(made.account.balance, Credits::parse("50")?);
//! assert_eq!(accounts.keys().verify(made.key.expose()).await?.tenant, credit_ledger::Tenant::live(made.account.id));
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```
#![deny(missing_docs)]

use std::sync::Arc;

pub use api_keys::KeyMode;
use api_keys::{ApiKey, ApiKeys, KeyError, KeyRecord};
use credit_ledger::{Account, Credits, Ledger, LedgerError, quotas_of};
pub use credit_ledger::{QuotaOverrides, Quotas};
use dashboard_auth::{AuthError, Invitation, Secret, User, Users};

pub use company_model::AccountId;

/// The account [`Accounts::first_start`] makes.
pub const FIRST_START_ACCOUNT: &str = "default";
/// The credits [`Accounts::first_start`] grants it: 100.
pub const FIRST_START_CREDITS: Credits = Credits::from_millis(100_000);

/// Why setting up an account, a key or a sign-in did not happen; each part's own error passes through.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AccountsError {
    /// The ledger refused or failed (e.g. [`LedgerError::UnknownAccount`]).
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The key store refused or failed.
    #[error(transparent)]
    Keys(#[from] KeyError),
    /// The sign-in store refused or failed (e.g. [`AuthError::EmailTaken`], [`AuthError::WeakPassword`]).
    #[error(transparent)]
    Users(#[from] AuthError),
}

/// A key just made: the full key, to show once, and where it spends from.
#[derive(Debug)]
pub struct CreatedKey {
    /// The full key; the service keeps only its hash.
    pub key: ApiKey,
    /// The stored record (prefix, suffix, name).
    pub record: KeyRecord,
    /// The account, with its balance after any grant.
    pub account: Account,
}

/// Accounts, keys and sign-ins over the three stores. Cheap to share behind an `Arc`.
#[derive(Clone, Debug)]
pub struct Accounts {
    ledger: Arc<dyn Ledger>,
    keys: Arc<ApiKeys>,
    users: Arc<Users>,
    /// The deployment's quotas (an account's own replace them): here, [`Quotas::keys`].
    quotas: Quotas,
}

impl Accounts {
    /// The façade over these parts (normally all on one database).
    pub fn new(ledger: Arc<dyn Ledger>, keys: Arc<ApiKeys>, users: Arc<Users>) -> Self {
        Self {
            ledger,
            keys,
            users,
            quotas: Quotas::default(),
        }
    }

    /// The same façade under the deployment's `quotas` (the default: [`Quotas::default`]).
    #[must_use]
    pub fn with_quotas(self, quotas: Quotas) -> Self {
        Self { quotas, ..self }
    }

    /// The deployment's quotas.
    pub fn deployment_quotas(&self) -> Quotas {
        self.quotas
    }

    /// The quotas in force for `account`: its own over the deployment's.
    ///
    /// # Errors
    /// [`AccountsError::Ledger`].
    pub async fn quotas(&self, account: AccountId) -> Result<Quotas, AccountsError> {
        Ok(quotas_of(self.ledger.as_ref(), account, &self.quotas).await?)
    }

    /// Sets the account's own quotas: each of `changes` set replaces the account's, `clear` first drops all of
    /// them (the deployment's apply again). Returns the quotas in force after.
    ///
    /// # Errors
    /// [`AccountsError::Ledger`] ([`LedgerError::UnknownAccount`]).
    pub async fn set_quotas(
        &self,
        account: AccountId,
        changes: QuotaOverrides,
        clear: bool,
    ) -> Result<Quotas, AccountsError> {
        let current = self
            .ledger
            .account(account)
            .await?
            .ok_or_else(|| LedgerError::UnknownAccount(account.to_string()))?;
        let base = if clear {
            QuotaOverrides::default()
        } else {
            current.quotas
        };
        let updated = self
            .ledger
            .set_quotas(account, base.merged(changes))
            .await?;
        Ok(updated.quotas.over(&self.quotas))
    }

    /// A new key of `mode` for `account`, within its quota of keys ([`Quotas::keys`]).
    ///
    /// # Errors
    /// [`AccountsError::Keys`] ([`api_keys::KeyError::TooManyKeys`]), [`AccountsError::Ledger`].
    pub async fn new_key(
        &self,
        account: AccountId,
        name: Option<&str>,
        mode: KeyMode,
    ) -> Result<(api_keys::ApiKey, api_keys::KeyRecord), AccountsError> {
        let quota = self.quotas(account).await?.keys;
        Ok(self.keys.create_for(account, name, mode, quota).await?)
    }

    /// Balances, holds and the ledger.
    pub fn ledger(&self) -> &Arc<dyn Ledger> {
        &self.ledger
    }

    /// API keys: verification, listing, revocation.
    pub fn keys(&self) -> &Arc<ApiKeys> {
        &self.keys
    }

    /// Dashboard sign-ins and sessions.
    pub fn users(&self) -> &Arc<Users> {
        &self.users
    }

    /// The account called `name`, made with a zero balance if missing, then granted `credits` (when above
    /// zero) with `note` in the ledger. Returns it with its balance after the grant.
    ///
    /// # Errors
    /// [`AccountsError::Ledger`].
    pub async fn provision(
        &self,
        name: &str,
        credits: Option<Credits>,
        note: &str,
    ) -> Result<Account, AccountsError> {
        let mut account = self.ledger.ensure_account(name).await?;
        if let Some(credits) = credits.filter(|c| *c > Credits::ZERO) {
            account.balance = self.ledger.grant(account.id, credits, note).await?;
        }
        Ok(account)
    }

    /// Adds `amount` to an account with `note` in the ledger; returns the new balance.
    ///
    /// # Errors
    /// [`AccountsError::Ledger`]: [`LedgerError::UnknownAccount`] for no such account,
    /// [`LedgerError::InvalidAmount`] for an amount of zero.
    pub async fn grant(
        &self,
        account: AccountId,
        amount: Credits,
        note: &str,
    ) -> Result<Credits, AccountsError> {
        if amount == Credits::ZERO {
            return Err(LedgerError::InvalidAmount("a grant must be above zero".to_owned()).into());
        }
        Ok(self.ledger.grant(account, amount, note).await?)
    }

    /// A new key of `mode` for the account called `account` (made if missing), after granting it `credits`
    /// (a test key spends none of them: [`KeyMode::Test`]).
    ///
    /// # Errors
    /// [`AccountsError::Ledger`], [`AccountsError::Keys`].
    pub async fn create_key(
        &self,
        account: &str,
        credits: Option<Credits>,
        key_name: Option<&str>,
        mode: KeyMode,
    ) -> Result<CreatedKey, AccountsError> {
        let account = self
            .provision(account, credits, "granted with a new key")
            .await?;
        let (key, record) = self.new_key(account.id, key_name, mode).await?;
        Ok(CreatedKey {
            key,
            record,
            account,
        })
    }

    /// On a database that has no key at all, the [`FIRST_START_ACCOUNT`] account with
    /// [`FIRST_START_CREDITS`] and a key for it; `None` when any key exists.
    ///
    /// # Errors
    /// [`AccountsError::Ledger`], [`AccountsError::Keys`].
    pub async fn first_start(&self) -> Result<Option<CreatedKey>, AccountsError> {
        if !self.keys.list().await?.is_empty() {
            return Ok(None);
        }
        let account = self
            .provision(
                FIRST_START_ACCOUNT,
                Some(FIRST_START_CREDITS),
                "first start",
            )
            .await?;
        let (key, record) = self.keys.create(account.id, Some("first key")).await?;
        Ok(Some(CreatedKey {
            key,
            record,
            account,
        }))
    }

    /// A dashboard sign-in for `email` managing the account called `account` (default: one named by the
    /// email; made if missing, granted `credits`). Nothing is made when the email or password is refused.
    ///
    /// # Errors
    /// [`AccountsError::Users`] ([`AuthError::InvalidEmail`], [`AuthError::WeakPassword`],
    /// [`AuthError::EmailTaken`]), [`AccountsError::Ledger`].
    pub async fn create_sign_in(
        &self,
        email: &str,
        password: &str,
        account: Option<&str>,
        admin: bool,
        credits: Option<Credits>,
    ) -> Result<(User, Account), AccountsError> {
        let email = dashboard_auth::normalize_email(email)?;
        dashboard_auth::check_password_rules(password)?;
        if self.users.by_email(&email).await?.is_some() {
            return Err(AuthError::EmailTaken(email).into());
        }
        let account = self
            .provision(
                account.unwrap_or(&email),
                credits,
                "granted with a new sign-in",
            )
            .await?;
        let user = self
            .users
            .create(&email, password, account.id, admin)
            .await?;
        Ok((user, account))
    }

    /// An invitation link for `email` to manage `account`, or a new account named by the email when `None`.
    /// A refused invitation (bad or taken email) leaves no account behind. Returns the link's token (shown
    /// once) and the invitation.
    ///
    /// # Errors
    /// [`AccountsError::Users`] ([`AuthError::InvalidEmail`], [`AuthError::EmailTaken`]),
    /// [`AccountsError::Ledger`] ([`LedgerError::UnknownAccount`] for an account id that does not exist).
    pub async fn invite(
        &self,
        email: &str,
        account: Option<AccountId>,
        admin: bool,
    ) -> Result<(Secret, Invitation), AccountsError> {
        let email = dashboard_auth::normalize_email(email)?;
        if self.users.by_email(&email).await?.is_some() {
            return Err(AuthError::EmailTaken(email).into());
        }
        let account = match account {
            Some(id) => {
                self.ledger
                    .account(id)
                    .await?
                    .ok_or_else(|| LedgerError::UnknownAccount(id.to_string()))?
                    .id
            }
            None => self.ledger.ensure_account(&email).await?.id,
        };
        Ok(self.users.invite(&email, account, admin).await?)
    }
}
