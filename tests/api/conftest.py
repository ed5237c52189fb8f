"""Black-box test harness: starts the real `accord serve` on a free port with a fresh
data folder, as a user would, and speaks HTTP to it.

Fixtures
  server      a running server for the whole test session (shared; tests create their
              own uniquely named orgs/users so they don't interfere)
  fresh_server  a factory for a private server (restart, shutdown and bootstrap tests);
              admin's password (ADMIN_PASSWORD) is set on `server`, and on a fresh one
              only when asked (admin_password=True)
  admin       a Client authenticated as admin (API key)
  new_user    a factory: new_user(roles=[]) -> Client for a fresh user with its own key
The binary is $ACCORD_BIN (make test sets it to the ASan build), else build/accord.
With $ACCORD_TEST_DB set to the URL of a PostgreSQL cluster whose user may create databases
(scripts/pg-cluster start; `make apitest-pg` does it all), each server runs on its own
database there (`--db`), one per data folder (named in the folder's .test-db-name), dropped
with the folder.  A server's database starts as a copy of a template migrated once per
cluster and schema (`accord migrate`), so that each fresh server does not run every
migration again; its first start still bootstraps it as a new installation.  On SQLite likewise: a server
in a folder of its own starts on a copy of an accord.db migrated once (sqlite_template()).

Backends: every test runs on SQLite (`make apitest`).  On PostgreSQL (`make apitest-pg`) a
test marked `@backend_neutral("why")` (or every test of a module whose `pytestmark` holds
one) is deselected — reported as deselected, with their count — because the database takes
no part in its subject: a task or tool run inside the runner or by `accord run` (Ansible,
Docker, script steps, the http/smtp/slack/github/git/ldap tasks), HTTP parsing, a
confinement rule, a login refused against a local stand-in, a setting refused at start; the
store code it passes through (a key lookup, a process row, its log, events and attachments,
a secret) is proven on PostgreSQL by the tests that are not neutral.  Never neutral: a test
whose subject is stored or looked up for it — a store-backed list, filter, count or view
(Concord's ansible views, inventories, JSON stores, audit, process lists), users, teams or
roles a login makes or links, policies' resolution, migrations, locks, queues, recovery,
restarts on the same data, timers, notifications, several nodes — nor one that looks into
the database (db_util, psql) or asks which backend it is on.  A module that mixes both marks
tests, not itself.  Each task/tool family keeps at least one end-to-end test on both
backends.  test_backend_rule.py holds these to the code (the forbidden patterns, the
families, a reason for every mark); ACCORD_TEST_ALL_BACKENDS=1 runs every test on
PostgreSQL too.  When scripts/run-suites runs both suites side by side, the neutral tests of
NEUTRAL_ON_POSTGRESQL's modules run on PostgreSQL instead of SQLite (to even the suites'
walls); either suite run alone is as above.
"""
import atexit
import base64
import fcntl
import glob
import hashlib
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.parse
import uuid

import pytest
import requests

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("ACCORD_BIN") or os.path.join(ROOT, "build", "accord")
ADMIN_KEY = base64.b64encode(b"accord-test-admin-key-0123456789").decode().rstrip("=")
ADMIN_PASSWORD = "Admin-pass-123"
TEST_DB = os.environ.get("ACCORD_TEST_DB")
LOCAL_REPO_DIRS = tempfile.gettempdir()  # --repo-local-dirs of the test servers
# Tests of what only SQLite has (accord backup / restore of its file): skipped on PostgreSQL,
# each saying why beside it.  A test that looks into the database does it on either backend
# (db_util.py).
sqlite_only = pytest.mark.skipif(bool(TEST_DB), reason="SQLite's database file only")


def backend_neutral(reason):
    """The mark of a test that proves nothing about the database backend (the module
    docstring's rule): run on SQLite only, deselected on PostgreSQL.  reason says why."""
    return pytest.mark.backend_neutral(reason)


# The modules whose neutral tests the PostgreSQL suite runs instead of the SQLite one when
# scripts/run-suites runs the two side by side (it sets $ACCORD_NEUTRAL_SPLIT): the neutral
# tests were ~620 s of the SQLite suite's ~1,500 s of test wall, and it ended 60–150 s after
# the PostgreSQL one (bench/RESULTS.md "apitest's critical path").  A suite run alone keeps
# every neutral test on SQLite.
NEUTRAL_ON_POSTGRESQL = ("test_ansible_params.py",)


def _neutral_elsewhere(item):
    """Whether this run leaves the backend_neutral item to the other backend's suite."""
    if os.environ.get("ACCORD_TEST_ALL_BACKENDS"):
        return False
    on_pg = bool(os.environ.get("ACCORD_NEUTRAL_SPLIT")) and item.path.name in NEUTRAL_ON_POSTGRESQL
    return on_pg != bool(TEST_DB)


def pytest_configure(config):
    config.addinivalue_line("markers", "backend_neutral(reason): runs on one backend only (tests/api/conftest.py)")
    config._backend_neutral = []


def pytest_collection_modifyitems(config, items):
    longest_first(items)
    neutral = [i for i in items if i.get_closest_marker("backend_neutral") and _neutral_elsewhere(i)]
    if neutral:
        config.hook.pytest_deselected(items=neutral)
        gone = set(neutral)
        items[:] = [i for i in items if i not in gone]
        config._backend_neutral = [i.nodeid for i in neutral]
    if hasattr(config, "workeroutput"):  # a pytest-xdist worker: its controller reports them
        config.workeroutput["backend_neutral"] = config._backend_neutral


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist's controller collects nothing itself: the deselected tests of the first
    worker that ends (each collects them all) are counted as its own."""
    ids = getattr(node, "workeroutput", {}).get("backend_neutral")
    if ids and not node.config._backend_neutral:
        node.config._backend_neutral = ids
        node.config.hook.pytest_deselected(items=ids)


def pytest_terminal_summary(terminalreporter, config):
    if config._backend_neutral and not hasattr(config, "workeroutput"):
        here, there = ("PostgreSQL", "SQLite") if TEST_DB else ("SQLite", "PostgreSQL")
        terminalreporter.write_line("backend_neutral: %d tests deselected on %s, run by the %s suite "
                                    "(tests/api/conftest.py)" % (len(config._backend_neutral), here, there))


class _Session:
    """One psql session on $ACCORD_TEST_DB for the harness's own statements (CREATE and DROP
    DATABASE, lookups), kept for the pytest process: a psql per statement cost ~35 ms of
    CPU for psql's start and a backend's connection each, some 900 times in apitest-pg
    (process accounting of a whole `make test`, bench/RESULTS.md)."""

    def __init__(self, url):
        self.url = url
        self.proc = None
        self.n = 0
        self.lock = threading.Lock()

    def run(self, sql):
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self.proc = subprocess.Popen(["psql", "-X", "-qtA", "-v", "VERBOSITY=terse", "-d", self.url],
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.STDOUT, text=True)
                self.proc.stdin.write("SET client_min_messages = warning;\n")
            self.n += 1
            end = "accord-harness-end-%d" % self.n
            self.proc.stdin.write("%s;\n\\echo %s\n" % (sql.rstrip().rstrip(";"), end))
            self.proc.stdin.flush()
            out = []
            for line in self.proc.stdout:
                if line.rstrip("\n") == end:
                    break
                out.append(line.rstrip("\n"))
            else:
                self.proc = None
                raise RuntimeError("psql ended during %r: %s" % (sql, "\n".join(out)))
            if any("ERROR:" in line for line in out):
                raise subprocess.CalledProcessError(1, ["psql", "-c", sql], "\n".join(out))
            return "\n".join(out).strip()


_session = None


def _psql(url, sql):
    """sql's output (-tA) on url: through the harness's session when url is $ACCORD_TEST_DB."""
    global _session
    if url == TEST_DB:
        if _session is None:
            _session = _Session(url)
        return _session.run(sql)
    return subprocess.run(["psql", "-X", "-qtA", "-d", url, "-c", sql], check=True, capture_output=True,
                          text=True).stdout.strip()


_template = None


def pg_template():
    """The name of a database of the cluster $ACCORD_TEST_DB holding the schema of this
    tree (src/store/schema), made once per cluster by `accord migrate` under a file lock
    (the pytest-xdist workers share it), never connected to afterwards so that CREATE
    DATABASE … TEMPLATE can copy it."""
    global _template
    if _template:
        return _template
    digest = hashlib.sha256(BIN.encode())
    for path in sorted(glob.glob(os.path.join(ROOT, "src", "store", "schema", "*.sql"))):
        with open(path, "rb") as f:
            digest.update(os.path.basename(path).encode() + f.read())
    name = "tpl_" + digest.hexdigest()[:16]
    lock_path = os.path.join(tempfile.gettempdir(), "accord-%s.lock" % hashlib.sha256(TEST_DB.encode()).hexdigest()[:16])
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _psql(TEST_DB, "SELECT 1 FROM pg_database WHERE datname = '%s'" % name):
            building = name + "_new"
            _psql(TEST_DB, "DROP DATABASE IF EXISTS %s" % building)
            _psql(TEST_DB, "CREATE DATABASE " + building)
            subprocess.run([BIN, "migrate", "--db", db_url(building)], check=True, capture_output=True)
            _psql(TEST_DB, "ALTER DATABASE %s RENAME TO %s" % (building, name))
    _template = name
    return name


def binary_env():
    """This process's environment for running the accord binary, with scripts/run-suites'
    sanitizer_tunables() (LeakSanitizer's view of dlopen'd TLS) when it is not there."""
    env = dict(os.environ)
    if "optional_static_tls" not in env.get("GLIBC_TUNABLES", ""):
        env["GLIBC_TUNABLES"] = ":".join(
            x for x in (env.get("GLIBC_TUNABLES", ""), "glibc.rtld.optional_static_tls=0") if x)
    return env


_sqlite_template = None


def sqlite_template():
    """The path of an accord.db holding the schema of this tree, made once per pytest process
    by `accord migrate` (as pg_template() on PostgreSQL) and copied into the new folder of each
    server the harness makes, so that each does not run every migration again (~0.08 s of
    CPU under ASan, some 250 servers in apitest and browser); its first start still
    bootstraps it as a new installation.  Removed when the pytest process ends."""
    global _sqlite_template
    if _sqlite_template is None:
        folder = tempfile.mkdtemp(prefix="accord-schema-")
        atexit.register(shutil.rmtree, folder, True)
        subprocess.run([BIN, "migrate", "--data", folder], check=True, capture_output=True, env=binary_env())
        _sqlite_template = os.path.join(folder, "accord.db")
    return _sqlite_template


def db_url(name):
    """The URL of database name in the cluster of $ACCORD_TEST_DB."""
    parts = urllib.parse.urlsplit(TEST_DB)
    # (urlunsplit would drop the empty host of postgresql:///db?host=/socket/folder)
    return "%s://%s/%s%s" % (parts.scheme, parts.netloc, name, "?" + parts.query if parts.query else "")


def pg_url(data_dir, migrated=False):
    """The database of the server on data_dir in the cluster $ACCORD_TEST_DB (created: empty,
    or with migrated a copy of pg_template()).  Its name is kept in the folder, so that a
    folder moved between two starts keeps it."""
    marker = os.path.join(data_dir, ".test-db-name")
    if os.path.exists(marker):
        with open(marker) as f:
            name = f.read().strip()
        if not _psql(TEST_DB, "SELECT 1 FROM pg_database WHERE datname = '%s'" % name):
            _psql(TEST_DB, "CREATE DATABASE " + name)
        return db_url(name), name
    name = "t_" + uuid.uuid4().hex[:16]
    # FILE_COPY: a copy of the template's files instead of PostgreSQL 15's default WAL_LOG,
    # which writes the whole template (~10 MB) through the WAL again for each server: half
    # the cluster's CPU for a create and a drop, a third of their wall (bench/RESULTS.md).
    _psql(TEST_DB, "CREATE DATABASE %s%s STRATEGY FILE_COPY"
          % (name, " TEMPLATE " + pg_template() if migrated else ""))
    os.makedirs(data_dir, mode=0o700, exist_ok=True)
    with open(marker, "w") as f:
        f.write(name)
    return db_url(name), name


class _Dropper:
    """Drops the databases of stopped servers in the background, on a psql session of its
    own, so that the next test does not wait for it: a DROP DATABASE waits for a checkpoint
    of the whole cluster (70-300 ms of wall under the suites' load, bench/RESULTS.md).  The
    pytest process waits at its exit until every drop asked for is done."""

    def __init__(self):
        self.session = _Session(TEST_DB)
        self.names = queue.Queue()
        threading.Thread(target=self.run, daemon=True).start()
        atexit.register(self.names.join)

    def run(self):
        while True:
            name = self.names.get()
            try:
                self.session.run("DROP DATABASE IF EXISTS %s WITH (FORCE)" % name)
            except (subprocess.CalledProcessError, RuntimeError):
                pass  # fails no test: the cluster is thrown away at the end
            finally:
                self.names.task_done()


_dropper = None
_dropper_lock = threading.Lock()


def pg_drop(name):
    """The database of a server that has stopped, dropped in the background (_Dropper)."""
    global _dropper
    with _dropper_lock:
        if _dropper is None:
            _dropper = _Dropper()
    _dropper.names.put(name)


def passable(path):
    """As root, a server's runners run as nobody and must pass through every folder above
    their working directory (docs/security.md "Runners never run as root"); a server that
    finds one it cannot pass refuses to start.  The temporary folders tests make (pytest's
    tmp_path, mkdtemp: 0700) are opened for passing (o+x), never for listing."""
    if os.geteuid() != 0:
        return
    p = os.path.dirname(os.path.abspath(path))
    while p not in ("/", ""):
        if p.startswith("/tmp/") or p.startswith("/dev/shm/"):
            try:
                st = os.stat(p)
                if st.st_uid == 0 and not st.st_mode & 0o001:
                    os.chmod(p, (st.st_mode & 0o7777) | 0o011)
            except FileNotFoundError:
                pass
        p = os.path.dirname(p)


# What fails a test server's cleanup when its log holds it: a sanitizer's report of the
# server, or the server's line about a runner that a sanitizer stopped (queue/zygote.c: the
# report itself is in that process's log, and may come after the process's result).
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "a sanitizer stopped it")


class Server:
    """One `accord serve` process with its own data folder."""

    def __init__(self, data_dir=None, env=None, args=(), admin_password=False):
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="accord-test-")
        self.own_dir = data_dir is None
        self.env = binary_env()
        self.env["ACCORD_ADMIN_API_KEY"] = ADMIN_KEY
        # admin's password (Basic, the console's login) only where a test logs in with it:
        # its Argon2id hash at each start was a fifth of a bare server's start and stop.
        if admin_password:
            self.env["ACCORD_ADMIN_PASSWORD"] = ADMIN_PASSWORD
        # No RSA key pairs made ahead of demand: each 4096-bit pair costs ~1 s of CPU, and
        # every server started here made two in the background — a third of the API suites'
        # CPU (perf).  A test that creates a key pair waits for it; the pool's own tests
        # (test_secrets_server.py) ask for it.
        self.env.setdefault("ACCORD_KEYPAIR_POOL", "0")
        # The RSA pairs a test does make are 2048-bit (--secret-key-bits; 0.1–0.5 s of CPU
        # against 1–4.4 s for the default 4096): test_secrets_server.py proves the default
        # and the option.
        self.env.setdefault("ACCORD_SECRET_KEY_BITS", "2048")
        self.env.update(env or {})
        for k in [k for k, v in self.env.items() if v is None]:  # None: not set at all
            del self.env[k]
        self.args = list(args)
        self.proc = None
        self.url = None
        self.log_path = None
        self.db_name = None
        # The tests' git repositories are folders in the temporary folder: local
        # repositories are refused unless the operator allows their folder.
        if not any(a.startswith("--repo-local-dirs") for a in self.args) and "ACCORD_REPO_LOCAL_DIRS" not in self.env:
            self.args += ["--repo-local-dirs", LOCAL_REPO_DIRS]
        own_db = not any(a == "--db" or a.startswith("--db=") for a in self.args)
        if TEST_DB and own_db:
            url, self.db_name = pg_url(self.data_dir, migrated=True)
            self.args += ["--db", url]
        elif own_db and self.own_dir and "ACCORD_DB" not in self.env:
            shutil.copy(sqlite_template(), os.path.join(self.data_dir, "accord.db"))

    def start(self, timeout=20):
        passable(self.data_dir)
        for i, a in enumerate(self.args):
            if a == "--work-dir" and i + 1 < len(self.args):
                passable(self.args[i + 1])
        self.log_path = os.path.join(tempfile.gettempdir(), "accord-%s.log" % uuid.uuid4().hex[:8])
        self.log = open(self.log_path, "w+")
        cmd = [BIN, "serve", "--listen", "127.0.0.1:0", "--data", self.data_dir] + self.args
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, env=self.env)
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = re.search(r"msg=listening .*port=(\d+)", self.read_log())
            if m:
                self.url = "http://127.0.0.1:%s" % m.group(1)
                return self
            if self.proc.poll() is not None:
                raise RuntimeError("accord serve exited %s:\n%s" % (self.proc.returncode, self.read_log()))
            time.sleep(0.05)
        raise RuntimeError("accord serve did not start:\n" + self.read_log())

    def read_log(self):
        with open(self.log_path) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM, timeout=20):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        rc = self.proc.returncode if self.proc else None
        if self.proc:
            self.log.close()
        return rc

    def cleanup(self):
        self.stop()
        log = self.read_log() if self.log_path else ""
        if self.log_path:
            os.unlink(self.log_path)
        if self.own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            if self.db_name:
                pg_drop(self.db_name)
        # Sanitizer reports end up in the log: fail loudly instead of passing silently,
        # showing the report itself.
        for marker in SANITIZER_MARKERS:
            at = log.find(marker)
            assert at < 0, "sanitizer report in the server log:\n" + log[max(0, at - 2000):at + 6000]


class Client:
    """requests with a base URL and an Authorization header.  The session ignores the
    environment (trust_env): requests otherwise looks for proxies and a ~/.netrc at every
    request, a quarter of its ~1 ms of client CPU a call (the suites make tens of thousands;
    no test server is reached through a proxy)."""

    def __init__(self, url, auth=None, username=None, user_id=None, key=None):
        self.url = url
        self.s = requests.Session()
        self.s.trust_env = False
        if auth:
            self.s.headers["Authorization"] = auth
        self.username = username
        self.user_id = user_id
        self.key = key

    def req(self, method, path, **kw):
        kw.setdefault("timeout", 30)
        return self.s.request(method, self.url + path, **kw)

    def get(self, path, **kw):
        return self.req("GET", path, **kw)

    def post(self, path, **kw):
        return self.req("POST", path, **kw)

    def put(self, path, **kw):
        return self.req("PUT", path, **kw)

    def delete(self, path, **kw):
        return self.req("DELETE", path, **kw)


def unique(prefix="t"):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


@pytest.fixture(scope="session")
def server():
    srv = Server(admin_password=True).start()
    yield srv
    srv.cleanup()


@pytest.fixture
def fresh_server():
    made = []

    def make(**kw):
        srv = Server(**kw)
        made.append(srv)
        return srv

    yield make
    for srv in made:
        srv.cleanup()


@pytest.fixture
def anon(server):
    return Client(server.url)


@pytest.fixture
def admin(server):
    return Client(server.url, ADMIN_KEY, "admin", "230c5c9c-d9a7-11e6-bcfd-bb681c07b26c", ADMIN_KEY)


def make_user(admin, roles=None, password=None, name=None):
    """A new LOCAL user of admin's server: a Client authenticated with the user's own API key."""
    username = name or unique("user")
    body = {"username": username, "type": "LOCAL"}
    if roles:
        body["roles"] = roles
    if password:
        body["password"] = password
    r = admin.post("/api/v1/user", json=body)
    assert r.status_code == 200, r.text
    user_id = r.json()["id"]
    r = admin.post("/api/v1/apikey", json={"username": username})
    assert r.status_code == 200, r.text
    key = r.json()["key"]
    return Client(admin.url, key, username, user_id, key)


@pytest.fixture
def new_user(server, admin):
    """new_user(roles=None, password=None) -> Client authenticated with the user's own API key."""

    def make(roles=None, password=None, name=None):
        return make_user(admin, roles, password, name)

    return make


# ---- the order of the files ---------------------------------------------------------------------

# The files that take longest, run first.  pytest-xdist's --dist loadfile hands each worker
# the next whole file in collection order (when 2 or fewer of its tests are left); in
# alphabetical order the last worker ended 288 s into a 265 s average (its last
# files test_triggers and test_trigger_identity wait on cron minutes), while longest first
# ends the three together (simulated over the JUnit times, bench/RESULTS.md).  Only the order of
# whole files changes: the tests of a file keep theirs.  A file missing here or grown slow
# costs only balance, never a result.
LONGEST_FIRST = (
    # every file above 12 s, by the larger of its walls in the two suites (its tests' set-up,
    # call and tear-down summed; apitest and apitest-pg side by side, 2026-11-27T21:09Z:
    # bench/suites/timeline reads build/test-logs/*.timeline, bench/RESULTS.md)
    "test_concord_it_ansible.py", "test_ansible.py", "test_ansible_params.py", "test_retention.py",
    "test_nodes_cron.py", "test_secrets_server.py", "test_triggers.py", "test_locks.py", "test_nodes.py",
    "test_ldap.py", "test_process_exclusive.py", "test_process_ops.py", "test_trigger_identity.py",
    "test_docker_task.py", "test_process_timeouts.py", "test_ansible_policy.py", "test_process_recovery.py",
    "test_concord_it_ansible_projects.py", "test_ansible_krb5.py", "test_server_tasks.py",
    "test_console_session.py", "test_process_children.py", "test_nodes_state.py", "test_repo_start.py",
    "test_audit_chain.py", "test_audit.py", "test_operations.py", "test_repo_fetch_flight.py",
    "test_repositories.py", "test_git_task.py", "test_secrets.py", "test_process_resume.py",
    "test_inventory_index.py", "test_concord_task_more.py", "test_ldap_pool.py", "test_ldap_task_srv.py",
    "test_git_fetch.py", "test_imports.py", "test_fair_limits.py", "test_secrets_projects.py",
    "test_oidc_opaque.py", "test_first_run.py", "test_master_key_check.py", "test_ldap_task.py",
    "test_secrets_tasks.py",
)


def longest_first(items):
    """Sorts items (pytest's collection, in place) by LONGEST_FIRST, a stable sort: called
    by pytest_collection_modifyitems above (one hook of that name per module: a second
    definition would silently replace the first)."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


# ---- processes ------------------------------------------------------------------------------

FINAL = ("FINISHED", "FAILED", "CANCELLED", "TIMED_OUT")


def start_process(client, flow=None, parts=None, files=None, expect=200):
    """Starts a process: flow is the text of a concord.yml (sent as a file part), parts a
    dict of text parts (or a list of pairs, for repeated names), files a dict of
    name -> bytes sent as application/octet-stream (or name -> (bytes, content type)).
    Returns the instance id, or the response when expect is not 200."""
    multipart = []
    if flow is not None:
        multipart.append(("concord.yml", ("concord.yml", flow.encode(), "application/octet-stream")))
    items = parts.items() if isinstance(parts, dict) else (parts or [])
    for k, v in items:
        multipart.append((k, (None, str(v), "text/plain")))
    for k, v in (files or {}).items():
        data, ctype = v if isinstance(v, tuple) else (v, "application/octet-stream")
        multipart.append((k, (k.split("/")[-1], data, ctype)))
    r = client.post("/api/v1/process", files=multipart)
    if expect != 200:
        assert r.status_code == expect, r.text
        return r
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is True
    return body["instanceId"]


def wait_process(client, instance_id, statuses=FINAL, timeout=30):
    """Waits until the process's status is one of statuses; returns its record (GET
    /api/v2/process/{id}).  For final statuses the server waits (waitForCompletion, which
    answers as soon as the process ends): one request instead of a poll every 50 ms, which
    cost ~2 ms of CPU each in the client and the ASan server (bench/RESULTS.md).  Otherwise,
    and when the server will not wait (503: WAITERS_MAX waits at once; 403: a key scoped to
    other routes), it polls: every 50 ms for the first 3 s (most processes end within a
    second), then every 250 ms (Ansible, timeouts, cron: seen at most a quarter of a second
    late, with fewer requests)."""
    started = time.time()
    deadline = started + timeout
    if set(statuses) <= set(FINAL):
        server_wait(client, instance_id, deadline)
    while True:
        r = client.get("/api/v2/process/%s" % instance_id)
        assert r.status_code == 200, r.text
        p = r.json()
        if p["status"] in statuses:
            return p
        now = time.time()
        if now > deadline:
            raise AssertionError("process %s is %s after %ss, expected %s" % (instance_id, p["status"], timeout, statuses))
        time.sleep(0.05 if now - started < 3 else 0.25)


def server_wait(client, instance_id, deadline):
    """Asks the server to wait until the process ends or deadline (time.time()) passes
    (GET /api/v1/process/{id}/waitForCompletion); True when it ended, False when the wait
    timed out or the server would not wait (the caller then polls)."""
    left_ms = int((deadline - time.time()) * 1000)
    if left_ms <= 0:
        return False
    r = client.get("/api/v1/process/%s/waitForCompletion" % instance_id, params={"timeout": left_ms},
                   timeout=left_ms / 1000 + 30)
    return r.status_code == 200


def process_log(client, instance_id):
    r = client.get("/api/v1/process/%s/log" % instance_id)
    assert r.status_code in (200, 206), r.text
    return r.text


def run_with_secret(client, secret, flow, timeout=90):
    """Stores secret in the organization Default (a dict of the form's parts: name, type and
    text or bytes values, bytes sent as files), then runs flow (a concord.yml) to its end:
    returns (the process record, its log)."""
    files = {k: (k, v) if isinstance(v, bytes) else (None, v) for k, v in secret.items()}
    r = client.post("/api/v1/org/Default/secret", files=files)
    assert r.status_code == 200, r.text
    iid = start_process(client, flow)
    p = wait_process(client, iid, timeout=timeout)
    return p, process_log(client, iid)
