-- Fair claims (issue 40) ask which owners and accounts have an event in flight, and which events of an
-- endpoint are due: without these each claim would read every event kept.
CREATE INDEX watch_events_claimed ON watch_events (claim_until_ms) WHERE claim_until_ms IS NOT NULL;
CREATE INDEX endpoint_events_claimed ON endpoint_events (claim_until_ms) WHERE claim_until_ms IS NOT NULL;
CREATE INDEX endpoint_events_endpoint ON endpoint_events (endpoint_id);
