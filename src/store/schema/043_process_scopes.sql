-- Scoped API keys and process sessions (issue 30 part 5, docs/security.md "Scoped API keys"):
-- the scopes of the key a process was started with (auth/scope.h scope_set_dump), which its
-- session token and the server tasks acting for it are held to.  No row: not narrowed.
-- Children and handlers inherit their parent's row (store_process_create).
CREATE TABLE process_scopes (
    instance_id  TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE,
    scopes       TEXT NOT NULL
);
