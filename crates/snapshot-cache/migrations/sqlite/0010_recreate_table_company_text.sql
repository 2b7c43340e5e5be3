-- The full text keeps which column each word is in (detail = column), and no longer each word's positions:
-- relevance is by where the words are (search.rs, `branches`), no longer BM25, which read them. A smaller index
-- is a cheaper write. (Each row's column sizes stay: contentless_delete needs them.)
DROP TABLE company_text;
CREATE VIRTUAL TABLE company_text USING fts5(
    name, slogan, description, specialties,
    content = '', contentless_delete = 1, detail = column, tokenize = 'unicode61 remove_diacritics 0'
);
DELETE FROM company_text_pending;
-- The rows are written again from their snapshots when the store opens (index_unindexed_rows), with their words.
DELETE FROM company_search;
