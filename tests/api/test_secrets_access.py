"""Secrets (issue 4): the access matrix.  For a PRIVATE and a PUBLIC secret, every kind of
caller (outsider, member without rule, READER, WRITER and OWNER teams, the secret's owner,
an org owner, an admin) against every operation."""
import base64

import pytest

from conftest import unique
from test_secrets import API, World, create, create_ok, error, export

OPS = ["get", "public", "data", "list_access", "update", "delete", "set_access", "bulk_access", "list"]

# What each caller may do on a PRIVATE secret ("list" = the secret shows up in the list).
PRIVATE = {
    "outsider": set(),
    "member": set(),
    "reader": {"get", "public", "data", "list_access", "list"},
    "writer": {"get", "public", "data", "list_access", "update", "list"},
    "owner_team": set(OPS),
    "creator": set(OPS),
    "org_owner": set(OPS),
    "admin": set(OPS),
}
# On a PUBLIC secret every org member is a READER, and, as in Concord, the public key is
# readable by users outside the organization too.
PUBLIC = dict(PRIVATE, member={"get", "public", "data", "list_access", "list"}, outsider={"public"})


@pytest.fixture(scope="module")
def matrix(server):
    """One org with a user per role; secrets are created per test by `creator`."""
    from conftest import ADMIN_KEY, Client
    admin = Client(server.url, ADMIN_KEY, "admin", "230c5c9c-d9a7-11e6-bcfd-bb681c07b26c", ADMIN_KEY)
    w = World(server, admin)

    def user():
        name = unique("m")
        r = admin.post("/api/v1/user", json={"username": name, "type": "LOCAL"})
        assert r.status_code == 200, r.text
        uid = r.json()["id"]
        key = admin.post("/api/v1/apikey", json={"username": name}).json()["key"]
        return Client(server.url, key, name, uid, key)

    org = w.org()
    teams = {k: w.team(org) for k in ["plain", "readers", "writers", "owners", "bosses"]}
    users = {"outsider": user(), "member": user(), "reader": user(), "writer": user(), "owner_team": user(),
             "creator": user(), "org_owner": user(), "admin": admin}
    w.add(teams["plain"], users["member"])
    w.add(teams["plain"], users["creator"])
    w.add(teams["readers"], users["reader"])
    w.add(teams["writers"], users["writer"])
    w.add(teams["owners"], users["owner_team"])
    w.add(teams["bosses"], users["org_owner"], role="OWNER")  # team OWNER = org owner
    outsider_org = w.org()
    w.add(w.team(outsider_org), users["outsider"])  # a member of another org only
    return {"org": org, "teams": teams, "users": users, "world": w}


def make_secret(m, visibility):
    creator, org = m["users"]["creator"], m["org"]["name"]
    name = unique("s")
    create_ok(creator, org, type="key_pair", name=name, public=("p", b"ssh-ed25519 AAAAx k"), private=("k", b"priv"),
              visibility=visibility)
    base = API % org + "/" + name + "/access"
    for team, level in [("readers", "READER"), ("writers", "WRITER"), ("owners", "OWNER")]:
        r = creator.post(base, json={"teamId": m["teams"][team]["id"], "level": level})
        assert r.status_code == 200, r.text
    return name


def attempt(m, who, op, name):
    c, org = m["users"][who], m["org"]["name"]
    path = API % org + "/" + name
    rules = [{"teamId": m["teams"][t]["id"], "level": lv}
             for t, lv in [("readers", "READER"), ("writers", "WRITER"), ("owners", "OWNER")]]
    if op == "get":
        return c.get(path)
    if op == "public":
        return c.get(path + "/public")
    if op == "data":
        return export(c, org, name)
    if op == "list_access":
        return c.get(path + "/access")
    if op == "update":
        return c.post(path, json={"visibility": "PRIVATE" if "PRIVATE" in name else "PUBLIC"})
    if op == "delete":
        return c.delete(path)
    if op == "set_access":
        return c.post(path + "/access", json=rules[0])
    if op == "bulk_access":
        return c.post(path + "/access/bulk", json=rules)
    raise AssertionError(op)


@pytest.mark.parametrize("visibility,allowed", [("PRIVATE", PRIVATE), ("PUBLIC", PUBLIC)])
@pytest.mark.parametrize("who", list(PRIVATE))
def test_matrix(matrix, who, visibility, allowed):
    name = make_secret(matrix, visibility)
    for op in OPS:
        if op in ("delete", "list"):
            continue
        r = attempt(matrix, who, op, name)
        if op in allowed[who]:
            assert r.status_code == 200, (who, op, r.status_code, r.text)
        else:
            assert r.status_code == 403, (who, op, r.status_code, r.text)
            assert r.json()["ok"] is False
    listed = matrix["users"][who].get(API % matrix["org"]["name"], params={"limit": 1000})
    if who == "outsider":
        assert listed.status_code == 403
    else:
        assert (name in [x["name"] for x in listed.json()]) == ("list" in allowed[who]), who
    r = attempt(matrix, who, "delete", name)
    assert r.status_code == (200 if "delete" in allowed[who] else 403), (who, r.text)


def test_outsider_cannot_create_or_export(matrix):
    out, org = matrix["users"]["outsider"], matrix["org"]["name"]
    name = unique("o")
    error(create(out, org, type="data", name=name, data="x"), 403, "organization")
    creator = matrix["users"]["creator"]
    create_ok(creator, org, type="data", name=name, data="public data")  # PUBLIC by default
    r = export(out, org, name)
    error(r, 403, "")
    assert "public data" not in r.text


def test_member_creates_and_owns(matrix):
    member, org = matrix["users"]["member"], matrix["org"]["name"]
    name = unique("mine")
    create_ok(member, org, type="data", name=name, data="mine", visibility="PRIVATE")
    assert export(member, org, name).content == b"mine"
    meta = member.get(API % org + "/" + name).json()
    assert meta["owner"]["username"] == member.username
    # another member without a rule sees neither the secret nor its name in the list
    other = matrix["users"]["creator"]
    error(other.get(API % org + "/" + name), 403, "READER")
    assert name not in [x["name"] for x in other.get(API % org, params={"limit": 1000}).json()]
    assert member.delete(API % org + "/" + name).status_code == 200


def test_writer_can_update_and_move_but_owner_change_needs_owner(matrix):
    creator, writer, org = matrix["users"]["creator"], matrix["users"]["writer"], matrix["org"]["name"]
    name = make_secret(matrix, "PRIVATE")
    path = API % org + "/" + name
    r = writer.post(path, json={"data": base64.b64encode(b"new").decode()})
    assert r.status_code == 200, r.text
    assert export(writer, org, name).content == b"new"
    error(writer.post(path, json={"owner": {"id": writer.user_id}}), 403, "OWNER")
    # moving needs membership of the target org
    w = matrix["world"]
    foreign = w.org()
    error(writer.post(path, json={"orgName": foreign["name"]}), 403, "organization")
    assert creator.get(path).status_code == 200


# ---- access rules: secrets answer exactly as projects and inventories (issue 15 part 4) ---------

def access_rules_world(matrix):
    """A secret, a team of its org and the path of its access endpoint."""
    w, org = matrix["world"], matrix["org"]
    name = make_secret(matrix, "PRIVATE")
    return org, w.team(org), API % org["name"] + "/" + name + "/access"


def test_access_rule_invalid_team_id_names_the_field(matrix):
    admin = matrix["users"]["admin"]
    _, _, base = access_rules_world(matrix)
    msg = error(admin.post(base, json={"teamId": "not-a-uuid", "level": "READER"}), 400, "'teamId' must be a UUID")
    assert "not-a-uuid" in msg


@pytest.mark.parametrize("foreign_exists", [True, False])
def test_access_rule_foreign_org_name_is_refused_not_looked_up(matrix, foreign_exists):
    admin, w = matrix["users"]["admin"], matrix["world"]
    org, team, base = access_rules_world(matrix)
    if foreign_exists:  # a team of the same name in another org must not be found through it
        other = w.org()
        foreign_name = other["name"]
        r = admin.post("/api/v1/org/%s/team" % foreign_name, json={"name": team["name"]})
        assert r.status_code == 200, r.text
    else:
        foreign_name = "no-such-org-" + team["name"]
    before = admin.get(base).json()
    error(admin.post(base, json={"orgName": foreign_name, "teamName": team["name"], "level": "READER"}), 400,
          "'orgName' must be the organization of the resource")
    assert admin.get(base).json() == before
    # the secret's own org name is accepted
    r = admin.post(base, json={"orgName": org["name"], "teamName": team["name"], "level": "READER"})
    assert r.status_code == 200, r.text


def test_access_rule_bulk_error_names_the_entry(matrix):
    admin = matrix["users"]["admin"]
    _, team, base = access_rules_world(matrix)
    assert admin.post(base, json={"teamId": team["id"], "level": "WRITER"}).status_code == 200
    before = admin.get(base).json()
    msg = error(admin.post(base + "/bulk", json=[{"teamId": team["id"], "level": "OWNER"},
                                                 {"teamName": "ghost", "level": "READER"}]), 400, "access rule 2")
    assert "Team not found" in msg
    msg = error(admin.post(base + "/bulk", json=[{"teamId": team["id"], "level": "ADMIN"}]), 400, "access rule 1")
    assert "ADMIN" in msg
    assert admin.get(base).json() == before
