"""Slow inventory queries cannot take every HTTP worker (issue 15 part 11)."""
import threading
import time

from conftest import ADMIN_KEY, Client, unique
from test_inventory import make_inventory, save_query

SLOW = "with recursive r(n) as (select 1 union all select n + 1 from r) select count(*) from r"


def user_with_admin_role(admin):
    name = unique("q")
    assert admin.post("/api/v1/user", json={"username": name, "roles": ["concordAdmin"]}).status_code == 200
    r = admin.post("/api/v1/apikey", json={"username": name})
    assert r.status_code == 200, r.text
    return Client(admin.url, r.json()["key"])


def run_all(clients, base, name):
    answers = []

    def one(c):
        r = c.post(base + "/query/" + name + "/exec", json={}, timeout=60)
        answers.append((r.status_code, r.json().get("message", "") if r.status_code != 200 else ""))

    threads = [threading.Thread(target=one, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    return threads, answers


def test_slow_queries_leave_workers_for_writes(fresh_server):
    srv = fresh_server(args=["--http-threads", "4", "--limit-query-timeout-ms", "3000"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    base, _ = make_inventory(admin, items={"a": {"x": 1}})
    name, _ = save_query(admin, base, SLOW)
    users = [user_with_admin_role(admin) for _ in range(4)]
    threads, answers = run_all([u for u in users for _ in range(2)], base, name)
    time.sleep(0.5)
    r = admin.post(base + "/data/b", json={"y": 2}, timeout=30)
    # The write was answered while the queries still ran (none of them had reached its
    # timeout yet), not after they ended.
    ended_before_write = [a for a in list(answers) if a[0] != 503]
    for t in threads:
        t.join()
    assert r.status_code == 200, r.text
    assert ended_before_write == [], "a write waited behind the queries: %s" % ended_before_write
    timed_out = [a for a in answers if a[0] == 400 and "stopped after" in a[1]]
    refused = [a for a in answers if a[0] == 503]
    assert len(timed_out) == 2, answers  # --http-threads 4: half of them may run queries
    assert len(refused) == 6, answers
    assert all("too many inventory queries are running (limit 2" in m for _, m in refused), refused


def test_per_user_query_limit(fresh_server):
    srv = fresh_server(args=["--limit-query-timeout-ms", "2000", "--limit-query-concurrency", "8",
                             "--http-threads", "8"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    base, _ = make_inventory(admin, items={"a": {"x": 1}})
    name, _ = save_query(admin, base, SLOW)
    threads, answers = run_all([Client(srv.url, ADMIN_KEY) for _ in range(3)], base, name)
    for t in threads:
        t.join()
    refused = [a for a in answers if a[0] == 503]
    assert len(refused) == 1, answers
    assert "you have 2 inventory queries running" in refused[0][1]
    r = admin.post(base + "/query/" + name + "/exec", json={}, timeout=30)
    assert r.status_code == 400 and "stopped after" in r.json()["message"]  # the slots were given back
