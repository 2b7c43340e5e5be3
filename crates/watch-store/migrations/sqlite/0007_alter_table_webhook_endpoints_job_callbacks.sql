-- A job's callback (`callbackUrl`) is kept as an endpoint of its account that only that job's events go to: `job_id`
-- names the job (NULL for the endpoints the account registers, the only ones listed, counted and deletable), and
-- `headers` the headers sent with each delivery (a JSON object; NULL for none).
ALTER TABLE webhook_endpoints ADD COLUMN job_id TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN headers TEXT;
CREATE UNIQUE INDEX webhook_endpoints_job ON webhook_endpoints (account_id, job_id) WHERE job_id IS NOT NULL;
