"""A server killed with SIGKILL while processes run loses none of them (issue 8 item 3),
and a few hundred concurrent starts all finish."""
import datetime
import io
import signal
import threading
import time
import zipfile

import db_util
from conftest import ADMIN_KEY, Client, start_process, wait_process
from proc_util import HELLO, log_text, make_org, make_project, sleeper, status


def test_sigkill_recovery(fresh_server):
    srv = fresh_server(args=["--workers", "2"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    done = start_process(admin, HELLO, parts={"out": "x", "arguments.x": "kept"})
    done_rec = wait_process(admin, done)
    assert done_rec["status"] == "FINISHED"
    running = [start_process(admin, sleeper(60)) for _ in range(2)]
    for pid in running:
        wait_process(admin, pid, ("RUNNING",))
    queued = [start_process(admin, HELLO) for _ in range(3)]  # both worker slots are busy
    at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=4)
    scheduled = start_process(admin, HELLO, parts={"startAt": at.strftime("%Y-%m-%dT%H:%M:%S.000Z")})
    time.sleep(0.3)
    for pid in queued + [scheduled]:
        assert status(admin, pid)["status"] == "ENQUEUED"

    srv.stop(signal.SIGKILL)
    # One claimed but not started when the server died (STARTING lasts microseconds: made by
    # hand from a queued one): it runs after the restart, none of its steps having run.
    claimed = queued[0]
    db_util.execute(srv.data_dir, "UPDATE processes SET status = 'STARTING' WHERE instance_id = '%s'" % claimed)
    srv2 = fresh_server(data_dir=srv.data_dir, args=["--workers", "2"]).start()
    try:
        admin = Client(srv2.url, ADMIN_KEY)
        for pid in running:  # recovered at start-up, not after their 60 s sleep ran out
            p = wait_process(admin, pid, timeout=30)
            assert p["status"] == "FAILED", p
            log = log_text(admin, pid)
            if log is not None:
                assert "restart" in log.lower() or "server" in log.lower(), log
        for pid in queued + [scheduled]:
            assert wait_process(admin, pid, timeout=60)["status"] == "FINISHED", pid
        log = log_text(admin, claimed)
        assert "Process queued again: the server stopped before the process started" in log, log
        hist = [h["status"] for h in status(admin, scheduled, include="history")["statusHistory"]]
        assert hist == ["NEW", "ENQUEUED", "STARTING", "RUNNING", "FINISHED"], hist
        again = status(admin, done)
        assert again["status"] == "FINISHED" and again["lastUpdatedAt"] == done_rec["lastUpdatedAt"]
        assert again["meta"]["out"] == {"x": "kept"}
        hist = [h["status"] for h in status(admin, running[0], include="history")["statusHistory"]]
        assert hist[-2:] == ["RUNNING", "FAILED"], hist
        # the server works as before
        assert wait_process(admin, start_process(admin, HELLO))["status"] == "FINISHED"
    finally:
        srv2.stop()


def test_many_concurrent_starts(fresh_server):
    srv = fresh_server(args=["--workers", "8"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    org, _ = make_org(admin)
    proj, proj_id = make_project(admin, org, rawPayloadMode="EVERYONE")
    total, threads = 300, 16
    ids, errors = [], []
    lock = threading.Lock()

    def worker(n):
        c = Client(srv.url, ADMIN_KEY)
        for _ in range(n):
            try:
                r = c.post("/api/v1/process", timeout=120, files=[
                    ("concord.yml", ("concord.yml", HELLO.encode(), "application/octet-stream")),
                    ("projectId", (None, proj_id, "text/plain"))])
                with lock:
                    if r.status_code == 200 and r.json().get("ok") is True:
                        ids.append(r.json()["instanceId"])
                    else:
                        errors.append((r.status_code, r.text[:200]))
            except Exception as exc:  # noqa: BLE001 - reported below
                with lock:
                    errors.append(repr(exc))

    ts = [threading.Thread(target=worker, args=(total // threads + (1 if i < total % threads else 0),))
          for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == [] and len(set(ids)) == total

    def count(**params):
        r = admin.get("/api/v2/process/count", params=dict(projectId=proj_id, **params))
        assert r.status_code == 200, r.text
        return r.json()

    assert count() == total
    deadline = time.time() + 300
    while count(status="FINISHED") < total and time.time() < deadline:
        bad = count(status="FAILED")
        assert bad == 0, "%d processes FAILED" % bad
        time.sleep(0.5)
    assert count(status="FINISHED") == total
    srv.stop()


def test_a_recovered_process_ends_as_any_other(fresh_server):
    """A process FAILED at recovery (or, with several nodes, by the settling of its dead
    node) ends through the same path as one the server ends itself: its payload goes as a
    failed process's does."""
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    failed = start_process(admin, "flows:\n  default:\n    - throw: \"boom\"\n")
    assert wait_process(admin, failed)["status"] == "FAILED"
    running = start_process(admin, sleeper(60))
    wait_process(admin, running, ("RUNNING",))
    def payload_files(client, pid):  # the state snapshot holds the payload while it is kept
        r = client.get("/api/v1/process/%s/state/snapshot" % pid)
        assert r.status_code == 200, r.text
        return [n for n in zipfile.ZipFile(io.BytesIO(r.content)).namelist() if not n.startswith("_attachments")]

    assert payload_files(admin, failed) == []
    assert "concord.yml" in payload_files(admin, running)
    srv.stop(signal.SIGKILL)
    srv2 = fresh_server(data_dir=srv.data_dir).start()
    try:
        admin = Client(srv2.url, ADMIN_KEY)
        assert wait_process(admin, running, timeout=30)["status"] == "FAILED"
        assert payload_files(admin, running) == []
    finally:
        srv2.stop()
