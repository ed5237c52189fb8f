"""The indexes of processes (migration 047, issue 27 item 2): each is written at every
insert (and, where it holds status, at every status change), so only those a query uses
are kept, and the project and parent ones hold only rows with a project or a parent — a
process started without either is written into none of them.  The queries still find
what they found (test_process_list.py, test_process_children.py, test_process_limits.py
cover the answers); here: the definitions on both backends, and SQLite's plans."""
import re

import pytest

import db_util

NARROWED = {
    "processes_parent": "parent_instance_id",
    "processes_project": "project_id",
    "processes_project_status": "project_id",
    "processes_project_initiator": "project_id",
}
DROPPED = ("processes_initiator",)


def definitions(data):
    if db_util.PG:
        sql = "SELECT indexname AS name, indexdef AS sql FROM pg_indexes WHERE tablename = 'processes'"
    else:
        sql = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'processes'"
    return {name: sql or "" for name, sql in db_util.rows(data, sql)}


def test_only_used_indexes_and_only_rows_they_serve(server):
    defs = definitions(server.data_dir)
    for name in DROPPED:
        assert name not in defs, defs[name]
    for name, col in NARROWED.items():
        assert re.search(r"WHERE \(?%s IS NOT NULL\)?$" % col, defs[name].strip(), re.I), defs[name]
    assert "WHERE" not in defs["processes_status"].upper()  # lists and counts by status alone


@pytest.mark.skipif(db_util.PG, reason="SQLite's planner (PostgreSQL's has statistics)")
def test_the_queries_use_the_narrowed_indexes(server):
    order = " ORDER BY p.created_at DESC, p.instance_id DESC LIMIT 50"
    running_of = ("SELECT initiator_id FROM processes WHERE status IN ('STARTING', 'RUNNING') AND"
                  " parent_instance_id IS NULL AND initiator_id IS NOT NULL GROUP BY initiator_id HAVING count(*) >= 1")
    plans = {  # the SQL of src/store/process_list.c, processes.c and policies.c
        "SELECT p.instance_id FROM processes p WHERE 1 = 1 AND p.project_id = 'x'" + order: "processes_project",
        "SELECT count(*) FROM processes p WHERE 1 = 1 AND p.project_id = 'x' AND p.status = 'FINISHED'":
            "processes_project_status",
        "SELECT count(*) FROM processes p WHERE 1 = 1 AND p.project_id = 'x' AND p.initiator >= 'a'"
        " AND p.initiator < 'b'": "processes_project_initiator",
        "SELECT instance_id FROM processes WHERE parent_instance_id = 'x' ORDER BY created_at, instance_id":
            "processes_parent",
        "SELECT count(*) FROM processes p WHERE 1 = 1 AND p.status = 'FINISHED'": "processes_status",
        running_of: "processes_running",
    }
    for sql, index in plans.items():
        plan = " / ".join(r[3] for r in db_util.rows(server.data_dir, "EXPLAIN QUERY PLAN " + sql))
        assert "INDEX %s " % index in plan, (sql, plan)
