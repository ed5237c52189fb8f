"""suspendTimeout → TIMED_OUT and the onFailure / onCancel / onTimeout handler processes
(issue 9 item 6; reference §5.9, §6.1, §6.11)."""
import signal
import threading
import time

from conftest import ADMIN_KEY, Client, process_log, start_process, wait_process
from proc_util import sleeper, status

SUSPEND = """
configuration:
  suspendTimeout: "PT2S"
flows:
  default:
    - suspend: approval
    - log: "resumed"
%s
"""

ON_TIMEOUT = """
  onTimeout:
    - log: "timeout handler ran"
"""


def children(client, pid):
    r = client.get("/api/v2/process", params={"parentInstanceId": pid})
    assert r.status_code == 200, r.text
    return r.json()


def only_child(client, pid, kind, timeout=30):
    deadline = time.time() + timeout
    while True:
        kids = children(client, pid)
        if kids:
            assert len(kids) == 1, kids
            assert kids[0]["kind"] == kind, kids[0]
            return wait_process(client, kids[0]["instanceId"])
        assert time.time() < deadline, "no %s child of %s" % (kind, pid)
        time.sleep(0.1)


def test_suspend_timeout_times_out(admin):
    pid = start_process(admin, SUSPEND % "")
    assert wait_process(admin, pid, ("SUSPENDED", "FAILED"))["status"] == "SUSPENDED"
    p = wait_process(admin, pid, timeout=15)
    assert p["status"] == "TIMED_OUT", process_log(admin, pid)
    assert "Process timed out (2s limit)" in process_log(admin, pid)
    hist = [h["status"] for h in status(admin, pid, include="history")["statusHistory"]]
    assert hist[-2:] == ["SUSPENDED", "TIMED_OUT"]
    # too late to resume
    r = admin.post("/api/v1/process/%s/resume/approval" % pid, json={})
    assert r.status_code == 409
    assert children(admin, pid) == []  # no onTimeout flow, no handler


def test_resume_before_the_timeout_wins(admin):
    pid = start_process(admin, SUSPEND % "")
    wait_process(admin, pid, ("SUSPENDED",))
    r = admin.post("/api/v1/process/%s/resume/approval" % pid, json={})
    assert r.status_code == 200, r.text
    assert wait_process(admin, pid)["status"] == "FINISHED"
    time.sleep(2.5)
    assert status(admin, pid)["status"] == "FINISHED"


def test_suspend_timeout_survives_a_restart(fresh_server):
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    pid = start_process(admin, (SUSPEND % ON_TIMEOUT).replace("PT2S", "PT4S"))
    wait_process(admin, pid, ("SUSPENDED",))
    srv.stop(signal.SIGKILL)
    srv2 = fresh_server(data_dir=srv.data_dir).start()
    try:
        admin = Client(srv2.url, ADMIN_KEY)
        assert status(admin, pid)["status"] == "SUSPENDED"
        p = wait_process(admin, pid, timeout=15)
        assert p["status"] == "TIMED_OUT", process_log(admin, pid)
        h = only_child(admin, pid, "TIMEOUT_HANDLER")
        assert h["status"] == "FINISHED"
        assert "timeout handler ran" in process_log(admin, h["instanceId"])
    finally:
        srv2.stop()


def test_on_timeout_after_suspend_timeout(admin):
    pid = start_process(admin, SUSPEND % ON_TIMEOUT)
    assert wait_process(admin, pid, timeout=15)["status"] == "TIMED_OUT"
    h = only_child(admin, pid, "TIMEOUT_HANDLER")
    assert h["status"] == "FINISHED", process_log(admin, h["instanceId"])
    assert h["parentInstanceId"] == pid
    assert "timeout handler ran" in process_log(admin, h["instanceId"])


def test_on_timeout_after_process_timeout(admin):
    flow = sleeper(30).replace("flows:", 'configuration:\n  processTimeout: "PT1S"\nflows:') + ON_TIMEOUT
    pid = start_process(admin, flow, parts={"handlerProcessTimeout": "PT30S"})
    assert wait_process(admin, pid, timeout=20)["status"] == "TIMED_OUT"
    h = only_child(admin, pid, "TIMEOUT_HANDLER")
    assert h["status"] == "FINISHED"
    assert "timeout handler ran" in process_log(admin, h["instanceId"])
    assert "timeout handler ran" not in process_log(admin, pid)


FAILING = """
configuration:
  arguments:
    myVar: "abc"
flows:
  default:
    - throw: "Kablamo!"
  onFailure:
    - log: "handler got ${myVar} and ${lastError.message}"
"""


def test_on_failure_runs_as_a_child_with_last_error(admin):
    pid = start_process(admin, FAILING)
    assert wait_process(admin, pid)["status"] == "FAILED"
    h = only_child(admin, pid, "FAILURE_HANDLER")
    log = process_log(admin, h["instanceId"])
    assert h["status"] == "FINISHED", log
    assert "handler got abc and Kablamo!" in log
    assert h["initiator"] == "admin"
    assert status(admin, pid)["handlers"] == ["onFailure"]
    assert status(admin, pid, include="childrenIds")["childrenIds"] == [h["instanceId"]]


def test_disable_on_failure(admin):
    pid = start_process(admin, FAILING, parts={"disableOnFailure": "true"})
    assert wait_process(admin, pid)["status"] == "FAILED"
    time.sleep(1)
    assert children(admin, pid) == []


def test_no_handler_without_the_flow(admin):
    pid = start_process(admin, "flows:\n  default:\n    - throw: boom\n")
    assert wait_process(admin, pid)["status"] == "FAILED"
    time.sleep(1)
    assert children(admin, pid) == []


def test_failing_handler_is_retried_but_does_not_loop(admin):
    """Concord's watchdog: a handler that does not finish is started again, three handlers
    of a kind per process at most; a handler gets no handler of its own."""
    flow = "flows:\n  default:\n    - throw: first\n  onFailure:\n    - throw: second\n"
    pid = start_process(admin, flow)
    assert wait_process(admin, pid)["status"] == "FAILED"
    deadline = time.time() + 60
    while not (len(children(admin, pid)) == 3 and all(k["status"] == "FAILED" for k in children(admin, pid))):
        assert time.time() < deadline, children(admin, pid)
        time.sleep(0.1)
    time.sleep(1)
    kids = children(admin, pid)
    assert [k["kind"] for k in kids] == ["FAILURE_HANDLER"] * 3
    for k in kids:
        assert children(admin, k["instanceId"]) == []


def test_on_cancel_after_a_stop(admin):
    flow = sleeper(30) + "\n  onCancel:\n    - log: \"cancel handler ran\"\n"
    pid = start_process(admin, flow)
    wait_process(admin, pid, ("RUNNING",))
    r = admin.delete("/api/v1/process/%s" % pid)
    assert r.status_code in (200, 204), r.text
    assert wait_process(admin, pid)["status"] == "CANCELLED"
    h = only_child(admin, pid, "CANCEL_HANDLER")
    assert h["status"] == "FINISHED"
    assert "cancel handler ran" in process_log(admin, h["instanceId"])


def test_on_cancel_of_a_suspended_process(admin):
    flow = "flows:\n  default:\n    - suspend: ev\n  onCancel:\n    - log: \"cancelled while suspended\"\n"
    pid = start_process(admin, flow)
    wait_process(admin, pid, ("SUSPENDED",))
    assert admin.delete("/api/v1/process/%s" % pid).status_code in (200, 204)
    h = only_child(admin, pid, "CANCEL_HANDLER")
    assert "cancelled while suspended" in process_log(admin, h["instanceId"])


FORM_ON_CANCEL = """
flows:
  default:
    - log: "before form"
    - form: "myForm"
      fields:
        - firstName: { type: "string" }
        - age: { type: "int" }
      yield: true
    - log: "after form"
    - task: sleep
      in:
        duration: 30
    - log: "after sleep"
  onCancel:
    - log: |
        myForm.firstName: ${myForm.firstName}
        myForm.age: ${myForm.age}
"""


def test_on_cancel_sees_the_form_values(admin):
    """Concord's formOnCancel: values submitted in a form before the cancel are variables
    of the onCancel handler, both when the process is stopped while it runs on after the
    form and when it is stopped waiting for a second form."""
    pid = start_process(admin, FORM_ON_CANCEL)
    wait_process(admin, pid, ("SUSPENDED",))
    r = admin.post("/api/v1/process/%s/form/myForm" % pid, json={"firstName": "John", "age": 42})
    assert r.status_code == 200 and r.json()["ok"], r.text
    wait_process(admin, pid, ("RUNNING",))
    deadline = time.time() + 30
    while "after form" not in process_log(admin, pid):
        assert time.time() < deadline, process_log(admin, pid)
        time.sleep(0.05)
    assert admin.delete("/api/v1/process/%s" % pid).status_code in (200, 204)
    assert wait_process(admin, pid)["status"] == "CANCELLED"
    h = only_child(admin, pid, "CANCEL_HANDLER")
    log = process_log(admin, h["instanceId"])
    assert h["status"] == "FINISHED", log
    assert "myForm.firstName: John" in log and "myForm.age: 42" in log, log

    two = FORM_ON_CANCEL.replace("    - log: \"after form\"", "    - form: second\n      fields:\n        - x: { type: \"string\" }")
    pid = start_process(admin, two)
    wait_process(admin, pid, ("SUSPENDED",))
    r = admin.post("/api/v1/process/%s/form/myForm" % pid, json={"firstName": "Ann", "age": 7})
    assert r.status_code == 200 and r.json()["ok"], r.text
    deadline = time.time() + 30
    while [f["name"] for f in admin.get("/api/v1/process/%s/form" % pid).json()] != ["second"]:
        assert time.time() < deadline, process_log(admin, pid)
        time.sleep(0.05)
    assert admin.delete("/api/v1/process/%s" % pid).status_code in (200, 204)
    h = only_child(admin, pid, "CANCEL_HANDLER")
    log = process_log(admin, h["instanceId"])
    assert "myForm.firstName: Ann" in log and "myForm.age: 7" in log, log


def test_bad_handler_process_timeout_is_refused(admin):
    r = start_process(admin, FAILING, parts={"handlerProcessTimeout": "soon"}, expect=400)
    assert "handlerProcessTimeout" in r.json()["message"]


def test_resume_racing_the_timeout_has_one_winner(admin):
    flow = (SUSPEND % ON_TIMEOUT).replace("PT2S", "PT1S")
    pids = [start_process(admin, flow) for _ in range(8)]
    for pid in pids:
        # a later one may be past its 1 s already while an earlier one is waited for (a
        # clean-clone run on a saturated machine): its resume below meets 409, as it should
        wait_process(admin, pid, ("SUSPENDED", "TIMED_OUT"))
    codes = {}

    def resume(pid, delay):
        time.sleep(delay)
        codes[pid] = admin.post("/api/v1/process/%s/resume/approval" % pid, json={}).status_code

    # resumes spread around the deadline (about 1 s after each suspended)
    threads = [threading.Thread(target=resume, args=(pid, 0.6 + 0.1 * i)) for i, pid in enumerate(pids)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for pid in pids:
        final = wait_process(admin, pid, timeout=20)["status"]
        if codes[pid] == 200:
            assert final == "FINISHED", (pid, process_log(admin, pid))
            assert children(admin, pid) == []
        else:
            assert codes[pid] == 409, codes[pid]
            assert final == "TIMED_OUT"
            assert only_child(admin, pid, "TIMEOUT_HANDLER")["status"] == "FINISHED"


def test_handler_process_timeout_and_no_handler_of_a_handler(admin):
    flow = """
flows:
  default:
    - throw: "boom"
  onFailure:
    - task: sleep
      in:
        duration: 30
  onTimeout:
    - log: "must not run for the handler"
"""
    pid = start_process(admin, flow, parts={"handlerProcessTimeout": "PT1S"})
    assert wait_process(admin, pid)["status"] == "FAILED"
    h = only_child(admin, pid, "FAILURE_HANDLER")
    assert h["status"] == "TIMED_OUT"
    assert status(admin, h["instanceId"])["timeout"] == 1
    assert "Process timed out (1s limit)" in process_log(admin, h["instanceId"])
    time.sleep(1)
    assert children(admin, h["instanceId"]) == []
