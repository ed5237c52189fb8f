-- LDAP groups (issue 30 part 1).  user_ldap_groups: the directory groups of a user as read at
-- a login (auth/authn_ldap.c), DNs lower-cased; user_ldap_sync: when they were read (a login
-- within --ldap-groups-cache reads them no more).  team_ldap_groups: the groups linked to a
-- team (PUT /api/v1/org/{org}/team/{team}/ldapGroups), group_key the lower-cased DN.
-- team_members: a team's members, directly (team_users) or through a linked group; the
-- rights checks (store/access.c, orgs.c, secrets.c) read it instead of team_users.
CREATE TABLE user_ldap_groups (
    user_id   TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    group_dn  TEXT NOT NULL,
    PRIMARY KEY (user_id, group_dn)
);
CREATE INDEX user_ldap_groups_dn ON user_ldap_groups (group_dn);

CREATE TABLE user_ldap_sync (
    user_id    TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    synced_at  INTEGER NOT NULL
);

CREATE TABLE team_ldap_groups (
    team_id    TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    group_key  TEXT NOT NULL,
    group_dn   TEXT NOT NULL,
    role       TEXT NOT NULL,
    PRIMARY KEY (team_id, group_key)
);
CREATE INDEX team_ldap_groups_key ON team_ldap_groups (group_key);

CREATE VIEW team_members AS
    SELECT team_id, user_id, role FROM team_users
    UNION ALL
    SELECT tg.team_id, ug.user_id, tg.role
      FROM team_ldap_groups tg JOIN user_ldap_groups ug ON ug.group_dn = tg.group_key;
