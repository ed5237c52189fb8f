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
