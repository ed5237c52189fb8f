"""bench/inventory (see ./run): containment queries over ITEMS host records, Accord (SQLite,
key index; or, with STORE=postgresql, Accord on a database of the same PostgreSQL, jsonb and
its sandbox) against PostgreSQL 15 (jsonb, GIN jsonb_path_ops), same data, same query text."""
import datetime
import os
import platform
import pwd
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import requests

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ITEMS = int(os.environ.get("ITEMS", "100000"))
REPEAT = int(os.environ.get("REPEAT", "7"))
LOAD_CLIENTS = int(os.environ.get("LOAD_CLIENTS", "1"))
STORE = os.environ.get("STORE", "sqlite")
PG_BIN = "/usr/lib/postgresql/15/bin"
KEY = "YmVuY2gtaW52ZW50b3J5LWFkbWluLWtleS0wMTIzNDU2Nzg5"
COUNT_Q = "select count(*) from inventory_data where item_data @> ?::jsonb"
ROWS_Q = "select cast(to_json(item_data) as varchar) from inventory_data where item_data @> ?::jsonb"

REGIONS = ["eastus", "westus", "centralus", "northeurope", "westeurope", "southeastasia", "japaneast",
           "brazilsouth", "australiaeast", "canadacentral"]
ROLES = ["web", "api", "db", "cache", "queue", "worker", "batch", "search", "proxy", "lb", "auth", "mail", "dns",
         "ci", "monitor", "log", "storage", "gateway", "scheduler", "ml"]
OSES = [("RedHat", ["8.6", "8.8", "9.2"]), ("Debian", ["11", "12"]), ("Ubuntu", ["20.04", "22.04"])]
TAGS = ["linux", "prod-critical", "pci", "backup", "monitored", "patched", "legacy", "ssd", "ipv6", "dmz"]


def host_records(n):
    rnd = random.Random(42)
    for i in range(n):
        region = REGIONS[i % len(REGIONS)]
        fam, versions = OSES[rnd.randrange(len(OSES))]
        env = rnd.choices(["prod", "staging", "test"], [50, 30, 20])[0]
        tags = rnd.sample(TAGS, rnd.randint(1, 3)) + (["gpu"] if rnd.random() < 0.02 else [])
        yield "host-%06d" % i, {
            "host": "host-%06d.%s.example.com" % (i, region),
            "env": env,
            "location": region,
            "role": ROLES[rnd.randrange(len(ROLES))],
            "os": {"family": fam, "version": rnd.choice(versions)},
            "ipv4": {"address": "10.%d.%d.%d" % (i >> 16 & 255, i >> 8 & 255, i & 255),
                     "netmask": "255.255.255.0", "network": "10.%d.%d.0" % (i >> 16 & 255, i >> 8 & 255)},
            "serial_number": "SN%010d" % rnd.randrange(10 ** 10),
            "deployment_color": rnd.choice(["green", "blue"]),
            "rack": "r%03d" % (i % 1000),
            "cpu": rnd.choice([2, 4, 8, 16, 32, 64]),
            "memory_gb": rnd.choice([4, 8, 16, 32, 64, 128, 256]),
            "tags": tags,
            "ansible_python_interpreter": "/usr/bin/python3",
        }


def filters(records):
    one = records[ITEMS * 54321 // 100000][1]
    return [
        ("host (1 item)", {"host": one["host"]}),
        ("serial_number (1 item)", {"serial_number": one["serial_number"]}),
        ("rack (0.1%)", {"rack": "r042"}),
        ("location+role (0.5%)", {"location": "eastus", "role": "web"}),
        ("tags [gpu] (2%)", {"tags": ["gpu"]}),
        ("os {family, version} (~10%)", {"os": {"family": "Debian", "version": "12"}}),
        ("env staging + blue (15%)", {"env": "staging", "deployment_color": "blue"}),
        ("env prod (50%)", {"env": "prod"}),
        ("{} (100%)", {}),
    ]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def median_ms(fn):
    times = []
    for _ in range(REPEAT):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


class Accord:
    def __init__(self, work, db=None):
        self.port = free_port()
        env = dict(os.environ, ACCORD_ADMIN_API_KEY=KEY)
        self.log = open(os.path.join(work, "accord.log"), "w")
        self.proc = subprocess.Popen([os.path.join(ROOT, "build", "accord"), "serve", "--data",
                                      os.path.join(work, "accord"), "--listen", "127.0.0.1:%d" % self.port,
                                      "--limit-query-rows", "1000000", "--limit-query-timeout-ms", "120000"]
                                     + (["--db", db] if db else []),
                                     stdout=self.log, stderr=self.log, env=env)
        self.url = "http://127.0.0.1:%d/api/v1/org/Default/inventory" % self.port
        self.s = requests.Session()
        self.s.headers["Authorization"] = KEY
        for _ in range(400):  # until it answers 200 (503 while it starts: migrations)
            try:
                if self.s.get(self.url, timeout=1).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            time.sleep(0.05)
        r = self.s.post(self.url, json={"name": "hosts"})
        assert r.status_code == 200, r.text
        self.base = self.url + "/hosts"

    def load(self, records):
        def put(chunk):
            s = requests.Session()
            s.headers["Authorization"] = KEY
            for path, data in chunk:
                r = s.post(self.base + "/data/" + path, json=data)
                assert r.status_code == 200, r.text
        chunks = [records[i::LOAD_CLIENTS] for i in range(LOAD_CLIENTS)]
        with ThreadPoolExecutor(LOAD_CLIENTS) as ex:
            list(ex.map(put, chunks))

    def save(self, name, text):
        r = self.s.post(self.base + "/query/" + name, data=text, headers={"Content-Type": "text/plain"})
        assert r.status_code == 200, r.text

    def run(self, name, flt):
        r = self.s.post(self.base + "/query/%s/exec" % name, json=flt)
        assert r.status_code == 200, r.text
        return r.json()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()


class Postgres:
    def __init__(self, work):
        self.dir = os.path.join(work, "pg")
        os.mkdir(self.dir)
        self.as_user = []
        if os.getuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(work, pw.pw_uid, pw.pw_gid)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.port = free_port()
        self.sh([PG_BIN + "/initdb", "-D", self.dir + "/data", "-A", "trust", "-U", "postgres", "--no-sync"])
        self.sh([PG_BIN + "/pg_ctl", "-D", self.dir + "/data", "-w", "-l", self.dir + "/log", "-o",
                 "-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=256MB" % (self.port, self.dir),
                 "start"])

    def sh(self, cmd, **kw):
        return subprocess.run(self.as_user + cmd, check=True, capture_output=True, text=True, **kw)

    def psql(self, sql=None, script=None, db="postgres"):
        cmd = ["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", db, "-v",
               "ON_ERROR_STOP=1"]
        cmd += ["-c", sql] if sql else ["-f", script]
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout

    def load(self, records, work):
        path = os.path.join(work, "items.tsv")
        with open(path, "w") as f:
            for p, data in records:
                f.write("%s\t%s\n" % (p, json_text(data).replace("\\", "\\\\")))
        self.psql("create table inventory_data (item_path text primary key, item_data jsonb not null)")
        self.psql("\\copy inventory_data from '%s'" % path)
        self.psql("create index inventory_data_gin on inventory_data using gin (item_data jsonb_path_ops)")
        self.psql("vacuum analyze inventory_data")

    def times(self, work, flts):
        """Median ms per (query, filter) over REPEAT runs, timed by psql (results discarded)."""
        script = os.path.join(work, "bench.sql")
        with open(script, "w") as f:
            f.write("set plan_cache_mode = force_custom_plan;\n")
            f.write("prepare c(jsonb) as %s;\n" % COUNT_Q.replace("?::jsonb", "$1"))
            f.write("prepare r(jsonb) as %s;\n" % ROWS_Q.replace("?::jsonb", "$1"))
            f.write("\\o /dev/null\n\\timing on\n")
            for q in ("c", "r"):
                for _, flt in flts:
                    for _ in range(REPEAT):
                        f.write("execute %s('%s');\n" % (q, json_text(flt).replace("'", "''")))
        out = self.psql(script=script)
        ms = [float(m) for m in re.findall(r"Time: ([0-9.]+) ms", out)]
        assert len(ms) == 2 * len(flts) * REPEAT, out[-2000:]
        med = [statistics.median(ms[i:i + REPEAT]) for i in range(0, len(ms), REPEAT)]
        return med[:len(flts)], med[len(flts):]

    def stop(self):
        self.sh([PG_BIN + "/pg_ctl", "-D", self.dir + "/data", "-m", "fast", "stop"])


def json_text(v):
    import json
    return json.dumps(v, separators=(",", ":"))


def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) // (1024 * 1024)
    return "%s, %d cores, %s, %d GB" % (platform.machine(), os.cpu_count(), cpu, mem)


def main():
    work = tempfile.mkdtemp(prefix="accord-bench-inv.")
    os.chmod(work, 0o755)
    accord = pg = None
    try:
        records = list(host_records(ITEMS))
        flts = filters(records)
        pg = Postgres(work)
        db = None
        if STORE == "postgresql":
            pg.psql("create database accordinv")
            db = "postgresql://postgres@127.0.0.1:%d/accordinv" % pg.port
        accord = Accord(work, db)
        t = time.perf_counter()
        accord.load(records)
        accord_load = time.perf_counter() - t
        if db:  # as for the plain table below: statistics before timing (autovacuum would, later)
            pg.psql("vacuum analyze inventory_items", db="accordinv")
        accord.save("bench-count", COUNT_Q)
        accord.save("bench-rows", ROWS_Q)
        t = time.perf_counter()
        pg.load(records, work)
        pg_load = time.perf_counter() - t
        pg_count, pg_rows = pg.times(work, flts)
        rows = []
        for i, (label, flt) in enumerate(flts):
            n = accord.run("bench-count", flt)[0]
            a_count = median_ms(lambda: accord.run("bench-count", flt))
            a_rows = median_ms(lambda: accord.run("bench-rows", flt))
            rows.append((label, n, a_count, pg_count[i], a_rows, pg_rows[i]))
        report(rows, accord_load, pg_load)
    finally:
        if accord:
            accord.stop()
        if pg:
            pg.stop()
        shutil.rmtree(work, ignore_errors=True)


def report(rows, accord_load, pg_load):
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    lines = ["### bench/inventory — %s — %s" % (now, commit),
             "Machine: %s. %d items (host records, ~600 B each), median of %d runs; Accord (%s store) times are "
             "HTTP round trips of `POST …/query/{q}/exec`, PostgreSQL 15 times are psql `\\timing` of prepared "
             "statements (GIN jsonb_path_ops, custom plans)%s." % (
                 machine(), ITEMS, REPEAT, STORE,
                 "; Accord's database is another database of the same PostgreSQL" if STORE == "postgresql" else ""),
             "Load: Accord %.1f s through the API (%d client(s), one item + its key index per request), "
             "PostgreSQL %.1f s (COPY + GIN build)." % (accord_load, LOAD_CLIENTS, pg_load),
             "",
             "| filter | matches | accord count ms | pg count ms | ratio | accord rows ms | pg rows ms | ratio |",
             "|---|---|---|---|---|---|---|---|"]
    for label, n, ac, pc, ar, pr in rows:
        lines.append("| %s | %d | %.1f | %.1f | %.1f× | %.1f | %.1f | %.1f× |" % (label, n, ac, pc, ac / pc, ar, pr,
                                                                              ar / pr))
    sel = [r for r in rows if r[1] <= ITEMS // 100]
    lines += ["", "Selective filters (≤ 1%%): worst Accord rows query %.1f ms (target < 100 ms)."
              % max(r[4] for r in sel), ""]
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(ROOT, "bench", "RESULTS.md"), "a") as f:
        f.write("\n" + text)


if __name__ == "__main__":
    sys.exit(main())
