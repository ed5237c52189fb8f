"""Organizations: POST/GET/DELETE /api/v1/org (issue 2 part 7)."""
import uuid

from conftest import ADMIN_KEY, Client, unique

DEFAULT_ORG_ID = "0fac1b18-d179-11e7-b3e7-d7df4543ed4f"


def create_org(admin, **fields):
    body = {"name": unique("org")}
    body.update(fields)
    r = admin.post("/api/v1/org", json=body)
    assert r.status_code == 200, r.text
    return body["name"], r.json()


def test_create_then_get(admin):
    name, res = create_org(admin, meta={"team": "infra"}, cfg={"x": 1})
    assert res["ok"] is True and res["result"] == "CREATED" and len(res["id"]) == 36
    org = admin.get("/api/v1/org/" + name).json()
    assert org["id"] == res["id"] and org["name"] == name
    assert org["visibility"] == "PUBLIC"
    assert org["owner"] == {"id": admin.user_id, "username": "admin"}
    assert org["meta"] == {"team": "infra"} and org["cfg"] == {"x": 1}


def test_creator_owns_the_default_team(admin):
    name, _ = create_org(admin)
    teams = admin.get("/api/v1/org/%s/team" % name).json()
    assert [t["name"] for t in teams] == ["default"]
    users = admin.get("/api/v1/org/%s/team/default/users" % name).json()
    assert [(u["username"], u["role"]) for u in users] == [("admin", "OWNER")]


def test_create_with_owner_and_private(admin, new_user):
    owner = new_user()
    name, res = create_org(admin, visibility="PRIVATE", owner={"username": owner.username})
    org = owner.get("/api/v1/org/" + name)
    assert org.status_code == 200, org.text
    assert org.json()["owner"]["id"] == owner.user_id and org.json()["visibility"] == "PRIVATE"
    name2, _ = create_org(admin, owner={"id": owner.user_id})
    assert admin.get("/api/v1/org/" + name2).json()["owner"]["username"] == owner.username


def test_update_by_name_keeps_omitted_fields(admin):
    name, res = create_org(admin, meta={"a": 1}, cfg={"b": 2})
    r = admin.post("/api/v1/org", json={"name": name, "visibility": "PRIVATE"})
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "UPDATED", "id": res["id"]}
    org = admin.get("/api/v1/org/" + name).json()
    assert org["visibility"] == "PRIVATE" and org["meta"] == {"a": 1} and org["cfg"] == {"b": 2}
    r = admin.post("/api/v1/org", json={"name": name, "meta": {"c": 3}})
    assert r.status_code == 200
    org = admin.get("/api/v1/org/" + name).json()
    assert org["meta"] == {"c": 3} and org["visibility"] == "PRIVATE"


def test_rename_by_id(admin):
    name, res = create_org(admin)
    new_name = unique("renamed")
    r = admin.post("/api/v1/org", json={"id": res["id"], "name": new_name})
    assert r.status_code == 200 and r.json()["result"] == "UPDATED"
    assert admin.get("/api/v1/org/" + name).status_code == 404
    assert admin.get("/api/v1/org/" + new_name).json()["id"] == res["id"]


def test_rename_onto_taken_name_is_409(admin):
    a, _ = create_org(admin)
    b, res_b = create_org(admin)
    r = admin.post("/api/v1/org", json={"id": res_b["id"], "name": a})
    assert r.status_code == 409 and a in r.json()["message"]
    assert admin.get("/api/v1/org/" + b).status_code == 200


def test_bad_input(admin):
    cases = [
        ({}, "name"),
        ({"name": "ab"}, "ab"),
        ({"name": "-bad"}, "-bad"),
        ({"name": "has space"}, "has space"),
        ({"name": "x" * 129}, "organization"),
        ({"name": 5}, "name"),
        ({"name": unique("org"), "visibility": "SECRET"}, "visibility"),
        ({"name": unique("org"), "meta": [1]}, "meta"),
        ({"name": unique("org"), "cfg": "x"}, "cfg"),
        ({"name": unique("org"), "owner": {"username": "no-such-user-q"}}, "no-such-user-q"),
        ({"name": unique("org"), "owner": {}}, "owner"),
        ({"name": unique("org"), "owner": {"id": "nope"}}, "owner"),
        ({"id": "not-a-uuid"}, "id"),
    ]
    for body, word in cases:
        r = admin.post("/api/v1/org", json=body)
        assert r.status_code == 400, (body, r.text)
        assert r.json()["ok"] is False and word in r.json()["message"], (body, r.text)
    r = admin.post("/api/v1/org", json={"id": str(uuid.uuid4()), "name": unique("org")})
    assert r.status_code == 404
    r = admin.post("/api/v1/org", data="{", headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    r = admin.post("/api/v1/org", json=["x"])
    assert r.status_code == 400
    r = admin.post("/api/v1/org", data="name=x", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    # nothing of the failed requests was stored
    names = [o["name"] for o in admin.get("/api/v1/org", params={"limit": 1000}).json()]
    assert not any(n in names for n in ["ab", "-bad", "has space"])


def test_get_unknown_is_404(admin):
    r = admin.get("/api/v1/org/no-such-org-x")
    assert r.status_code == 404 and r.json() == {"ok": False, "message": "Organization not found: no-such-org-x"}


def test_list_filter_and_paging(admin):
    tag = unique("lst")
    names = sorted("%s-%d" % (tag, i) for i in range(5))
    for n in names:
        assert admin.post("/api/v1/org", json={"name": n}).status_code == 200
    got = admin.get("/api/v1/org", params={"filter": tag.upper()}).json()
    assert [o["name"] for o in got] == names
    assert all(set(o) >= {"id", "name", "visibility"} for o in got)
    page = admin.get("/api/v1/org", params={"filter": tag, "limit": 2, "offset": 1}).json()
    assert [o["name"] for o in page] == names[1:3]
    assert admin.get("/api/v1/org", params={"filter": tag, "offset": 10}).json() == []
    # LIKE wildcards in the filter are taken literally
    assert admin.get("/api/v1/org", params={"filter": tag + "%"}).json() == []
    for bad in [{"limit": "abc"}, {"limit": "0"}, {"offset": "-1"}, {"limit": "100000"}]:
        assert admin.get("/api/v1/org", params=bad).status_code == 400, bad


def test_list_only_current(admin, new_user):
    user = new_user()
    pub, _ = create_org(admin)
    mine, _ = create_org(admin, visibility="PRIVATE")
    hidden, _ = create_org(admin, visibility="PRIVATE")
    r = admin.put("/api/v1/org/%s/team/default/users" % mine, json=[{"username": user.username}])
    assert r.status_code == 200
    seen = [o["name"] for o in user.get("/api/v1/org", params={"limit": 1000}).json()]
    assert pub in seen and mine in seen and hidden not in seen and "Default" in seen
    current = [o["name"] for o in user.get("/api/v1/org", params={"onlyCurrent": "true"}).json()]
    assert current == ["Default", mine]  # every new user is a member of Default (as in Concord)
    admin_current = [o["name"] for o in admin.get("/api/v1/org", params={"onlyCurrent": "true", "limit": 1000}).json()]
    assert pub in admin_current and mine in admin_current
    all_admin = [o["name"] for o in admin.get("/api/v1/org", params={"limit": 1000}).json()]
    assert hidden in all_admin


def test_delete_needs_confirmation(admin):
    name, _ = create_org(admin)
    r = admin.delete("/api/v1/org/" + name)
    assert r.status_code == 400 and "confirm" in r.json()["message"]
    r = admin.delete("/api/v1/org/" + name, params={"confirmation": "no"})
    assert r.status_code == 400
    assert admin.get("/api/v1/org/" + name).status_code == 200
    r = admin.delete("/api/v1/org/" + name, params={"confirmation": "yes"})
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "DELETED"}
    assert admin.get("/api/v1/org/" + name).status_code == 404
    r = admin.delete("/api/v1/org/" + name, params={"confirmation": "yes"})
    assert r.status_code == 404 and name in r.json()["message"]


def test_delete_removes_teams_projects_and_rules(admin, new_user):
    user = new_user()
    name, res = create_org(admin)
    assert admin.post("/api/v1/org/%s/team" % name, json={"name": "devs"}).status_code == 200
    assert admin.put("/api/v1/org/%s/team/devs/users" % name, json=[{"username": user.username}]).status_code == 200
    r = admin.post("/api/v1/org/%s/project" % name, json={"name": "proj", "visibility": "PRIVATE"})
    assert r.status_code == 200
    r = admin.post("/api/v1/org/%s/project/proj/access" % name, json={"teamName": "devs", "level": "READER"})
    assert r.status_code == 200
    assert user.get("/api/v1/org/%s/project/proj" % name).status_code == 200
    assert admin.delete("/api/v1/org/" + name, params={"confirmation": "yes"}).status_code == 200
    # same name again: a new, empty org; the old members and rules are gone
    _, res2 = create_org(admin, name=name)
    assert res2["id"] != res["id"] and res2["result"] == "CREATED"
    assert [t["name"] for t in admin.get("/api/v1/org/%s/team" % name).json()] == ["default"]
    assert admin.get("/api/v1/org/%s/project" % name).json() == []
    assert admin.get("/api/v1/org/%s/project/proj" % name).status_code == 404
    assert user.get("/api/v1/org/" + name).status_code == 200  # PUBLIC, visible
    assert user.get("/api/v1/org/%s/team" % name).status_code == 403  # but no longer a member


def test_default_org_cannot_be_deleted(admin):
    r = admin.delete("/api/v1/org/Default", params={"confirmation": "yes"})
    assert r.status_code == 409 and "Default" in r.json()["message"]
    assert admin.get("/api/v1/org/Default").json()["id"] == DEFAULT_ORG_ID


def test_orgs_teams_projects_survive_restart(fresh_server):
    srv = fresh_server().start()
    c = Client(srv.url, ADMIN_KEY)
    assert c.post("/api/v1/org", json={"name": "kept-org", "visibility": "PRIVATE", "meta": {"k": 1}}).status_code == 200
    assert c.post("/api/v1/org/kept-org/team", json={"name": "kept-team"}).status_code == 200
    assert c.post("/api/v1/org/kept-org/project", json={"name": "kept-proj", "cfg": {"c": 2}}).status_code == 200
    r = c.post("/api/v1/org/kept-org/project/kept-proj/access", json={"teamName": "kept-team", "level": "WRITER"})
    assert r.status_code == 200
    assert srv.stop() == 0
    srv.start()
    c = Client(srv.url, ADMIN_KEY)
    org = c.get("/api/v1/org/kept-org").json()
    assert org["visibility"] == "PRIVATE" and org["meta"] == {"k": 1}
    assert [t["name"] for t in c.get("/api/v1/org/kept-org/team").json()] == ["default", "kept-team"]
    assert c.get("/api/v1/org/kept-org/team/kept-team/users").json()[0]["role"] == "MAINTAINER"
    assert c.get("/api/v1/org/kept-org/project/kept-proj").json()["cfg"] == {"c": 2}
    rules = c.get("/api/v1/org/kept-org/project/kept-proj/access").json()
    assert [(x["teamName"], x["level"]) for x in rules] == [("kept-team", "WRITER")]
