-- The sum of an account's holds, kept on its row so that one statement can check and change it: a reserve,
-- a settle and an immediate charge each take one round trip.
ALTER TABLE accounts ADD COLUMN held_millis BIGINT NOT NULL DEFAULT 0;
UPDATE accounts a SET held_millis =
    coalesce((SELECT sum(amount_millis) FROM credit_holds h WHERE h.account_id = a.id), 0);
-- Which server made a hold, so that a restarted server frees its own at once.
ALTER TABLE credit_holds ADD COLUMN server TEXT NOT NULL DEFAULT '';
CREATE INDEX credit_holds_server ON credit_holds (server);
