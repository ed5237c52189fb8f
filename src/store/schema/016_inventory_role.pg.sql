-- The inventory sandbox's role (migration 014) is named after the database's oid, and a
-- database restored from pg_dump into a new database has another oid: its role must be
-- made again (the dump holds only grants to the old database's role).  This function does
-- what 014 did, idempotently, and every start calls it after the migrations (store_ops
-- start_sql, under the migration lock), so a restored database gets its role at its first
-- start.  It writes to the catalog only what is missing.
CREATE FUNCTION accord_inv_role_ensure() RETURNS void LANGUAGE plpgsql AS $$
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
    IF NOT (has_table_privilege(r, 'accord_inv.inventory_data', 'SELECT')
            AND has_table_privilege(r, 'accord_inv_filter.inventory_data', 'SELECT')) THEN
        EXECUTE format('GRANT SELECT ON accord_inv.inventory_data, accord_inv_filter.inventory_data TO %I', r);
    END IF;
END
$$;
