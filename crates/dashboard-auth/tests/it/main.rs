//! Dashboard users on both engines, a real SQLite file and a real PostgreSQL database: passwords and tokens
//! never stored in clear, sessions (across servers on one database), throttling, invitations used once.

use std::sync::Arc;

use test_support::Engine;

use dashboard_auth::{
    AccountId, AuthError, PasswordLimits, PgUserStore, SIGN_IN_BURST, SqliteUserStore, UserStore,
    Users,
};

const PASSWORD: &str = "correct horse battery staple";

async fn users(dir: &tempfile::TempDir) -> Users {
    let store = SqliteUserStore::open(&dir.path().join("users.db"))
        .await
        .expect("opens");
    Users::new(Arc::new(store))
}

/// A user store on the engine's database; each call is another server's connection to it.
async fn store(engine: &Engine) -> Arc<dyn UserStore> {
    match engine {
        Engine::Sqlite(dir) => Arc::new(
            SqliteUserStore::open(&dir.path().join("users.db"))
                .await
                .expect("opens"),
        ),
        Engine::Postgres(database) => Arc::new(
            PgUserStore::with_pool(
                pg_pool::PgPool::connect(&database.url)
                    .await
                    .expect("connects"),
            )
            .await
            .expect("migrates"),
        ),
    }
}

async fn a_session_made_on_one_server_works_on_another(engine: &Engine) {
    let (server_a, server_b) = (
        Users::new(store(engine).await),
        Users::new(store(engine).await),
    );
    server_a
        .create("ada@example.com", PASSWORD, AccountId(1), false)
        .await
        .expect("created");
    let (token, session) = server_a
        .sign_in("ada@example.com", PASSWORD, None)
        .await
        .expect("signs in");
    let seen = server_b.session(token.expose()).await.expect("reads");
    assert_eq!(seen.map(|(s, _)| s.csrf_token), Some(session.csrf_token));
    server_b.sign_out(token.expose()).await.expect("signs out");
    assert!(
        server_a
            .session(token.expose())
            .await
            .expect("reads")
            .is_none()
    );
}

fn file_contains(dir: &tempfile::TempDir, needle: &str) -> bool {
    ["users.db", "users.db-wal"].iter().any(|name| {
        std::fs::read(dir.path().join(name))
            .unwrap_or_default()
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
    })
}

#[tokio::test]
async fn a_user_signs_in_and_out_and_nothing_secret_is_stored() {
    let dir = tempfile::tempdir().expect("temp dir");
    let users = users(&dir).await;
    let user = users
        .create(" Ada@Example.com", PASSWORD, AccountId(7), false)
        .await
        .expect("created");
    assert_eq!(
        (user.email.as_str(), user.account),
        ("ada@example.com", AccountId(7))
    );
    let (token, session) = users
        .sign_in("ADA@example.com", PASSWORD, None)
        .await
        .expect("signs in");
    let (found, found_user) = users
        .session(token.expose())
        .await
        .expect("reads")
        .expect("session exists");
    assert_eq!((found, found_user), (session, user));
    assert!(
        !file_contains(&dir, token.expose()),
        "the cookie token is on disk"
    );
    assert!(!file_contains(&dir, PASSWORD), "the password is on disk");
    users.sign_out(token.expose()).await.expect("signs out");
    assert!(
        users
            .session(token.expose())
            .await
            .expect("reads")
            .is_none()
    );
}

async fn wrong_passwords_unknown_emails_and_bad_input_are_refused(engine: &Engine) {
    let users = Users::new(store(engine).await);
    users
        .create("ada@example.com", PASSWORD, AccountId(1), false)
        .await
        .expect("created");
    for (email, password) in [
        ("ada@example.com", "wrong password!!"),
        ("bob@example.com", PASSWORD),
    ] {
        assert!(matches!(
            users.sign_in(email, password, None).await,
            Err(AuthError::WrongCredentials)
        ));
    }
    assert!(matches!(
        users
            .create("ada@example.com", PASSWORD, AccountId(2), false)
            .await,
        Err(AuthError::EmailTaken(_))
    ));
    assert!(matches!(
        users
            .create("carol@example.com", "short", AccountId(2), false)
            .await,
        Err(AuthError::WeakPassword)
    ));
    assert!(matches!(
        users.create("carol", PASSWORD, AccountId(2), false).await,
        Err(AuthError::InvalidEmail(_))
    ));
    assert!(users.session("not a token").await.expect("reads").is_none());
}

#[tokio::test]
async fn sign_in_attempts_are_throttled_per_email() {
    let dir = tempfile::tempdir().expect("temp dir");
    let users = users(&dir).await;
    users
        .create("ada@example.com", PASSWORD, AccountId(1), false)
        .await
        .expect("created");
    for _ in 0..SIGN_IN_BURST {
        assert!(matches!(
            users
                .sign_in("ada@example.com", "guess guess guess", None)
                .await,
            Err(AuthError::WrongCredentials)
        ));
    }
    // Even the right password waits now: the throttle comes before the check.
    assert!(matches!(
        users.sign_in("ada@example.com", PASSWORD, None).await,
        Err(AuthError::TooManyAttempts { .. })
    ));
    // Another email is not affected.
    users
        .create("bob@example.com", PASSWORD, AccountId(2), false)
        .await
        .expect("created");
    assert!(
        users
            .sign_in("bob@example.com", PASSWORD, None)
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn password_forms_are_limited_per_client_address_before_anything_is_checked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteUserStore::open(&dir.path().join("users.db"))
        .await
        .expect("opens");
    let users = Users::with_limits(
        Arc::new(store),
        PasswordLimits {
            per_address_burst: 3,
            per_network_burst: 5,
            ..PasswordLimits::default()
        },
    );
    users
        .create("ada@example.com", PASSWORD, AccountId(1), false)
        .await
        .expect("created");
    let flooder: std::net::IpAddr = "203.0.113.7".parse().expect("address");
    // Made-up emails and made-up invitation links from one address: each a form.
    for n in 0..2 {
        assert!(matches!(
            users
                .sign_in(&format!("made-up-{n}@example.com"), PASSWORD, Some(flooder))
                .await,
            Err(AuthError::WrongCredentials)
        ));
    }
    assert!(matches!(
        users
            .accept_invitation("made-up", PASSWORD, Some(flooder))
            .await,
        Err(AuthError::InvitationInvalid)
    ));
    // The address has no form left: even the right password is refused, and so is any invitation.
    let refused = users
        .sign_in("ada@example.com", PASSWORD, Some(flooder))
        .await;
    let Err(AuthError::AddressLimited { retry_after }) = refused else {
        panic!("refused for the address, got {refused:?}");
    };
    assert!(
        retry_after > std::time::Duration::ZERO
            && retry_after <= PasswordLimits::default().per_address_window / 3,
        "{retry_after:?}"
    );
    assert!(matches!(
        users
            .accept_invitation("made-up", PASSWORD, Some(flooder))
            .await,
        Err(AuthError::AddressLimited { .. })
    ));
    // Another address (an IPv6 /64 is one address), and a caller with none, are not affected.
    let other: std::net::IpAddr = "2001:db8:7::1".parse().expect("address");
    assert!(
        users
            .sign_in("ada@example.com", PASSWORD, Some(other))
            .await
            .is_ok()
    );
    assert!(
        users
            .sign_in("ada@example.com", PASSWORD, None)
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn an_invitation_creates_its_user_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let users = users(&dir).await;
    let (token, invitation) = users
        .invite("New@Example.com", AccountId(9), true)
        .await
        .expect("invited");
    assert_eq!(invitation.email, "new@example.com");
    assert!(
        !file_contains(&dir, token.expose()),
        "the link token is on disk"
    );
    assert_eq!(
        users.invitation(token.expose()).await.expect("reads"),
        Some(invitation)
    );
    assert!(matches!(
        users.accept_invitation(token.expose(), "short", None).await,
        Err(AuthError::WeakPassword)
    ));
    // A made-up link is refused before its password is even looked at.
    assert!(matches!(
        users.accept_invitation("made-up", "short", None).await,
        Err(AuthError::InvitationInvalid)
    ));
    let (user, session_token, _) = users
        .accept_invitation(token.expose(), PASSWORD, None)
        .await
        .expect("accepted");
    assert_eq!((user.account, user.admin), (AccountId(9), true));
    // The new user is signed in by the acceptance itself.
    assert_eq!(
        users
            .session(session_token.expose())
            .await
            .expect("reads")
            .map(|(_, signed_in)| signed_in.id),
        Some(user.id)
    );
    assert!(matches!(
        users
            .accept_invitation(token.expose(), PASSWORD, None)
            .await,
        Err(AuthError::InvitationInvalid)
    ));
    assert!(
        users
            .sign_in("new@example.com", PASSWORD, None)
            .await
            .is_ok()
    );
    assert!(matches!(
        users.invite("new@example.com", AccountId(9), false).await,
        Err(AuthError::EmailTaken(_))
    ));
}

#[tokio::test]
async fn sessions_end_when_they_expire() {
    let dir = tempfile::tempdir().expect("temp dir");
    let users = users(&dir).await;
    users
        .create("ada@example.com", PASSWORD, AccountId(1), false)
        .await
        .expect("created");
    let (token, session) = users
        .sign_in("ada@example.com", PASSWORD, None)
        .await
        .expect("signs in");
    let lifetime = session.expires_at.duration_since(jiff::Timestamp::now());
    assert!(
        lifetime.as_secs() > 11 * 3600 && lifetime.as_secs() <= 12 * 3600,
        "{lifetime:?}"
    );
    // The store's view one second after the end: gone, and swept.
    let digest_of = |t: &str| {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(t.as_bytes()))
    };
    let after = session.expires_at + jiff::SignedDuration::from_secs(1);
    let store = SqliteUserStore::open(&dir.path().join("users.db"))
        .await
        .expect("opens");
    assert!(
        store
            .session(&digest_of(token.expose()), after)
            .await
            .expect("reads")
            .is_none()
    );
    assert_eq!(store.delete_expired(after).await.expect("sweeps"), 1);
    assert!(
        users
            .session(token.expose())
            .await
            .expect("reads")
            .is_none()
    );
}

/// Issue 40: offboarding. A removed user's sessions end with it; a new password ends every session; sessions
/// can be ended without either; a withdrawn invitation's link stops working. On two servers of one database.
async fn people_are_offboarded_and_their_sessions_end(engine: &Engine) {
    let (one, two) = (
        Users::new(store(engine).await),
        Users::new(store(engine).await),
    );
    let ada = one
        .create("ada@example.com", PASSWORD, AccountId(1), false)
        .await
        .expect("created");
    let bob = one
        .create("bob@example.com", PASSWORD, AccountId(1), false)
        .await
        .expect("created");
    let (ada_token, _) = one
        .sign_in("ada@example.com", PASSWORD, None)
        .await
        .expect("signs in");
    let (bob_token, _) = one
        .sign_in("bob@example.com", PASSWORD, None)
        .await
        .expect("signs in");
    let (bob_again, _) = two
        .sign_in("bob@example.com", PASSWORD, None)
        .await
        .expect("signs in");

    // A new password ends every session of that user, and only the new one signs in.
    assert!(
        two.set_password(ada.id, "a brand new password")
            .await
            .expect("set")
    );
    assert!(
        one.session(ada_token.expose())
            .await
            .expect("reads")
            .is_none()
    );
    assert!(matches!(
        one.sign_in("ada@example.com", PASSWORD, None).await,
        Err(AuthError::WrongCredentials)
    ));
    assert!(
        one.sign_in("ada@example.com", "a brand new password", None)
            .await
            .is_ok()
    );
    assert!(matches!(
        one.set_password(ada.id, "short").await,
        Err(AuthError::WeakPassword)
    ));

    // Ending sessions signs a user out everywhere, keeping the user.
    assert_eq!(one.end_sessions(bob.id).await.expect("ends"), 2);
    for token in [&bob_token, &bob_again] {
        assert!(two.session(token.expose()).await.expect("reads").is_none());
    }
    // Removing takes the user and its sessions; it cannot sign in again.
    let (bob_token, _) = one
        .sign_in("bob@example.com", PASSWORD, None)
        .await
        .expect("signs in");
    assert!(two.remove(bob.id).await.expect("removes"));
    assert!(!two.remove(bob.id).await.expect("answers"), "once");
    assert!(
        one.session(bob_token.expose())
            .await
            .expect("reads")
            .is_none()
    );
    assert!(matches!(
        one.sign_in("bob@example.com", PASSWORD, None).await,
        Err(AuthError::WrongCredentials)
    ));
    assert_eq!(one.list().await.expect("lists").len(), 1);

    // A withdrawn invitation's link stops working.
    let (link, _) = one
        .invite("carol@example.com", AccountId(1), false)
        .await
        .expect("invited");
    assert_eq!(
        two.invitations()
            .await
            .expect("lists")
            .iter()
            .map(|i| i.email.as_str())
            .collect::<Vec<_>>(),
        ["carol@example.com"]
    );
    assert_eq!(
        two.withdraw_invitation("Carol@Example.com")
            .await
            .expect("withdrawn"),
        1
    );
    assert!(
        one.invitation(link.expose())
            .await
            .expect("reads")
            .is_none()
    );
    assert!(matches!(
        one.accept_invitation(link.expose(), PASSWORD, None).await,
        Err(AuthError::InvitationInvalid)
    ));
}

test_support::engine_tests! {
    people_are_offboarded_and_their_sessions_end,
    a_session_made_on_one_server_works_on_another,
    wrong_passwords_unknown_emails_and_bad_input_are_refused,
}
