"""Flow language compatibility on the server (issue 14): process arguments are expressions
(item 4), system variables after a resume (item 7) and sensitive values masked in the log
across suspend/resume (item 1)."""
import json

from conftest import process_log, start_process, wait_process


def test_request_arguments_are_expressions(admin):
    flow = """
flows:
  default:
    - log: "who=${who} n=${n}"
    - set:
        got: "${who}|${n}"
"""
    req = json.dumps({"arguments": {"who": "${initiator.username}", "n": "${20 + 22}"}}).encode()
    pid = start_process(admin, flow, parts={"out": "got"}, files={"request": (req, "application/json")})
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    assert p["meta"]["out"]["got"] == "admin|42"


def test_request_argument_that_fails_stops_the_process(admin):
    flow = """
flows:
  default:
    - log: "must not run"
"""
    pid = start_process(admin, flow, parts={"arguments.x": "${undefinedVar.y}"})
    p = wait_process(admin, pid)
    assert p["status"] == "FAILED"
    log = process_log(admin, pid)
    assert "Error while evaluating process arguments: " in log and "undefinedVar" in log, log
    assert "must not run" not in log


def test_resumed_run_sees_its_own_work_dir(fresh_server):
    """The data folder moves between the suspend and the resume: the resumed flow's workDir
    is the new working directory, not the one saved with the state."""
    import shutil
    import signal
    from conftest import ADMIN_KEY, Client
    flow = """
flows:
  default:
    - set:
        before: "${workDir}"
    - suspend: go
    - log: "after: ${workDir} moved=${workDir != before} token=${processInfo.sessionToken != null}"
"""
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    pid = start_process(admin, flow)
    assert wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))["status"] == "SUSPENDED"
    srv.stop(signal.SIGKILL)
    moved = srv.data_dir + "-moved"
    shutil.move(srv.data_dir, moved)
    srv2 = fresh_server(data_dir=moved).start()
    try:
        admin = Client(srv2.url, ADMIN_KEY)
        assert admin.post("/api/v1/process/%s/resume/go" % pid, json={}).status_code == 200
        p = wait_process(admin, pid)
        log = process_log(admin, pid)
        assert p["status"] == "FINISHED", log
        assert "after: $WORK_DIR moved=true token=true" in log, log
    finally:
        srv2.stop()
        shutil.rmtree(moved, ignore_errors=True)


def test_sensitive_values_masked_across_suspend(admin):
    flow = """
flows:
  default:
    - set:
        secret: "${sensitive('s3cr3t' += '-VALUE')}"
    - log: "before: ${secret} ${base64.encode(secret)}"
    - suspend: go
    - log: "after: ${secret}"
"""
    pid = start_process(admin, flow)
    assert wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))["status"] == "SUSPENDED"
    assert admin.post("/api/v1/process/%s/resume/go" % pid, json={}).status_code == 200
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "before: ****** ******" in log and "after: ******" in log, log
    assert "s3cr3t" not in log


def test_values_marked_in_the_flow_reach_the_sealed_list(admin):
    """Restored from a checkpoint taken before sensitive() ran, the runner still masks the
    value: the supervisor keeps what the flow marked in the process's sealed list."""
    flow = """
flows:
  default:
    - checkpoint: "first"
    - log: "early: ${'s3cr3t' += '-VALUE'}"
    - set:
        secret: "${sensitive('s3cr3t' += '-VALUE')}"
    - log: "late: ${secret}"
"""
    pid = start_process(admin, flow)
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    cp = admin.get("/api/v1/process/%s/checkpoint" % pid).json()[0]
    r = admin.post("/api/v1/process/%s/checkpoint/restore" % pid, json={"id": cp["id"]})
    assert r.status_code == 200, r.text
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert log.count("late: ******") == 2, log
    assert log.count("early: ******") == 1, log
