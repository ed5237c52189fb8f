"""Operating a server: backup and restore, health and readiness, the data folder lock, a port
in use, durability (docs/operations.md)."""
import os
import shutil
import socket
import sqlite3
import subprocess
import threading
import time

import pytest
import requests

from conftest import ADMIN_KEY, BIN, Client, Server, sqlite_only


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


@sqlite_only
def test_backup_while_4_clients_write_restores_the_database_of_that_instant(fresh_server, tmp_path):
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    done = {}  # name -> (sent, answered) monotonic times
    stop = threading.Event()
    errors = []

    def writer(i):
        c = Client(srv.url, ADMIN_KEY)
        n = 0
        while not stop.is_set():
            name = "w%d-%05d" % (i, n)
            sent = time.monotonic()
            r = c.post("/api/v1/org", json={"name": name})
            if r.status_code != 200:
                errors.append(r.text)
                return
            done[name] = (sent, time.monotonic())
            n += 1

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    out = str(tmp_path / "backup.db")
    b_start = time.monotonic()
    r = accord("backup", "--data", srv.data_dir, out)
    b_end = time.monotonic()
    # let the writers get at least one more org in after the backup (slow under load)
    deadline = time.monotonic() + 30
    while not any(sent > b_end for sent, _ in list(done.values())) and time.monotonic() < deadline and not errors:
        time.sleep(0.1)
    time.sleep(0.2)
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors
    assert r.returncode == 0, r.stderr
    assert "written to %s" % out in r.stdout and "master.key" in r.stdout
    assert oct(os.stat(out).st_mode & 0o777) == "0o600"
    assert not os.path.exists(out + "-wal")

    backed = org_names(out)
    # the copy is one instant: everything answered before it began is in, nothing sent after
    # it ended, and each writer's orgs are a prefix of what it wrote
    for name, (sent, answered) in done.items():
        if answered < b_start:
            assert name in backed, name
        if sent > b_end:
            assert name not in backed, name
    for i in range(4):
        mine = sorted(n for n in done if n.startswith("w%d-" % i))
        got = sorted(n for n in backed if n.startswith("w%d-" % i))
        assert got == mine[:len(got)]
    assert any(n.startswith("w") for n in backed)
    assert len(backed) < len(org_names(os.path.join(srv.data_dir, "accord.db")))

    # every row of the copy is in the live database (the writers only add rows)
    assert srv.stop() == 0
    live = tables(os.path.join(srv.data_dir, "accord.db"))
    copy = tables(out)
    assert set(copy) == set(live)
    for t, rows in copy.items():
        if t == "nodes":  # the server's own row: its heartbeat moves, a clean stop removes it
            continue
        missing = set(rows) - set(live[t])
        assert not missing, (t, list(missing)[:3])

    # restored into a new data folder: equal to the copy, table by table, and served
    data2 = str(tmp_path / "restored")
    r = accord("restore", "--data", data2, out)
    assert r.returncode == 0, r.stderr
    assert "restored" in r.stdout and "master key" in r.stdout
    assert tables(os.path.join(data2, "accord.db")) == copy
    # without its master key the restored database does not start (key check), and the
    # key that start created is not left behind
    with pytest.raises(RuntimeError) as exc:
        fresh_server(data_dir=data2).start()
    assert "does not match the key this database was created with" in str(exc.value)
    assert not os.path.exists(os.path.join(data2, "master.key"))
    shutil.copy2(os.path.join(srv.data_dir, "master.key"), os.path.join(data2, "master.key"))
    srv2 = fresh_server(data_dir=data2).start()
    names, c2 = set(), Client(srv2.url, ADMIN_KEY)
    while True:  # pages of at most 1000 (the list maximum)
        page = c2.get("/api/v1/org", params={"limit": 1000, "offset": len(names)}).json()
        names |= {o["name"] for o in page}
        if len(page) < 1000:
            break
    assert {n for n in backed if n.startswith("w")} <= names
    assert admin  # the first server's admin client is unused after stop


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


@sqlite_only
def test_backup_and_restore_cli_errors(fresh_server, tmp_path):
    r = accord("backup")
    assert r.returncode == 2 and "which file?" in r.stderr
    r = accord("backup", "--bogus", "x.db")
    assert r.returncode == 2 and "unknown option '--bogus'" in r.stderr
    r = accord("backup", "a.db", "b.db")
    assert r.returncode == 2 and "one file only" in r.stderr
    r = accord("backup", "--data")
    assert r.returncode == 2 and "--data needs a folder" in r.stderr
    for cmd in ("backup", "restore"):
        r = accord(cmd, "--help")
        assert r.returncode == 0 and ("usage: accord %s" % cmd) in r.stdout and "master" in r.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    r = accord("backup", "--data", str(empty), str(tmp_path / "x.db"))
    assert r.returncode == 1 and "no database at %s/accord.db" % empty in r.stderr
    assert not (tmp_path / "x.db").exists() and not (empty / "accord.db").exists()

    srv = fresh_server().start()
    live = os.path.join(srv.data_dir, "accord.db")
    r = accord("backup", "--data", srv.data_dir, live)
    assert r.returncode == 1 and "is the database itself" in r.stderr
    good = str(tmp_path / "good.db")
    assert accord("backup", "--data", srv.data_dir, good).returncode == 0
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


@sqlite_only
def test_a_starting_node_answers_503_starting(fresh_server, tmp_path):
    srv = fresh_server().start()
    srv.stop()
    # hold the database's write lock: the next start waits in its bootstrap transaction
    db = sqlite3.connect(os.path.join(srv.data_dir, "accord.db"), isolation_level=None, timeout=10)
    db.execute("BEGIN IMMEDIATE")
    port = free_port()
    log = open(str(tmp_path / "log"), "w+")
    env = dict(os.environ, ACCORD_ADMIN_API_KEY=ADMIN_KEY)
    proc = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:%d" % port, "--data", srv.data_dir],
                            stdout=log, stderr=log, env=env)
    try:
        url = "http://127.0.0.1:%d" % port
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
        db.execute("ROLLBACK")
        deadline = time.time() + 20
        while time.time() < deadline:
            r = requests.get(url + "/api/v1/server/health", timeout=5)
            if r.status_code == 200:
                break
            time.sleep(0.05)
        assert r.status_code == 200, r.text
        assert requests.get(url + "/api/v1/org", headers={"Authorization": ADMIN_KEY}, timeout=5).status_code == 200
    finally:
        db.close()
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
