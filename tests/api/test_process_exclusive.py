"""Exclusive groups and WAITING (issue 9 item 7; reference §6.1): configuration.exclusive
{group, mode} with modes wait, cancel and cancelOld, for processes of a project."""
import http.server
import signal
import threading

import pytest

from conftest import ADMIN_KEY, Client, process_log, start_process, wait_process
from proc_util import HELLO, make_org, make_project, status, wait_for


def flow(mode, seconds, group="g1"):
    return """
configuration:
  exclusive:
    group: "%s"
    mode: "%s"
flows:
  default:
    - log: "start"
    - task: sleep
      in:
        duration: %d
    - log: "done"
""" % (group, mode, seconds)


@pytest.fixture
def env(fresh_server):
    srv = fresh_server(args=["--workers", "4"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")

    def start(text, **parts):
        parts.update({"org": org, "project": proj})
        return start_process(admin, text, parts=parts)

    yield admin, start
    srv.stop()


def history(admin, pid):
    return [h["status"] for h in status(admin, pid, include="history")["statusHistory"]]


def test_wait_runs_one_after_the_other(env):
    admin, start = env
    first = start(flow("wait", 3))
    wait_process(admin, first, ("RUNNING",))
    second = start(flow("wait", 0))
    third = start(flow("wait", 0))
    assert wait_process(admin, second, ("WAITING",), timeout=10)["status"] == "WAITING"
    assert wait_process(admin, third, ("WAITING",), timeout=10)["status"] == "WAITING"
    assert status(admin, first)["status"] == "RUNNING"
    # another group is not held up
    other = start(flow("wait", 0, group="g2"))
    assert wait_process(admin, other)["status"] == "FINISHED"
    assert wait_process(admin, first)["status"] == "FINISHED"
    p2 = wait_process(admin, second, timeout=20)
    p3 = wait_process(admin, third, timeout=20)
    assert p2["status"] == "FINISHED" and p3["status"] == "FINISHED"
    h = history(admin, second)
    assert "WAITING" in h and h[h.index("WAITING") + 1] == "ENQUEUED", h
    # in order of arrival, one at a time
    assert status(admin, first)["lastUpdatedAt"] <= p2["lastUpdatedAt"] <= p3["lastUpdatedAt"]


def test_cancel_mode_cancels_the_new_one(env):
    admin, start = env
    first = start(flow("cancel", 3))
    wait_process(admin, first, ("RUNNING",))
    second = start(flow("cancel", 0))
    p = wait_process(admin, second, timeout=10)
    assert p["status"] == "CANCELLED"
    assert "exclusive group 'g1'" in process_log(admin, second)
    assert "start" not in process_log(admin, second)
    assert status(admin, first)["status"] == "RUNNING"
    assert wait_process(admin, first)["status"] == "FINISHED"
    # the group is free again
    assert wait_process(admin, start(flow("cancel", 0)))["status"] == "FINISHED"


def test_cancel_old_cancels_the_running_one(env):
    admin, start = env
    first = start(flow("cancelOld", 30))
    wait_process(admin, first, ("RUNNING",))
    second = start(flow("cancelOld", 0))
    assert wait_process(admin, first, timeout=20)["status"] == "CANCELLED"
    assert "exclusive group 'g1'" in process_log(admin, first)
    assert wait_process(admin, second, timeout=20)["status"] == "FINISHED"


def test_stopping_a_waiting_one(env):
    admin, start = env
    first = start(flow("wait", 3))
    wait_process(admin, first, ("RUNNING",))
    second = start(flow("wait", 0))
    wait_process(admin, second, ("WAITING",), timeout=10)
    assert admin.delete("/api/v1/process/%s" % second).status_code in (200, 204)
    assert wait_process(admin, second)["status"] == "CANCELLED"
    assert wait_process(admin, first)["status"] == "FINISHED"


def test_invalid_exclusive_is_refused(env):
    admin, start = env
    with pytest.raises(AssertionError):
        start(flow("sometimes", 0))
    with pytest.raises(AssertionError):
        start(flow("wait", 0, group=""))


def test_without_a_project_exclusive_is_ignored(admin):
    a = start_process(admin, flow("cancel", 2))
    b = start_process(admin, flow("cancel", 0))
    assert wait_process(admin, b)["status"] == "FINISHED"
    assert wait_process(admin, a)["status"] == "FINISHED"


def test_waiting_one_runs_after_a_crash(fresh_server):
    srv = fresh_server(args=["--workers", "4"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    parts = {"org": org, "project": proj}
    first = start_process(admin, flow("wait", 60), parts=parts)
    wait_process(admin, first, ("RUNNING",))
    second = start_process(admin, flow("wait", 0), parts=parts)
    wait_process(admin, second, ("WAITING",), timeout=10)
    srv.stop(signal.SIGKILL)
    srv2 = fresh_server(data_dir=srv.data_dir, args=["--workers", "4"]).start()
    try:
        admin = Client(srv2.url, ADMIN_KEY)
        assert wait_process(admin, first)["status"] == "FAILED"
        assert wait_process(admin, second, timeout=20)["status"] == "FINISHED"
    finally:
        srv2.stop()


# A process whose stop takes a while: its script helper ignores SIGTERM and holds the
# process log open until the test opens its gate (a local HTTP server the script polls; at
# most 60 s, the grace period before SIGKILL being longer): a wait on the test's state, not
# the 15 s sleep it was (its worker's wall, bench/RESULTS.md "apitest's critical path").
SLOW_TO_STOP = """
configuration:
  exclusive:
    group: "g1"
    mode: "cancelOld"
flows:
  default:
    - script: python
      body: |
        import signal, time, urllib.request
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("deaf to SIGTERM", flush=True)
        for _ in range(600):
            if urllib.request.urlopen("GATE_URL", timeout=5).read() == b"open":
                break
            time.sleep(0.1)
    - task: sleep
      in:
        duration: 60
"""


class Gate:
    """A local HTTP server that answers "shut" until open() is called, then "open"."""

    def __init__(self):
        gate = self
        self.is_open = False

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"open" if gate.is_open else b"shut"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def open(self):
        self.is_open = True

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def test_cancel_old_does_not_hold_up_other_starts(fresh_server):
    """The dispatcher that claims the newer process does not wait for the older one to
    stop: the newer one is WAITING until then, and other processes start meanwhile."""
    srv = fresh_server(args=["--workers", "4", "--stop-grace-ms", "60000"]).start()
    gate = Gate()
    try:
        admin = Client(srv.url, ADMIN_KEY)
        org, _ = make_org(admin)
        proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
        parts = {"org": org, "project": proj}
        old = start_process(admin, SLOW_TO_STOP.replace("GATE_URL", gate.url), parts=parts)
        wait_for(lambda: "deaf to SIGTERM" in process_log(admin, old), timeout=30)
        new = start_process(admin, flow("cancelOld", 0), parts=parts)
        wait_for(lambda: "a newer process (%s)" % new in process_log(admin, old))
        other = start_process(admin, HELLO)
        assert wait_process(admin, other)["status"] == "FINISHED"
        assert status(admin, old)["status"] == "RUNNING"  # still stopping
        assert status(admin, new)["status"] == "WAITING"
        assert "older processes of exclusive group 'g1' are being cancelled" in process_log(admin, new)
        gate.open()
        assert wait_process(admin, old, timeout=60)["status"] == "CANCELLED"
        assert wait_process(admin, new, timeout=30)["status"] == "FINISHED"
        h = history(admin, new)
        assert h.index("WAITING") < h.index("RUNNING"), h
    finally:
        gate.close()
        srv.stop()
