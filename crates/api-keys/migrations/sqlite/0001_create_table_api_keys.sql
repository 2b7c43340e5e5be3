CREATE TABLE api_keys (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL,
    name TEXT,
    prefix TEXT NOT NULL,          -- first 12 characters, to find the row
    suffix TEXT NOT NULL,          -- last 4 characters, to recognise it in lists
    hash TEXT NOT NULL,            -- argon2id PHC string of the whole key
    created_at_ms INTEGER NOT NULL,
    last_used_at_ms INTEGER,
    revoked_at_ms INTEGER
);
CREATE INDEX api_keys_prefix ON api_keys (prefix);
