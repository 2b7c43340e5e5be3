CREATE TABLE dashboard_users (
    id INTEGER PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,       -- lower-cased
    password_hash TEXT NOT NULL,      -- argon2id PHC string
    account_id INTEGER NOT NULL,      -- the billing account it manages
    admin INTEGER NOT NULL DEFAULT 0,
    created_at_ms INTEGER NOT NULL
);
CREATE TABLE dashboard_sessions (
    token_sha256 TEXT PRIMARY KEY,    -- the cookie's token is never stored
    user_id INTEGER NOT NULL REFERENCES dashboard_users (id) ON DELETE CASCADE,
    csrf_token TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL
);
CREATE TABLE dashboard_invitations (
    token_sha256 TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    account_id INTEGER NOT NULL,
    admin INTEGER NOT NULL DEFAULT 0,
    expires_at_ms INTEGER NOT NULL
);
