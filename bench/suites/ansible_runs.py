"""bench/suites/ansible_runs.py: a pytest plugin that counts, per API test, the CPU of the
processes below the pytest process and the Ansible work in the processes the test started.

  PYTHONPATH=bench/suites ACCORD_BIN=… python3 -m pytest -p ansible_runs tests/api/test_ansible*.py
  (ANSIBLE_RUNS_OUT=FILE: one JSON line per test appended to FILE; default /tmp/ansible_runs.jsonl)

CPU: user + system of this process and every live process below it, each with what it has
reaped (utime + stime + cutime + cstime from /proc/PID/stat), taken before the test's set-up
and after its tear-down; the difference is the test's (its servers, their runners,
ansible-playbook and its modules, and this process).  Processes reparented away (none in
these tests) would be missed.

Ansible work, read from the log of every process the test started (any POST answered with an
instanceId): playbook runs ("Using a playbook:" lines, one per `ansible` step), fact
gatherings (the hosts reported under "TASK [Gathering Facts]") and hosts seen in PLAY RECAP.
Measurement only: nothing here changes what a test does.
"""
import json
import os
import re
import time

import pytest

TICK = os.sysconf("SC_CLK_TCK")
OUT = os.environ.get("ANSIBLE_RUNS_OUT", "/tmp/ansible_runs.jsonl")
_started = []  # (client, instanceId) of the running test


def _tree_cpu():
    """CPU seconds of this process and its live descendants, with what each reaped."""
    stats = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                f_ = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(d)] = (int(f_[1]), sum(int(x) for x in f_[11:15]))
    kids = {}
    for pid, (ppid, _) in stats.items():
        kids.setdefault(ppid, []).append(pid)
    total, todo = 0, [os.getpid()]
    while todo:
        p = todo.pop()
        total += stats.get(p, (0, 0))[1]
        todo.extend(kids.get(p, []))
    return total / TICK


def _count(log):
    runs = len(re.findall(r"Using a playbook: ", log))
    facts = 0
    hosts = 0
    in_facts = in_recap = False
    for line in log.splitlines():
        if "TASK [" in line or "PLAY [" in line or "PLAY RECAP" in line:
            in_facts = "TASK [Gathering Facts]" in line
            in_recap = "PLAY RECAP" in line
            continue
        if in_facts and re.search(r"\b(ok|fatal|unreachable): \[", line):
            facts += 1
        if in_recap and re.search(r"\bok=\d+", line):
            hosts += 1
    return runs, facts, hosts


def pytest_plugin_registered(plugin):
    """Wraps conftest's Client.req once the API conftest is loaded (before the test modules
    import from it) to note every process a test starts."""
    cls = getattr(plugin, "Client", None)
    if getattr(plugin, "__name__", "").endswith("conftest") and cls and not hasattr(cls, "_ansible_runs"):
        orig = cls.req

        def req(self, method, path, **kw):
            r = orig(self, method, path, **kw)
            if method.upper() == "POST":
                try:
                    body = r.json()
                except ValueError:
                    body = None
                if isinstance(body, dict) and isinstance(body.get("instanceId"), str):
                    _started.append((self, body["instanceId"]))
            return r

        cls.req = req
        cls._ansible_runs = True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _started.clear()
    cpu0, t0 = _tree_cpu(), time.time()
    item._ansible_counts = (0, 0, 0)
    yield
    row = {"test": item.nodeid, "cpu": round(_tree_cpu() - cpu0, 2), "wall": round(time.time() - t0, 2),
           "processes": len(set(i for _, i in _started))}
    row["runs"], row["facts"], row["hosts"] = item._ansible_counts
    with open(OUT, "a") as f:
        f.write(json.dumps(row) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """Reads the logs before the fixtures (and the servers) are torn down."""
    totals = [0, 0, 0]
    for client, iid in dict.fromkeys(_started):
        try:
            r = client.req("GET", "/api/v1/process/%s/log" % iid)
            text = r.text if r.status_code in (200, 206) else ""
        except Exception:  # a server the test stopped itself
            text = ""
        for i, n in enumerate(_count(text)):
            totals[i] += n
    item._ansible_counts = tuple(totals)
    yield
