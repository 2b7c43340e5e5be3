use std::time::SystemTime;
use store_base::time;

use company_model::AccountId;
use pg_pool::PgPool;
use pg_pool::tokio_postgres::Row;
use pg_pool::tokio_postgres::error::SqlState;

use crate::{AuthError, Invitation, NewUser, Session, User, UserId, UserStore};

const MIGRATIONS: &[&str] = &[include_str!(
    "../migrations/postgres/0001_create_table_dashboard_users.sql"
)];

const USER_COLUMNS: &str = "u.id, u.email, u.account_id, u.admin, u.created_at";

/// Users, sessions and invitations in a PostgreSQL database (tables `dashboard_users`, `dashboard_sessions`,
/// `dashboard_invitations`), shared by every server on it: a session made on one server works on another.
#[derive(Clone, Debug)]
pub struct PgUserStore {
    pool: PgPool,
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> AuthError {
    AuthError::Backend(pg_pool::boxed_error(error))
}

/// A user from the first five columns of a row (`USER_COLUMNS`).
fn user_row(row: &Row) -> User {
    User {
        id: UserId(row.get(0)),
        email: row.get(1),
        account: AccountId(row.get(2)),
        admin: row.get(3),
        created_at: time::from_system(row.get(4)),
    }
}

fn invitation_row(row: &Row) -> Invitation {
    Invitation {
        email: row.get(0),
        account: AccountId(row.get(1)),
        admin: row.get(2),
        expires_at: time::from_system(row.get(3)),
    }
}

fn is_unique_violation(error: &pg_pool::tokio_postgres::Error) -> bool {
    error.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

const INSERT_USER: &str = "INSERT INTO dashboard_users (email, password_hash, account_id, admin)
     VALUES ($1, $2, $3, $4) RETURNING id, email, account_id, admin, created_at";

impl PgUserStore {
    /// Uses a pool on the database (the service opens one and shares it between its stores) and migrates the
    /// tables.
    ///
    /// # Errors
    /// [`AuthError::Backend`] when the tables cannot be migrated.
    pub async fn with_pool(pool: PgPool) -> Result<Self, AuthError> {
        pool.migrate("dashboard-auth", MIGRATIONS)
            .await
            .map_err(backend)?;
        Ok(Self { pool })
    }

    async fn client(&self) -> Result<pg_pool::Object, AuthError> {
        self.pool.client().await.map_err(backend)
    }
}

#[async_trait::async_trait]
impl UserStore for PgUserStore {
    async fn insert_user(&self, user: NewUser) -> Result<User, AuthError> {
        let client = self.client().await?;
        client
            .query_one(
                INSERT_USER,
                &[
                    &user.email,
                    &user.password_hash,
                    &user.account.0,
                    &user.admin,
                ],
            )
            .await
            .map(|row| user_row(&row))
            .map_err(|e| {
                if is_unique_violation(&e) {
                    AuthError::EmailTaken(user.email.clone())
                } else {
                    backend(e)
                }
            })
    }

    async fn user_by_email(&self, email: &str) -> Result<Option<(User, String)>, AuthError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {USER_COLUMNS}, u.password_hash FROM dashboard_users u WHERE u.email = $1"),
                &[&email],
            )
            .await
            .map_err(backend)?;
        Ok(row.map(|row| (user_row(&row), row.get(5))))
    }

    async fn user(&self, id: UserId) -> Result<Option<User>, AuthError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {USER_COLUMNS} FROM dashboard_users u WHERE u.id = $1"),
                &[&id.0],
            )
            .await
            .map_err(backend)?;
        Ok(row.as_ref().map(user_row))
    }

    async fn users(&self) -> Result<Vec<User>, AuthError> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!("SELECT {USER_COLUMNS} FROM dashboard_users u ORDER BY u.email"),
                &[],
            )
            .await
            .map_err(backend)?;
        Ok(rows.iter().map(user_row).collect())
    }

    async fn insert_session(&self, digest: &str, session: Session) -> Result<(), AuthError> {
        let client = self.client().await?;
        let expires = SystemTime::from(session.expires_at);
        client
            .execute(
                "INSERT INTO dashboard_sessions (token_sha256, user_id, csrf_token, expires_at) VALUES ($1, $2, $3, $4)",
                &[&digest, &session.user.0, &session.csrf_token, &expires],
            )
            .await
            .map(drop)
            .map_err(backend)
    }

    async fn session(
        &self,
        digest: &str,
        now: jiff::Timestamp,
    ) -> Result<Option<(Session, User)>, AuthError> {
        let client = self.client().await?;
        let now = SystemTime::from(now);
        let row = client
            .query_opt(
                &format!(
                    "SELECT {USER_COLUMNS}, s.csrf_token, s.expires_at
                     FROM dashboard_sessions s JOIN dashboard_users u ON u.id = s.user_id
                     WHERE s.token_sha256 = $1 AND s.expires_at > $2"
                ),
                &[&digest, &now],
            )
            .await
            .map_err(backend)?;
        Ok(row.map(|row| {
            let user = user_row(&row);
            (
                Session {
                    user: user.id,
                    csrf_token: row.get(5),
                    expires_at: time::from_system(row.get(6)),
                },
                user,
            )
        }))
    }

    async fn delete_session(&self, digest: &str) -> Result<(), AuthError> {
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM dashboard_sessions WHERE token_sha256 = $1",
                &[&digest],
            )
            .await
            .map(drop)
            .map_err(backend)
    }

    async fn delete_user(&self, id: UserId) -> Result<bool, AuthError> {
        let client = self.client().await?;
        // Its sessions go with it (ON DELETE CASCADE).
        let deleted = client
            .execute("DELETE FROM dashboard_users WHERE id = $1", &[&id.0])
            .await
            .map_err(backend)?;
        Ok(deleted > 0)
    }

    async fn set_password(&self, id: UserId, password_hash: String) -> Result<bool, AuthError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let changed = tx
            .execute(
                "UPDATE dashboard_users SET password_hash = $2 WHERE id = $1",
                &[&id.0, &password_hash],
            )
            .await
            .map_err(backend)?;
        tx.execute(
            "DELETE FROM dashboard_sessions WHERE user_id = $1",
            &[&id.0],
        )
        .await
        .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(changed > 0)
    }

    async fn delete_sessions_of(&self, id: UserId) -> Result<u64, AuthError> {
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM dashboard_sessions WHERE user_id = $1",
                &[&id.0],
            )
            .await
            .map_err(backend)
    }

    async fn invitations(&self, now: jiff::Timestamp) -> Result<Vec<Invitation>, AuthError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT email, account_id, admin, expires_at FROM dashboard_invitations
                 WHERE expires_at > $1 ORDER BY email, expires_at",
                &[&SystemTime::from(now)],
            )
            .await
            .map_err(backend)?;
        Ok(rows.iter().map(invitation_row).collect())
    }

    async fn delete_invitations_for(&self, email: &str) -> Result<u64, AuthError> {
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM dashboard_invitations WHERE email = $1",
                &[&email],
            )
            .await
            .map_err(backend)
    }

    async fn delete_expired(&self, now: jiff::Timestamp) -> Result<u64, AuthError> {
        let client = self.client().await?;
        let now = SystemTime::from(now);
        let sessions = client
            .execute(
                "DELETE FROM dashboard_sessions WHERE expires_at <= $1",
                &[&now],
            )
            .await
            .map_err(backend)?;
        let invitations = client
            .execute(
                "DELETE FROM dashboard_invitations WHERE expires_at <= $1",
                &[&now],
            )
            .await
            .map_err(backend)?;
        Ok(sessions + invitations)
    }

    async fn insert_invitation(
        &self,
        digest: &str,
        invitation: Invitation,
    ) -> Result<(), AuthError> {
        let client = self.client().await?;
        let expires = SystemTime::from(invitation.expires_at);
        client
            .execute(
                "INSERT INTO dashboard_invitations (token_sha256, email, account_id, admin, expires_at)
                 VALUES ($1, $2, $3, $4, $5)",
                &[&digest, &invitation.email, &invitation.account.0, &invitation.admin, &expires],
            )
            .await
            .map(drop)
            .map_err(backend)
    }

    async fn invitation(
        &self,
        digest: &str,
        now: jiff::Timestamp,
    ) -> Result<Option<Invitation>, AuthError> {
        let client = self.client().await?;
        let now = SystemTime::from(now);
        let row = client
            .query_opt(
                "SELECT email, account_id, admin, expires_at FROM dashboard_invitations
                 WHERE token_sha256 = $1 AND expires_at > $2",
                &[&digest, &now],
            )
            .await
            .map_err(backend)?;
        Ok(row.as_ref().map(invitation_row))
    }

    async fn accept_invitation(
        &self,
        digest: &str,
        password_hash: String,
        now: jiff::Timestamp,
    ) -> Result<User, AuthError> {
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(backend)?;
        let now = SystemTime::from(now);
        let Some(invitation) = transaction
            .query_opt(
                "DELETE FROM dashboard_invitations WHERE token_sha256 = $1 AND expires_at > $2
                 RETURNING email, account_id, admin, expires_at",
                &[&digest, &now],
            )
            .await
            .map_err(backend)?
            .as_ref()
            .map(invitation_row)
        else {
            return Err(AuthError::InvitationInvalid);
        };
        let inserted = transaction
            .query_one(
                INSERT_USER,
                &[
                    &invitation.email,
                    &password_hash,
                    &invitation.account.0,
                    &invitation.admin,
                ],
            )
            .await;
        match inserted {
            Ok(row) => {
                transaction.commit().await.map_err(backend)?;
                Ok(user_row(&row))
            }
            Err(e) if is_unique_violation(&e) => Err(AuthError::EmailTaken(invitation.email)),
            Err(other) => Err(backend(other)),
        }
    }
}
