"""Roles and permissions (issue 30 part 3, docs/security.md "Roles and permissions"):
Concord's roles API, its permissions given to users through roles (and taken away again),
the built-in roles, and the users' side (roles of a user, enable, v2 lookups)."""
import pytest

from conftest import process_log, start_process, unique, wait_process


def role(admin, name, permissions=None):
    body = {"name": name}
    if permissions is not None:
        body["permissions"] = permissions
    r = admin.post("/api/v1/role", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def give(admin, user, *roles):
    r = admin.put("/api/v1/user/%s/roles" % user.username, json={"roles": list(roles)})
    assert r.status_code == 200, r.text


def test_role_crud(admin):
    name = unique("role")
    created = role(admin, name, ["createOrg", "getProcessQueueAllOrgs"])
    assert created["result"] == "CREATED" and created["ok"] is True
    got = admin.get("/api/v1/role/" + name).json()
    assert got["id"] == created["id"] and got["name"] == name
    assert sorted(got["permissions"]) == ["createOrg", "getProcessQueueAllOrgs"]
    assert got["builtin"] is False

    # By name: an update; permissions omitted keep theirs, given ones replace them.
    assert role(admin, name)["result"] == "UPDATED"
    assert len(admin.get("/api/v1/role/" + name).json()["permissions"]) == 2
    updated = role(admin, name, ["updateOrg"])
    assert updated == {"ok": True, "result": "UPDATED", "id": created["id"]}
    assert admin.get("/api/v1/role/" + name).json()["permissions"] == ["updateOrg"]

    # By id: a rename.
    renamed = unique("role")
    r = admin.post("/api/v1/role", json={"id": created["id"], "name": renamed})
    assert r.status_code == 200 and r.json()["result"] == "UPDATED", r.text
    assert admin.get("/api/v1/role/" + name).status_code == 404
    names = [x["name"] for x in admin.get("/api/v1/role").json()]
    assert renamed in names and name not in names
    assert {"concordAdmin", "concordSystemReader", "concordSystemWriter"} <= set(names)

    r = admin.delete("/api/v1/role/" + renamed)
    assert r.status_code == 200 and r.json()["result"] == "DELETED", r.text
    r = admin.get("/api/v1/role/" + renamed)
    assert r.status_code == 404 and r.json()["message"] == "Role not found: " + renamed
    assert admin.delete("/api/v1/role/" + renamed).status_code == 404


def test_builtin_roles_are_listed_and_cannot_be_deleted_or_renamed(admin):
    roles = {x["name"]: x for x in admin.get("/api/v1/role").json()}
    assert roles["concordAdmin"]["builtin"] is True
    assert sorted(roles["concordAdmin"]["permissions"]) == ["apiKeySpecifyValue", "createOrg", "updateOrg"]
    assert roles["concordSystemReader"]["id"] == "21d646b2-6a9c-11e8-acce-d37cf888abd9"  # Concord's ids
    assert roles["concordSystemWriter"]["id"] == "c162d868-89ea-11e8-80be-97fd8a9f7419"
    for name in ("concordAdmin", "concordSystemReader", "concordSystemWriter"):
        r = admin.delete("/api/v1/role/" + name)
        assert r.status_code == 400, r.text
        assert r.json()["message"] == "The built-in role %s cannot be deleted" % name
    r = admin.post("/api/v1/role", json={"id": roles["concordSystemReader"]["id"], "name": unique("x")})
    assert r.status_code == 400 and "cannot be renamed" in r.json()["message"], r.text
    assert admin.get("/api/v1/role/concordSystemReader").status_code == 200


@pytest.mark.parametrize("body, says", [
    ({"name": "r", "permissions": ["createOrg", "beGod"]}, "Unknown permission: 'beGod'"),
    ({"name": "r", "permissions": "createOrg"}, "permissions"),
    ({"name": "r", "permissions": [1]}, "'permissions' must be an array of permission names"),
    ({"permissions": []}, "name"),
    ({"name": "bad name!"}, "role"),
    ({"name": "x" * 200}, "role"),
    ({"id": "not-a-uuid", "name": "r"}, "'id'"),
])
def test_bad_roles_are_400_and_store_nothing(admin, body, says):
    if "name" in body and body["name"] == "r":
        body = dict(body, name=unique("role"))
    before = admin.get("/api/v1/role").json()
    r = admin.post("/api/v1/role", json=body)
    assert r.status_code == 400, r.text
    assert r.json()["ok"] is False and says in r.json()["message"]
    assert admin.get("/api/v1/role").json() == before


def test_unknown_role_id_is_404(admin):
    r = admin.post("/api/v1/role", json={"id": "8d1a4c3e-0000-4000-8000-000000000000", "name": unique("r")})
    assert r.status_code == 404, r.text


def test_roles_api_is_for_admins_only(admin, new_user):
    user = new_user()
    name = unique("role")
    role(admin, name, [])
    for method, path, body in [("post", "/api/v1/role", {"name": unique("r")}), ("get", "/api/v1/role", None),
                               ("get", "/api/v1/role/" + name, None), ("delete", "/api/v1/role/" + name, None),
                               ("put", "/api/v1/role/%s/ldapGroups" % name, ["cn=x"]),
                               ("get", "/api/v1/role/%s/ldapGroups" % name, None)]:
        r = getattr(user, method)(path, json=body) if body is not None else getattr(user, method)(path)
        assert r.status_code == 403, (method, path, r.text)
        assert r.json()["message"].startswith("Only admins can do that")
    assert admin.get("/api/v1/role/" + name).status_code == 200


def test_role_ldap_groups(admin):
    name = unique("role")
    role(admin, name, ["createOrg"])
    path = "/api/v1/role/%s/ldapGroups" % name
    assert admin.get(path).json() == []
    r = admin.put(path, json=[])
    assert r.status_code == 400 and r.json()["message"] == "Empty LDAP group list"
    assert admin.put(path, json=["cn=b,dc=example", "cn=a,dc=example"]).json()["result"] == "UPDATED"
    assert admin.put(path, json=["CN=A,dc=example"]).status_code == 200  # the same group: no change
    assert admin.get(path).json() == ["cn=a,dc=example", "cn=b,dc=example"]
    assert admin.put(path + "?replace=true", json=["cn=c,dc=example"]).status_code == 200
    assert admin.get(path).json() == ["cn=c,dc=example"]
    for bad in (["cn=x\n"], [""], [1], {"a": 1}):
        assert admin.put(path + "?replace=true", json=bad).status_code == 400
    assert admin.get(path).json() == ["cn=c,dc=example"]
    assert admin.put(path + "?replace=true", json=[]).status_code == 200
    assert admin.get(path).json() == []
    assert admin.get("/api/v1/role/%s/ldapGroups" % unique("nope")).status_code == 404


def test_create_org_permission(admin, new_user):
    user, name = new_user(), unique("role")
    r = user.post("/api/v1/org", json={"name": unique("org")})
    assert r.status_code == 403
    assert r.json()["message"] == "Only roles with 'createOrg' permission are allowed to update organizations"

    role(admin, name, ["createOrg"])
    give(admin, user, name)
    org = unique("org")
    r = user.post("/api/v1/org", json={"name": org})
    assert r.status_code == 200 and r.json()["result"] == "CREATED", r.text
    # The creator owns it, as Concord's: a member of its team as OWNER.
    assert user.post("/api/v1/org/%s/team" % org, json={"name": unique("team")}).status_code == 200

    role(admin, name, [])  # the permission removed from the role
    assert user.post("/api/v1/org", json={"name": unique("org")}).status_code == 403
    role(admin, name, ["createOrg"])
    assert user.post("/api/v1/org", json={"name": unique("org")}).status_code == 200
    give(admin, user)  # the role taken from the user
    assert user.post("/api/v1/org", json={"name": unique("org")}).status_code == 403


def test_update_org_permission(admin, new_user):
    user, name, org = new_user(), unique("role"), unique("org")
    assert admin.post("/api/v1/org", json={"name": org}).status_code == 200
    body = {"name": org, "meta": {"k": "v"}}
    r = user.post("/api/v1/org", json=body)
    assert r.status_code == 403
    assert r.json()["message"] == "Only roles with 'updateOrg' permission are allowed to update organizations"

    role(admin, name, ["updateOrg"])
    give(admin, user, name)
    r = user.post("/api/v1/org", json=body)
    assert r.status_code == 200 and r.json()["result"] == "UPDATED", r.text
    assert admin.get("/api/v1/org/" + org).json()["meta"] == {"k": "v"}
    # updateOrg is no createOrg.
    assert user.post("/api/v1/org", json={"name": unique("org")}).status_code == 403

    assert admin.delete("/api/v1/role/" + name).status_code == 200  # deleting the role takes it away
    assert user.post("/api/v1/org", json=body).status_code == 403


def visible(client, instance_id):
    r = client.get("/api/v2/process?limit=1000")
    assert r.status_code == 200, r.text
    return instance_id in [p["instanceId"] for p in r.json()]


def test_get_process_queue_all_orgs_permission(admin, new_user):
    user, name = new_user(), unique("role")
    pid = start_process(admin, "flows:\n  default:\n    - log: hi\n")
    wait_process(admin, pid)
    assert not visible(user, pid)

    role(admin, name, ["getProcessQueueAllOrgs"])
    give(admin, user, name)
    assert visible(user, pid)

    role(admin, name, [])
    assert not visible(user, pid)


def test_api_key_specify_value_permission(admin, new_user):
    import base64
    import os

    user, name = new_user(), unique("role")
    value = base64.b64encode(os.urandom(24)).decode()
    r = user.post("/api/v1/apikey", json={"username": user.username, "key": value})
    assert r.status_code == 403 and "apiKeySpecifyValue" in r.json()["message"], r.text

    role(admin, name, ["apiKeySpecifyValue"])
    give(admin, user, name)
    r = user.post("/api/v1/apikey", json={"username": user.username, "key": value})
    assert r.status_code == 200, r.text
    assert r.json()["key"] == value

    give(admin, user)
    other = base64.b64encode(os.urandom(24)).decode()
    assert user.post("/api/v1/apikey", json={"username": user.username, "key": other}).status_code == 403


def test_api_key_specify_value_permission_in_the_concord_task(admin, new_user):
    import base64
    import os

    user, name = new_user(), unique("role")
    flow = """
flows:
  default:
    - task: concord
      in:
        action: createApiKey
        username: %s
        name: %s
        key: %s
"""

    def run(key_name):
        pid = start_process(user, flow % (user.username, key_name, base64.b64encode(os.urandom(24)).decode()))
        p = wait_process(user, pid)
        return p["status"], process_log(user, pid)

    status, log = run(unique("k"))
    assert status == "FAILED" and "'apiKeySpecifyValue' permission" in log, log
    role(admin, name, ["apiKeySpecifyValue"])
    give(admin, user, name)
    key_name = unique("k")
    status, log = run(key_name)
    assert status == "FINISHED", log
    assert key_name in [k["name"] for k in user.get("/api/v1/apikey").json()]


def test_agent_websocket_is_accepted_and_stored(admin):
    name = unique("role")
    role(admin, name, ["agentWebsocket"])
    assert admin.get("/api/v1/role/" + name).json()["permissions"] == ["agentWebsocket"]


def test_roles_of_a_user(admin, new_user):
    user, name = new_user(), unique("role")
    role(admin, name, ["createOrg"])
    give(admin, user, "concordSystemReader", name)
    r = admin.get("/api/v1/user/%s/roles" % user.username)
    assert r.json() == {"username": user.username, "roles": ["concordSystemReader", name]}
    entry = admin.get("/api/v1/user/" + user.username).json()
    held = {x["name"]: x for x in entry["roles"]}
    assert set(held) == {"concordSystemReader", name}
    assert held[name]["permissions"] == ["createOrg"] and held[name]["id"]

    # An unknown role is refused and changes nothing.
    r = admin.put("/api/v1/user/%s/roles" % user.username, json={"roles": [name, unique("nope")]})
    assert r.status_code == 400 and "unknown role" in r.json()["message"], r.text
    r = admin.post("/api/v1/user", json={"username": user.username, "roles": [unique("nope")]})
    assert r.status_code == 400, r.text
    assert admin.get("/api/v1/user/%s/roles" % user.username).json()["roles"] == ["concordSystemReader", name]

    # POST /api/v1/user sets them too; a deleted role leaves its users.
    r = admin.post("/api/v1/user", json={"username": user.username, "roles": [name]})
    assert r.status_code == 200, r.text
    assert admin.get("/api/v1/user/%s/roles" % user.username).json()["roles"] == [name]
    assert admin.delete("/api/v1/role/" + name).status_code == 200
    assert admin.get("/api/v1/user/%s/roles" % user.username).json()["roles"] == []


def test_disable_and_enable(admin, new_user):
    user = new_user()
    assert user.get("/api/v1/apikey").status_code == 200
    r = admin.put("/api/v1/user/%s/disable" % user.user_id)
    assert r.status_code == 200 and r.json()["disabled"] is True, r.text
    assert user.get("/api/v1/apikey").status_code == 401
    assert user.username not in [u["name"] for u in admin.get("/api/v2/user?filter=%s" % user.username).json()]
    r = admin.put("/api/v1/user/%s/enable" % user.user_id)
    assert r.status_code == 200 and r.json()["disabled"] is False, r.text
    assert user.get("/api/v1/apikey").status_code == 200
    assert user.username in [u["name"] for u in admin.get("/api/v2/user?filter=%s" % user.username).json()]
    assert user.put("/api/v1/user/%s/enable" % user.user_id).status_code == 403
    assert admin.put("/api/v1/user/8d1a4c3e-0000-4000-8000-000000000000/enable").status_code == 404


def test_v2_user_by_id(admin, new_user):
    user, other = new_user(), new_user()
    admin.post("/api/v1/user", json={"username": user.username, "email": "u@example.org"})
    full = admin.get("/api/v2/user/" + user.user_id).json()
    assert full["id"] == user.user_id and full["name"] == user.username and full["email"] == "u@example.org"
    assert user.get("/api/v2/user/" + user.user_id).json()["email"] == "u@example.org"  # itself
    seen = other.get("/api/v2/user/" + user.user_id).json()
    assert seen["name"] == user.username and "email" not in seen and "roles" not in seen
    assert admin.get("/api/v2/user/8d1a4c3e-0000-4000-8000-000000000000").status_code == 404
    assert admin.get("/api/v2/user/nope").status_code == 404


def test_v2_users_list_every_role_held_custom_ones_included(admin, new_user):
    user, name = new_user(), unique("role")
    role(admin, name, ["createOrg"])
    give(admin, user, "concordSystemWriter", name)
    want = {"concordSystemWriter": [], name: ["createOrg"]}

    def held(entry):
        assert all(x["id"] for x in entry["roles"])
        return {x["name"]: sorted(x["permissions"]) for x in entry["roles"]}

    assert held(admin.get("/api/v2/user/" + user.user_id).json()) == want
    assert held(user.get("/api/v2/user/" + user.user_id).json()) == want  # itself
    listed = [u for u in admin.get("/api/v2/user?filter=" + user.username).json() if u["id"] == user.user_id]
    assert len(listed) == 1 and held(listed[0]) == want
    r = admin.put("/api/v1/user/%s/disable" % user.user_id)
    assert r.status_code == 200 and held(r.json()) == want, r.text
    # Roles taken away are gone from the entries too.
    give(admin, user)
    assert held(admin.get("/api/v2/user/" + user.user_id).json()) == {}
