-- Search over the stored companies (search.rs): a row per snapshot, written in the transaction that stores it.
CREATE TABLE company_search (
    id INTEGER PRIMARY KEY,         -- the rowid of the page's words in company_text
    url TEXT NOT NULL UNIQUE,       -- the snapshot's URL
    row TEXT NOT NULL,              -- company_model::CompanyRow as JSON: what a search answers
    industry TEXT,                  -- the labels filters compare, company_model::fold_label of each
    company_size TEXT,
    company_type TEXT,
    country TEXT,
    region TEXT,
    locality TEXT,
    specialties TEXT NOT NULL,      -- each specialty folded, between newlines: "\nai\ncloud\n"
    employee_count INTEGER,
    -- percent change of employee_count since the newest fetch at least company_model::GROWTH_DAYS before this
    -- one (history_points), NULL without one
    employee_growth REAL,
    follower_count INTEGER,
    founded INTEGER,
    has_website INTEGER NOT NULL,
    fetched_at_ms INTEGER NOT NULL
);
-- The sort orders, each with the URL that breaks its ties: a search walks one of them and checks its filters on
-- the rows it meets (search.rs, `unindexed`), so no filter's column has an index.
CREATE INDEX company_search_followers ON company_search (coalesce(follower_count, -1) DESC, url);
CREATE INDEX company_search_employees ON company_search (coalesce(employee_count, -1) DESC, url);
CREATE INDEX company_search_fetched ON company_search (fetched_at_ms DESC, url);
-- The full text, as company_model::search_words joined by spaces; contentless (company_search keeps the rows).
-- Positions are kept (detail = full): BM25 reads them, and scores every match 0 without.
CREATE VIRTUAL TABLE company_text USING fts5(
    name, slogan, description, specialties,
    content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0'
);
-- Which pages each tenant (company_model::Tenant::key) was answered: what its searches look through.
CREATE TABLE tenant_pages (
    tenant INTEGER NOT NULL,
    url TEXT NOT NULL,              -- the snapshot's URL
    first_at_ms INTEGER NOT NULL,
    PRIMARY KEY (tenant, url)
) WITHOUT ROWID;
