-- Finds the rows left to key at open without reading the table (empty once they are keyed).
CREATE INDEX snapshots_unkeyed ON snapshots (url) WHERE name_key IS NULL;
-- Expired answers are deleted as new ones are written: found without reading the table.
CREATE INDEX remembered_expires ON remembered (expires_at);
