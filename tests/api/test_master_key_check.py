"""The database's key check (issue 11 part 3): every node needs the same master key. A
server whose master key does not match the key check in the database refuses to start and
says why; rotation moves the check to the new key; a database from before the check gets
it at its next start, unless the key opens none of its secrets."""
import base64
import os
import sqlite3
import subprocess

import pytest

from conftest import ADMIN_KEY, TEST_DB, Client, pg_url
from test_secrets import create_ok, export

MISMATCH = "does not match the key this database was created with (key check in the database)"
ADVICE = "every node must use the same master key; see docs/security.md 'The master key'"


def new_key():
    return base64.b64encode(os.urandom(32)).decode()


def admin_of(srv):
    return Client(srv.url, ADMIN_KEY)


def meta_sql(data_dir, sql):
    """Runs sql on the server's database (SQLite file, or its PostgreSQL database)."""
    if TEST_DB:
        url, _ = pg_url(data_dir)
        out = subprocess.run(["psql", "-X", "-qtA", "-d", url, "-c", sql], check=True, capture_output=True,
                             text=True).stdout.strip()
        return [(out,)] if out else []
    db = sqlite3.connect(os.path.join(data_dir, "accord.db"))
    try:
        rows = db.execute(sql).fetchall()
        db.commit()
    finally:
        db.close()
    return rows


def key_check(data_dir):
    rows = meta_sql(data_dir, "SELECT value FROM server_meta WHERE key = 'master_key_check'")
    return rows[0][0] if rows else None


def drop_key_check(data_dir):
    meta_sql(data_dir, "DELETE FROM server_meta WHERE key = 'master_key_check'")


def refused(fresh_server, data_dir, env=None):
    """Starts a server that must refuse: returns its log; it exited non-zero by itself."""
    srv = fresh_server(data_dir=data_dir, env=env or {})
    with pytest.raises(RuntimeError, match="accord serve exited"):
        srv.start()
    assert srv.proc.returncode not in (0, None)
    return srv.read_log()


def with_secret(fresh_server, env, name="kept", value="the value"):
    """A server started with env, one secret created, stopped: returns its data folder."""
    srv = fresh_server(env=env).start()
    create_ok(admin_of(srv), "Default", type="data", name=name, data=value)
    srv.stop()
    return srv.data_dir


def test_other_key_refused_same_key_works(fresh_server):
    a, b = new_key(), new_key()
    data = with_secret(fresh_server, {"ACCORD_MASTER_KEY": a})
    check = key_check(data)
    assert check and check.startswith("v1:") and len(check) == 67
    log = refused(fresh_server, data, {"ACCORD_MASTER_KEY": b})
    line = [ln for ln in log.splitlines() if MISMATCH in ln]
    assert len(line) == 1 and "the master key (from ACCORD_MASTER_KEY)" in line[0] and ADVICE in line[0], log
    for material in (a, b, check[3:], base64.b64decode(a).hex(), base64.b64decode(b).hex()):
        assert material not in log
    assert key_check(data) == check
    srv = fresh_server(data_dir=data, env={"ACCORD_MASTER_KEY": a}).start()
    assert export(admin_of(srv), "Default", "kept").content == b"the value"
    assert "master key matches the database's key check" in srv.read_log()
    srv.stop()


def test_other_key_file_refused_and_missing_file_not_left_behind(fresh_server):
    data = with_secret(fresh_server, {})
    path = os.path.join(data, "master.key")
    good = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(os.urandom(32))
    log = refused(fresh_server, data)
    assert ("the master key (from %s) %s" % (path, MISMATCH)) in log, log
    # master.key lost: the server would create a new one, and must not keep it
    os.unlink(path)
    log = refused(fresh_server, data)
    assert "created now as there was none; removed again" in log and MISMATCH in log, log
    assert not os.path.exists(path)
    with open(path, "wb") as f:
        f.write(good)
    os.chmod(path, 0o600)
    srv = fresh_server(data_dir=data).start()
    assert export(admin_of(srv), "Default", "kept").content == b"the value"
    srv.stop()


def test_rotation_moves_the_check(fresh_server):
    a, b = new_key(), new_key()
    data = with_secret(fresh_server, {"ACCORD_MASTER_KEY": a})
    check_a = key_check(data)
    srv = fresh_server(data_dir=data, env={"ACCORD_MASTER_KEY": b, "ACCORD_MASTER_KEY_PREVIOUS": a}).start()
    log = srv.read_log()
    assert "1 secret(s) re-wrapped" in log and "key check now names the current master key" in log, log
    srv.stop()
    check_b = key_check(data)
    assert check_b and check_b != check_a
    # the previous key still given is harmless, and changes nothing
    srv = fresh_server(data_dir=data, env={"ACCORD_MASTER_KEY": b, "ACCORD_MASTER_KEY_PREVIOUS": a}).start()
    assert "0 secret(s) re-wrapped" in srv.read_log()
    srv.stop()
    assert key_check(data) == check_b
    srv = fresh_server(data_dir=data, env={"ACCORD_MASTER_KEY": b}).start()
    assert export(admin_of(srv), "Default", "kept").content == b"the value"
    srv.stop()
    assert MISMATCH in refused(fresh_server, data, {"ACCORD_MASTER_KEY": a})
    # a third key with the wrong previous one: both named, nothing changed
    log = refused(fresh_server, data, {"ACCORD_MASTER_KEY": new_key(), "ACCORD_MASTER_KEY_PREVIOUS": a})
    assert "nor the previous one (from ACCORD_MASTER_KEY_PREVIOUS) matches" in log, log
    assert key_check(data) == check_b


def test_rotation_with_the_file_moves_the_check(fresh_server):
    data = with_secret(fresh_server, {})
    check_a = key_check(data)
    path = os.path.join(data, "master.key")
    os.rename(path, path + ".previous")
    srv = fresh_server(data_dir=data).start()
    assert "key check now names the current master key" in srv.read_log()
    srv.stop()
    assert key_check(data) not in (None, check_a)
    os.unlink(path + ".previous")
    srv = fresh_server(data_dir=data).start()
    assert export(admin_of(srv), "Default", "kept").content == b"the value"
    srv.stop()


def test_database_from_before_the_check(fresh_server):
    a, b = new_key(), new_key()
    data = with_secret(fresh_server, {"ACCORD_MASTER_KEY": a})
    check_a = key_check(data)
    drop_key_check(data)
    # another key that opens none of the secrets: refused, nothing written
    log = refused(fresh_server, data, {"ACCORD_MASTER_KEY": b})
    assert "opens none of the 1 secret(s) this database has sealed with a master key" in log and ADVICE in log, log
    assert key_check(data) is None
    srv = fresh_server(data_dir=data, env={"ACCORD_MASTER_KEY": a}).start()
    assert "key check of the master key written to the database (the key opens all 1 secret(s)" in srv.read_log()
    assert export(admin_of(srv), "Default", "kept").content == b"the value"
    srv.stop()
    assert key_check(data) == check_a
    assert MISMATCH in refused(fresh_server, data, {"ACCORD_MASTER_KEY": b})


def test_database_without_secrets_takes_the_key_in_use(fresh_server):
    a, b = new_key(), new_key()
    srv = fresh_server(env={"ACCORD_MASTER_KEY": a}).start()
    assert "no secret sealed with a master key yet" in srv.read_log()
    srv.stop()
    drop_key_check(srv.data_dir)
    srv = fresh_server(data_dir=srv.data_dir, env={"ACCORD_MASTER_KEY": b}).start()
    assert "no secret sealed with a master key yet" in srv.read_log()
    srv.stop()
    assert MISMATCH in refused(fresh_server, srv.data_dir, {"ACCORD_MASTER_KEY": a})
