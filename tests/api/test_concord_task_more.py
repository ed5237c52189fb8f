"""The concord task's remaining parts (issue 26 part 4): suspendForCompletion,
requirements, attachments, startExternal, apiKey and baseUrl."""
from conftest import process_log, start_process, wait_process
from proc_util import status

SLEEPY = b"flows:\n  default:\n    - task: sleep\n      in:\n        duration: 2\n    - log: child done\n"
FAILING = b"flows:\n  default:\n    - throw: child broke\n"


def children_of(client, pid):
    r = client.get("/api/v1/process/%s/subprocess" % pid)
    assert r.status_code == 200, r.text
    return r.json()


def statuses(client, pid):
    st = client.get("/api/v1/process/%s/event" % pid, params={"type": "PROCESS_STATUS"}).json()
    return [e["data"]["status"] for e in st]


def test_suspend_for_completion(admin):
    """Concord's example: two children started, then ${concord.suspendForCompletion(ids)}:
    the parent suspends (no runner) and goes on with the next step once both ended, even
    when one failed."""
    flow = """
flows:
  default:
    - set:
        children: []
    - task: concord
      in:
        action: start
        payload: slow
      out: jobOut
    - ${children.add(jobOut.id)}
    - task: concord
      in:
        action: start
        payload: broken
      out: jobOut
    - ${children.add(jobOut.id)}
    - ${concord.suspendForCompletion(children)}
    - log: "process is resumed."
"""
    pid = start_process(admin, flow, files={"slow/concord.yml": SLEEPY, "broken/concord.yml": FAILING})
    wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))
    assert status(admin, pid)["status"] == "SUSPENDED", process_log(admin, pid)
    kids = [k["instanceId"] for k in children_of(admin, pid)]
    assert len(kids) == 2
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "process is resumed." in log
    for k in kids:
        assert status(admin, k)["status"] in ("FINISHED", "FAILED")
    assert "SUSPENDED" in statuses(admin, pid)


def test_suspend_for_completion_of_ended_and_no_children(admin):
    """Children that ended before the parent suspended, and an empty list (no suspension)."""
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: quick
        sync: true
      out: jobOut
    - ${concord.suspendForCompletion([])}
    - log: "not suspended"
    - ${concord.suspendForCompletion([jobOut.id])}
    - log: "resumed after ${jobOut.id}"
"""
    pid = start_process(admin, flow, files={"quick/concord.yml": b"flows:\n  default:\n    - log: hi\n"})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "not suspended" in log and "resumed after " in log


def test_suspend_for_completion_checks_ids(admin):
    flow = """
flows:
  default:
    - ${concord.suspendForCompletion(["not-an-id"])}
"""
    pid = start_process(admin, flow)
    p = wait_process(admin, pid)
    assert p["status"] == "FAILED"
    assert "not a process ID: not-an-id" in process_log(admin, pid)
    flow = """
flows:
  default:
    - ${concord.suspendForCompletion([txId])}
"""
    pid = start_process(admin, flow)
    p = wait_process(admin, pid)
    assert p["status"] == "FAILED"
    assert "cannot wait for itself" in process_log(admin, pid)
