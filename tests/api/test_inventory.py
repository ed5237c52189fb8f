"""Inventories, their items and their queries (issue 5): every endpoint, the access rules,
containment semantics, the PostgreSQL dialect and attempts to escape the query sandbox."""
import pytest

from conftest import ADMIN_KEY, Client, unique

HOSTS = {
    "web1": {"host": "web1", "env": "prod", "port": 80, "tags": ["web", "edge"], "ipv4": {"address": "10.0.0.1"}},
    "web2": {"host": "web2", "env": "test", "port": 8080, "tags": ["web"], "ipv4": {"address": "10.0.0.2"}},
    "db1": {"host": "db1", "env": "prod", "port": 5432.0, "tags": ["db"], "enabled": True, "owner": None},
}
SELECT_ALL = "select cast(to_json(item_data) as varchar) from inventory_data where item_data @> ?::jsonb"


def org_with_members(admin, *members, team_role="MEMBER"):
    """A new org whose team 'default' holds the given users."""
    org = unique("org")
    assert admin.post("/api/v1/org", json={"name": org}).status_code == 200
    if members:
        body = [{"username": u.username, "role": team_role} for u in members]
        r = admin.put("/api/v1/org/%s/team/default/users" % org, json=body)
        assert r.status_code == 200, r.text
    return org


def make_inventory(client, org="Default", visibility=None, items=None):
    name = unique("inv")
    body = {"name": name}
    if visibility:
        body["visibility"] = visibility
    r = client.post("/api/v1/org/%s/inventory" % org, json=body)
    assert r.status_code == 200, r.text
    base = "/api/v1/org/%s/inventory/%s" % (org, name)
    for path, data in (items or {}).items():
        r = client.post(base + "/data/" + path, json=data)
        assert r.status_code == 200, r.text
    return base, r.json() if not items else None


def save_query(client, base, text, name=None, status=200):
    name = name or unique("q")
    r = client.post(base + "/query/" + name, data=text.encode(), headers={"Content-Type": "text/plain"})
    assert r.status_code == status, r.text
    return name, r


def run(client, base, text, body=None, status=200):
    name, _ = save_query(client, base, text)
    kw = {"json": body} if body is not None else {}
    r = client.post(base + "/query/" + name + "/exec", **kw)
    assert r.status_code == status, r.text
    return r.json()


@pytest.fixture
def hosts(admin):
    base, _ = make_inventory(admin, items=HOSTS)
    return base


# ---- inventories ----

def test_create_update_list_delete(admin):
    name = unique("inv")
    r = admin.post("/api/v1/org/Default/inventory", json={"name": name})
    assert r.status_code == 200 and r.json()["result"] == "CREATED" and r.json()["ok"] is True
    inv_id = r.json()["id"]
    r = admin.post("/api/v1/org/Default/inventory", json={"name": name, "visibility": "PRIVATE"})
    assert r.json() == {"ok": True, "result": "UPDATED", "id": inv_id}
    listed = [i for i in admin.get("/api/v1/org/Default/inventory").json() if i["name"] == name]
    assert listed == [{"id": inv_id, "name": name, "orgId": "0fac1b18-d179-11e7-b3e7-d7df4543ed4f",
                       "orgName": "Default", "visibility": "PRIVATE",
                       "owner": {"id": "230c5c9c-d9a7-11e6-bcfd-bb681c07b26c", "username": "admin"}}]
    names = [i["name"] for i in admin.get("/api/v1/org/Default/inventory").json()]
    assert names == sorted(names)
    r = admin.delete("/api/v1/org/Default/inventory/" + name)
    assert r.json() == {"ok": True, "result": "DELETED"}
    assert admin.get("/api/v1/org/Default/inventory/" + name).status_code == 404
    assert admin.delete("/api/v1/org/Default/inventory/" + name).status_code == 404


def test_rename_by_id(admin):
    base, created = make_inventory(admin)
    new = unique("renamed")
    r = admin.post("/api/v1/org/Default/inventory", json={"id": created["id"], "name": new})
    assert r.json()["result"] == "UPDATED"
    assert admin.get("/api/v1/org/Default/inventory/" + new).status_code == 200
    assert admin.get(base).status_code == 404


def test_inventory_bad_input(admin):
    inv = "/api/v1/org/Default/inventory"
    assert admin.post(inv, json={"visibility": "PUBLIC"}).status_code == 400          # no name
    assert admin.post(inv, json={"name": "x"}).status_code == 400                     # too short
    assert admin.post(inv, json={"name": unique("i"), "visibility": "SECRET"}).status_code == 400
    assert admin.post(inv, json=["not", "an", "object"]).status_code == 400
    assert admin.post(inv, data="{bad", headers={"Content-Type": "application/json"}).status_code == 400
    assert admin.post("/api/v1/org/%s/inventory" % unique("noorg"), json={"name": "abc"}).status_code == 404
    assert admin.get("/api/v1/org/%s/inventory" % unique("noorg")).status_code == 404
    r = admin.get("/api/v1/org/Default/inventory/%s" % unique("none"))
    assert r.status_code == 404 and "JSON store not found" in r.json()["message"]


def test_delete_removes_items_and_queries(admin):
    base, _ = make_inventory(admin, items={"h1": {"a": 1}})
    name, _ = save_query(admin, base, "select item_data from inventory_data")
    assert admin.delete(base).status_code == 200
    admin.post(base.rsplit("/", 1)[0], json={"name": base.rsplit("/", 1)[1]})  # same name again
    assert admin.get(base + "/data").json() == []
    assert admin.get(base + "/query").json() == []


# ---- data ----

def test_data_tree_single_item_and_list(admin, hosts):
    r = admin.get(hosts + "/data/web1")
    assert r.json() == {"web1": HOSTS["web1"]}
    r = admin.get(hosts + "/data/web")          # a plain prefix: web1 and web2
    assert r.json() == {"web1": HOSTS["web1"], "web2": HOSTS["web2"]}
    assert admin.get(hosts + "/data/nothing").json() == {}
    r = admin.get(hosts + "/data/db1", params={"singleItem": "true"})
    assert r.status_code == 200 and r.json() == HOSTS["db1"]
    assert admin.get(hosts + "/data/db", params={"singleItem": "true"}).status_code == 204
    listed = admin.get(hosts + "/data").json()
    assert listed == [{"path": p, "data": HOSTS[p]} for p in sorted(HOSTS)]


def test_nested_paths_merge_and_replace(admin):
    base, _ = make_inventory(admin)
    assert admin.post(base + "/data/g", json={"a": 1, "sub": {"x": 1}}).json() == {"g": {"a": 1, "sub": {"x": 1}}}
    r = admin.post(base + "/data/g/sub", json={"y": 2})
    assert r.json() == {"g": {"sub": {"y": 2}}}
    assert admin.get(base + "/data/g").json() == {"g": {"a": 1, "sub": {"x": 1, "y": 2}}}
    assert admin.post(base + "/data/g/list", json=[1, 2]).status_code == 200      # not top level: any JSON
    assert admin.post(base + "/data/g", json={"a": 2}).status_code == 200           # replaces the item
    assert admin.get(base + "/data/g", params={"singleItem": "true"}).json() == {"a": 2}
    r = admin.delete(base + "/data/g/sub")
    assert r.json() == {"ok": True}
    assert admin.get(base + "/data/g").json() == {"g": {"a": 2, "list": [1, 2]}}


def test_top_level_items_must_be_objects(admin, new_user):
    base, _ = make_inventory(admin)
    for body in ("[1]", '"s"', "3", "null"):
        r = admin.post(base + "/data/top", data=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and "Top-level inventory entries must be JSON objects" in r.json()["message"]
    assert admin.post(base + "/data/top", data="{x", headers={"Content-Type": "application/json"}).status_code == 400
    assert admin.post(base + "/data/top", data="{}", headers={"Content-Type": "text/plain"}).status_code == 415


def test_items_are_per_inventory(admin):
    a, _ = make_inventory(admin, items={"h": {"owner": "a"}})
    b, _ = make_inventory(admin, items={"h": {"owner": "b"}})
    assert admin.get(a + "/data/h").json() == {"h": {"owner": "a"}}
    assert run(admin, a, "select count(*) from inventory_data") == [1]
    assert run(admin, b, SELECT_ALL, {}) == [{"owner": "b"}]


# ---- queries ----

def test_query_create_update_list_get_delete(admin, hosts):
    name = unique("q")
    r = admin.post(hosts + "/query/" + name, data="select item_data from inventory_data",
                   headers={"Content-Type": "text/plain"})
    body = r.json()
    assert r.status_code == 200 and body["result"] == "CREATED" and body["ok"] is True
    r = admin.post(hosts + "/query/" + name, json={"text": "select count(*) from inventory_data"})
    assert r.json() == {"result": "UPDATED", "ok": True, "id": body["id"]}
    inv_id = admin.get("/api/v1/org/Default/inventory").json()
    inv_id = [i["id"] for i in inv_id if hosts.endswith("/" + i["name"])][0]
    expect = [{"id": body["id"], "name": name, "inventoryId": inv_id, "text": "select count(*) from inventory_data"}]
    assert admin.get(hosts).json() == expect
    assert admin.get(hosts + "/query").json() == expect
    assert admin.get(hosts + "/query/" + name).json() == expect[0]
    assert admin.post(hosts + "/query/" + name + "/exec").json() == [3]
    assert admin.delete(hosts + "/query/" + name).json() == {"ok": True, "result": "DELETED"}
    assert admin.delete(hosts + "/query/" + name).status_code == 404
    assert admin.post(hosts + "/query/" + name + "/exec").status_code == 404
    assert admin.get(hosts + "/query/" + name).status_code == 404


def test_query_validated_when_saved(admin, hosts):
    cases = {
        "": "Query should not be empty",
        "delete from inventory_data": "must be a SELECT",
        "select * from users": "table 'users' is not allowed",
        "select 1; select 2": "only one statement",
        "select item_data from inventory_data where": "syntax error",
        "select nosuch(item_data) from inventory_data": "nosuch",
        "select item_data #> '{a}' from inventory_data": "unsupported syntax",
    }
    for text, message in cases.items():
        _, r = save_query(admin, hosts, text, status=400)
        assert message in r.json()["message"], (text, r.text)
    assert admin.get(hosts + "/query").json() == []


def test_query_unknowns_are_404(admin, hosts):
    assert admin.post(hosts + "/query/%s/exec" % unique("q")).status_code == 404
    nope = "/api/v1/org/Default/inventory/%s" % unique("none")
    assert admin.post(nope + "/query/abc", data="select 1", headers={"Content-Type": "text/plain"}).status_code == 404
    assert admin.get("/api/v1/org/%s/inventory/x/query" % unique("noorg")).status_code == 404


def test_exec_answers_in_order(admin, new_user):
    """An exec (and a GET of the query) looks the org, the inventory and the query up at once;
    the answers are still those of the checks in turn: a hidden org before a missing
    inventory, a 403 on the inventory before a missing query."""
    outsider = new_user()
    org, hidden, inv, q = unique("org"), unique("priv"), unique("inv"), unique("q")
    assert admin.post("/api/v1/org", json={"name": org}).status_code == 200
    assert admin.post("/api/v1/org", json={"name": hidden, "visibility": "PRIVATE"}).status_code == 200
    for o in (org, hidden):
        r = admin.post("/api/v1/org/%s/inventory" % o, json={"name": inv, "visibility": "PRIVATE"})
        assert r.status_code == 200, r.text
        save_query(admin, "/api/v1/org/%s/inventory/%s" % (o, inv), "select count(*) from inventory_data", name=q)

    def answer(client, o, i, name):
        path = "/api/v1/org/%s/inventory/%s/query/%s" % (o, i, name)
        r, g = client.post(path + "/exec"), client.get(path)
        if r.status_code == 200:
            assert g.status_code == 200 and g.json()["name"] == name, g.text
            return 200, r.json()
        assert (g.status_code, g.json()["message"]) == (r.status_code, r.json()["message"])
        return r.status_code, r.json()["message"]

    none = unique("none")
    assert answer(admin, org, inv, q) == (200, [0])
    assert answer(admin, none, inv, q) == (404, "Organization not found: " + none)
    assert answer(admin, org, none, q) == (404, "JSON store not found: " + none)
    assert answer(admin, org, inv, none) == (404, "Query not found: " + none)
    assert answer(outsider, hidden, inv, q) == (404, "Organization not found: " + hidden)
    assert answer(outsider, hidden, none, none) == (404, "Organization not found: " + hidden)
    assert answer(outsider, org, none, q) == (404, "JSON store not found: " + none)
    denied = (403, "The current user (%s) doesn't have the necessary access level (READER) to the JSON store: %s"
              % (outsider.username, inv))
    assert answer(outsider, org, inv, q) == denied
    assert answer(outsider, org, inv, none) == denied


def test_exec_filter_rules(admin, hosts):
    name, _ = save_query(admin, hosts, SELECT_ALL)
    exec_url = hosts + "/query/" + name + "/exec"
    for bad in ([1], "x", 5, True):
        r = admin.post(exec_url, json=bad)
        assert r.status_code == 400 and "JSON object" in r.json()["message"]
    r = admin.post(exec_url, data="{bad", headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    r = admin.post(exec_url)                       # a placeholder and no filter
    assert r.status_code == 400 and "placeholder" in r.json()["message"]
    plain, _ = save_query(admin, hosts, "select count(*) from inventory_data")
    assert admin.post(hosts + "/query/" + plain + "/exec", json={"env": "prod"}).json() == [3]  # ignored


def test_runtime_failures_are_400_with_reason(admin, hosts):
    r = run(admin, hosts, "select (item_data->>'host')::boolean from inventory_data", status=400)
    assert "invalid input syntax for type boolean" in r["message"]
    r = run(admin, hosts, "select item_data->>'host' from inventory_data", status=400)
    assert r["message"].startswith("Invalid JSON value")
    r = run(admin, hosts, "select item_path::jsonb from inventory_data", status=400)
    assert "malformed JSON" in r["message"]
    # saved as Concord saves it (`select *` too), refused when it runs
    r = run(admin, hosts, "select item_path, item_data from inventory_data", status=400)
    assert "exactly one column to run, this one returns 2" in r["message"]


# ---- containment semantics ----

@pytest.mark.parametrize("flt,expect", [
    ({}, ["db1", "web1", "web2"]),
    ({"env": "prod"}, ["db1", "web1"]),
    ({"env": "prod", "host": "web1"}, ["web1"]),
    ({"env": "PROD"}, []),
    ({"port": 80}, ["web1"]),
    ({"port": 80.0}, ["web1"]),
    ({"port": 5432}, ["db1"]),
    ({"port": "80"}, []),
    ({"enabled": True}, ["db1"]),
    ({"enabled": 1}, []),
    ({"owner": None}, ["db1"]),
    ({"tags": ["web"]}, ["web1", "web2"]),
    ({"tags": ["edge", "web"]}, ["web1"]),
    ({"tags": []}, ["db1", "web1", "web2"]),
    ({"tags": "web"}, []),
    ({"ipv4": {"address": "10.0.0.2"}}, ["web2"]),
    ({"ipv4": {}}, ["web1", "web2"]),
    ({"ipv4": {"address": "10.0.0.2", "mask": "x"}}, []),
    ({"nosuch": 1}, []),
])
def test_containment(admin, hosts, flt, expect):
    rows = run(admin, hosts, SELECT_ALL + " order by item_path", flt)
    assert [r["host"] for r in rows] == expect
    # the same filter outside a plain conjunct (no key index) gives the same rows
    rows = run(admin, hosts, SELECT_ALL.replace("where", "where 1 = 1 and (") + " or false) order by item_path", flt)
    assert [r["host"] for r in rows] == expect


# ---- dialect ----

@pytest.mark.parametrize("text,expect", [
    ("select to_json(item_data->'ipv4'->>'address') from inventory_data where item_path = 'web2'", ["10.0.0.2"]),
    ("select item_data->'tags'->0 from inventory_data where item_path = 'web1'", ["web"]),
    ("select (item_data->>'port')::int + 1 from inventory_data where item_data->>'env' = 'test'", [8081]),
    ("select cast(item_data->>'port' as integer) from inventory_data where item_path = 'web2'", [8080]),
    ("select item_data::text from inventory_data where item_path = 'web2'", [HOSTS["web2"]]),
    ("select json_build_object('host', item_path, 'data', item_data->'ipv4') from inventory_data "
     "where item_path = 'web1'", [{"host": "web1", "data": {"address": "10.0.0.1"}}]),
    ("select jsonb_build_object('n', count(*)) from inventory_data", [{"n": 3}]),
    ("select to_json(t) from inventory_data, jsonb_array_elements(item_data->'tags') t where item_path = 'web1'",
     ["web", "edge"]),
    ("select to_json(tag) from inventory_data, jsonb_array_elements_text(item_data->'tags') as x(tag) "
     "where item_path = 'db1'", ["db"]),
    ("select count(*) from inventory_data where item_data->>'host' ilike 'WEB%'", [2]),
    ("select count(*) from inventory_data where item_data->>'host' like 'WEB%'", [0]),
    ("with p as (select item_path from inventory_data where item_data @> '{\"env\":\"prod\"}'::jsonb "
     "order by item_path) select json_agg(item_path) from p", [["db1", "web1"]]),
    ("with p as (select item_data from inventory_data where item_data->>'env' = 'prod') select count(*) from p", [2]),
    ("select to_json(jsonb_typeof(item_data->'tags')) from inventory_data where item_path = 'db1'", ["array"]),
    ("select to_json(inventory_id is not null) from inventory_data limit 1", [True]),
    # Concord's table name reads the same rows in inventory queries too (one storage)
    ("select count(*) from json_store_data where item_data @> '{\"env\":\"prod\"}'::jsonb", [2]),
])
def test_dialect(admin, hosts, text, expect):
    assert run(admin, hosts, text) == expect


# ---- sandbox: escape attempts ----

# Also run against the JSON store routes (test_json_store.py): one sandbox for both.
ESCAPES = [
    ("select to_json(username) from users", "'users' is not allowed"),
    ("select (select to_json(group_concat(name)) from sqlite_master)", "'sqlite_master' is not allowed"),
    ("select to_json(sql) from \"sqlite_schema\"", "not allowed"),
    ("select item_data from inventory_items", "'inventory_items' is not allowed"),
    # the SQLite sandbox's own tables: the candidates of a filter, the containment index
    ("select to_json(id) from accord_inv_cands", "'accord_inv_cands' is not allowed"),
    ("select to_json(item) from inventory_postings", "'inventory_postings' is not allowed"),
    ("select 1 from inventory_data; delete from users", "only one statement"),
    ("select item_data from inventory_data union select key_hash from api_keys", "'api_keys' is not allowed"),
    ("with inventory_data as (select * from inventory_items) select item_data from inventory_data",
     "must not be named inventory_data"),
    ("with json_store_data as (select * from inventory_items) select item_data from json_store_data",
     "must not be named json_store_data"),
    ("select item_data from main.inventory_data", "schema-qualified"),
    ("select item_data from public.json_store_data", "schema-qualified"),
    ("select item_data from json_store_data_view_restricted", "'json_store_data_view_restricted' is not allowed"),
    ("select item_data from json_store_data union select key_hash from api_keys", "'api_keys' is not allowed"),
    ("select item_data from json_store_data j, inventory_items i", "'inventory_items' is not allowed"),
    ("select load_extension('/tmp/x.so')", "load_extension"),
    ("select length(randomblob(1000000000))", "randomblob"),
    ("select to_json(name) from pragma_table_info('users')", "pragma_table_info"),
    ("pragma table_info(users)", "must be a SELECT"),
    ("attach database '/tmp/x.db' as x", "must be a SELECT"),
    ("select readfile('/etc/passwd')", "readfile"),
    ("select $$x$$", "'$' is not supported"),
    ("select item_data from inventory_data where item_path = ? and item_data @> ?::jsonb",
     "at most one ? placeholder"),
    # PostgreSQL: the settings that pick the role and the rows, and server functions
    ("select set_config('role', 'accord', false)", "set_config"),
    ("select to_json(current_setting('accord.inventory'))", "current_setting"),
    ("select \"set_config\"('accord.inventory', '1', true)", "syntax error"),
    ("select pg_catalog.set_config('accord.inventory', '1', true)", "syntax error"),
    ("select to_json(pg_read_file('/etc/passwd'))", "pg_read_file"),
    ("select to_json(x) from inventory_data, pg_ls_dir('.') x", "pg_ls_dir"),
    ("select to_json(pg_sleep(5))", "pg_sleep"),
    ("select to_json(set_config) from inventory_data, jsonb_array_elements(item_data) as x(set_config) "
     "where set_config('role', 'accord', true) is null", "set_config"),
]


@pytest.mark.parametrize("text,message", ESCAPES)
def test_escape_attempts_refused(admin, hosts, text, message):
    _, r = save_query(admin, hosts, text, status=400)
    assert message in r.json()["message"], r.text


def test_escape_attempts_that_run_see_only_own_rows(admin, hosts):
    other, _ = make_inventory(admin, items={"secret": {"password": "hunter2"}})
    assert run(admin, hosts, "select count(*) from inventory_data where item_data->>'password' = 'hunter2'") == [0]
    # the containment filter alone (the key index on SQLite, the filter view on PostgreSQL)
    assert run(admin, hosts, "select count(*) from inventory_data where item_data @> ?::jsonb",
               {"password": "hunter2"}) == [0]
    assert run(admin, hosts, "select count(*) from json_store_data where item_data @> ?::jsonb",
               {"password": "hunter2"}) == [0]
    assert run(admin, hosts, "select to_json(';drop table users;'::text) from inventory_data limit 1") == [";drop table users;"]
    assert run(admin, hosts, "select count(*) from inventory_data -- ; delete from users") == [3]
    assert run(admin, hosts, "select count(*) from inventory_data where item_data @> ?::jsonb",
               {"host": "x' or '1'='1"}) == [0]
    # users and keys are still there
    assert admin.get("/api/v1/apikey").status_code == 200
    assert run(admin, other, "select count(*) from inventory_data") == [1]


def test_time_and_row_limits(fresh_server):
    srv = fresh_server(args=["--limit-query-timeout-ms", "300", "--limit-query-rows", "2"]).start()
    c = Client(srv.url, ADMIN_KEY)
    base, _ = make_inventory(c, items={"a": {"x": 1}, "b": {"x": 2}, "c": {"x": 3}})
    r = run(c, base, "with recursive r(n) as (select 1 union all select n + 1 from r) select count(*) from r",
            status=400)
    assert "stopped after 300 ms" in r["message"]
    r = run(c, base, "select item_data from inventory_data", status=400)
    assert "more than 2 rows" in r["message"]
    assert run(c, base, "select item_data from inventory_data order by item_path limit 2") == [{"x": 1}, {"x": 2}]


# ---- access ----

def test_outsiders_get_403(admin, new_user, hosts):
    outsider = new_user()
    # a new user is a member of Default's team `default` (as in Concord): out of it
    r = admin.delete("/api/v1/org/Default/team/default/users", json=[outsider.username])
    assert r.status_code == 200, r.text
    name, _ = save_query(admin, hosts, "select count(*) from inventory_data")
    for method, path in [("GET", hosts), ("GET", hosts + "/data"), ("GET", hosts + "/data/web1"),
                         ("GET", hosts + "/query"), ("POST", hosts + "/query/" + name + "/exec"),
                         ("DELETE", hosts), ("GET", hosts + "/access")]:
        assert outsider.req(method, path).status_code == 403, (method, path)
    assert outsider.post(hosts + "/data/x", json={"a": 1}).status_code == 403
    assert outsider.post("/api/v1/org/Default/inventory", json={"name": unique("inv")}).status_code == 403
    assert hosts.rsplit("/", 1)[1] not in [i["name"] for i in outsider.get("/api/v1/org/Default/inventory").json()]


def test_public_inventory_members_read_only(admin, new_user):
    member = new_user()
    org = org_with_members(admin, member)
    base, _ = make_inventory(admin, org=org, items={"h": {"a": 1}})
    name, _ = save_query(admin, base, "select count(*) from inventory_data")
    assert member.get(base + "/data/h").json() == {"h": {"a": 1}}
    assert member.post(base + "/query/" + name + "/exec").json() == [1]
    assert member.post(base + "/data/h", json={"a": 2}).status_code == 403
    _, r = save_query(member, base, "select 1", status=403)
    assert member.delete(base).status_code == 403


def test_private_inventory_team_rules(admin, new_user):
    reader, writer = new_user(), new_user()
    org = org_with_members(admin)
    for team, user in (("readers", reader), ("writers", writer)):
        assert admin.post("/api/v1/org/%s/team" % org, json={"name": team}).status_code == 200
        assert admin.put("/api/v1/org/%s/team/%s/users" % (org, team), json=[{"username": user.username}]).status_code == 200
    base, _ = make_inventory(admin, org=org, visibility="PRIVATE", items={"h": {"a": 1}})
    assert reader.get(base + "/data").status_code == 403          # a member, but no rule yet
    assert base.rsplit("/", 1)[1] not in [i["name"] for i in reader.get("/api/v1/org/%s/inventory" % org).json()]
    for team, level in (("readers", "READER"), ("writers", "WRITER")):
        r = admin.post(base + "/access", json={"teamName": team, "level": level})
        assert r.json() == {"ok": True, "result": "UPDATED"}
    rules = admin.get(base + "/access").json()
    assert [(r["teamName"], r["level"]) for r in rules] == [("readers", "READER"), ("writers", "WRITER")]
    assert reader.get(base + "/data").status_code == 200
    assert reader.post(base + "/data/h", json={"a": 2}).status_code == 403
    assert writer.post(base + "/data/h", json={"a": 2}).status_code == 200
    name, _ = save_query(writer, base, "select cast(to_json(item_data) as varchar) from inventory_data")
    assert reader.post(base + "/query/" + name + "/exec").json() == [{"a": 2}]
    assert writer.delete(base).status_code == 403
    assert writer.post(base + "/access", json={"teamName": "writers", "level": "OWNER"}).status_code == 403
    assert admin.post(base + "/access/bulk", json=[]).json() == {"ok": True, "result": "UPDATED"}
    assert reader.get(base + "/data").status_code == 403
