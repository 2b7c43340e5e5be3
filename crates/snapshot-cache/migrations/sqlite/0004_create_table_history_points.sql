-- History: a point per fetch, and a page's record each time one of its change fields differs.
CREATE TABLE history_points (
    url TEXT NOT NULL,              -- the snapshot's URL
    fetched_at_ms INTEGER NOT NULL,
    follower_count INTEGER,
    employee_count_on_li INTEGER,
    company_size TEXT,
    PRIMARY KEY (url, fetched_at_ms)
) WITHOUT ROWID;
CREATE TABLE history_states (
    url TEXT NOT NULL,
    fetched_at_ms INTEGER NOT NULL, -- when this record was first fetched
    digest TEXT NOT NULL,           -- SHA-256 of its change fields; '' for rows copied from `snapshots`
    record TEXT,                    -- the record as JSON (rows copied from `snapshots` only)
    record_gzip BLOB,               -- the record as gzip-compressed JSON (every row written since)
    record_format INTEGER NOT NULL,
    PRIMARY KEY (url, fetched_at_ms)
) WITHOUT ROWID;
-- The snapshots stored before history was kept are where it starts.
INSERT INTO history_points
    SELECT url, fetched_at_ms, json_extract(record, '$.follower_count'),
           json_extract(record, '$.employee_count_on_li'), json_extract(record, '$.company_size')
    FROM snapshots;
INSERT INTO history_states (url, fetched_at_ms, digest, record, record_format)
    SELECT url, fetched_at_ms, '', record, record_format FROM snapshots;
