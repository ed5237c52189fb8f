"""Several `accord serve` nodes on one PostgreSQL database (issue 11 part 3, its first
part): every node registers and heart-beats (table nodes); a node that starts leaves the
other live nodes' running processes alone; when a node dies (kill -9), another settles
its running processes within --node-dead-after + --node-heartbeat: FAILED, with a log line
naming the dead node (those it had claimed but not started run elsewhere), and the service
goes on.  On SQLite (one node per data folder) a
restart settles the previous run at once (test_process_recovery.py).

Runs only against PostgreSQL ($ACCORD_TEST_DB): `make test` runs it in a throwaway
cluster (scripts/pg-cluster)."""
import base64
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import ADMIN_KEY, ADMIN_PASSWORD, ROOT, TEST_DB, Client, pg_url, start_process, unique, wait_process
from proc_util import HELLO, log_text, sleeper, status, wait_for
from test_console_session import LOGOUT, basic, browser, login

pytestmark = pytest.mark.skipif(not TEST_DB, reason="several nodes need PostgreSQL ($ACCORD_TEST_DB)")

HEARTBEAT, DEAD_AFTER = 1, 3
NODE_ARGS = ["--node-heartbeat", str(HEARTBEAT), "--node-dead-after", str(DEAD_AFTER), "--workers", "2"]


def psql(url, sql):
    return subprocess.run(["psql", "-X", "-qtA", "-d", url, "-c", sql], check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def nodes(fresh_server):
    """nodes(args_a, args_b) -> (a started, b not yet started, the database's URL)."""
    made = []

    def make(args_a=NODE_ARGS, args_b=NODE_ARGS):
        key = base64.b64encode(os.urandom(32)).decode()
        a = fresh_server(env={"ACCORD_MASTER_KEY": key}, args=args_a, admin_password=True).start()
        url, _ = pg_url(a.data_dir)
        b_dir = tempfile.mkdtemp(prefix="accord-test-")
        shutil.copy(os.path.join(a.data_dir, ".test-db-name"), b_dir)  # the same database
        b = fresh_server(data_dir=b_dir, env={"ACCORD_MASTER_KEY": key}, args=args_b)
        made.append((b, b_dir))
        return a, b, url

    yield make
    for b, b_dir in made:  # before the first node's clean-up drops the database
        b.stop()
        shutil.rmtree(b_dir, ignore_errors=True)


@pytest.fixture
def two_nodes(nodes):
    return nodes()


def node_of(url, pid):
    return psql(url, "SELECT node_id FROM processes WHERE instance_id = '%s'" % pid)


def test_nodes_share_the_work_and_settle_a_dead_one(two_nodes):
    a, b, url = two_nodes
    admin_a = Client(a.url, ADMIN_KEY)
    running = start_process(admin_a, sleeper(60))
    wait_for(lambda: status(admin_a, running)["status"] == "RUNNING")
    b.start()
    admin_b = Client(b.url, ADMIN_KEY)
    nodes = psql(url, "SELECT id || ' ' || pid FROM nodes ORDER BY started_at").splitlines()
    assert len(nodes) == 2, nodes
    # B's start left A's running process alone, and B sees it too.
    time.sleep(DEAD_AFTER + HEARTBEAT)
    assert status(admin_a, running)["status"] == "RUNNING"
    assert status(admin_b, running)["status"] == "RUNNING"
    # Processes started through either node run (on whichever node claims them).
    done = [start_process(c, HELLO) for c in (admin_a, admin_b) for _ in range(3)]
    for pid in done:
        assert wait_process(admin_b, pid)["status"] == "FINISHED"
    # A form shown through one node and submitted through the other resumes the process.
    form_flow = """
forms:
  approval:
    - ok: {label: "OK?", type: boolean}
flows:
  default:
    - form: approval
    - log: "approved=${approval.ok}"
"""
    waiting = start_process(admin_a, form_flow)
    wait_for(lambda: status(admin_a, waiting)["status"] == "SUSPENDED")
    assert admin_b.get("/api/v1/process/%s/form/approval" % waiting).status_code == 200
    r = admin_b.post("/api/v1/process/%s/form/approval" % waiting, json={"ok": True})
    assert r.status_code == 200 and r.json()["ok"] is True, r.text
    assert wait_process(admin_a, waiting)["status"] == "FINISHED"
    assert "approved=true" in log_text(admin_a, waiting)
    # The node that runs the sleeper dies; the other one settles it.
    owner = node_of(url, running)
    owner_pid = int(psql(url, "SELECT pid FROM nodes WHERE id = '%s'" % owner))
    victim, survivor = (a, b) if owner_pid == a.proc.pid else (b, a)
    assert owner_pid == victim.proc.pid
    admin = Client(survivor.url, ADMIN_KEY)
    # A process the victim has claimed but not started yet (STARTING lasts microseconds:
    # made by hand from one scheduled for later, which no node claims before).
    claimed = start_process(admin, HELLO, parts={"startAt": "2099-01-01T00:00:00.000Z"})
    psql(url, "UPDATE processes SET status = 'STARTING', start_at = NULL, node_id = '%s'"
              " WHERE instance_id = '%s'" % (owner, claimed))
    finished = {pid: status(admin, pid)["lastUpdatedAt"] for pid in done + [waiting]}
    victim.proc.send_signal(signal.SIGKILL)
    victim.proc.wait()
    # settled by the survivor, long before the victim's 60 s sleep would have ended
    p = wait_process(admin, running, timeout=30)
    assert p["status"] == "FAILED", p
    log = log_text(admin, running)
    assert "node %s" % owner in log and "stopped while it ran the process" in log, log
    # The one that had not started runs on the survivor; nothing finished is lost.
    assert wait_process(admin, claimed, timeout=30)["status"] == "FINISHED"
    log = log_text(admin, claimed)
    assert "Process queued again: node %s" % owner in log and "stopped before the process started" in log, log
    assert "hello from %s" % claimed in log, log
    for pid, at in finished.items():
        p = status(admin, pid)
        assert p["status"] == "FINISHED" and p["lastUpdatedAt"] == at, p
    assert "stopped heart-beating" in survivor.read_log()
    assert psql(url, "SELECT count(*) FROM nodes WHERE id = '%s'" % owner) == "0"
    # The survivor goes on alone.
    assert wait_process(admin, start_process(admin, HELLO))["status"] == "FINISHED"


def test_a_clean_stop_removes_the_node(two_nodes):
    a, b, url = two_nodes
    b.start()
    assert psql(url, "SELECT count(*) FROM nodes") == "2"
    assert b.stop() == 0
    assert psql(url, "SELECT count(*) FROM nodes") == "1"
    admin = Client(a.url, ADMIN_KEY)
    assert wait_process(admin, start_process(admin, HELLO))["status"] == "FINISHED"


def test_starts_and_stops_reach_the_other_node_at_once(nodes):
    # A heartbeat far away (an hour): only the notifications can make these happen while the
    # test waits.
    slow = ["--node-heartbeat", "3600", "--node-dead-after", "7200"]
    a, b, url = nodes(slow + ["--workers", "1"], slow + ["--workers", "2"])
    b.start()
    admin_a, admin_b = Client(a.url, ADMIN_KEY), Client(b.url, ADMIN_KEY)
    a_node = psql(url, "SELECT id FROM nodes WHERE pid = %d" % a.proc.pid)
    b_node = psql(url, "SELECT id FROM nodes WHERE pid = %d" % b.proc.pid)
    # Three starts through A, which has one slot: B, woken by A's notification, runs two.
    sleepers = [start_process(admin_a, sleeper(60)) for _ in range(3)]
    for pid in sleepers:
        wait_for(lambda: status(admin_a, pid)["status"] == "RUNNING", timeout=20)
    owners = {pid: node_of(url, pid) for pid in sleepers}
    assert sorted(owners.values()) == sorted([a_node, b_node, b_node]), owners
    # A stop through the node that does not run the process reaches the one that does.
    for pid in sleepers:
        via = admin_b if owners[pid] == a_node else admin_a
        r = via.delete("/api/v1/process/%s" % pid)
        assert r.status_code in (200, 204), r.text
        p = wait_process(via, pid, timeout=20)
        assert p["status"] == "CANCELLED", p


def test_a_console_session_serves_on_every_node(two_nodes):
    a, b, url = two_nodes
    b.start()
    token, csrf, _ = login(a.url, basic("admin", ADMIN_PASSWORD))
    on_b = browser(b.url, token)
    assert on_b.get("/api/v1/org").status_code == 200
    r = on_b.post("/api/v1/org", json={"name": unique("norg")}, headers={"X-Accord-CSRF": csrf})
    assert r.status_code == 200, r.text
    assert on_b.post(LOGOUT).status_code == 204
    assert browser(a.url, token).get("/api/v1/org").status_code == 401


SLOW_LOG = """
flows:
  default:
    - log: "before the nap"
    - task: sleep
      in:
        duration: 3
    - log: "after the nap"
"""


def test_a_log_is_followed_through_the_other_node(two_nodes):
    a, b, url = two_nodes
    b.start()
    clients = {a.proc.pid: Client(a.url, ADMIN_KEY), b.proc.pid: Client(b.url, ADMIN_KEY)}
    pid = start_process(clients[a.proc.pid], SLOW_LOG)
    wait_for(lambda: status(clients[a.proc.pid], pid)["status"] == "RUNNING")
    owner_pid = int(psql(url, "SELECT n.pid FROM nodes n JOIN processes p ON p.node_id = n.id"
                              " WHERE p.instance_id = '%s'" % pid))
    other = clients[b.proc.pid if owner_pid == a.proc.pid else a.proc.pid]
    r = other.get("/api/v1/process/%s/log" % pid, params={"follow": "true"}, stream=True, timeout=60)
    assert r.status_code == 200
    body, first_seen_while = b"", None
    for piece in r.iter_content(chunk_size=None):
        body += piece
        if b"before the nap" in body and first_seen_while is None:
            first_seen_while = status(other, pid)["status"]
    assert first_seen_while == "RUNNING", first_seen_while  # streamed, not sent at the end
    assert b"after the nap" in body
    assert status(other, pid)["status"] == "FINISHED"
    assert body == other.get("/api/v1/process/%s/log" % pid).content


def pg_ctl(host, *args):
    """pg_ctl on the cluster in folder host (scripts/pg-cluster: its socket folder holds
    data/; the server runs as `pg-cluster owner` when the tests run as root)."""
    bindir = subprocess.run([os.path.join(ROOT, "scripts", "pg-cluster"), "bindir"], check=True,
                            capture_output=True, text=True).stdout.strip()
    cmd = [os.path.join(bindir, "pg_ctl"), "-D", os.path.join(host, "data"), "-w", "-t", "60"] + list(args)
    if os.getuid() == 0:
        owner = subprocess.run([os.path.join(ROOT, "scripts", "pg-cluster"), "owner"], check=True,
                               capture_output=True, text=True).stdout.strip()
        cmd = ["runuser", "-u", owner, "--"] + cmd
    subprocess.run(cmd, check=True, capture_output=True)


@pytest.fixture
def own_cluster():
    """(socket folder, URL) of a throwaway cluster of this test's own: stopping the shared
    one of $ACCORD_TEST_DB would break the tests and suites that run beside this one."""
    host = tempfile.mkdtemp(prefix="accord-pg-", dir="/tmp")
    script = os.path.join(ROOT, "scripts", "pg-cluster")
    try:
        url = subprocess.run([script, "start", host], check=True, capture_output=True, text=True).stdout.strip()
        yield host, url
    finally:
        subprocess.run([script, "stop", host], capture_output=True)


def test_the_database_restarting_under_load(own_cluster, fresh_server):
    host, url = own_cluster
    srv = fresh_server(args=NODE_ARGS + ["--db", url]).start()
    admin = Client(srv.url, ADMIN_KEY)
    running = start_process(admin, sleeper(2))  # wakes and ends while the database is down
    wait_for(lambda: status(admin, running)["status"] == "RUNNING")
    # Starts and reads all along, through the outage: each answered 200 or 503, never hung.
    load, answers, accepted = threading.Event(), [], []

    def client():
        c = Client(srv.url, ADMIN_KEY)
        while not load.is_set():
            r = c.post("/api/v1/process", files=[("concord.yml", ("concord.yml", HELLO.encode(), "text/yaml"))])
            answers.append(r.status_code)
            if r.status_code == 200:
                accepted.append(r.json()["instanceId"])
            answers.append(c.get("/api/v2/process", params={"limit": 5}).status_code)

    threads = [threading.Thread(target=client) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(1)
    pg_ctl(host, "-m", "fast", "stop")
    try:
        r = admin.get("/api/v2/process/%s" % running)
        assert r.status_code == 503, r.text
        assert "database unavailable" in r.json()["message"], r.text
        r = admin.post("/api/v1/process", files=[("concord.yml", ("concord.yml", HELLO.encode()))])
        assert r.status_code == 503, r.text
        time.sleep(4)
    finally:
        pg_ctl(host, "-l", os.path.join(host, "server.log"), "start")
    # The node reconnects by itself: same server process, requests answered again.
    wait_for(lambda: admin.get("/api/v2/process/%s" % running).status_code == 200, timeout=20)
    time.sleep(1)
    load.set()
    for t in threads:
        t.join(timeout=60)
    assert srv.proc.poll() is None
    assert set(answers) <= {200, 503} and 503 in answers and answers[-1] == 200, sorted(set(answers))
    for pid in accepted:  # every start that was accepted runs
        if wait_process(admin, pid, timeout=60)["status"] != "FINISHED":
            print(log_text(admin, pid), "\n".join(x for x in srv.read_log().splitlines() if pid in x))
            raise AssertionError("accepted start %s did not finish (its log and server lines above)" % pid)
    # The process that ran through the outage ends and keeps its whole log.
    p = wait_process(admin, running, timeout=30)
    assert p["status"] == "FINISHED", p
    log = log_text(admin, running)
    assert "sleeping" in log and "woke up" in log, log
    assert wait_process(admin, start_process(admin, HELLO))["status"] == "FINISHED"
    assert "reconnected to PostgreSQL" in srv.read_log()


def test_a_password_changed_on_one_node_ends_the_old_one_on_the_other(two_nodes):
    """Basic credentials are cached per node for a minute (no Argon2id per request); a
    cached one is checked against the stored hash on every use, so a password changed
    through node A stops working on node B at once, not a minute later."""
    import requests
    a, b, url = two_nodes
    b.start()
    admin_a = Client(a.url, ADMIN_KEY)
    name = unique("pwuser")
    assert admin_a.post("/api/v1/user", json={"username": name, "password": "Old-pass-123"}).status_code == 200

    def who(node, password):
        return requests.get(node.url + "/api/v1/apikey", auth=(name, password), timeout=30).status_code

    assert who(b, "Old-pass-123") == 200  # verified and cached on B
    assert who(b, "Old-pass-123") == 200  # from B's cache
    assert admin_a.post("/api/v1/user", json={"username": name, "password": "New-pass-456"}).status_code == 200
    assert who(b, "Old-pass-123") == 401
    assert who(b, "New-pass-456") == 200
    assert who(a, "Old-pass-123") == 401
