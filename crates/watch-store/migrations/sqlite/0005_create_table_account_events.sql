-- Each account's feed (`GET /v1/events`): every account event once, with the body its endpoints are sent, in
-- the order recorded (`seq`); kept as long as done deliveries are (`forget_done_before`).
CREATE TABLE account_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    UNIQUE (account_id, id)
);
CREATE INDEX account_events_feed ON account_events (account_id, seq);
CREATE INDEX account_events_created ON account_events (created_at_ms);
