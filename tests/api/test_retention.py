"""Retention (docs/operations.md "Retention"): finished processes, or only their logs,
events, attachments or states, are deleted once older than the settings keep them; live
processes and recent ones are never touched; the API keeps answering while it runs."""
import sqlite3
import threading
import time
import uuid

import pytest
import requests

from conftest import ADMIN_KEY, Client, Server, sqlite_only, start_process, wait_process

DAY_MS = 86400 * 1000
FLOW = 'flows:\n  default:\n    - log: "kept or not"\n    - set: {x: 1}\n'


def age(db_path, ids, days):
    """Moves processes days into the past (created and last changed)."""
    db = sqlite3.connect(db_path)
    with db:
        for i in ids:
            db.execute("UPDATE processes SET created_at = created_at - ?, last_updated_at = last_updated_at - ?"
                       " WHERE instance_id = ?", (days * DAY_MS, days * DAY_MS, i))
    db.close()


def clone_old(db_path, template, n, days):
    """n copies of a finished process (row, log, events, status history, attachments),
    days old; returns their ids."""
    db = sqlite3.connect(db_path)
    cols = [r[1] for r in db.execute("PRAGMA table_info(processes)")]
    row = dict(zip(cols, db.execute("SELECT * FROM processes WHERE instance_id = ?", (template,)).fetchone()))
    ids = []
    now = int(time.time() * 1000)
    with db:
        for k in range(n):
            i = str(uuid.uuid4())
            ids.append(i)
            r = dict(row, instance_id=i, created_at=now - days * DAY_MS - k, last_updated_at=now - days * DAY_MS - k,
                     session_hash=None)
            db.execute("INSERT INTO processes (%s) VALUES (%s)" % (",".join(cols), ",".join("?" * len(cols))),
                       [r[c] for c in cols])
            for t in ("process_log_chunks", "process_events", "process_status_history", "process_attachments"):
                tcols = [x[1] for x in db.execute("PRAGMA table_info(%s)" % t)]
                others = [c for c in tcols if c not in ("instance_id", "seq_id")]
                exprs = ["lower(hex(randomblob(16)))" if c == "id" else c for c in others]
                db.execute("INSERT INTO %s (instance_id, %s) SELECT ?, %s FROM %s WHERE instance_id = ?"
                           % (t, ",".join(others), ",".join(exprs), t), (i, template))
    db.close()
    return ids


def counts(db_path, ids):
    db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True)
    marks = ",".join("?" * len(ids))
    out = {}
    for t in ("processes", "process_log_chunks", "process_events", "process_status_history", "process_attachments",
              "process_tags"):
        out[t] = db.execute("SELECT count(*) FROM %s WHERE instance_id IN (%s)" % (t, marks), ids).fetchone()[0]
    db.close()
    return out


def wait_for(cond, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.2)
    raise AssertionError("not reached within %s s" % timeout)


@pytest.fixture
def aged(tmp_path):
    """A data folder with 3 processes aged 40 days, 2000 more such copies, and 2 recent
    ones; returns (data_dir, old ids, recent ids)."""
    data = str(tmp_path / "data")
    srv = Server(data_dir=data).start()
    admin = Client(srv.url, ADMIN_KEY)
    ids = [start_process(admin, FLOW, parts={"tags": "keep-me", "out": "x"}) for _ in range(5)]
    for i in ids:
        assert wait_process(admin, i)["status"] == "FINISHED"
    assert srv.stop() == 0
    db = data + "/accord.db"
    age(db, ids[:3], 40)
    old = ids[:3] + clone_old(db, ids[0], 2000, 45)
    yield data, old, ids[3:]


@sqlite_only
def test_finished_processes_older_than_the_setting_go_with_everything(aged, fresh_server):
    data, old, recent = aged
    srv = fresh_server(data_dir=data, args=["--retention-processes", "30d", "--retention-interval", "1",
                                            "--retention-batch", "50"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    db = data + "/accord.db"
    wait_for(lambda: counts(db, old)["processes"] == 0)
    left = counts(db, old)
    assert all(v == 0 for v in left.values()), left
    for i in old[:3]:
        assert admin.get("/api/v2/process/%s" % i).status_code == 404
    for i in recent:
        assert admin.get("/api/v2/process/%s" % i).json()["status"] == "FINISHED"
        assert "kept or not" in admin.get("/api/v1/process/%s/log" % i).text
    assert counts(db, recent)["process_log_chunks"] > 0
    assert "retention: everything of" in srv.read_log()
    # the list and count see only what is left
    r = admin.get("/api/v2/process", params={"tags": "keep-me", "limit": 100})
    assert sorted(p["instanceId"] for p in r.json()) == sorted(recent)


@sqlite_only
def test_only_logs_and_events_expire_when_only_they_are_set(aged, fresh_server):
    data, old, recent = aged
    srv = fresh_server(data_dir=data, args=["--retention-logs", "30d", "--retention-events", "35d",
                                            "--retention-interval", "1"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    db = data + "/accord.db"
    wait_for(lambda: counts(db, old)["process_log_chunks"] == 0 and counts(db, old)["process_events"] == 0)
    left = counts(db, old)
    assert left["processes"] == len(old) and left["process_attachments"] > 0 and left["process_tags"] == 3
    assert left["process_status_history"] == 0
    p = admin.get("/api/v2/process/%s" % old[0])
    assert p.status_code == 200 and p.json()["status"] == "FINISHED"
    r = admin.get("/api/v1/process/%s/log" % old[0])
    assert r.status_code == 200 and r.text == ""
    assert counts(db, recent)["process_log_chunks"] > 0 and counts(db, recent)["process_events"] > 0


@sqlite_only
def test_live_processes_are_never_cleaned(fresh_server, tmp_path):
    data = str(tmp_path / "data")
    srv = Server(data_dir=data).start()
    admin = Client(srv.url, ADMIN_KEY)
    susp = start_process(admin, "flows:\n  default:\n    - suspend: ev\n")
    wait_process(admin, susp, statuses=("SUSPENDED",))
    assert srv.stop() == 0
    age(data + "/accord.db", [susp], 400)
    srv = fresh_server(data_dir=data, args=["--retention-processes", "1d", "--retention-interval", "1"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    time.sleep(3)
    assert admin.get("/api/v2/process/%s" % susp).json()["status"] == "SUSPENDED"
    r = admin.post("/api/v1/process/%s/resume/ev" % susp, json={})
    assert r.status_code == 200, r.text
    assert wait_process(admin, susp)["status"] == "FINISHED"


@sqlite_only
def test_the_api_keeps_answering_during_a_clean_up(aged, fresh_server):
    data, old, recent = aged
    srv = fresh_server(data_dir=data, args=["--retention-processes", "30d", "--retention-interval", "1",
                                            "--retention-batch", "20", "--retention-pause-ms", "5"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    db = data + "/accord.db"
    errors, answered = [], []
    stop = threading.Event()

    def reader():
        c = Client(srv.url, ADMIN_KEY)
        while not stop.is_set():
            r = c.get("/api/v2/process", params={"limit": 10})
            (answered if r.status_code == 200 else errors).append(r.status_code)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    started = [start_process(admin, FLOW) for _ in range(5)]
    wait_for(lambda: counts(db, old)["processes"] == 0)
    stop.set()
    for t in threads:
        t.join()
    assert not errors and answered
    for i in started:
        assert wait_process(admin, i)["status"] == "FINISHED"


@pytest.mark.parametrize("value", ["abc", "30x", "-5d"])
def test_a_bad_duration_is_refused_at_start(fresh_server, value):
    with pytest.raises(RuntimeError, match="--retention-processes must be a duration"):
        fresh_server(args=["--retention-processes", value]).start()
