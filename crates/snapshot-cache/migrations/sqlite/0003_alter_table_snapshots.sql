-- company_model::RECORD_FORMAT of `record`: rows in an older shape are converted when read.
ALTER TABLE snapshots ADD COLUMN record_format INTEGER NOT NULL DEFAULT 1;
