"""Cron triggers and `startAt` on two `accord serve` nodes of one PostgreSQL database (issue
11): both nodes run the scheduler on the shared test clock (--test-cron-minute-seconds: its
anchor is kept in the database), and over several test minutes each minute fires exactly
once across the two, by whichever node claims it, none missed while one node stops and
starts again; processes started with a `startAt` in the near future through either node
each run once, on one node.

Runs only against PostgreSQL ($ACCORD_TEST_DB), as test_nodes.py, whose fixtures it uses."""
import datetime
import re
import time

from conftest import ADMIN_KEY, FINAL, Client, start_process
from proc_util import log_text, sleeper, status, wait_for
from test_nodes import NODE_ARGS, nodes, psql, pytestmark  # noqa: F401 (fixture, skip mark)
from test_process_handoff import later
from test_triggers import CRON_FLOW, Project, fire_times, repos  # noqa: F401 (fixture)

MINUTE_S = 5  # a test minute's real seconds: a node may lag by most of one and miss nothing
BOTH, ALONE, AGAIN = 3, 2, 2  # test minutes watched: both nodes, B alone, both again
SLOTS = 4  # --workers of a node in the startAt test: the claims of a whole wave race
CRON_NODE_ARGS = NODE_ARGS + ["--test-cron-minute-seconds", str(MINUTE_S)]
CLOCK = re.compile(r"cron triggers run on a test clock: one minute lasts \d+ s from (\S+)")
FIRED = re.compile(r"cron trigger \S+ fired for (\S+): process ([0-9a-f-]+)")


def fired_by(srv):
    """{fireAt: [instance ids]} from the log lines of the minutes this node fired."""
    out = {}
    for at, pid in FIRED.findall(srv.read_log()):
        out.setdefault(at, []).append(pid)
    return out


def minute_of(iso):
    """A fireAt (a whole minute, UTC) as minutes since 1970."""
    at = datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:00.000Z").replace(tzinfo=datetime.timezone.utc)
    return int(at.timestamp()) // 60


def test_each_cron_minute_fires_once_across_two_nodes(nodes, fresh_server, repos):
    a, b, url = nodes(CRON_NODE_ARGS, CRON_NODE_ARGS)
    b.start()
    # One clock: B read the anchor A wrote.
    anchor = psql(url, "SELECT value FROM server_meta WHERE key = 'test_cron_anchor_ms'")
    clocks = [CLOCK.findall(n.read_log()) for n in (a, b)]
    assert clocks[0] == clocks[1] and len(clocks[0]) == 1 and anchor.isdigit(), (clocks, anchor)
    admin_a, admin_b = Client(a.url, ADMIN_KEY), Client(b.url, ADMIN_KEY)
    p = Project(admin_a)
    name = p.add_repo(repos({"concord.yml": CRON_FLOW % "* * * * *"}))
    # The trigger was stored through A; B fires it too, from the database.  Then A stops and
    # B goes on alone; then A starts again (re-reading the triggers, skipping past minutes)
    # while B fires.
    # Both fire: whichever node claims a minute first fires it, so A may lose several races
    # in a row (a loaded clean-clone run saw B win all of the first three): the watch goes
    # on until A has fired one too.
    wait_for(lambda: len(p.processes()) >= BOTH and fired_by(a), timeout=(BOTH + 8) * MINUTE_S + 60)
    a.stop()
    p.admin = admin_b
    n_b = len(fired_by(b))
    wait_for(lambda: len(fired_by(b)) >= n_b + ALONE, timeout=ALONE * MINUTE_S + 60)
    a2 = fresh_server(data_dir=a.data_dir, env={"ACCORD_MASTER_KEY": a.env["ACCORD_MASTER_KEY"]},
                      args=CRON_NODE_ARGS).start()
    n = len(p.processes())
    wait_for(lambda: len(p.processes()) >= n + AGAIN, timeout=AGAIN * MINUTE_S + 60)
    p.update_repo(name, triggersDisabled=True)
    time.sleep(2 * MINUTE_S)  # a fire under way lands
    procs = p.processes()
    at_of = {x["instanceId"]: fire_at for x, (fire_at, _, _) in zip(procs, fire_times(admin_b, procs))}
    by_a, by_b, by_a2 = fired_by(a), fired_by(b), fired_by(a2)
    a2.stop()  # before the database goes with A
    assert CLOCK.findall(a2.read_log()) == clocks[0]
    # Each minute was fired by one node, once: the nodes' logs and the processes agree.
    fired = {}
    for by in (by_a, by_b, by_a2):
        for at, pids in by.items():
            fired.setdefault(at, []).extend(pids)
    assert all(len(v) == 1 for v in fired.values()), fired
    assert {v[0]: at for at, v in fired.items()} == at_of
    # No minute was missed between the first and the last, A's stop and start included.
    minutes = sorted(minute_of(at) for at in fired)
    assert minutes == list(range(minutes[0], minutes[-1] + 1)), sorted(fired)
    assert by_a and max(by_a) < sorted(by_b)[-ALONE], (sorted(by_a), sorted(by_b))


def test_start_at_runs_once_on_one_of_two_nodes(nodes):
    args = NODE_ARGS + ["--workers", str(SLOTS)]  # the last one counts
    a, b, url = nodes(args, args)
    b.start()
    clients = [Client(a.url, ADMIN_KEY), Client(b.url, ADMIN_KEY)]
    nodes_ids = set(psql(url, "SELECT id FROM nodes").split())
    at = later(4)  # both nodes' dispatchers wait for the same moment, then race for the claims
    pids = [start_process(clients[i % 2], sleeper(2), parts={"startAt": at}) for i in range(4 * SLOTS)]
    # Who runs each process (processes.node_id, while it runs), until all have ended.
    seen = {pid: set() for pid in pids}
    query = "SELECT instance_id, status, coalesce(node_id, '-') FROM processes WHERE instance_id IN (%s)" % (
        ",".join("'%s'" % pid for pid in pids))

    def ended():
        rows = [r.split("|") for r in psql(url, query).splitlines()]
        for pid, st, node in rows:
            if node != "-":
                seen[pid].add(node)
        return all(st in FINAL for _, st, _ in rows)

    wait_for(ended, timeout=90)
    for i, pid in enumerate(pids):
        c = clients[(i + 1) % 2]
        p = status(c, pid, include="history")
        hist = [h["status"] for h in p["statusHistory"]]
        assert p["status"] == "FINISHED" and hist.count("STARTING") == 1 and hist.count("RUNNING") == 1, (pid, hist)
        [started] = [h["changeDate"] for h in p["statusHistory"] if h["status"] == "STARTING"]
        assert started >= at, (pid, started, at)  # the same ISO form: compared as text
        log = log_text(c, pid)
        assert log.count("sleeping") == 1 and log.count("woke up") == 1, log
        assert len(seen[pid]) == 1 and seen[pid] <= nodes_ids, (pid, seen[pid], nodes_ids)
    # Each node has SLOTS slots, and there were twice as many processes: both ran some.
    assert set.union(*seen.values()) == nodes_ids, seen
