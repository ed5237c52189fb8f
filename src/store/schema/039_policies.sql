-- Policies (issue 30 part 4, docs/security.md "Policies").  policies: named JSON documents
-- of rules (validated by policy/policy.c), each optionally below a parent whose rules it
-- overrides.  policy_links: where a policy applies — the server (all NULL), an org, a
-- project, a user, or a user within an org or a project; one policy per place (link_key
-- is "org/project/user" with empty parts).  process_policies: what the effective policy of
-- a process holds for later (the dispatcher's concurrency limits, the runner's rules),
-- written with the process so that neither the user nor the flow can change it.
CREATE TABLE policies (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    parent_id   TEXT REFERENCES policies (id) ON DELETE SET NULL,
    rules       TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);

CREATE TABLE policy_links (
    link_key    TEXT PRIMARY KEY,
    policy_id   TEXT NOT NULL REFERENCES policies (id) ON DELETE CASCADE,
    org_id      TEXT REFERENCES orgs (id) ON DELETE CASCADE,
    project_id  TEXT REFERENCES projects (id) ON DELETE CASCADE,
    user_id     TEXT REFERENCES users (id) ON DELETE CASCADE
);
CREATE INDEX policy_links_policy ON policy_links (policy_id);

CREATE TABLE process_policies (
    instance_id     TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE,
    policy_name     TEXT NOT NULL,
    max_per_org     INTEGER,
    max_per_project INTEGER,
    rules           TEXT
);
