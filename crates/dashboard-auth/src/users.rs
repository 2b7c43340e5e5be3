use std::net::IpAddr;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use argon2::Argon2;
use argon2::password_hash::{
    PasswordHash, PasswordHasher, PasswordVerifier, SaltString, rand_core::OsRng,
};
use company_model::AccountId;
use rand::Rng;
use sha2::{Digest, Sha256};

use crate::password_work::{FormLimits, HashingPool, PasswordLimits};
use crate::{AuthError, Invitation, NewUser, Session, User, UserId, UserStore};

/// How long a session lasts from sign-in, whatever the browser does: 12 hours.
pub const SESSION_LIFETIME: Duration = Duration::from_hours(12);
/// How long an invitation link works: 7 days.
pub const INVITATION_LIFETIME: Duration = Duration::from_hours(24 * 7);
/// The shortest password accepted.
pub const MIN_PASSWORD_CHARS: usize = 12;
const MAX_PASSWORD_CHARS: usize = 1000;
/// Sign-in attempts one email may make at once.
pub const SIGN_IN_BURST: u32 = 5;
/// After the burst, one more attempt per this interval.
pub const SIGN_IN_REFILL: Duration = Duration::from_secs(12);

const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A random token (session cookie or invitation link) whose `Debug` shows nothing of it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// `len` random base62 characters from the operating system's generator (43 carry 256 bits).
    fn generate(len: usize) -> Self {
        let mut rng = rand::rngs::OsRng;
        Self(
            (0..len)
                .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
                .collect(),
        )
    }

    /// A new random token of 43 base62 characters (256 bits), e.g. for a double-submit cookie.
    pub fn random() -> Self {
        Self::generate(43)
    }

    /// The token itself, for the cookie or the link.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(redacted)")
    }
}

/// What is stored for a token: its SHA-256 digest in hex.
fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Trims and lower-cases an email and checks it has the shape `name@domain`.
///
/// # Errors
/// [`AuthError::InvalidEmail`].
pub fn normalize_email(email: &str) -> Result<String, AuthError> {
    let email = email.trim().to_lowercase();
    let valid = email.len() <= 254
        && email.split_once('@').is_some_and(|(name, domain)| {
            !name.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !domain.contains('@')
        })
        && !email.chars().any(char::is_whitespace);
    if valid {
        Ok(email)
    } else {
        Err(AuthError::InvalidEmail(email))
    }
}

fn hash_password(password: &str) -> Result<String, AuthError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| AuthError::Hashing(e.to_string()))
}

fn password_matches(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|parsed| {
        Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

/// Verified against when the email is unknown, so a miss costs what a hit costs.
static DUMMY_HASH: LazyLock<String> =
    LazyLock::new(|| hash_password("no user has this password").unwrap_or_default());

/// Checks a new password against the rules ([`MIN_PASSWORD_CHARS`] to 1000 characters) before anything is
/// stored, so a caller can refuse it before making anything else.
///
/// # Errors
/// [`AuthError::WeakPassword`].
pub fn check_password_rules(password: &str) -> Result<(), AuthError> {
    let chars = password.chars().count();
    if (MIN_PASSWORD_CHARS..=MAX_PASSWORD_CHARS).contains(&chars) {
        Ok(())
    } else {
        Err(AuthError::WeakPassword)
    }
}

/// `by` from now, to the millisecond (what the store keeps).
fn later(by: Duration) -> jiff::Timestamp {
    let now = jiff::Timestamp::now();
    let then = jiff::SignedDuration::try_from(by)
        .ok()
        .and_then(|by| now.checked_add(by).ok())
        .unwrap_or(now);
    jiff::Timestamp::from_millisecond(then.as_millisecond()).unwrap_or(then)
}

/// Users, sessions and invitations over a [`UserStore`], with password hashing on threads of its own and the
/// limits on password forms ([`PasswordLimits`], kept in this value's memory).
#[derive(Debug)]
pub struct Users {
    store: Arc<dyn UserStore>,
    hashing: HashingPool,
    limits: FormLimits,
}

impl Users {
    /// Users over `store`, with the default [`PasswordLimits`].
    pub fn new(store: Arc<dyn UserStore>) -> Self {
        Self::with_limits(store, PasswordLimits::default())
    }

    /// Users over `store` with these limits on password work.
    pub fn with_limits(store: Arc<dyn UserStore>, limits: PasswordLimits) -> Self {
        Self {
            store,
            hashing: HashingPool::new(limits.hashing_threads, limits.hashing_queue),
            limits: FormLimits::new(&limits),
        }
    }

    /// Every user, by email.
    ///
    /// # Errors
    /// [`AuthError::Backend`].
    pub async fn list(&self) -> Result<Vec<User>, AuthError> {
        self.store.users().await
    }

    /// The user who signs in with `email` (compared as [`normalize_email`] writes it), if any.
    ///
    /// # Errors
    /// [`AuthError::InvalidEmail`], [`AuthError::Backend`].
    pub async fn by_email(&self, email: &str) -> Result<Option<User>, AuthError> {
        let email = normalize_email(email)?;
        Ok(self
            .store
            .user_by_email(&email)
            .await?
            .map(|(user, _)| user))
    }

    /// Creates a user who manages `account`.
    ///
    /// # Errors
    /// [`AuthError::InvalidEmail`], [`AuthError::WeakPassword`], [`AuthError::EmailTaken`],
    /// [`AuthError::Backend`].
    pub async fn create(
        &self,
        email: &str,
        password: &str,
        account: AccountId,
        admin: bool,
    ) -> Result<User, AuthError> {
        let email = normalize_email(email)?;
        check_password_rules(password)?;
        let password = password.to_owned();
        let password_hash = self.hashing.run(move || hash_password(&password)).await??;
        self.store
            .insert_user(NewUser {
                email,
                password_hash,
                account,
                admin,
            })
            .await
    }

    /// Checks an email and password sent from `client` (`None`: no address to count, e.g. the command line)
    /// and opens a session. Returns the cookie's token (show it to nobody but the browser) and the session.
    ///
    /// In order, each step before anything costlier: the client address's limit on password forms, the email's
    /// limit on attempts, the user read, then argon2 on the hashing threads (an unknown email verifies a dummy
    /// hash, so a miss costs what a hit costs).
    ///
    /// # Errors
    /// [`AuthError::AddressLimited`], then [`AuthError::TooManyAttempts`], before any check;
    /// [`AuthError::Busy`] when the hashing threads' queue is full; [`AuthError::WrongCredentials`],
    /// [`AuthError::Backend`].
    pub async fn sign_in(
        &self,
        email: &str,
        password: &str,
        client: Option<IpAddr>,
    ) -> Result<(Secret, Session), AuthError> {
        self.limits.address(client).await?;
        let email = email.trim().to_lowercase();
        self.limits.email(&email).await?;
        let found = self.store.user_by_email(&email).await?;
        let password = password.to_owned();
        let (user, matched) = self
            .hashing
            .run(move || {
                if let Some((user, hash)) = found {
                    let matched = password_matches(&password, &hash);
                    (Some(user), matched)
                } else {
                    let _ = password_matches(&password, &DUMMY_HASH);
                    (None, false)
                }
            })
            .await?;
        let Some(user) = user.filter(|_| matched) else {
            return Err(AuthError::WrongCredentials);
        };
        self.open_session(&user).await
    }

    /// A new session for `user`, stored; its cookie token and the session.
    async fn open_session(&self, user: &User) -> Result<(Secret, Session), AuthError> {
        let token = Secret::generate(43);
        let session = Session {
            user: user.id,
            csrf_token: Secret::generate(32).0,
            expires_at: later(SESSION_LIFETIME),
        };
        self.store
            .insert_session(&digest(token.expose()), session.clone())
            .await?;
        Ok((token, session))
    }

    /// The live session a cookie's token names, and its user; `None` when unknown, ended or expired.
    ///
    /// # Errors
    /// [`AuthError::Backend`].
    pub async fn session(&self, token: &str) -> Result<Option<(Session, User)>, AuthError> {
        self.store
            .session(&digest(token), jiff::Timestamp::now())
            .await
    }

    /// Ends the session a cookie's token names.
    ///
    /// # Errors
    /// [`AuthError::Backend`].
    pub async fn sign_out(&self, token: &str) -> Result<(), AuthError> {
        self.store.delete_session(&digest(token)).await
    }

    /// Makes an invitation for `email` to manage `account`; returns the link's token (shown once).
    ///
    /// # Errors
    /// [`AuthError::InvalidEmail`], [`AuthError::EmailTaken`] when that email is already a user,
    /// [`AuthError::Backend`].
    pub async fn invite(
        &self,
        email: &str,
        account: AccountId,
        admin: bool,
    ) -> Result<(Secret, Invitation), AuthError> {
        let email = normalize_email(email)?;
        if self.store.user_by_email(&email).await?.is_some() {
            return Err(AuthError::EmailTaken(email));
        }
        let token = Secret::generate(43);
        let invitation = Invitation {
            email,
            account,
            admin,
            expires_at: later(INVITATION_LIFETIME),
        };
        self.store
            .insert_invitation(&digest(token.expose()), invitation.clone())
            .await?;
        Ok((token, invitation))
    }

    /// The pending invitation a link's token names.
    ///
    /// # Errors
    /// [`AuthError::Backend`].
    pub async fn invitation(&self, token: &str) -> Result<Option<Invitation>, AuthError> {
        self.store
            .invitation(&digest(token), jiff::Timestamp::now())
            .await
    }

    /// Sets the password of an invited user sent from `client`, creating the user and signing it in (the
    /// returned token and session, as [`Users::sign_in`] gives); the link then stops working.
    ///
    /// In order: the client address's limit on password forms, the link looked up (a made-up or used token
    /// costs that read and nothing more), the password's rules, then argon2 on the hashing threads.
    ///
    /// # Errors
    /// [`AuthError::AddressLimited`], [`AuthError::InvitationInvalid`], [`AuthError::WeakPassword`],
    /// [`AuthError::Busy`], [`AuthError::EmailTaken`], [`AuthError::Backend`].
    pub async fn accept_invitation(
        &self,
        token: &str,
        password: &str,
        client: Option<IpAddr>,
    ) -> Result<(User, Secret, Session), AuthError> {
        self.limits.address(client).await?;
        let digest = digest(token);
        if self
            .store
            .invitation(&digest, jiff::Timestamp::now())
            .await?
            .is_none()
        {
            return Err(AuthError::InvitationInvalid);
        }
        check_password_rules(password)?;
        let password = password.to_owned();
        let password_hash = self.hashing.run(move || hash_password(&password)).await??;
        let user = self
            .store
            .accept_invitation(&digest, password_hash, jiff::Timestamp::now())
            .await?;
        let (token, session) = self.open_session(&user).await?;
        Ok((user, token, session))
    }

    /// Removes the user `id` and ends its sessions (offboarding); false when there is none.
    ///
    /// # Errors
    /// [`AuthError::Backend`].
    pub async fn remove(&self, id: UserId) -> Result<bool, AuthError> {
        self.store.delete_user(id).await
    }

    /// Sets a new password for the user `id` (checked against the rules, hashed on the hashing threads) and
    /// ends its sessions, so whoever held one signs in again; false when there is no such user.
    ///
    /// # Errors
    /// [`AuthError::WeakPassword`], [`AuthError::Busy`], [`AuthError::Backend`].
    pub async fn set_password(&self, id: UserId, password: &str) -> Result<bool, AuthError> {
        check_password_rules(password)?;
        let password = password.to_owned();
        let password_hash = self.hashing.run(move || hash_password(&password)).await??;
        self.store.set_password(id, password_hash).await
    }

    /// Ends every session of the user `id` (signs it out everywhere); returns how many there were.
    ///
    /// # Errors
    /// [`AuthError::Backend`].
    pub async fn end_sessions(&self, id: UserId) -> Result<u64, AuthError> {
        self.store.delete_sessions_of(id).await
    }

    /// The invitations not yet used or expired, by email.
    ///
    /// # Errors
    /// [`AuthError::Backend`].
    pub async fn invitations(&self) -> Result<Vec<Invitation>, AuthError> {
        self.store.invitations(jiff::Timestamp::now()).await
    }

    /// Withdraws the pending invitations for `email`: their links stop working. Returns how many.
    ///
    /// # Errors
    /// [`AuthError::InvalidEmail`], [`AuthError::Backend`].
    pub async fn withdraw_invitation(&self, email: &str) -> Result<u64, AuthError> {
        let email = normalize_email(email)?;
        self.store.delete_invitations_for(&email).await
    }

    /// Drops expired sessions and invitations (run now and then); returns how many.
    ///
    /// # Errors
    /// [`AuthError::Backend`].
    pub async fn delete_expired(&self) -> Result<u64, AuthError> {
        self.store.delete_expired(jiff::Timestamp::now()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_normalized_or_refused() {
        assert_eq!(
            normalize_email("  Ada@Example.COM ").ok().as_deref(),
            Some("ada@example.com")
        );
        for bad in [
            "",
            "ada",
            "@example.com",
            "ada@example",
            "ada@.com",
            "a da@x.com",
            "a@b@c.com",
        ] {
            assert!(normalize_email(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn secrets_do_not_print() {
        let secret = Secret::generate(43);
        assert_eq!(secret.expose().len(), 43);
        assert!(!format!("{secret:?}").contains(secret.expose()));
        assert_ne!(secret, Secret::generate(43));
    }
}
