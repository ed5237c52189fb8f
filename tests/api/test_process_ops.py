"""Process operations (issue 26 part 4, first bullet; Concord's ProcessResource): restart,
kill cascade, bulk kill, disable and the wait conditions, with the process's access rules."""
import uuid

import pytest

import db_util

from conftest import ADMIN_KEY, Client, process_log, start_process, wait_process
from proc_util import make_org, make_project, sleeper, status, wait_for

COUNTING = """
flows:
  default:
    - log: "step one of ${txId}"
    - task: sleep
      in:
        duration: 1
        suspend: true
    - log: "step two"
"""


def history(client, pid):
    return [h["status"] for h in status(client, pid, include="history")["statusHistory"]]


@pytest.fixture
def srv(fresh_server):
    s = fresh_server(args=["--workers", "6"]).start()
    yield s
    s.stop()


@pytest.fixture
def adm(srv):
    return Client(srv.url, ADMIN_KEY, "admin")


# ---- restart ----------------------------------------------------------------------------

def test_restart_runs_a_finished_process_again_from_its_start(adm):
    pid = start_process(adm, COUNTING)
    assert wait_process(adm, pid)["status"] == "FINISHED"
    r = adm.post("/api/v1/process/%s/restart" % pid)
    assert r.status_code == 200, r.text
    assert r.json() == {"ok": True, "instanceId": pid}
    wait_for(lambda: history(adm, pid).count("FINISHED") == 2, timeout=30)
    log = process_log(adm, pid)
    # from the payload it was started with, not the one it suspended with
    assert log.count("step one of %s" % pid) == 2, log
    assert log.count("step two") == 2, log
    assert "Process restarted by admin" in log
    h = history(adm, pid)
    assert h[h.index("FINISHED") + 1:h.index("FINISHED") + 3] == ["RESUMING", "ENQUEUED"], h
    r = adm.get("/api/v1/audit", params={"object": "PROCESS", "action": "RESTART"})
    assert r.status_code == 200, r.text
    assert [e["details"].get("instanceId") for e in r.json()] == [pid]


def test_restart_of_a_failed_process_and_of_a_running_one(adm):
    pid = start_process(adm, 'flows:\n  default:\n    - log: "try"\n    - throw: "broken"\n')
    assert wait_process(adm, pid)["status"] == "FAILED"
    assert adm.post("/api/v1/process/%s/restart" % pid).status_code == 200
    wait_for(lambda: history(adm, pid).count("FAILED") == 2, timeout=30)
    assert process_log(adm, pid).count("try") >= 2

    running = start_process(adm, sleeper(30))
    wait_process(adm, running, ("RUNNING",))
    r = adm.post("/api/v1/process/%s/restart" % running)
    assert r.status_code == 409, r.text
    assert r.json()["message"] == "Can't restart running process: %s" % running
    assert adm.delete("/api/v1/process/%s" % running).status_code == 204

    r = adm.post("/api/v1/process/%s/restart" % uuid.uuid4())
    assert r.status_code == 404, r.text


def test_restart_of_a_child_restarts_the_root_and_stops_the_tree(adm):
    root = start_process(adm, 'flows:\n  default:\n    - log: "root ran"\n')
    assert wait_process(adm, root)["status"] == "FINISHED"
    child = start_process(adm, sleeper(30), parts={"parentInstanceId": root})
    wait_process(adm, child, ("RUNNING",))
    # the tree's root is final: the restart goes there and stops the running child
    r = adm.post("/api/v1/process/%s/restart" % child)
    assert r.status_code == 200, r.text
    assert r.json()["instanceId"] == child
    assert wait_process(adm, child)["status"] == "CANCELLED"
    wait_for(lambda: history(adm, root).count("FINISHED") == 2, timeout=30)
    assert process_log(adm, root).count("root ran") == 2


def test_no_restart_once_retention_dropped_the_start_payload(fresh_server, tmp_path):
    data = str(tmp_path / "data")
    first = fresh_server(data_dir=data).start()
    adm = Client(first.url, ADMIN_KEY)
    pid = start_process(adm, 'flows:\n  default:\n    - log: "x"\n')
    assert wait_process(adm, pid)["status"] == "FINISHED"
    assert first.stop() == 0
    day = 86400 * 1000
    db_util.execute(data, "UPDATE processes SET created_at = created_at - %d, last_updated_at = last_updated_at - %d"
                          " WHERE instance_id = '%s'" % (40 * day, 40 * day, pid))
    srv = fresh_server(data_dir=data, args=["--retention-states", "30d", "--retention-interval", "1"]).start()
    adm = Client(srv.url, ADMIN_KEY)
    kept = "SELECT count(*) FROM process_start_payloads WHERE instance_id = '%s'" % pid
    wait_for(lambda: db_util.rows(data, kept)[0][0] == 0, timeout=90)
    r = adm.post("/api/v1/process/%s/restart" % pid)
    assert r.status_code == 409, r.text
    assert "the payload it was started with is not kept" in r.json()["message"]
    assert status(adm, pid)["status"] == "FINISHED"


# ---- kill cascade and bulk --------------------------------------------------------------

def test_kill_cascade_stops_the_whole_tree_and_nothing_else(adm):
    parent = start_process(adm, sleeper(60))
    child = start_process(adm, sleeper(60), parts={"parentInstanceId": parent})
    grandchild = start_process(adm, sleeper(60), parts={"parentInstanceId": child})
    other = start_process(adm, sleeper(60))
    for pid in (parent, child, grandchild, other):
        wait_process(adm, pid, ("RUNNING",))
    r = adm.delete("/api/v1/process/%s/cascade" % parent)
    assert r.status_code == 204, r.text
    for pid in (parent, child, grandchild):
        assert wait_process(adm, pid)["status"] == "CANCELLED"
    assert status(adm, other)["status"] == "RUNNING"
    assert adm.delete("/api/v1/process/%s" % other).status_code == 204
    assert adm.delete("/api/v1/process/%s/cascade" % uuid.uuid4()).status_code == 404


def test_bulk_kill_and_its_partial_failure(adm, srv):
    a = start_process(adm, sleeper(60))
    b = start_process(adm, sleeper(60))
    unknown = str(uuid.uuid4())
    r = adm.delete("/api/v1/process/bulk", json=[a, unknown, b])
    assert r.status_code == 404, r.text
    body = r.json()
    assert body["ok"] is False
    assert body["message"] == "Process instance not found: %s (1 of 3 processes could not be stopped)" % unknown
    assert [f["instanceId"] for f in body["failed"]] == [unknown]
    assert unknown in body["failed"][0]["message"]
    # the others were stopped all the same
    assert wait_process(adm, a)["status"] == "CANCELLED"
    assert wait_process(adm, b)["status"] == "CANCELLED"

    c = start_process(adm, sleeper(60))
    assert adm.delete("/api/v1/process/bulk", json=[c]).status_code == 204
    assert wait_process(adm, c)["status"] == "CANCELLED"
    r = adm.get("/api/v1/audit", params={"object": "PROCESS", "action": "STOP"})
    assert c in [e["details"].get("instanceIds") for e in r.json()]

    for bad in ({"ids": [c]}, [], [1, 2], "x"):
        r = adm.delete("/api/v1/process/bulk", json=bad)
        assert r.status_code == 400, (bad, r.text)
        assert r.json()["ok"] is False


def test_bulk_kill_refuses_what_the_caller_may_not_stop(adm):
    from conftest import make_user
    mine_user = make_user(adm)
    theirs = start_process(adm, sleeper(60))
    mine = start_process(mine_user, sleeper(60))
    r = mine_user.delete("/api/v1/process/bulk", json=[theirs, mine])
    assert r.status_code == 403, r.text
    assert [f["instanceId"] for f in r.json()["failed"]] == [theirs]
    assert wait_process(mine_user, mine)["status"] == "CANCELLED"
    assert status(adm, theirs)["status"] in ("ENQUEUED", "STARTING", "RUNNING")
    assert mine_user.delete("/api/v1/process/%s/cascade" % theirs).status_code == 403
    assert adm.delete("/api/v1/process/%s" % theirs).status_code == 204


# ---- disable ----------------------------------------------------------------------------

def test_disable_only_a_finished_process(adm):
    from conftest import make_user
    running = start_process(adm, sleeper(60))
    wait_process(adm, running, ("RUNNING",))
    assert adm.post("/api/v1/process/%s/disable/true" % running).status_code == 204
    assert status(adm, running)["disabled"] is False  # as Concord: only a final one
    assert adm.delete("/api/v1/process/%s" % running).status_code == 204

    pid = start_process(adm, 'flows:\n  default:\n    - log: "x"\n')
    wait_process(adm, pid)
    assert status(adm, pid)["disabled"] is False
    assert adm.post("/api/v1/process/%s/disable/true" % pid).status_code == 204
    assert status(adm, pid)["disabled"] is True
    assert adm.post("/api/v1/process/%s/disable/false" % pid).status_code == 204
    assert status(adm, pid)["disabled"] is False
    r = adm.post("/api/v1/process/%s/disable/maybe" % pid)
    assert r.status_code == 400 and r.json()["ok"] is False
    other = make_user(adm)
    assert other.post("/api/v1/process/%s/disable/true" % pid).status_code == 403
    assert adm.post("/api/v1/process/%s/disable/true" % uuid.uuid4()).status_code == 404


def test_a_disabled_process_cannot_restore_a_checkpoint(adm):
    flow = """
flows:
  default:
    - checkpoint: "one"
    - log: "after"
"""
    pid = start_process(adm, flow)
    assert wait_process(adm, pid)["status"] == "FINISHED"
    cps = adm.get("/api/v1/process/%s/checkpoint" % pid).json()
    assert cps, "no checkpoint"
    assert adm.post("/api/v1/process/%s/disable/true" % pid).status_code == 204
    r = adm.post("/api/v1/process/%s/checkpoint/restore" % pid, json={"id": cps[0]["id"]})
    assert r.status_code == 400, r.text
    assert r.json()["message"] == "Checkpoint can not be restored as process is disabled -> %s" % pid


# ---- wait conditions --------------------------------------------------------------------

def waits(client, pid):
    r = client.get("/api/v1/process/%s/waits" % pid)
    assert r.status_code == 200, r.text
    return r.json()


def test_waits_of_a_finished_and_a_sleeping_process(adm):
    pid = start_process(adm, 'flows:\n  default:\n    - log: "x"\n')
    wait_process(adm, pid)
    assert waits(adm, pid) == {"isWaiting": False, "waits": []}
    sleeping = start_process(adm, COUNTING.replace("duration: 1", "duration: 60"))
    wait_process(adm, sleeping, ("SUSPENDED",))
    w = waits(adm, sleeping)
    assert w["isWaiting"] is True
    assert len(w["waits"]) == 1 and w["waits"][0]["type"] == "PROCESS_SLEEP"
    assert w["waits"][0]["until"].endswith("Z") and w["waits"][0]["exclusive"] is False
    assert w["waits"][0]["reason"] == "Waiting till " + w["waits"][0]["until"]
    assert adm.get("/api/v1/process/%s/waits" % uuid.uuid4()).status_code == 404
    assert adm.delete("/api/v1/process/%s" % sleeping).status_code == 204


def test_waits_for_a_form_and_for_children(adm):
    pid = start_process(adm, """
flows:
  default:
    - form: survey
forms:
  survey:
    - color: {type: string}
""")
    wait_process(adm, pid, ("SUSPENDED",))
    w = waits(adm, pid)
    assert w["isWaiting"] and [x["type"] for x in w["waits"]] == ["PROCESS_FORM"]
    assert w["waits"][0]["formName"] == "survey"
    assert adm.delete("/api/v1/process/%s" % pid).status_code == 204

    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        sync: true
        suspend: true
"""
    files = {"child/concord.yml": b"flows:\n  default:\n    - task: sleep\n      in:\n        duration: 60\n"}
    parent = start_process(adm, flow, files=files)
    wait_process(adm, parent, ("SUSPENDED",))
    kid = adm.get("/api/v1/process/%s/subprocess" % parent).json()[0]["instanceId"]
    w = waits(adm, parent)
    assert [x["type"] for x in w["waits"]] == ["PROCESS_COMPLETION"], w
    assert w["waits"][0]["processes"] == [kid]
    assert w["waits"][0]["reason"] == "Waiting for child processes"
    assert adm.delete("/api/v1/process/%s/cascade" % parent).status_code == 204
    assert wait_process(adm, kid)["status"] == "CANCELLED"


def test_waits_for_an_exclusive_group(adm):
    org, _ = make_org(adm)
    proj, _ = make_project(adm, org, rawPayloadMode="EVERYONE")
    flow = """
configuration:
  exclusive:
    group: "g1"
    mode: "wait"
flows:
  default:
    - task: sleep
      in:
        duration: 60
"""
    first = start_process(adm, flow, parts={"org": org, "project": proj})
    wait_process(adm, first, ("RUNNING",))
    second = start_process(adm, flow, parts={"org": org, "project": proj})
    wait_process(adm, second, ("WAITING",))
    w = waits(adm, second)
    assert w["isWaiting"] is True
    assert w["waits"] == [{"type": "PROCESS_COMPLETION", "reason": "Waiting for the exclusive group 'g1'",
                           "exclusive": True, "group": "g1", "processes": [first]}]
    assert adm.delete("/api/v1/process/bulk", json=[second, first]).status_code == 204
