-- Process locks (issue 26 part 2; the lock and unlock tasks, docs/flows.md "lock"): a named
-- lock of a project (scope PROJECT, scope_id the project's id) or of an organization (ORG,
-- the org's id).  One row per process that holds a lock (held = 1: at most one per lock)
-- or waits for it (held = 0, SUSPENDED until resumed with event_name); waiters get the lock
-- in the order of seq.  A release hands the lock to the first waiter in the same
-- transaction, so a lock that has waiters always has a holder; the handed-over row keeps
-- event_name until the waiter is resumed with it.
CREATE TABLE process_locks (
    seq         INTEGER PRIMARY KEY,          -- arrival order (FIFO)
    lock_scope  TEXT NOT NULL,                -- PROJECT or ORG
    scope_id    TEXT NOT NULL,
    lock_name   TEXT NOT NULL,
    org_id      TEXT NOT NULL,                -- of the process
    project_id  TEXT,                         -- of the process (NULL: none)
    instance_id TEXT NOT NULL,
    held        INTEGER NOT NULL,
    event_name  TEXT,                         -- the resume event of a (former) waiter
    since       INTEGER NOT NULL              -- ms: when it took the lock or began to wait
);
CREATE UNIQUE INDEX process_locks_holder ON process_locks (lock_scope, scope_id, lock_name) WHERE held = 1;
CREATE UNIQUE INDEX process_locks_entry ON process_locks (lock_scope, scope_id, lock_name, instance_id);
CREATE INDEX process_locks_instance ON process_locks (instance_id);
