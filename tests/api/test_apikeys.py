"""API keys: POST/GET/DELETE /api/v1/apikey, as the spec's table and issue 2 describe."""
import base64
import time

from conftest import ADMIN_KEY, Client, unique


def test_create_returns_key_once_and_it_works(admin, new_user, server):
    user = new_user()
    r = user.post("/api/v1/apikey", json={"username": user.username})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is True and body["result"] == "CREATED"
    assert len(body["id"]) == 36 and body["key"]
    assert base64.b64decode(body["key"] + "=" * (-len(body["key"]) % 4))
    # the new key authenticates, raw and as Bearer
    assert Client(server.url, body["key"]).get("/api/v1/apikey").status_code == 200
    assert Client(server.url, "Bearer " + body["key"]).get("/api/v1/apikey").status_code == 200
    # listings never carry key values
    listed = user.get("/api/v1/apikey").json()
    assert all(set(k) <= {"id", "userId", "name", "expiredAt"} for k in listed)
    assert body["key"] not in user.get("/api/v1/apikey").text


def test_list_shape_sorted_by_name(new_user):
    user = new_user()
    for name in ["zeta-key", "alpha-key"]:
        assert user.post("/api/v1/apikey", json={"username": user.username, "name": name}).status_code == 200
    keys = user.get("/api/v1/apikey").json()
    names = [k["name"] for k in keys]
    assert names == sorted(names)
    assert {"alpha-key", "zeta-key"} <= set(names)
    for k in keys:
        assert k["userId"] == user.user_id


def test_unnamed_keys_get_smallest_free_number(new_user):
    user = new_user()  # has key#1 from the fixture
    def create():
        r = user.post("/api/v1/apikey", json={"username": user.username})
        assert r.status_code == 200, r.text
        return r.json()
    assert user.get("/api/v1/apikey").json()[0]["name"] == "key#1"
    k2 = create()
    k3 = create()
    assert (k2["name"], k3["name"]) == ("key#2", "key#3")
    assert user.delete("/api/v1/apikey/" + k2["id"]).status_code == 200
    assert create()["name"] == "key#2"  # reuses the gap, never collides
    assert create()["name"] == "key#4"


def test_delete_stops_key_at_once(new_user, server):
    user = new_user()
    r = user.post("/api/v1/apikey", json={"username": user.username, "name": "temp-key"}).json()
    other = Client(server.url, r["key"])
    assert other.get("/api/v1/apikey").status_code == 200
    d = user.delete("/api/v1/apikey/" + r["id"])
    assert d.status_code == 200 and d.json() == {"result": "DELETED", "ok": True}
    assert other.get("/api/v1/apikey").status_code == 401
    assert user.delete("/api/v1/apikey/" + r["id"]).status_code == 404


def test_name_rules(new_user):
    user = new_user()
    for bad in ["ab", "_abc", "a b c", "x" * 129, "bad/name", ""]:
        r = user.post("/api/v1/apikey", json={"username": user.username, "name": bad})
        assert r.status_code == 400, (bad, r.text)
        assert r.json()["ok"] is False and r.json()["message"]
    for good in ["abc", "a_b@c.d-e~f#1", "x" * 128]:
        r = user.post("/api/v1/apikey", json={"username": user.username, "name": good})
        assert r.status_code == 200, (good, r.text)
    dup = user.post("/api/v1/apikey", json={"username": user.username, "name": "abc"})
    assert dup.status_code == 409 and "abc" in dup.json()["message"]


def test_same_name_allowed_for_different_users(new_user):
    a, b = new_user(), new_user()
    assert a.post("/api/v1/apikey", json={"username": a.username, "name": "shared-name"}).status_code == 200
    assert b.post("/api/v1/apikey", json={"username": b.username, "name": "shared-name"}).status_code == 200


def test_permissions(admin, new_user):
    a, b = new_user(), new_user()
    # a user may not create keys for someone else
    r = a.post("/api/v1/apikey", json={"username": b.username})
    assert r.status_code == 403
    # and cannot tell whether a user exists: the same answer for one that does not
    nobody = a.post("/api/v1/apikey", json={"username": "no-such-user-" + b.username})
    assert (nobody.status_code, nobody.json()) == (r.status_code, r.json()), nobody.text
    by_id = a.post("/api/v1/apikey", json={"userId": "00000000-0000-4000-8000-000000000000"})
    assert (by_id.status_code, by_id.json()) == (r.status_code, r.json()), by_id.text
    # naming oneself works, in any case of the name
    assert a.post("/api/v1/apikey", json={"username": a.username.upper()}).status_code == 200
    # nor list or delete them
    assert a.get("/api/v1/apikey", params={"userId": b.user_id}).status_code == 403
    b_key = b.get("/api/v1/apikey").json()[0]
    assert a.delete("/api/v1/apikey/" + b_key["id"]).status_code == 403
    # admins may do all three
    r = admin.post("/api/v1/apikey", json={"username": b.username, "name": "by-admin"})
    assert r.status_code == 200
    listed = admin.get("/api/v1/apikey", params={"userId": b.user_id}).json()
    assert "by-admin" in [k["name"] for k in listed]
    assert admin.delete("/api/v1/apikey/" + r.json()["id"]).status_code == 200


def test_bad_input(admin):
    r = admin.post("/api/v1/apikey", json={"username": "no-such-user-xyz"})
    assert r.status_code == 400 and "no-such-user-xyz" in r.json()["message"]
    r = admin.post("/api/v1/apikey", json={})  # no user named: the caller's own key (Concord)
    assert r.status_code == 200 and r.json()["userId"] == admin.user_id, r.text
    assert admin.delete("/api/v1/apikey/%s" % r.json()["id"]).status_code == 200
    r = admin.post("/api/v1/apikey", data="{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["ok"] is False
    r = admin.post("/api/v1/apikey", data="username=admin", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 415
    r = admin.post("/api/v1/apikey", json={"username": 42})
    assert r.status_code == 400 and "username" in r.json()["message"]
    r = admin.post("/api/v1/apikey", json=["admin"])
    assert r.status_code == 400
    r = admin.post("/api/v1/apikey", json={"username": "admin", "name": 5})
    assert r.status_code == 400
    assert admin.get("/api/v1/apikey", params={"userId": "not-a-uuid"}).status_code == 400
    assert admin.delete("/api/v1/apikey/not-a-uuid").status_code == 404


def test_expiry(new_user, server):
    user = new_user()
    r = user.post("/api/v1/apikey", json={"username": user.username, "name": "short", "expiredAt": "2020-01-01T00:00:00Z"})
    assert r.status_code == 400 and "expiredAt" in r.json()["message"]
    r = user.post("/api/v1/apikey", json={"username": user.username, "name": "bad-date", "expiredAt": "soon"})
    assert r.status_code == 400
    soon = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 1.5))
    r = user.post("/api/v1/apikey", json={"username": user.username, "name": "short", "expiredAt": soon})
    assert r.status_code == 200, r.text
    assert r.json()["expiredAt"].endswith("Z")
    listed = {k["name"]: k for k in user.get("/api/v1/apikey").json()}
    assert "expiredAt" in listed["short"] and "expiredAt" not in listed["key#1"]
    short = Client(server.url, r.json()["key"])
    assert short.get("/api/v1/apikey").status_code == 200
    deadline = time.time() + 5  # expires within 1.5 s; poll rather than sleep the worst case
    while short.get("/api/v1/apikey").status_code == 200 and time.time() < deadline:
        time.sleep(0.1)
    assert short.get("/api/v1/apikey").status_code == 401


def test_admin_may_choose_key_value(admin, new_user, server):
    user = new_user()
    value = base64.b64encode(b"chosen-key-value-0123456789abcd").decode().rstrip("=")
    r = user.post("/api/v1/apikey", json={"username": user.username, "name": "chosen", "key": value})
    assert r.status_code == 403
    r = admin.post("/api/v1/apikey", json={"username": user.username, "name": "chosen", "key": value})
    assert r.status_code == 200 and r.json()["key"] == value
    assert Client(server.url, value).get("/api/v1/apikey").status_code == 200


def test_disabled_user_is_rejected(admin, new_user):
    user = new_user()
    assert user.get("/api/v1/apikey").status_code == 200
    r = admin.post("/api/v1/user", json={"username": user.username, "disabled": True})
    assert r.status_code == 200 and r.json()["result"] == "UPDATED"
    assert user.get("/api/v1/apikey").status_code == 401
    admin.post("/api/v1/user", json={"username": user.username, "disabled": False})
    assert user.get("/api/v1/apikey").status_code == 200


def test_key_never_in_log(server, new_user):
    user = new_user()
    r = user.post("/api/v1/apikey", json={"username": user.username, "name": "secret-check"})
    key = r.json()["key"]
    assert key not in server.read_log()
    assert ADMIN_KEY not in server.read_log()
