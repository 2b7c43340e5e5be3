ALTER TABLE jobs ADD COLUMN endings BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN announced BIGINT NOT NULL DEFAULT 0;
CREATE INDEX jobs_unannounced ON jobs (id) WHERE endings > announced;
