"""State that lives on one node (issue 23 item 10), on two nodes of one PostgreSQL
database: a process is stopped wherever it runs — by an exclusive group's cancelOld, by
the `concord` task's kill — without the claiming node's dispatcher waiting for it, and the
folder a start handed off on one node (<work>/ready/<id>) is removed there when another node
runs the process or it ends elsewhere.  docs/scaling.md lists each piece of node-local
state with its cross-node counterpart; a repository refreshed through one node is seen by
starts through the others.

Runs only against PostgreSQL ($ACCORD_TEST_DB), as test_nodes.py."""
import pytest

from conftest import ADMIN_KEY, TEST_DB, Client, process_log, start_process, wait_process
from proc_util import HELLO, make_org, make_project, sleeper, status, wait_for, zip_bytes
from repo_util import REPO_API, create_repo, git  # noqa: F401 (git: the fixture)
from repo_util import flow as repo_flow
from test_audit import CHILDREN_FLOW
from test_nodes import node_of, nodes, psql  # noqa: F401 (nodes: the fixture)
from test_process_exclusive import flow
from test_process_handoff import ready_entries

pytestmark = pytest.mark.skipif(not TEST_DB, reason="several nodes need PostgreSQL ($ACCORD_TEST_DB)")

# One worker each: a node that runs one process is full, so the next start runs on the other.
ONE_WORKER = ["--node-heartbeat", "1", "--node-dead-after", "3", "--workers", "1"]


@pytest.fixture
def full_node(nodes):  # noqa: F811
    """(clients by node id, the node id that runs a 60 s sleeper, the other one, db URL)."""
    a, b, url = nodes(ONE_WORKER, ONE_WORKER)
    b.start()
    clients = {}
    for srv in (a, b):
        clients[psql(url, "SELECT id FROM nodes WHERE pid = %d" % srv.proc.pid)] = (srv, Client(srv.url, ADMIN_KEY))
    return clients, url


def history(client, pid):
    return {h["status"]: h["changeDate"] for h in status(client, pid, include="history")["statusHistory"]}


def old_and_new(clients):
    """(a client, a cancelOld process running on its node, a newer one of its group): the
    node of the old one is full, so the other node claims the newer one."""
    admin = next(iter(clients.values()))[1]
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    parts = {"org": org, "project": proj}
    old = start_process(admin, flow("cancelOld", 60), parts=parts)
    wait_for(lambda: status(admin, old)["status"] == "RUNNING")
    return admin, old, start_process(admin, flow("cancelOld", 0), parts=parts)


def test_cancel_old_stops_the_old_process_on_the_other_node(full_node):
    clients, url = full_node
    admin, old, new = old_and_new(clients)
    p = wait_process(admin, old, timeout=20)
    assert p["status"] == "CANCELLED", process_log(admin, old)
    assert "a newer process (%s) of exclusive group 'g1'" % new in process_log(admin, old)
    p = wait_process(admin, new, timeout=20)
    assert p["status"] == "FINISHED", process_log(admin, new)
    # Never two of the group at once: the newer one ran once the old one had ended.
    assert history(admin, old)["CANCELLED"] <= history(admin, new)["RUNNING"]


def test_the_newer_process_waits_while_the_old_one_stops_elsewhere(full_node):
    """The node that claims the newer process does not wait for the old one: the newer one
    is WAITING, and runs once the old one ended (test_process_exclusive.py shows that the
    dispatcher goes on meanwhile)."""
    clients, url = full_node
    admin, old, new = old_and_new(clients)
    assert wait_process(admin, new, timeout=20)["status"] == "FINISHED"
    assert wait_process(admin, old)["status"] == "CANCELLED"
    assert "Process is waiting: older processes of exclusive group 'g1'" in process_log(admin, new)


def test_a_child_on_the_other_node_is_killed(full_node):
    clients, url = full_node
    admin = next(iter(clients.values()))[1]
    # The parent fills its node: its child runs on the other one.
    parent = start_process(admin, CHILDREN_FLOW, files={"child/concord.yml": sleeper(60).encode()})
    p = wait_process(admin, parent, timeout=40)
    log = process_log(admin, parent)
    assert p["status"] == "FINISHED", log
    kids = admin.get("/api/v1/process/%s/subprocess" % parent).json()
    assert len(kids) == 1 and kids[0]["status"] == "CANCELLED", kids
    assert "started and killed %s" % kids[0]["instanceId"] in log
    assert "Process cancelled by process %s" % parent in process_log(admin, kids[0]["instanceId"])


def test_a_folder_handed_off_is_removed_when_another_node_runs_it(full_node):
    clients, url = full_node
    admin = next(iter(clients.values()))[1]
    busy = start_process(admin, sleeper(60))
    wait_for(lambda: status(admin, busy)["status"] == "RUNNING")
    srv, owner = clients[node_of(url, busy)]
    # Stored through the full node (its folder handed off there: an archive is staged in a
    # folder, test_process_handoff.py), run by the other one.
    def staged(**parts):
        archive = zip_bytes({"concord.yml": HELLO})
        return start_process(owner, parts=parts or None, files={"archive": (archive, "application/zip")})

    pid = staged()
    assert wait_process(owner, pid)["status"] == "FINISHED"
    wait_for(lambda: pid not in ready_entries(srv), timeout=10)
    # One that ends elsewhere without running: scheduled, then stopped through the other
    # node; another one scheduled keeps its folder (it may yet run on this node).
    later, waiting = [staged(startAt="2099-01-01T00:00:00.000Z") for _ in range(2)]
    assert {later, waiting} <= set(ready_entries(srv))
    other = next(c for n, (s, c) in clients.items() if s is not srv)
    assert other.delete("/api/v1/process/%s" % later).status_code == 204
    assert wait_process(owner, later)["status"] == "CANCELLED"
    wait_for(lambda: later not in ready_entries(srv), timeout=10)
    assert waiting in ready_entries(srv)
    owner.delete("/api/v1/process/%s" % busy)


def test_a_refresh_through_one_node_is_seen_by_starts_through_the_other(nodes, git):  # noqa: F811
    """Each node has its own clone of a repository (<data>/repos/); a start through a node
    whose clone is younger than --repo-fetch-max-age fetches anyway when another node
    fetched a newer commit of the configured branch since (the store records each fetch)."""
    a, b, url = nodes()
    b.start()
    admin_a, admin_b = Client(a.url, ADMIN_KEY), Client(b.url, ADMIN_KEY)
    org, _ = make_org(admin_a)
    project, _ = make_project(admin_a, org)
    repo = git({"concord.yml": repo_flow("v1")})
    name, _ = create_repo(admin_a, org, project, repo.url)
    parts = {"org": org, "project": project, "repo": name}
    first = start_process(admin_b, parts=parts)  # B clones: v1
    assert wait_process(admin_b, first)["status"] == "FINISHED"
    assert "v1" in process_log(admin_b, first)
    v2 = repo.commit({"concord.yml": repo_flow("v2")})
    assert admin_a.post(REPO_API % (org, project) + "/" + name + "/refresh").status_code == 200
    second = start_process(admin_b, parts=parts)
    p = wait_process(admin_b, second)
    assert p["status"] == "FINISHED" and p["commitId"] == v2, p
    assert "v2" in process_log(admin_b, second)
