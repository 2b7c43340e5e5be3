-- What a charge paid for, when the caller names it (Charge::reference): charged once per account.
ALTER TABLE ledger_entries ADD COLUMN reference TEXT;
CREATE UNIQUE INDEX ledger_entries_reference ON ledger_entries (account_id, reference)
    WHERE reference IS NOT NULL;
