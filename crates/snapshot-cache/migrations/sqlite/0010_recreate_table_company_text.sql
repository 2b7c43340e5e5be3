-- The full text keeps which column each word is in (detail = column), and no longer each word's positions:
-- relevance is by where the words are (search.rs, `branches`), no longer BM25, which read them. A smaller index
-- is a cheaper write. (Each row's column sizes stay: contentless_delete needs them.)
-- Tokens are the words company_model::search_words made, as PostgreSQL's lexemes are: the `ascii` tokenizer
-- splits at spaces (and ASCII punctuation, which no word holds) and keeps every other character in its token.
-- `unicode61` split inside words at letters its Unicode 6.1 tables lack or class as symbols, and without
-- positions FTS5 refuses the phrase such a query word makes.
DROP TABLE company_text;
CREATE VIRTUAL TABLE company_text USING fts5(
    name, slogan, description, specialties,
    content = '', contentless_delete = 1, detail = column, tokenize = 'ascii'
);
DELETE FROM company_text_pending;
-- The rows are written again from their snapshots when the store opens (index_unindexed_rows), with their words.
DELETE FROM company_search;
