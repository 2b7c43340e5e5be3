-- `callbackUrl` and `callbackHeaders`: where the job's end is POSTed besides the account's endpoints, as JSON
-- (`{"url": …, "headers": {…}}`); NULL for none (and for jobs created before it).
ALTER TABLE jobs ADD COLUMN callback TEXT;
