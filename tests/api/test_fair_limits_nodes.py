"""The running limits hold across nodes (issue 23 item 9): the counts come from the store,
so two nodes with free slots together never run more of one user's processes than
--limit-running-per-user.  PostgreSQL only, like test_nodes.py."""
import pytest

from conftest import ADMIN_KEY, TEST_DB, Client, make_user, start_process, wait_process
from proc_util import HELLO, sleeper, status, wait_for
from test_nodes import nodes  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(not TEST_DB, reason="several nodes need PostgreSQL ($ACCORD_TEST_DB)")

ARGS = ["--node-heartbeat", "1", "--node-dead-after", "3", "--workers", "2", "--limit-running-per-user", "2"]


def test_the_running_limit_holds_across_nodes(nodes):  # noqa: F811
    a, b, _ = nodes(ARGS, ARGS)
    b.start()
    admin = Client(a.url, ADMIN_KEY)
    user, other = make_user(admin), make_user(admin)
    on_b = Client(b.url, user.key)
    # four free slots on two nodes, three processes of one user through both nodes
    pids = [start_process(user, sleeper(300)), start_process(on_b, sleeper(300)), start_process(user, sleeper(300))]
    wait_for(lambda: [status(user, p)["status"] for p in pids].count("RUNNING") == 2, timeout=60)
    # another user's process runs meanwhile (both nodes were woken by it)
    assert wait_process(other, start_process(other, HELLO), timeout=60)["status"] == "FINISHED"
    states = [status(user, p)["status"] for p in pids]
    assert sorted(states) == ["ENQUEUED", "RUNNING", "RUNNING"], states
    waiting = pids[states.index("ENQUEUED")]
    r = user.delete("/api/v1/process/%s" % pids[states.index("RUNNING")])
    assert r.status_code in (200, 204), r.text
    wait_process(user, waiting, statuses=("RUNNING",), timeout=60)
    for p in pids:
        if status(user, p)["status"] == "RUNNING":
            assert user.delete("/api/v1/process/%s" % p).status_code in (200, 204)
            wait_process(user, p, timeout=60)
