-- The containment index of inventory and JSON store items on SQLite (041) stored as blocks
-- (issue 27 item 3, store/inventory_postings.h): a row per block of up to 128 items of one
-- key's posting list, instead of a row per item, so that a filter reads a list of 10,000
-- items as ~80 rows.  first_item is the block's first item; items the gaps between its
-- items, as base/i64_block.h encodes them (empty for a block of one item).  The blocks of a
-- list do not overlap; the item writes keep them (split, merged, deleted) in the item's
-- transaction.
DROP TRIGGER inventory_postings_gone;
ALTER TABLE inventory_postings RENAME TO inventory_postings_041;

CREATE TABLE inventory_postings (
    inventory   INTEGER NOT NULL,
    hash        INTEGER NOT NULL,
    first_item  INTEGER NOT NULL,
    items       BLOB NOT NULL,
    PRIMARY KEY (inventory, hash, first_item)
) WITHOUT ROWID;

-- Each list cut into blocks of 128 in item order (accord_inv_block is registered on the
-- store's connections by store/sqlite.c: the encoding the writes use).
INSERT INTO inventory_postings (inventory, hash, first_item, items)
    SELECT inventory, hash, min(item), accord_inv_block(item)
    FROM (SELECT inventory, hash, item,
                 (row_number() OVER (PARTITION BY inventory, hash ORDER BY item) - 1) / 128 AS block
          FROM inventory_postings_041)
    GROUP BY inventory, hash, block
    ORDER BY 1, 2, 3;

DROP TABLE inventory_postings_041;

-- An inventory's deletion (its own, or its organization's) takes its postings along.
CREATE TRIGGER inventory_postings_gone AFTER DELETE ON inventories
BEGIN
    DELETE FROM inventory_postings WHERE inventory = old.rid;
END;
