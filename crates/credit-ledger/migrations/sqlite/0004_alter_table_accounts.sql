-- Low-balance alerts (BalanceAlert): the threshold, whether the account is low now, how many times it became
-- low and how many of those were announced, and the latest crossing.
ALTER TABLE accounts ADD COLUMN low_balance_millis INTEGER;
ALTER TABLE accounts ADD COLUMN balance_low INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN low_alerts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN low_alerts_announced INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN low_alert_balance_millis INTEGER;
ALTER TABLE accounts ADD COLUMN low_alert_threshold_millis INTEGER;
ALTER TABLE accounts ADD COLUMN low_alert_at_ms INTEGER;
-- The rule, in the statement that changes a balance or a threshold (a charge, a grant, a new threshold), so
-- that no path can skip it and one writer at a time applies it: low while below a set threshold; becoming
-- low raises the next alert.
CREATE TRIGGER accounts_balance_low AFTER UPDATE OF balance_millis, low_balance_millis ON accounts
WHEN (NEW.low_balance_millis IS NOT NULL AND NEW.balance_millis < NEW.low_balance_millis) <> NEW.balance_low
BEGIN
    UPDATE accounts SET
        low_alerts = low_alerts + (1 - balance_low),
        low_alert_balance_millis = CASE balance_low WHEN 0 THEN balance_millis ELSE low_alert_balance_millis END,
        low_alert_threshold_millis =
            CASE balance_low WHEN 0 THEN low_balance_millis ELSE low_alert_threshold_millis END,
        low_alert_at_ms = CASE balance_low WHEN 0
            THEN CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) ELSE low_alert_at_ms END,
        balance_low = 1 - balance_low
    WHERE id = NEW.id;
END;
