"""bench/inventory (see ./run): containment queries over ITEMS host records, Accord (SQLite,
key index; or, with STORE=postgresql, Accord on a database of the same PostgreSQL, jsonb and
its sandbox) against PostgreSQL 15 (jsonb, GIN jsonb_path_ops), same data, same query text.

What is timed, per query, each on one open connection held by this program:
* Accord: `POST …/query/{q}/exec` on one keep-alive HTTP connection (http.client), from
  sending the request to having read the whole body (not parsed: parsing is the client's
  own work, as for psql's output below).
* psql `\timing`: psql's own clock in one psql session (prepared statements, custom plans),
  from sending the statement to the last row received, without printing it; a network round
  trip on one connection, not the server's time alone.
* psql session: the same statement as a client program sees it: written to that psql's
  stdin, timed here until its whole output (rows unaligned, through a pipe) has been read.
The three are taken in turn for each run (and BEFORE's server with them), so that a noisy
machine weighs on all alike."""
import datetime
import http.client
import json
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
BEFORE = os.environ.get("BEFORE")  # another accord binary, served alongside on the same database
RECORD = os.environ.get("RECORD", "1") != "0"  # RECORD=0: print only, do not append to RESULTS.md
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


class Accord:
    """An `accord serve` (binary, default build/accord) on its own data folder work/name; with
    key_from, the master key of that other data folder (two servers on one database)."""

    def __init__(self, work, db=None, binary=None, name="accord", key_from=None):
        self.port = free_port()
        data = os.path.join(work, name)
        if key_from:
            os.mkdir(data, 0o700)
            shutil.copy(os.path.join(key_from, "master.key"), os.path.join(data, "master.key"))
        self.data = data
        # no RSA key pairs generated ahead in the background (nothing here uses them)
        env = dict(os.environ, ACCORD_ADMIN_API_KEY=KEY, ACCORD_KEYPAIR_POOL="0")
        self.log = open(os.path.join(work, name + ".log"), "w")
        self.proc = subprocess.Popen([binary or os.path.join(ROOT, "build", "accord"), "serve", "--data", data,
                                      "--listen", "127.0.0.1:%d" % self.port,
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
        self.base = self.url + "/hosts"
        self.http = None

    def create(self):
        r = self.s.post(self.url, json={"name": "hosts"})
        assert r.status_code == 200, r.text

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

    def exec_ms(self, name, body):
        """One exec on the kept-alive connection: ms until the whole body is read."""
        return self.time_ms("POST", "/api/v1/org/Default/inventory/hosts/query/%s/exec" % name, body)

    def time_ms(self, method, path, body=None):
        if not self.http:
            self.http = http.client.HTTPConnection("127.0.0.1", self.port)
        headers = {"Authorization": KEY, "Content-Type": "application/json"}
        t = time.perf_counter()
        self.http.request(method, path, body=body, headers=headers)
        r = self.http.getresponse()
        data = r.read()
        ms = (time.perf_counter() - t) * 1000
        assert r.status == 200, data[:500]
        return ms

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()


class PsqlSession:
    """One psql process on one connection, fed through its stdin, output unaligned through a
    pipe; each statement gives psql's \\timing and the wall time seen here (see the top)."""

    def __init__(self, pg):
        self.p = subprocess.Popen(["psql", "-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p", str(pg.port), "-U",
                                   "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.say("set plan_cache_mode = force_custom_plan;\n"
                 "prepare c(jsonb) as %s;\nprepare r(jsonb) as %s;\n\\timing on\n" % (
                     COUNT_Q.replace("?::jsonb", "$1"), ROWS_Q.replace("?::jsonb", "$1")))

    def say(self, text):
        """Writes text and an end mark; the lines printed before the mark (read in large
        chunks, as a client reads a result, not line by line)."""
        self.p.stdin.write((text + "\\echo __end__\n").encode())
        out = b""
        while not out.endswith(b"__end__\n"):
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            assert chunk, "psql ended: %r" % out[-500:]
            out += chunk
        return out[:-len(b"__end__\n")].decode().splitlines()

    def execute(self, q, flt):
        """(psql's \\timing ms, wall ms here) of `execute q(flt)`."""
        stmt = "execute %s('%s');\n" % (q, json_text(flt).replace("'", "''"))
        t = time.perf_counter()
        lines = self.say(stmt)
        wall = (time.perf_counter() - t) * 1000
        m = re.match(r"Time: ([0-9.]+) ms", lines[-1])
        assert m, lines[-3:]
        return float(m.group(1)), wall

    def stop(self):
        self.p.stdin.close()
        self.p.wait(30)


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

    def stop(self):
        self.sh([PG_BIN + "/pg_ctl", "-D", self.dir + "/data", "-m", "fast", "stop"])


def json_text(v):
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


def measure(servers, session, q, flt):
    """Medians over REPEAT turns of: each server's exec (servers: after, then before if any;
    who goes first alternates), psql's \\timing and the psql session's wall time."""
    body = json_text(flt).encode()
    name = "bench-count" if q == "c" else "bench-rows"
    for a in servers:  # once untimed: connections, caches
        a.exec_ms(name, body)
    session.execute(q, flt)
    times = [[] for _ in range(len(servers) + 2)]
    for i in range(REPEAT):
        for k in (range(len(servers)) if i % 2 == 0 else reversed(range(len(servers)))):  # first in turn
            times[k].append(servers[k].exec_ms(name, body))
        timing, wall = session.execute(q, flt)
        times[-2].append(timing)
        times[-1].append(wall)
    return [statistics.median(t) for t in times]


def floor(servers):
    """Medians over REPEAT * 5 turns, per server, of the requests around an exec without it:
    GET /api/v1/server/ping (no authentication, no database) and GET …/query/bench-rows (the
    authentication and the three lookups an exec makes before its query: organization,
    inventory, query)."""
    paths = ["/api/v1/server/ping", "/api/v1/org/Default/inventory/hosts/query/bench-rows"]
    times = [[[] for _ in paths] for _ in servers]
    for i in range(REPEAT * 5):
        for k in (range(len(servers)) if i % 2 == 0 else reversed(range(len(servers)))):
            for j, path in enumerate(paths):
                times[k][j].append(servers[k].time_ms("GET", path))
    return [[statistics.median(t) for t in per] for per in times]


def main():
    work = tempfile.mkdtemp(prefix="accord-bench-inv.")
    os.chmod(work, 0o755)
    servers = []
    pg = session = None
    try:
        records = list(host_records(ITEMS))
        flts = filters(records)
        pg = Postgres(work)
        db = None
        if STORE == "postgresql":
            pg.psql("create database accordinv")
            db = "postgresql://postgres@127.0.0.1:%d/accordinv" % pg.port
        accord = Accord(work, db)
        servers.append(accord)
        accord.create()
        t = time.perf_counter()
        accord.load(records)
        accord_load = time.perf_counter() - t
        if db:  # as for the plain table below: statistics before timing (autovacuum would, later)
            pg.psql("vacuum analyze inventory_items", db="accordinv")
        accord.save("bench-count", COUNT_Q)
        accord.save("bench-rows", ROWS_Q)
        if BEFORE:
            assert db, "BEFORE needs STORE=postgresql (two servers on one database)"
            servers.append(Accord(work, db, binary=BEFORE, name="before", key_from=accord.data))
        t = time.perf_counter()
        pg.load(records, work)
        pg_load = time.perf_counter() - t
        session = PsqlSession(pg)
        load = [os.getloadavg()[0]]
        for _ in range(40):  # every server thread's database connection: opened, statements prepared
            for a in servers:
                for q in ("bench-count", "bench-rows"):
                    a.exec_ms(q, json_text(flts[0][1]).encode())
        base = floor(servers)
        rows = {"c": [], "r": []}
        for label, flt in flts:
            n = accord.run("bench-count", flt)[0]
            for q in ("c", "r"):
                rows[q].append((label, n, measure(servers, session, q, flt)))
        load.append(os.getloadavg()[0])
        report(rows, base, accord_load, pg_load, load)
    finally:
        for a in servers:
            a.stop()
        if session:
            session.stop()
        if pg:
            pg.stop()
        shutil.rmtree(work, ignore_errors=True)


def table(title, rows):
    before = len(rows[0][2]) == 4
    head = "| %s | matches | accord ms |%s psql \\timing ms | psql session ms | accord ÷ \\timing | " \
           "accord ÷ session |" % (title, " accord before ms | after ÷ before |" if before else "")
    lines = [head, "|" + "---|" * head.count(" |")]
    for label, n, m in rows:
        after, timing, wall = m[0], m[-2], m[-1]
        mid = " %.2f | %.2f× |" % (m[1], after / m[1]) if before else ""
        lines.append("| %s | %d | %.2f |%s %.2f | %.2f | %.1f× | %.1f× |" % (label, n, after, mid, timing, wall,
                                                                           after / timing, after / wall))
    return lines


def ratios(rows, k):
    """min–max over the selective filters (≤ 1% of the items) of server k's time ÷ \\timing
    and ÷ the psql session's."""
    sel = [m for _, n, m in rows if n <= ITEMS // 100]
    a = [m[k] / m[-2] for m in sel]
    b = [m[k] / m[-1] for m in sel]
    return "%.1f–%.1f× \\timing, %.1f–%.1f× session" % (min(a), max(a), min(b), max(b))


def report(rows, base, accord_load, pg_load, load):
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    lines = ["### bench/inventory — %s — %s" % (now, commit),
             "Machine: %s; load average %.2f before the timing, %.2f after. %d items (host records, ~600 B "
             "each), median of %d turns; in each turn, one after the other on connections held open: Accord "
             "(%s store) `POST …/query/{q}/exec` on one keep-alive HTTP connection, until the whole body is "
             "read%s; psql's `\\timing` (its own clock: statement sent → last row received, not printed) and "
             "the same statement in that psql session as this program sees it (written to its stdin → all "
             "its output read through a pipe). PostgreSQL 15: prepared statements, GIN jsonb_path_ops, "
             "custom plans%s." % (
                 machine(), load[0], load[1], ITEMS, REPEAT, STORE,
                 "; accord before: `%s` on the same database, timed in the same turns" % BEFORE if BEFORE else "",
                 "; Accord's database is another database of the same PostgreSQL" if STORE == "postgresql" else ""),
             "Load: Accord %.1f s through the API (%d client(s), one item + its key index per request), "
             "PostgreSQL %.1f s (COPY + GIN build)." % (accord_load, LOAD_CLIENTS, pg_load),
             ""]
    lines += table("count", rows["c"]) + [""] + table("rows", rows["r"]) + [""]
    sel = [m for _, n, m in rows["r"] if n <= ITEMS // 100]
    lines.append("Selective filters (≤ 1%%): worst Accord rows query %.1f ms (target < 100 ms); Accord ÷ psql "
                 "(target ≤ 1.5×): count %s; rows %s." % (max(m[0] for m in sel), ratios(rows["c"], 0),
                                                          ratios(rows["r"], 0)))
    if BEFORE:
        lines.append("Before: count %s; rows %s." % (ratios(rows["c"], 1), ratios(rows["r"], 1)))
    for k, (ping, get) in enumerate(base):
        lines.append("Without the query (%s): GET /api/v1/server/ping %.2f ms; GET …/query/bench-rows (authentication "
                     "and the exec's three lookups) %.2f ms." % ("before" if k else "accord", ping, get))
    lines.append("")
    text = "\n".join(lines)
    print(text)
    if RECORD:
        with open(os.path.join(ROOT, "bench", "RESULTS.md"), "a") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    sys.exit(main())
