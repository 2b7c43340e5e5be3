CREATE TABLE webhook_endpoints (
    id BIGSERIAL PRIMARY KEY,
    account_id BIGINT NOT NULL,
    url TEXT NOT NULL,
    events TEXT NOT NULL,               -- JSON array of event types
    created_at_ms BIGINT NOT NULL,
    last_delivery_ms BIGINT,
    last_delivery_status BIGINT,
    last_delivery_error TEXT,
    disabled_ms BIGINT,
    disabled_reason TEXT
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, id);
CREATE TABLE endpoint_events (
    id TEXT NOT NULL,                   -- the event's id, the same at every endpoint
    endpoint_id BIGINT NOT NULL,
    account_id BIGINT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0, -- also the token of a claim on the latest attempt
    next_attempt_ms BIGINT,             -- NULL once delivered or given up
    claim_until_ms BIGINT,
    delivered_ms BIGINT,
    last_status BIGINT,
    last_error TEXT,
    PRIMARY KEY (id, endpoint_id)
);
CREATE INDEX endpoint_events_due ON endpoint_events (next_attempt_ms) WHERE next_attempt_ms IS NOT NULL;
CREATE INDEX endpoint_events_account ON endpoint_events (account_id, created_at_ms);
