"""Processes (issue 8 items 1-5): start with every part kind, request-time validation,
status v1/v2 and its includes, FAILED/TIMED_OUT, stop.  The flows report what they saw
through `out` variables (meta.out of the status), which needs no log endpoint."""
import datetime
import json
import re
import time
import uuid

import pytest

from conftest import start_process, unique, wait_process
from proc_util import HELLO, log_text, make_org, make_project, sleeper, status, zip_bytes

UUID = uuid.UUID


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%03d" % (dt.microsecond // 1000) + "Z"


def newest_id(admin):
    r = admin.get("/api/v2/process", params={"limit": 1})
    assert r.status_code == 200, r.text
    return [p["instanceId"] for p in r.json()]


def finished_out(client, pid):
    p = wait_process(client, pid)
    assert p["status"] == "FINISHED", p
    return p.get("meta", {}).get("out", {})


# ---- start: parts ------------------------------------------------------------------------

def test_hello_world_status_v2_and_v1(admin):
    pid = start_process(admin, HELLO)
    UUID(pid)
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED"
    assert p["instanceId"] == pid and p["orgName"] == "Default" and p["initiator"] == "admin"
    assert "projectName" not in p and "parentInstanceId" not in p
    for k in ("createdAt", "lastUpdatedAt"):
        assert p[k].endswith("Z") and len(p[k]) == 24, p[k]
    assert p["lastUpdatedAt"] >= p["createdAt"]
    assert p["meta"]["entryPoint"] == "default"
    v1 = admin.get("/api/v1/process/%s" % pid)
    assert v1.status_code == 200 and v1.json()["instanceId"] == pid and v1.json()["status"] == "FINISHED"
    assert v1.json()["createdAt"] == p["createdAt"]


def test_request_json_gives_typed_arguments(admin):
    flow = """
flows:
  default:
    - set:
        y: "${x + 1}"
        isInt: "${x == 41}"
        nested: "${cfg.deep.n * 2}"
"""
    req = json.dumps({"arguments": {"x": 41, "cfg": {"deep": {"n": 21}}}}).encode()
    pid = start_process(admin, flow, parts={"out": "y,isInt,nested"},
                        files={"request": (req, "application/json")})
    out = finished_out(admin, pid)
    assert out["y"] == 42 and out["isInt"] is True and out["nested"] == 42, out


def test_text_parts_nest_with_dots(admin):
    flow = """
flows:
  default:
    - set:
        got: "${a.b}-${a.c}-${top}"
"""
    pid = start_process(admin, flow, parts=[("arguments.a.b", "one"), ("arguments.a.c", "two"),
                                            ("arguments.top", " three "), ("out", "got")])
    # text values are strings (trimmed as Concord does)
    assert finished_out(admin, pid)["got"] == "one-two-three"


def test_active_profiles(admin):
    flow = """
configuration:
  arguments:
    who: "base"
flows:
  default:
    - set:
        saw: "${who}"
profiles:
  p1:
    configuration:
      arguments:
        who: "p1"
  p2:
    flows:
      default:
        - set:
            saw: "p2 flow"
"""
    assert finished_out(admin, start_process(admin, flow, parts={"out": "saw"}))["saw"] == "base"
    pid = start_process(admin, flow, parts={"out": "saw", "activeProfiles": "p1"})
    assert finished_out(admin, pid)["saw"] == "p1"
    pid = start_process(admin, flow, parts={"out": "saw", "activeProfiles": "p1,p2"})
    assert finished_out(admin, pid)["saw"] == "p2 flow"


def test_entry_point(admin):
    flow = """
flows:
  default:
    - set: {which: "default"}
  other:
    - set: {which: "other"}
"""
    assert finished_out(admin, start_process(admin, flow, parts={"out": "which"}))["which"] == "default"
    pid = start_process(admin, flow, parts={"out": "which", "entryPoint": "other"})
    p = wait_process(admin, pid)
    assert p["meta"]["out"]["which"] == "other" and p["meta"]["entryPoint"] == "other"


def test_out_values_in_meta(admin):
    flow = """
flows:
  default:
    - set:
        a: 1
        b: {k: [1, "two"]}
        c: "text"
"""
    out = finished_out(admin, start_process(admin, flow, parts={"out": "a,b"}))
    assert out == {"a": 1, "b": {"k": [1, "two"]}}


def test_archive_part(admin):
    flow = """
flows:
  default:
    - set:
        content: "${resource.asString('data/x.txt')}"
"""
    z = zip_bytes({"concord.yml": flow, "data/x.txt": "from the archive"})
    pid = start_process(admin, parts={"out": "content"}, files={"archive": z})
    assert finished_out(admin, pid)["content"] == "from the archive"


def test_file_parts_land_in_the_working_dir(admin):
    flow = """
flows:
  default:
    - set:
        x: "${resource.asString('data/x.txt')}"
        y: "${resource.asString('y.txt')}"
"""
    pid = start_process(admin, flow, parts={"out": "x,y"},
                        files={"data/x.txt": b"file part x", "y.txt": b"why"})
    assert finished_out(admin, pid) == {"x": "file part x", "y": "why"}


def test_archive_and_file_part_together(admin):
    z = zip_bytes({"concord.yml": "flows:\n  default:\n    - set: {v: \"${resource.asString('extra.txt')}\"}\n"})
    pid = start_process(admin, parts={"out": "v"}, files={"archive": z, "extra.txt": b"extra"})
    assert finished_out(admin, pid)["v"] == "extra"


def test_tags_and_meta(admin):
    meta = json.dumps({"k": "v", "n": 5}).encode()
    pid = start_process(admin, HELLO, parts={"tags": "red, blue,red"}, files={"meta": (meta, "application/json")})
    p = wait_process(admin, pid)
    assert sorted(p["tags"]) == ["blue", "red"]
    assert p["meta"]["k"] == "v" and p["meta"]["n"] == 5 and p["meta"]["entryPoint"] == "default"


def test_org_and_project_parts(admin):
    org, org_id = make_org(admin)
    closed, closed_id = make_project(admin, org, rawPayloadMode="DISABLED")
    open_, open_id = make_project(admin, org, rawPayloadMode="EVERYONE")
    r = start_process(admin, HELLO, parts={"org": org, "project": closed}, expect=400)
    assert "raw payload" in r.json()["message"] and r.json()["ok"] is False
    for parts in ({"org": org, "project": open_}, {"orgId": org_id, "projectId": open_id}, {"projectId": open_id}):
        p = wait_process(admin, start_process(admin, HELLO, parts=parts))
        assert p["status"] == "FINISHED" and p["orgName"] == org and p["projectName"] == open_, parts
        assert p["orgId"] == org_id and p["projectId"] == open_id
    # an org alone: the process is in that org without a project
    p = wait_process(admin, start_process(admin, HELLO, parts={"org": org}))
    assert p["orgName"] == org and "projectName" not in p


def test_start_at_waits_then_runs(admin):
    at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=2)
    pid = start_process(admin, HELLO, parts={"startAt": iso(at)})
    p = status(admin, pid)
    assert p["status"] == "ENQUEUED" and p["startAt"] == iso(at)
    time.sleep(1)
    assert status(admin, pid)["status"] == "ENQUEUED"
    p = wait_process(admin, pid, timeout=30)
    assert p["status"] == "FINISHED"
    hist = status(admin, pid, include="history")["statusHistory"]
    running = [h for h in hist if h["status"] == "RUNNING"][0]
    assert running["changeDate"] >= iso(at)[:19], hist


@pytest.mark.parametrize("value", ["2020-01-01T00:00:00.000Z", "2099-01-01T00:00:00", "tomorrow", "2099-13-01T00:00:00Z"])
def test_start_at_bad(admin, value):
    before = newest_id(admin)
    r = start_process(admin, HELLO, parts={"startAt": value}, expect=400)
    assert "startAt" in r.json()["message"]
    assert newest_id(admin) == before


def test_process_timeout(admin):
    pid = start_process(admin, sleeper(20), parts={"processTimeout": "PT1S"})
    p = wait_process(admin, pid, timeout=30)
    assert p["status"] == "TIMED_OUT", p  # not FINISHED: stopped before the sleep's end
    log = log_text(admin, pid)
    if log is not None:
        assert "Process timed out (1s limit)" in log and "woke up" not in log


def test_process_timeout_in_configuration(admin):
    flow = "configuration:\n  processTimeout: PT1S\n" + sleeper(5)
    assert wait_process(admin, start_process(admin, flow), timeout=20)["status"] == "TIMED_OUT"


def test_timeouts_parse(admin):
    pid = start_process(admin, HELLO, parts={"processTimeout": "PT1H", "suspendTimeout": "P1DT30M"})
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED" and p["timeout"] == 3600 and p["suspendTimeout"] == 86400 + 1800
    before = newest_id(admin)
    for k in ("processTimeout", "suspendTimeout"):
        for bad in ("soon", "-PT1S", "PT", "P1H"):
            r = start_process(admin, HELLO, parts={k: bad}, expect=400)
            assert k in r.json()["message"], r.text
    assert newest_id(admin) == before


def test_parent_instance_id(admin):
    org, _ = make_org(admin)
    proj, proj_id = make_project(admin, org, rawPayloadMode="EVERYONE")
    r = start_process(admin, HELLO, parts={"parentInstanceId": str(uuid.uuid4())}, expect=400)
    assert "parent" in r.json()["message"].lower()
    r = start_process(admin, HELLO, parts={"parentInstanceId": "not-a-uuid"}, expect=400)
    parent = start_process(admin, HELLO, parts={"projectId": proj_id})
    kids = [start_process(admin, HELLO, parts={"parentInstanceId": parent, "projectId": proj_id}) for _ in range(2)]
    for k in kids:
        assert wait_process(admin, k)["parentInstanceId"] == parent
    p = status(admin, parent, include="childrenIds")
    assert sorted(p["childrenIds"]) == sorted(kids)
    assert status(admin, kids[0], include="childrenIds")["childrenIds"] == []
    r = admin.get("/api/v2/process", params={"parentInstanceId": parent})
    assert r.status_code == 200 and sorted(x["instanceId"] for x in r.json()) == sorted(kids)


# ---- start: refused requests -------------------------------------------------------------

def refused(admin, flow=None, parts=None, files=None, words=()):
    before = newest_id(admin)
    r = start_process(admin, flow, parts=parts, files=files, expect=400)
    body = r.json()
    assert body["ok"] is False and r.headers["Content-Type"].startswith("application/json")
    for w in words:
        assert w in body["message"], body["message"]
    assert newest_id(admin) == before, "a refused start created a process"
    return body["message"]


def test_definition_that_does_not_parse(admin):
    msg = refused(admin, "flows:\n  default:\n    - log: [unclosed\n")
    assert re.search(r"\(concord\.yml\): Error @ line: 4, col: 1\.", msg), msg
    msg = refused(admin, "flows:\n  default:\n    - nosuchstep: 1\n")
    assert "(concord.yml): Error @ line: 3, col: 7." in msg and "nosuchstep" in msg, msg
    # a file of the concord/ folder inside an archive is named by its path
    z = zip_bytes({"concord.yml": HELLO, "concord/more.concord.yml": "flows:\n  x:\n    - bad: {\n"})
    msg = refused(admin, files={"archive": z})
    assert re.search(r"concord/more\.concord\.yml\): Error @ line: \d+, col: \d+", msg), msg


def test_no_definition(admin):
    refused(admin, parts={"arguments.x": "1"})


def test_unknown_entry_point(admin):
    refused(admin, HELLO, parts={"entryPoint": "nope"}, words=("nope",))


def test_unknown_org_or_project(admin):
    org, _ = make_org(admin)
    refused(admin, HELLO, parts={"org": unique("no-org")})
    refused(admin, HELLO, parts={"orgId": str(uuid.uuid4())})
    refused(admin, HELLO, parts={"org": org, "project": unique("no-proj")})
    refused(admin, HELLO, parts={"projectId": str(uuid.uuid4())})
    refused(admin, HELLO, parts={"project": "x"})  # a project name needs an org


def test_bad_archive(admin):
    refused(admin, files={"archive": zip_bytes({"concord.yml": HELLO, "../x": "escape"})})
    refused(admin, files={"archive": zip_bytes({"concord.yml": HELLO, "/abs/x": "escape"})})
    refused(admin, files={"archive": b"this is not a zip file"})


@pytest.mark.parametrize("name", ["../x.txt", "/etc/x.txt", "a/../../x.txt", "a//b/../../../x"])
def test_invalid_attachment_names(admin, name):
    refused(admin, HELLO, files={name: b"x"}, words=("Invalid attachment name",))


def test_meta_and_request_as_text(admin):
    refused(admin, HELLO, parts={"meta": '{"k":"v"}'}, words=("meta",))
    refused(admin, HELLO, parts={"request": '{"arguments":{}}'}, words=("request",))
    refused(admin, HELLO, files={"meta": (b"[1,2]", "application/json")}, words=("meta",))
    refused(admin, HELLO, files={"request": (b"{bad json", "application/json")}, words=("request",))


def test_sync_true(admin):
    refused(admin, HELLO, parts={"sync": "true"}, words=("sync",))
    assert wait_process(admin, start_process(admin, HELLO, parts={"sync": "false"}))["status"] == "FINISHED"


def test_not_multipart_is_415(admin):
    before = newest_id(admin)
    r = admin.post("/api/v1/process", json={"arguments": {}})
    assert r.status_code == 415 and r.json()["ok"] is False
    r = admin.post("/api/v1/process", data=HELLO, headers={"Content-Type": "application/octet-stream"})
    assert r.status_code == 415
    assert newest_id(admin) == before


def test_anonymous_start_is_401(anon, admin):
    before = newest_id(admin)
    r = anon.post("/api/v1/process", files=[("concord.yml", ("concord.yml", HELLO.encode(), "application/octet-stream"))])
    assert r.status_code == 401
    assert newest_id(admin) == before


# ---- status ------------------------------------------------------------------------------

def test_history_include(admin):
    pid = start_process(admin, HELLO)
    wait_process(admin, pid)
    p = status(admin, pid, include="history")
    hist = p["statusHistory"]
    assert [h["status"] for h in hist] == ["NEW", "ENQUEUED", "STARTING", "RUNNING", "FINISHED"], hist
    dates = [h["changeDate"] for h in hist]
    assert dates == sorted(dates)
    assert "statusHistory" not in status(admin, pid)


def test_repeated_and_unknown_includes(admin):
    pid = start_process(admin, HELLO)
    wait_process(admin, pid)
    p = status(admin, pid, include=["history", "childrenIds", "history", "checkpoints"])
    assert p["childrenIds"] == [] and len(p["statusHistory"]) == 5 and p["checkpoints"] == []
    r = admin.get("/api/v2/process/%s" % pid, params={"include": ["history", "bogus"]})
    assert r.status_code == 400 and "bogus" in r.json()["message"]


def test_unknown_process_is_404(admin):
    for path in ("/api/v2/process/%s" % uuid.uuid4(), "/api/v1/process/%s" % uuid.uuid4(), "/api/v2/process/nope"):
        r = admin.get(path)
        assert r.status_code == 404 and r.json()["ok"] is False, path
    assert admin.delete("/api/v1/process/%s" % uuid.uuid4()).status_code == 404


def test_failed_process(admin):
    flow = """
flows:
  default:
    - log: "before"
    - throw: "boom"
    - set: {after: true}
"""
    p = wait_process(admin, start_process(admin, flow, parts={"out": "after"}))
    assert p["status"] == "FAILED"
    out = p["meta"]["out"]
    assert out["lastError"]["message"] == "boom" and "after" not in out
    hist = [h["status"] for h in status(admin, p["instanceId"], include="history")["statusHistory"]]
    assert hist[-1] == "FAILED" and "FINISHED" not in hist


def test_failed_in_expression(admin):
    flow = "flows:\n  default:\n    - log: \"${nosuchvariable.x}\"\n"
    p = wait_process(admin, start_process(admin, flow))
    assert p["status"] == "FAILED" and "nosuchvariable" in p["meta"]["out"]["lastError"]["message"]


# ---- stop --------------------------------------------------------------------------------

def test_stop_queued(admin):
    at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=30)
    pid = start_process(admin, HELLO, parts={"startAt": iso(at)})
    assert status(admin, pid)["status"] == "ENQUEUED"
    r = admin.delete("/api/v1/process/%s" % pid)
    assert r.status_code == 204 and r.content == b""
    assert status(admin, pid)["status"] == "CANCELLED"  # at once, not when it was due
    hist = [h["status"] for h in status(admin, pid, include="history")["statusHistory"]]
    assert hist[-2:] == ["ENQUEUED", "CANCELLED"]


def test_stop_running(admin):
    pid = start_process(admin, sleeper(30))
    wait_process(admin, pid, ("RUNNING",))
    time.sleep(0.3)
    r = admin.delete("/api/v1/process/%s" % pid)
    assert r.status_code == 204
    p = wait_process(admin, pid, timeout=15)
    assert p["status"] == "CANCELLED"
    time.sleep(0.5)
    assert status(admin, pid)["status"] == "CANCELLED"
    log = log_text(admin, pid)
    if log is not None:
        assert "woke up" not in log


def test_stop_finished_is_a_no_op(admin):
    pid = start_process(admin, HELLO)
    assert wait_process(admin, pid)["status"] == "FINISHED"
    r = admin.delete("/api/v1/process/%s" % pid)
    assert r.status_code == 204
    assert status(admin, pid)["status"] == "FINISHED"


def test_stop_by_stranger_is_403(admin, new_user):
    owner, stranger = new_user(), new_user()
    pid = start_process(owner, sleeper(30))
    r = stranger.delete("/api/v1/process/%s" % pid)
    assert r.status_code == 403 and r.json()["ok"] is False
    assert status(admin, pid)["status"] not in ("CANCELLED",)
    assert owner.delete("/api/v1/process/%s" % pid).status_code == 204
    assert wait_process(owner, pid, timeout=15)["status"] == "CANCELLED"
