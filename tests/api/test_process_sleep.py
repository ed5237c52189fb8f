"""The server half of `sleep` with `suspend: true`: the process waits SUSPENDED (no runner,
no worker slot) and the server resumes it when the time has come, with its variables."""
import time

from conftest import process_log, start_process, wait_process

FLOW = """
flows:
  default:
    - set:
        x: 42
    - task: sleep
      in:
        duration: %d
        suspend: true
    - log: "after the sleep, x=${x}"
"""


def test_sleep_suspends_and_resumes(admin):
    began = time.time()
    pid = start_process(admin, FLOW % 2)
    p = wait_process(admin, pid, ("SUSPENDED",) + ("FINISHED", "FAILED"))
    assert p["status"] == "SUSPENDED"
    p = wait_process(admin, pid, ("FINISHED", "FAILED"), timeout=30)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    assert time.time() - began >= 2
    assert "after the sleep, x=42" in process_log(admin, pid)
    r = admin.get("/api/v2/process/%s?include=history" % pid)
    statuses = [h["status"] for h in r.json()["statusHistory"]]
    assert statuses == ["NEW", "ENQUEUED", "STARTING", "RUNNING", "SUSPENDED", "RESUMING", "ENQUEUED",
                        "STARTING", "RUNNING", "FINISHED"]


def test_sleeping_process_frees_its_worker(fresh_server):
    srv = fresh_server(args=["--workers", "1"]).start()
    from conftest import ADMIN_KEY, Client
    admin = Client(srv.url, ADMIN_KEY)
    sleeper = start_process(admin, FLOW % 3)
    wait_process(admin, sleeper, ("SUSPENDED",))
    # the only worker is free while the first one sleeps
    quick = start_process(admin, 'flows:\n  default:\n    - log: "quick"\n')
    assert wait_process(admin, quick, timeout=20)["status"] == "FINISHED"
    assert admin.get("/api/v2/process/%s" % sleeper).json()["status"] == "SUSPENDED"
    assert wait_process(admin, sleeper, timeout=30)["status"] == "FINISHED"


def test_cancel_a_sleeping_process(admin):
    pid = start_process(admin, FLOW % 30)
    wait_process(admin, pid, ("SUSPENDED",))
    r = admin.delete("/api/v1/process/%s" % pid)
    assert r.status_code == 204
    assert admin.get("/api/v2/process/%s" % pid).json()["status"] == "CANCELLED"
    assert "Process cancelled by admin" in process_log(admin, pid)
