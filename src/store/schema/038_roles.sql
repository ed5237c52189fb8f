-- Roles and permissions (issue 30 part 3, docs/security.md "Roles and permissions").
-- roles: Concord's built-in roles (builtin = 1, with Concord's ids where Concord fixes them)
-- and those created with POST /api/v1/role.  A user's built-in roles stay in users.roles (read
-- at every authentication with no join); user_roles links users to the other roles.
-- role_permissions: the permission names of a role (auth/permissions.c lists the known ones).
-- role_ldap_groups: directory groups whose members hold the role, group_key the lower-cased
-- DN as in team_ldap_groups (schema 030).
CREATE TABLE roles (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    builtin     INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL
);

CREATE TABLE role_permissions (
    role_id     TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    permission  TEXT NOT NULL,
    PRIMARY KEY (role_id, permission)
);

CREATE TABLE user_roles (
    user_id  TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role_id  TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, role_id)
);
CREATE INDEX user_roles_role ON user_roles (role_id);

CREATE TABLE role_ldap_groups (
    role_id    TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    group_key  TEXT NOT NULL,
    group_dn   TEXT NOT NULL,
    PRIMARY KEY (role_id, group_key)
);
CREATE INDEX role_ldap_groups_key ON role_ldap_groups (group_key);

INSERT INTO roles (id, name, builtin, created_at) VALUES
    ('1c1f8ac6-3d53-4f6e-9a3f-2b6f0c4e7a01', 'concordAdmin', 1, 0),
    ('21d646b2-6a9c-11e8-acce-d37cf888abd9', 'concordSystemReader', 1, 0),
    ('c162d868-89ea-11e8-80be-97fd8a9f7419', 'concordSystemWriter', 1, 0);

-- As Concord's migrations give them to concordAdmin (an admin passes every check anyway).
INSERT INTO role_permissions (role_id, permission) VALUES
    ('1c1f8ac6-3d53-4f6e-9a3f-2b6f0c4e7a01', 'createOrg'),
    ('1c1f8ac6-3d53-4f6e-9a3f-2b6f0c4e7a01', 'updateOrg'),
    ('1c1f8ac6-3d53-4f6e-9a3f-2b6f0c4e7a01', 'apiKeySpecifyValue');
