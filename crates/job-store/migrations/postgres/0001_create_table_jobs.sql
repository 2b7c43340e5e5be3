CREATE TABLE jobs (
    id BIGSERIAL PRIMARY KEY,
    account_id BIGINT NOT NULL,
    key_id BIGINT,
    status TEXT NOT NULL,
    paused_reason TEXT,
    window_ms BIGINT NOT NULL,
    total BIGINT NOT NULL,              -- inputs
    pages BIGINT NOT NULL,              -- distinct pages
    done BIGINT NOT NULL DEFAULT 0,     -- inputs answered
    resolved BIGINT NOT NULL DEFAULT 0,
    unresolved BIGINT NOT NULL DEFAULT 0,
    pages_done BIGINT NOT NULL DEFAULT 0,
    charged_millis BIGINT NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    started_at TIMESTAMPTZ,
    finished_at TIMESTAMPTZ,
    last_leased_at TIMESTAMPTZ NOT NULL DEFAULT '-infinity'
);
CREATE INDEX jobs_account ON jobs (account_id, id);
CREATE INDEX jobs_status ON jobs (status);
CREATE TABLE job_pages (
    job_id BIGINT NOT NULL,
    page_no BIGINT NOT NULL,
    page TEXT NOT NULL,                 -- the normalized page URL
    inputs BIGINT NOT NULL,             -- how many input positions name it
    lease_id BIGINT,                    -- the lease working on it, if any
    done BOOLEAN NOT NULL DEFAULT false,
    found BOOLEAN,
    record TEXT,
    source TEXT,
    fetched_at_ms BIGINT,
    code TEXT,
    message TEXT,
    answered_by TEXT,                   -- the server whose lease recorded the answer
    PRIMARY KEY (job_id, page_no)
);
CREATE INDEX job_pages_lease ON job_pages (lease_id) WHERE lease_id IS NOT NULL;
CREATE INDEX job_pages_todo ON job_pages (job_id, page_no) WHERE NOT done AND lease_id IS NULL;
CREATE TABLE job_inputs (
    job_id BIGINT NOT NULL,
    position BIGINT NOT NULL,
    original TEXT NOT NULL,
    page_no BIGINT NOT NULL,
    PRIMARY KEY (job_id, position)
);
CREATE TABLE job_leases (
    id BIGSERIAL PRIMARY KEY,
    job_id BIGINT NOT NULL,
    server TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX job_leases_expiry ON job_leases (expires_at);
CREATE INDEX job_leases_server ON job_leases (server);
