"""The tamper-evident audit log (issue 30 part 5; docs/security.md "The audit chain"): every
entry carries its number in a chain and a MAC over the previous entry's MAC and its own
fields, keyed from the master key; the head is tagged under the same key.  `accord audit
verify` proves that nothing was changed, removed, added or reordered, or names the first
entry that was — on SQLite and PostgreSQL.  Each tampering is done on a copy of the
database (a file copy on SQLite, CREATE DATABASE … TEMPLATE on PostgreSQL) of a stopped
server, so every case starts from the same verified chain."""
import os
import shutil
import subprocess
import threading
import time
import uuid

import pytest

import conftest
import db_util
from conftest import ADMIN_KEY, BIN, Client, unique


def accord(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=120, env=e)


def write_entries(admin, n=6):
    """n orgs created (one audit entry each) and a project, from two threads at once."""
    names = [unique("chain") for _ in range(n)]

    def make(part):
        c = Client(admin.url, ADMIN_KEY)
        for name in part:
            assert c.post("/api/v1/org", json={"name": name}).status_code == 200

    threads = [threading.Thread(target=make, args=(names[i::2],)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    r = admin.post("/api/v1/org/%s/project" % names[0], json={"name": "proj"})
    assert r.status_code == 200, r.text


class Copy:
    """A copy of a stopped server's database to tamper with: its `--db` and a way to run SQL."""

    def __init__(self, srv, tmp_path):
        self.data = srv.data_dir
        if db_util.PG:
            self.name = "c_" + uuid.uuid4().hex[:12]
            conftest._psql(conftest.TEST_DB, "CREATE DATABASE %s TEMPLATE %s" % (self.name, srv.db_name))
            self.db = conftest.db_url(self.name)
        else:
            path = str(tmp_path / ("copy-%s.db" % uuid.uuid4().hex[:8]))
            shutil.copy(os.path.join(srv.data_dir, "accord.db"), path)
            if os.path.exists(os.path.join(srv.data_dir, "accord.db-wal")):
                shutil.copy(os.path.join(srv.data_dir, "accord.db-wal"), path + "-wal")
            self.db = "sqlite:" + path

    def sql(self, *statements):
        if db_util.PG:
            for s in statements:
                subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.db, "-c", s], check=True,
                               capture_output=True)
        else:
            import sqlite3
            db = sqlite3.connect(self.db[len("sqlite:"):])
            for s in statements:
                db.execute(s)
            db.commit()
            db.close()

    def verify(self, env=None):
        return accord("audit", "verify", "--data", self.data, "--db", self.db, env=env)


@pytest.fixture
def chained(fresh_server, tmp_path):
    """A stopped server whose audit log holds a few entries, and its verified chain length."""
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    write_entries(admin)
    srv.stop()
    r = accord("audit", "verify", "--data", srv.data_dir, *db_util.serve_args(srv.data_dir))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "audit chain verified: entries 1 to " in r.stdout, r.stdout
    last = int(r.stdout.split(" to ")[1].split(" ")[0])
    assert last >= 7
    return srv, last


def test_every_change_is_chained_and_verifies(chained, tmp_path):
    srv, last = chained
    rows = db_util.rows(srv.data_dir, "SELECT chain_no FROM audit_log ORDER BY chain_no")
    assert [r[0] for r in rows] == list(range(1, last + 1))
    assert db_util.rows(srv.data_dir, "SELECT count(*) AS n FROM audit_log WHERE mac IS NULL") == [(0,)]


def test_a_changed_entry_is_named(chained, tmp_path):
    srv, last = chained
    c = Copy(srv, tmp_path)
    c.sql("UPDATE audit_log SET username = 'someone-else' WHERE chain_no = 3")
    r = c.verify()
    assert r.returncode == 1, r.stdout
    assert "does NOT verify: entry 3 " in r.stdout and "was changed" in r.stdout, r.stdout


def test_a_removed_entry_is_named(chained, tmp_path):
    srv, last = chained
    c = Copy(srv, tmp_path)
    c.sql("DELETE FROM audit_log WHERE chain_no = 4")
    r = c.verify()
    assert r.returncode == 1 and "entry 4 was removed" in r.stdout, r.stdout


def test_reordered_entries_are_seen(chained, tmp_path):
    srv, last = chained
    c = Copy(srv, tmp_path)
    c.sql("UPDATE audit_log SET chain_no = -1 WHERE chain_no = 2",
          "UPDATE audit_log SET chain_no = 2 WHERE chain_no = 3",
          "UPDATE audit_log SET chain_no = 3 WHERE chain_no = -1")
    r = c.verify()
    assert r.returncode == 1 and "entry 2 " in r.stdout and "was changed" in r.stdout, r.stdout


def test_entries_cut_off_the_end_are_seen(chained, tmp_path):
    srv, last = chained
    c = Copy(srv, tmp_path)
    c.sql("DELETE FROM audit_log WHERE chain_no >= %d" % (last - 1))
    r = c.verify()
    assert r.returncode == 1 and "entries %d to %d were removed" % (last - 1, last) in r.stdout, r.stdout
    # moving the head back too needs the key: its tag no longer verifies
    c.sql("UPDATE audit_chain SET head_no = %d, head_mac = (SELECT mac FROM audit_log WHERE chain_no = %d)"
          % (last - 2, last - 2))
    r = c.verify()
    assert r.returncode == 1 and "head was changed" in r.stdout, r.stdout


def test_an_entry_added_without_the_key_is_seen(chained, tmp_path):
    srv, last = chained
    c = Copy(srv, tmp_path)
    c.sql("INSERT INTO audit_log (entry_date, object, action, username, source, details)"
          " VALUES (1, 'ORGANIZATION', 'DELETE', 'admin', 'API_REQUEST', '{}')")
    r = c.verify()
    assert r.returncode == 1 and "1 entry is outside the chain" in r.stdout, r.stdout
    c.sql("UPDATE audit_log SET chain_no = %d, mac = (SELECT mac FROM audit_log WHERE chain_no = 1)"
          " WHERE chain_no IS NULL" % (last + 1))
    r = c.verify()
    assert r.returncode == 1, r.stdout
    assert "entry %d (seq" % (last + 1) in r.stdout and "written without the key" in r.stdout, r.stdout


def test_verify_needs_the_master_key(chained, tmp_path):
    srv, last = chained
    c = Copy(srv, tmp_path)
    other = conftest.base64.b64encode(os.urandom(32)).decode()
    r = c.verify(env={"ACCORD_MASTER_KEY": other})
    assert r.returncode == 1 and "made with another master key" in r.stdout, r.stdout
    r = accord("audit", "verify", "--data", str(tmp_path / "nowhere"))
    assert r.returncode == 1 and "no master key" in r.stderr, r.stderr
    assert accord("audit").returncode == 2
    assert accord("audit", "verify", "--bogus").returncode == 2


def test_retention_moves_the_anchor_and_the_chain_still_verifies(fresh_server):
    srv = fresh_server(args=["--retention-audit", "2s", "--retention-interval", "1s"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    write_entries(admin, n=2)
    deadline = time.time() + 30
    while db_util.rows(srv.data_dir, "SELECT count(*) AS n FROM audit_log")[0][0] > 0:
        assert time.time() < deadline, "retention removed nothing"
        time.sleep(0.3)
    write_entries(admin, n=2)
    srv.stop()
    r = accord("audit", "verify", "--data", srv.data_dir, *db_util.serve_args(srv.data_dir))
    assert r.returncode == 0, r.stdout + r.stderr
    first = int(r.stdout.split("entries ")[1].split(" ")[0])
    assert first > 1, r.stdout
    anchor = db_util.rows(srv.data_dir, "SELECT anchor_no FROM audit_chain")[0][0]
    assert anchor == first - 1


def test_a_master_key_rotation_chains_again_under_the_new_key(chained, fresh_server):
    srv, last = chained
    key = os.path.join(srv.data_dir, "master.key")
    os.rename(key, key + ".previous")
    srv2 = fresh_server(data_dir=srv.data_dir).start()
    Client(srv2.url, ADMIN_KEY).post("/api/v1/org", json={"name": unique("after")})
    srv2.stop()
    r = accord("audit", "verify", "--data", srv.data_dir, *db_util.serve_args(srv.data_dir))
    assert r.returncode == 0 and "entries 1 to %d" % (last + 1) in r.stdout, r.stdout + r.stderr
    assert "RESEAL" not in str(db_util.rows(srv.data_dir, "SELECT action FROM audit_log"))


def test_a_rotation_over_a_broken_chain_keeps_the_evidence(chained, fresh_server):
    srv, last = chained
    if db_util.PG:
        db_util.psql(srv.data_dir, "-c", "UPDATE audit_log SET username = 'x' WHERE chain_no = 2")
    else:
        import sqlite3
        db = sqlite3.connect(db_util.sqlite_path(srv.data_dir))
        db.execute("UPDATE audit_log SET username = 'x' WHERE chain_no = 2")
        db.commit()
        db.close()
    key = os.path.join(srv.data_dir, "master.key")
    os.rename(key, key + ".previous")
    srv2 = fresh_server(data_dir=srv.data_dir).start()
    assert "the audit chain did not verify under the previous key: entry 2 " in srv2.read_log()
    srv2.stop()
    r = accord("audit", "verify", "--data", srv.data_dir, *db_util.serve_args(srv.data_dir))
    assert r.returncode == 0, r.stdout + r.stderr
    rows = db_util.rows(srv.data_dir, "SELECT object, action, details FROM audit_log WHERE chain_no = %d"
                        % (last + 1))
    assert rows[0][0] == "AUDIT_LOG" and rows[0][1] == "RESEAL" and "entry 2 " in rows[0][2], rows
