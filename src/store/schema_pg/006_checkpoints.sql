-- Checkpoints (issue 9): each `checkpoint` step a process passes on the server stores a
-- snapshot of its whole working directory (tar), so that the process can be restored
-- from there later.  Several checkpoints may share a name (a loop); the latest wins a
-- restore by name.

CREATE TABLE process_checkpoints (
    id          TEXT PRIMARY KEY,                  -- uuid
    instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    seq         BIGINT NOT NULL,                  -- 1, 2, … per process: the order taken
    created_at  BIGINT NOT NULL,                  -- ms since the epoch
    payload     BYTEA NOT NULL
);
CREATE INDEX process_checkpoints_instance ON process_checkpoints (instance_id, seq);
