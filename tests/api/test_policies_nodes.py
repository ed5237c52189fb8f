"""A policy's queue.concurrent limit holds across nodes (issue 30 part 4): two nodes with
free workers together never run more of one project's processes than the limit, because
the dispatcher counts the store's running processes and claims of limited processes take
turns.  PostgreSQL only, like test_nodes.py."""
import pytest

from conftest import ADMIN_KEY, TEST_DB, Client, start_process, wait_process
from proc_util import HELLO, make_org, make_project, sleeper, status, wait_for
from test_nodes import nodes  # noqa: F401 (a fixture)
from test_policies import link, put_policy

pytestmark = pytest.mark.skipif(not TEST_DB, reason="several nodes need PostgreSQL ($ACCORD_TEST_DB)")

ARGS = ["--node-heartbeat", "1", "--node-dead-after", "3", "--workers", "3"]


def two_nodes(nodes, rules, **place):  # noqa: F811
    """Two started nodes, clients of each, a fresh org and project with the policy linked to
    the org (to the project too with project=True)."""
    a, b, _ = nodes(ARGS, ARGS)
    b.start()
    admin = Client(a.url, ADMIN_KEY)
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    name, _ = put_policy(admin, rules)
    link(admin, name, orgName=org, **({"projectName": project} if place.get("project") else {}))
    return admin, Client(b.url, ADMIN_KEY), {"org": org, "project": project}, name


def test_concurrent_per_project_holds_across_nodes(nodes):  # noqa: F811
    admin, on_b, parts, _ = two_nodes(nodes, {"queue": {"concurrent": {"maxPerProject": 2}}}, project=True)
    # six free workers on two nodes, four processes of the project started through both
    pids = [start_process(c, sleeper(300), parts=parts) for c in (admin, on_b, admin, on_b)]
    wait_for(lambda: [status(admin, p)["status"] for p in pids].count("RUNNING") == 2, timeout=60)
    # a process elsewhere runs meanwhile: the nodes are awake and have room
    assert wait_process(admin, start_process(on_b, HELLO), timeout=60)["status"] == "FINISHED"
    states = [status(admin, p)["status"] for p in pids]
    assert sorted(states) == ["ENQUEUED", "ENQUEUED", "RUNNING", "RUNNING"], states
    # one ends: exactly one of the waiting starts
    running = [p for p, s in zip(pids, states) if s == "RUNNING"]
    assert admin.delete("/api/v1/process/%s" % running[0]).status_code in (200, 204)
    wait_process(admin, running[0])
    wait_for(lambda: [status(admin, p)["status"] for p in pids].count("RUNNING") == 2, timeout=60)
    assert [status(admin, p)["status"] for p in pids].count("ENQUEUED") == 1
    for p in pids:
        if status(admin, p)["status"] in ("RUNNING", "ENQUEUED"):
            assert admin.delete("/api/v1/process/%s" % p).status_code in (200, 204)
            wait_process(admin, p, timeout=60)


def test_process_per_org_counts_the_processes_of_every_node(nodes):  # noqa: F811
    """queue.processPerOrg counts the store's processes, whichever node runs them: a start
    through node b is refused while node a runs the org's one RUNNING process."""
    rules = {"queue": {"processPerOrg": {"RUNNING": 1, "msg": "busy: {0} max {1}"}}}
    admin, on_b, parts, name = two_nodes(nodes, rules)
    first = start_process(admin, sleeper(300), parts=parts)
    wait_for(lambda: status(admin, first)["status"] == "RUNNING", timeout=60)
    r = start_process(on_b, HELLO, parts=parts, expect=400)
    assert r.json()["message"] == "busy: RUNNING max 1 (policy '%s')" % name, r.text
    assert admin.delete("/api/v1/process/%s" % first).status_code in (200, 204)
    wait_process(admin, first, timeout=60)
    assert wait_process(admin, start_process(on_b, HELLO, parts=parts), timeout=60)["status"] == "FINISHED"
