"""The staged folder of a start is handed to the supervisor (queue/start_staged.h): the
first run on the node that stored the process uses it instead of unpacking the stored
payload, and nothing is left behind in <data>/ready/ whichever way the process ends.
A process that waits across a restart runs from its stored payload.  The starts here
upload an archive, so that they are staged in a folder (a start of plain file parts is
held in memory instead: test_process_in_memory.py)."""
import datetime
import os
import signal
import time

from conftest import ADMIN_KEY, Client, start_process, wait_process
from proc_util import log_text, wait_for, zip_bytes

READS_FILE = """flows:
  default:
    - log: "data: ${resource.asString('data/in.txt')}"
"""


def ready_entries(srv):
    path = os.path.join(srv.data_dir, "ready")
    return sorted(os.listdir(path)) if os.path.isdir(path) else []


def later(seconds):
    at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
    return at.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def start_reader(admin, **parts):
    archive = zip_bytes({"concord.yml": READS_FILE, "data/in.txt": b"handed over"})
    return start_process(admin, parts=parts or None, files={"archive": (archive, "application/zip")})


def test_first_run_uses_the_staged_folder_and_leaves_nothing(fresh_server):
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    pid = start_reader(admin)
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "data: handed over" in log_text(admin, pid)
    assert ready_entries(srv) == []
    # the working folder is set aside before the end is stored and removed right after it
    wait_for(lambda: os.listdir(os.path.join(srv.data_dir, "work")) == [])


def test_waiting_process_keeps_its_folder_until_it_runs_or_is_cancelled(fresh_server):
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    waits = start_reader(admin, startAt=later(3))
    cancelled = start_reader(admin, startAt=later(60))
    assert sorted([waits, cancelled]) == ready_entries(srv)
    assert admin.delete("/api/v1/process/%s" % cancelled).status_code in (200, 204)
    assert wait_process(admin, cancelled)["status"] == "CANCELLED"
    assert wait_for(lambda: ready_entries(srv) == [waits])
    assert wait_process(admin, waits, timeout=30)["status"] == "FINISHED"
    assert "data: handed over" in log_text(admin, waits)
    assert ready_entries(srv) == []


def test_after_a_restart_the_stored_payload_serves(fresh_server):
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    pid = start_reader(admin, startAt=later(3))
    assert ready_entries(srv) == [pid]
    srv.stop(signal.SIGKILL)
    srv2 = fresh_server(data_dir=srv.data_dir).start()
    try:
        admin = Client(srv2.url, ADMIN_KEY)
        assert ready_entries(srv2) == []  # cleared at start-up: the payload is in the store
        assert wait_process(admin, pid, timeout=30)["status"] == "FINISHED"
        assert "data: handed over" in log_text(admin, pid)
        # and a new start hands its folder over again
        again = start_reader(admin)
        assert wait_process(admin, again)["status"] == "FINISHED"
        assert "data: handed over" in log_text(admin, again)
        time.sleep(0.1)
        assert ready_entries(srv2) == []
    finally:
        srv2.stop()
