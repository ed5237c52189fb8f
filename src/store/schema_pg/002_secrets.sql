-- Secrets: one row per secret.  `envelope` is the sealed data (crypto/seal.h, format
-- version 1); no column ever holds plaintext.  Team rules live in resource_access with
-- resource_type 'SECRET'.  Times are Unix milliseconds.

CREATE TABLE secrets (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    type         TEXT NOT NULL,               -- KEY_PAIR, USERNAME_PASSWORD, DATA
    encrypted_by TEXT NOT NULL,               -- SERVER_KEY, PASSWORD
    store_type   TEXT NOT NULL DEFAULT 'concord',
    visibility   TEXT NOT NULL DEFAULT 'PUBLIC',
    owner_id     TEXT REFERENCES users (id) ON DELETE SET NULL,
    project_id   TEXT REFERENCES projects (id) ON DELETE SET NULL,
    envelope     BYTEA NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT,                     -- set when the data changes
    UNIQUE (org_id, name)
);
CREATE INDEX secrets_project ON secrets (project_id);
CREATE INDEX secrets_owner ON secrets (owner_id);
