-- What the resolver finds pages by besides their URL (stored::lookup_keys; '' when the record lacks it, NULL
-- until the rows stored before are keyed at open), and its remembered answers.
ALTER TABLE snapshots ADD COLUMN domain_key TEXT;
ALTER TABLE snapshots ADD COLUMN name_key TEXT;
CREATE INDEX snapshots_domain_key ON snapshots (domain_key) WHERE domain_key <> '';
CREATE INDEX snapshots_name_key ON snapshots (name_key) WHERE name_key <> '';
CREATE TABLE remembered (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL
);
