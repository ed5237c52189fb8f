"""Bulk item writes (issue 27 item 3, the write side): `POST …/inventory/{inv}/data` and
`POST …/jsonstore/{store}/item` take a JSON array of {path, data} and write every item in one
transaction: all or nothing, within a per-request item limit, with the same access checks,
entity policy rules and capacity as the single put, and one audit entry that counts them."""
import concurrent.futures
import signal

from conftest import ADMIN_KEY, Client, unique
from proc_util import make_org
from test_audit import audit, find, one
from test_inventory import make_inventory, org_with_members, run
from test_policies import link, put_policy

JS = "/api/v1/org/%s/jsonstore"


def hosts(n, start=0, env="prod"):
    return [{"path": "hosts/h%03d" % i, "data": {"host": "h%03d" % i, "env": env, "n": i, "tags": ["web"]}}
            for i in range(start, start + n)]


def make_store(client, org="Default", **extra):
    name = unique("store")
    r = client.post(JS % org, json=dict(name=name, **extra))
    assert r.status_code == 200, r.text
    return name, (JS % org) + "/" + name


def item_paths(client, base):
    return [x["path"] for x in client.get(base + "/data").json()]


# ---- inventories ----------------------------------------------------------------------------


def test_inventory_bulk_writes_and_the_items_are_queryable(admin):
    base, _ = make_inventory(admin)
    r = admin.post(base + "/data", json=hosts(50))
    assert r.status_code == 200, r.text
    assert r.json() == {"ok": True, "items": 50, "created": 50, "updated": 0}
    assert len(item_paths(admin, base)) == 50
    # the same as items written one by one: the tree, the single item, the containment index
    assert admin.get(base + "/data/hosts/h007", params={"singleItem": "true"}).json()["n"] == 7
    assert len(admin.get(base + "/data/hosts").json()["hosts"]) == 50
    q = "select cast(to_json(item_data) as varchar) from inventory_data where item_data @> ?::jsonb"
    rows = run(admin, base, q, {"n": 42})
    assert [x["host"] for x in rows] == ["h042"], rows
    # a second write replaces some and adds others; a path given twice: the later value wins
    body = hosts(10, 45, env="test") + [{"path": "hosts/h046", "data": {"host": "h046", "env": "last"}}]
    r = admin.post(base + "/data", json=body)
    assert r.status_code == 200 and r.json() == {"ok": True, "items": 11, "created": 5, "updated": 6}, r.text
    assert len(item_paths(admin, base)) == 55
    assert admin.get(base + "/data/hosts/h046", params={"singleItem": "true"}).json() == {"host": "h046", "env": "last"}
    # (the query has no ORDER BY: PostgreSQL returned the updated rows in another order once)
    assert sorted(x["host"] for x in run(admin, base, q, {"env": "test"})) == ["h045"] + ["h%03d" % i for i in range(47, 55)]
    assert run(admin, base, q, {"env": "prod", "n": 46}) == []  # its old postings went with it
    # nested paths may hold any JSON value, as for one item
    r = admin.post(base + "/data", json=[{"path": "a/b", "data": 5}, {"path": "a/c", "data": [1, 2]}])
    assert r.status_code == 200, r.text
    assert admin.get(base + "/data/a").json() == {"a": {"b": 5, "c": [1, 2]}}


def test_inventory_bulk_is_all_or_nothing(admin):
    base, _ = make_inventory(admin)
    assert admin.post(base + "/data", json=hosts(3)).status_code == 200
    bad = [
        (hosts(3, 10) + [{"path": "top", "data": [1]}],
         "item 3 (top): Top-level inventory entries must be JSON objects. Got: class java.util.ArrayList"),
        (hosts(2, 10) + [{"data": {}}] + hosts(1, 20), "item 2: expected an object with a non-empty string"),
        (hosts(2, 10) + [{"path": "", "data": {}}], "item 2: expected an object"),
        (hosts(2, 10) + [{"path": "x/y"}], "item 2: expected an object"),
        (hosts(1, 10) + ["x"], "item 1: expected an object"),
        ({"hosts/h010": {}}, "non-empty JSON array"),
        ([], "non-empty JSON array"),
    ]
    for body, message in bad:
        r = admin.post(base + "/data", json=body)
        assert r.status_code == 400 and message in r.json()["message"], (body, r.text)
        assert r.json()["ok"] is False
    r = admin.post(base + "/data", data=b"[{\"path\": \"a\", ", headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    r = admin.post(base + "/data", data=b"[]", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415, r.text
    assert item_paths(admin, base) == ["hosts/h000", "hosts/h001", "hosts/h002"]


def test_inventory_bulk_limits(fresh_server):
    srv = fresh_server(args=["--limit-inventory-bulk-items", "3", "--limit-http-body-bytes", "4k"]).start()
    c = Client(srv.url, ADMIN_KEY)
    base, _ = make_inventory(c)
    r = c.post(base + "/data", json=hosts(4))
    assert r.status_code == 413, r.text
    assert r.json()["message"] == "Too many items in one request: 4, limit 3 (--limit-inventory-bulk-items)"
    assert c.post(base + "/data", json=hosts(3)).status_code == 200
    r = c.post(base + "/data", json=[{"path": "big", "data": {"k": "x" * 5000}}])
    assert r.status_code == 413, r.text
    assert item_paths(c, base) == ["hosts/h000", "hosts/h001", "hosts/h002"]


def test_inventory_bulk_acknowledged_survives_kill_9(fresh_server):
    """An answered bulk write is committed: a server killed right after has every item, and
    its containment index, when it comes back."""
    srv = fresh_server().start()
    c = Client(srv.url, ADMIN_KEY)
    base, _ = make_inventory(c)
    assert c.post(base + "/data", json=hosts(1000)).status_code == 200
    srv.stop(signal.SIGKILL)
    srv2 = fresh_server(data_dir=srv.data_dir).start()
    try:
        c = Client(srv2.url, ADMIN_KEY)
        assert len(item_paths(c, base)) == 1000
        q = "select cast(to_json(item_data) as varchar) from inventory_data where item_data @> ?::jsonb"
        assert [x["host"] for x in run(c, base, q, {"n": 999})] == ["h999"]
    finally:
        srv2.stop()


def test_inventory_bulk_concurrent_writers(admin):
    base, _ = make_inventory(admin)
    bodies = [hosts(200, k * 200) for k in range(6)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(pool.map(lambda b: admin.post(base + "/data", json=b), bodies))
    assert [r.status_code for r in answers] == [200] * 6, [r.text for r in answers]
    assert sum(r.json()["created"] for r in answers) == 1200
    assert item_paths(admin, base) == sorted("hosts/h%03d" % i for i in range(1200))


def test_inventory_bulk_needs_writer(admin, new_user):
    reader, writer = new_user(), new_user()
    org = org_with_members(admin, reader, writer)
    base, _ = make_inventory(admin, org)
    name = base.rsplit("/", 1)[1]
    teams = "/api/v1/org/%s/team" % org
    for user, level in ((reader, "READER"), (writer, "WRITER")):
        team = unique("team")
        assert admin.post(teams, json={"name": team}).status_code == 200
        r = admin.put(teams + "/" + team + "/users", json=[{"username": user.username, "role": "MEMBER"}])
        assert r.status_code == 200, r.text
        r = admin.post(base + "/access", json={"teamName": team, "level": level})
        assert r.status_code == 200, r.text
    r = reader.post(base + "/data", json=hosts(2))
    assert r.status_code == 403, r.text
    stranger = new_user()
    r = stranger.post(base + "/data", json=hosts(2))
    assert r.status_code in (403, 404), r.text
    assert item_paths(admin, base) == []
    r = writer.post(base + "/data", json=hosts(2))
    assert r.status_code == 200, r.text
    assert item_paths(reader, base) == ["hosts/h000", "hosts/h001"]
    r = admin.post("/api/v1/org/%s/inventory/%s/data" % (org, name + "-none"), json=hosts(1))
    assert r.status_code == 404, r.text


def test_inventory_bulk_is_one_audit_entry(admin):
    base, _ = make_inventory(admin)
    org, inv = base.split("/")[4], base.split("/")[6]
    assert admin.post(base + "/data", json=hosts(20) + hosts(5, 0, env="x")).status_code == 200
    e = one(admin, "INVENTORY", "UPDATE", inventoryName=inv, orgName=org)
    assert e["details"]["items"] == 25 and e["details"]["created"] == 20, e
    assert e["details"]["changed"] == "data"
    # a refused request records nothing
    assert admin.post(base + "/data", json=hosts(1) + [{"path": "t", "data": 1}]).status_code == 400
    assert len(find(audit(admin, object="INVENTORY", action="UPDATE"), "INVENTORY", "UPDATE", inventoryName=inv)) == 1


def test_inventory_bulk_entity_policy(admin):
    org, _ = make_org(admin)
    rules = {"entity": {"deny": [
        {"entity": "jsonStoreItem", "conditions": {"entity": {"data": {"kind": "secret"}}}, "msg": "no secrets"},
        {"entity": "jsonStoreItem", "action": "update", "msg": "items are frozen"},
    ]}}
    name, _ = put_policy(admin, rules)
    link(admin, name, orgName=org)
    base, _ = make_inventory(admin, org)
    body = [{"path": "a", "data": {"kind": "plain"}}, {"path": "b", "data": {"kind": "secret"}}]
    r = admin.post(base + "/data", json=body)
    assert r.status_code == 403, r.text
    assert r.json()["message"] == "item 1 (b): no secrets (policy '%s')" % name
    assert item_paths(admin, base) == []
    assert admin.post(base + "/data", json=body[:1]).status_code == 200
    r = admin.post(base + "/data", json=[{"path": "c", "data": {"kind": "plain"}}, {"path": "a", "data": {}}])
    assert r.status_code == 403 and r.json()["message"] == "item 1 (a): items are frozen (policy '%s')" % name, r.text
    assert item_paths(admin, base) == ["a"]


# ---- JSON stores ----------------------------------------------------------------------------


def test_json_store_bulk_writes_and_the_items_are_queryable(admin):
    _, base = make_store(admin)
    r = admin.post(base + "/item", json=hosts(30))
    assert r.status_code == 200 and r.json() == {"ok": True, "items": 30, "created": 30, "updated": 0}, r.text
    r = admin.post(base + "/item", json=hosts(2, 29))
    assert r.status_code == 200 and r.json() == {"ok": True, "items": 2, "created": 1, "updated": 1}, r.text
    assert admin.get(base + "/item", params={"limit": 100}).json() == ["hosts/h%03d" % i for i in range(31)]
    assert admin.get(base + "/item/hosts/h017").json()["n"] == 17
    q = {"name": unique("q"), "text": "select item_data from inventory_data where item_data @> ?::jsonb"}
    assert admin.post(base + "/query", json=q).status_code == 200
    r = admin.post(base + "/query/%s/exec" % q["name"], json={"n": 30})
    assert r.status_code == 200 and [x["host"] for x in r.json()] == ["h030"], r.text
    store, org = base.rsplit("/", 1)[1], "Default"
    e = one(admin, "JSON_STORE_DATA", "UPDATE", jsonStoreName=store, orgName=org, items=2)
    assert e["details"]["created"] == 1


def test_json_store_bulk_checks_every_item_and_the_capacity_once(admin):
    _, base = make_store(admin, maxDataSize=100)
    ok = [{"path": "a", "data": {"k": "0123456789"}}, {"path": "b", "data": {"k": "0123456789"}}]  # 18 bytes each
    for bad, status, message in (
        (ok + [{"path": "c", "data": None}], 400, "item 2 (c): JSON Store entries cannot be null."),
        (ok + [{"path": "c", "data": [1]}], 400, "item 2 (c): All JSON Store entries must be valid JSON objects. Got: array"),
        ([{"path": "c", "data": None}], 400, "item 0 (c): JSON Store entries cannot be null."),  # one item named too
        (ok * 3, 200, None),  # the same two paths three times: 36 bytes in the end
        ([{"path": "p%d" % i, "data": {"k": "0123456789"}} for i in range(6)], 413,
         "Found JSON store policy violations: Maximum data size in the JSON store exceeded: current 144, limit 100;"),
    ):
        r = admin.post(base + "/item", json=bad)
        assert r.status_code == status, (bad, r.text)
        if message:
            assert r.json()["message"] == message, r.text
    assert admin.get(base + "/item").json() == ["a", "b"]
    assert admin.get(base + "/capacity").json() == {"size": 36, "maxSize": 100}
    # replacing counts each item's new size once: 3 items of 30 bytes fit in 100
    big = [{"path": p, "data": {"k": "0123456789012345678901"}} for p in ("a", "b", "c")]
    assert admin.post(base + "/item", json=big).status_code == 200
    assert admin.get(base + "/capacity").json() == {"size": 90, "maxSize": 100}


def test_json_store_bulk_access_and_policy(admin, new_user):
    user = new_user()
    org = org_with_members(admin, user)
    store, base = make_store(admin, org)  # PRIVATE, owned by admin
    r = user.post(base + "/item", json=hosts(2))
    assert r.status_code == 403, r.text
    assert admin.get(base + "/item").json() == []
    name, _ = put_policy(admin, {"entity": {"deny": [
        {"entity": "jsonStoreItem", "conditions": {"entity": {"path": "hosts/h001"}}, "msg": "not that one"}]}})
    link(admin, name, orgName=org)
    r = admin.post(base + "/item", json=hosts(3))
    assert r.status_code == 403 and r.json()["message"] == "item 1 (hosts/h001): not that one (policy '%s')" % name
    assert admin.get(base + "/item").json() == []
    assert admin.post(base + "/item", json=hosts(1)).status_code == 200
