//! Dashboard sign-in: the people who manage an account's keys and credits in a browser.
//!
//! - A [`User`] has an email, an argon2id password hash and the billing account (`credit-ledger`'s
//!   [`AccountId`]) it manages; an admin user may see every account and grant credits.
//! - [`Users::sign_in`] checks a password and opens a [`Session`]: a random token for the cookie, of which only
//!   the SHA-256 digest is stored, and a CSRF token that every form of the session must carry. Sessions end at
//!   [`SESSION_LIFETIME`] or at sign-out.
//! - [`Users::invite`] makes a one-time link for a new user; [`Users::accept_invitation`] sets its password.
//! - Password work is bounded ([`PasswordLimits`]): forms are limited per client address before anything is
//!   read, sign-in attempts per email ([`SIGN_IN_BURST`] at once, then one per [`SIGN_IN_REFILL`]), an
//!   invitation's link is looked up before its password is hashed, and argon2 runs on a few threads of its own
//!   (half the cores) with a bounded queue, refusing more at once ([`AuthError::Busy`]) instead of taking the
//!   cores or the database's blocking pool from everyone else.
//!
//! [`UserStore`] is the backend-neutral interface; `SqliteUserStore` the embedded backend (feature `sqlite`,
//! the default), `PgUserStore` the backend for several servers on one PostgreSQL database (feature
//! `postgres`).
//! Not here: API keys (`api-keys`), credits (`credit-ledger`), HTML and cookies (the server binary).
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use std::sync::Arc;
//! use company_model::AccountId;
//! use dashboard_auth::{SqliteUserStore, Users};
//! let dir = tempfile::tempdir()?;
//! let users = Users::new(Arc::new(SqliteUserStore::open(&dir.path().join("users.db")).await?));
//! users.create("Ada@Example.com", "correct horse battery", AccountId(1), false).await?;
//! let (token, session) = users.sign_in("ada@example.com", "correct horse battery", None).await?;
//! assert_eq!(users.session(token.expose()).await?.map(|(s, _)| s.csrf_token), Some(session.csrf_token));
//! users.sign_out(token.expose()).await?;
//! assert!(users.session(token.expose()).await?.is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```
#![deny(missing_docs)]

mod password_work;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;
mod users;

pub use company_model::AccountId;
pub use password_work::PasswordLimits;
#[cfg(feature = "postgres")]
pub use postgres::PgUserStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteUserStore;
pub use users::{
    INVITATION_LIFETIME, MIN_PASSWORD_CHARS, SESSION_LIFETIME, SIGN_IN_BURST, SIGN_IN_REFILL,
    Secret, Users, check_password_rules, normalize_email,
};

/// The id of a dashboard user.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UserId(pub i64);

/// A person who signs in to the dashboard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    /// Its id.
    pub id: UserId,
    /// The sign-in email, lower-cased.
    pub email: String,
    /// The billing account whose keys, credits and usage this user manages.
    pub account: AccountId,
    /// An admin sees every account and may grant credits and invite users.
    pub admin: bool,
    /// When it was created.
    pub created_at: jiff::Timestamp,
}

impl User {
    /// Whether this user may see and manage `account`'s keys, credits and usage: an admin any account, anyone
    /// else only their own.
    pub fn may_manage(&self, account: AccountId) -> bool {
        self.admin || self.account == account
    }
}

/// A signed-in browser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// The user signed in.
    pub user: UserId,
    /// The token every form of this session must carry (32 base62 characters).
    pub csrf_token: String,
    /// When it ends, whatever happens.
    pub expires_at: jiff::Timestamp,
}

/// A pending invitation, as stored (the link's token only as a digest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invitation {
    /// The email the new user will sign in with.
    pub email: String,
    /// The account the new user will manage.
    pub account: AccountId,
    /// Whether the new user is an admin.
    pub admin: bool,
    /// When the link stops working.
    pub expires_at: jiff::Timestamp,
}

/// A user to store.
#[derive(Clone, Debug)]
pub struct NewUser {
    /// Lower-cased email.
    pub email: String,
    /// Argon2id PHC string of the password.
    pub password_hash: String,
    /// The account managed.
    pub account: AccountId,
    /// Admin or not.
    pub admin: bool,
}

/// Why a sign-in or a user operation did not happen.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// Wrong email or password. Deliberately does not say which.
    #[error("the email or the password is wrong")]
    WrongCredentials,
    /// Too many password forms (sign-in, accepting an invitation) from this client address
    /// ([`PasswordLimits::per_address_burst`]); nothing was read or hashed.
    #[error("too many password forms from this address; try again in {} s", shared_limits::wait_seconds(*retry_after))]
    AddressLimited {
        /// When the next form is allowed.
        retry_after: std::time::Duration,
    },
    /// Every password hashing thread is busy and their queue is full; nothing was hashed.
    #[error("the server is busy checking passwords; try again in {} s", shared_limits::wait_seconds(*retry_after))]
    Busy {
        /// When to try again.
        retry_after: std::time::Duration,
    },
    /// Too many sign-in attempts for this email; try again after the given time.
    #[error("too many sign-in attempts; try again in {} s", shared_limits::wait_seconds(*retry_after))]
    TooManyAttempts {
        /// When the next attempt is allowed.
        retry_after: std::time::Duration,
    },
    /// The email is not an address (`name@domain`).
    #[error("`{0}` is not an email address: write it as name@example.com")]
    InvalidEmail(String),
    /// The password is too short or too long.
    #[error("the password must be {MIN_PASSWORD_CHARS} to 1000 characters long")]
    WeakPassword,
    /// A user with that email exists.
    #[error("a user with the email {0} exists already")]
    EmailTaken(String),
    /// The invitation link is unknown, used or expired.
    #[error("this invitation link is not valid any more: ask for a new one")]
    InvitationInvalid,
    /// Hashing failed (should not happen with valid parameters).
    #[error("hashing the password failed: {0}")]
    Hashing(String),
    /// The store failed; its error is the source.
    #[error("the user store failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Where users, sessions and invitations live. Tokens arrive here only as SHA-256 digests (64 hex characters).
/// Implementations must be safe to share between tasks and servers.
#[async_trait::async_trait]
pub trait UserStore: Send + Sync + std::fmt::Debug {
    /// Stores a user; [`AuthError::EmailTaken`] when the email exists.
    async fn insert_user(&self, user: NewUser) -> Result<User, AuthError>;
    /// The user with this (lower-cased) email, with its password hash.
    async fn user_by_email(&self, email: &str) -> Result<Option<(User, String)>, AuthError>;
    /// The user with this id.
    async fn user(&self, id: UserId) -> Result<Option<User>, AuthError>;
    /// Every user, by email.
    async fn users(&self) -> Result<Vec<User>, AuthError>;
    /// Stores a session under its token's digest.
    async fn insert_session(&self, digest: &str, session: Session) -> Result<(), AuthError>;
    /// The session with this digest and its user, if it has not expired at `now`.
    async fn session(
        &self,
        digest: &str,
        now: jiff::Timestamp,
    ) -> Result<Option<(Session, User)>, AuthError>;
    /// Ends a session (nothing when there is none).
    async fn delete_session(&self, digest: &str) -> Result<(), AuthError>;
    /// Drops sessions and invitations expired at `now`; returns how many rows went.
    async fn delete_expired(&self, now: jiff::Timestamp) -> Result<u64, AuthError>;
    /// Stores an invitation under its link token's digest.
    async fn insert_invitation(
        &self,
        digest: &str,
        invitation: Invitation,
    ) -> Result<(), AuthError>;
    /// The invitation with this digest, if it has not expired at `now`.
    async fn invitation(
        &self,
        digest: &str,
        now: jiff::Timestamp,
    ) -> Result<Option<Invitation>, AuthError>;
    /// Deletes the user `id` and ends its sessions; false when there is none.
    async fn delete_user(&self, id: UserId) -> Result<bool, AuthError>;
    /// Replaces the user's password hash and ends its sessions; false when there is none.
    async fn set_password(&self, id: UserId, password_hash: String) -> Result<bool, AuthError>;
    /// Ends every session of the user; returns how many there were.
    async fn delete_sessions_of(&self, id: UserId) -> Result<u64, AuthError>;
    /// The invitations not expired at `now`, by email.
    async fn invitations(&self, now: jiff::Timestamp) -> Result<Vec<Invitation>, AuthError>;
    /// Withdraws every pending invitation for `email` (lower-cased); returns how many.
    async fn delete_invitations_for(&self, email: &str) -> Result<u64, AuthError>;
    /// In one transaction: takes the unexpired invitation, creates its user with `password_hash`, deletes the
    /// invitation. [`AuthError::InvitationInvalid`] when there is none, [`AuthError::EmailTaken`] when its email
    /// signed up meanwhile.
    async fn accept_invitation(
        &self,
        digest: &str,
        password_hash: String,
        now: jiff::Timestamp,
    ) -> Result<User, AuthError>;
}
