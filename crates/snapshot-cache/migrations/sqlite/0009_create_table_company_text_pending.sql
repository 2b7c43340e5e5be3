-- A snapshot's words as written with it (sqlite.rs, `index`), until company_text takes them in a batch: FTS5 writes a new
-- segment on every commit (the index added 23% to a snapshot's write); a batch of PENDING_WORDS writes one (11%).
-- A search with words takes in what is here first, so it finds every page stored before it.
CREATE TABLE company_text_pending (
    id INTEGER PRIMARY KEY,         -- company_search.id, the rowid the words get in company_text
    name TEXT NOT NULL,
    slogan TEXT NOT NULL,
    description TEXT NOT NULL,
    specialties TEXT NOT NULL
);
