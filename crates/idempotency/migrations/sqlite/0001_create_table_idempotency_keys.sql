CREATE TABLE idempotency_keys (
    account_id INTEGER NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,       -- SHA-256 of method, path and body
    created_at_ms INTEGER NOT NULL,
    lease_until_ms INTEGER NOT NULL, -- while running: when the claim lapses
    status INTEGER,                  -- the answer, once finished
    headers TEXT,
    body BLOB,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at_ms);
