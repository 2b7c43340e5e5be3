-- tenant_pages.url compared byte by byte, as company_search.url is: with the default collation, a search's check
-- `t.url = s.url` could not use the primary key and read the whole table for each row (docs/benchmarks.md,
-- section 14).
ALTER TABLE tenant_pages ALTER COLUMN url TYPE TEXT COLLATE "C";
