-- PostgreSQL answers item_data @> ? with the GIN index of 014: the SQLite-only containment
-- index that 046_inventory_posting_blocks.sql stores as blocks has no counterpart here.
SELECT 1;
