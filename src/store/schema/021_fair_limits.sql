-- Fair claiming (issue 23 item 9).  A process gets its place in the queue (fair_key) when
-- it becomes ENQUEUED: after its initiator's last queued process, but never before the
-- queue's head — so the queue is claimed round-robin across initiators, and one user's
-- hundred queued processes do not keep another user's single one waiting behind them.
-- Rows queued before this migration all have 0 and keep their order (last_updated_at).
ALTER TABLE processes ADD COLUMN fair_key INTEGER NOT NULL DEFAULT 0;

DROP INDEX processes_queue;
CREATE INDEX processes_queue ON processes (status, fair_key, last_updated_at) WHERE status = 'ENQUEUED';
-- An initiator's last place in the queue.
CREATE INDEX processes_queue_initiator ON processes (status, initiator_id, fair_key) WHERE status = 'ENQUEUED';
-- The running limits (--limit-running-per-user, --limit-running-per-project) count these:
-- top-level processes that hold a slot (children are neither held nor counted).  It leads
-- with status and parent_instance_id so that SQLite's planner, without statistics, takes it
-- over processes_parent (which would walk every top-level process ever stored).
CREATE INDEX processes_running ON processes (status, parent_instance_id, initiator_id, project_id)
    WHERE status IN ('STARTING', 'RUNNING');

-- The bytes each project's processes keep stored, logs and attachments (issue 23 item 9,
-- --limit-project-storage-bytes): kept by the writes and deletes of those, so that the
-- quota is one primary-key read.  Filled here from what is stored.
CREATE TABLE project_storage (
    project_id TEXT PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    bytes      INTEGER NOT NULL DEFAULT 0
);
INSERT INTO project_storage (project_id, bytes)
SELECT project_id, sum(n) FROM (
    SELECT p.project_id, length(x.data) AS n FROM process_log_chunks x
        JOIN processes p ON p.instance_id = x.instance_id WHERE p.project_id IS NOT NULL
    UNION ALL
    SELECT p.project_id, length(a.data) AS n FROM process_attachments a
        JOIN processes p ON p.instance_id = a.instance_id WHERE p.project_id IS NOT NULL
) AS stored GROUP BY project_id;
