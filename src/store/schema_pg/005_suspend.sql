-- Suspend and resume (issue 9).  A suspended process keeps the event names it waits for
-- (the events of its threads plus the names of its pending forms) so that a resume is
-- checked without opening its payload; a resumed one keeps the event and arguments it
-- resumes with until its runner has them.

ALTER TABLE processes ADD COLUMN wait_events TEXT;  -- JSON array of names while SUSPENDED
ALTER TABLE processes ADD COLUMN resume_args TEXT;  -- JSON object passed with resume_event

-- The pending forms of a SUSPENDED process, as the flow engine describes them
-- ({name, eventName, fields, values, options}).
CREATE TABLE process_forms (
    instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    event_name  TEXT NOT NULL,
    form        TEXT NOT NULL,
    PRIMARY KEY (instance_id, name)
);

-- The queue's indexes lead with status, so that SQLite's planner (which runs without
-- statistics here) picks them over processes_status: with 100,000 SUSPENDED processes
-- the wake-up query otherwise walked every suspended row on each dispatch (bench/suspend).
DROP INDEX processes_queue;
DROP INDEX processes_wake;
CREATE INDEX processes_queue ON processes (status, last_updated_at) WHERE status = 'ENQUEUED';
CREATE INDEX processes_scheduled ON processes (status, start_at) WHERE status = 'ENQUEUED' AND start_at IS NOT NULL;
CREATE INDEX processes_wake ON processes (status, resume_at) WHERE status = 'SUSPENDED' AND resume_at IS NOT NULL;
