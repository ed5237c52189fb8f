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
machine weighs on all alike.

Inside PostgreSQL (STORE=postgresql): the cluster runs pg_stat_statements (with
track_planning); around each query's timed turns its counters give the mean planning and
execution time of the statement Accord runs (the query's text under the sandbox role on the
security-barrier view) and of psql's prepared statement on the plain table, i.e. what the
translator and the sandbox decide, without HTTP, authentication or round trips; and the
server time of the exec's other statements (authentication, lookups, the sandbox's BEGIN,
settings and ROLLBACK).  With BEFORE, that build serves its own database of the same
cluster (its own migrations: a later build's views would otherwise serve both), holding the
same items copied from Accord's (the key index, which PostgreSQL's queries do not read,
is not copied)."""
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
LOAD_CLIENTS = int(os.environ.get("LOAD_CLIENTS", "4"))
STORE = os.environ.get("STORE", "sqlite")
LOAD = os.environ.get("LOAD", "bulk")  # bulk, single (one item per request) or both (single on a second server)
BULK_ITEMS = int(os.environ.get("BULK_ITEMS", "1000"))  # items per bulk request (the server's default limit)
QUERIES = os.environ.get("QUERIES", "1") != "0"  # QUERIES=0: the load only
BEFORE = os.environ.get("BEFORE")  # another accord binary, served alongside on the same database
RECORD = os.environ.get("RECORD", "1") != "0"  # RECORD=0: print only, do not append to RESULTS.md
PG_BIN = "/usr/lib/postgresql/15/bin"
KEY = "YmVuY2gtaW52ZW50b3J5LWFkbWluLWtleS0wMTIzNDU2Nzg5"
COUNT_Q = "select count(*) from inventory_data where item_data @> ?::jsonb"
ROWS_Q = "select cast(to_json(item_data) as varchar) from inventory_data where item_data @> ?::jsonb"
PGSS = ("select d.datname, regexp_replace(s.query, '\\s+', ' ', 'g'), s.calls, s.total_exec_time, s.plans,"
        " s.total_plan_time, s.min_exec_time, s.min_plan_time from pg_stat_statements s"
        " join pg_database d on d.oid = s.dbid where s.toplevel")

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

    def __init__(self, work, db=None, binary=None, name="accord"):
        self.port = free_port()
        data = os.path.join(work, name)
        self.data = data
        self.dbname = db.rsplit("/", 1)[1] if db else None
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

    def cpu_s(self):
        """The server's CPU time so far (user + system, all its threads), from /proc."""
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def load(self, records, bulk=True):
        """Loads the records through the API: bulk requests of BULK_ITEMS items (POST …/data, one
        transaction each), or one item per request (POST …/data/{path}); LOAD_CLIENTS keep-alive
        connections.  Returns the server's CPU seconds spent."""
        def send(h, path, body):
            h.request("POST", path, body=body, headers={"Authorization": KEY, "Content-Type": "application/json"})
            r = h.getresponse()
            data = r.read()
            assert r.status == 200, data[:500]

        def put(chunk):  # one keep-alive connection per client, as little Python per request as can be
            h = http.client.HTTPConnection("127.0.0.1", self.port)
            prefix = "/api/v1/org/Default/inventory/hosts/data"
            if bulk:
                for i in range(0, len(chunk), BULK_ITEMS):
                    send(h, prefix, json_text([{"path": p, "data": d} for p, d in chunk[i:i + BULK_ITEMS]]))
            else:
                for path, data in chunk:
                    send(h, prefix + "/" + path, json_text(data))
            h.close()
        chunks = [records[i::LOAD_CLIENTS] for i in range(LOAD_CLIENTS)]
        cpu = self.cpu_s()
        with ThreadPoolExecutor(LOAD_CLIENTS) as ex:
            list(ex.map(put, chunks))
        return self.cpu_s() - cpu

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
        for attempt in (0, 1):  # a connection the server closed while idle is opened again, untimed
            t = time.perf_counter()
            try:
                self.http.request(method, path, body=body, headers=headers)
                r = self.http.getresponse()
                data = r.read()
                break
            except (ConnectionError, http.client.HTTPException):
                if attempt:
                    raise
                self.http.close()
                self.http = http.client.HTTPConnection("127.0.0.1", self.port)
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
                 "-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=256MB"
                 " -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on"
                 % (self.port, self.dir), "start"])
        self.psql("create extension pg_stat_statements")

    def sh(self, cmd, **kw):
        return subprocess.run(self.as_user + cmd, check=True, capture_output=True, text=True, **kw)

    def psql(self, sql=None, script=None, db="postgres", rows=False):
        """psql's output (rows: unaligned, tab-separated, no header)."""
        cmd = ["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", db, "-v",
               "ON_ERROR_STOP=1"] + (["-A", "-t", "-F", "\t"] if rows else [])
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

    def copy_items(self, src, dst, work):
        """The items of inventory hosts of Accord's database src into that of dst (COPY)."""
        path = os.path.join(work, "copy.tsv")
        inv = "(select rid from inventories where name = 'hosts')"
        self.psql("\\copy (select item_path, item_data from inventory_items where inventory = %s) to '%s'"
                  % (inv, path), db=src)
        script = os.path.join(work, "copy.sql")
        with open(script, "w") as f:
            f.write("create temp table t (p text, d jsonb);\n\\copy t from '%s'\n"
                    "insert into inventory_items (inventory, item_path, item_data) select %s, p, d from t;\n"
                    % (path, inv))
        self.psql(script=script, db=dst)

    def statements(self):
        """pg_stat_statements since its last reset: {(database, kind): [calls, exec ms, plans, plan ms,
        min exec ms, min plan ms]}, kind c or r for the benchmark's two queries (Accord's or psql's),
        other for the rest (its minimums are not used)."""
        out = {}
        for line in self.psql(PGSS, rows=True).splitlines():
            db, query, calls, exec_ms, plans, plan_ms, min_exec, min_plan = line.split("\t")
            kind = "other"
            if "from inventory_data where item_data @>" in query:
                kind = "c" if "count(*)" in query else "r"
            acc = out.setdefault((db, kind), [0, 0.0, 0, 0.0, float("inf"), float("inf")])
            for i, v in enumerate((int(calls), float(exec_ms), int(plans), float(plan_ms))):
                acc[i] += v
            acc[4], acc[5] = min(acc[4], float(min_exec)), min(acc[5], float(min_plan))
        return out

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


def measure(servers, session, pg, q, flt):
    """Medians over REPEAT turns of: each server's exec (servers: after, then before if any;
    who goes first alternates), psql's \\timing and the psql session's wall time; and, from
    pg_stat_statements over the same turns (with STORE=postgresql), per server then psql:
    (mean planning ms, mean execution ms, least planning ms, least execution ms) of the query's
    statement, and per server the server time of its other statements per exec."""
    body = json_text(flt).encode()
    name = "bench-count" if q == "c" else "bench-rows"
    for a in servers:  # once untimed: connections, caches
        a.exec_ms(name, body)
    session.execute(q, flt)
    times = [[] for _ in range(len(servers) + 2)]
    if STORE == "postgresql":
        pg.psql("select pg_stat_statements_reset()")
    for i in range(REPEAT):
        for k in (range(len(servers)) if i % 2 == 0 else reversed(range(len(servers)))):  # first in turn
            times[k].append(servers[k].exec_ms(name, body))
        timing, wall = session.execute(q, flt)
        times[-2].append(timing)
        times[-1].append(wall)
    inside = None
    if STORE == "postgresql":
        stats = pg.statements()

        def means(db):
            calls, exec_ms, plans, plan_ms, min_exec, min_plan = stats[(db, q)]
            assert calls == REPEAT, (db, q, calls)
            return plan_ms / plans if plans else 0.0, exec_ms / calls, min_plan if plans else 0.0, min_exec

        inside = [means(a.dbname) for a in servers] + [means("postgres")]
        inside += [sum(stats.get((a.dbname, "other"), [0] * 4)[i] for i in (1, 3)) / REPEAT for a in servers]
    return [statistics.median(t) for t in times], inside


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
    os.chmod(work, 0o711)  # a root server's runners (nobody) pass through it to their folders
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
        cpu = accord.load(records, bulk=LOAD != "single")
        accord_load = [(LOAD != "single", time.perf_counter() - t, cpu)]
        if LOAD == "both":  # one item per request, on a server of its own (its own data folder or database)
            if db:
                pg.psql("create database accordinv_single")
            single = Accord(work, db + "_single" if db else None, name="single")
            servers.append(single)
            single.create()
            t = time.perf_counter()
            cpu = single.load(records, bulk=False)
            accord_load.append((False, time.perf_counter() - t, cpu))
            single.stop()
            servers.remove(single)
        if db:  # as for the plain table below: statistics before timing (autovacuum would, later)
            pg.psql("vacuum analyze inventory_items", db="accordinv")
        size = [db_size(accord)] if not db else None
        accord.save("bench-count", COUNT_Q)
        accord.save("bench-rows", ROWS_Q)
        before_load = None
        if BEFORE and not db:  # SQLite: its own data folder, the same items through the API
            before = Accord(work, binary=BEFORE, name="before")
            servers.append(before)
            before.create()
            t = time.perf_counter()
            cpu = before.load(records, bulk=LOAD != "single")
            before_load = (LOAD != "single", time.perf_counter() - t, cpu)
            size.append(db_size(before))
            before.save("bench-count", COUNT_Q)
            before.save("bench-rows", ROWS_Q)
        elif BEFORE:
            pg.psql("create database accordinv_before")
            before = Accord(work, db + "_before", binary=BEFORE, name="before")
            servers.append(before)
            before.create()
            pg.copy_items("accordinv", "accordinv_before", work)
            pg.psql("vacuum analyze inventory_items", db="accordinv_before")
            before.save("bench-count", COUNT_Q)
            before.save("bench-rows", ROWS_Q)
        t = time.perf_counter()
        pg.load(records, work)
        pg_load = time.perf_counter() - t
        if not QUERIES:
            report_load(accord_load, before_load, pg_load, size)
            return
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
                rows[q].append((label, n) + measure(servers, session, pg, q, flt))
        load.append(os.getloadavg()[0])
        report(rows, base, (accord_load, before_load), pg_load, load, size)
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
    for label, n, m, _ in rows:
        after, timing, wall = m[0], m[-2], m[-1]
        mid = " %.2f | %.2f× |" % (m[1], after / m[1]) if before else ""
        lines.append("| %s | %d | %.2f |%s %.2f | %.2f | %.1f× | %.1f× |" % (label, n, after, mid, timing, wall,
                                                                           after / timing, after / wall))
    return lines


def inside_table(title, rows):
    """pg_stat_statements: the query's statement, Accord's (and before's) against psql's: means,
    and the ratio of the least planning + least execution times (less sensitive to a busy machine)."""
    before = len(rows[0][2]) == 4
    head = "| %s | matches | accord plan ms | accord exec ms |%s psql plan ms | psql exec ms | accord ÷ psql " \
           "plan + exec | the same, least times |%s" % (
               title, " before plan + exec ms |" if before else "",
               " before ÷ psql plan + exec | the same, least times |" if before else "")
    lines = [head, "|" + "---|" * head.count(" |")]
    for label, n, _, s in rows:
        a, p = s[0], s[len(s) // 2]
        mid = " %.3f |" % sum(s[1][:2]) if before else ""
        tail = " %.2f× | %.2f× |" % (ratio(s[1], p), ratio(s[1], p, True)) if before else ""
        lines.append("| %s | %d | %.3f | %.3f |%s %.3f | %.3f | %.2f× | %.2f× |%s" % (
            label, n, a[0], a[1], mid, p[0], p[1], ratio(a, p), ratio(a, p, True), tail))
    return lines


def ratio(a, p, least=False):
    """Planning + execution of a ÷ that of p (means, or least times)."""
    k = 2 if least else 0
    return (a[k] + a[k + 1]) / (p[k] + p[k + 1])


def inside_ratios(rows, k):
    """min–max over the selective filters of server k's plan + execution ÷ psql's, means and least."""
    sel = [s for _, n, _, s in rows if n <= ITEMS // 100]
    r = [ratio(s[k], s[len(s) // 2]) for s in sel]
    m = [ratio(s[k], s[len(s) // 2], True) for s in sel]
    return "%.2f–%.2f× (least times %.2f–%.2f×)" % (min(r), max(r), min(m), max(m))


def others(rows, k):
    """min–max over all queries of server k's other statements' server time per exec."""
    v = [s[len(s) // 2 + 1 + k] for q in ("c", "r") for _, _, _, s in rows[q]]
    return "%.3f–%.3f ms" % (min(v), max(v))


def ratios(rows, k):
    """min–max over the selective filters (≤ 1% of the items) of server k's time ÷ \\timing
    and ÷ the psql session's."""
    sel = [m for _, n, m, _ in rows if n <= ITEMS // 100]
    a = [m[k] / m[-2] for m in sel]
    b = [m[k] / m[-1] for m in sel]
    return "%.1f–%.1f× \\timing, %.1f–%.1f× session" % (min(a), max(a), min(b), max(b))


def db_size(accord):
    """(database bytes, bytes of the item index tables, postings rows or None) of a SQLite store
    after the load, as its latest snapshot holds them (WAL included), from SQLite's dbstat."""
    import sqlite3
    con = sqlite3.connect("file:%s?mode=ro" % os.path.join(accord.data, "accord.db"), uri=True)
    try:
        pages = dict(con.execute("select name, sum(pgsize) from dbstat group by name").fetchall())
        index = sum(v for k, v in pages.items() if k.startswith(("inventory_postings", "inventory_item_keys")))
        cols = [r[1] for r in con.execute("pragma table_info(inventory_postings)")]
        if "items" in cols:  # blocks (migration 046): a posting for the first item, one for each gap's last byte
            n = sum(1 + sum(b < 0x80 for b in bytes(raw)) for raw, in con.execute("select items from inventory_postings"))
        elif cols:  # a row a posting (041)
            n = con.execute("select count(*) from inventory_postings").fetchone()[0]
        else:  # a build before the postings
            n = None
    finally:
        con.close()
    return sum(pages.values()), index, n


def load_text(accord_load, before_load, pg_load, size):
    """The load's sentence: each Accord load (bulk or one item per request) with the server's CPU."""
    def one(bulk, secs, cpu):
        how = ("%d items per request, POST …/data" % BULK_ITEMS) if bulk else "one item per request"
        return "%.1f s (%s; server CPU %.1f s, %.3f ms per item)" % (secs, how, cpu, cpu * 1000 / ITEMS)
    return ("Load: Accord %s through the API (%d client(s), keep-alive)%s, PostgreSQL %.1f s (COPY + GIN build)."
            % (", then ".join(one(*x) for x in accord_load), LOAD_CLIENTS,
               ", before %s" % one(*before_load) if before_load else "", pg_load)
            + "".join(" Accord%s's SQLite database after the load: %.1f MB, of which the containment index %.1f MB"
                      "%s." % (" before" if k else "", sz[0] / 1e6, sz[1] / 1e6,
                               " (%d postings)" % sz[2] if sz[2] is not None else " (inventory_item_keys)")
                      for k, sz in enumerate(size or [])))


def report_load(accord_load, before_load, pg_load, size):
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    text = "\n".join(["### bench/inventory (load only) — %s — %s" % (now, commit),
                      "Machine: %s; load average %.2f. %d items (host records, ~600 B each), Accord on %s." % (
                          machine(), os.getloadavg()[0], ITEMS, STORE),
                      load_text(accord_load, before_load, pg_load, size), ""])
    print(text)
    if RECORD:
        with open(os.path.join(ROOT, "bench", "RESULTS.md"), "a") as f:
            f.write("\n" + text)


def report(rows, base, accord_load, pg_load, load, size=None):
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
                 "; accord before: `%s` on its own %s, the same items, timed in the same turns" % (
                     BEFORE, "database of the same PostgreSQL" if STORE == "postgresql" else "data folder (loaded "
                     "through the API as well)") if BEFORE else "",
                 "; Accord's database is another database of the same PostgreSQL" if STORE == "postgresql" else ""),
             load_text(accord_load[0], accord_load[1], pg_load, size),
             ""]
    lines += table("count", rows["c"]) + [""] + table("rows", rows["r"]) + [""]
    sel = [m for _, n, m, _ in rows["r"] if n <= ITEMS // 100]
    lines.append("Selective filters (≤ 1%%): worst Accord rows query %.1f ms (target < 100 ms); Accord ÷ psql "
                 "(target ≤ 1.5×): count %s; rows %s." % (max(m[0] for m in sel), ratios(rows["c"], 0),
                                                          ratios(rows["r"], 0)))
    if BEFORE:
        lines.append("Before: count %s; rows %s." % (ratios(rows["c"], 1), ratios(rows["r"], 1)))
    for k, (ping, get) in enumerate(base):
        lines.append("Without the query (%s): GET /api/v1/server/ping %.2f ms; GET …/query/bench-rows (authentication "
                     "and the exec's lookups of organization, inventory and query) %.2f ms." % (
                         "before" if k else "accord", ping, get))
    if STORE == "postgresql":
        lines += ["", "Inside PostgreSQL (pg_stat_statements, track_planning, reset before each query's turns; mean "
                  "over the same %d turns, and the least times): the statement Accord runs (its text with $1, as the "
                  "sandbox role, on the security-barrier view) and psql's prepared statement on the plain table "
                  "(custom plans); planning and execution, not parsing (Accord's text is parsed at each exec, psql's "
                  "once). Execution includes sending the rows: a backend whose client reads them more slowly waits "
                  "for it (Accord reads row by row and decodes each)." % REPEAT, ""]
        lines += inside_table("count", rows["c"]) + [""] + inside_table("rows", rows["r"]) + [""]
        n = len(base)
        lines.append("Selective filters (≤ 1%%), inside PostgreSQL, accord ÷ psql (plan + exec): count %s; rows %s."
                     % (inside_ratios(rows["c"], 0), inside_ratios(rows["r"], 0)))
        if BEFORE:
            lines.append("Before: count %s; rows %s." % (inside_ratios(rows["c"], 1), inside_ratios(rows["r"], 1)))
        lines.append("Server time of an exec's other statements (authentication, lookups, the sandbox's BEGIN, "
                     "settings and ROLLBACK; plan + exec): accord %s%s." % (
                         others(rows, 0), "; before %s" % others(rows, 1) if n > 1 else ""))
    lines.append("")
    text = "\n".join(lines)
    print(text)
    if RECORD:
        with open(os.path.join(ROOT, "bench", "RESULTS.md"), "a") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    sys.exit(main())
