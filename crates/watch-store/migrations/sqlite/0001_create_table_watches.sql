CREATE TABLE watches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL,
    url TEXT NOT NULL,                  -- the normalized page URL
    every_hours INTEGER NOT NULL,
    webhook_url TEXT NOT NULL,
    fields TEXT NOT NULL,               -- JSON array of record members
    baseline TEXT,                      -- the record the next refresh compares with
    created_at_ms INTEGER NOT NULL,
    next_check_ms INTEGER NOT NULL,     -- due then; also the token of a claim on that refresh
    claim_until_ms INTEGER,             -- a refresh claimed until then
    last_checked_ms INTEGER,
    last_check_error TEXT,
    last_change_ms INTEGER,
    last_delivery_ms INTEGER,
    last_delivery_status INTEGER,
    last_delivery_error TEXT,
    disabled_ms INTEGER,
    disabled_reason TEXT
);
CREATE INDEX watches_account ON watches (account_id, id);
CREATE INDEX watches_due ON watches (next_check_ms) WHERE disabled_ms IS NULL;
CREATE TABLE watch_events (
    id TEXT PRIMARY KEY,                -- evt_<watch>_<due ms>: one event per refresh
    watch_id INTEGER NOT NULL,
    account_id INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, -- also the token of a claim on the latest attempt
    next_attempt_ms INTEGER,            -- NULL once delivered or given up
    claim_until_ms INTEGER,
    delivered_ms INTEGER,
    last_status INTEGER,
    last_error TEXT
);
CREATE INDEX watch_events_due ON watch_events (next_attempt_ms) WHERE next_attempt_ms IS NOT NULL;
CREATE INDEX watch_events_watch ON watch_events (watch_id);
CREATE TABLE webhook_secrets (
    account_id INTEGER PRIMARY KEY,
    secret TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
);
