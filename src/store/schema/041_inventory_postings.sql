-- The containment index of inventory and JSON store items on SQLite (issue 27 item 3,
-- store/inventory_postings.h): one row per distinct key of an item — each scalar at its
-- path, each object or array below the top — hashed to 64 bits (store/inventory_keys.h).
-- It replaces inventory_item_keys (003), whose text keys and values made every row ~3 times
-- larger and needed a second index by item: the item writes now remove an item's postings
-- from its old JSON, and only those that changed.  A filter `item_data @> ?` reads the items
-- under its rarest postings; the exact containment check still decides (inventory/sandbox.c).
CREATE TABLE inventory_postings (
    inventory   INTEGER NOT NULL,
    hash        INTEGER NOT NULL,
    item        INTEGER NOT NULL,
    PRIMARY KEY (inventory, hash, item)
) WITHOUT ROWID;

-- Existing items, in the index's order (accord_inv_postings is registered on the store's
-- connections by store/sqlite.c: the same hashes the writes compute).
INSERT OR IGNORE INTO inventory_postings (inventory, hash, item)
    SELECT i.inventory, p.value, i.id
    FROM inventory_items AS i, json_each(accord_inv_postings(i.item_data)) AS p
    ORDER BY 1, 2, 3;

DROP TABLE inventory_item_keys;

-- An inventory's deletion (its own, or its organization's) takes its postings along.
CREATE TRIGGER inventory_postings_gone AFTER DELETE ON inventories
BEGIN
    DELETE FROM inventory_postings WHERE inventory = old.rid;
END;
