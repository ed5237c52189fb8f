"""The containment index of inventory and JSON store items (issue 27 item 3): a filter
`item_data @> ?` answered through the index (SQLite: inventory_postings, migration 041;
PostgreSQL: GIN) gives exactly what a full scan and PostgreSQL's own rules give, for the
tricky cases of @> (arrays, nested and empty containers, null, 1 vs 1.0, strings that look
like numbers, keys with dots); on SQLite the query really reads the postings, item writes
and deletes leave none stale, and the migration builds them for items stored before it."""
import json

import pytest

from conftest import ADMIN_KEY, Client, sqlite_only, unique
from db_util import execute, scalar
from test_inventory import make_inventory, run
from test_json_store import make_store, put

# Read through the index: an AND chain holding `item_data @> ?` (inventory/dialect.h).
INDEXED = "select to_json(item_path) from inventory_data where item_data @> ?::jsonb"
# The same condition where no index can serve it: every item is checked.
SCAN = "select to_json(item_path) from inventory_data where (item_data @> ?::jsonb or 1 = 0)"

ITEMS = {
    "a": {"n": 1, "s": "1", "f": 1.0, "z": None, "t": True, "arr": [1, [2, 3], {"k": "v"}],
          "o": {"p": {"q": "deep"}}, "eo": {}, "ea": [], "neg": -0.0, "x.y": "dotted", "k[]": "br"},
    "b": {"n": 1.0, "s": 1, "z": False, "arr": [[1], 2], "o": {"p": {}}, "eo": {"x": 1}, "ea": [0],
          "neg": 0, "x": {"y": "dotted"}, "k": ["br"]},
    "c": {"n": "1", "s": "1.0", "z": "null", "arr": "1", "o": [], "eo": [], "ea": {}, "e": ""},
    "d": {"n": 10, "arr": [], "o": {"p": {"q": "deep", "r": 2}}, "t": "true", "big": 9007199254740993,
          "f": 1.5},
    "e": {"n": 0.1, "t": 1, "arr": [[[]]], "o": {"p": [{"q": "deep"}]}, "z": [None]},
}

FILTERS = [
    {"n": 1}, {"n": 1.0}, {"n": "1"}, {"s": "1"}, {"s": 1}, {"f": 1}, {"n": 0.1},
    {"z": None}, {"z": False}, {"z": "null"}, {"z": [None]}, {"t": True}, {"t": 1}, {"t": "true"},
    {"arr": [1]}, {"arr": [[2]]}, {"arr": [{"k": "v"}]}, {"arr": [2]}, {"arr": [[1]]}, {"arr": []},
    {"arr": [[]]}, {"arr": [{}]}, {"arr": [[[]]]}, {"arr": "1"}, {"arr": [1, 1]},
    {"o": {}}, {"o": []}, {"o": {"p": {}}}, {"o": {"p": {"q": "deep"}}}, {"o": {"p": [{"q": "deep"}]}},
    {"o": {"p": [{}]}}, {"eo": {}}, {"eo": []}, {"ea": []}, {"ea": {}}, {"ea": [0]},
    {"neg": 0}, {"neg": -0.0}, {"x.y": "dotted"}, {"x": {"y": "dotted"}}, {"k[]": "br"}, {"k": ["br"]},
    {"e": ""}, {"big": 9007199254740993}, {"big": 9007199254740992}, {}, {"n": 1, "arr": [1]},
    {"n": 1, "missing": None}, {"missing": {}},
]


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def scalar_eq(a, b):
    if is_num(a) and is_num(b):
        return a == b if isinstance(a, int) and isinstance(b, int) else float(a) == float(b) or a == b
    return type(a) is type(b) and a == b


def contains(a, b):
    """PostgreSQL's jsonb @>, below the top level."""
    if isinstance(b, dict):
        return isinstance(a, dict) and all(k in a and contains(a[k], v) for k, v in b.items())
    if isinstance(b, list):
        return isinstance(a, list) and all(
            any(contains(x, v) if isinstance(v, (dict, list)) else not isinstance(x, (dict, list)) and scalar_eq(x, v)
                for x in a) for v in b)
    return not isinstance(a, (dict, list)) and scalar_eq(a, b)


def expected(items, flt):
    return sorted(path for path, data in items.items() if contains(data, flt))


def results(admin, base, flt):
    return sorted(run(admin, base, INDEXED, flt)), sorted(run(admin, base, SCAN, flt))


def check_all(admin, base, items):
    for flt in FILTERS:
        indexed, scan = results(admin, base, flt)
        assert indexed == scan == expected(items, flt), json.dumps(flt)


def rid(server, name):
    return scalar(server.data_dir, "SELECT rid FROM inventories WHERE name = '%s'" % name)


def postings(server, name):
    return scalar(server.data_dir, "SELECT count(*) FROM inventory_postings WHERE inventory = %d" % rid(server, name))


def test_tricky_filters_match_a_full_scan(admin):
    base, _ = make_inventory(admin, items=ITEMS)
    check_all(admin, base, ITEMS)
    # the oracle itself: a few of PostgreSQL's answers written out
    assert expected(ITEMS, {"n": 1}) == ["a", "b"]
    assert expected(ITEMS, {"arr": [[1]]}) == ["b"]
    assert expected(ITEMS, {"o": {}}) == ["a", "b", "d", "e"]
    assert expected(ITEMS, {"arr": []}) == ["a", "b", "d", "e"]


def test_json_store_filters_match_a_full_scan(admin):
    _, base = make_store(admin)
    for path, data in ITEMS.items():
        put(admin, base, path, data)
    for flt in ({"n": 1}, {"arr": [[2]]}, {"o": {"p": {}}}, {"x.y": "dotted"}, {"eo": {}}):
        for i, text in enumerate((INDEXED, SCAN)):
            name = unique("q")
            r = admin.post(base + "/query", json={"name": name, "text": text})
            assert r.status_code == 200, r.text
            r = admin.post(base + "/query/%s/exec" % name, json=flt)
            assert r.status_code == 200, r.text
            assert sorted(r.json()) == expected(ITEMS, flt), (text, flt)


@sqlite_only
def test_the_query_reads_the_postings(server, admin):
    base, _ = make_inventory(admin, items=ITEMS)
    name = base.rsplit("/", 1)[1]
    assert postings(server, name) > 0
    assert results(admin, base, {"o": {"p": {"q": "deep"}}}) == (["a", "d"], ["a", "d"])
    # without its postings an item is invisible to an indexed filter, not to a scan: the
    # index is what the filter reads (and only a narrowing: the scan still finds it)
    execute(server.data_dir, "DELETE FROM inventory_postings WHERE inventory = %d" % rid(server, name))
    assert results(admin, base, {"o": {"p": {"q": "deep"}}}) == ([], ["a", "d"])
    # the empty filter needs no postings
    assert sorted(run(admin, base, INDEXED, {})) == sorted(ITEMS)


# Many items with keys of very different frequencies: a filter of several keys reads the
# postings of each (rare ones merged, common ones searched), as sorted lists of items.
MANY = {"h%03d" % i: {"kind": "host", "env": ["prod", "test", "dev"][i % 3], "role": ["web", "db"][i % 2 if i < 90 else 0],
                      "rack": "r%d" % (i % 7), "n": i % 5, "tags": ["t%d" % (i % 4)] + (["gpu"] if i % 11 == 0 else []),
                      "os": {"family": ["rh", "deb"][i % 2], "v": i % 3}}
        for i in range(180)}
MANY_FILTERS = [
    {"kind": "host", "env": "prod", "role": "web"}, {"rack": "r3", "kind": "host"}, {"env": "dev", "rack": "r1", "n": 2},
    {"tags": ["gpu"], "kind": "host"}, {"tags": ["gpu", "t1"]}, {"os": {"family": "deb", "v": 0}, "env": "test"},
    {"os": {"family": "rh"}, "role": "db"}, {"kind": "host", "n": 0}, {"kind": "host", "env": "none"},
    {"rack": "r2", "n": 9}, {"kind": "vm"}, {"role": "web", "env": "prod", "rack": "r4", "n": 3, "kind": "host"},
]


def test_filters_of_many_keys_over_many_items(admin):
    base, _ = make_inventory(admin, items=MANY)
    for flt in MANY_FILTERS:
        indexed, scan = results(admin, base, flt)
        assert indexed == scan == expected(MANY, flt), json.dumps(flt)
    assert len(expected(MANY, MANY_FILTERS[0])) > 10


@sqlite_only
def test_every_key_of_the_filter_narrows(server, admin):
    """Not only the two rarest keys: the postings of a third, common one are intersected too
    (an item without that posting is left out by the index, found by a scan)."""
    items = {"p%02d" % i: {"kind": "host", "env": "prod" if i < 12 else "test", "role": "web" if i % 2 else "db"}
             for i in range(48)}
    base, _ = make_inventory(admin, items=items)
    name = base.rsplit("/", 1)[1]
    inv = rid(server, name)
    execute(server.data_dir,
            "DELETE FROM inventory_postings WHERE inventory = %d AND hash = (SELECT hash FROM inventory_postings"
            " WHERE inventory = %d GROUP BY hash ORDER BY count(*) DESC LIMIT 1) AND item = (SELECT id FROM"
            " inventory_items WHERE inventory = %d AND item_path = 'p01')" % (inv, inv, inv))
    flt = {"kind": "host", "env": "prod", "role": "web"}
    indexed, scan = results(admin, base, flt)
    assert scan == expected(items, flt) == ["p%02d" % i for i in range(1, 12, 2)]
    assert indexed == [p for p in scan if p != "p01"]


@sqlite_only
def test_writes_leave_no_stale_postings(server, admin):
    """Replaced and deleted items, through both APIs, hold exactly the postings that the same
    final items written once hold; deleting the inventory takes them all."""
    final = {"a": ITEMS["b"], "b": {}, "c": ITEMS["c"], "e": {"n": 2, "arr": [[3]]}}
    base, _ = make_inventory(admin, items=ITEMS)
    name = base.rsplit("/", 1)[1]
    for path, data in (("a", ITEMS["b"]), ("b", {}), ("e", ITEMS["d"]), ("e", {"n": 2, "arr": [[3]]})):
        assert admin.post(base + "/data/" + path, json=data).status_code == 200
    assert admin.delete(base + "/data/d").status_code == 200
    fresh, _ = make_inventory(admin, items=final)
    assert postings(server, name) == postings(server, fresh.rsplit("/", 1)[1]) > 0
    check_all(admin, base, final)

    store, sbase = make_store(admin)
    for path, data in ITEMS.items():
        put(admin, sbase, path, data)
    for path, data in (("a", ITEMS["b"]), ("b", {}), ("e", {"n": 2, "arr": [[3]]})):
        put(admin, sbase, path, data)
    assert admin.delete(sbase + "/item/d").status_code == 200
    assert postings(server, store) == postings(server, name)

    orphans = "SELECT count(*) FROM inventory_postings p WHERE NOT EXISTS (SELECT 1 FROM inventory_items i" \
              " WHERE i.id = p.item AND i.inventory = p.inventory)"
    assert scalar(server.data_dir, orphans) == 0
    gone = rid(server, name)
    assert admin.delete("/api/v1/org/Default/inventory/" + name).status_code == 200
    assert scalar(server.data_dir, "SELECT count(*) FROM inventory_postings WHERE inventory = %d" % gone) == 0
    assert scalar(server.data_dir, orphans) == 0


@sqlite_only
def test_the_migration_builds_the_postings_of_existing_items(fresh_server):
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    base, _ = make_inventory(admin, items=ITEMS)
    name = base.rsplit("/", 1)[1]
    before = postings(srv, name)
    assert srv.stop() == 0
    # the database as it was before migration 041 (its key table, left empty, goes with it)
    execute(srv.data_dir, "DROP TRIGGER inventory_postings_gone; DROP TABLE inventory_postings;"
                          " DELETE FROM schema_migrations WHERE number = 41;"
                          " CREATE TABLE inventory_item_keys (inventory INTEGER NOT NULL, key TEXT NOT NULL,"
                          " value NOT NULL, item INTEGER NOT NULL, PRIMARY KEY (inventory, key, value, item))"
                          " WITHOUT ROWID")
    srv.start()
    admin = Client(srv.url, ADMIN_KEY)
    assert postings(srv, name) == before
    check_all(admin, base, ITEMS)


@pytest.mark.parametrize("flt", [{"n": 1}, {"o": {"p": {"q": "deep"}}}])
def test_other_inventories_stay_out(admin, flt):
    """Two inventories with the same items: each filter finds only its own."""
    one, _ = make_inventory(admin, items=ITEMS)
    two, _ = make_inventory(admin, items={"only": ITEMS["a"]})
    assert results(admin, two, flt) == (["only"], ["only"])
    assert results(admin, one, flt)[0] == expected(ITEMS, flt)


# Values whose printed form is easy to get wrong: reals, escapes, non-ASCII, big integers.
PRINTED = {
    "p1": {"r": 1.5, "e": 2.5e-7, "t": 0.1, "neg": -0.0, "big": 9223372036854775807, "small": -9223372036854775808,
           "s": "tab\there \"q\" \\ / é 日本 😀 \u2028 \u007f \u0001", "k\"ey": [1, {"": None}], "u": "\u00e9"},
    "p2": {"o": {"p": {"q": [[], {}, [1, 2]]}}, "s": "plain \u00e9\\\"\n", "n": 18, "kind": "x"},
    "p3": {"kind": "x", "arr": ["a", "b"], "int": -2, "r": [2.5]},
    "p4": {"kind": "x", "s": "plain", "big": 1234567890123456789, "t": True},
}


@pytest.mark.parametrize("text", [
    "select item_data from inventory_data where item_data @> ?::jsonb",
    "select cast(to_json(item_data) as varchar) from inventory_data where item_data @> ?::jsonb",
    "select item_data->'o' from inventory_data where item_data @> ?::jsonb",
    "select item_data from inventory_data where (item_data @> ?::jsonb or 1 = 0) order by item_path desc",
])
def test_rows_answers_print_as_before(admin, text):
    """An inventory's rows answer (copied from the stored items where it can) is byte for
    byte what the JSON store route answers for the same rows (built and printed by jansson)."""
    name, sbase = make_store(admin)
    for path, data in PRINTED.items():
        put(admin, sbase, path, data)
    q = unique("q")
    assert admin.post(sbase + "/query", json={"name": q, "text": text}).status_code == 200
    inv = "/api/v1/org/Default/inventory/" + name
    for flt in ({}, {"kind": "x"}, {"s": "plain"}):
        via_store = admin.post(sbase + "/query/%s/exec" % q, json=flt)
        via_inventory = admin.post(inv + "/query/%s/exec" % q, json=flt)
        assert via_store.status_code == via_inventory.status_code == 200, via_inventory.text
        assert via_inventory.content == via_store.content, flt
        assert len(via_inventory.json()) == len([p for p in PRINTED.values() if contains(p, flt)])
