-- Inventories (issue 5): JSON items per inventory, saved queries, and the key index that
-- lets a selective containment filter (item_data @> ?::jsonb) read only matching items.
-- inventories.rid is a compact internal key for the item tables; id is the public UUID.

CREATE TABLE inventories (
    rid         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    org_id      TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    visibility  TEXT NOT NULL DEFAULT 'PUBLIC',
    owner_id    TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (org_id, name)
);

-- One row per item path; item_data is compact JSON text.
CREATE TABLE inventory_items (
    id          INTEGER PRIMARY KEY,
    inventory   INTEGER NOT NULL REFERENCES inventories (rid) ON DELETE CASCADE,
    item_path   TEXT NOT NULL,
    item_data   TEXT NOT NULL,
    UNIQUE (inventory, item_path)
);

-- Every scalar of every item at its path (store/inventory_keys.h, inv_keys_each): key is the
-- path plus the kind letter, value the scalar (strings as text, numbers as real, booleans
-- as 0/1, null as 0).  Written with the item, in the same transaction.
CREATE TABLE inventory_item_keys (
    inventory   INTEGER NOT NULL,
    key         TEXT NOT NULL,
    value       NOT NULL,
    item        INTEGER NOT NULL REFERENCES inventory_items (id) ON DELETE CASCADE,
    PRIMARY KEY (inventory, key, value, item)
) WITHOUT ROWID;
CREATE INDEX inventory_item_keys_item ON inventory_item_keys (item);

CREATE TABLE inventory_queries (
    id           TEXT PRIMARY KEY,
    inventory_id TEXT NOT NULL REFERENCES inventories (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    text         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    UNIQUE (inventory_id, name)
);
