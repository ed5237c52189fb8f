-- PostgreSQL answers item_data @> ? with the GIN index of 014: the SQLite-only containment
-- index of 041_inventory_postings.sql has no counterpart here, and the key table it replaces
-- (003) was written but never read on PostgreSQL.
DROP TABLE inventory_item_keys;
