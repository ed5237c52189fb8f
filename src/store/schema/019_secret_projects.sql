-- Issue 29 item 6: a secret may be restricted to several projects of its organization, as
-- Concord's SECRET_PROJECTS.  No row: the secret is not restricted.  A deleted project
-- leaves the secret's other projects (and, when it was the last one, no restriction),
-- as the old column's ON DELETE SET NULL did.
CREATE TABLE secret_projects (
    secret_id  TEXT NOT NULL REFERENCES secrets (id) ON DELETE CASCADE,
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    PRIMARY KEY (secret_id, project_id)
);
CREATE INDEX secret_projects_project ON secret_projects (project_id);

INSERT INTO secret_projects (secret_id, project_id)
    SELECT id, project_id FROM secrets WHERE project_id IS NOT NULL;

-- SQLite cannot drop a column that is part of a foreign key: secrets.project_id stays,
-- always NULL and read by nothing.
DROP INDEX secrets_project;
UPDATE secrets SET project_id = NULL WHERE project_id IS NOT NULL;
