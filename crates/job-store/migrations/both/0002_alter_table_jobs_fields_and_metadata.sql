ALTER TABLE jobs ADD COLUMN fields TEXT;
ALTER TABLE jobs ADD COLUMN metadata_columns TEXT;
ALTER TABLE job_inputs ADD COLUMN metadata TEXT;
