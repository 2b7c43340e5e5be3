CREATE TABLE accounts (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    balance_millis BIGINT NOT NULL DEFAULT 0,   -- settled balance in thousandths of a credit
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- Holds of requests in flight on every server: a reserve counts them all.
CREATE TABLE credit_holds (
    id BIGSERIAL PRIMARY KEY,
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    amount_millis BIGINT NOT NULL CHECK (amount_millis >= 0),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX credit_holds_account ON credit_holds (account_id);
CREATE INDEX credit_holds_created ON credit_holds (created_at);
CREATE TABLE ledger_entries (
    id BIGSERIAL PRIMARY KEY,
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    at TIMESTAMPTZ NOT NULL DEFAULT now(),
    kind TEXT NOT NULL CHECK (kind IN ('grant', 'charge')),
    delta_millis BIGINT NOT NULL,
    balance_after_millis BIGINT NOT NULL,
    key_id BIGINT,
    urls_requested BIGINT,
    urls_returned BIGINT,
    live BOOLEAN,
    note TEXT
);
CREATE INDEX ledger_entries_account ON ledger_entries (account_id, id);
