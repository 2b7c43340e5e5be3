CREATE TABLE idempotency_keys (
    account_id BIGINT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,          -- SHA-256 of method, path and body
    created_at TIMESTAMPTZ NOT NULL,
    lease_until TIMESTAMPTZ NOT NULL,   -- while running: when the claim lapses
    status INT,                         -- the answer, once finished
    headers TEXT,
    body BYTEA,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
