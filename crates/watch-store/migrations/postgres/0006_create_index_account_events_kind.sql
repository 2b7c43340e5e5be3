-- The feed read by type (`GET /v1/events?type=…`): one bounded range per type, never a scan of the account's
-- other events.
CREATE INDEX account_events_kind ON account_events (account_id, kind, seq);
