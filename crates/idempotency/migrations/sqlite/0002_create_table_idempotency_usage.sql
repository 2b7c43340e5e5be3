-- Bytes of answers each account has kept (issue 40: a quota on them), added to as answers are stored and
-- recounted when old records are forgotten.
CREATE TABLE idempotency_usage (
    account_id INTEGER PRIMARY KEY,
    bytes INTEGER NOT NULL
);
