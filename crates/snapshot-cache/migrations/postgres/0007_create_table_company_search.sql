-- Search over the stored companies (search.rs): a row per snapshot, written in the statement that stores it.
CREATE TABLE company_search (
    url TEXT COLLATE "C" PRIMARY KEY, -- the snapshot's URL (compared byte by byte, as SQLite does: the order ties break by)
    row TEXT NOT NULL,              -- company_model::CompanyRow as JSON: what a search answers
    industry TEXT,                  -- the labels filters compare, company_model::fold_label of each
    company_size TEXT,
    company_type TEXT,
    country TEXT,
    region TEXT,
    locality TEXT,
    specialties TEXT NOT NULL,      -- each specialty folded, between newlines: E'\nai\ncloud\n'
    employee_count BIGINT,
    -- percent change of employee_count since the newest fetch at least company_model::GROWTH_DAYS before this
    -- one (history_points), NULL without one
    employee_growth DOUBLE PRECISION,
    follower_count BIGINT,
    founded BIGINT,
    has_website BOOLEAN NOT NULL,
    -- A sort key as much as a time: the fetch's Unix milliseconds, compared with the cursor's exactly.
    fetched_at_ms BIGINT NOT NULL,
    -- company_model::search_words of name (A), slogan (B), specialties (B) and description (C).
    document TSVECTOR NOT NULL
);
-- The sort orders, each with the URL that breaks its ties: a search walks one of them and checks its filters on
-- the rows it meets (search.rs, `unindexed`), so no filter's column has an index.
CREATE INDEX company_search_followers ON company_search ((coalesce(follower_count, -1)) DESC, url);
CREATE INDEX company_search_employees ON company_search ((coalesce(employee_count, -1)) DESC, url);
CREATE INDEX company_search_fetched ON company_search (fetched_at_ms DESC, url);
CREATE INDEX company_search_document ON company_search USING GIN (document);
-- Which pages each tenant (company_model::Tenant::key) was answered: what its searches look through.
CREATE TABLE tenant_pages (
    tenant BIGINT NOT NULL,
    url TEXT NOT NULL,              -- the snapshot's URL
    first_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant, url)
);
