"""Projects and their access rules: /api/v1/org/{org}/project… and /api/v2/…/project/{p}."""
import uuid

from conftest import unique


def make_org(admin):
    name = unique("org")
    assert admin.post("/api/v1/org", json={"name": name}).status_code == 200
    return name


def make_project(client, org, **fields):
    body = {"name": unique("proj")}
    body.update(fields)
    r = client.post("/api/v1/org/%s/project" % org, json=body)
    assert r.status_code == 200, r.text
    return body["name"], r.json()


def test_create_defaults_and_get_v1_v2(admin):
    org = make_org(admin)
    name, res = make_project(admin, org, description="builds things")
    assert res["ok"] is True and res["result"] == "CREATED" and len(res["id"]) == 36
    p1 = admin.get("/api/v1/org/%s/project/%s" % (org, name))
    p2 = admin.get("/api/v2/org/%s/project/%s" % (org, name))
    assert p1.status_code == 200 and p2.status_code == 200 and p1.json() == p2.json()
    p = p1.json()
    assert p["id"] == res["id"] and p["name"] == name and p["orgName"] == org
    assert p["orgId"] == admin.get("/api/v1/org/" + org).json()["id"]
    assert p["visibility"] == "PUBLIC" and p["rawPayloadMode"] == "DISABLED" and p["acceptsRawPayload"] is False
    assert p["description"] == "builds things"
    assert p["owner"] == {"id": admin.user_id, "username": "admin"}
    assert p["createdAt"].endswith("Z") and len(p["createdAt"]) == 24


def test_raw_payload_modes(admin):
    org = make_org(admin)
    for mode in ["DISABLED", "OWNERS", "TEAM_MEMBERS", "ORG_MEMBERS", "EVERYONE"]:
        name, _ = make_project(admin, org, rawPayloadMode=mode)
        p = admin.get("/api/v1/org/%s/project/%s" % (org, name)).json()
        assert p["rawPayloadMode"] == mode and p["acceptsRawPayload"] == (mode != "DISABLED")
    name, _ = make_project(admin, org, acceptsRawPayload=True)
    assert admin.get("/api/v1/org/%s/project/%s" % (org, name)).json()["rawPayloadMode"] == "ORG_MEMBERS"
    r = admin.post("/api/v1/org/%s/project" % org, json={"name": name, "acceptsRawPayload": False})
    assert r.status_code == 200
    assert admin.get("/api/v1/org/%s/project/%s" % (org, name)).json()["rawPayloadMode"] == "DISABLED"


def test_update_keeps_omitted_fields(admin):
    org = make_org(admin)
    name, res = make_project(admin, org, description="d1", visibility="PRIVATE", rawPayloadMode="OWNERS",
                             meta={"m": 1}, cfg={"c": 1})
    r = admin.post("/api/v1/org/%s/project" % org, json={"name": name, "description": "d2"})
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "UPDATED", "id": res["id"]}
    p = admin.get("/api/v1/org/%s/project/%s" % (org, name)).json()
    assert (p["description"], p["visibility"], p["rawPayloadMode"]) == ("d2", "PRIVATE", "OWNERS")
    assert p["meta"] == {"m": 1} and p["cfg"] == {"c": 1}
    r = admin.post("/api/v1/org/%s/project" % org, json={"name": name, "cfg": {"c": 2}, "visibility": "PUBLIC"})
    assert r.status_code == 200
    p = admin.get("/api/v1/org/%s/project/%s" % (org, name)).json()
    assert p["cfg"] == {"c": 2} and p["visibility"] == "PUBLIC" and p["meta"] == {"m": 1}


def test_rename_by_id_and_conflict(admin):
    org = make_org(admin)
    a, res_a = make_project(admin, org)
    b, _ = make_project(admin, org)
    new = unique("proj")
    r = admin.post("/api/v1/org/%s/project" % org, json={"id": res_a["id"], "name": new})
    assert r.status_code == 200 and r.json()["result"] == "UPDATED"
    assert admin.get("/api/v1/org/%s/project/%s" % (org, a)).status_code == 404
    assert admin.get("/api/v1/org/%s/project/%s" % (org, new)).json()["id"] == res_a["id"]
    r = admin.post("/api/v1/org/%s/project" % org, json={"id": res_a["id"], "name": b})
    assert r.status_code == 409 and b in r.json()["message"]
    # an id from another org is unknown here
    other = make_org(admin)
    assert admin.post("/api/v1/org/%s/project" % other, json={"id": res_a["id"]}).status_code == 404
    assert admin.post("/api/v1/org/%s/project" % org, json={"id": str(uuid.uuid4())}).status_code == 404


def test_bad_input(admin):
    org = make_org(admin)
    cases = [
        ({}, "'name' is required"),
        ({"description": "x"}, "'name' is required"),
        ({"name": "p"}, "'p'"),
        ({"name": "no spaces"}, "no spaces"),
        ({"name": ["x"]}, "name"),
        ({"name": unique("proj"), "visibility": "OPEN"}, "visibility"),
        ({"name": unique("proj"), "rawPayloadMode": "ALWAYS"}, "rawPayloadMode"),
        ({"name": unique("proj"), "acceptsRawPayload": "yes"}, "acceptsRawPayload"),
        ({"name": unique("proj"), "description": "d" * 1025}, "description"),
        ({"name": unique("proj"), "meta": "x"}, "meta"),
        ({"name": unique("proj"), "cfg": [1]}, "cfg"),
        ({"id": "no-uuid"}, "id"),
    ]
    for body, word in cases:
        r = admin.post("/api/v1/org/%s/project" % org, json=body)
        assert r.status_code == 400, (body, r.text)
        assert r.json()["ok"] is False and word in r.json()["message"], (body, r.text)
    assert admin.post("/api/v1/org/%s/project" % org, json=[]).status_code == 400
    assert admin.post("/api/v1/org/%s/project" % org, data="x", headers={"Content-Type": "text/plain"}).status_code == 415
    assert admin.get("/api/v1/org/%s/project" % org).json() == []


def test_unknown_org_or_project_is_404(admin):
    org = make_org(admin)
    for method, path in [
        ("POST", "/api/v1/org/no-such-org-p/project"),
        ("GET", "/api/v1/org/no-such-org-p/project"),
        ("GET", "/api/v1/org/no-such-org-p/project/x1x"),
        ("GET", "/api/v1/org/%s/project/no-such-proj" % org),
        ("GET", "/api/v2/org/%s/project/no-such-proj" % org),
        ("DELETE", "/api/v1/org/%s/project/no-such-proj" % org),
        ("GET", "/api/v1/org/%s/project/no-such-proj/access" % org),
        ("POST", "/api/v1/org/%s/project/no-such-proj/access" % org),
        ("POST", "/api/v1/org/%s/project/no-such-proj/access/bulk" % org),
    ]:
        r = admin.req(method, path, json={"name": "abc"})
        assert r.status_code == 404, (method, path, r.text)
        assert "no-such" in r.json()["message"]


def test_list_filter_and_paging(admin):
    org = make_org(admin)
    names = sorted("svc-%d" % i for i in range(5))
    for n in names + ["other"]:
        make_project(admin, org, name=n)
    got = admin.get("/api/v1/org/%s/project" % org, params={"filter": "SVC"}).json()
    assert [p["name"] for p in got] == names
    page = admin.get("/api/v1/org/%s/project" % org, params={"filter": "svc", "limit": 2, "offset": 2}).json()
    assert [p["name"] for p in page] == names[2:4]
    assert len(admin.get("/api/v1/org/%s/project" % org).json()) == 6
    assert admin.get("/api/v1/org/%s/project" % org, params={"limit": "x"}).status_code == 400


def test_delete(admin):
    org = make_org(admin)
    name, _ = make_project(admin, org)
    r = admin.delete("/api/v1/org/%s/project/%s" % (org, name))
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "DELETED"}
    assert admin.get("/api/v1/org/%s/project/%s" % (org, name)).status_code == 404
    # the name is free again, and the old rules did not survive
    make_project(admin, org, name=name)
    assert admin.get("/api/v1/org/%s/project/%s/access" % (org, name)).json() == []


def test_access_rules(admin):
    org = make_org(admin)
    name, _ = make_project(admin, org)
    t1 = admin.post("/api/v1/org/%s/team" % org, json={"name": "alpha"}).json()["id"]
    t2 = admin.post("/api/v1/org/%s/team" % org, json={"name": "beta"}).json()["id"]
    base = "/api/v1/org/%s/project/%s/access" % (org, name)
    assert admin.get(base).json() == []
    r = admin.post(base, json={"teamId": t1, "level": "READER"})
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "UPDATED"}
    r = admin.post(base, json={"orgName": org, "teamName": "beta", "level": "WRITER"})
    assert r.status_code == 200
    assert admin.get(base).json() == [
        {"teamId": t1, "orgName": org, "teamName": "alpha", "level": "READER"},
        {"teamId": t2, "orgName": org, "teamName": "beta", "level": "WRITER"},
    ]
    # posting again changes the level
    assert admin.post(base, json={"teamName": "alpha", "level": "OWNER"}).status_code == 200
    assert [r["level"] for r in admin.get(base).json()] == ["OWNER", "WRITER"]
    # bulk replaces everything
    r = admin.post(base + "/bulk", json=[{"teamName": "beta", "level": "READER"}])
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "UPDATED"}
    assert admin.get(base).json() == [{"teamId": t2, "orgName": org, "teamName": "beta", "level": "READER"}]
    # [] clears
    assert admin.post(base + "/bulk", json=[]).status_code == 200
    assert admin.get(base).json() == []


def test_access_rule_errors_change_nothing(admin):
    org = make_org(admin)
    other = make_org(admin)
    name, _ = make_project(admin, org)
    foreign = admin.post("/api/v1/org/%s/team" % other, json={"name": "outside"}).json()["id"]
    base = "/api/v1/org/%s/project/%s/access" % (org, name)
    assert admin.post(base, json={"teamName": "default", "level": "READER"}).status_code == 200
    before = admin.get(base).json()
    cases = [
        ({"teamName": "default"}, "level"),
        ({"teamName": "default", "level": "ADMIN"}, "ADMIN"),
        ({"teamName": "ghost-team", "level": "READER"}, "ghost-team"),
        ({"teamId": str(uuid.uuid4()), "level": "READER"}, "Team not found"),
        ({"teamId": "x", "level": "READER"}, "teamId"),
        ({"level": "READER"}, "teamName"),
        ({"teamId": foreign, "level": "READER"}, "another organization"),
        ({"orgName": other, "teamName": "outside", "level": "READER"}, "orgName"),
    ]
    for body, word in cases:
        r = admin.post(base, json=body)
        assert r.status_code == 400, (body, r.text)
        assert word in r.json()["message"], (body, r.text)
        r = admin.post(base + "/bulk", json=[{"teamName": "default", "level": "OWNER"}, body])
        assert r.status_code == 400, (body, r.text)
        assert "access rule 2" in r.json()["message"], r.text
    assert admin.post(base, json=[{"teamName": "default", "level": "READER"}]).status_code == 400
    assert admin.post(base + "/bulk", json={"teamName": "default", "level": "READER"}).status_code == 400
    assert admin.post(base + "/bulk", json=["default"]).status_code == 400
    assert admin.get(base).json() == before


def test_owner_transfer(admin, new_user):
    org = make_org(admin)
    alice, bob = new_user(), new_user()
    # an owner must belong to the org (issue 15 part 11): both are members of a team
    assert admin.post("/api/v1/org/%s/team" % org, json={"name": "staff"}).status_code == 200
    r = admin.put("/api/v1/org/%s/team/staff/users" % org,
                  json=[{"username": u.username, "role": "MEMBER"} for u in (alice, bob)])
    assert r.status_code == 200, r.text
    name, _ = make_project(admin, org, visibility="PRIVATE", owner={"username": alice.username})
    p = admin.get("/api/v1/org/%s/project/%s" % (org, name)).json()
    assert p["owner"] == {"id": alice.user_id, "username": alice.username}
    assert alice.get("/api/v1/org/%s/project/%s" % (org, name)).status_code == 200
    r = alice.post("/api/v1/org/%s/project" % org, json={"name": name, "owner": {"id": bob.user_id}})
    assert r.status_code == 200, r.text
    assert admin.get("/api/v1/org/%s/project/%s" % (org, name)).json()["owner"]["id"] == bob.user_id
    assert alice.get("/api/v1/org/%s/project/%s" % (org, name)).status_code == 403
    assert bob.delete("/api/v1/org/%s/project/%s" % (org, name)).status_code == 200
    for owner, word in [({"username": "ghost-owner-p"}, "ghost-owner-p"), ({}, "owner"), ({"id": "x"}, "owner"),
                        ("alice", "owner")]:
        r = admin.post("/api/v1/org/%s/project" % org, json={"name": unique("proj"), "owner": owner})
        assert r.status_code == 400 and word in r.json()["message"], (owner, r.text)
