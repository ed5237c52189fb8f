"""Teams and team members: /api/v1/org/{org}/team[/{team}[/users]] (issue 2 part 7)."""
import uuid

from conftest import unique


def make_org(admin):
    name = unique("org")
    assert admin.post("/api/v1/org", json={"name": name}).status_code == 200
    return name


def make_team(client, org, name=None, **fields):
    body = {"name": name or unique("team")}
    body.update(fields)
    r = client.post("/api/v1/org/%s/team" % org, json=body)
    assert r.status_code == 200, r.text
    return body["name"], r.json()


def members(client, org, team):
    r = client.get("/api/v1/org/%s/team/%s/users" % (org, team))
    assert r.status_code == 200, r.text
    return {u["username"]: u["role"] for u in r.json()}


def test_create_get_list(admin):
    org = make_org(admin)
    name, res = make_team(admin, org, description="the builders")
    assert res["ok"] is True and res["result"] == "CREATED" and len(res["id"]) == 36
    t = admin.get("/api/v1/org/%s/team/%s" % (org, name)).json()
    org_id = admin.get("/api/v1/org/" + org).json()["id"]
    assert t == {"id": res["id"], "orgId": org_id, "orgName": org, "name": name, "description": "the builders",
                 "yourRole": "OWNER"}  # Accord's own: the role by which the caller manages it
    listed = admin.get("/api/v1/org/%s/team" % org).json()
    assert [x["name"] for x in listed] == sorted(["default", name])
    # the creator becomes MAINTAINER of the new team
    assert members(admin, org, name) == {"admin": "MAINTAINER"}


def test_update_by_name_and_rename_by_id(admin):
    org = make_org(admin)
    name, res = make_team(admin, org, description="one")
    r = admin.post("/api/v1/org/%s/team" % org, json={"name": name, "description": "two"})
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "UPDATED", "id": res["id"]}
    assert admin.get("/api/v1/org/%s/team/%s" % (org, name)).json()["description"] == "two"
    new = unique("team")
    r = admin.post("/api/v1/org/%s/team" % org, json={"id": res["id"], "name": new})
    assert r.status_code == 200 and r.json()["result"] == "UPDATED"
    assert admin.get("/api/v1/org/%s/team/%s" % (org, name)).status_code == 404
    t = admin.get("/api/v1/org/%s/team/%s" % (org, new)).json()
    assert t["id"] == res["id"] and t["description"] == "two"
    r = admin.post("/api/v1/org/%s/team" % org, json={"id": res["id"], "name": "default"})
    assert r.status_code == 409 and "default" in r.json()["message"]


def test_team_id_of_another_org_is_404(admin):
    a, b = make_org(admin), make_org(admin)
    _, res = make_team(admin, a)
    r = admin.post("/api/v1/org/%s/team" % b, json={"id": res["id"], "description": "x"})
    assert r.status_code == 404


def test_same_team_name_in_two_orgs(admin):
    a, b = make_org(admin), make_org(admin)
    _, r1 = make_team(admin, a, "shared")
    _, r2 = make_team(admin, b, "shared")
    assert r1["id"] != r2["id"]


def test_bad_input(admin):
    org = make_org(admin)
    cases = [
        ({}, "name"),
        ({"name": "ab"}, "ab"),
        ({"name": "a/b/c"}, "a/b/c"),
        ({"name": 7}, "name"),
        ({"name": unique("team"), "description": "d" * 1025}, "description"),
        ({"name": unique("team"), "description": 5}, "description"),
        ({"id": "zzz"}, "id"),
    ]
    for body, word in cases:
        r = admin.post("/api/v1/org/%s/team" % org, json=body)
        assert r.status_code == 400, (body, r.text)
        assert word in r.json()["message"], (body, r.text)
    assert admin.post("/api/v1/org/%s/team" % org, json={"id": str(uuid.uuid4())}).status_code == 404
    assert [t["name"] for t in admin.get("/api/v1/org/%s/team" % org).json()] == ["default"]


def test_unknown_org_or_team_is_404(admin):
    org = make_org(admin)
    for method, path in [
        ("POST", "/api/v1/org/no-such-org-t/team"),
        ("GET", "/api/v1/org/no-such-org-t/team"),
        ("GET", "/api/v1/org/no-such-org-t/team/default"),
        ("GET", "/api/v1/org/%s/team/no-such-team" % org),
        ("DELETE", "/api/v1/org/%s/team/no-such-team" % org),
        ("GET", "/api/v1/org/%s/team/no-such-team/users" % org),
        ("PUT", "/api/v1/org/%s/team/no-such-team/users" % org),
        ("DELETE", "/api/v1/org/%s/team/no-such-team/users" % org),
    ]:
        r = admin.req(method, path, json=[{"username": "admin"}] if method == "PUT" else {"name": "xyz"})
        assert r.status_code == 404, (method, path, r.text)
        assert "no-such" in r.json()["message"]


def test_delete(admin):
    org = make_org(admin)
    name, _ = make_team(admin, org)
    r = admin.delete("/api/v1/org/%s/team/%s" % (org, name))
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "DELETED"}
    assert admin.get("/api/v1/org/%s/team/%s" % (org, name)).status_code == 404
    assert admin.delete("/api/v1/org/%s/team/%s" % (org, name)).status_code == 404


def test_add_change_and_list_members(admin, new_user):
    org = make_org(admin)
    team, _ = make_team(admin, org)
    a, b, c = new_user(), new_user(), new_user()
    path = "/api/v1/org/%s/team/%s/users" % (org, team)
    r = admin.put(path, json=[{"username": a.username}, {"userId": b.user_id, "role": "MAINTAINER"}])
    assert r.status_code == 200 and r.json() == {"ok": True}
    assert members(admin, org, team) == {"admin": "MAINTAINER", a.username: "MEMBER", b.username: "MAINTAINER"}
    listed = admin.get(path).json()
    entry = [u for u in listed if u["username"] == a.username][0]
    assert entry["userId"] == a.user_id and entry["role"] == "MEMBER" and entry["userType"] == "LOCAL"
    # replace=false adds and changes, keeps the rest
    assert admin.put(path, json=[{"username": a.username, "role": "OWNER"}, {"username": c.username}]).status_code == 200
    assert members(admin, org, team) == {"admin": "MAINTAINER", a.username: "OWNER", b.username: "MAINTAINER",
                                         c.username: "MEMBER"}
    # replace=true makes the list exactly the body
    assert admin.put(path, params={"replace": "true"}, json=[{"username": b.username}]).status_code == 200
    assert members(admin, org, team) == {b.username: "MEMBER"}
    # replace=true with [] empties the team
    assert admin.put(path, params={"replace": "true"}, json=[]).status_code == 200
    assert members(admin, org, team) == {}


def test_member_input_errors_change_nothing(admin, new_user):
    org = make_org(admin)
    team, _ = make_team(admin, org)
    a = new_user()
    path = "/api/v1/org/%s/team/%s/users" % (org, team)
    cases = [
        ([], "Empty user list"),
        ([{"username": a.username}, {"username": "ghost-user-zz"}], "ghost-user-zz"),
        ([{"userId": str(uuid.uuid4())}], "User not found"),
        ([{"userId": "bad"}], "userId"),
        ([{"username": a.username, "role": "BOSS"}], "BOSS"),
        ([{"role": "MEMBER"}], "username"),
        (["just-a-name"], "object"),
        ({"username": a.username}, "array"),
    ]
    for body, word in cases:
        r = admin.put(path, json=body)
        assert r.status_code == 400, (body, r.text)
        assert word in r.json()["message"], (body, r.text)
    assert members(admin, org, team) == {"admin": "MAINTAINER"}


def test_remove_members(admin, new_user):
    org = make_org(admin)
    team, _ = make_team(admin, org)
    a, b = new_user(), new_user()
    path = "/api/v1/org/%s/team/%s/users" % (org, team)
    assert admin.put(path, json=[{"username": a.username}, {"username": b.username}]).status_code == 200
    r = admin.delete(path, json=[a.username])
    assert r.status_code == 200 and r.json() == {"ok": True}
    assert members(admin, org, team) == {"admin": "MAINTAINER", b.username: "MEMBER"}
    # removing someone not in the team is fine; unknown users and bad bodies are not
    assert admin.delete(path, json=[a.username]).status_code == 200
    r = admin.delete(path, json=[b.username, "ghost-user-yy"])
    assert r.status_code == 400 and "ghost-user-yy" in r.json()["message"]
    assert admin.delete(path, json=[]).status_code == 400
    assert admin.delete(path, json=[{"username": b.username}]).status_code == 400
    assert admin.delete(path, json={"x": 1}).status_code == 400
    assert members(admin, org, team) == {"admin": "MAINTAINER", b.username: "MEMBER"}


def test_deleting_team_removes_its_access(admin, new_user):
    org = make_org(admin)
    team, _ = make_team(admin, org)
    user = new_user()
    assert admin.put("/api/v1/org/%s/team/%s/users" % (org, team), json=[{"username": user.username}]).status_code == 200
    assert admin.post("/api/v1/org/%s/project" % org, json={"name": "proj", "visibility": "PRIVATE"}).status_code == 200
    r = admin.post("/api/v1/org/%s/project/proj/access" % org, json={"teamName": team, "level": "READER"})
    assert r.status_code == 200
    assert user.get("/api/v1/org/%s/project/proj" % org).status_code == 200
    assert admin.delete("/api/v1/org/%s/team/%s" % (org, team)).status_code == 200
    assert user.get("/api/v1/org/%s/project/proj" % org).status_code == 403
    assert admin.get("/api/v1/org/%s/project/proj/access" % org).json() == []


def test_deleted_user_leaves_team(admin, new_user):
    org = make_org(admin)
    team, _ = make_team(admin, org)
    user = new_user()
    assert admin.put("/api/v1/org/%s/team/%s/users" % (org, team), json=[{"username": user.username}]).status_code == 200
    assert admin.delete("/api/v1/user/" + user.user_id).status_code == 200
    assert user.username not in members(admin, org, team)
