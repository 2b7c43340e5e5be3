-- Holds now live in the serving process's memory (see SqliteLedger); a crash can no longer leave any behind.
DROP TABLE credit_holds;
