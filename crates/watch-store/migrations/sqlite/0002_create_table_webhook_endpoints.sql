CREATE TABLE webhook_endpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL,
    url TEXT NOT NULL,
    events TEXT NOT NULL,               -- JSON array of event types
    created_at_ms INTEGER NOT NULL,
    last_delivery_ms INTEGER,
    last_delivery_status INTEGER,
    last_delivery_error TEXT,
    disabled_ms INTEGER,
    disabled_reason TEXT
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, id);
CREATE TABLE endpoint_events (
    id TEXT NOT NULL,                   -- the event's id, the same at every endpoint
    endpoint_id INTEGER NOT NULL,
    account_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, -- also the token of a claim on the latest attempt
    next_attempt_ms INTEGER,            -- NULL once delivered or given up
    claim_until_ms INTEGER,
    delivered_ms INTEGER,
    last_status INTEGER,
    last_error TEXT,
    PRIMARY KEY (id, endpoint_id)
);
CREATE INDEX endpoint_events_due ON endpoint_events (next_attempt_ms) WHERE next_attempt_ms IS NOT NULL;
CREATE INDEX endpoint_events_account ON endpoint_events (account_id, created_at_ms);
