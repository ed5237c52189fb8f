"""Operating a server: backup and restore, health and readiness, the data folder lock, a port
in use, durability (docs/operations.md)."""
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import threading
import time

import pytest
import requests

import db_util
from conftest import ADMIN_KEY, BIN, Client, pg_url, sqlite_only


def accord(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=120, env=e)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def tables(path):
    """{table: sorted rows} of every table of a database file."""
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type='table' ORDER BY name")]
        return {n: sorted(db.execute('SELECT * FROM "%s"' % n).fetchall(), key=repr) for n in names}
    finally:
        db.close()


def org_names(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        return {r[0] for r in db.execute("SELECT name FROM orgs")}
    finally:
        db.close()


class Writers:
    """4 clients creating orgs w<i>-<n> as fast as the server answers, from entering the block
    until its end; done: name -> (sent, answered) monotonic times of each org made."""

    def __init__(self, url):
        self.url = url
        self.done = {}
        self.errors = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.write, args=(i,)) for i in range(4)]

    def write(self, i):
        c = Client(self.url, ADMIN_KEY)
        n = 0
        while not self.stop.is_set():
            name = "w%d-%05d" % (i, n)
            sent = time.monotonic()
            r = c.post("/api/v1/org", json={"name": name})
            if r.status_code != 200:
                self.errors.append(r.text)
                return
            self.done[name] = (sent, time.monotonic())
            n += 1

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def past(self, t):
        """Waits until an org sent after t was made (slow under load)."""
        deadline = time.monotonic() + 30
        while not any(sent > t for sent, _ in list(self.done.values())) and time.monotonic() < deadline \
                and not self.errors:
            time.sleep(0.1)
        time.sleep(0.2)

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join()

    def check_one_instant(self, backed, start, end):
        """backed (the org names of a copy taken between start and end) is one instant:
        everything answered before it began is in, nothing sent after it ended, and each
        writer's orgs are a prefix of what it wrote."""
        assert not self.errors, self.errors
        for name, (sent, answered) in self.done.items():
            if answered < start:
                assert name in backed, name
            if sent > end:
                assert name not in backed, name
        for i in range(4):
            mine = sorted(n for n in self.done if n.startswith("w%d-" % i))
            got = sorted(n for n in backed if n.startswith("w%d-" % i))
            assert got == mine[:len(got)]
        assert any(n.startswith("w") for n in backed)


def all_org_names(client):
    names = set()
    while True:  # pages of at most 1000 (the list maximum)
        page = client.get("/api/v1/org", params={"limit": 1000, "offset": len(names)}).json()
        names |= {o["name"] for o in page}
        if len(page) < 1000:
            return names


def start_restored(fresh_server, old_data, new_data):
    """Starts a server on a restored database: without its master key it does not start (key
    check), and the key that start created is not left behind; with the key of old_data it
    does.  Returns an admin client of it."""
    with pytest.raises(RuntimeError) as exc:
        fresh_server(data_dir=new_data).start()
    assert "does not match the key this database was created with" in str(exc.value)
    assert not os.path.exists(os.path.join(new_data, "master.key"))
    shutil.copy2(os.path.join(old_data, "master.key"), os.path.join(new_data, "master.key"))
    return Client(fresh_server(data_dir=new_data).start().url, ADMIN_KEY)


# accord backup copies a SQLite file; on PostgreSQL it refuses (test_backup_and_restore_on_postgresql)
# and pg_dump does the job (test_pg_dump_while_4_clients_write_restores_the_database_of_that_instant).
@sqlite_only
def test_backup_while_4_clients_write_restores_the_database_of_that_instant(fresh_server, tmp_path):
    srv = fresh_server().start()
    out = str(tmp_path / "backup.db")
    with Writers(srv.url) as w:
        time.sleep(1.5)
        b_start = time.monotonic()
        r = accord("backup", "--data", srv.data_dir, out)
        b_end = time.monotonic()
        # let the writers get at least one more org in after the backup
        w.past(b_end)
    assert r.returncode == 0, r.stderr
    assert "written to %s" % out in r.stdout and "master.key" in r.stdout
    assert oct(os.stat(out).st_mode & 0o777) == "0o600"
    assert not os.path.exists(out + "-wal")

    backed = org_names(out)
    w.check_one_instant(backed, b_start, b_end)
    assert len(backed) < len(org_names(os.path.join(srv.data_dir, "accord.db")))

    # every row of the copy is in the live database (the writers only add rows)
    assert srv.stop() == 0
    live = tables(os.path.join(srv.data_dir, "accord.db"))
    copy = tables(out)
    assert set(copy) == set(live)
    for t, rows in copy.items():
        # the server's own row (its heartbeat moves, a clean stop removes it) and the audit
        # chain's head (it moves with every entry)
        if t in ("nodes", "audit_chain"):
            continue
        missing = set(rows) - set(live[t])
        assert not missing, (t, list(missing)[:3])

    # restored into a new data folder: equal to the copy, table by table, and served
    data2 = str(tmp_path / "restored")
    r = accord("restore", "--data", data2, out)
    assert r.returncode == 0, r.stderr
    assert "restored" in r.stdout and "master key" in r.stdout
    assert tables(os.path.join(data2, "accord.db")) == copy
    c2 = start_restored(fresh_server, srv.data_dir, data2)
    assert {n for n in backed if n.startswith("w")} <= all_org_names(c2)


INVENTORY_QUERY = "select item_data from inventory_data"


@db_util.pg_only
def test_pg_dump_while_4_clients_write_restores_the_database_of_that_instant(fresh_server, tmp_path):
    """docs/operations.md "Running several nodes": pg_dump while the nodes run, pg_restore
    into an empty database, the master key kept with it."""
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    # what a restored database must serve besides rows: a secret (the master key) and an
    # inventory query (its sandbox role, named after the database's oid)
    r = admin.post("/api/v1/org/Default/secret", files={"name": (None, "kept"), "type": (None, "data"),
                                                         "data": (None, "kept-value")})
    assert r.status_code == 200, r.text
    inv = "/api/v1/org/Default/inventory/kept"
    assert admin.post("/api/v1/org/Default/inventory", json={"name": "kept"}).status_code == 200
    assert admin.post(inv + "/data/hosts/a", json={"ip": "10.0.0.1"}).status_code == 200
    r = admin.post(inv + "/query/hosts", data=INVENTORY_QUERY, headers={"Content-Type": "text/plain"})
    assert r.status_code == 200, r.text
    store = "/api/v1/org/Default/jsonstore/kept"  # the same store, read as Concord names its table
    r = admin.post(store + "/query", json={"name": "jsd", "text": "select item_data from json_store_data"})
    assert r.status_code == 200, r.text
    dump = str(tmp_path / "accord.dump")
    with Writers(srv.url) as w:
        time.sleep(1.5)
        b_start = time.monotonic()
        r = subprocess.run(["pg_dump", "-Fc", "-d", pg_url(srv.data_dir)[0], "-f", dump], capture_output=True,
                           text=True, timeout=120)
        b_end = time.monotonic()
        w.past(b_end)
    assert r.returncode == 0, r.stderr

    # restored into an empty database (another oid) beside a new data folder
    data2 = str(tmp_path / "restored")
    r = subprocess.run(["pg_restore", "-d", pg_url(data2)[0], dump], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    backed = {row[0] for row in db_util.rows(data2, "SELECT name FROM orgs")}
    w.check_one_instant(backed, b_start, b_end)
    assert len(backed) < len(all_org_names(admin))
    c2 = start_restored(fresh_server, srv.data_dir, data2)
    assert {n for n in backed if n.startswith("w")} <= all_org_names(c2)
    r = c2.post("/api/v1/org/Default/secret/kept/data")
    assert r.status_code == 200 and r.content == b"kept-value", r.text
    r = c2.post(inv + "/query/hosts/exec", json={})
    assert r.status_code == 200 and r.json() == [{"ip": "10.0.0.1"}], r.text
    r = c2.post(store + "/query/jsd/exec")
    assert r.status_code == 200 and r.json() == [{"ip": "10.0.0.1"}], r.text
    # and it takes writes (identity columns such as the audit log's go on past the copy's)
    assert c2.post("/api/v1/org", json={"name": "after-restore"}).status_code == 200
    assert c2.get("/api/v1/audit", params={"object": "ORGANIZATION", "limit": 1}).json()[0]["details"][
        "orgName"] == "after-restore"


# accord restore writes a SQLite file; on PostgreSQL: test_backup_and_restore_on_postgresql.
@sqlite_only
def test_restore_refuses_a_running_server_and_changes_nothing(fresh_server, tmp_path):
    srv = fresh_server().start()
    out = str(tmp_path / "b.db")
    assert accord("backup", "--data", srv.data_dir, out).returncode == 0
    admin = Client(srv.url, ADMIN_KEY)
    assert admin.post("/api/v1/org", json={"name": "after-backup"}).status_code == 200
    r = accord("restore", "--data", srv.data_dir, out)
    assert r.returncode == 1
    assert "in use by accord (pid %d)" % srv.proc.pid in r.stderr and "stop the server" in r.stderr
    assert admin.get("/api/v1/org/after-backup").status_code == 200
    # a second server on the same folder is refused the same way
    r = accord("serve", "--listen", "127.0.0.1:0", "--data", srv.data_dir)
    assert r.returncode == 1 and "in use by accord (pid %d)" % srv.proc.pid in r.stderr
    # once stopped, the restore goes through and the org made after the backup is gone
    assert srv.stop() == 0
    r = accord("restore", "--data", srv.data_dir, out)
    assert r.returncode == 0, r.stderr
    srv2 = fresh_server(data_dir=srv.data_dir).start()
    c = Client(srv2.url, ADMIN_KEY)
    assert c.get("/api/v1/org/after-backup").status_code == 404
    assert c.get("/api/v1/org/Default").status_code == 200


@db_util.pg_only
def test_backup_and_restore_on_postgresql(fresh_server, tmp_path):
    """accord backup and restore copy SQLite files: given a PostgreSQL database (--db or
    ACCORD_DB, as accord serve takes it) they refuse, say to use pg_dump / pg_restore and
    where the documentation is, never show the URL (it may hold a password), and change
    nothing."""
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    assert admin.post("/api/v1/org", json={"name": "kept-org"}).status_code == 200
    url = pg_url(srv.data_dir)[0].replace("postgresql://", "postgresql://accord:Pass-in-url-77@")
    out = str(tmp_path / "out.db")
    for how, args, env in (("--db", ["--db", url], None), ("--db", ["--db=" + url], None),
                           ("ACCORD_DB", [], {"ACCORD_DB": url})):
        r = accord("backup", "--data", srv.data_dir, *args, out, env=env)
        assert r.returncode == 1, r
        assert r.stderr.startswith("accord backup: %s names a PostgreSQL database" % how), r.stderr
        assert "pg_dump -Fc" in r.stderr and "master key" in r.stderr and '"Running several nodes"' in r.stderr
        assert "Pass-in-url-77" not in r.stderr and pg_url(srv.data_dir)[1] not in r.stderr
        assert not os.path.exists(out)
        # restore: refused before the backup file or the data folder is looked at
        r = accord("restore", "--data", srv.data_dir, *args, str(tmp_path / "missing.db"), env=env)
        assert r.returncode == 1, r
        assert r.stderr.startswith("accord restore: %s names a PostgreSQL database" % how), r.stderr
        assert "pg_restore -d" in r.stderr and "nodes are stopped" in r.stderr and "Pass-in-url-77" not in r.stderr
    # the data folder of a server on PostgreSQL has no accord.db: the answer points there too
    r = accord("backup", "--data", srv.data_dir, out)
    assert r.returncode == 1 and "no database at %s/accord.db" % srv.data_dir in r.stderr
    assert "pg_dump" in r.stderr
    assert not os.path.exists(os.path.join(srv.data_dir, "accord.db"))
    assert admin.get("/api/v1/org/kept-org").status_code == 200
    # a second server on the same data folder is refused as on SQLite
    r = accord("serve", "--listen", "127.0.0.1:0", "--data", srv.data_dir, *db_util.serve_args(srv.data_dir))
    assert r.returncode == 1 and "in use by accord (pid %d)" % srv.proc.pid in r.stderr


def test_backup_and_restore_usage_errors():
    r = accord("backup")
    assert r.returncode == 2 and "which file?" in r.stderr
    r = accord("backup", "--bogus", "x.db")
    assert r.returncode == 2 and "unknown option '--bogus'" in r.stderr
    r = accord("backup", "a.db", "b.db")
    assert r.returncode == 2 and "one file only" in r.stderr
    for args in (["--data"], ["--data="], ["--db"], ["--db=", "x.db"]):
        r = accord("backup", *args)
        assert r.returncode == 2 and "%s needs a" % args[0].rstrip("=") in r.stderr, (args, r.stderr)
    for cmd in ("backup", "restore"):
        r = accord(cmd, "--help")
        assert r.returncode == 0 and ("usage: accord %s" % cmd) in r.stdout and "master" in r.stdout
        assert "pg_dump" in r.stdout or "pg_restore" in r.stdout


# The errors of SQLite files (missing, not a database, from a newer Accord); on PostgreSQL
# the commands refuse before any file is read (test_backup_and_restore_on_postgresql).
@sqlite_only
def test_backup_and_restore_file_errors(fresh_server, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    r = accord("backup", "--data", str(empty), str(tmp_path / "x.db"))
    assert r.returncode == 1 and "no database at %s/accord.db" % empty in r.stderr
    assert "a server on PostgreSQL (--db, ACCORD_DB) is backed up with pg_dump" in r.stderr
    assert not (tmp_path / "x.db").exists() and not (empty / "accord.db").exists()

    srv = fresh_server().start()
    live = os.path.join(srv.data_dir, "accord.db")
    r = accord("backup", "--data", srv.data_dir, live)
    assert r.returncode == 1 and "is the database itself" in r.stderr
    good = str(tmp_path / "good.db")
    assert accord("backup", "--data", srv.data_dir, good).returncode == 0
    # the database named as `accord serve --db` names it
    r = accord("backup", "--data", str(empty), "--db", "sqlite:" + live, str(tmp_path / "by-db.db"))
    assert r.returncode == 0 and "backup of %s written" % live in r.stdout, r.stderr
    r = accord("backup", str(tmp_path / "by-env.db"), env={"ACCORD_DB": live})
    assert r.returncode == 0 and "backup of %s written" % live in r.stdout, r.stderr
    srv.stop()

    target = tmp_path / "target"
    r = accord("restore", "--data", str(target), str(tmp_path / "missing.db"))
    assert r.returncode == 1 and "cannot read" in r.stderr and not target.exists()
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    r = accord("restore", "--data", str(target), str(junk))
    assert r.returncode == 1 and "not an Accord database" in r.stderr and not target.exists()
    other = str(tmp_path / "other.db")
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    r = accord("restore", "--data", str(target), other)
    assert r.returncode == 1 and "no schema_migrations table" in r.stderr
    newer = str(tmp_path / "newer.db")
    db = sqlite3.connect(good)
    latest = db.execute("SELECT max(number) FROM schema_migrations").fetchone()[0]
    db.close()
    with open(good, "rb") as f, open(newer, "wb") as g:
        g.write(f.read())
    db = sqlite3.connect(newer)
    db.execute("INSERT INTO schema_migrations (number, name, applied_at) VALUES (999, '999_future', 0)")
    db.commit()
    db.close()
    r = accord("restore", "--data", str(target), newer)
    assert r.returncode == 1
    assert "schema version 999, newer than this build's %d" % latest in r.stderr
    assert not target.exists()


def test_migrate_brings_a_database_up_to_date_and_a_server_starts_on_it(tmp_path, fresh_server):
    """`accord migrate` applies the schema without starting a server (an upgrade ahead of
    the nodes); a second run has nothing left to do; on SQLite it refuses while a server
    holds the data folder."""
    data = str(tmp_path / "data")
    args = ["--data", data] + db_util.serve_args(data)
    r = accord("migrate", *args)
    assert r.returncode == 0, r.stderr
    assert "applied migration 001_core" in r.stderr
    version = int(r.stdout.split("schema version ")[1])
    assert version >= 18
    assert db_util.rows(data, "SELECT max(number) AS n FROM schema_migrations") == [(version,)]
    r = accord("migrate", *args)
    assert r.returncode == 0 and "applied migration" not in r.stderr, r.stderr
    assert "schema version %d" % version in r.stdout
    assert accord("migrate", *args, "extra").returncode == 2
    srv = fresh_server(data_dir=data).start()
    assert Client(srv.url, ADMIN_KEY).get("/api/v1/server/ping").status_code == 200
    if not db_util.PG:
        r = accord("migrate", *args)
        assert r.returncode == 1 and "in use by accord" in r.stderr, r.stderr


def test_health_reports_each_check(fresh_server):
    srv = fresh_server().start()
    r = requests.get(srv.url + "/api/v1/server/health", timeout=10)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is True and body["status"] == "ok"
    assert body["checks"]["store"] == {"ok": True}
    assert body["checks"]["workers"]["ok"] is True and body["checks"]["workers"]["slots"] >= 1
    assert body["checks"]["disk"]["ok"] is True and body["checks"]["disk"]["freeBytes"] > 0

    low = fresh_server(args=["--health-min-free-bytes", "1000000G"]).start()
    r = requests.get(low.url + "/api/v1/server/health", timeout=10)
    assert r.status_code == 503
    body = r.json()
    assert body["ok"] is False and body["status"] == "unhealthy"
    assert body["checks"]["disk"]["ok"] is False and "--health-min-free-bytes" in body["checks"]["disk"]["message"]
    assert body["checks"]["store"]["ok"] is True and body["checks"]["workers"]["ok"] is True


def test_a_starting_node_answers_503_starting(fresh_server, tmp_path):
    srv = fresh_server().start()
    srv.stop()
    port = free_port()
    log = open(str(tmp_path / "log"), "w+")
    env = dict(os.environ, ACCORD_ADMIN_API_KEY=ADMIN_KEY)
    url = "http://127.0.0.1:%d" % port
    proc = None
    try:
        # hold the database's write lock: the next start waits in its bootstrap transaction
        with db_util.write_lock(srv.data_dir):
            proc = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:%d" % port, "--data", srv.data_dir]
                                    + db_util.serve_args(srv.data_dir), stdout=log, stderr=log, env=env)
            r = None
            for _ in range(200):
                try:
                    r = requests.get(url + "/api/v1/server/health", timeout=5)
                    break
                except requests.ConnectionError:
                    time.sleep(0.02)
            assert r is not None and r.status_code == 503, r and r.text
            assert r.json()["status"] == "starting" and r.headers["Retry-After"] == "1"
            r = requests.get(url + "/api/v1/org", headers={"Authorization": ADMIN_KEY}, timeout=5)
            assert r.status_code == 503 and "starting" in r.json()["message"]
            time.sleep(1)  # still waiting, however long the lock is held
            assert requests.get(url + "/api/v1/server/health", timeout=5).status_code == 503
        deadline = time.time() + 20
        while time.time() < deadline:
            r = requests.get(url + "/api/v1/server/health", timeout=5)
            if r.status_code == 200:
                break
            time.sleep(0.05)
        assert r.status_code == 200, r.text
        assert requests.get(url + "/api/v1/org", headers={"Authorization": ADMIN_KEY}, timeout=5).status_code == 200
    finally:
        if proc:
            proc.terminate()
            proc.wait(20)
        log.close()


def test_port_in_use_is_reported_before_the_data_folder_is_touched(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    port = s.getsockname()[1]
    try:
        data = tmp_path / "data"
        r = accord("serve", "--listen", "127.0.0.1:%d" % port, "--data", str(data))
        assert r.returncode == 1
        assert "cannot listen on 127.0.0.1:%d: Address already in use" % port in r.stderr
        assert "port 0" not in r.stderr
        assert not data.exists()
    finally:
        s.close()


def test_durability_setting(fresh_server, tmp_path):
    srv = fresh_server(args=["--durability", "full"]).start()
    assert "durability=full" in srv.read_log()
    assert Client(srv.url, ADMIN_KEY).post("/api/v1/org", json={"name": "durable"}).status_code == 200
    r = accord("serve", "--durability", "sometimes", "--data", str(tmp_path / "d"))
    assert r.returncode == 2 and "--durability: 'sometimes' is neither 'normal' nor 'full'" in r.stderr
    assert "durability=normal" in fresh_server().start().read_log()


# The files in question are SQLite's (accord.db and its -wal, -shm); a PostgreSQL database has
# none in the data folder, and accord restore refuses it (test_backup_and_restore_on_postgresql).
@sqlite_only
def test_restore_as_root_gives_the_files_to_the_folders_owner(fresh_server, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root")
    srv = fresh_server().start()
    out = str(tmp_path / "b.db")
    assert accord("backup", "--data", srv.data_dir, out).returncode == 0
    srv.stop()
    data = tmp_path / "svc"
    data.mkdir(mode=0o700)
    os.chown(str(data), 65534, 65534)
    r = accord("restore", "--data", str(data), out)
    assert r.returncode == 0, r.stderr
    for name in ("accord.db", "accord.pid"):
        st = os.stat(str(data / name))
        assert (st.st_uid, st.st_gid) == (65534, 65534), name


def test_sighup_reopens_the_log_file_and_keeps_serving(fresh_server):
    """logrotate moves the log away, then sends SIGHUP: the server writes to a new file at
    the old path and goes on serving (SIGHUP's default action used to kill it)."""
    srv = fresh_server().start()
    assert requests.get(srv.url + "/api/v1/server/ping", timeout=10).status_code == 200
    rotated = srv.log_path + ".1"
    os.rename(srv.log_path, rotated)
    srv.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 20
    while time.time() < deadline and not os.path.exists(srv.log_path):
        assert srv.proc.poll() is None, "the server died of SIGHUP"
        time.sleep(0.05)
    assert os.path.exists(srv.log_path), "no new log file after SIGHUP"
    assert srv.proc.poll() is None
    assert requests.get(srv.url + "/api/v1/server/ping", timeout=10).status_code == 200
    while time.time() < deadline and "log file reopened" not in srv.read_log():
        time.sleep(0.05)
    assert "log file reopened" in srv.read_log()
    assert oct(os.stat(srv.log_path).st_mode & 0o777) == "0o600"
    with open(rotated) as f:
        assert "msg=listening" in f.read()  # what came before stays in the moved file
    os.unlink(rotated)
