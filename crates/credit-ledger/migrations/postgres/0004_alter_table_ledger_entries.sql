-- What a charge paid for, when the caller names it (Charge::reference): charged once per account.
ALTER TABLE ledger_entries ADD COLUMN reference TEXT;
CREATE UNIQUE INDEX ledger_entries_reference ON ledger_entries (account_id, reference)
    WHERE reference IS NOT NULL;
DROP FUNCTION ledger_charge_batch(BIGINT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[], BOOLEAN[]);
-- As before, and a charge whose reference the account already paid charges nothing and answers the balance.
CREATE FUNCTION ledger_charge_batch(p_accounts BIGINT[], p_required BIGINT[], p_amounts BIGINT[],
                                    p_keys BIGINT[], p_requested BIGINT[], p_returned BIGINT[],
                                    p_live BOOLEAN[], p_references TEXT[],
                                    OUT balance BIGINT, OUT available BIGINT)
RETURNS SETOF RECORD LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. coalesce(array_length(p_accounts, 1), 0) LOOP
        IF p_references[i] IS NOT NULL AND EXISTS (
            SELECT 1 FROM ledger_entries WHERE account_id = p_accounts[i] AND reference = p_references[i]
        ) THEN
            SELECT balance_millis INTO balance FROM accounts WHERE id = p_accounts[i];
            available := NULL;
            RETURN NEXT;
            CONTINUE;
        END IF;
        UPDATE accounts SET balance_millis = balance_millis - p_amounts[i]
        WHERE id = p_accounts[i] AND balance_millis - held_millis >= p_required[i]
        RETURNING balance_millis INTO balance;
        IF FOUND THEN
            INSERT INTO ledger_entries (account_id, kind, delta_millis, balance_after_millis, key_id,
                                        urls_requested, urls_returned, live, reference)
            VALUES (p_accounts[i], 'charge', -p_amounts[i], balance, p_keys[i], p_requested[i],
                    p_returned[i], p_live[i], p_references[i]);
            available := NULL;
        ELSE
            balance := NULL;
            SELECT balance_millis - held_millis INTO available FROM accounts WHERE id = p_accounts[i];
        END IF;
        RETURN NEXT;
    END LOOP;
END $$;
