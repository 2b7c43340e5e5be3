-- `document` holds each word once, without positions or weights (search.rs, `IndexEntry::lexemes`, written with
-- array_to_tsvector): relevance reads neither, and to_tsvector parsing each snapshot's text four times was most
-- of what the index added to a snapshot's write (13-24%). A search's words are matched as they are (`::tsquery`).
-- The rows are written again from their snapshots when the store opens (index_unindexed_rows).
DELETE FROM company_search;
