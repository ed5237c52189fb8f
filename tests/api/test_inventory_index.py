"""The containment index of inventory and JSON store items (issue 27 item 3): a filter
`item_data @> ?` answered through the index (SQLite: inventory_postings, migrations 041 and
046, each key's list of items in blocks; PostgreSQL: GIN) gives exactly what a full scan and PostgreSQL's own rules give, for the
tricky cases of @> (arrays, nested and empty containers, null, 1 vs 1.0, strings that look
like numbers, keys with dots); on SQLite the query really reads the postings, item writes
and deletes leave none stale, lists of many items are kept in well-formed blocks through
writes in any order, and the migrations build them for items stored before them."""
import json

import pytest

from conftest import ADMIN_KEY, Client, sqlite_only, unique
from db_util import execute, rows, scalar
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


# The blocks of the index (store/inventory_postings.h, base/i64_block.h), read here with a
# decoder of our own: a row (inventory, hash, first_item, items) holds first_item, then an
# item for each gap in items (LEB128 varints, 7 bits a byte, lowest first, minimal).
BLOCK_IDS = 128
BLOCK_BYTES = 512


def block_items(first, raw):
    items, gap, shift = [first], 0, 0
    for i, b in enumerate(raw):
        gap |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            assert gap > 0 and (b or shift == 7), raw  # ascending, minimal
            items.append(items[-1] + gap)
            gap, shift = 0, 0
    assert shift == 0 and -2 ** 63 <= items[-1] < 2 ** 63, raw
    return items


def block_bytes(items):
    out = bytearray()
    for a, b in zip(items, items[1:]):
        gap = b - a
        while gap >= 0x80:
            out.append(gap & 0x7F | 0x80)
            gap >>= 7
        out.append(gap)
    return bytes(out)


def blocks(data_dir, inv):
    """{hash: [(first_item, [items])]} of inventory rid inv, each list's blocks in order."""
    out = {}
    for h, first, raw in rows(data_dir, "SELECT hash, first_item, items FROM inventory_postings WHERE inventory = %d"
                                        " ORDER BY hash, first_item" % inv):
        out.setdefault(h, []).append((first, block_items(first, bytes(raw))))
    return out


def posting_set(data_dir, inv):
    """{(hash, item)} of inventory rid inv, checking that each list's blocks are in order
    without overlap."""
    found = set()
    for h, bl in blocks(data_dir, inv).items():
        flat = [i for _, items in bl for i in items]
        assert flat == sorted(set(flat)), (h, bl)
        found |= {(h, i) for i in flat}
    return found


def postings(server, name):
    return len(posting_set(server.data_dir, rid(server, name)))


def by_path(data_dir, inv):
    """{(hash, item path)} of inventory rid inv: what its items hold, whatever their ids
    (None when a posting names an item the inventory does not have)."""
    paths = dict(rows(data_dir, "SELECT id, item_path FROM inventory_items WHERE inventory = %d" % inv))
    found = posting_set(data_dir, inv)
    if any(item not in paths for _, item in found):
        return None
    return {(h, paths[item]) for h, item in found}


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


def drop_posting(data_dir, inv, item):
    """Takes item out of the block of the inventory's longest list, as a lost posting."""
    h, bl = max(blocks(data_dir, inv).items(), key=lambda kv: sum(len(b[1]) for b in kv[1]))
    first, items = next(b for b in bl if item in b[1])
    rest = [i for i in items if i != item]
    execute(data_dir, "DELETE FROM inventory_postings WHERE inventory = %d AND hash = %d AND first_item = %d"
                      % (inv, h, first))
    if rest:
        execute(data_dir, "INSERT INTO inventory_postings VALUES (%d, %d, %d, X'%s')"
                          % (inv, h, rest[0], block_bytes(rest).hex()))


@sqlite_only
def test_every_key_of_the_filter_narrows(server, admin):
    """Not only the two rarest keys: the postings of a third, common one are intersected too
    (an item without that posting is left out by the index, found by a scan)."""
    items = {"p%02d" % i: {"kind": "host", "env": "prod" if i < 12 else "test", "role": "web" if i % 2 else "db"}
             for i in range(48)}
    base, _ = make_inventory(admin, items=items)
    name = base.rsplit("/", 1)[1]
    inv = rid(server, name)
    drop_posting(server.data_dir, inv, scalar(server.data_dir, "SELECT id FROM inventory_items WHERE inventory = %d"
                                                               " AND item_path = 'p01'" % inv))
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

    for n in (name, store):
        assert by_path(server.data_dir, rid(server, n)) is not None  # no posting of an item that is not there
    gone = rid(server, name)
    assert admin.delete("/api/v1/org/Default/inventory/" + name).status_code == 200
    assert scalar(server.data_dir, "SELECT count(*) FROM inventory_postings WHERE inventory = %d" % gone) == 0


@sqlite_only
def test_the_migration_builds_the_postings_of_existing_items(fresh_server):
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    base, _ = make_inventory(admin, items=ITEMS)
    name = base.rsplit("/", 1)[1]
    before = postings(srv, name)
    assert srv.stop() == 0
    # the database as it was before migration 041 (its key table, left empty, goes with it);
    # 046 then stores 041's postings as blocks
    execute(srv.data_dir, "DROP TRIGGER inventory_postings_gone; DROP TABLE inventory_postings;"
                          " DELETE FROM schema_migrations WHERE number IN (41, 46);"
                          " CREATE TABLE inventory_item_keys (inventory INTEGER NOT NULL, key TEXT NOT NULL,"
                          " value NOT NULL, item INTEGER NOT NULL, PRIMARY KEY (inventory, key, value, item))"
                          " WITHOUT ROWID")
    srv.start()
    admin = Client(srv.url, ADMIN_KEY)
    assert postings(srv, name) == before
    check_all(admin, base, ITEMS)


def as_041(data_dir):
    """Turns the database back into what migration 041 left: a row (inventory, hash, item) per
    posting, decoded from the blocks here, and 046 not applied."""
    postings = [(inv, h, i) for inv, in rows(data_dir, "SELECT DISTINCT inventory FROM inventory_postings")
                for h, i in posting_set(data_dir, inv)]
    execute(data_dir, "DROP TRIGGER inventory_postings_gone; DROP TABLE inventory_postings;"
                      " DELETE FROM schema_migrations WHERE number = 46;"
                      " CREATE TABLE inventory_postings (inventory INTEGER NOT NULL, hash INTEGER NOT NULL,"
                      " item INTEGER NOT NULL, PRIMARY KEY (inventory, hash, item)) WITHOUT ROWID;"
                      " CREATE TRIGGER inventory_postings_gone AFTER DELETE ON inventories BEGIN"
                      " DELETE FROM inventory_postings WHERE inventory = old.rid; END;"
                      + "".join(" INSERT INTO inventory_postings VALUES (%d, %d, %d);" % p for p in postings))
    return len(postings)


def check_blocks(data_dir, inv):
    """Every block of the inventory within its limits; its lists in order, without overlap."""
    for h, bl in blocks(data_dir, inv).items():
        for first, items in bl:
            assert len(items) <= BLOCK_IDS and len(block_bytes(items)) <= BLOCK_BYTES, (h, first)
    return posting_set(data_dir, inv)


# Items whose keys make lists of every length: one key on each item (300 of them: three
# blocks), one on every other, every seventh, and a key of each item alone.
LONG = {"x%03d" % i: {"kind": "host", "even": i % 2 == 0, "seventh": i % 7 == 0, "id": i} for i in range(300)}


@sqlite_only
def test_migration_046_stores_existing_postings_as_blocks(fresh_server):
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    base, _ = make_inventory(admin)
    assert admin.post(base + "/data", json=[{"path": p, "data": d} for p, d in LONG.items()]).status_code == 200
    small, _ = make_inventory(admin, items=ITEMS)
    invs = [rid(srv, b.rsplit("/", 1)[1]) for b in (base, small)]
    before = [by_path(srv.data_dir, inv) for inv in invs]
    assert srv.stop() == 0
    assert as_041(srv.data_dir) == sum(len(b) for b in before)
    srv.start()
    admin = Client(srv.url, ADMIN_KEY)
    assert [by_path(srv.data_dir, inv) for inv in invs] == before
    check_blocks(srv.data_dir, invs[0])
    kind = max(blocks(srv.data_dir, invs[0]).values(), key=len)  # the key of all 300 items
    assert [len(items) for _, items in kind] == [128, 128, 44]
    check_all(admin, small, ITEMS)
    for flt in ({"kind": "host", "even": True, "seventh": True}, {"id": 299}, {"seventh": True, "id": 7}):
        assert sorted(run(admin, base, INDEXED, flt)) == expected(LONG, flt)
    # the writes go on from the converted blocks
    assert admin.post(base + "/data/x300", json={"kind": "host", "even": True}).status_code == 200
    assert admin.delete(base + "/data/x000").status_code == 200
    assert sorted(run(admin, base, INDEXED, {"kind": "host", "even": True}))[-1] == "x300"
    assert len(run(admin, base, INDEXED, {"kind": "host"})) == 300


@sqlite_only
def test_blocks_stay_well_formed_through_writes_in_any_order(server, admin):
    """Lists of hundreds of items written in a shuffled order, in bulk and one by one, changed
    and deleted in the middle and at both ends: the blocks hold exactly what the same final
    items written once hold, each within its limits, and the filters answer as a scan."""
    import random
    rnd = random.Random(7)
    final = dict(LONG)
    order = list(LONG)
    rnd.shuffle(order)
    base, _ = make_inventory(admin)
    inv = rid(server, base.rsplit("/", 1)[1])
    # first without the common key on every third item, in bulk, shuffled (the ids follow
    # the order of writing, so each list grows at its end); then that key added to those
    # items one by one, shuffled: items added in the middle of full blocks
    third = [p for p in order if LONG[p]["id"] % 3 == 0]
    for i in range(0, 300, 60):
        chunk = [{"path": p, "data": dict(LONG[p], kind="later") if p in third else LONG[p]} for p in order[i:i + 60]]
        assert admin.post(base + "/data", json=chunk).status_code == 200
    for p in third:
        assert admin.post(base + "/data/" + p, json=LONG[p]).status_code == 200
    check_blocks(server.data_dir, inv)
    # changes: the common key taken off two thirds of the items (blocks emptied, merged),
    # one item changed twice in one bulk write, deletions at both ends and in the middle
    changed = [{"path": p, "data": {"id": LONG[p]["id"], "odd": True}} for p in sorted(LONG) if LONG[p]["id"] % 3]
    for i in range(0, len(changed), 40):
        assert admin.post(base + "/data", json=changed[i:i + 40]).status_code == 200
    for c in changed:
        final[c["path"]] = c["data"]
    twice = [{"path": "x003", "data": {"kind": "host"}}, {"path": "x003", "data": {"kind": "vm", "id": 3}}]
    assert admin.post(base + "/data", json=twice).status_code == 200
    final["x003"] = twice[1]["data"]
    for p in ["x000", "x299", "x150", "x151", "x152"] + ["x%03d" % i for i in range(30, 90)]:
        assert admin.delete(base + "/data/" + p).status_code == 200
        del final[p]
    held = check_blocks(server.data_dir, inv)
    fresh, _ = make_inventory(admin)
    assert admin.post(fresh + "/data", json=[{"path": p, "data": d} for p, d in final.items()]).status_code == 200
    assert by_path(server.data_dir, inv) == by_path(server.data_dir, rid(server, fresh.rsplit("/", 1)[1]))
    kinds = max(blocks(server.data_dir, inv).values(), key=lambda bl: sum(len(i) for _, i in bl))
    n = sum(len(i) for _, i in kinds)
    assert len(kinds) <= n // (BLOCK_IDS // 4) + 2, [len(i) for _, i in kinds]  # no trail of tiny blocks
    for flt in ({"kind": "host"}, {"kind": "host", "even": True}, {"odd": True, "seventh": True}, {"kind": "vm"},
                {"id": 151}, {"even": False, "kind": "host", "seventh": True}):
        indexed, scan = results(admin, base, flt)
        assert indexed == scan == expected(final, flt), flt
    assert len(held) > 0


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
