ALTER TABLE snapshots ADD COLUMN page_gzip BLOB;  -- the fetched HTML, gzip-compressed, for reparsing
