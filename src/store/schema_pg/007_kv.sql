-- The `kv` task's project-scoped key-value store (docs/flows.md "Tasks", kv).  A row
-- holds either a string or a 64-bit integer, like Concord's: getString of an integer
-- entry is null, and string entries cannot be incremented.
CREATE TABLE kv (
    project_id   TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    string_value TEXT,
    long_value   BIGINT,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (project_id, key)
);

-- The sensitive values a process received from server tasks (decrypted secrets), so the
-- runner of a resumed process still masks them.  One sealed envelope per process
-- (crypto/seal.h, master key, bound to the org id and "process-sensitive:<instance id>")
-- holding the JSON array of strings; never plain text.
CREATE TABLE process_sensitive (
    instance_id TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE,
    envelope    BYTEA NOT NULL
);
