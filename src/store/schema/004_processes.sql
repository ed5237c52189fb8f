-- Processes (issue 8): the queue, status history, events, log chunks, payloads and
-- attachments.  Times are Unix milliseconds.  The queue is the processes table itself:
-- a node claims an ENQUEUED row by a compare-and-set of its status (PostgreSQL: FOR
-- UPDATE SKIP LOCKED), so a suspended or scheduled process is just another stored row.

CREATE TABLE processes (
    instance_id        TEXT PRIMARY KEY,
    kind               TEXT NOT NULL DEFAULT 'DEFAULT',
    parent_instance_id TEXT,
    org_id             TEXT NOT NULL,
    project_id         TEXT,                       -- NULL: no project (org Default)
    initiator_id       TEXT NOT NULL,
    initiator          TEXT /*pg: COLLATE "C"*/ NOT NULL,  -- username at start (PostgreSQL: byte order, prefix ranges)
    status             TEXT NOT NULL,
    created_at         INTEGER NOT NULL,
    last_updated_at    INTEGER NOT NULL,
    last_run_at        INTEGER,
    start_at           INTEGER,                    -- startAt: not dispatched before
    total_runtime_ms   INTEGER NOT NULL DEFAULT 0,
    timeout_s          INTEGER,                    -- processTimeout
    suspend_timeout_s  INTEGER,                    -- suspendTimeout
    entry_point        TEXT NOT NULL,
    tags               TEXT,                       -- JSON array of strings
    meta               TEXT NOT NULL DEFAULT '{}', -- JSON object (meta.out: out variables)
    handlers           TEXT,                       -- JSON array (onFailure, ...)
    session_hash       BLOB,                       -- SHA-256 of the session token
    node_id            TEXT,                       -- the node that runs it (STARTING, RUNNING)
    heartbeat_at       INTEGER,
    resume_at          INTEGER,                    -- SUSPENDED in `sleep`: resumed then …
    resume_event       TEXT                        -- … with this event
);
CREATE INDEX processes_created ON processes (created_at);
-- The list's order (created_at DESC, instance_id DESC) comes whole from the index, so no
-- sort is needed and the planner (without statistics) does not prefer processes_project_status
-- and sort a whole project.  Status filters and counts by status stay inside the index, and
-- with instance_id a list with a status walks that status alone, in order.
CREATE INDEX processes_project ON processes (project_id, created_at, instance_id);
CREATE INDEX processes_project_status ON processes (project_id, status, created_at, instance_id);
-- Counts by initiator prefix: a range on initiator inside the project (process_list.c).
CREATE INDEX processes_project_initiator ON processes (project_id, initiator, created_at);
CREATE INDEX processes_org ON processes (org_id, created_at);
CREATE INDEX processes_initiator ON processes (initiator_id, created_at);
CREATE INDEX processes_status ON processes (status, created_at);
CREATE INDEX processes_parent ON processes (parent_instance_id, created_at);
CREATE INDEX processes_queue ON processes (last_updated_at) WHERE status = 'ENQUEUED';
CREATE INDEX processes_wake ON processes (resume_at) WHERE status = 'SUSPENDED' AND resume_at IS NOT NULL;
CREATE INDEX processes_session ON processes (session_hash) WHERE session_hash IS NOT NULL;

-- project_id and created_at are copies of the process's (neither ever changes), written in
-- the same transaction, so that a list or count with a project and a tag or meta filter is
-- answered from these indexes, newest first, without visiting every process of the project.
CREATE TABLE process_tags (
    instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    tag         TEXT NOT NULL,
    project_id  TEXT,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (instance_id, tag)
);
CREATE INDEX process_tags_tag ON process_tags (tag, created_at, instance_id);
CREATE INDEX process_tags_project ON process_tags (project_id, tag, created_at, instance_id);

-- Top-level scalar meta values as text, for the meta.<key>[.<op>] list filters.
CREATE TABLE process_meta_keys (
    instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    project_id  TEXT,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (instance_id, key)
);
CREATE INDEX process_meta_keys_project ON process_meta_keys (project_id, key, value, created_at, instance_id);

CREATE TABLE process_status_history (
    id          TEXT PRIMARY KEY,                  -- the id of its PROCESS_STATUS event
    instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    status      TEXT NOT NULL,
    change_date INTEGER NOT NULL
);
CREATE INDEX process_status_history_instance ON process_status_history (instance_id, change_date);

CREATE TABLE process_events (
    seq_id         INTEGER PRIMARY KEY,            -- order of insertion
    id             TEXT NOT NULL,
    instance_id    TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    event_type     TEXT NOT NULL,
    event_date     INTEGER NOT NULL,
    correlation_id TEXT,
    phase          TEXT,                           -- PRE, POST or NULL
    data           TEXT NOT NULL                   -- JSON object
);
CREATE INDEX process_events_instance ON process_events (instance_id, seq_id);

-- The log as chunks [start_off, start_off + length(data)).
CREATE TABLE process_log_chunks (
    instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    start_off   INTEGER NOT NULL,
    data        BLOB NOT NULL,
    PRIMARY KEY (instance_id, start_off)
);

-- The working directory a process starts from (a tar archive, base/pack.h), and, while
-- it is suspended, the one it resumes from.
CREATE TABLE process_payloads (
    instance_id TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE,
    data        BLOB NOT NULL
);

-- Files the flow left in _attachments/ (out.json among them), kept when it ends.
CREATE TABLE process_attachments (
    instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    data        BLOB NOT NULL,
    PRIMARY KEY (instance_id, name)
);
