"""How a process's rows are kept on SQLite (issue 27 item 2): the per-process tables keyed
by text are WITHOUT ROWID (migration 045), and the status history is read from the
PROCESS_STATUS events (migration 048 dropped process_status_history, which repeated them);
a database from before those migrations keeps every row and every answer."""
import datetime
import subprocess

import pytest

import db_util
from conftest import ADMIN_KEY, BIN, Client, start_process, wait_process
from proc_util import HELLO

pytestmark = pytest.mark.skipif(db_util.PG, reason="SQLite's table layout")


# The tables as migrations 004-043 left them (rowid tables), to take a database back to 044:
# name -> (columns, indexes).
ROWID_TABLES = {
    "process_payloads": (
        "instance_id TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE, data BLOB NOT NULL", []),
    "process_start_payloads": (
        "instance_id TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE, data BLOB NOT NULL", []),
    "process_meta_keys": (
        "instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE, key TEXT NOT NULL,"
        " value TEXT NOT NULL, project_id TEXT, created_at INTEGER NOT NULL, PRIMARY KEY (instance_id, key)",
        ["CREATE INDEX process_meta_keys_project ON process_meta_keys"
         " (project_id, key, value, created_at, instance_id)"]),
    "process_log_chunks": (
        "instance_id TEXT NOT NULL REFERENCES processes (instance_id) ON DELETE CASCADE,"
        " start_off INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (instance_id, start_off)", []),
    "process_scopes": (
        "instance_id TEXT PRIMARY KEY REFERENCES processes (instance_id) ON DELETE CASCADE, scopes TEXT NOT NULL", []),
}


# process_status_history as migrations 004-044 left it, filled as the server filled it (a row
# for each PROCESS_STATUS event, with its id).
HISTORY_044 = [
    "CREATE TABLE process_status_history (id TEXT PRIMARY KEY, instance_id TEXT NOT NULL REFERENCES processes"
    " (instance_id) ON DELETE CASCADE, status TEXT NOT NULL, change_date INTEGER NOT NULL)",
    "CREATE INDEX process_status_history_instance ON process_status_history (instance_id, change_date)",
    "INSERT INTO process_status_history SELECT id, instance_id, json_extract(data, '$.status'), event_date"
    " FROM process_events WHERE event_type = 'PROCESS_STATUS'"]


def tables(data):
    return {r[0] for r in db_util.rows(data, "SELECT name FROM sqlite_master WHERE type = 'table'")}


def before_045(data):
    """Rebuilds the tables as rowid tables with their rows, the status history with its rows,
    and forgets migrations 045 and 048."""
    script = list(HISTORY_044)
    for name, (cols, indexes) in ROWID_TABLES.items():
        names = ", ".join(c[1] for c in db_util.rows(data, "PRAGMA table_info(%s)" % name))
        script += ["CREATE TABLE old_%s (%s)" % (name, cols),
                   "INSERT INTO old_%s (%s) SELECT %s FROM %s" % (name, names, names, name),
                   "DROP TABLE %s" % name, "ALTER TABLE old_%s RENAME TO %s" % (name, name)] + indexes
    db_util.execute(data, ";\n".join(script + ["DELETE FROM schema_migrations WHERE number IN (45, 48)"]))


def layouts(data):
    return {name: "WITHOUT ROWID" in sql.upper()
            for name, sql in db_util.rows(data, "SELECT name, sql FROM sqlite_master WHERE type = 'table'")
            if name in ROWID_TABLES}


def contents(data):
    return {t: sorted(db_util.rows(data, "SELECT * FROM %s" % t)) for t in ROWID_TABLES}


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
    # a suspended process stores its working directory (process_payloads); the others'
    # is the payload they were started with (process_start_payloads)
    suspended = start_process(admin, "flows:\n  default:\n    - suspend: go\n")
    wait_process(admin, suspended, ("SUSPENDED",))
    before = seen(admin, [done, waiting, suspended])
    srv.stop()

    # a new database has them keyed WITHOUT ROWID, each row in one b-tree
    assert layouts(data) == {t: True for t in ROWID_TABLES}
    rows = contents(data)
    assert "process_status_history" not in tables(data)
    statuses = db_util.rows(data, "SELECT count(*) FROM process_events WHERE event_type = 'PROCESS_STATUS'")
    assert statuses[0][0] >= 8 and rows["process_log_chunks"]
    assert len(rows["process_start_payloads"]) == 3 and len(rows["process_payloads"]) == 1
    assert ("team" in [r[1] for r in rows["process_meta_keys"]])

    # a database from before migration 045 is brought to it with every row
    before_045(data)
    assert layouts(data) == {t: False for t in ROWID_TABLES}
    assert db_util.rows(data, "SELECT count(*) FROM process_status_history")[0][0] == statuses[0][0]
    r = subprocess.run([BIN, "migrate", "--data", data], capture_output=True, text=True)
    assert r.returncode == 0 and "applied migration 045_process_rows_without_rowid" in r.stderr, r.stderr
    assert "applied migration 048_status_history_from_events" in r.stderr, r.stderr
    assert layouts(data) == {t: True for t in ROWID_TABLES}
    assert "process_status_history" not in tables(data)
    assert contents(data) == rows
    assert db_util.rows(data, "PRAGMA foreign_key_check") == []
    assert db_util.rows(data, "PRAGMA integrity_check") == [("ok",)]

    srv = fresh_server(data_dir=data).start()
    admin = Client(srv.url, ADMIN_KEY)
    assert seen(admin, [done, waiting, suspended]) == before
    # and the server goes on writing them: a new process, the waiting one cancelled
    again = start_process(admin, HELLO)
    assert wait_process(admin, again)["status"] == "FINISHED"
    assert admin.delete("/api/v1/process/%s" % waiting).status_code in (200, 204)
    assert wait_process(admin, waiting)["status"] == "CANCELLED"
    assert "hello from %s" % again in admin.get("/api/v1/process/%s/log" % again).text
