"""The lock and unlock tasks (issue 26 part 2; docs/flows.md "lock", docs/api.md "Process
locks"): a named lock per project (or per organization with `scope: ORG`); a process that
cannot take it waits SUSPENDED and gets it in arrival order when the holder unlocks or ends
(finished, failed, cancelled, or its node died: the two-node test, PostgreSQL only); who
holds a lock and who waits is in GET .../lock/{name} and in the waiting process's
"waits"."""
import datetime
import re
import signal

import pytest

import db_util
from conftest import ADMIN_KEY, TEST_DB, Client, start_process, unique, wait_process
from proc_util import log_text, make_org, make_project, status, wait_for
from test_nodes import nodes  # noqa: F401 (a fixture)


def holder_flow(scope="PROJECT"):
    """Takes the lock, then holds it while SUSPENDED until resumed with `go`."""
    return """
flows:
  default:
    - task: lock
      in: {name: "${lockName}", scope: "%s"}
    - log: "got the lock ${txId}"
    - suspend: go
    - task: unlock
      in: {name: "${lockName}", scope: "%s"}
    - log: "released ${txId}"
""" % (scope, scope)


FAILING = """
flows:
  default:
    - task: lock
      in: {name: "${lockName}"}
    - log: "got the lock ${txId}"
    - throw: "boom"
"""


def start(client, flow, org, project, lock):
    parts = {"org": org, "arguments.lockName": lock}
    if project:
        parts["project"] = project
    return start_process(client, flow, parts=parts)


def holds(client, pid):
    """pid got the lock and now waits for `go`.  The log first: a SUSPENDED read before it
    may be the wait for the lock, the line written just after (a resume then found the
    process RUNNING: 409); the line is written after the process ran again, so a SUSPENDED
    read after it is the wait for `go`."""
    return "got the lock %s" % pid in log_text(client, pid) and status(client, pid)["status"] == "SUSPENDED"


def waits_for(client, pid, holder):
    p = status(client, pid)
    return p["status"] == "SUSPENDED" and [w.get("instanceId") for w in p.get("waits", [])] == [holder]


def lock_state(client, org, project, lock):
    path = "/api/v1/org/%s/project/%s/lock/%s" % (org, project, lock) if project else \
        "/api/v1/org/%s/lock/%s" % (org, lock)
    r = client.get(path)
    assert r.status_code == 200, r.text
    return r.json()


def go(client, pid):
    r = client.post("/api/v1/process/%s/resume/go" % pid)
    assert r.status_code == 200, r.text


@pytest.fixture
def project(admin):
    name, _ = make_project(admin, "Default", rawPayloadMode="EVERYONE")
    return name


def test_waiters_get_the_lock_in_order(admin, project):
    lock = unique("deploy")
    first = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: holds(admin, first))
    second = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: waits_for(admin, second, first))
    third = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: waits_for(admin, third, first))
    p = status(admin, second)
    assert p["waits"] == [{"type": "PROCESS_LOCK", "reason": "Waiting for lock '%s' held by process %s" % (lock, first),
                           "instanceId": first, "orgId": p["orgId"], "projectId": p["projectId"],
                           "scope": "PROJECT", "name": lock, "exclusive": False}], p
    assert "Waiting for lock '%s' (scope PROJECT) held by process %s" % (lock, first) in log_text(admin, second)
    r = admin.get("/api/v1/process/%s/waits" % second)  # the wait conditions of the process
    assert r.status_code == 200 and r.json()["isWaiting"] is True and r.json()["waits"] == p["waits"], r.text
    state = lock_state(admin, "Default", project, lock)
    assert state["name"] == lock and state["scope"] == "PROJECT" and state["projectName"] == project, state
    assert state["holder"]["instanceId"] == first and state["holder"]["since"].endswith("Z"), state
    assert [w["instanceId"] for w in state["waiting"]] == [second, third], state

    go(admin, first)  # unlocks: the second gets it, the third waits on
    assert wait_process(admin, first)["status"] == "FINISHED"
    wait_for(lambda: holds(admin, second))
    assert "Lock '%s' acquired: resuming" % lock in log_text(admin, second)
    wait_for(lambda: waits_for(admin, third, second))
    assert "got the lock" not in log_text(admin, third)
    state = lock_state(admin, "Default", project, lock)
    assert state["holder"]["instanceId"] == second and [w["instanceId"] for w in state["waiting"]] == [third]

    go(admin, second)
    assert wait_process(admin, second)["status"] == "FINISHED"
    wait_for(lambda: holds(admin, third))
    go(admin, third)
    assert wait_process(admin, third)["status"] == "FINISHED"
    state = lock_state(admin, "Default", project, lock)
    assert state["holder"] is None and state["waiting"] == [], state
    assert "waits" not in status(admin, third)


def test_a_cancelled_or_failed_holder_releases_and_a_cancelled_waiter_leaves(admin, project):
    lock = unique("deploy")
    first = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: holds(admin, first))
    failing = start(admin, FAILING, "Default", project, lock)
    wait_for(lambda: waits_for(admin, failing, first))
    third = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: waits_for(admin, third, first))
    fourth = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: waits_for(admin, fourth, first))
    # A waiter cancelled while it waits leaves the queue.
    assert admin.delete("/api/v1/process/%s" % fourth).status_code in (200, 204)
    assert wait_process(admin, fourth)["status"] == "CANCELLED"
    assert [w["instanceId"] for w in lock_state(admin, "Default", project, lock)["waiting"]] == [failing, third]
    # The holder cancelled: the next one gets the lock, fails with it, and so releases it.
    assert admin.delete("/api/v1/process/%s" % first).status_code in (200, 204)
    assert wait_process(admin, first)["status"] == "CANCELLED"
    assert wait_process(admin, failing)["status"] == "FAILED"
    assert "got the lock %s" % failing in log_text(admin, failing)
    wait_for(lambda: holds(admin, third))
    state = lock_state(admin, "Default", project, lock)
    assert state["holder"]["instanceId"] == third and state["waiting"] == [], state
    go(admin, third)
    assert wait_process(admin, third)["status"] == "FINISHED"
    assert "got the lock" not in log_text(admin, fourth)


def test_a_waiter_resumed_by_hand_does_not_get_a_held_lock(admin, project):
    lock = unique("deploy")
    first = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: holds(admin, first))
    waiter = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: waits_for(admin, waiter, first))
    ev = admin.get("/api/v1/process/%s/event" % waiter, params={"type": "PROCESS_WAIT"}).json()
    [event] = ev[-1]["data"]["eventNames"]
    assert event.startswith("lock-"), ev
    r = admin.post("/api/v1/process/%s/resume/%s" % (waiter, event))
    assert r.status_code == 200, r.text
    assert wait_process(admin, waiter)["status"] == "FAILED"
    text = log_text(admin, waiter)
    assert "Process resumed without lock '%s', which process %s holds" % (lock, first) in text, text
    assert "got the lock %s" % waiter not in text
    state = lock_state(admin, "Default", project, lock)
    assert state["holder"]["instanceId"] == first and state["waiting"] == [], state
    go(admin, first)
    assert wait_process(admin, first)["status"] == "FINISHED"
    assert lock_state(admin, "Default", project, lock)["holder"] is None


def test_a_waiter_past_its_suspend_timeout_leaves_the_queue(admin, project):
    lock = unique("deploy")
    first = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: holds(admin, first))
    impatient = start(admin, 'configuration:\n  suspendTimeout: "PT1S"\n' + holder_flow(), "Default", project, lock)
    assert wait_process(admin, impatient)["status"] == "TIMED_OUT"
    # (what follows an end comes after its status)
    wait_for(lambda: lock_state(admin, "Default", project, lock)["waiting"] == [])
    go(admin, first)
    assert wait_process(admin, first)["status"] == "FINISHED"
    assert lock_state(admin, "Default", project, lock)["holder"] is None


def test_a_lock_left_by_an_ended_process_is_released(fresh_server):
    """What a node taken for dead may write after its process was settled elsewhere: a
    row of an ended process.  The next heartbeat's sweep releases it, and resumes a waiter
    handed a lock whose resume was lost."""
    server = fresh_server(args=["--node-heartbeat", "1"]).start()
    admin = Client(server.url, ADMIN_KEY)
    project, project_id = make_project(admin, "Default", rawPayloadMode="EVERYONE")
    lock = unique("stale")
    ended = start(admin, "flows:\n  default:\n    - log: hi\n", "Default", project, lock)
    p = wait_process(admin, ended)
    assert p["status"] == "FINISHED"
    db_util.execute(server.data_dir, "INSERT INTO process_locks (lock_scope, scope_id, lock_name, org_id, project_id,"
                    " instance_id, held, since) VALUES ('PROJECT', '%s', '%s', '%s', '%s', '%s', 1, 0)"
                    % (project_id, lock, p["orgId"], project_id, ended))
    # The sweep's own log line proves the planted row was there and released (reading the
    # lock first raced the 1 s sweep on a loaded machine: the row could be gone already).
    wait_for(lambda: "ended holding or waiting for a lock: released" in server.read_log())
    assert lock_state(admin, "Default", project, lock)["holder"] is None
    pid = start(admin, CRITICAL, "Default", project, lock)
    assert wait_process(admin, pid)["status"] == "FINISHED"
    # A waiter handed the lock but not resumed (its resume lost): the sweep resumes it.
    holder = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: holds(admin, holder))
    waiter = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: waits_for(admin, waiter, holder))
    db_util.execute(server.data_dir, "DELETE FROM process_locks WHERE instance_id = '%s';"
                    " UPDATE process_locks SET held = 1 WHERE instance_id = '%s'" % (holder, waiter))
    wait_for(lambda: holds(admin, waiter))
    go(admin, waiter)
    assert wait_process(admin, waiter)["status"] == "FINISHED"
    assert admin.delete("/api/v1/process/%s" % holder).status_code in (200, 204)


def test_an_org_lock_spans_projects_and_differs_from_a_project_lock(admin):
    org, _ = make_org(admin)
    one, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    two, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    lock = unique("shared")
    first = start(admin, holder_flow("ORG"), org, one, lock)
    wait_for(lambda: holds(admin, first))
    other = start(admin, holder_flow("org"), org, two, lock)
    wait_for(lambda: waits_for(admin, other, first))
    assert status(admin, other)["waits"][0]["scope"] == "ORG"
    state = lock_state(admin, org, None, lock)
    assert state["scope"] == "ORG" and state["orgName"] == org and "projectName" not in state, state
    assert state["holder"]["instanceId"] == first and [w["instanceId"] for w in state["waiting"]] == [other]
    # The project lock of the same name is another lock: free.
    assert lock_state(admin, org, two, lock)["holder"] is None
    own = start(admin, holder_flow(), org, two, lock)
    wait_for(lambda: holds(admin, own))
    go(admin, own)
    assert wait_process(admin, own)["status"] == "FINISHED"
    go(admin, first)
    wait_for(lambda: holds(admin, other))
    go(admin, other)
    assert wait_process(admin, other)["status"] == "FINISHED"
    assert lock_state(admin, org, None, lock)["holder"] is None


def test_concords_lock_api_tries_and_releases(admin, project, new_user):
    lock = unique("api")
    first = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: holds(admin, first))
    other = start(admin, "flows:\n  default:\n    - suspend: go\n", "Default", project, lock)
    wait_for(lambda: status(admin, other)["status"] == "SUSPENDED")
    # Held by the first: not acquired, and the answer names the holder; nothing queued.
    r = admin.post("/api/v1/process/%s/lock/%s" % (other, lock))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["acquired"] is False and body["info"]["instanceId"] == first, body
    assert body["info"]["scope"] == "PROJECT" and body["info"]["name"] == lock, body
    assert lock_state(admin, "Default", project, lock)["waiting"] == []
    # An org lock of the same name is free: acquired; unlock frees it (204), twice is harmless.
    r = admin.post("/api/v1/process/%s/lock/%s" % (other, lock), params={"scope": "org"})
    assert r.status_code == 200 and r.json()["acquired"] is True, r.text
    assert lock_state(admin, "Default", None, lock)["holder"]["instanceId"] == other
    for _ in range(2):
        r = admin.post("/api/v1/process/%s/unlock/%s" % (other, lock), params={"scope": "ORG"})
        assert r.status_code == 204, r.text
    assert lock_state(admin, "Default", None, lock)["holder"] is None
    # The holder's lock released through the API goes to nobody else here; a waiter would get it.
    waiter = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: waits_for(admin, waiter, first))
    assert admin.post("/api/v1/process/%s/unlock/%s" % (first, lock)).status_code == 204
    wait_for(lambda: holds(admin, waiter))
    # Bad calls.
    r = admin.post("/api/v1/process/%s/lock/%s" % (other, lock), params={"scope": "TEAM"})
    assert r.status_code == 400 and "Unknown scope 'TEAM'" in r.json()["message"], r.text
    assert admin.post("/api/v1/process/%s/lock/x" % "00000000-0000-0000-0000-000000000000").status_code == 404
    assert new_user().post("/api/v1/process/%s/lock/%s" % (other, lock)).status_code in (403, 404)
    for pid in (first, waiter, other):
        admin.delete("/api/v1/process/%s" % pid)
        assert wait_process(admin, pid)["status"] == "CANCELLED"
    r = admin.post("/api/v1/process/%s/lock/%s" % (other, lock))
    assert r.status_code == 409, r.text
    assert lock_state(admin, "Default", project, lock)["holder"] is None


def test_bad_calls_fail_clearly(admin, project, new_user):
    lock = unique("bad")
    cases = [
        ("flows:\n  default:\n    - task: lock\n      in: {scope: PROJECT}\n", "Mandatory variable 'name' is required"),
        ("flows:\n  default:\n    - task: lock\n      in: {name: x, scope: TEAM}\n",
         "Unknown scope 'TEAM', expected: org or project"),
    ]
    for flow, message in cases:
        pid = start(admin, flow, "Default", project, lock)
        assert wait_process(admin, pid)["status"] == "FAILED"
        assert message in log_text(admin, pid)
    # A process of no project has only org locks.
    pid = start(admin, "flows:\n  default:\n    - task: lock\n      in: {name: x}\n", "Default", None, lock)
    assert wait_process(admin, pid)["status"] == "FAILED"
    assert "with scope PROJECT needs a process of a project: use scope ORG" in log_text(admin, pid)
    # In an expression a held lock cannot be waited for; unlock of a lock not held does nothing.
    first = start(admin, holder_flow(), "Default", project, lock)
    wait_for(lambda: holds(admin, first))
    expr = """
flows:
  default:
    - ${lock.unlock(lockName, 'PROJECT')}
    - log: "unlock ok"
    - ${lock.lock(lockName, 'PROJECT')}
"""
    pid = start(admin, expr, "Default", project, lock)
    assert wait_process(admin, pid)["status"] == "FAILED"
    text = log_text(admin, pid)
    assert "unlock ok" in text and "is held by process %s" % first in text, text
    assert lock_state(admin, "Default", project, lock)["holder"]["instanceId"] == first
    go(admin, first)
    assert wait_process(admin, first)["status"] == "FINISHED"
    # The GET: unknown project 404; a user who cannot read the project 403/404 (a PUBLIC one
    # everybody reads); a long name 400.
    assert admin.get("/api/v1/org/Default/project/%s/lock/x" % unique("nope")).status_code == 404
    private, _ = make_project(admin, "Default", visibility="PRIVATE")
    assert admin.get("/api/v1/org/Default/project/%s/lock/x" % private).status_code == 200
    assert new_user().get("/api/v1/org/Default/project/%s/lock/x" % private).status_code in (403, 404)
    r = admin.get("/api/v1/org/Default/project/%s/lock/%s" % (project, "x" * 300))
    assert r.status_code == 400 and r.json()["ok"] is False, r.text


CRITICAL = """
flows:
  default:
    - task: lock
      in: {name: "${lockName}"}
    - log: "enter ${txId}"
    - task: sleep
      in: {duration: 1}
    - log: "leave ${txId}"
    - task: unlock
      in: {name: "${lockName}"}
"""


def critical_section(client, pid):
    """(enter, leave) times of pid's critical section, from its log."""
    times = {}
    for m in re.finditer(r"^(\S+) \[INFO \] (enter|leave) " + pid, log_text(client, pid), re.M):
        times[m.group(2)] = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f%z")
    return times["enter"], times["leave"]


def assert_one_at_a_time(clients, pids, project, lock):
    """Every process ran its critical section, never two at once."""
    for i, pid in enumerate(pids):
        assert wait_process(clients[i % len(clients)], pid, timeout=60)["status"] == "FINISHED"
    spans = sorted(critical_section(clients[0], pid) for pid in pids)
    for (_, leave), (enter, _) in zip(spans, spans[1:]):
        assert leave <= enter, spans
    assert lock_state(clients[0], "Default", project, lock)["holder"] is None


def test_processes_started_together_hold_the_lock_one_at_a_time(admin, project):
    lock = unique("busy")
    pids = [start(admin, CRITICAL, "Default", project, lock) for _ in range(4)]
    assert_one_at_a_time([admin], pids, project, lock)


@pytest.mark.skipif(not TEST_DB, reason="several nodes need PostgreSQL ($ACCORD_TEST_DB)")
def test_two_nodes_hand_the_lock_around_one_at_a_time(nodes):  # noqa: F811
    a, b, _ = nodes()
    b.start()
    admin_a, admin_b = Client(a.url, ADMIN_KEY), Client(b.url, ADMIN_KEY)
    project, _ = make_project(admin_a, "Default", rawPayloadMode="EVERYONE")
    lock = unique("busy")
    pids = [start(c, CRITICAL, "Default", project, lock) for _ in range(3) for c in (admin_a, admin_b)]
    assert_one_at_a_time([admin_a, admin_b], pids, project, lock)


@pytest.mark.skipif(not TEST_DB, reason="several nodes need PostgreSQL ($ACCORD_TEST_DB)")
def test_the_lock_of_a_dead_node_s_process_goes_to_a_waiter_on_the_other_node(nodes):  # noqa: F811
    a, b, url = nodes()
    admin_a = Client(a.url, ADMIN_KEY)
    name, _ = make_project(admin_a, "Default", rawPayloadMode="EVERYONE")
    lock = unique("nodes")
    sleeper = """
flows:
  default:
    - task: lock
      in: {name: "${lockName}"}
    - log: "got the lock ${txId}"
    - task: sleep
      in: {duration: 60}
"""
    holder = start(admin_a, sleeper, "Default", name, lock)
    wait_for(lambda: "got the lock" in log_text(admin_a, holder))
    waiter = start(admin_a, holder_flow(), "Default", name, lock)
    wait_for(lambda: waits_for(admin_a, waiter, holder))
    b.start()
    admin_b = Client(b.url, ADMIN_KEY)
    a.proc.send_signal(signal.SIGKILL)  # A ran the holder; the waiter is SUSPENDED, on no node
    a.proc.wait()
    assert wait_process(admin_b, holder, timeout=30)["status"] == "FAILED"
    wait_for(lambda: holds(admin_b, waiter), timeout=30)
    assert lock_state(admin_b, "Default", name, lock)["holder"]["instanceId"] == waiter
    go(admin_b, waiter)
    assert wait_process(admin_b, waiter)["status"] == "FINISHED"
    assert "released %s" % waiter in log_text(admin_b, waiter)
