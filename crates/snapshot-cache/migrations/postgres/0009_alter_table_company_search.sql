-- Where a search's words are, for relevance (search.rs, `tiers`): the words of the name, and of the name, slogan
-- and specialties, each between spaces (' google quantum 42 '), so a row is placed by strpos on its own columns.
-- A weighted tsquery (`word:A`) placed it too, but GIN keeps no weights: every candidate's tsvector was read
-- again from the table, 0.26-0.33 s for two words a twentieth of 100,000 companies hold together.
ALTER TABLE company_search
    ADD COLUMN name_words TEXT NOT NULL DEFAULT '',
    ADD COLUMN headline_words TEXT NOT NULL DEFAULT '';
-- The rows are written again from their snapshots when the store opens (index_unindexed_rows), with their words.
DELETE FROM company_search;
