-- The words in company_text, a row for each place one is (FTS5's own vocabulary, read from its index as asked;
-- nothing is stored here): a search asks it whether a longer word begins with one of its words (sqlite.rs,
-- `whole_words`). 'instance' rows are read one at a time, so the first in a range costs a seek per segment,
-- where 'row' rows count every match of each word first (1.3-2.3 ms for a word a third of 100,000 companies
-- hold, against 0.02).
CREATE VIRTUAL TABLE company_text_terms USING fts5vocab(company_text, 'instance');
