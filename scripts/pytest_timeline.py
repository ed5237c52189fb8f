"""A pytest plugin that scripts/run-suites loads into its pytest suites (-p pytest_timeline,
with scripts/ on PYTHONPATH): each test's worker, start and end (wall clock, set-up and
tear-down included) as one JSON line appended to $PYTEST_TIMELINE, so that a run's schedule
can be read afterwards (bench/suites/timeline: per worker, per file).  Nothing here changes
what a test does; without $PYTEST_TIMELINE it writes nothing."""
import json
import os
import time

_OUT = os.environ.get("PYTEST_TIMELINE")
_started = {}
_active = []


def pytest_configure(config):
    # an xdist controller sees its workers' tests too: only the process that runs them writes
    controller = getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput")
    if _OUT and not controller:
        _active.append(True)


def pytest_runtest_logstart(nodeid, location):
    if _active:
        _started[nodeid] = time.time()


def pytest_runtest_logfinish(nodeid, location):
    start = _started.pop(nodeid, None)
    if start is None:
        return
    line = json.dumps({"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "test": nodeid,
                       "start": round(start, 3), "end": round(time.time(), 3)})
    # one write of one line in append mode: the workers' lines do not interleave
    fd = os.open(_OUT, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)
