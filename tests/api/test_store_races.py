"""Requests racing each other get 404/409 with a clear message, never a 500 or a false
error (issue 15 part 11)."""
import threading
import time

from conftest import ADMIN_KEY, Client, unique


def hammer(url, seconds, changer, readers, allowed):
    """Runs changer(client) in a loop on one thread and every reader(client) on its own,
    for `seconds`; returns the answers outside `allowed` (status, body)."""
    stop = time.time() + seconds
    bad = []

    def loop(fn, check):
        c = Client(url, ADMIN_KEY)
        while time.time() < stop:
            r = fn(c)
            if check and r.status_code not in allowed:
                bad.append((r.status_code, r.text[:300]))

    threads = [threading.Thread(target=loop, args=(changer, False))]
    threads += [threading.Thread(target=loop, args=(fn, True)) for fn in readers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return bad


def test_item_write_racing_inventory_delete(server):
    name = unique("inv")
    base = "/api/v1/org/Default/inventory/" + name
    state = {"n": 0}

    def recreate(c):
        c.post("/api/v1/org/Default/inventory", json={"name": name})
        r = c.delete(base)
        state["n"] += 1
        return r

    def write(c):
        return c.post(base + "/data/a/b", json={"x": 1})

    bad = hammer(server.url, 4, recreate, [write, write, write], (200, 404))
    assert state["n"] > 5
    assert not bad, bad[:3]


def test_export_racing_rename(server):
    org = "Default"
    a, b = unique("sa"), unique("sb")
    admin = Client(server.url, ADMIN_KEY)
    r = admin.post("/api/v1/org/%s/secret" % org, files={"type": (None, "data"), "name": (None, a),
                                                          "data": (None, "payload")})
    assert r.status_code == 200, r.text
    cur = {"name": a}

    def rename(c):
        new = b if cur["name"] == a else a
        r = c.post("/api/v1/org/%s/secret/%s" % (org, cur["name"]), json={"name": new})
        if r.status_code == 200:
            cur["name"] = new
        return r

    def export(name):
        def fn(c):
            r = c.post("/api/v1/org/%s/secret/%s/data" % (org, name))
            if r.status_code == 200:
                assert r.content == b"payload"
            if r.status_code == 409:
                assert "was renamed or moved while it was read" in r.json()["message"]
            return r
        return fn

    bad = hammer(server.url, 6, rename, [export(a), export(b)] * 4, (200, 404, 409))
    assert not bad, bad[:3]
