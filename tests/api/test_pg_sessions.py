"""On PostgreSQL a server's threads that answer requests share its database sessions
(store_conn_release, src/store/store.h): requests answered one after another, by whichever
HTTP worker or event loop takes each, need one session between them, not one per thread
(each session is a PostgreSQL server process with its own caches, and counts against the
cluster's max_connections)."""
import threading

import conftest
from conftest import ADMIN_KEY, Client, unique
from db_util import pg_only

pytestmark = pg_only


def sessions(srv):
    """The server's sessions open on its database now."""
    return int(conftest._psql(conftest.TEST_DB, "SELECT count(*) FROM pg_stat_activity WHERE datname = '%s' "
                                                "AND application_name = 'accord'" % srv.db_name))


def test_requests_one_after_another_share_one_session(fresh_server):
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    assert admin.get("/api/v1/org").status_code == 200
    before = sessions(srv)
    for i in range(25):
        org = unique("org")
        r = admin.post("/api/v1/org", json={"name": org})  # a change: on a worker
        assert r.status_code == 200, r.text
        assert admin.get("/api/v1/org").status_code == 200  # a quick read: on the event loop
        assert admin.get("/api/v2/process?limit=5").status_code == 200
        assert admin.get("/api/v1/org/%s/project" % org).status_code == 200
    # the one the first request opened serves them all (the server's other threads keep
    # theirs: the dispatcher, the scheduler; none of them starts in this test)
    assert sessions(srv) == before


def test_requests_at_once_each_see_their_own_writes(fresh_server):
    srv = fresh_server().start()
    failures = []

    def client(n):
        admin = Client(srv.url, ADMIN_KEY)
        for _ in range(12):
            org = unique("org%d" % n)
            r = admin.post("/api/v1/org", json={"name": org})
            if r.status_code != 200:
                failures.append(r.text)
                continue
            # the next request may run on another thread with another session: it sees
            # the committed org, and a refused request leaves nothing open behind it
            r = admin.get("/api/v1/org/%s" % org)
            if r.status_code != 200 or r.json().get("name") != org:
                failures.append(r.text)
            r = admin.post("/api/v1/org", json={"name": "1"})
            if r.status_code != 400:
                failures.append(r.text)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    r = Client(srv.url, ADMIN_KEY).get("/api/v1/org?limit=100")
    assert r.status_code == 200 and len([o for o in r.json() if o["name"].startswith("org")]) == 48, r.text
