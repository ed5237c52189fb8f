"""The policy's `ansible` rule beyond Concord's AnsiblePolicyIT (docs/security.md "Policies",
the ansible rule): allow before deny before warn, a rule's msg with the task's arguments
and the policy's name, ${…} in a rule evaluated with the flow's variables, arguments matched
as Ansible templates them, the short name of an ansible.builtin action, a denied task that
ignore_errors cannot let pass, and the task's enablePolicy switch.  Skipped where
ansible-core is not installed."""
import os

import pytest
from conftest import backend_neutral, process_log, start_process, wait_process
from test_policies import project_with

pytestmark = pytest.mark.skipif(not os.access("/usr/bin/ansible-playbook", os.X_OK),
                                reason="ansible-core is not installed (scripts/deps)")

neutral = backend_neutral("ansible-playbook and Accord's callbacks in the runner: what it asserts is the run's "
                          "log, attachments, out variables or events as the runner wrote them; the store's part"
                          " (process rows, logs, events, secrets) is proven on PostgreSQL by the tests left "
                          "unmarked here and by test_process_*; the policy's resolution by test_deny_warn_allow"
                          " and test_policies")

RULES = {"ansible": {
    "allow": [{"action": "debug", "params": [{"name": "msg", "values": ["allowed.*"]}]}],
    "deny": [{"action": "file", "params": [{"name": "path", "values": ["${forbidden}"]}],
              "msg": "no touching {path}"}],
    "warn": [{"action": "debug", "msg": "debug is noisy"}]}}

PLAYBOOK = b"""
- hosts: all
  gather_facts: false
  vars:
    prefix: forbidden
  tasks:
    - name: allowed
      ansible.builtin.debug: {msg: "allowed: yes"}
    - name: noisy
      debug: {msg: "plain"}
    - name: touch it
      ansible.builtin.file: {path: "{{ prefix }}-2.txt", state: touch}
      ignore_errors: true
    - name: after
      ansible.builtin.debug: {msg: "allowed: after the touch"}
"""

FLOW = """
configuration:
  arguments:
    forbidden: "forbidden-.*"
flows:
  default:
    - task: ansible
      in:
        playbook: p.yml
        inventory: {local: {hosts: [h1], vars: {ansible_connection: local}}}
        enablePolicy: %s
"""


def run(admin, where, enable):
    org, project, _ = where
    pid = start_process(admin, FLOW % enable, parts={"org": org, "project": project}, files={"p.yml": PLAYBOOK})
    p = wait_process(admin, pid, timeout=120)
    return p["status"], process_log(admin, pid)


@pytest.fixture
def where(admin):
    return project_with(admin, RULES)


def test_deny_warn_allow(admin, where):
    status, log = run(admin, where, "true")
    policy = where[2]
    assert status == "FAILED", log
    denied = ("Task 'touch it (ansible.builtin.file)' is forbidden by the task policy: no touching forbidden-2.txt "
              "(policy '%s')" % policy)
    assert "[ERROR]: " + denied in log
    assert '"msg": "%s"' % denied in log  # the task failed with it, ignore_errors notwithstanding
    assert "Potentially restricted task 'noisy (debug)' (task policy: debug is noisy) (policy '%s')" % policy in log
    assert "Potentially restricted task 'allowed" not in log  # allow comes first
    assert "after the touch" not in log


@neutral
def test_enable_policy_false(admin, where):
    status, log = run(admin, where, "false")
    assert status == "FINISHED", log
    assert "forbidden by the task policy" not in log and "Potentially restricted" not in log
    assert "after the touch" in log


@neutral
def test_enable_policy_false_denied_by_a_task_rule(admin):
    """An admin who wants the ansible rule enforced whatever the flow says denies Concord's
    switch with a task rule; extraEnv cannot keep the plugin out either."""
    rules = dict(RULES, task={"deny": [{"taskName": "ansible", "params": [{"name": "enablePolicy",
                                                                          "values": [False, "false"]}]}]})
    where = project_with(admin, rules)
    status, log = run(admin, where, "false")
    assert status == "FAILED", log
    assert "Task 'ansible' (execute) is forbidden by the task policy (policy '%s')" % where[2] in log
    assert "after the touch" not in log

    org, project, _ = where
    flow = (FLOW % "true") + "        extraEnv: {ANSIBLE_CALLBACK_PLUGINS: /tmp}\n"
    pid = start_process(admin, flow, parts={"org": org, "project": project}, files={"p.yml": PLAYBOOK})
    p = wait_process(admin, pid, timeout=120)
    log = process_log(admin, pid)
    assert p["status"] == "FAILED", log
    assert "ansible: extraEnv may not set ANSIBLE_CALLBACK_PLUGINS while a policy applies" in log
