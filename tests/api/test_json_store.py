"""JSON stores (issue 26 part 1): every endpoint of Concord's api/json-store.md, the one
storage shared with inventories, capacity limits, access rules, named queries in the
inventory sandbox, and the server-side jsonStore task with the initiator's rights."""
import concurrent.futures
import json

import pytest

from conftest import ADMIN_KEY, Client, make_user, process_log, start_process, unique, wait_process
from proc_util import make_org, make_project, make_team
from test_inventory import ESCAPES

JS = "/api/v1/org/%s/jsonstore"


def make_store(client, org="Default", **extra):
    name = unique("store")
    r = client.post(JS % org, json=dict(name=name, **extra))
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is True and r.json()["result"] == "CREATED" and r.json()["id"]
    return name, (JS % org) + "/" + name


def put(client, base, path, data, status=200):
    r = client.put(base + "/item/" + path, json=data)
    assert r.status_code == status, r.text
    return r.json()


# ---- stores ---------------------------------------------------------------------------------

def test_store_create_get_update_list_delete(admin):
    org, _ = make_org(admin)
    name, base = make_store(admin, org)
    r = admin.get(base)
    assert r.status_code == 200, r.text
    s = r.json()
    assert s["name"] == name and s["orgName"] == org and s["visibility"] == "PRIVATE"
    assert s["owner"]["username"] == "admin" and s["orgId"] and s["id"]

    r = admin.post(JS % org, json={"name": name, "visibility": "PUBLIC"})
    assert r.status_code == 200 and r.json()["result"] == "UPDATED", r.text
    assert admin.get(base).json()["visibility"] == "PUBLIC"
    # rename by id
    new = unique("renamed")
    r = admin.post(JS % org, json={"id": s["id"], "name": new})
    assert r.status_code == 200 and r.json()["result"] == "UPDATED", r.text
    base = (JS % org) + "/" + new

    others = [make_store(admin, org)[0] for _ in range(3)]
    names = [x["name"] for x in admin.get(JS % org).json()]
    assert names == sorted([new] + others)
    assert [x["name"] for x in admin.get(JS % org, params={"filter": new.upper()[:12]}).json()] == [new]
    page = admin.get(JS % org, params={"limit": 2, "offset": 1}).json()
    assert [x["name"] for x in page] == sorted([new] + others)[1:3]

    r = admin.delete(base)
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "DELETED"}, r.text
    r = admin.get(base)
    assert r.status_code == 404 and r.json()["message"] == "JSON store not found: " + new, r.text


def test_store_bad_input(admin):
    r = admin.post(JS % "Default", json={"name": "<script></script>"})
    assert r.status_code == 400 and r.json()["ok"] is False, r.text
    r = admin.post(JS % "Default", json={"visibility": "PUBLIC"})
    assert r.status_code == 400 and "name" in r.json()["message"], r.text
    r = admin.post(JS % "Default", json={"name": unique("s"), "visibility": "SECRET"})
    assert r.status_code == 400 and "visibility" in r.json()["message"], r.text
    r = admin.post(JS % "Default", json={"name": unique("s"), "maxDataSize": "big"})
    assert r.status_code == 400 and "maxDataSize" in r.json()["message"], r.text
    r = admin.post(JS % "no-such-org", json={"name": unique("s")})
    assert r.status_code == 404, r.text
    # nothing half-stored
    assert all(not x["name"].startswith("s-") for x in admin.get(JS % "Default").json())


# ---- items ----------------------------------------------------------------------------------

def test_items_put_get_list_delete(admin):
    _, base = make_store(admin)
    assert put(admin, base, "service_a", {"service": "a", "users": ["bob", "alice"]}) == \
        {"ok": True, "result": "CREATED"}
    assert put(admin, base, "service_a", {"service": "a", "users": ["bob"]})["result"] == "UPDATED"
    # POST is the same as PUT; paths may hold '/'
    r = admin.post(base + "/item/dir1/dir2/item", json={"x": 1})
    assert r.status_code == 200 and r.json()["result"] == "CREATED", r.text
    r = admin.get(base + "/item/service_a")
    assert r.status_code == 200 and r.json() == {"service": "a", "users": ["bob"]}
    assert admin.get(base + "/item/dir1/dir2/item").json() == {"x": 1}
    r = admin.get(base + "/item/missing")
    assert r.status_code == 204 and r.content == b""

    for i in range(5):
        put(admin, base, "Host-%d" % i, {"i": i})
    assert admin.get(base + "/item").json() == \
        ["Host-0", "Host-1", "Host-2", "Host-3", "Host-4", "dir1/dir2/item", "service_a"]
    assert admin.get(base + "/item", params={"filter": "host-"}).json() == ["Host-%d" % i for i in range(5)]
    assert admin.get(base + "/item", params={"filter": "host", "offset": 1, "limit": 2}).json() == ["Host-1", "Host-2"]
    assert admin.get(base + "/item", params={"filter": "%"}).json() == []

    r = admin.delete(base + "/item/service_a")
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "DELETED"}, r.text
    r = admin.delete(base + "/item/service_a")
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "NOT_FOUND"}, r.text
    assert admin.get(base + "/item/service_a").status_code == 204


@pytest.mark.parametrize("body,message", [
    ([1, 2], "All JSON Store entries must be valid JSON objects. Got: array"),
    ("text", "All JSON Store entries must be valid JSON objects. Got: string"),
    (12, "All JSON Store entries must be valid JSON objects. Got: number"),
    (None, "JSON Store entries cannot be null."),
])
def test_items_must_be_objects(admin, body, message):
    _, base = make_store(admin)
    r = admin.put(base + "/item/x", data=json.dumps(body), headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["message"] == message, r.text
    assert admin.get(base + "/item").json() == []


def test_one_storage_two_faces(admin):
    """An item written through one API is the item the other reads, not a copy."""
    name, base = make_store(admin)
    inv = "/api/v1/org/Default/inventory/" + name
    put(admin, base, "a/b", {"v": 1})
    r = admin.get(inv + "/data/a/b", params={"singleItem": "true"})
    assert r.status_code == 200 and r.json() == {"v": 1}, r.text
    assert admin.post(inv + "/data/c", json={"w": 2}).status_code == 200
    assert admin.get(base + "/item/c").json() == {"w": 2}
    assert admin.get(base + "/item").json() == ["a/b", "c"]
    # an inventory is a store
    inv_name = unique("inv")
    assert admin.post("/api/v1/org/Default/inventory", json={"name": inv_name}).status_code == 200
    assert admin.get((JS % "Default") + "/" + inv_name).json()["name"] == inv_name
    # deleting through one face deletes for both
    assert admin.delete(base).status_code == 200
    assert admin.get(inv + "/data").status_code == 404


# ---- capacity -------------------------------------------------------------------------------

def test_capacity_per_store(admin):
    _, base = make_store(admin, maxDataSize=40)
    assert admin.get(base).json()["maxDataSize"] == 40
    assert admin.get(base + "/capacity").json() == {"size": 0, "maxSize": 40}
    put(admin, base, "a", {"k": "0123456789"})            # {"k":"0123456789"}: 18 bytes
    assert admin.get(base + "/capacity").json() == {"size": 18, "maxSize": 40}
    r = admin.put(base + "/item/b", json={"k": "01234567890123456789"})  # 28 more: 46
    assert r.status_code == 413, r.text
    assert r.json()["message"] == ("Found JSON store policy violations: Maximum data size in the JSON store "
                                   "exceeded: current 46, limit 40;")
    assert admin.get(base + "/item/b").status_code == 204
    # replacing an item counts its new size, not both
    put(admin, base, "a", {"k": "01234567890123456789012345678901"})  # 40 bytes: just fits
    assert admin.get(base + "/capacity").json()["size"] == 40
    # the limit can be raised, and removed
    name = base.rsplit("/", 1)[1]
    assert admin.post(JS % "Default", json={"name": name, "maxDataSize": 100000}).status_code == 200
    put(admin, base, "b", {"k": "01234567890123456789"})
    assert admin.post(JS % "Default", json={"name": name, "maxDataSize": None}).status_code == 200
    assert admin.get(base + "/capacity").json() == {"size": 68, "maxSize": -1}
    assert "maxDataSize" not in admin.get(base).json()


def test_capacity_holds_under_concurrent_writers(admin):
    """Writers racing for the last bytes: the check is in the write's transaction."""
    _, base = make_store(admin, maxDataSize=100)
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(pool.map(lambda i: admin.put(base + "/item/i%02d" % i, json={"k": "0123456789"}).status_code,
                              range(20)))
    assert sorted(codes) == [200] * 5 + [413] * 15, codes   # 18 bytes each: 5 fit in 100
    assert admin.get(base + "/capacity").json() == {"size": 90, "maxSize": 100}
    assert len(admin.get(base + "/item").json()) == 5


def test_capacity_server_default(fresh_server):
    srv = fresh_server(args=["--json-store-max-data-size", "1500"]).start()
    c = Client(srv.url, ADMIN_KEY)
    _, base = make_store(c)
    assert c.get(base + "/capacity").json() == {"size": 0, "maxSize": 1500}
    put(c, base, "a", {"k": "x" * 1000})
    r = c.put(base + "/item/b", json={"k": "x" * 1000})
    assert r.status_code == 413 and "current 2,016, limit 1,500;" in r.json()["message"], r.text
    # a store's own maximum wins over the default; only an administrator sets one above it
    _, big = make_store(c, maxDataSize=10000)
    put(c, big, "a", {"k": "x" * 1000})
    put(c, big, "b", {"k": "x" * 1000})
    user = make_user(c)
    r = user.post(JS % "Default", json={"name": unique("s"), "maxDataSize": 1501})
    assert r.status_code == 403 and "only an administrator may raise it" in r.json()["message"], r.text
    name, small = make_store(user, maxDataSize=1000)
    assert user.get(small + "/capacity").json() == {"size": 0, "maxSize": 1000}


# ---- access ---------------------------------------------------------------------------------

def test_private_store_access_rules(admin, new_user):
    org, _ = make_org(admin)
    user = new_user()
    team = make_team(admin, org, [(user, "MEMBER")])
    name, base = make_store(admin, org)
    put(admin, base, "a", {"x": 1})
    r = user.get(base + "/item/a")
    assert r.status_code == 403, r.text
    assert name not in [x["name"] for x in user.get(JS % org).json()]

    r = admin.post(base + "/access", json={"orgName": org, "teamName": team, "level": "READER"})
    assert r.status_code == 200 and r.json()["result"] == "UPDATED", r.text
    assert [a["teamName"] for a in admin.get(base + "/access").json()] == [team]
    assert user.get(base + "/item/a").json() == {"x": 1}
    assert name in [x["name"] for x in user.get(JS % org).json()]
    # what each holds on it (the console offers only that)
    assert user.get(base).json()["yourAccess"] == "READER"
    assert [x["yourAccess"] for x in user.get(JS % org).json() if x["name"] == name] == ["READER"]
    assert admin.get(base).json()["yourAccess"] == "OWNER"
    assert user.put(base + "/item/b", json={"y": 1}).status_code == 403
    assert user.delete(base).status_code == 403

    r = admin.post(base + "/access/bulk", json=[{"orgName": org, "teamName": team, "level": "WRITER"}])
    assert r.status_code == 200, r.text
    assert user.put(base + "/item/b", json={"y": 1}).status_code == 200
    assert user.get(base).json()["yourAccess"] == "WRITER"
    assert user.delete(base).status_code == 403
    assert admin.post(base + "/access/bulk", json=[]).status_code == 200
    assert admin.get(base + "/access").json() == []
    r = admin.post(base + "/access/bulk", data="null", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "List of teams is null" in r.json()["message"], r.text
    assert user.get(base + "/item/a").status_code == 403


def test_outsider_cannot_touch_store(admin, new_user):
    outsider = new_user()
    _, base = make_store(admin, visibility="PUBLIC")
    assert outsider.put(base + "/item/a", json={"x": 1}).status_code == 403
    r = outsider.post(JS % "Default", json={"name": base.rsplit("/", 1)[1], "visibility": "PRIVATE"})
    assert r.status_code == 403, r.text


# ---- queries --------------------------------------------------------------------------------

LOOKUP = "select item_data->'service' from inventory_data where item_data @> ?::jsonb"


def test_queries(admin):
    _, base = make_store(admin)
    put(admin, base, "service_a", {"service": "service_a", "users": ["bob", "alice"]})
    put(admin, base, "service_b", {"service": "service_b", "users": ["alice", "mike"]})
    r = admin.post(base + "/query", json={"name": "lookupServiceByUser", "text": LOOKUP})
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "CREATED"}, r.text
    r = admin.post(base + "/query", json={"name": "lookupServiceByUser", "text": LOOKUP})
    assert r.json()["result"] == "ALREADY_EXISTS", r.text
    r = admin.post(base + "/query/lookupServiceByUser/exec", json={"users": ["mike"]})
    assert r.status_code == 200 and r.json() == ["service_b"], r.text
    r = admin.post(base + "/query/lookupServiceByUser/exec", json={"users": ["alice"]})
    assert sorted(r.json()) == ["service_a", "service_b"]

    q = admin.get(base + "/query/lookupServiceByUser").json()
    assert q["name"] == "lookupServiceByUser" and q["text"] == LOOKUP and q["id"] and q["storeId"]
    r = admin.post(base + "/query", json={"name": "all", "text": "select item_data from inventory_data"})
    assert r.json()["result"] == "CREATED"
    r = admin.post(base + "/query", json={"name": "all", "text": "select to_json(item_path) from inventory_data"})
    assert r.json()["result"] == "UPDATED"
    assert sorted(admin.post(base + "/query/all/exec").json()) == ["service_a", "service_b"]
    assert [x["name"] for x in admin.get(base + "/query").json()] == ["all", "lookupServiceByUser"]
    assert [x["name"] for x in admin.get(base + "/query", params={"filter": "LOOKUP"}).json()] == \
        ["lookupServiceByUser"]

    r = admin.post(base + "/query", json={"name": "bad", "text": "  "})
    assert r.status_code == 400 and r.json()["message"] == "Query should not be empty", r.text
    r = admin.post(base + "/query/lookupServiceByUser/exec", json=[1])
    assert r.status_code == 400, r.text
    assert admin.delete(base + "/query/all").json() == {"ok": True, "result": "DELETED"}
    r = admin.delete(base + "/query/all")
    assert r.status_code == 400 and r.json()["message"] == "Query not found: all", r.text
    assert admin.get(base + "/query/all").status_code == 404


@pytest.mark.parametrize("text,message", ESCAPES)
def test_escape_attempts_refused(admin, text, message):
    _, base = make_store(admin)
    r = admin.post(base + "/query", json={"name": "escape", "text": text})
    assert r.status_code == 400 and message in r.json()["message"], r.text
    assert admin.get(base + "/query").json() == []


def exec_query(client, base, text, params=None, status=200):
    name = unique("q")
    r = client.post(base + "/query", json={"name": name, "text": text})
    assert r.status_code == 200, r.text
    r = client.post(base + "/query/" + name + "/exec", **({"json": params} if params is not None else {}))
    assert r.status_code == status, r.text
    return r.json()


@pytest.mark.parametrize("table", ["inventory_data", "json_store_data"])
def test_queries_see_only_their_store(admin, table):
    """The escape attempts that run (test_inventory.py) through the JSON store routes, with
    both names of the items: each sees only its own store's rows."""
    _, mine = make_store(admin)
    _, other = make_store(admin)
    put(admin, other, "secret", {"password": "hunter2"})
    put(admin, mine, "a", {"x": 1})
    r = admin.post(mine + "/query", json={"name": "count", "text": "select count(*) from " + table})
    assert r.status_code == 200, r.text
    assert admin.post(mine + "/query/count/exec").json() == [1]
    count = "select count(*) from %s where " % table
    assert exec_query(admin, mine, count + "item_data->>'password' = 'hunter2'") == [0]
    # the containment filter alone (the key index on SQLite, the filter view on PostgreSQL)
    assert exec_query(admin, mine, count + "item_data @> ?::jsonb", {"password": "hunter2"}) == [0]
    assert exec_query(admin, mine, count + "item_data @> ?::jsonb", {"x": "1' or '1'='1"}) == [0]
    assert exec_query(admin, mine, count + "item_path in (select item_path from %s) -- ; delete from users"
                      % table) == [1]
    assert exec_query(admin, mine, "select to_json(';drop table users;'::text) from %s limit 1" % table) == \
        [";drop table users;"]
    assert admin.get("/api/v1/apikey").status_code == 200
    assert exec_query(admin, other, "select count(*) from " + table) == [1]


CONCORD_LOOKUP = "select item_data->'service' from json_store_data where item_data @> ?::jsonb"


def test_queries_name_json_store_data(admin):
    """Queries as Concord's users write them: its table json_store_data(json_store_id,
    item_path, item_data, item_data_size), with parameters."""
    _, base = make_store(admin)
    put(admin, base, "service_a", {"service": "service_a", "users": ["bob", "alice"]})
    put(admin, base, "service_b", {"service": "service_b", "users": ["alice", "mike"]})
    assert exec_query(admin, base, CONCORD_LOOKUP, {"users": ["mike"]}) == ["service_b"]
    assert sorted(exec_query(admin, base, CONCORD_LOOKUP, {"users": ["alice"]})) == ["service_a", "service_b"]
    assert exec_query(admin, base, CONCORD_LOOKUP, {}) != []
    # an alias, qualified columns, more conjuncts
    text = ("select to_json(d.item_path) from json_store_data d where d.item_data @> ?::jsonb "
            "and d.item_path <> 'x' order by d.item_path desc")
    assert exec_query(admin, base, text, {"users": ["alice"]}) == ["service_b", "service_a"]
    text = "select to_json(json_store_data.item_path) from json_store_data where json_store_data.item_path = 'service_a'"
    assert exec_query(admin, base, text) == ["service_a"]
    # Concord's other columns: the store's id, each item's size as capacity counts it
    store_id = admin.get(base).json()["id"]
    assert exec_query(admin, base, "select to_json(json_store_id) from json_store_data limit 1") == [store_id]
    sizes = exec_query(admin, base, "select item_data_size from json_store_data order by item_path")
    assert len(sizes) == 2 and sum(sizes) == admin.get(base + "/capacity").json()["size"]
    # WITH, joins and unions over both names read the same rows
    text = ("with s as (select item_path, item_data from json_store_data where item_data @> ?::jsonb) "
            "select json_agg(item_path) from s")
    assert exec_query(admin, base, text, {"users": ["bob"]}) == [["service_a"]]
    text = ("select count(*) from json_store_data j join inventory_data i on i.item_path = j.item_path "
            "and i.item_data @> j.item_data")
    assert exec_query(admin, base, text) == [2]
    text = "select count(*) from (select item_path from json_store_data union select item_path from inventory_data) u"
    assert exec_query(admin, base, text) == [2]
    # saved as Concord saves it, refused when it runs
    r = exec_query(admin, base, "select * from json_store_data", status=400)
    assert "exactly one column to run, this one returns 4" in r["message"], r
    r = exec_query(admin, base, "select item_data->>'service' from json_store_data", status=400)
    assert r["message"].startswith("Invalid JSON value"), r
    # unknown columns are found when the query is saved
    r = admin.post(base + "/query", json={"name": "bad", "text": "select inventory_id from json_store_data"})
    assert r.status_code == 400 and "inventory_id" in r.json()["message"], r.text


# ---- the jsonStore task ---------------------------------------------------------------------

TASK_FLOW = """
configuration:
  arguments:
    myItem:
      x: 123
      nested:
        value: "abc"
flows:
  default:
    - log: "before=${jsonStore.isStoreExists('%(store)s')}"
    - ${jsonStore.upsert('%(store)s', 'anItem', myItem)}
    - log: "after=${jsonStore.isStoreExists('%(org)s', '%(store)s')}"
    - "${jsonStore.put('%(store)s', 'dir/other', {'users': ['mike'], 'service': 'svc_b'})}"
    - expr: ${jsonStore.get('%(store)s', 'anItem')}
      out: got
    - log: "got=${got.nested.value} ${got.x}"
    - log: "missing=${jsonStore.get('%(store)s', 'nope') == null} exists=${jsonStore.isExists('%(store)s', 'anItem')}"
    - ${jsonStore.upsertQuery('%(store)s', 'byUser', "select item_data->'service' from json_store_data where item_data @> ?::jsonb")}
    - expr: "${jsonStore.executeQuery('%(store)s', 'byUser', {'users': ['mike']})}"
      out: rows
    - log: "rows=${rows}"
    - log: "deleted=${jsonStore.delete('%(store)s', 'anItem')} again=${jsonStore.delete('%(store)s', 'anItem')}"
    - log: "gone=${jsonStore.isExists('%(org)s', '%(store)s', 'anItem')}"
    - ${jsonStore.createOrUpdateStore('%(org)s', '%(store)s-2')}
    - ${jsonStore.createOrUpdateStore('%(store)s-2')}
    - log: "second=${jsonStore.isStoreExists('%(store)s-2')}"
"""


@pytest.fixture
def project_setup(admin, new_user):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    user = new_user()
    make_team(admin, org, [(user, "MEMBER")], project=project, level="WRITER")
    return org, project, user


def run_flow(client, org, project, flow, expect="FINISHED"):
    pid = start_process(client, flow, parts={"org": org, "project": project})
    p = wait_process(client, pid)
    log = process_log(client, pid)
    assert p["status"] == expect, log
    return log


def test_task(admin, project_setup):
    org, project, user = project_setup
    store = unique("store")
    log = run_flow(user, org, project, TASK_FLOW % {"org": org, "store": store})
    for line in ("before=false", "after=true", "got=abc 123", "missing=true exists=true", "rows=[svc_b]",
                 "deleted=true again=false", "gone=false", "second=true"):
        assert line in log, log
    # the store the task created belongs to the initiator, PRIVATE, and holds what the flow wrote
    s = admin.get((JS % org) + "/" + store).json()
    assert s["owner"]["username"] == user.username and s["visibility"] == "PRIVATE"
    assert admin.get((JS % org) + "/" + store + "/item/dir/other").json() == {"users": ["mike"], "service": "svc_b"}
    # its changes are in the audit log, as the initiator's, from the process
    r = admin.get("/api/v1/audit", params={"object": "JSON_STORE_DATA", "limit": 1000})
    mine = [(e["action"], e["details"]["itemPath"]) for e in r.json() if e["details"].get("jsonStoreName") == store]
    assert sorted(mine) == [("CREATE", "anItem"), ("CREATE", "dir/other"), ("DELETE", "anItem")], r.json()
    entry = [e for e in r.json() if e["details"].get("jsonStoreName") == store][0]
    assert entry["user"]["username"] == user.username and entry["details"]["actionSource"]["type"] == "PROCESS"


def test_task_has_only_the_initiators_rights(admin, project_setup):
    org, project, user = project_setup
    name, base = make_store(admin, org)  # PRIVATE, admin's
    put(admin, base, "a", {"x": 1})
    log = run_flow(user, org, project, "flows:\n  default:\n    - log: \"${jsonStore.get('%s', 'a')}\"\n" % name,
                   expect="FAILED")
    assert "The current user (%s) doesn't have the necessary access level (READER) to the JSON store: %s" % (
        user.username, name) in log, log
    log = run_flow(user, org, project, "flows:\n  default:\n    - \"${jsonStore.put('%s', 'b', {'y': 2})}\"\n" % name,
                   expect="FAILED")
    assert "(WRITER) to the JSON store" in log, log
    assert admin.get(base + "/item/b").status_code == 204


def test_task_capacity_and_bad_data(admin, project_setup):
    org, project, user = project_setup
    store = unique("store")
    log = run_flow(user, org, project,
                   "flows:\n  default:\n    - ${jsonStore.upsert('%s', 'a', 'text')}\n" % store, expect="FAILED")
    assert "Data must be a valid JSON object" in log, log
    _, base = make_store(admin, org, maxDataSize=10)
    name = base.rsplit("/", 1)[1]
    admin.post(base + "/access/bulk", json=[])
    r = admin.post(JS % org, json={"name": name, "visibility": "PUBLIC"})
    assert r.status_code == 200
    log = run_flow(admin, org, project,
                   "flows:\n  default:\n    - \"${jsonStore.put('%s', 'a', {'k': '0123456789'})}\"\n" % name,
                   expect="FAILED")
    assert "Maximum data size in the JSON store exceeded: current 18, limit 10;" in log, log


def test_audit(admin):
    name, base = make_store(admin)
    put(admin, base, "dir/a", {"x": 1})
    admin.post(base + "/query", json={"name": "all-items", "text": "select item_data from inventory_data"})
    admin.delete(base + "/item/dir/a")
    admin.delete(base)

    def one(obj, action, **details):
        r = admin.get("/api/v1/audit", params={"object": obj, "action": action, "limit": 1000})
        assert r.status_code == 200, r.text
        found = [e for e in r.json() if all(e["details"].get(k) == v for k, v in details.items())]
        assert len(found) == 1, (obj, action, details, r.json())

    one("JSON_STORE", "CREATE", jsonStoreName=None, inventoryName=name)
    one("JSON_STORE_DATA", "CREATE", jsonStoreName=name, itemPath="dir/a")
    one("JSON_STORE_QUERY", "CREATE", jsonStoreName=name, queryName="all-items")
    one("JSON_STORE_DATA", "DELETE", jsonStoreName=name, itemPath="dir/a")
    one("JSON_STORE", "DELETE", jsonStoreName=name)
