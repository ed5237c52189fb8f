-- Process operations (issue 26 part 4).  A finished process may be disabled (Concord's
-- flag: its checkpoints can no longer be restored) and restarted: a restart runs the
-- process again from the payload it was started with, so that payload is kept beside the
-- working one (process_payloads is replaced while a process is suspended and dropped when
-- it ends) for as long as the process exists.

ALTER TABLE processes ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;

CREATE TABLE process_start_payloads (
    instance_id TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE,
    data        BLOB NOT NULL
);
