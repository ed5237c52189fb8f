-- Parents suspended until their children end (the concord task's `suspend: true`,
-- concord.suspendForCompletion): one row per awaited child.  The parent is resumed with
-- event_name once every child of the (parent, event) pair has a final status.

CREATE TABLE process_child_waits (
    parent_id  TEXT NOT NULL,
    event_name TEXT NOT NULL,
    child_id   TEXT NOT NULL,
    PRIMARY KEY (parent_id, event_name, child_id)
);
CREATE INDEX process_child_waits_child ON process_child_waits (child_id);
