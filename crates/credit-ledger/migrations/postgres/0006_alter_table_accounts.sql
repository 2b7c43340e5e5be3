-- The account's own quotas (QuotaOverrides, JSON); NULL: the deployment's.
ALTER TABLE accounts ADD COLUMN quotas TEXT;
