CREATE TABLE watches (
    id BIGSERIAL PRIMARY KEY,
    account_id BIGINT NOT NULL,
    url TEXT NOT NULL,                  -- the normalized page URL
    every_hours BIGINT NOT NULL,
    webhook_url TEXT NOT NULL,
    fields TEXT NOT NULL,               -- JSON array of record members
    baseline TEXT,                      -- the record the next refresh compares with
    created_at_ms BIGINT NOT NULL,
    next_check_ms BIGINT NOT NULL,      -- due then; also the token of a claim on that refresh
    claim_until_ms BIGINT,              -- a refresh claimed until then
    last_checked_ms BIGINT,
    last_check_error TEXT,
    last_change_ms BIGINT,
    last_delivery_ms BIGINT,
    last_delivery_status BIGINT,
    last_delivery_error TEXT,
    disabled_ms BIGINT,
    disabled_reason TEXT
);
CREATE INDEX watches_account ON watches (account_id, id);
CREATE INDEX watches_due ON watches (next_check_ms) WHERE disabled_ms IS NULL;
CREATE TABLE watch_events (
    id TEXT PRIMARY KEY,                -- evt_<watch>_<due ms>: one event per refresh
    watch_id BIGINT NOT NULL,
    account_id BIGINT NOT NULL,
    body TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0, -- also the token of a claim on the latest attempt
    next_attempt_ms BIGINT,             -- NULL once delivered or given up
    claim_until_ms BIGINT,
    delivered_ms BIGINT,
    last_status BIGINT,
    last_error TEXT
);
CREATE INDEX watch_events_due ON watch_events (next_attempt_ms) WHERE next_attempt_ms IS NOT NULL;
CREATE INDEX watch_events_watch ON watch_events (watch_id);
CREATE TABLE webhook_secrets (
    account_id BIGINT PRIMARY KEY,
    secret TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);
