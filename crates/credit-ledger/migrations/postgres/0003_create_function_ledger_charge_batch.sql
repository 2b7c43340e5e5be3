-- Immediate charges, several in one call and one commit: each checks and charges its account as
-- Ledger::charge does alone, in the order given (callers sort by account, so concurrent batches lock
-- rows in one order and cannot deadlock). A row per charge: the new balance, or NULL and what was available
-- (NULL too for an unknown account).
CREATE FUNCTION ledger_charge_batch(p_accounts BIGINT[], p_required BIGINT[], p_amounts BIGINT[],
                                    p_keys BIGINT[], p_requested BIGINT[], p_returned BIGINT[],
                                    p_live BOOLEAN[],
                                    OUT balance BIGINT, OUT available BIGINT)
RETURNS SETOF RECORD LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. coalesce(array_length(p_accounts, 1), 0) LOOP
        UPDATE accounts SET balance_millis = balance_millis - p_amounts[i]
        WHERE id = p_accounts[i] AND balance_millis - held_millis >= p_required[i]
        RETURNING balance_millis INTO balance;
        IF FOUND THEN
            INSERT INTO ledger_entries (account_id, kind, delta_millis, balance_after_millis, key_id,
                                        urls_requested, urls_returned, live)
            VALUES (p_accounts[i], 'charge', -p_amounts[i], balance, p_keys[i], p_requested[i],
                    p_returned[i], p_live[i]);
            available := NULL;
        ELSE
            balance := NULL;
            SELECT balance_millis - held_millis INTO available FROM accounts WHERE id = p_accounts[i];
        END IF;
        RETURN NEXT;
    END LOOP;
END $$;
