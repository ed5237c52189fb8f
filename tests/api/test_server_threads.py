"""The server's threads by name (docs/operations.md "Threads"), and the queue's wake-ups
that a busy node leaves out (docs/operations.md "Processes"): a start while every slot is
busy does not wake the dispatcher, and a process's end wakes only the supervisors whose
runners wait for ends — so neither may leave a process unclaimed or a wait unanswered."""
import collections
import os

from conftest import ADMIN_KEY, Client, backend_neutral, start_process, wait_process

pytestmark = backend_neutral("thread names and the queue's wake-ups: the database takes no part")


def thread_names(pid):
    names = collections.Counter()
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            names[f.read().strip()] += 1
    return names


def test_threads_carry_their_names(fresh_server):
    s = fresh_server(args=["--workers", "3", "--http-threads", "5", "--http-io-threads", "2"]).start()
    admin = Client(s.url, ADMIN_KEY)
    iid = start_process(admin, 'flows:\n  default:\n    - log: "named"\n')
    assert wait_process(admin, iid)["status"] == "FINISHED"
    names = thread_names(s.proc.pid)
    assert names["MHD-worker"] == 2, names
    assert names["http-handler"] == 5, names
    assert names["http-fetch"] == 5, names
    assert names["dispatcher"] == 1, names
    assert names["stopper"] == 1, names
    assert names["supervisor"] >= 3, names  # and the zygote's reader, started by one of them


def test_starts_while_every_slot_is_busy_all_run(fresh_server):
    # one slot, busy with a sleeping process while the others are started: none of those
    # starts wakes the dispatcher, each is claimed by the slot as the one before it ends
    s = fresh_server(args=["--workers", "1"]).start()
    admin = Client(s.url, ADMIN_KEY)
    first = start_process(admin, "flows:\n  default:\n    - task: sleep\n      in:\n        duration: 1\n")
    rest = [start_process(admin, 'flows:\n  default:\n    - log: "queued %d"\n' % i) for i in range(5)]
    for iid in [first] + rest:
        assert wait_process(admin, iid, timeout=60)["status"] == "FINISHED", iid
