-- AUTOINCREMENT: ids are never reused, even after a purge (a lease id names a charge in the ledger).
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL,
    key_id INTEGER,
    status TEXT NOT NULL,
    paused_reason TEXT,
    window_ms INTEGER NOT NULL,
    total INTEGER NOT NULL,             -- inputs
    pages INTEGER NOT NULL,             -- distinct pages
    done INTEGER NOT NULL DEFAULT 0,    -- inputs answered
    resolved INTEGER NOT NULL DEFAULT 0,
    unresolved INTEGER NOT NULL DEFAULT 0,
    pages_done INTEGER NOT NULL DEFAULT 0,
    charged_millis INTEGER NOT NULL DEFAULT 0,
    created_at_ms INTEGER NOT NULL,
    started_at_ms INTEGER,
    finished_at_ms INTEGER,
    last_leased_at_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_account ON jobs (account_id, id);
CREATE INDEX jobs_status ON jobs (status);
CREATE TABLE job_pages (
    job_id INTEGER NOT NULL,
    page_no INTEGER NOT NULL,
    page TEXT NOT NULL,                 -- the normalized page URL
    inputs INTEGER NOT NULL,            -- how many input positions name it
    lease_id INTEGER,                   -- the lease working on it, if any
    done INTEGER NOT NULL DEFAULT 0,
    found INTEGER,
    record TEXT,
    source TEXT,
    fetched_at_ms INTEGER,
    code TEXT,
    message TEXT,
    answered_by TEXT,                   -- the server whose lease recorded the answer
    PRIMARY KEY (job_id, page_no)
) WITHOUT ROWID;
CREATE INDEX job_pages_lease ON job_pages (lease_id) WHERE lease_id IS NOT NULL;
CREATE TABLE job_inputs (
    job_id INTEGER NOT NULL,
    position INTEGER NOT NULL,
    original TEXT NOT NULL,
    page_no INTEGER NOT NULL,
    PRIMARY KEY (job_id, position)
) WITHOUT ROWID;
CREATE TABLE job_leases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id INTEGER NOT NULL,
    server TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL
);
CREATE INDEX job_leases_expiry ON job_leases (expires_at_ms);
