-- `include`: the parts of the record each refresh fetches beyond the page, their names joined with `,`
-- (`job_count`); '' for none (watches created before it).
ALTER TABLE watches ADD COLUMN include_parts TEXT NOT NULL DEFAULT '';
