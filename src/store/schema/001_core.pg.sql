-- Core entities: users, API keys, organizations, teams, projects and the team access
-- rules shared by projects, secrets and inventories.  Times are Unix milliseconds.
--
-- PostgreSQL's own text of 001_core.sql (scripts/embed-sql: a NNN_name.pg.sql replaces the
-- translation where PostgreSQL needs more): SQLite's INTEGER (64 bits) is BIGINT here, BLOB
-- is BYTEA, a rowid alias (INTEGER PRIMARY KEY) is an identity column.  The store's SQL is
-- shared; the few SQLite functions it uses that PostgreSQL lacks are defined here with
-- SQLite's meaning.

-- instr(haystack, needle): 1-based position of needle, 0 when absent (process_list.c).
CREATE FUNCTION instr(haystack TEXT, needle TEXT) RETURNS INTEGER
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS 'SELECT strpos(haystack, needle)';

-- json_each(text) over a JSON array: one row per element, its value as text (SQLite's value
-- column of a text element; process_list.c passes an array of ids).  PostgreSQL's own
-- json_each(json) takes objects; an untyped parameter picks this one (text is preferred).
CREATE FUNCTION json_each(arr TEXT) RETURNS TABLE (value TEXT)
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS 'SELECT json_array_elements_text(arr::json)';

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    username      TEXT NOT NULL,
    user_domain   TEXT NOT NULL DEFAULT '',
    user_type     TEXT NOT NULL DEFAULT 'LOCAL',
    display_name  TEXT,
    email         TEXT,
    password_hash TEXT,
    roles         TEXT NOT NULL DEFAULT '[]',
    disabled      BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE UNIQUE INDEX users_name ON users (lower(username), user_domain);

CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    key_hash    BYTEA NOT NULL UNIQUE,
    expired_at  BIGINT,
    created_at  BIGINT NOT NULL,
    UNIQUE (user_id, name)
);

CREATE TABLE orgs (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    visibility  TEXT NOT NULL DEFAULT 'PUBLIC',
    owner_id    TEXT REFERENCES users (id) ON DELETE SET NULL,
    meta        TEXT,
    cfg         TEXT,
    created_at  BIGINT NOT NULL
);

CREATE TABLE teams (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    description TEXT,
    created_at  BIGINT NOT NULL,
    UNIQUE (org_id, name)
);

CREATE TABLE team_users (
    team_id     TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role        TEXT NOT NULL,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_users_user ON team_users (user_id);

CREATE TABLE projects (
    id               TEXT PRIMARY KEY,
    org_id           TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    description      TEXT,
    visibility       TEXT NOT NULL DEFAULT 'PUBLIC',
    raw_payload_mode TEXT NOT NULL DEFAULT 'DISABLED',
    owner_id         TEXT REFERENCES users (id) ON DELETE SET NULL,
    meta             TEXT,
    cfg              TEXT,
    created_at       BIGINT NOT NULL,
    UNIQUE (org_id, name)
);

-- Team rules on a resource: resource_type is 'PROJECT', 'SECRET' or 'INVENTORY'.
CREATE TABLE resource_access (
    resource_type TEXT NOT NULL,
    resource_id   TEXT NOT NULL,
    team_id       TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    level         TEXT NOT NULL,
    PRIMARY KEY (resource_type, resource_id, team_id)
);
CREATE INDEX resource_access_team ON resource_access (team_id);

-- Bootstrap data with Concord's well-known ids: the admin user, org Default, team default.
INSERT INTO users (id, username, roles, created_at, updated_at)
    VALUES ('230c5c9c-d9a7-11e6-bcfd-bb681c07b26c', 'admin', '["concordAdmin"]', 0, 0);
INSERT INTO orgs (id, name, visibility, owner_id, created_at)
    VALUES ('0fac1b18-d179-11e7-b3e7-d7df4543ed4f', 'Default', 'PUBLIC', '230c5c9c-d9a7-11e6-bcfd-bb681c07b26c', 0);
INSERT INTO teams (id, org_id, name, description, created_at)
    VALUES ('0fac1b18-d179-11e7-b3e7-d7df4543ed4e', '0fac1b18-d179-11e7-b3e7-d7df4543ed4f', 'default', 'Default team', 0);

-- Facts about this installation (e.g. when bootstrap ran).
CREATE TABLE server_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
