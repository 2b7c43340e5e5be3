use std::path::Path;
use store_base::time;

use company_model::AccountId;
use sqlite_pool::rusqlite::{self, OptionalExtension, TransactionBehavior, params};
use sqlite_pool::{SqliteError, SqlitePool};

use crate::{AuthError, Invitation, NewUser, Session, User, UserId, UserStore};

const MIGRATIONS: &[&str] = &[include_str!(
    "../migrations/sqlite/0001_create_table_dashboard_users.sql"
)];

const USER_COLUMNS: &str = "u.id, u.email, u.account_id, u.admin, u.created_at_ms";

/// Users, sessions and invitations in the service's SQLite file (tables `dashboard_users`,
/// `dashboard_sessions`, `dashboard_invitations`).
#[derive(Clone, Debug)]
pub struct SqliteUserStore {
    pool: SqlitePool,
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> AuthError {
    AuthError::Backend(Box::new(error))
}

/// A user from the first five columns of a row (`USER_COLUMNS`).
fn user_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<User> {
    Ok(User {
        id: UserId(row.get(0)?),
        email: row.get(1)?,
        account: AccountId(row.get(2)?),
        admin: row.get(3)?,
        created_at: time::from_millis(row.get(4)?),
    })
}

fn is_unique_violation(error: &SqliteError) -> bool {
    matches!(error, SqliteError::Statement(rusqlite::Error::SqliteFailure(e, _))
        if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE)
}

fn insert_user(conn: &rusqlite::Connection, user: &NewUser) -> rusqlite::Result<User> {
    conn.query_row(
        "INSERT INTO dashboard_users (email, password_hash, account_id, admin, created_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)
         RETURNING id, email, account_id, admin, created_at_ms",
        params![
            user.email,
            user.password_hash,
            user.account.0,
            user.admin,
            jiff::Timestamp::now().as_millisecond()
        ],
        user_row,
    )
}

impl SqliteUserStore {
    /// Opens the store in the SQLite file at `path` (created if missing) and migrates its tables.
    ///
    /// # Errors
    /// [`AuthError::Backend`] when the file cannot be opened or migrated.
    pub async fn open(path: &Path) -> Result<Self, AuthError> {
        Self::with_pool(SqlitePool::open(path).await.map_err(backend)?).await
    }

    /// Uses an already open pool (the service opens one per file and shares it).
    ///
    /// # Errors
    /// [`AuthError::Backend`] when the tables cannot be migrated.
    pub async fn with_pool(pool: SqlitePool) -> Result<Self, AuthError> {
        pool.migrate("dashboard-auth", MIGRATIONS)
            .await
            .map_err(backend)?;
        Ok(Self { pool })
    }
}

#[async_trait::async_trait]
impl UserStore for SqliteUserStore {
    async fn insert_user(&self, user: NewUser) -> Result<User, AuthError> {
        let email = user.email.clone();
        self.pool
            .write(move |conn| insert_user(conn, &user))
            .await
            .map_err(|e| {
                if is_unique_violation(&e) {
                    AuthError::EmailTaken(email)
                } else {
                    backend(e)
                }
            })
    }

    async fn user_by_email(&self, email: &str) -> Result<Option<(User, String)>, AuthError> {
        let email = email.to_owned();
        self.pool
            .run(move |conn| {
                conn.prepare_cached(&format!(
                    "SELECT {USER_COLUMNS}, u.password_hash FROM dashboard_users u WHERE u.email = ?1"
                ))?
                .query_row([email], |row| Ok((user_row(row)?, row.get(5)?)))
                .optional()
            })
            .await
            .map_err(backend)
    }

    async fn user(&self, id: UserId) -> Result<Option<User>, AuthError> {
        self.pool
            .run(move |conn| {
                conn.prepare_cached(&format!(
                    "SELECT {USER_COLUMNS} FROM dashboard_users u WHERE u.id = ?1"
                ))?
                .query_row([id.0], user_row)
                .optional()
            })
            .await
            .map_err(backend)
    }

    async fn users(&self) -> Result<Vec<User>, AuthError> {
        self.pool
            .run(|conn| {
                conn.prepare(&format!(
                    "SELECT {USER_COLUMNS} FROM dashboard_users u ORDER BY u.email"
                ))?
                .query_map([], user_row)?
                .collect()
            })
            .await
            .map_err(backend)
    }

    async fn insert_session(&self, digest: &str, session: Session) -> Result<(), AuthError> {
        let digest = digest.to_owned();
        self.pool
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO dashboard_sessions (token_sha256, user_id, csrf_token, expires_at_ms)
                     VALUES (?1, ?2, ?3, ?4)",
                    params![
                        digest,
                        session.user.0,
                        session.csrf_token,
                        session.expires_at.as_millisecond()
                    ],
                )
            })
            .await
            .map(drop)
            .map_err(backend)
    }

    async fn session(
        &self,
        digest: &str,
        now: jiff::Timestamp,
    ) -> Result<Option<(Session, User)>, AuthError> {
        let digest = digest.to_owned();
        self.pool
            .run(move |conn| {
                conn.prepare_cached(&format!(
                    "SELECT {USER_COLUMNS}, s.csrf_token, s.expires_at_ms
                     FROM dashboard_sessions s JOIN dashboard_users u ON u.id = s.user_id
                     WHERE s.token_sha256 = ?1 AND s.expires_at_ms > ?2"
                ))?
                .query_row(params![digest, now.as_millisecond()], |row| {
                    let user = user_row(row)?;
                    Ok((
                        Session {
                            user: user.id,
                            csrf_token: row.get(5)?,
                            expires_at: time::from_millis(row.get(6)?),
                        },
                        user,
                    ))
                })
                .optional()
            })
            .await
            .map_err(backend)
    }

    async fn delete_session(&self, digest: &str) -> Result<(), AuthError> {
        let digest = digest.to_owned();
        self.pool
            .write(move |conn| {
                conn.execute(
                    "DELETE FROM dashboard_sessions WHERE token_sha256 = ?1",
                    [digest],
                )
            })
            .await
            .map(drop)
            .map_err(backend)
    }

    async fn delete_user(&self, id: UserId) -> Result<bool, AuthError> {
        self.pool
            .write(move |conn| {
                let tx = conn.transaction()?;
                tx.execute("DELETE FROM dashboard_sessions WHERE user_id = ?1", [id.0])?;
                let deleted = tx.execute("DELETE FROM dashboard_users WHERE id = ?1", [id.0])?;
                tx.commit()?;
                Ok(deleted > 0)
            })
            .await
            .map_err(backend)
    }

    async fn set_password(&self, id: UserId, password_hash: String) -> Result<bool, AuthError> {
        self.pool
            .write(move |conn| {
                let tx = conn.transaction()?;
                let changed = tx.execute(
                    "UPDATE dashboard_users SET password_hash = ?2 WHERE id = ?1",
                    params![id.0, password_hash],
                )?;
                tx.execute("DELETE FROM dashboard_sessions WHERE user_id = ?1", [id.0])?;
                tx.commit()?;
                Ok(changed > 0)
            })
            .await
            .map_err(backend)
    }

    async fn delete_sessions_of(&self, id: UserId) -> Result<u64, AuthError> {
        self.pool
            .write(move |conn| {
                conn.execute("DELETE FROM dashboard_sessions WHERE user_id = ?1", [id.0])
            })
            .await
            .map(|n| n as u64)
            .map_err(backend)
    }

    async fn invitations(&self, now: jiff::Timestamp) -> Result<Vec<Invitation>, AuthError> {
        self.pool
            .run(move |conn| {
                conn.prepare(
                    "SELECT email, account_id, admin, expires_at_ms FROM dashboard_invitations
                     WHERE expires_at_ms > ?1 ORDER BY email, expires_at_ms",
                )?
                .query_map([now.as_millisecond()], invitation_row)?
                .collect()
            })
            .await
            .map_err(backend)
    }

    async fn delete_invitations_for(&self, email: &str) -> Result<u64, AuthError> {
        let email = email.to_owned();
        self.pool
            .write(move |conn| {
                conn.execute(
                    "DELETE FROM dashboard_invitations WHERE email = ?1",
                    [email],
                )
            })
            .await
            .map(|n| n as u64)
            .map_err(backend)
    }

    async fn delete_expired(&self, now: jiff::Timestamp) -> Result<u64, AuthError> {
        let now = now.as_millisecond();
        self.pool
            .write(move |conn| {
                let sessions = conn.execute(
                    "DELETE FROM dashboard_sessions WHERE expires_at_ms <= ?1",
                    [now],
                )?;
                let invitations = conn.execute(
                    "DELETE FROM dashboard_invitations WHERE expires_at_ms <= ?1",
                    [now],
                )?;
                Ok((sessions + invitations) as u64)
            })
            .await
            .map_err(backend)
    }

    async fn insert_invitation(
        &self,
        digest: &str,
        invitation: Invitation,
    ) -> Result<(), AuthError> {
        let digest = digest.to_owned();
        self.pool
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO dashboard_invitations (token_sha256, email, account_id, admin, expires_at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![
                        digest,
                        invitation.email,
                        invitation.account.0,
                        invitation.admin,
                        invitation.expires_at.as_millisecond()
                    ],
                )
            })
            .await
            .map(drop)
            .map_err(backend)
    }

    async fn invitation(
        &self,
        digest: &str,
        now: jiff::Timestamp,
    ) -> Result<Option<Invitation>, AuthError> {
        let digest = digest.to_owned();
        self.pool
            .run(move |conn| {
                conn.query_row(
                    "SELECT email, account_id, admin, expires_at_ms FROM dashboard_invitations
                     WHERE token_sha256 = ?1 AND expires_at_ms > ?2",
                    params![digest, now.as_millisecond()],
                    invitation_row,
                )
                .optional()
            })
            .await
            .map_err(backend)
    }

    async fn accept_invitation(
        &self,
        digest: &str,
        password_hash: String,
        now: jiff::Timestamp,
    ) -> Result<User, AuthError> {
        let digest = digest.to_owned();
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let Some(invitation) = tx
                    .query_row(
                        "DELETE FROM dashboard_invitations WHERE token_sha256 = ?1 AND expires_at_ms > ?2
                         RETURNING email, account_id, admin, expires_at_ms",
                        params![digest, now.as_millisecond()],
                        invitation_row,
                    )
                    .optional()?
                else {
                    return Ok(Err(AuthError::InvitationInvalid));
                };
                let user = NewUser {
                    email: invitation.email.clone(),
                    password_hash,
                    account: invitation.account,
                    admin: invitation.admin,
                };
                match insert_user(&tx, &user) {
                    Ok(user) => {
                        tx.commit()?;
                        Ok(Ok(user))
                    }
                    Err(rusqlite::Error::SqliteFailure(e, _))
                        if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
                    {
                        Ok(Err(AuthError::EmailTaken(invitation.email)))
                    }
                    Err(other) => Err(other),
                }
            })
            .await
            .map_err(backend)?
    }
}

fn invitation_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Invitation> {
    Ok(Invitation {
        email: row.get(0)?,
        account: AccountId(row.get(1)?),
        admin: row.get(2)?,
        expires_at: time::from_millis(row.get(3)?),
    })
}
