-- History keeps the open-jobs count (record `job_count`, fetched when a request includes it) as a time series
-- beside followers and headcount; NULL for fetches without it.
ALTER TABLE history_points ADD COLUMN job_count INTEGER;
ALTER TABLE history_points ADD COLUMN job_count_is_lower_bound BOOLEAN;
