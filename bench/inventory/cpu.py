"""bench/inventory/cpu (see ./cpu): the server CPU of each containment query, counted, for two
builds on the same items, and the time of upgrading the database from one build to the other.

ITEMS host records (bench.py's) are loaded through the API (bulk) by BEFORE's server into one
data folder; it is stopped and the folder copied; `AFTER migrate` upgrades the copy (its wall
and CPU time, from wait4, are printed: e.g. a migration that converts the postings). Then both
servers run, each on its folder, and for each filter of bench.py, count then rows, in TURNS
turns alternating which build goes first: EXECS execs on one keep-alive connection under
`perf stat -e task-clock -p <server>` (every thread of the server: HTTP, authentication,
lookups, the sandbox). The figure is the median over the turns of task-clock ms per exec,
counted rather than timed, so far less sensitive to other work on the machine than wall time.
The answers of the two builds are compared byte for byte (they must be equal).

Settings: BEFORE (binary, required), AFTER (default build/accord), ITEMS (default 100000),
TURNS (default 5), EXECS (default 50), ONLY (a substring of the filters' labels to run).
Prints a Markdown table; nothing is recorded (copy what matters to bench/RESULTS.md)."""
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (its records, filters and server handle)

ROOT = bench.ROOT
BEFORE = os.environ["BEFORE"]
AFTER = os.environ.get("AFTER", os.path.join(ROOT, "build", "accord"))
TURNS = int(os.environ.get("TURNS", "5"))
EXECS = int(os.environ.get("EXECS", "50"))
ONLY = os.environ.get("ONLY", "")


def task_clock_ms(pid, fn):
    """The task-clock of every thread of pid while fn runs, in ms."""
    perf = subprocess.Popen(["perf", "stat", "-x,", "-e", "task-clock", "-p", str(pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(0.2)  # perf attached to every thread
    fn()
    perf.send_signal(signal.SIGINT)
    err = perf.communicate(timeout=30)[1]
    for line in err.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2].startswith("task-clock"):
            return float(f[0])
    raise RuntimeError("perf stat: %s" % err)


def migrate(binary, data):
    """`binary migrate --data data`: (wall s, CPU s of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([binary, "migrate", "--data", data], check=True, capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    work = tempfile.mkdtemp(prefix="accord-bench-cpu.")
    os.chmod(work, 0o755)
    servers = []
    try:
        records = list(bench.host_records(bench.ITEMS))
        seed = bench.Accord(work, binary=BEFORE, name="seed")
        seed.create()
        seed.load(records, bulk=True)
        seed.save("bench-count", bench.COUNT_Q)
        seed.save("bench-rows", bench.ROWS_Q)
        seed.stop()
        for name in ("before", "after"):
            shutil.copytree(seed.data, os.path.join(work, name))
        wall, cpu = migrate(AFTER, os.path.join(work, "after"))
        print("migrate (after on before's database of %d items): %.2f s wall, %.2f s CPU" % (bench.ITEMS, wall, cpu))
        servers = [bench.Accord(work, binary=BEFORE, name="before"), bench.Accord(work, binary=AFTER, name="after")]
        flts = [(label, f) for label, f in bench.filters(records) if ONLY in label]
        print("| query | before count | after count | before rows | after rows |")
        print("|---|---|---|---|---|")
        for label, flt in flts:
            body = bench.json_text(flt).encode()
            cells = []
            for q in ("bench-count", "bench-rows"):
                answers = [s.run(q, flt) for s in servers]
                assert json.dumps(answers[0]) == json.dumps(answers[1]), (label, q)
                for s in servers:  # warm: connections, caches
                    for _ in range(5):
                        s.exec_ms(q, body)
                per = [[], []]
                for t in range(TURNS):
                    for k in ((0, 1) if t % 2 == 0 else (1, 0)):
                        s = servers[k]
                        per[k].append(task_clock_ms(s.proc.pid, lambda: [s.exec_ms(q, body) for _ in range(EXECS)])
                                      / EXECS)
                cells += ["%.2f" % statistics.median(p) for p in per]
            print("| %s | %s | %s | %s | %s |" % (label, cells[0], cells[1], cells[2], cells[3]), flush=True)
        print("load average %.2f" % os.getloadavg()[0])
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
