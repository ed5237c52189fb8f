-- The audit log (issue 12; docs/api.md "Audit log"): one row per change made through the
-- API (users, keys, orgs, teams, projects, repositories, secrets, access rules,
-- inventories and queries) and per process start, stop, resume and restore.  Times are
-- Unix milliseconds.  No foreign keys: an entry outlives what it names (a deleted user
-- or project is still in the log until --retention-audit removes the entry).
CREATE TABLE audit_log (
    seq         INTEGER PRIMARY KEY,          -- insertion order (ties of entry_date)
    entry_date  INTEGER NOT NULL,
    object      TEXT NOT NULL,                -- USER, API_KEY, ORGANIZATION, TEAM, PROJECT, …
    action      TEXT NOT NULL,                -- CREATE, UPDATE, DELETE, ACCESS, START, STOP, …
    user_id     TEXT,                         -- who; NULL for the server itself
    username    TEXT,
    source      TEXT NOT NULL,                -- API_REQUEST or PROCESS
    api_key_id  TEXT,                         -- the key a request authenticated with
    instance_id TEXT,                         -- the process whose session made the request
    address     TEXT,                         -- the client's IP address
    details     TEXT NOT NULL                 -- JSON object: ids and names, never secret values
);
CREATE INDEX audit_log_date ON audit_log (entry_date, seq);
CREATE INDEX audit_log_object ON audit_log (object, entry_date);
CREATE INDEX audit_log_username ON audit_log (username, entry_date);
