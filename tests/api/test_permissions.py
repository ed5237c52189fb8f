"""The permission matrix of issue 2 (parts 8 and 9): for every endpoint of orgs, teams,
projects, users and API keys, what each kind of caller gets.

Callers (all built by the `world` fixture in one PRIVATE org `porg`):
  anon       no credentials
  outsider   a user in no team of the org
  member     in team `members` (role MEMBER); that team has no access rules
  t_member, t_maint, t_owner   MEMBER / MAINTAINER / OWNER of team `crew` (no rules either;
             a team OWNER counts as an owner of the organization, as in Concord)
  reader, writer, powner       MEMBERs of teams `readers` / `writers` / `owners`, which hold
             READER / WRITER / OWNER rules on the projects
  creator    a member who created the projects (the resource owner)
  org_owner  the org's owner user (in no team)
  sysreader, syswriter         global roles concordSystemReader / concordSystemWriter
  admin      concordAdmin
Projects: `priv` (PRIVATE) and `pub` (PUBLIC), created by `creator`.
"""
import pytest

from conftest import ADMIN_KEY, Client, unique

ADMIN_ID = "230c5c9c-d9a7-11e6-bcfd-bb681c07b26c"
EVERYONE = ["anon", "outsider", "member", "t_member", "t_maint", "t_owner", "reader", "writer", "powner", "creator",
            "org_owner", "sysreader", "syswriter", "admin"]


def expect(allowed, ok=200, denied=403, org_scoped=True):
    """Expected status per caller: `ok` for the allowed ones, 401 for anon, else `denied` —
    but 404 for the outsider: the org is PRIVATE, and to an outsider a PRIVATE org is
    answered as if it did not exist (issue 15 part 11, docs/security.md)."""
    def status(who):
        if who == "anon":
            return 401
        if who in allowed:
            return ok
        return 404 if who == "outsider" and org_scoped else denied
    return [(who, status(who)) for who in EVERYONE]


def ok(r, status=200):
    assert r.status_code == status, r.text
    return r.json()


class World:
    def __init__(self, server):
        self.url = server.url
        self.admin = Client(server.url, ADMIN_KEY, "admin", ADMIN_ID, ADMIN_KEY)
        self.c = {"admin": self.admin, "anon": Client(server.url)}
        roles = {"sysreader": ["concordSystemReader"], "syswriter": ["concordSystemWriter"]}
        for who in EVERYONE:
            if who not in self.c:
                self.c[who] = self.user(roles.get(who))
        self.target = self.user()  # in no team: whose keys the others try to touch
        self.org = unique("porg")
        ok(self.admin.post("/api/v1/org", json={"name": self.org, "visibility": "PRIVATE",
                                                "owner": {"username": self.c["org_owner"].username}}))
        teams = {"members": [("member", "MEMBER"), ("creator", "MEMBER")],
                 "crew": [("t_member", "MEMBER"), ("t_maint", "MAINTAINER"), ("t_owner", "OWNER")],
                 "readers": [("reader", "MEMBER")], "writers": [("writer", "MEMBER")], "owners": [("powner", "MEMBER")]}
        for team, people in teams.items():
            self.team(team, people)
        self.rules = [{"teamName": "readers", "level": "READER"}, {"teamName": "writers", "level": "WRITER"},
                      {"teamName": "owners", "level": "OWNER"}]
        self.project("priv", "PRIVATE")
        self.project("pub", "PUBLIC")

    def user(self, roles=None):
        name = unique("pm")
        body = {"username": name}
        if roles:
            body["roles"] = roles
        uid = ok(self.admin.post("/api/v1/user", json=body))["id"]
        key = ok(self.admin.post("/api/v1/apikey", json={"username": name}))["key"]
        return Client(self.url, key, name, uid, key)

    def team(self, name, people):
        ok(self.admin.post("/api/v1/org/%s/team" % self.org, json={"name": name}))
        body = [{"username": self.c[who].username, "role": role} for who, role in people]
        ok(self.admin.put("/api/v1/org/%s/team/%s/users" % (self.org, name), json=body))

    def project(self, name, visibility):
        ok(self.c["creator"].post("/api/v1/org/%s/project" % self.org, json={"name": name, "visibility": visibility}))
        ok(self.admin.post("/api/v1/org/%s/project/%s/access/bulk" % (self.org, name), json=self.rules))

    def path(self, rest=""):
        return "/api/v1/org/%s%s" % (self.org, rest)


@pytest.fixture(scope="module")
def world(server):
    return World(server)


# ---- projects ----------------------------------------------------------------------------

PROJECT_READERS = {"t_owner", "reader", "writer", "powner", "creator", "org_owner", "sysreader", "syswriter", "admin"}
PROJECT_WRITERS = {"t_owner", "writer", "powner", "creator", "org_owner", "syswriter", "admin"}
PROJECT_OWNERS = {"t_owner", "powner", "creator", "org_owner", "admin"}
ORG_MEMBERS = {"member", "t_member", "t_maint", "t_owner", "reader", "writer", "powner", "creator", "org_owner",
               "sysreader", "syswriter", "admin"}


@pytest.mark.parametrize("who,status", expect(PROJECT_READERS))
def test_read_private_project(world, who, status):
    c = world.c[who]
    for path in [world.path("/project/priv"), "/api/v2/org/%s/project/priv" % world.org,
                 world.path("/project/priv/access")]:
        r = c.get(path)
        assert r.status_code == status, (path, r.text)
        if status == 200 and not path.endswith("access"):
            assert r.json()["name"] == "priv" and r.json()["owner"]["id"] == world.c["creator"].user_id
        if status == 403:
            assert "priv" in r.json()["message"] and r.json()["ok"] is False


@pytest.mark.parametrize("who,status", expect(ORG_MEMBERS))
def test_read_public_project_needs_org_membership(world, who, status):
    r = world.c[who].get(world.path("/project/pub"))
    assert r.status_code == status, r.text
    assert world.c[who].get(world.path("/project/pub/access")).status_code == status


@pytest.mark.parametrize("who,status", expect(PROJECT_WRITERS))
def test_update_private_project(world, who, status):
    r = world.c[who].post(world.path("/project"), json={"name": "priv", "description": "by " + who})
    assert r.status_code == status, r.text
    desc = world.admin.get(world.path("/project/priv")).json().get("description")
    assert (desc == "by " + who) == (status == 200)


@pytest.mark.parametrize("who,status", expect(PROJECT_WRITERS))
def test_update_public_project_needs_writer(world, who, status):
    r = world.c[who].post(world.path("/project"), json={"name": "pub", "description": "by " + who})
    assert r.status_code == status, r.text


@pytest.mark.parametrize("who,status", expect(PROJECT_OWNERS))
def test_delete_project(world, who, status):
    name = unique("del")
    world.project(name, "PRIVATE")
    r = world.c[who].delete(world.path("/project/" + name))
    assert r.status_code == status, r.text
    assert world.admin.get(world.path("/project/" + name)).status_code == (404 if status == 200 else 200)


@pytest.mark.parametrize("who,status", expect(PROJECT_OWNERS))
def test_change_project_owner_needs_owner(world, who, status):
    creator = world.c["creator"]
    # naming the current owner again keeps the world as it is, but still needs OWNER
    r = world.c[who].post(world.path("/project"), json={"name": "priv", "owner": {"id": creator.user_id}})
    assert r.status_code == status, r.text
    # a WRITER may not make themselves owner either
    if who == "writer":
        r = world.c[who].post(world.path("/project"), json={"name": "priv", "owner": {"id": world.c[who].user_id}})
        assert r.status_code == 403
    assert world.admin.get(world.path("/project/priv")).json()["owner"]["id"] == creator.user_id


@pytest.mark.parametrize("who,status", expect(PROJECT_OWNERS))
def test_change_access_rules(world, who, status):
    c = world.c[who]
    r = c.post(world.path("/project/priv/access"), json={"teamName": "members", "level": "READER"})
    assert r.status_code == status, r.text
    r = c.post(world.path("/project/priv/access/bulk"), json=world.rules)
    assert r.status_code == status, r.text
    # either way the rules end as the world defines them
    levels = {x["teamName"]: x["level"] for x in world.admin.get(world.path("/project/priv/access")).json()}
    assert levels == {"readers": "READER", "writers": "WRITER", "owners": "OWNER"}


@pytest.mark.parametrize("who,status", expect(ORG_MEMBERS))
def test_create_project_needs_org_membership(world, who, status):
    name = unique("new")
    r = world.c[who].post(world.path("/project"), json={"name": name})
    assert r.status_code == status, r.text
    if status == 200:
        p = world.admin.get(world.path("/project/" + name)).json()
        assert p["owner"]["id"] == world.c[who].user_id  # the creator owns it
        assert world.c[who].delete(world.path("/project/" + name)).status_code == 200


@pytest.mark.parametrize("who,status", expect(ORG_MEMBERS | {"outsider"}))
def test_list_projects_shows_only_readable(world, who, status):
    # PRIVATE org: outsiders may not even list; to them it does not exist
    r = world.c[who].get(world.path("/project"))
    if who == "outsider":
        assert r.status_code == 404
        return
    assert r.status_code == status, r.text
    if status != 200:
        return
    names = {p["name"] for p in r.json()}
    assert "pub" in names
    assert ("priv" in names) == (who in PROJECT_READERS)


def test_public_org_projects_are_hidden_from_outsiders(world, new_user):
    org = unique("puborg")
    ok(world.admin.post("/api/v1/org", json={"name": org}))
    ok(world.admin.post("/api/v1/org/%s/project" % org, json={"name": "open"}))
    outsider = world.c["outsider"]
    assert ok(outsider.get("/api/v1/org/%s/project" % org)) == []
    assert outsider.get("/api/v1/org/%s/project/open" % org).status_code == 403
    assert outsider.post("/api/v1/org/%s/project" % org, json={"name": "mine"}).status_code == 403


def test_system_roles_on_projects(world):
    # global readers read but neither write nor own; global writers write but do not own
    assert world.c["sysreader"].post(world.path("/project"), json={"name": "pub"}).status_code == 403
    assert world.c["syswriter"].post(world.path("/project"), json={"name": "pub"}).status_code == 200
    assert world.c["syswriter"].delete(world.path("/project/pub")).status_code == 403


# ---- organizations ----------------------------------------------------------------------------

@pytest.mark.parametrize("who,status", expect(ORG_MEMBERS | {"org_owner"}))
def test_view_private_org(world, who, status):
    r = world.c[who].get(world.path())
    assert r.status_code == status, r.text
    listed = [o["name"] for o in world.c[who].get("/api/v1/org", params={"limit": 1000}).json()] \
        if who != "anon" else []
    assert (world.org in listed) == (status == 200)


def test_public_org_visible_to_all_but_cfg_to_members(world):
    org = unique("puborg")
    ok(world.admin.post("/api/v1/org", json={"name": org, "cfg": {"secretish": 1}, "meta": {"m": 1}}))
    r = ok(world.c["outsider"].get("/api/v1/org/" + org))
    assert r["name"] == org and r["meta"] == {"m": 1} and "cfg" not in r
    assert ok(world.admin.get("/api/v1/org/" + org))["cfg"] == {"secretish": 1}
    assert world.c["anon"].get("/api/v1/org/" + org).status_code == 401


@pytest.mark.parametrize("who,status", expect({"admin"}, org_scoped=False))
def test_create_org_admin_only(world, who, status):
    name = unique("norg")
    r = world.c[who].post("/api/v1/org", json={"name": name})
    assert r.status_code == status, r.text
    assert world.admin.get("/api/v1/org/" + name).status_code == (200 if status == 200 else 404)


@pytest.mark.parametrize("who,status", expect({"t_owner", "org_owner", "admin"}, org_scoped=False))
def test_update_org_needs_org_owner(world, who, status):
    r = world.c[who].post("/api/v1/org", json={"name": world.org, "meta": {"by": who}})
    assert r.status_code == status, r.text
    meta = world.admin.get(world.path()).json().get("meta")
    assert (meta == {"by": who}) == (status == 200)


@pytest.mark.parametrize("who,status", expect({"admin"}, org_scoped=False))
def test_delete_org_admin_only(world, who, status):
    name = unique("dorg")
    ok(world.admin.post("/api/v1/org", json={"name": name, "owner": {"username": world.c["org_owner"].username}}))
    r = world.c[who].delete("/api/v1/org/" + name, params={"confirmation": "yes"})
    assert r.status_code == status, r.text
    assert world.admin.get("/api/v1/org/" + name).status_code == (404 if status == 200 else 200)


# ---- teams --------------------------------------------------------------------------------------

@pytest.mark.parametrize("who,status", expect(ORG_MEMBERS))
def test_read_teams_needs_org_membership(world, who, status):
    c = world.c[who]
    for path in [world.path("/team"), world.path("/team/crew"), world.path("/team/crew/users")]:
        assert c.get(path).status_code == status, path


ORG_OWNERS = {"t_owner", "org_owner", "admin"}


@pytest.mark.parametrize("who,status", expect(ORG_OWNERS))
def test_create_team_needs_org_owner(world, who, status):
    name = unique("team")
    r = world.c[who].post(world.path("/team"), json={"name": name})
    assert r.status_code == status, r.text
    if status == 200:
        users = ok(world.admin.get(world.path("/team/%s/users" % name)))
        assert [(u["username"], u["role"]) for u in users] == [(world.c[who].username, "MAINTAINER")]


@pytest.mark.parametrize("who,status", expect(ORG_OWNERS | {"t_maint"}))
def test_update_team_needs_maintainer(world, who, status):
    r = world.c[who].post(world.path("/team"), json={"name": "crew", "description": "by " + who})
    assert r.status_code == status, r.text
    desc = world.admin.get(world.path("/team/crew")).json().get("description")
    assert (desc == "by " + who) == (status == 200)


@pytest.mark.parametrize("who,status", expect(ORG_OWNERS))
def test_delete_team_needs_team_owner(world, who, status):
    name = unique("gone")
    world.team(name, [("t_member", "MEMBER"), ("t_maint", "MAINTAINER")])
    r = world.c[who].delete(world.path("/team/" + name))
    assert r.status_code == status, r.text
    assert world.admin.get(world.path("/team/" + name)).status_code == (404 if status == 200 else 200)


@pytest.mark.parametrize("who,status", expect(ORG_OWNERS | {"t_maint"}))
def test_add_and_remove_members_needs_maintainer(world, who, status):
    target = world.c["outsider"].username
    users = world.path("/team/crew/users")
    r = world.c[who].put(users, json=[{"username": target}])
    assert r.status_code == status, r.text
    in_team = {u["username"] for u in world.admin.get(users).json()}
    assert (target in in_team) == (status == 200)
    ok(world.admin.put(users, json=[{"username": target}]))
    r = world.c[who].delete(users, json=[target])
    ok(world.admin.delete(users, json=[target]))
    # the outsider is the target: in the team by now, so a member the org is visible to
    assert r.status_code == (403 if who == "outsider" else status), r.text


def test_maintainer_cannot_hand_out_or_take_ownership(world):
    maint = world.c["t_maint"]
    users = world.path("/team/crew/users")
    target = world.c["outsider"].username
    r = maint.put(users, json=[{"username": target, "role": "OWNER"}])
    assert r.status_code == 403 and "OWNER" in r.json()["message"]
    r = maint.put(users, json=[{"username": maint.username, "role": "OWNER"}])
    assert r.status_code == 403
    r = maint.put(users, json=[{"username": world.c["t_owner"].username, "role": "MEMBER"}])
    assert r.status_code == 403
    assert maint.delete(users, json=[world.c["t_owner"].username]).status_code == 403
    r = maint.put(users, params={"replace": "true"}, json=[{"username": maint.username, "role": "MAINTAINER"}])
    assert r.status_code == 403
    roles = {u["username"]: u["role"] for u in world.admin.get(users).json()}
    assert roles == {world.c["t_member"].username: "MEMBER", maint.username: "MAINTAINER",
                     world.c["t_owner"].username: "OWNER", "admin": "MAINTAINER"}
    # a maintainer may still hand out MAINTAINER; an OWNER may hand out OWNER
    assert maint.put(users, json=[{"username": target, "role": "MAINTAINER"}]).status_code == 200
    assert world.c["t_owner"].put(users, json=[{"username": target, "role": "OWNER"}]).status_code == 200
    assert world.c["t_owner"].delete(users, json=[target]).status_code == 200
    # and a team MAINTAINER of one team has no say over another team
    assert maint.put(world.path("/team/readers/users"), json=[{"username": target}]).status_code == 403


# ---- users (admin only) ---------------------------------------------------------------------

@pytest.mark.parametrize("who,status", expect({"admin"}, org_scoped=False))
def test_users_admin_only(world, who, status):
    c = world.c[who]
    name = unique("u")
    r = c.post("/api/v1/user", json={"username": name})
    assert r.status_code == status, r.text
    victim = world.c["outsider"]
    assert c.get("/api/v1/user/" + victim.username).status_code == status
    uid = ok(world.admin.post("/api/v1/user", json={"username": unique("victim")}))["id"]
    assert c.delete("/api/v1/user/" + uid).status_code == status
    assert (world.admin.get("/api/v1/user/" + name).status_code == 200) == (status == 200)


# ---- API keys (own keys, or admin) -------------------------------------------------------------

@pytest.mark.parametrize("who,status", expect({"admin"}, org_scoped=False))
def test_api_keys_of_someone_else(world, who, status):
    target = world.target
    c = world.c[who]
    r = c.post("/api/v1/apikey", json={"username": target.username})
    assert r.status_code == status, r.text
    assert c.get("/api/v1/apikey", params={"userId": target.user_id}).status_code == status
    key_id = ok(world.admin.post("/api/v1/apikey", json={"username": target.username}))["id"]
    assert c.delete("/api/v1/apikey/" + key_id).status_code == status
    remaining = {k["id"] for k in ok(world.admin.get("/api/v1/apikey", params={"userId": target.user_id}))}
    assert (key_id in remaining) == (status != 200)


@pytest.mark.parametrize("who,status", expect(set(EVERYONE)))
def test_api_keys_of_oneself(world, who, status):
    c = world.c[who]
    r = c.post("/api/v1/apikey", json={"username": c.username or "admin"})
    assert r.status_code == status, r.text
    if status == 200:
        key_id = r.json()["id"]
        assert key_id in {k["id"] for k in ok(c.get("/api/v1/apikey"))}
        assert c.delete("/api/v1/apikey/" + key_id).status_code == 200
