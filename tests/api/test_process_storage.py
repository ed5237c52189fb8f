"""How a process's rows are kept on SQLite (issue 27 item 2): the per-process tables keyed
by text are WITHOUT ROWID (migration 045), so a status change writes one page of the
history instead of three; a database from before that migration keeps every row."""
import datetime
import subprocess

import pytest

import db_util
from conftest import ADMIN_KEY, BIN, Client, start_process, wait_process
from proc_util import HELLO

pytestmark = pytest.mark.skipif(db_util.PG, reason="SQLite's table layout")

TABLES = ("process_status_history", "process_payloads", "process_start_payloads", "process_meta_keys",
          "process_log_chunks", "process_scopes")

# The tables as migrations 004-043 left them (rowid tables), to take a database back to 044.
BEFORE_045 = """
CREATE TABLE old_history (id TEXT PRIMARY KEY,
    instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    status TEXT NOT NULL, change_date INTEGER NOT NULL);
INSERT INTO old_history SELECT id, instance_id, status, change_date FROM process_status_history;
DROP TABLE process_status_history;
ALTER TABLE old_history RENAME TO process_status_history;
CREATE INDEX process_status_history_instance ON process_status_history (instance_id, change_date);
CREATE TABLE old_payloads (instance_id TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE,
    data BLOB NOT NULL);
INSERT INTO old_payloads SELECT instance_id, data FROM process_payloads;
DROP TABLE process_payloads;
ALTER TABLE old_payloads RENAME TO process_payloads;
CREATE TABLE old_start (instance_id TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE,
    data BLOB NOT NULL);
INSERT INTO old_start SELECT instance_id, data FROM process_start_payloads;
DROP TABLE process_start_payloads;
ALTER TABLE old_start RENAME TO process_start_payloads;
CREATE TABLE old_meta (instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    key TEXT NOT NULL, value TEXT NOT NULL, project_id TEXT, created_at INTEGER NOT NULL,
    PRIMARY KEY (instance_id, key));
INSERT INTO old_meta SELECT instance_id, key, value, project_id, created_at FROM process_meta_keys;
DROP TABLE process_meta_keys;
ALTER TABLE old_meta RENAME TO process_meta_keys;
CREATE INDEX process_meta_keys_project ON process_meta_keys (project_id, key, value, created_at, instance_id);
CREATE TABLE old_logs (instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,
    start_off INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (instance_id, start_off));
INSERT INTO old_logs SELECT instance_id, start_off, data FROM process_log_chunks;
DROP TABLE process_log_chunks;
ALTER TABLE old_logs RENAME TO process_log_chunks;
CREATE TABLE old_scopes (instance_id TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE,
    scopes TEXT NOT NULL);
INSERT INTO old_scopes SELECT instance_id, scopes FROM process_scopes;
DROP TABLE process_scopes;
ALTER TABLE old_scopes RENAME TO process_scopes;
DELETE FROM schema_migrations WHERE number = 45
"""


def layouts(data):
    return {name: "WITHOUT ROWID" in sql.upper()
            for name, sql in db_util.rows(data, "SELECT name, sql FROM sqlite_master WHERE type = 'table'")
            if name in TABLES}


def contents(data):
    return {t: sorted(db_util.rows(data, "SELECT * FROM %s" % t)) for t in TABLES}


def seen(client, ids):
    """What the API answers of each process: its record with its history, and its log."""
    out = {}
    for pid in ids:
        p = client.get("/api/v2/process/%s" % pid, params={"include": "history"}).json()
        log = client.get("/api/v1/process/%s/log" % pid).text
        out[pid] = (p["status"], p["meta"], [(h["id"], h["status"]) for h in p["statusHistory"]], log)
    return out


def test_process_rows_without_rowid_and_the_upgrade_keeps_them(tmp_path, fresh_server):
    data = str(tmp_path / "data")
    srv = fresh_server(data_dir=data).start()
    admin = Client(srv.url, ADMIN_KEY)
    done = start_process(admin, HELLO, files={"meta": (b'{"team": "blue"}', "application/json")})
    wait_process(admin, done)
    later = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)).isoformat()
    waiting = start_process(admin, HELLO, parts={"startAt": later})
    before = seen(admin, [done, waiting])
    srv.stop()

    # a new database has them keyed WITHOUT ROWID, each row in one b-tree
    assert layouts(data) == {t: True for t in TABLES}
    rows = contents(data)
    assert len(rows["process_status_history"]) >= 6 and rows["process_log_chunks"]
    assert len(rows["process_start_payloads"]) == 2 and len(rows["process_payloads"]) == 1
    assert ("team" in [r[1] for r in rows["process_meta_keys"]])

    # a database from before migration 045 is brought to it with every row
    db_util.execute(data, BEFORE_045)
    assert layouts(data) == {t: False for t in TABLES}
    r = subprocess.run([BIN, "migrate", "--data", data], capture_output=True, text=True)
    assert r.returncode == 0 and "applied migration 045_process_rows_without_rowid" in r.stderr, r.stderr
    assert layouts(data) == {t: True for t in TABLES}
    assert contents(data) == rows
    assert db_util.rows(data, "PRAGMA foreign_key_check") == []
    assert db_util.rows(data, "PRAGMA integrity_check") == [("ok",)]

    srv = fresh_server(data_dir=data).start()
    admin = Client(srv.url, ADMIN_KEY)
    assert seen(admin, [done, waiting]) == before
    # and the server goes on writing them: a new process, the waiting one cancelled
    again = start_process(admin, HELLO)
    assert wait_process(admin, again)["status"] == "FINISHED"
    assert admin.delete("/api/v1/process/%s" % waiting).status_code in (200, 204)
    assert wait_process(admin, waiting)["status"] == "CANCELLED"
    assert "hello from %s" % again in admin.get("/api/v1/process/%s/log" % again).text
