CREATE TABLE api_keys (
    id BIGSERIAL PRIMARY KEY,
    account_id BIGINT NOT NULL,
    name TEXT,
    prefix TEXT NOT NULL,          -- first 12 characters, to find the row
    suffix TEXT NOT NULL,          -- last 4 characters, to recognise it in lists
    hash TEXT NOT NULL,            -- argon2id PHC string of the whole key
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_used_at TIMESTAMPTZ,
    revoked_at TIMESTAMPTZ
);
CREATE INDEX api_keys_prefix ON api_keys (prefix);
