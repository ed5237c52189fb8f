"""The runner zygote (docs/operations.md "Runner zygote"): runners are forked by one
`accord runner --zygote`, started for the first process, confined like exec'd runners; the
zygote's death fails only what ran under it, and `--runner-zygote=false` execs runners as
before."""
import os
import re
import signal
import time

import pytest

from conftest import ADMIN_KEY, FINAL, Client, backend_neutral, start_process, wait_process
from proc_util import HELLO, log_text, sleeper

neutral = backend_neutral("the runners' zygote (fork, confinement, exit status, shutdown): the database takes "
                          "no part; the kills that the store recovers from run on both backends")


def children(pid):
    out = []
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")[1:-1]
    except OSError:
        return []


def proc_status(pid):
    with open("/proc/%d/status" % pid) as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


def zygote_of(srv):
    z = [c for c in children(srv.proc.pid) if cmdline(c) == [b"runner", b"--zygote"]]
    return z[0] if z else None


def wait_for(fn, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("timed out")


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def sleeping_runner(fresh_server, seconds=30):
    """A server with one sleeping process: (server, admin, zygote pid, process id, runner pid)."""
    srv = fresh_server(args=["--workers", "2"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    pid = start_process(admin, sleeper(seconds))
    wait_process(admin, pid, ("RUNNING",))
    zygote = wait_for(lambda: zygote_of(srv))
    # RUNNING is recorded as the runner starts; its first step runs once it is confined.
    wait_for(lambda: "sleeping" in (log_text(admin, pid) or ""))
    runner = wait_for(lambda: children(zygote))[0]
    return srv, admin, zygote, pid, runner


@neutral
def test_runners_are_forked_by_the_zygote_and_confined(fresh_server):
    srv, admin, zygote, pid, runner = sleeping_runner(fresh_server)
    assert proc_status(zygote)["NoNewPrivs"].strip() == "0"  # the zygote itself is not confined
    assert children(srv.proc.pid) == [zygote]  # nothing exec'd by the server
    st = proc_status(runner)
    assert st["NoNewPrivs"].strip() == "1"  # confine_runner ran (Landlock needs it)
    assert os.getpgid(runner) == runner  # its own process group, signalled as a whole
    # the standard signals as after an exec: none ignored or blocked, though the zygote
    # ignores four and blocks SIGCHLD (32 and 33 are glibc's own, out of any program's reach)
    standard = (1 << 31) - 1  # signals 1-31
    assert int(proc_status(zygote)["SigIgn"], 16) & (1 << (signal.SIGTERM - 1))
    assert int(st["SigIgn"], 16) & standard == 0 and int(st["SigBlk"], 16) == 0, st
    assert sorted(int(fd) for fd in os.listdir("/proc/%d/fd" % runner)) == [0, 1, 2, 3]
    # /proc/<pid>/environ shows the environment the zygote was started with (the runner
    # replaces it with its own, of the same names): nothing of the server's.
    with open("/proc/%d/environ" % runner, "rb") as f:
        env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if kv)
    assert {b"HOME", b"PATH", b"LANG", b"TZ", b"TMPDIR"} <= set(env)
    assert set(env) - {b"HOME", b"PATH", b"LANG", b"TZ", b"TMPDIR", b"ASAN_OPTIONS", b"UBSAN_OPTIONS",
                       b"LSAN_OPTIONS", b"LD_BIND_NOW", b"ACCORD_RUNNER_UID", b"ACCORD_RUNNER_GID"} == set(), env
    assert b"ACCORD_ADMIN_API_KEY" not in env
    assert os.readlink("/proc/%d/cwd" % runner) == os.path.join(os.path.realpath(srv.data_dir), "work", pid)
    # stop kills its process group; the exit status comes back through the zygote
    assert admin.delete("/api/v1/process/%s" % pid).status_code in (200, 204)
    assert wait_process(admin, pid)["status"] == "CANCELLED"
    assert not alive(runner)
    assert wait_process(admin, start_process(admin, HELLO))["status"] == "FINISHED"


@neutral
def test_exit_status_of_a_killed_runner(fresh_server):
    _, admin, _, pid, runner = sleeping_runner(fresh_server)
    os.kill(runner, signal.SIGSEGV)
    p = wait_process(admin, pid)
    assert p["status"] == "FAILED", p
    assert "killed by signal %d" % signal.SIGSEGV in log_text(admin, pid)


def test_zygote_killed_while_processes_run(fresh_server):
    srv = fresh_server(args=["--workers", "4"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    running = [start_process(admin, sleeper(30)) for _ in range(2)]
    # RUNNING is stored while the zygote forks: the flows have begun once they logged
    for pid in running:
        wait_process(admin, pid, ("RUNNING",))
        wait_for(lambda: "sleeping" in log_text(admin, pid))
    zygote = wait_for(lambda: zygote_of(srv))
    runners = wait_for(lambda: len(children(zygote)) == 2 and children(zygote))
    os.kill(zygote, signal.SIGKILL)
    for pid in running:  # they fail (not finish their 30 s sleep), with the reason in their log
        p = wait_process(admin, pid, timeout=20)
        assert p["status"] == "FAILED", p
        assert "killed by signal 9" in log_text(admin, pid)
    for r in runners:
        wait_for(lambda: not alive(r))
    # new processes run, under a new zygote
    done = [start_process(admin, HELLO) for _ in range(3)]
    for pid in done:
        assert wait_process(admin, pid)["status"] == "FINISHED"
    again = wait_for(lambda: zygote_of(srv))
    assert again != zygote
    assert "runner zygote %d was killed by signal 9" % zygote in srv.read_log()
    # a clean stop ends the new zygote quietly (it was started by a worker thread)
    assert srv.stop() == 0
    assert srv.read_log().count("was killed by signal") == 1, srv.read_log()
    wait_for(lambda: not alive(again), timeout=10)


def test_zygote_dying_before_it_forks(fresh_server):
    """RUNNING and the start frame are written while the zygote forks the runner; a zygote
    that dies before it forked leaves the process to an exec'd runner, sent the frame anew."""
    srv = fresh_server(args=["--workers", "2"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    # the zygote starts with the first process
    assert wait_process(admin, start_process(admin, HELLO))["status"] == "FINISHED"
    zygote = wait_for(lambda: zygote_of(srv))
    wait_for(lambda: children(zygote) == [])
    os.kill(zygote, signal.SIGSTOP)
    try:
        pid = start_process(admin, HELLO)
        # recorded while the request waits: the stopped zygote has not even read it
        assert wait_process(admin, pid, ("RUNNING",) + FINAL)["status"] == "RUNNING"
        assert children(zygote) == []
    finally:
        os.kill(zygote, signal.SIGKILL)
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED", (p, log_text(admin, pid))
    assert "hello from %s" % pid in log_text(admin, pid)
    wait_for(lambda: "runner zygote %d was killed by signal 9" % zygote in srv.read_log())


def test_server_killed_leaves_no_runner(fresh_server):
    srv, _, zygote, _, runner = sleeping_runner(fresh_server, 60)
    srv.stop(signal.SIGKILL)
    wait_for(lambda: not alive(zygote) and not alive(runner), timeout=10)


@neutral
def test_the_zygote_starts_with_the_first_process(fresh_server):
    """Not at the server's start: a node that runs no process never pays its exec."""
    srv = fresh_server(args=["--workers", "2"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    assert admin.get("/api/v1/server/ping").status_code == 200
    assert zygote_of(srv) is None and not re.search(r"runner zygote \d+ started", srv.read_log())
    assert wait_process(admin, start_process(admin, HELLO))["status"] == "FINISHED"
    zygote = zygote_of(srv)
    assert zygote and "runner zygote %d started" % zygote in srv.read_log()
    assert wait_process(admin, start_process(admin, HELLO))["status"] == "FINISHED"
    assert zygote_of(srv) == zygote  # the one zygote forks the next runners


@neutral
def test_shutdown_stops_the_zygote(fresh_server):
    srv = fresh_server(args=["--workers", "2"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    assert wait_process(admin, start_process(admin, HELLO))["status"] == "FINISHED"
    zygote = wait_for(lambda: zygote_of(srv))
    assert srv.stop() == 0
    wait_for(lambda: not alive(zygote), timeout=10)


@neutral
@pytest.mark.parametrize("value", ["false", "0"])
def test_runner_zygote_false_execs_runners(fresh_server, value):
    srv = fresh_server(args=["--workers", "2", "--runner-zygote=" + value]).start()
    admin = Client(srv.url, ADMIN_KEY)
    assert zygote_of(srv) is None
    assert "exec'd (--runner-zygote=false)" in srv.read_log()
    pid = start_process(admin, sleeper(30))
    wait_process(admin, pid, ("RUNNING",))
    runners = wait_for(lambda: [c for c in children(srv.proc.pid) if cmdline(c) == [b"runner"]])
    # RUNNING is recorded as the runner starts; it confines itself before its first step.
    wait_for(lambda: proc_status(runners[0])["NoNewPrivs"].strip() == "1")
    assert admin.delete("/api/v1/process/%s" % pid).status_code in (200, 204)
    assert wait_process(admin, pid)["status"] == "CANCELLED"
    assert wait_process(admin, start_process(admin, HELLO))["status"] == "FINISHED"


@neutral
def test_runner_zygote_bad_value(fresh_server):
    srv = fresh_server(args=["--runner-zygote=maybe"])
    with pytest.raises(RuntimeError) as ex:
        srv.start()
    assert "--runner-zygote must be true or false, got 'maybe'" in str(ex.value)
