"""Checkpoints on the server (issue 9 part 3): the checkpoint step stores a snapshot,
include=checkpoints lists them, POST /api/v1/process/{id}/checkpoint/restore and
GET /api/v2/process/{id}/checkpoint?name=..&action=restore run the process again from there."""
import uuid

from conftest import process_log, start_process, wait_process
from proc_util import make_org, make_project, make_team, status, wait_for

TWO = """
flows:
  default:
    - set:
        x: "one"
    - checkpoint: "first"
    - log: "after first: x=${x} events=${hasVariable('resumeEvents') ? resumeEvents : 'none'}"
    - set:
        x: "two"
    - checkpoint: "second"
    - log: "after second: x=${x} events=${hasVariable('resumeEvents') ? resumeEvents : 'none'} name=${hasVariable('resumeEventName') ? resumeEventName : 'none'}"
    - set:
        x: "three"
    - log: "end: x=${x}"
"""


def finished(client, flow=TWO, parts=None):
    pid = start_process(client, flow, parts=parts)
    p = wait_process(client, pid)
    assert p["status"] == "FINISHED", process_log(client, pid)
    return pid


def checkpoints(client, pid):
    return status(client, pid, include="checkpoints")["checkpoints"]


def test_checkpoints_are_listed(admin):
    pid = finished(admin)
    cps = checkpoints(admin, pid)
    assert [c["name"] for c in cps] == ["first", "second"]
    for c in cps:
        assert set(c) == {"id", "name", "createdAt"}
        uuid.UUID(c["id"])
        assert c["createdAt"].endswith("Z")
    assert cps[0]["id"] != cps[1]["id"]
    # Concord's list endpoint and the process list carry the same
    r = admin.get("/api/v1/process/%s/checkpoint" % pid)
    assert r.status_code == 200, r.text
    assert r.json() == cps
    lst = admin.get("/api/v2/process", params={"include": "checkpoints", "limit": 100}).json()
    mine = [p for p in lst if p["instanceId"] == pid]
    assert mine and mine[0]["checkpoints"] == cps
    # without include: no checkpoints field
    assert "checkpoints" not in status(admin, pid)
    log = process_log(admin, pid)
    assert "Checkpoint 'first' created" in log and "Checkpoint 'second' created" in log
    ev = admin.get("/api/v1/process/%s/event" % pid, params={"type": "CHECKPOINT"}).json()
    assert [(e["data"]["name"], e["data"]["id"]) for e in ev] == [(c["name"], c["id"]) for c in cps]


def test_restore_first_by_id(admin):
    pid = finished(admin)
    first = checkpoints(admin, pid)[0]
    r = admin.post("/api/v1/process/%s/checkpoint/restore" % pid, json={"id": first["id"]})
    assert r.status_code == 200, r.text
    assert r.json() == {"ok": True}
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    log = process_log(admin, pid)
    assert log.count("after first: x=one events=none") == 1
    assert log.count("after first: x=one events=[first]") == 1, log
    assert log.count("after second: x=two") == 2
    assert log.count("end: x=three") == 2
    # the restored run passed the second checkpoint again: three checkpoints now
    assert [c["name"] for c in checkpoints(admin, pid)] == ["first", "second", "second"]


def test_restore_second_by_name(admin):
    pid = finished(admin)
    r = admin.get("/api/v2/process/%s/checkpoint" % pid, params={"name": "second", "action": "restore"})
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is True
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    log = process_log(admin, pid)
    assert log.count("after first:") == 1, log
    assert log.count("after second: x=two events=[second] name=second") == 1, log
    assert log.count("end: x=three") == 2


def test_restore_event_and_history(admin):
    pid = finished(admin)
    first = checkpoints(admin, pid)[0]
    assert admin.post("/api/v1/process/%s/checkpoint/restore" % pid, json={"id": first["id"]}).status_code == 200
    assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
    ev = admin.get("/api/v1/process/%s/event" % pid, params={"type": "CHECKPOINT_RESTORE"}).json()
    assert len(ev) == 1
    assert ev[0]["data"]["checkpointId"] == first["id"]
    assert ev[0]["data"]["processStatus"] == "FINISHED"
    p = status(admin, pid, include=["history", "checkpointsHistory"])
    hist = [h["status"] for h in p["statusHistory"]]
    i = hist.index("FINISHED")
    assert hist[i:] == ["FINISHED", "RESUMING", "ENQUEUED", "STARTING", "RUNNING", "FINISHED"], (hist, p)
    assert [(h["checkpointId"], h["processStatus"]) for h in p["checkpointRestoreHistory"]] == [
        (first["id"], "FINISHED")]


def test_restore_of_a_suspended_process(admin):
    flow = """
flows:
  default:
    - set:
        x: 1
    - checkpoint: "cp"
    - log: "after cp: x=${x}"
    - set:
        x: 2
    - suspend: wait
    - log: "resumed"
"""
    pid = start_process(admin, flow)
    assert wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))["status"] == "SUSPENDED"
    r = admin.get("/api/v2/process/%s/checkpoint" % pid, params={"name": "cp", "action": "restore"})
    assert r.status_code == 200, r.text
    wait_for(lambda: process_log(admin, pid).count("after cp: x=1") == 2)
    p = wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))
    assert p["status"] == "SUSPENDED", process_log(admin, pid)
    assert admin.post("/api/v1/process/%s/resume/wait" % pid, json={}).status_code == 200
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "resumed" in process_log(admin, pid)


def test_restore_errors(admin):
    pid = finished(admin)
    url = "/api/v1/process/%s/checkpoint/restore" % pid
    r = admin.post(url, json={"id": str(uuid.uuid4())})
    assert r.status_code == 404, r.text
    assert "Checkpoint not found" in r.json()["message"]
    assert admin.post(url, json={}).status_code == 400
    assert admin.post(url, json={"id": 5}).status_code == 400
    r = admin.get("/api/v2/process/%s/checkpoint" % pid, params={"name": "nope", "action": "restore"})
    assert r.status_code == 404
    r = admin.get("/api/v2/process/%s/checkpoint" % pid, params={"name": "first", "action": "list"})
    assert r.status_code == 400
    r = admin.get("/api/v2/process/%s/checkpoint" % pid, params={"action": "restore"})
    assert r.status_code == 400
    other = "00000000-0000-4000-8000-000000000000"
    assert admin.post("/api/v1/process/%s/checkpoint/restore" % other, json={"id": other}).status_code == 404
    # another process's checkpoint is not this one's
    pid2 = finished(admin)
    cp2 = checkpoints(admin, pid2)[0]
    assert admin.post(url, json={"id": cp2["id"]}).status_code == 404
    assert status(admin, pid)["status"] == "FINISHED"


def test_restore_of_a_running_process_conflicts(admin):
    flow = """
flows:
  default:
    - checkpoint: "early"
    - task: sleep
      in:
        duration: 3
"""
    pid = start_process(admin, flow)
    wait_for(lambda: status(admin, pid)["status"] == "RUNNING" and checkpoints(admin, pid))
    cp = checkpoints(admin, pid)[0]
    r = admin.post("/api/v1/process/%s/checkpoint/restore" % pid, json={"id": cp["id"]})
    assert r.status_code == 409, r.text
    assert "RUNNING" in r.json()["message"]
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert process_log(admin, pid).count("Checkpoint 'early' created") == 1


def test_invalid_checkpoint_name_fails_the_step(admin):
    pid = start_process(admin, """
flows:
  default:
    - checkpoint: "-bad"
    - log: "not reached"
""")
    p = wait_process(admin, pid)
    assert p["status"] == "FAILED"
    log = process_log(admin, pid)
    assert "Checkpoint '-bad': invalid checkpoint name" in log, log
    assert "not reached" not in log
    assert checkpoints(admin, pid) == []


def test_restore_needs_write_access(admin, new_user):
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    reader = new_user()
    make_team(admin, org, [(reader, "MEMBER")], project=proj, level="READER")
    writer = new_user()
    make_team(admin, org, [(writer, "MEMBER")], project=proj, level="WRITER")
    pid = finished(admin, parts={"org": org, "project": proj})
    cps = checkpoints(reader, pid)
    assert len(cps) == 2
    url = "/api/v1/process/%s/checkpoint/restore" % pid
    assert reader.post(url, json={"id": cps[0]["id"]}).status_code == 403
    r = reader.get("/api/v2/process/%s/checkpoint" % pid, params={"name": "first", "action": "restore"})
    assert r.status_code == 403
    assert status(admin, pid)["status"] == "FINISHED"
    r = writer.post(url, json={"id": cps[1]["id"]})
    assert r.status_code == 200, r.text
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "after second: x=two events=[second]" in process_log(admin, pid)


def test_restored_run_replaces_out_and_attachments(admin):
    flow = """
flows:
  default:
    - checkpoint: "cp"
    - if: ${!hasVariable('resumeEvents')}
      then:
        - set:
            result: "first run"
"""
    pid = start_process(admin, flow, parts={"out": "result"})
    assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
    assert status(admin, pid)["meta"]["out"] == {"result": "first run"}
    assert "out.json" in admin.get("/api/v1/process/%s/attachment" % pid).json()
    r = admin.get("/api/v2/process/%s/checkpoint" % pid, params={"name": "cp", "action": "restore"})
    assert r.status_code == 200, r.text
    assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
    assert "out" not in status(admin, pid).get("meta", {})
    assert "out.json" not in admin.get("/api/v1/process/%s/attachment" % pid).json()
    # its checkpoint stays (the restored run starts after it)
    assert [c["name"] for c in checkpoints(admin, pid)] == ["cp"]


def test_restore_by_name_takes_the_latest(admin):
    pid = finished(admin, """
flows:
  default:
    - call: step
      withItems: ["a", "b"]
    - log: "done"
  step:
    - set:
        x: "${item}"
    - checkpoint: "loop"
    - log: "after loop checkpoint: x=${x}"
""")
    assert [c["name"] for c in checkpoints(admin, pid)] == ["loop", "loop"]
    r = admin.get("/api/v2/process/%s/checkpoint" % pid, params={"name": "loop", "action": "restore"})
    assert r.status_code == 200, r.text
    assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
    log = process_log(admin, pid)
    assert log.count("after loop checkpoint: x=b") == 2, log
    assert log.count("after loop checkpoint: x=a") == 1, log


def test_restore_right_after_the_end(admin):
    # The restore must not race the clean-up of the run that just ended (its supervisor
    # may still be dropping the payload and removing the working directory).
    flow = """
flows:
  default:
    - checkpoint: "cp"
    - log: "ran"
"""
    pid = start_process(admin, flow)
    for n in range(2, 6):
        wait_for(lambda: status(admin, pid)["status"] in ("FINISHED", "FAILED"), step=0.005)
        assert status(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
        r = admin.get("/api/v2/process/%s/checkpoint" % pid, params={"name": "cp", "action": "restore"})
        assert r.status_code == 200, r.text
    assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
    assert process_log(admin, pid).count("ran") == 5
