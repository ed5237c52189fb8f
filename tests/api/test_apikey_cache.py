"""Verified API keys are remembered in memory (auth/apikey_cache.h, issue 27 item 4), and no
remembered key outlives what ends it: a deleted key, a disabled or deleted user, a role taken
away, an expiry.  Each key is used several times first, so that a stale entry would answer;
the next request after the change must see it.  On PostgreSQL the same holds across two
nodes: the change made through one, the key used on the other."""
import datetime
import time

import pytest

from conftest import ADMIN_KEY, TEST_DB, Client, make_user, unique
from test_nodes import nodes  # noqa: F401 (a fixture)


def warm(client, path="/api/v1/apikey"):
    for _ in range(3):
        r = client.get(path)
        assert r.status_code == 200, r.text


def new_key(admin, username, **extra):
    r = admin.post("/api/v1/apikey", json={"username": username, "name": unique("k"), **extra})
    assert r.status_code == 200, r.text
    return r.json()


def revocations(admin, via):
    """admin makes each change; via(key) is a Client on the node that must see it."""
    # a deleted key
    user = make_user(admin)
    k = new_key(admin, user.username)
    c = via(k["key"])
    warm(c)
    assert admin.delete("/api/v1/apikey/" + k["id"]).status_code == 200
    assert c.get("/api/v1/apikey").status_code == 401
    # a disabled user, enabled again
    user = make_user(admin)
    c = via(user.key)
    warm(c)
    assert admin.post("/api/v1/user", json={"username": user.username, "disabled": True}).status_code == 200
    assert c.get("/api/v1/apikey").status_code == 401
    assert admin.post("/api/v1/user", json={"username": user.username, "disabled": False}).status_code == 200
    assert c.get("/api/v1/apikey").status_code == 200
    # the admin role taken away: what needs it is refused at once
    user = make_user(admin, roles=["concordAdmin"])
    c = via(user.key)
    warm(c)
    assert c.post("/api/v1/user", json={"username": unique("u"), "type": "LOCAL"}).status_code == 200
    r = admin.post("/api/v1/user", json={"username": user.username, "type": "LOCAL", "roles": []})
    assert r.status_code == 200, r.text
    assert c.post("/api/v1/user", json={"username": unique("u"), "type": "LOCAL"}).status_code == 403
    # a deleted user
    user = make_user(admin)
    c = via(user.key)
    warm(c)
    assert admin.delete("/api/v1/user/" + user.user_id).status_code == 200
    assert c.get("/api/v1/apikey").status_code == 401


def test_revocation_counts_at_the_next_request(server, admin):
    revocations(admin, lambda key: Client(server.url, key))


def test_expired_key_is_refused_though_remembered(server, admin):
    user = make_user(admin)
    at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=2)
    k = new_key(admin, user.username, expiredAt=at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z")
    c = Client(server.url, k["key"])
    warm(c)
    deadline = time.monotonic() + 60
    while c.get("/api/v1/apikey").status_code == 200:  # until the expiry, however slow the machine
        assert time.monotonic() < deadline, "the key still works a minute after its expiry"
        time.sleep(0.1)
    assert c.get("/api/v1/apikey").status_code == 401


def test_a_wrong_key_is_never_taken_for_a_remembered_one(server, admin):
    user = make_user(admin)
    warm(user)
    raw = bytearray(user.key.encode())
    raw[5] = ord("A") if raw[5] != ord("A") else ord("B")  # another key, same length
    assert Client(server.url, raw.decode()).get("/api/v1/apikey").status_code == 401


@pytest.mark.skipif(not TEST_DB, reason="several nodes need PostgreSQL ($ACCORD_TEST_DB)")
def test_revocation_on_one_node_counts_on_the_other_at_once(nodes):  # noqa: F811
    a, b, _ = nodes()
    b.start()
    revocations(Client(a.url, ADMIN_KEY), lambda key: Client(b.url, key))
