CREATE TABLE dashboard_users (
    id BIGSERIAL PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,       -- lower-cased
    password_hash TEXT NOT NULL,      -- argon2id PHC string
    account_id BIGINT NOT NULL,       -- the billing account it manages
    admin BOOLEAN NOT NULL DEFAULT false,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE dashboard_sessions (
    token_sha256 TEXT PRIMARY KEY,    -- the cookie's token is never stored
    user_id BIGINT NOT NULL REFERENCES dashboard_users (id) ON DELETE CASCADE,
    csrf_token TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE dashboard_invitations (
    token_sha256 TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    account_id BIGINT NOT NULL,
    admin BOOLEAN NOT NULL DEFAULT false,
    expires_at TIMESTAMPTZ NOT NULL
);
