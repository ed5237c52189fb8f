"""Retention (docs/operations.md "Retention"): finished processes, or only their logs,
events, attachments or states, are deleted once older than the settings keep them; live
processes and recent ones are never touched; the API keeps answering while it runs."""
import threading
import time
import uuid

import pytest
import requests

import db_util
from conftest import ADMIN_KEY, Client, Server, start_process, wait_process

DAY_MS = 86400 * 1000
FLOW = 'flows:\n  default:\n    - log: "kept or not"\n    - set: {x: 1}\n'
PARTS = ("process_log_chunks", "process_events", "process_attachments")


def id_list(ids):
    return ",".join("'%s'" % uuid.UUID(i) for i in ids)


def age(data_dir, ids, days):
    """Moves processes days into the past (created and last changed)."""
    db_util.execute(data_dir, "UPDATE processes SET created_at = created_at - %d, last_updated_at = last_updated_at"
                              " - %d WHERE instance_id IN (%s)" % (days * DAY_MS, days * DAY_MS, id_list(ids)))


def clone_old(data_dir, template, n, days):
    """n copies of a finished process (row, log, events with its status history, attachments),
    days old; returns their ids.  One INSERT … SELECT per table over the list of new ids
    (10,000 single-row statements took 1.6 s of the test process's CPU per use)."""
    cols = db_util.columns(data_dir, "processes")
    parts = {t: [c for c in db_util.columns(data_dir, t) if c not in ("instance_id", "seq_id")] for t in PARTS}
    ids = [str(uuid.uuid4()) for _ in range(n)]
    now = int(time.time() * 1000)
    new = "WITH new (i, k) AS (VALUES %s) " % ",".join("('%s', %d)" % (i, k) for k, i in enumerate(ids))
    when = "%d - new.k" % (now - days * DAY_MS)
    given = {"instance_id": "new.i", "created_at": when, "last_updated_at": when, "session_hash": "NULL"}
    sql = [new + "INSERT INTO processes (%s) SELECT %s FROM processes, new WHERE instance_id = '%s'"
           % (",".join(cols), ",".join(given.get(c, "processes." + c) for c in cols), template)]
    for t, others in parts.items():
        exprs = [db_util.RANDOM_ID if c == "id" else "%s.%s" % (t, c) for c in others]
        sql.append(new + "INSERT INTO %s (instance_id, %s) SELECT new.i, %s FROM %s, new WHERE instance_id = '%s'"
                   % (t, ",".join(others), ",".join(exprs), t, template))
    db_util.execute(data_dir, ";\n".join(sql))
    return ids


def counts(data_dir, ids):
    """{table: rows of these processes} for the tables retention deletes from."""
    tables = ("processes", "process_tags") + PARTS
    found = db_util.rows(data_dir, "WITH ids (i) AS (VALUES %s) SELECT %s" % (
        ",".join("('%s')" % uuid.UUID(i) for i in ids),
        ", ".join("(SELECT count(*) FROM %s WHERE instance_id IN (SELECT i FROM ids)) AS %s" % (t, t)
                  for t in tables)))
    return dict(zip(tables, found[0]))


def wait_for(cond, timeout=60):
    """Waits for cond, looked at every half second: the tests' servers clean up once a
    second (--retention-interval 1), and each look counts thousands of rows."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.5)
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
    age(data, ids[:3], 40)
    old = ids[:3] + clone_old(data, ids[0], 2000, 45)
    before = counts(data, old)
    assert before["processes"] == len(old) and all(before[t] >= len(old) for t in PARTS), before
    yield data, old, ids[3:]


def test_finished_processes_older_than_the_setting_go_with_everything(aged, fresh_server):
    data, old, recent = aged
    srv = fresh_server(data_dir=data, args=["--retention-processes", "30d", "--retention-interval", "1",
                                            "--retention-batch", "50"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    wait_for(lambda: counts(data, old)["processes"] == 0)
    left = counts(data, old)
    assert all(v == 0 for v in left.values()), left
    for i in old[:3]:
        assert admin.get("/api/v2/process/%s" % i).status_code == 404
    for i in recent:
        assert admin.get("/api/v2/process/%s" % i).json()["status"] == "FINISHED"
        assert "kept or not" in admin.get("/api/v1/process/%s/log" % i).text
    assert counts(data, recent)["process_log_chunks"] > 0
    assert "retention: everything of" in srv.read_log()
    # the list and count see only what is left
    r = admin.get("/api/v2/process", params={"tags": "keep-me", "limit": 100})
    assert sorted(p["instanceId"] for p in r.json()) == sorted(recent)


def test_only_logs_and_events_expire_when_only_they_are_set(aged, fresh_server):
    data, old, recent = aged
    srv = fresh_server(data_dir=data, args=["--retention-logs", "30d", "--retention-events", "35d",
                                            "--retention-interval", "1"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    wait_for(lambda: counts(data, old)["process_log_chunks"] == 0 and counts(data, old)["process_events"] == 0)
    left = counts(data, old)
    assert left["processes"] == len(old) and left["process_attachments"] > 0 and left["process_tags"] == 3
    p = admin.get("/api/v2/process/%s" % old[0], params={"include": "history"})
    assert p.status_code == 200 and p.json()["status"] == "FINISHED"
    assert p.json()["statusHistory"] == []  # the history is the PROCESS_STATUS events
    r = admin.get("/api/v1/process/%s/log" % old[0])
    assert r.status_code == 200 and r.text == ""
    assert counts(data, recent)["process_log_chunks"] > 0 and counts(data, recent)["process_events"] > 0


def test_live_processes_are_never_cleaned(fresh_server, tmp_path):
    data = str(tmp_path / "data")
    srv = Server(data_dir=data).start()
    admin = Client(srv.url, ADMIN_KEY)
    susp = start_process(admin, "flows:\n  default:\n    - suspend: ev\n")
    wait_process(admin, susp, statuses=("SUSPENDED",))
    assert srv.stop() == 0
    age(data, [susp], 400)
    srv = fresh_server(data_dir=data, args=["--retention-processes", "1d", "--retention-interval", "1"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    time.sleep(3)
    assert admin.get("/api/v2/process/%s" % susp).json()["status"] == "SUSPENDED"
    r = admin.post("/api/v1/process/%s/resume/ev" % susp, json={})
    assert r.status_code == 200, r.text
    assert wait_process(admin, susp)["status"] == "FINISHED"


def test_the_api_keeps_answering_during_a_clean_up(aged, fresh_server):
    data, old, recent = aged
    srv = fresh_server(data_dir=data, args=["--retention-processes", "30d", "--retention-interval", "1",
                                            "--retention-batch", "20", "--retention-pause-ms", "5"]).start()
    admin = Client(srv.url, ADMIN_KEY)
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
    wait_for(lambda: counts(data, old)["processes"] == 0)
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
