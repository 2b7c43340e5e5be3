-- Low-balance alerts (BalanceAlert): the threshold, whether the account is low now, how many times it became
-- low and how many of those were announced, and the latest crossing.
ALTER TABLE accounts ADD COLUMN low_balance_millis BIGINT;
ALTER TABLE accounts ADD COLUMN balance_low BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE accounts ADD COLUMN low_alerts BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN low_alerts_announced BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN low_alert_balance_millis BIGINT;
ALTER TABLE accounts ADD COLUMN low_alert_threshold_millis BIGINT;
ALTER TABLE accounts ADD COLUMN low_alert_at TIMESTAMPTZ;
-- The rule, in the statement that changes a balance or a threshold (a settle, a charge, a grant, a new
-- threshold) on the row it locks, so that no path can skip it and concurrent charges on any number of servers
-- apply it one at a time: low while below a set threshold; becoming low raises the next alert.
CREATE FUNCTION accounts_balance_low() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.low_balance_millis IS NOT NULL AND NEW.balance_millis < NEW.low_balance_millis THEN
        IF NOT OLD.balance_low THEN
            NEW.balance_low := true;
            NEW.low_alerts := OLD.low_alerts + 1;
            NEW.low_alert_balance_millis := NEW.balance_millis;
            NEW.low_alert_threshold_millis := NEW.low_balance_millis;
            NEW.low_alert_at := clock_timestamp();
        END IF;
    ELSE
        NEW.balance_low := false;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER accounts_balance_low BEFORE UPDATE OF balance_millis, low_balance_millis ON accounts
    FOR EACH ROW EXECUTE FUNCTION accounts_balance_low();
