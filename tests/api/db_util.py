"""A server's database seen from the outside, on either backend: the SQLite file of its data
folder, or its PostgreSQL database in the cluster of $ACCORD_TEST_DB (conftest.pg_url).
Tests use these to check what is stored (nothing secret in plain text, rows really deleted)
and to prepare rows the API cannot make (processes aged by weeks).

The SQL given must mean the same on both (plain SELECT/UPDATE/DELETE, literal values);
where the dialects differ a test picks with PG below."""
import collections
import contextlib
import json
import os
import sqlite3
import subprocess

import pytest

from conftest import TEST_DB, pg_url

PG = bool(TEST_DB)
pg_only = pytest.mark.skipif(not PG, reason="PostgreSQL only ($ACCORD_TEST_DB)")
# An expression giving a new random text id on each row it is evaluated for.
RANDOM_ID = "gen_random_uuid()::text" if PG else "lower(hex(randomblob(16)))"


def sqlite_path(data_dir):
    return os.path.join(data_dir, "accord.db")


def psql(data_dir, *args, stdin=None):
    url, _ = pg_url(data_dir)
    return subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url] + list(args), input=stdin,
                          check=True, capture_output=True, text=True).stdout


def rows(data_dir, sql):
    """The rows of one SELECT (whose columns have distinct names), as tuples.  Integers and texts come as such on both backends;
    a blob is bytes on SQLite and PostgreSQL's hex text ('\\x…') there: see blob()."""
    if PG:
        out = psql(data_dir, "-tA", "-f", "-", stdin="SELECT coalesce(json_agg(row_to_json(q)), '[]') FROM (%s) q"
                   % sql)
        return [tuple(r.values()) for r in json.loads(out, object_pairs_hook=collections.OrderedDict)]
    db = sqlite3.connect("file:%s?mode=ro" % sqlite_path(data_dir), uri=True)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def scalar(data_dir, sql):
    found = rows(data_dir, sql)
    assert len(found) == 1 and len(found[0]) == 1, found
    return found[0][0]


def blob(value):
    """A blob column's value as bytes, whichever backend read it."""
    if isinstance(value, str):
        assert value.startswith("\\x"), value
        return bytes.fromhex(value[2:])
    return bytes(value)


def execute(data_dir, script):
    """Runs statements (separated by ';') in one transaction."""
    if PG:
        psql(data_dir, "-1", "-f", "-", stdin=script)
        return
    db = sqlite3.connect(sqlite_path(data_dir))
    try:
        db.executescript("BEGIN;\n%s;\nCOMMIT;" % script)
    finally:
        db.close()


def columns(data_dir, table):
    """The names of a table's columns, in order."""
    if PG:
        return [r[0] for r in rows(data_dir, "SELECT column_name FROM information_schema.columns WHERE table_schema"
                                             " = current_schema() AND table_name = '%s' ORDER BY ordinal_position"
                                   % table)]
    return [r[1] for r in rows(data_dir, "PRAGMA table_info(%s)" % table)]


def everything(data_dir):
    """All the database holds, as bytes to search: the SQLite file with its write-ahead log,
    or a data-only pg_dump of the PostgreSQL database (blobs appear there as hex, so a test
    looks for a value's .hex() too)."""
    if PG:
        url, _ = pg_url(data_dir)
        return subprocess.run(["pg_dump", "--data-only", "-d", url], check=True, capture_output=True).stdout
    out = b""
    for name in ("accord.db", "accord.db-wal"):
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            with open(path, "rb") as f:
                out += f.read()
    return out


def serve_args(data_dir):
    """What `accord serve --data data_dir` needs besides to reach its database."""
    return ["--db", pg_url(data_dir)[0]] if PG else []


@contextlib.contextmanager
def write_lock(data_dir):
    """Holds the database's write lock (what every write transaction of the server takes
    first) until the block ends: SQLite's, or on PostgreSQL the advisory lock of
    src/store/pg.c's PG_TX_BEGIN, in a transaction of a psql session of its own."""
    if not PG:
        db = sqlite3.connect(sqlite_path(data_dir), isolation_level=None, timeout=10)
        try:
            db.execute("BEGIN IMMEDIATE")
            yield
            db.execute("ROLLBACK")
        finally:
            db.close()
        return
    url, _ = pg_url(data_dir)
    session = subprocess.Popen(["psql", "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", "-d", url], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    try:
        session.stdin.write("BEGIN;\nSELECT pg_advisory_xact_lock(4702111234474983745), 'locked';\n")
        session.stdin.flush()
        assert session.stdout.readline().strip() == "|locked"
        yield
        session.stdin.write("ROLLBACK;\n")
    finally:
        session.stdin.close()
        session.wait(20)
