"""Suspend and resume through the API (issue 9 part 1): POST /api/v1/process/{id}/resume/{event}."""
import threading

from conftest import process_log, start_process, wait_process
from proc_util import make_org, make_project, make_team, status

SUSPEND = """
flows:
  default:
    - set:
        x: 1
    - suspend: approval
    - log: "resumed: x=${x} answer=${answer}"
"""


def suspended(client, flow=SUSPEND):
    pid = start_process(client, flow)
    p = wait_process(client, pid, ("SUSPENDED", "FINISHED", "FAILED"))
    assert p["status"] == "SUSPENDED", process_log(client, pid)
    return pid


def test_resume_passes_arguments_and_finishes(admin):
    pid = suspended(admin)
    r = admin.post("/api/v1/process/%s/resume/approval" % pid, json={"arguments": {"answer": "yes"}})
    assert r.status_code == 200, r.text
    assert r.json() == {"ok": True}
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    assert "resumed: x=1 answer=yes" in process_log(admin, pid)
    hist = [h["status"] for h in status(admin, pid, include="history")["statusHistory"]]
    assert hist[4:] == ["SUSPENDED", "RESUMING", "ENQUEUED", "STARTING", "RUNNING", "FINISHED"]


def test_suspension_is_a_named_event(admin):
    pid = suspended(admin)
    ev = admin.get("/api/v1/process/%s/event" % pid, params={"type": "PROCESS_WAIT"}).json()
    assert len(ev) == 1
    assert ev[0]["data"]["eventNames"] == ["approval"]


def test_save_as_nests_the_body(admin):
    pid = suspended(admin)
    r = admin.post("/api/v1/process/%s/resume/approval?saveAs=arguments.answer" % pid, json="nested")
    assert r.status_code == 200, r.text
    wait_process(admin, pid)
    assert "answer=nested" in process_log(admin, pid)


def test_resume_errors(admin):
    pid = suspended(admin)
    r = admin.post("/api/v1/process/%s/resume/other" % pid, json={})
    assert r.status_code == 400
    assert "Unexpected 'resume' events: [other]" in r.json()["message"]
    r = admin.post("/api/v1/process/%s/resume/approval" % pid, json={"arguments": 5})
    assert r.status_code == 400
    r = admin.post("/api/v1/process/%s/resume/approval" % pid, data="{", headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert status(admin, pid)["status"] == "SUSPENDED"
    r = admin.post("/api/v1/process/00000000-0000-4000-8000-000000000000/resume/approval", json={})
    assert r.status_code == 404
    # empty body: no arguments
    r = admin.post("/api/v1/process/%s/resume/approval" % pid)
    assert r.status_code == 200, r.text
    wait_process(admin, pid)
    r = admin.post("/api/v1/process/%s/resume/approval" % pid, json={})
    assert r.status_code == 409
    assert "not suspended" in r.json()["message"]


def test_concurrent_resumes_run_the_flow_once(admin):
    pid = suspended(admin, """
flows:
  default:
    - suspend: go
    - log: "ran once"
""")
    codes = []

    def go():
        codes.append(admin.post("/api/v1/process/%s/resume/go" % pid, json={}).status_code)

    ts = [threading.Thread(target=go) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert sorted(codes).count(200) == 1, codes
    assert set(codes) <= {200, 409}, codes
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED"
    assert process_log(admin, pid).count("ran once") == 1


def test_resume_needs_write_access(admin, new_user):
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    reader = new_user()
    make_team(admin, org, [(reader, "MEMBER")], project=proj, level="READER")
    writer = new_user()
    make_team(admin, org, [(writer, "MEMBER")], project=proj, level="WRITER")
    pid = start_process(admin, SUSPEND, parts={"org": org, "project": proj})
    wait_process(admin, pid, ("SUSPENDED",))
    assert reader.post("/api/v1/process/%s/resume/approval" % pid, json={}).status_code == 403
    r = writer.post("/api/v1/process/%s/resume/approval" % pid, json={"arguments": {"answer": "w"}})
    assert r.status_code == 200, r.text
    assert wait_process(admin, pid)["status"] == "FINISHED"


def test_parallel_suspends_resume_one_at_a_time(admin):
    pid = suspended(admin, """
flows:
  default:
    - parallel:
        - suspend: a
        - suspend: b
    - log: "both done"
""")
    assert admin.post("/api/v1/process/%s/resume/a" % pid, json={}).status_code == 200
    p = wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))
    import time
    for _ in range(100):
        p = status(admin, pid)
        if p["status"] == "SUSPENDED" and len(admin.get("/api/v1/process/%s/event" % pid,
                                                         params={"type": "PROCESS_WAIT"}).json()) == 2:
            break
        time.sleep(0.05)
    assert p["status"] == "SUSPENDED"
    assert admin.post("/api/v1/process/%s/resume/a" % pid, json={}).status_code == 400
    assert admin.post("/api/v1/process/%s/resume/b" % pid, json={}).status_code == 200
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    assert "both done" in process_log(admin, pid)


def test_suspended_processes_survive_a_restart(fresh_server):
    import signal
    from conftest import ADMIN_KEY, Client
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    pids = [suspended(admin) for _ in range(3)]
    srv.stop(signal.SIGKILL)
    srv2 = fresh_server(data_dir=srv.data_dir).start()
    try:
        admin = Client(srv2.url, ADMIN_KEY)
        for n, pid in enumerate(pids):
            assert status(admin, pid)["status"] == "SUSPENDED"
            r = admin.post("/api/v1/process/%s/resume/approval" % pid, json={"arguments": {"answer": n}})
            assert r.status_code == 200, r.text
        for n, pid in enumerate(pids):
            assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
            assert "resumed: x=1 answer=%d" % n in process_log(admin, pid)
    finally:
        srv2.stop()


def test_resume_during_stop(admin):
    """A stop and a resume racing on a suspended process: the process always reaches a final
    status; a refused resume (409) means it never ran again."""
    for _ in range(5):
        pid = suspended(admin)
        codes = {}

        def resume():
            codes["resume"] = admin.post("/api/v1/process/%s/resume/approval" % pid,
                                         json={"arguments": {"answer": 1}}).status_code

        def stop():
            codes["stop"] = admin.delete("/api/v1/process/%s" % pid).status_code

        ts = [threading.Thread(target=resume), threading.Thread(target=stop)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert codes["stop"] == 204
        p = wait_process(admin, pid)
        if codes["resume"] == 200:
            assert p["status"] in ("FINISHED", "CANCELLED"), p
        else:
            assert codes["resume"] == 409 and p["status"] == "CANCELLED", (codes, p)
        if codes["resume"] != 200:
            assert "resumed:" not in process_log(admin, pid)


def test_a_form_is_not_resumed_through_resume(admin):
    """The resume endpoint refuses a pending form's name and event: only the form API
    validates values and enforces runAs."""
    pid = suspended(admin, """
forms:
  approval:
    - ok: {type: boolean}
flows:
  default:
    - form: approval
    - log: "approved=${approval.ok}"
""")
    ev = admin.get("/api/v1/process/%s/event" % pid, params={"type": "PROCESS_WAIT"}).json()[0]["data"]
    for name in ev["eventNames"]:
        r = admin.post("/api/v1/process/%s/resume/%s" % (pid, name), json={"arguments": {"approval": {"ok": 1}}})
        assert r.status_code == 400, r.text
        assert "pending form 'approval'" in r.json()["message"]
    assert status(admin, pid)["status"] == "SUSPENDED"
