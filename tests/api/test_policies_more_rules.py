"""Concord's `container`, `protectedTask` and `state` policy rules (issue 30 part 4,
docs/security.md "Policies"): documents with them load, bad ones are refused saying where,
the container rule refuses a process whose container options exceed it, and the state rule
fails a process whose saved working directory (at a suspend) breaks it."""
import json

import pytest

from conftest import ADMIN_KEY, Client, passable, process_log, start_process, unique, wait_process
from proc_util import HELLO, make_org, make_project
from test_policies import link, project_with, put_policy
from test_policies import test_a_bad_document_is_refused_saying_where as refused_saying_where

def test_a_document_with_the_three_rules_loads(admin):
    rules = {
        "container": {"msg": "too big: {0}", "maxCpu": 2, "maxRam": "1g"},
        "protectedTask": {"names": ["crypto", "vars"]},
        "state": {
            "deny": [{"msg": "state too big", "maxSizeInBytes": 1000, "maxFilesCount": 10},
                     {"patterns": [".*\\.pem"]}],
            "warn": [{"maxSizeInBytes": "500"}],
        },
    }
    name = unique("pol")
    r = admin.post("/api/v2/policy", json={"name": name, "rules": rules})
    assert r.status_code == 200, r.text
    assert admin.get("/api/v2/policy/%s" % name).json()["rules"] == rules


@pytest.mark.parametrize(
    "rules, where",
    [
        ({"container": {"maxRam": "lots"}}, "rules.container.maxRam: expected a size"),
        ({"container": {"maxCpu": "two"}}, "rules.container.maxCpu: expected a number"),
        ({"container": {"maxDisk": 1}}, "rules.container: unknown field 'maxDisk'"),
        ({"protectedTask": {"names": "crypto"}}, "rules.protectedTask.names: expected an array of strings"),
        ({"protectedTask": ["crypto"]}, "rules.protectedTask: expected an object"),
        ({"state": {"deny": {"maxFilesCount": 1}}}, "rules.state.deny: expected an array of rules"),
        ({"state": {"deny": [{"maxFilesCount": "many"}]}}, "rules.state.deny[0].maxFilesCount"),
        ({"state": {"warn": [{"patterns": ["(unclosed"]}]}}, "rules.state.warn[0].patterns"),
        ({"state": {"deny": [{"maxSize": 1}]}}, "rules.state.deny[0]: unknown field 'maxSize'"),
    ],
)
def test_a_bad_rule_is_refused_saying_where(admin, rules, where):
    refused_saying_where(admin, rules, where)


# ---- container ------------------------------------------------------------------------------


def request_part(cfg):
    return {"request": (json.dumps(cfg).encode(), "application/json")}


def test_container_options_over_the_limits_are_refused_at_start(admin):
    org, project, name = project_with(admin, {"container": {"maxCpu": 2, "maxRam": "1g"}})
    parts = {"org": org, "project": project}
    r = start_process(admin, HELLO, parts=parts, files=request_part({"container": {"cpu": 4}}), expect=400)
    assert r.json()["message"] == "Container policy violation: Max CPU exceeded: 4 (policy '%s')" % name, r.text
    r = start_process(admin, HELLO, parts=parts, files=request_part({"container": {"ram": "2g"}}), expect=400)
    assert r.json()["message"] == "Container policy violation: Max RAM exceeded: 2g (policy '%s')" % name, r.text
    r = start_process(admin, HELLO, parts=parts, files=request_part({"container": {"ram": 2 << 30}}), expect=400)
    assert "Max RAM exceeded: %d (policy" % (2 << 30) in r.json()["message"], r.text
    r = start_process(admin, HELLO, parts=parts, files=request_part({"container": {"cpu": "x"}}), expect=400)
    assert "configuration.container.cpu" in r.json()["message"], r.text
    pid = start_process(admin, HELLO, parts=parts, files=request_part({"container": {"cpu": 2, "ram": "512m"}}))
    assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)


def test_container_rule_message(admin):
    org, project, name = project_with(admin, {"container": {"maxCpu": 1, "msg": "ask ops first ({0})"}})
    parts = {"org": org, "project": project}
    r = start_process(admin, HELLO, parts=parts, files=request_part({"container": {"cpu": 3}}), expect=400)
    assert r.json()["message"] == "ask ops first (Max CPU exceeded: 3) (policy '%s')" % name, r.text


def test_container_rules_merge_over_the_parent(admin):
    _, parent = put_policy(admin, {"container": {"maxCpu": 2}})
    child, _ = put_policy(admin, {"container": {"maxRam": "1g"}}, parent=parent)
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    link(admin, child, orgName=org, projectName=project)
    parts = {"org": org, "project": project}
    r = start_process(admin, HELLO, parts=parts, files=request_part({"container": {"cpu": 4}}), expect=400)
    assert "Max CPU exceeded: 4 (policy '%s')" % child in r.json()["message"], r.text
    r = start_process(admin, HELLO, parts=parts, files=request_part({"container": {"ram": "2g"}}), expect=400)
    assert "Max RAM exceeded: 2g" in r.json()["message"], r.text


# ---- state ----------------------------------------------------------------------------------


def suspends(**files):
    """A flow that writes files (path=text) into its working directory, then suspends."""
    writes = "".join("    - expr: \"${resource.writeAsString('%s', '%s')}\"\n" % (text, path)
                     for path, text in files.items())
    return "flows:\n  default:\n    - log: \"before\"\n" + writes + "    - suspend: go\n"


def suspended_or_failed(admin, pid):
    return wait_process(admin, pid, statuses=("SUSPENDED", "FAILED"))["status"]


def test_state_is_checked_at_start(admin):
    rules = {"state": {"deny": [{"maxSizeInBytes": 3000}, {"patterns": [".*\\.pem"], "msg": "no keys: {0}"}]}}
    org, project, name = project_with(admin, rules)
    parts = {"org": org, "project": project}
    r = start_process(admin, HELLO, parts=parts, files={"data/big.bin": b"x" * 5000}, expect=413)
    assert r.json()["message"].startswith("Max state size exceeded. Actual: "), r.text
    assert r.json()["message"].endswith(" limit: 3000 (policy '%s')" % name), r.text
    r = start_process(admin, HELLO, parts=parts, files={"keys/id.pem": b"k"}, expect=400)
    assert r.json()["message"] == "no keys: keys/id.pem (policy '%s')" % name, r.text
    assert suspended_or_failed(admin, start_process(admin, suspends(), parts=parts)) == "SUSPENDED"


def test_state_over_its_size_fails_the_process_at_suspend(admin):
    rules = {"state": {"deny": [{"maxSizeInBytes": 3000, "msg": "state of {0} bytes, the limit is {1}"}]}}
    org, project, name = project_with(admin, rules)
    parts = {"org": org, "project": project}
    # 2000 bytes at start, 4000 more written by the flow.
    flow = suspends().replace('    - suspend', "    - expr: \"${resource.writeAsString(resource.asString('seed.bin'), '%s')}\"\n"
                              * 2 % ("copy1.bin", "copy2.bin") + '    - suspend')
    pid = start_process(admin, flow, parts=parts, files={"seed.bin": b"x" * 2000})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FAILED", log
    assert "before" in log and "Process failed: its suspended state could not be stored: state of " in log, log
    assert "the limit is 3000 (policy '%s')" % name in log, log
    # Within the limit it suspends.
    assert suspended_or_failed(admin, start_process(admin, suspends(), parts=parts)) == "SUSPENDED"


def test_state_file_count(admin):
    org, project, name = project_with(admin, {"state": {"deny": [{"maxFilesCount": 8}]}})
    many = {"f%d.txt" % i: "x" for i in range(10)}
    pid = start_process(admin, suspends(**many), parts={"org": org, "project": project})
    assert wait_process(admin, pid)["status"] == "FAILED"
    log = process_log(admin, pid)
    assert "Max files count exceeded. Actual: " in log and "limit: 8 (policy '%s')" % name in log, log


def test_state_file_patterns_deny_and_warn(admin):
    rules = {"state": {"deny": [{"patterns": [".*\\.pem"]}], "warn": [{"patterns": ["notes-.*"], "msg": "no notes"}]}}
    org, project, name = project_with(admin, rules)
    parts = {"org": org, "project": project}
    pid = start_process(admin, suspends(**{"id.pem": "secret"}), parts=parts)
    assert wait_process(admin, pid)["status"] == "FAILED"
    log = process_log(admin, pid)
    assert "State file 'id.pem' is forbidden by the state policy (policy '%s')" % name in log, log
    pid = start_process(admin, suspends(**{"notes-a.txt": "n"}), parts=parts)
    assert suspended_or_failed(admin, pid) == "SUSPENDED"
    log = process_log(admin, pid)
    assert "Potentially restricted state file 'notes-a.txt' (state policy: no notes, policy '%s')" % name in log, log


def test_state_warn_on_size_suspends(admin):
    org, project, name = project_with(admin, {"state": {"warn": [{"maxSizeInBytes": 10, "msg": "large"}]}})
    pid = start_process(admin, suspends(), parts={"org": org, "project": project}, files={"a.bin": b"x" * 100})
    assert suspended_or_failed(admin, pid) == "SUSPENDED"
    log = process_log(admin, pid)
    # At start (the uploaded state) and at the suspend.
    assert log.count("Potentially restricted state: 'Max state size exceeded. Actual: ") == 2, log
    assert "(state policy: large, policy '%s')" % name in log, log


def test_state_rule_refuses_a_checkpoint(admin):
    flow = ("flows:\n  default:\n    - expr: \"${resource.writeAsString('x', 'a.txt')}\"\n"
            "    - expr: \"${resource.writeAsString('x', 'b.txt')}\"\n"
            "    - checkpoint: \"first\"\n    - log: \"after the checkpoint\"\n")
    org, project, name = project_with(admin, {"state": {"deny": [{"maxFilesCount": 2, "msg": "{0} files"}]}})
    pid = start_process(admin, flow, parts={"org": org, "project": project})
    assert wait_process(admin, pid)["status"] == "FAILED"
    log = process_log(admin, pid)
    assert "Checkpoint 'first': " in log and "files (policy '%s')" % name in log, log
    assert "after the checkpoint" not in log, log
    assert admin.get("/api/v1/process/%s/checkpoint" % pid).json() == []


# ---- container limits of the docker task ---------------------------------------------------

# A container engine that prints the options it was given: the docker task's output is what
# `run` writes, so the process log shows the command line (no container runs).
FAKE_ENGINE = """#!/bin/sh
[ "$1" = run ] && echo "engine: $*"
exit 0
"""

DOCKER_FLOW = """
flows:
  default:
    - task: docker
      in: {"image": "example/image", "forcePull": false, "cmd": "true"}
"""


def test_docker_task_containers_get_the_container_rule_limits(fresh_server, tmp_path):
    engine = tmp_path / "fake-engine"
    engine.write_text(FAKE_ENGINE)
    engine.chmod(0o755)
    passable(str(engine))
    s = fresh_server(args=["--docker-command", str(engine)]).start()
    admin = Client(s.url, auth="Bearer " + ADMIN_KEY)
    org, project, name = project_with(admin, {"container": {"maxCpu": 2, "maxRam": "512m"}})
    pid = start_process(admin, DOCKER_FLOW, parts={"org": org, "project": project})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "--cpus 2 --memory %d " % (512 << 20) in log, log
    # Without a container rule: no limits.
    pid = start_process(admin, DOCKER_FLOW)
    assert wait_process(admin, pid)["status"] == "FINISHED"
    log = process_log(admin, pid)
    assert "engine: run" in log and "--cpus" not in log and "--memory" not in log, log

