CREATE TABLE accounts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    balance_millis INTEGER NOT NULL DEFAULT 0,   -- settled balance in thousandths of a credit
    created_at_ms INTEGER NOT NULL
);
CREATE TABLE credit_holds (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts (id),
    amount_millis INTEGER NOT NULL CHECK (amount_millis >= 0),
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX credit_holds_account ON credit_holds (account_id);
CREATE TABLE ledger_entries (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts (id),
    at_ms INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('grant', 'charge')),
    delta_millis INTEGER NOT NULL,
    balance_after_millis INTEGER NOT NULL,
    key_id INTEGER,
    urls_requested INTEGER,
    urls_returned INTEGER,
    live INTEGER,
    note TEXT
);
CREATE INDEX ledger_entries_account ON ledger_entries (account_id, id);
