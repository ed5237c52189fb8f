"""Fairness between tenants (issue 23 item 9): per-user and per-project limits on running
processes, the queue claimed round-robin across initiators, and the per-project storage
quota for logs and attachments."""
from conftest import ADMIN_KEY, Client, make_user, process_log, start_process, wait_process
from proc_util import HELLO, make_org, make_project, sleeper, status, wait_for
from test_process_children import CHILD
from test_process_limits import NOISY

RUNNING = ("RUNNING",)


def cancel(client, pid):
    r = client.delete("/api/v1/process/%s" % pid)
    assert r.status_code in (200, 204), r.text
    wait_process(client, pid)


def test_a_user_at_the_limit_does_not_keep_another_user_waiting(fresh_server):
    srv = fresh_server(args=["--workers", "4", "--limit-running-per-user", "2"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    a, b = make_user(admin), make_user(admin)
    a_pids = [start_process(a, sleeper(300)) for _ in range(3)]
    wait_for(lambda: [status(a, p)["status"] for p in a_pids].count("RUNNING") == 2, timeout=60)
    # a free worker, but A is at its limit: B's process is claimed before A's third
    b_pid = start_process(b, HELLO)
    assert wait_process(b, b_pid, timeout=60)["status"] == "FINISHED"
    states = [status(a, p)["status"] for p in a_pids]
    assert sorted(states) == ["ENQUEUED", "RUNNING", "RUNNING"], states
    waiting = a_pids[states.index("ENQUEUED")]
    # one of A's ends: A's third runs
    cancel(a, a_pids[states.index("RUNNING")])
    wait_process(a, waiting, statuses=RUNNING, timeout=60)
    for p in a_pids:
        if status(a, p)["status"] == "RUNNING":
            cancel(a, p)


def test_a_project_at_the_limit_waits_and_others_run(fresh_server):
    srv = fresh_server(args=["--workers", "4", "--limit-running-per-project", "1"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    org, _ = make_org(admin)
    busy, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    other, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    parts = {"org": org, "project": busy}
    first = start_process(admin, sleeper(300), parts=parts)
    wait_process(admin, first, statuses=RUNNING, timeout=60)
    second = start_process(admin, HELLO, parts=parts)
    elsewhere = start_process(admin, HELLO, parts={"org": org, "project": other})
    assert wait_process(admin, elsewhere, timeout=60)["status"] == "FINISHED"
    assert status(admin, second)["status"] == "ENQUEUED"
    cancel(admin, first)
    assert wait_process(admin, second, timeout=60)["status"] == "FINISHED"


def test_the_queue_is_claimed_round_robin_across_users(fresh_server):
    srv = fresh_server(args=["--workers", "1"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    a, b = make_user(admin), make_user(admin)
    blocker = start_process(a, sleeper(300))
    wait_process(a, blocker, statuses=RUNNING, timeout=60)
    # A queues five behind its running one, then B one: B's is not the last to run
    a_pids = [start_process(a, HELLO) for _ in range(5)]
    b_pid = start_process(b, HELLO)
    cancel(a, blocker)
    done = [wait_process(a, p, timeout=60) for p in a_pids]
    b_done = wait_process(b, b_pid, timeout=60)
    assert all(p["status"] == "FINISHED" for p in done + [b_done])
    started = sorted(done + [b_done], key=lambda p: p["lastRunAt"])
    # one worker runs them one after another: B's ran second (after A's first), not sixth
    assert [p["instanceId"] for p in started].index(b_pid) <= 1, [p["instanceId"] for p in started]


def test_a_child_is_not_held_by_its_parents_limit(fresh_server):
    """A parent waiting for its child would otherwise wait for ever at a limit of 1."""
    srv = fresh_server(args=["--workers", "2", "--limit-running-per-user", "1"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    flow = ('flows:\n  default:\n    - task: concord\n      in: {action: start, payload: child, sync: true,'
            ' arguments: {greeting: yo}, outVars: [answer]}\n      out: job\n    - log: "got ${job.answer}"\n')
    pid = start_process(admin, flow, files={"child/concord.yml": CHILD.encode()})
    p = wait_process(admin, pid, timeout=60)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "got yo-42" in log


def noisy(client, org, project, lines=100):
    """A process of org/project that logs about 100 bytes a line."""
    req = b'{"arguments": {"range": %s}}' % str(list(range(lines))).encode()
    return start_process(client, NOISY, parts={"org": org, "project": project},
                         files={"request": (req, "application/json")})


def quota_server(fresh_server, *args):
    srv = fresh_server(args=["--limit-project-storage-bytes", "16k"] + list(args)).start()
    admin = Client(srv.url, ADMIN_KEY)
    org, _ = make_org(admin)
    projects = [make_project(admin, org, rawPayloadMode="EVERYONE", outVariablesMode="EVERYONE")[0]
                for _ in range(2)]
    return admin, org, projects


def test_the_project_storage_quota_fails_a_process_clearly(fresh_server):
    admin, org, (full, other) = quota_server(fresh_server)
    first = noisy(admin, org, full)
    assert wait_process(admin, first, timeout=60)["status"] == "FINISHED"
    second = noisy(admin, org, full)
    p = wait_process(admin, second, timeout=60)
    log = process_log(admin, second)
    assert p["status"] == "FAILED", log
    assert "Project storage quota reached (16384 bytes of logs and attachments, limit-project-storage-bytes)" in log
    # what it kept fits in what the project had left, plus the server's lines
    assert len(log.encode()) + len(process_log(admin, first).encode()) < 16384 + 1024
    # another project's processes are not held by it
    assert wait_process(admin, noisy(admin, org, other), timeout=60)["status"] == "FINISHED"


def test_attachments_beyond_the_project_storage_quota_fail_the_process(fresh_server):
    admin, org, (full, _) = quota_server(fresh_server)
    grow = "".join('    - set: {s: "${s.concat(s)}"}\n' for _ in range(11))  # 20,480 characters
    flow = 'flows:\n  default:\n    - set: {s: "0123456789"}\n' + grow
    pid = start_process(admin, flow, parts={"org": org, "project": full, "out": "s"})
    p = wait_process(admin, pid, timeout=60)
    log = process_log(admin, pid)
    assert p["status"] == "FAILED", log
    assert "Process failed: its results could not be stored: Project storage quota reached" in log, log


def test_retention_frees_the_project_storage_quota(fresh_server):
    admin, org, (full, _) = quota_server(fresh_server, "--retention-logs", "1s", "--retention-interval", "1s")
    first = noisy(admin, org, full)
    assert wait_process(admin, first, timeout=60)["status"] == "FINISHED"
    wait_for(lambda: "line 99" not in process_log(admin, first), timeout=60)
    assert wait_process(admin, noisy(admin, org, full), timeout=60)["status"] == "FINISHED"
