-- JSON stores (issue 26 part 1): a JSON store is an inventory (one storage, two APIs).
-- What the JSON store adds: a store's own capacity (maxDataSize; NULL: the server's
-- default, --json-store-max-data-size) and each item's size in bytes (its compact JSON
-- text, as Concord counts it), so that a store's size is a sum, not a scan of its data.
ALTER TABLE inventories ADD COLUMN max_data_size INTEGER;
ALTER TABLE inventory_items ADD COLUMN item_size INTEGER NOT NULL DEFAULT 0;
UPDATE inventory_items SET item_size = length(CAST(item_data AS BLOB));
