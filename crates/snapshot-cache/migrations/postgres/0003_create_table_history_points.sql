-- History: a point per fetch, and a page's record each time one of its change fields differs.
CREATE TABLE history_points (
    url TEXT NOT NULL,                -- the snapshot's URL
    fetched_at TIMESTAMPTZ NOT NULL,
    follower_count BIGINT,
    employee_count_on_li BIGINT,
    company_size TEXT,
    PRIMARY KEY (url, fetched_at)
);
CREATE TABLE history_states (
    url TEXT NOT NULL,
    fetched_at TIMESTAMPTZ NOT NULL,  -- when this record was first fetched
    digest TEXT NOT NULL,             -- SHA-256 of its change fields; '' for rows copied from `snapshots`
    record TEXT,                      -- the record as JSON (rows copied from `snapshots` only)
    record_gzip BYTEA,                -- the record as gzip-compressed JSON (every row written since)
    record_format INTEGER NOT NULL,
    PRIMARY KEY (url, fetched_at)
);
-- The snapshots stored before history was kept are where it starts.
INSERT INTO history_points
    SELECT url, fetched_at, (record::jsonb ->> 'follower_count')::BIGINT,
           (record::jsonb ->> 'employee_count_on_li')::BIGINT, record::jsonb ->> 'company_size'
    FROM snapshots;
INSERT INTO history_states (url, fetched_at, digest, record, record_format)
    SELECT url, fetched_at, '', record, record_format FROM snapshots;
