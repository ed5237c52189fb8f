-- The `kv` task's project-scoped key-value store (docs/flows.md "Tasks", kv).  A row
-- holds either a string or a 64-bit integer, like Concord's: getString of an integer
-- entry is null, and string entries cannot be incremented.
CREATE TABLE kv (
    project_id   TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    string_value TEXT,
    long_value   INTEGER,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (project_id, key)
);
