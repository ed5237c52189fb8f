-- JSON store queries read Concord's table json_store_data as well as inventory_data (issue 26
-- part 1): the sandbox's two views (migrations 014 and 017) under Concord's name and column
-- names, beside them in the same schemas, so that a query the search_path resolves there
-- reads the same rows: one store's items (accord.inventory), those containing the filter in
-- accord_inv_filter.  item_data_size is the item's size in bytes, as capacity counts it.
CREATE VIEW accord_inv.json_store_data WITH (security_barrier) AS
    SELECT (SELECT v.id FROM inventories v WHERE v.rid = i.inventory) AS json_store_id,
           i.item_path, i.item_data, i.item_size AS item_data_size
    FROM inventory_items i
    WHERE i.inventory = (SELECT NULLIF(current_setting('accord.inventory', true), '')::bigint);

CREATE VIEW accord_inv_filter.json_store_data WITH (security_barrier) AS
    SELECT (SELECT v.id FROM inventories v WHERE v.rid = i.inventory) AS json_store_id,
           i.item_path, i.item_data, i.item_size AS item_data_size
    FROM inventory_items i
    WHERE i.inventory = (SELECT NULLIF(current_setting('accord.inventory', true), '')::bigint)
      AND i.item_data @> (SELECT NULLIF(current_setting('accord.filter', true), '')::jsonb);

-- The query role reads the four views: accord_inv_role_ensure (migration 016), which every
-- start calls after the migrations, grants every view of the two schemas, also to the role
-- of a database restored under another oid.  Migration 016's text is repeated but for that.
CREATE OR REPLACE FUNCTION accord_inv_role_ensure() RETURNS void LANGUAGE plpgsql AS $$
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
    IF NOT (has_schema_privilege(r, 'accord_inv', 'USAGE') AND has_schema_privilege(r, 'accord_inv_filter', 'USAGE'))
    THEN
        EXECUTE format('GRANT USAGE ON SCHEMA accord_inv, accord_inv_filter TO %I', r);
    END IF;
    -- every view of the two schemas (they hold nothing else), so that a view added later
    -- needs no new version of this function
    IF EXISTS (SELECT 1 FROM pg_views WHERE schemaname IN ('accord_inv', 'accord_inv_filter')
               AND NOT has_table_privilege(r, format('%I.%I', schemaname, viewname), 'SELECT')) THEN
        EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA accord_inv, accord_inv_filter TO %I', r);
    END IF;
END
$$;
