-- Inventory queries on PostgreSQL (issue 11 part 4, inventory/exec_pg.c): item data as
-- jsonb with a GIN index for containment (item_data @> ?::jsonb), and the sandbox a query
-- runs in: a role that can read nothing but two row-filtered views of the items.
ALTER TABLE inventory_items ALTER COLUMN item_data TYPE jsonb USING item_data::jsonb;
CREATE INDEX inventory_items_data ON inventory_items USING gin (item_data jsonb_path_ops);

-- The rows of one inventory: the one named by the transaction-local setting
-- accord.inventory (its rid), none when it is unset.  security_barrier: the query's own
-- conditions are evaluated only on these rows, so an error cannot reveal another row.
CREATE SCHEMA accord_inv;
CREATE VIEW accord_inv.inventory_data WITH (security_barrier) AS
    SELECT (SELECT v.id FROM inventories v WHERE v.rid = i.inventory) AS inventory_id,
           i.item_path, i.item_data
    FROM inventory_items i
    WHERE i.inventory = NULLIF(current_setting('accord.inventory', true), '')::bigint;

-- The same rows restricted to those containing the filter (accord.filter, JSON): a query
-- whose WHERE is a conjunct item_data @> ?::jsonb reads this one (search_path), so the
-- containment is decided inside the barrier, where the GIN index can serve it.
CREATE SCHEMA accord_inv_filter;
CREATE VIEW accord_inv_filter.inventory_data WITH (security_barrier) AS
    SELECT (SELECT v.id FROM inventories v WHERE v.rid = i.inventory) AS inventory_id,
           i.item_path, i.item_data
    FROM inventory_items i
    WHERE i.inventory = NULLIF(current_setting('accord.inventory', true), '')::bigint
      AND i.item_data @> NULLIF(current_setting('accord.filter', true), '')::jsonb;

-- The role queries run as (SET LOCAL ROLE): NOLOGIN, no privileges but USAGE on the two
-- schemas and SELECT on the two views.  Roles belong to the cluster, so its name carries the
-- database's oid: two Accord databases in one cluster have a role each.  Creating it needs
-- CREATEROLE; without it an administrator creates the role and grants it to the server's
-- user, and this migration only grants it the views.
DO $$
DECLARE
    r text := 'accord_inv_' || (SELECT oid FROM pg_database WHERE datname = current_database());
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
        BEGIN
            EXECUTE format('CREATE ROLE %I NOLOGIN NOINHERIT', r);
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION '%', format('inventory queries need the role %I, and the database user %I may not'
                ' create it: give %I the CREATEROLE privilege, or let an administrator run'
                ' "CREATE ROLE %I NOLOGIN NOINHERIT; GRANT %I TO %I;" before the server starts',
                r, current_user, current_user, r, r, current_user);
        END;
    END IF;
    IF NOT pg_has_role(current_user, r, 'MEMBER') THEN
        EXECUTE format('GRANT %I TO %I', r, current_user);
    END IF;
    EXECUTE format('GRANT USAGE ON SCHEMA accord_inv, accord_inv_filter TO %I', r);
    EXECUTE format('GRANT SELECT ON accord_inv.inventory_data, accord_inv_filter.inventory_data TO %I', r);
END
$$;
