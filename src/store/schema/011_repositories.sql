-- Repositories of a project and the triggers read from their definitions (issue 13).
-- Times are Unix milliseconds.  A repository's clone lives in <data>/repos/<id>/ (bare,
-- per node); the row keeps what every node needs to know about it.

CREATE TABLE repositories (
    id                TEXT PRIMARY KEY,
    project_id        TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name              TEXT NOT NULL,
    url               TEXT NOT NULL,
    branch            TEXT,                       -- NULL with commit_id NULL: the remote's default
    commit_id         TEXT,                       -- a pinned commit (instead of a branch)
    path              TEXT,                       -- sub-folder holding the flows
    secret_id         TEXT REFERENCES secrets (id) ON DELETE SET NULL,
    disabled          INTEGER NOT NULL DEFAULT 0,
    triggers_disabled INTEGER NOT NULL DEFAULT 0,
    meta              TEXT,                       -- JSON object
    created_at        INTEGER NOT NULL,
    fetched_at        INTEGER,                    -- last successful fetch (any node)
    fetched_commit    TEXT,                       -- the configured ref's commit then
    UNIQUE (project_id, name)
);
CREATE INDEX repositories_secret ON repositories (secret_id);

-- Triggers are replaced as a whole per repository by a refresh.  fingerprint is a hash of
-- the trigger's definition: a refresh that keeps a trigger unchanged carries its
-- last_fire_at over, so a cron minute never fires twice (also across restarts).
CREATE TABLE triggers (
    id              TEXT PRIMARY KEY,
    project_id      TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    repo_id         TEXT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    event_source    TEXT NOT NULL,               -- cron, manual, github, or a generic source
    entry_point     TEXT,
    arguments       TEXT,                        -- JSON object
    active_profiles TEXT,                        -- JSON array
    conditions      TEXT,                        -- JSON object
    cfg             TEXT NOT NULL,               -- the whole trigger as parsed (JSON object)
    fingerprint     TEXT NOT NULL,
    next_fire_at    INTEGER,                     -- cron: the next minute to fire (NULL: none)
    last_fire_at    INTEGER,                     -- cron: the last minute fired
    created_at      INTEGER NOT NULL
);
CREATE INDEX triggers_repo ON triggers (repo_id);
CREATE INDEX triggers_source ON triggers (event_source);
CREATE INDEX triggers_next_fire ON triggers (next_fire_at);

-- What a process started from a repository ran (the process record's repo* and commit*
-- fields).
ALTER TABLE processes ADD COLUMN repo_id TEXT;
ALTER TABLE processes ADD COLUMN repo_name TEXT;
ALTER TABLE processes ADD COLUMN repo_url TEXT;
ALTER TABLE processes ADD COLUMN repo_path TEXT;
ALTER TABLE processes ADD COLUMN commit_id TEXT;
ALTER TABLE processes ADD COLUMN commit_msg TEXT;
ALTER TABLE processes ADD COLUMN commit_author TEXT;
ALTER TABLE processes ADD COLUMN triggered_by TEXT;  -- JSON object: {"trigger": {...}} (cron, generic)

-- The initiator of processes started by cron triggers (Concord's "cron" user).  It has no
-- password and no API key, so nobody logs in as it; it is not created when a user of
-- that name exists already (the scheduler takes it by this id: cron triggers then need runAs).
INSERT INTO users (id, username, user_domain, user_type, display_name, roles, disabled, created_at, updated_at)
SELECT '1f9ae527-e7ab-42c0-b0e5-0092f9285f22', 'cron', '', 'LOCAL', 'Cron triggers', '[]', 0, 0, 0
WHERE NOT EXISTS (SELECT 1 FROM users WHERE lower(username) = 'cron' AND user_domain = '');
