-- `include`: the parts of each record fetched beyond its page, their names joined with `,` (`job_count`); NULL or
-- '' for none (jobs created before it).
ALTER TABLE jobs ADD COLUMN include_parts TEXT;
