"""The next queued process of a slot is claimed in the transaction that records the end of
the last (issue 27 item 2): what a client sees of either is unchanged — each queued process
goes NEW, ENQUEUED, STARTING, RUNNING, FINISHED, and starts only once the one before it in
the slot has ended — and an end committed with its claim survives kill -9 (the claimed
process is queued again and runs once)."""
import datetime
import signal

import db_util
from conftest import ADMIN_KEY, Client, start_process, wait_process
from proc_util import HELLO, log_text, sleeper, status


def changes(client, pid):
    """[(status, ms)] of the process's history, in order."""
    out = []
    for h in status(client, pid, include="history")["statusHistory"]:
        at = datetime.datetime.fromisoformat(h["changeDate"].replace("Z", "+00:00"))
        out.append((h["status"], at.timestamp() * 1000))
    return out


def test_queued_processes_start_as_the_last_ends(fresh_server):
    srv = fresh_server(args=["--workers", "1"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    first = start_process(admin, sleeper(2))
    wait_process(admin, first, ("RUNNING",))
    queued = [start_process(admin, HELLO) for _ in range(4)]
    for pid in [first] + queued:
        assert wait_process(admin, pid)["status"] == "FINISHED", pid
    hist = {pid: changes(admin, pid) for pid in [first] + queued}
    for pid in queued:
        assert [s for s, _ in hist[pid]] == ["NEW", "ENQUEUED", "STARTING", "RUNNING", "FINISHED"], hist[pid]
        assert log_text(admin, pid).count("hello from %s" % pid) == 1
    # one slot: in the order they started, each starts once the one before it has ended
    order = sorted(hist, key=lambda pid: dict(hist[pid])["STARTING"])
    assert order[0] == first
    for before, after in zip(order, order[1:]):
        assert dict(hist[after])["STARTING"] >= dict(hist[before])["FINISHED"], (hist[before], hist[after])
    srv.stop()


def test_an_end_and_its_claim_survive_kill9(fresh_server):
    srv = fresh_server(args=["--workers", "1"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    ends = start_process(admin, sleeper(60))
    wait_process(admin, ends, ("RUNNING",))
    claimed = start_process(admin, HELLO)
    assert status(admin, claimed)["status"] == "ENQUEUED"
    srv.stop(signal.SIGKILL)
    # What the end's commit leaves with its claim folded in: the last FINISHED, the next
    # STARTING on this node, no step of it run (made by hand: the pair is one commit).
    db_util.execute(srv.data_dir, "UPDATE processes SET status = 'FINISHED' WHERE instance_id = '%s';"
                                  " UPDATE processes SET status = 'STARTING' WHERE instance_id = '%s'" % (ends, claimed))
    srv2 = fresh_server(data_dir=srv.data_dir, args=["--workers", "1"]).start()
    try:
        admin = Client(srv2.url, ADMIN_KEY)
        assert wait_process(admin, claimed, timeout=60)["status"] == "FINISHED"
        log = log_text(admin, claimed)
        assert "Process queued again: the server stopped before the process started" in log, log
        assert log.count("hello from %s" % claimed) == 1, log
        assert status(admin, ends)["status"] == "FINISHED"
    finally:
        srv2.stop()
