CREATE TABLE snapshots (
    url TEXT PRIMARY KEY,             -- canonical URL the page resolved to
    record TEXT NOT NULL,             -- the CompanyRecord as JSON
    record_format INTEGER NOT NULL,   -- company_model::RECORD_FORMAT of `record`
    fetched_at TIMESTAMPTZ NOT NULL,
    page_gzip BYTEA                   -- the fetched HTML, gzip-compressed, for reparsing
);
CREATE TABLE snapshot_aliases (
    alias TEXT PRIMARY KEY,           -- a normalized URL that led to the snapshot (its own URL included)
    url TEXT NOT NULL REFERENCES snapshots (url) ON DELETE CASCADE
);
CREATE INDEX snapshot_aliases_url ON snapshot_aliases (url);
