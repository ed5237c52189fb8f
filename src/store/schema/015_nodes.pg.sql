-- The nodes of the service (issue 11 part 3): every `accord serve` registers itself when it
-- starts and heart-beats; a node whose heartbeat stopped is settled by another one (its
-- STARTING and RUNNING processes become FAILED, naming it).  Times are Unix milliseconds.
CREATE TABLE nodes (
    id           TEXT PRIMARY KEY,            -- random per start (processes.node_id)
    host         TEXT NOT NULL,               -- the host name, for messages
    folder       TEXT NOT NULL,               -- its work folder: a node that starts on the same
                                              -- host and folder holds its lock, so an earlier
                                              -- node of that folder is gone
    pid          INTEGER NOT NULL,
    started_at   BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL
);
