"""Owner transfer needs OWNER on every resource kind (issue 15 parts 10 and 11): a READER or
WRITER of a PRIVATE project, secret or inventory cannot name anyone owner — themselves
included — and so cannot go on to hand out access rules; an OWNER can."""
import pytest

from conftest import unique
from proc_util import make_org, make_team

LEVELS = ("READER", "WRITER", "OWNER")


@pytest.fixture
def world(admin, new_user):
    org, _ = make_org(admin)
    people = {}
    for level in LEVELS:
        u = new_user()
        team = make_team(admin, org, [(u, "MEMBER")])
        people[level] = (u, team)
    inv = unique("inv")
    r = admin.post("/api/v1/org/%s/inventory" % org, json={"name": inv, "visibility": "PRIVATE"})
    assert r.status_code == 200, r.text
    sec = unique("sec")
    r = admin.post("/api/v1/org/%s/secret" % org, files={"type": (None, "data"), "name": (None, sec),
                                                          "visibility": (None, "PRIVATE"), "data": ("d", b"x")})
    assert r.status_code == 200, r.text
    for level, (_, team) in people.items():
        for kind, name in (("inventory", inv), ("secret", sec)):
            r = admin.post("/api/v1/org/%s/%s/%s/access/bulk" % (org, kind, name),
                           json=[{"teamName": t, "level": lv} for lv, (_, t) in people.items()])
            assert r.status_code == 200, r.text
    return {"org": org, "inv": inv, "sec": sec, "people": people}


def owner_of(admin, world, kind):
    if kind == "inventory":  # GET …/inventory/{name} lists its queries; the list has the owner
        found = [i for i in admin.get("/api/v1/org/%s/inventory" % world["org"]).json() if i["name"] == world["inv"]]
        return found[0]["owner"]["username"]
    return admin.get("/api/v1/org/%s/secret/%s" % (world["org"], world["sec"])).json()["owner"]["username"]


@pytest.mark.parametrize("level", LEVELS)
def test_inventory_owner_transfer_needs_owner(admin, world, level):
    user, _ = world["people"][level]
    before = owner_of(admin, world, "inventory")
    r = user.post("/api/v1/org/%s/inventory" % world["org"], json={"name": world["inv"],
                                                                   "owner": {"username": user.username}})
    if level == "OWNER":
        assert r.status_code == 200, r.text
        assert owner_of(admin, world, "inventory") == user.username
        # give it back for the other cases
        r = admin.post("/api/v1/org/%s/inventory" % world["org"], json={"name": world["inv"],
                                                                        "owner": {"username": before}})
        assert r.status_code == 200, r.text
    else:
        assert r.status_code == 403, r.text
        assert owner_of(admin, world, "inventory") == before
        # and so cannot grant OWNER to a team
        r = user.post("/api/v1/org/%s/inventory/%s/access" % (world["org"], world["inv"]),
                      json={"teamName": world["people"][level][1], "level": "OWNER"})
        assert r.status_code == 403, r.text


@pytest.mark.parametrize("level", LEVELS)
def test_secret_owner_transfer_needs_owner(admin, world, level):
    user, _ = world["people"][level]
    before = owner_of(admin, world, "secret")
    r = user.post("/api/v1/org/%s/secret/%s" % (world["org"], world["sec"]),
                  json={"owner": {"username": user.username}})
    if level == "OWNER":
        assert r.status_code == 200, r.text
        assert owner_of(admin, world, "secret") == user.username
        r = admin.post("/api/v1/org/%s/secret/%s" % (world["org"], world["sec"]),
                       json={"owner": {"username": before}})
        assert r.status_code == 200, r.text
    else:
        assert r.status_code == 403, r.text
        assert owner_of(admin, world, "secret") == before
        r = user.post("/api/v1/org/%s/secret/%s/access" % (world["org"], world["sec"]),
                      json={"teamName": world["people"][level][1], "level": "OWNER"})
        assert r.status_code == 403, r.text


def test_an_outsider_cannot_be_named_owner(admin, world, new_user):
    """Even an OWNER cannot hand a resource to a user of no team of the org (issue 15
    part 11): that owner would hold a resource of an org it cannot see."""
    outsider = new_user()
    owner, _ = world["people"]["OWNER"]
    org = world["org"]
    r = owner.post("/api/v1/org/%s/inventory" % org, json={"name": world["inv"],
                                                           "owner": {"username": outsider.username}})
    assert r.status_code == 400, r.text
    assert "doesn't belong to the organization" in r.json()["message"]
    r = owner.post("/api/v1/org/%s/secret/%s" % (org, world["sec"]), json={"owner": {"username": outsider.username}})
    assert r.status_code == 400, r.text
    proj = unique("proj")
    r = admin.post("/api/v1/org/%s/project" % org, json={"name": proj})
    assert r.status_code == 200, r.text
    r = admin.post("/api/v1/org/%s/project" % org, json={"name": proj, "owner": {"username": outsider.username}})
    assert r.status_code == 400, r.text
    assert "doesn't belong to the organization" in r.json()["message"]
    # a member of the org may be named
    r = admin.post("/api/v1/org/%s/project" % org, json={"name": proj, "owner": {"username": owner.username}})
    assert r.status_code == 200, r.text
    assert owner_of(admin, world, "inventory") != outsider.username
    assert owner_of(admin, world, "secret") != outsider.username
