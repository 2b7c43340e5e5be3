-- Which server is fetching a page now, so that the others wait for its snapshot instead of fetching too.
CREATE TABLE fetch_claims (
    url TEXT PRIMARY KEY,             -- the requested page's normalized URL
    until TIMESTAMPTZ NOT NULL        -- the claim lapses then, should its server die
);
