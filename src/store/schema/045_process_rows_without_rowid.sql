-- Fewer pages written per process (issue 27 item 2).  The per-process tables keyed by text
-- were rowid tables, so each row lived in two b-trees (the table and the index SQLite makes
-- for its key) and the status history in three (with its instance index): every status
-- change wrote a page of each.  Keyed WITHOUT ROWID, a row lives in its key's b-tree alone,
-- and the history is keyed by the process first, so its rows are also the instance index.
-- The same columns, constraints and rows; PostgreSQL has no rowid (045_*.pg.sql: nothing).

CREATE TABLE process_status_history_045 (
    id          TEXT NOT NULL,                     -- the id of its PROCESS_STATUS event
    instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    status      TEXT NOT NULL,
    change_date INTEGER NOT NULL,
    PRIMARY KEY (instance_id, id)
) WITHOUT ROWID;
INSERT INTO process_status_history_045 (id, instance_id, status, change_date)
    SELECT id, instance_id, status, change_date FROM process_status_history;
DROP TABLE process_status_history;
ALTER TABLE process_status_history_045 RENAME TO process_status_history;

CREATE TABLE process_payloads_045 (
    instance_id TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE,
    data        BLOB NOT NULL
) WITHOUT ROWID;
INSERT INTO process_payloads_045 (instance_id, data) SELECT instance_id, data FROM process_payloads;
DROP TABLE process_payloads;
ALTER TABLE process_payloads_045 RENAME TO process_payloads;

CREATE TABLE process_start_payloads_045 (
    instance_id TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE,
    data        BLOB NOT NULL
) WITHOUT ROWID;
INSERT INTO process_start_payloads_045 (instance_id, data) SELECT instance_id, data FROM process_start_payloads;
DROP TABLE process_start_payloads;
ALTER TABLE process_start_payloads_045 RENAME TO process_start_payloads;

CREATE TABLE process_meta_keys_045 (
    instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    project_id  TEXT,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (instance_id, key)
) WITHOUT ROWID;
INSERT INTO process_meta_keys_045 (instance_id, key, value, project_id, created_at)
    SELECT instance_id, key, value, project_id, created_at FROM process_meta_keys;
DROP TABLE process_meta_keys;
ALTER TABLE process_meta_keys_045 RENAME TO process_meta_keys;
CREATE INDEX process_meta_keys_project ON process_meta_keys (project_id, key, value, created_at, instance_id);

CREATE TABLE process_log_chunks_045 (
    instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    start_off   INTEGER NOT NULL,
    data        BLOB NOT NULL,
    PRIMARY KEY (instance_id, start_off)
) WITHOUT ROWID;
INSERT INTO process_log_chunks_045 (instance_id, start_off, data)
    SELECT instance_id, start_off, data FROM process_log_chunks;
DROP TABLE process_log_chunks;
ALTER TABLE process_log_chunks_045 RENAME TO process_log_chunks;

CREATE TABLE process_scopes_045 (
    instance_id  TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE,
    scopes       TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO process_scopes_045 (instance_id, scopes) SELECT instance_id, scopes FROM process_scopes;
DROP TABLE process_scopes;
ALTER TABLE process_scopes_045 RENAME TO process_scopes;
