-- Fewer index writes per process (issue 27 item 2).  Each index of processes is written at
-- every insert and, where it holds status, at every status change; each is kept only where
-- a query uses it (EXPLAIN QUERY PLAN of the list, count, claim, policy, retention and
-- recovery queries: bench/RESULTS.md "the claim folded into the end, indexes narrowed").
-- * processes_initiator (initiator_id, created_at): no query reads it (the visibility
--   filter walks processes_created on purpose, process_list.c).
-- * processes_running stays (1.6 WAL frames a process): without it the running limits'
--   counts read the STARTING and RUNNING rows from the table through processes_status, and
--   a claim with limits on took 20-100% longer with 200 running (bench/processes/claim).
-- * The project indexes and processes_parent answer only `project_id = ?` and
--   `parent_instance_id = ?`, which no row without a project or a parent matches: those
--   rows (processes started without a project, every top-level process) are left out.
-- The same text for PostgreSQL, whose planner proves `x = $1` implies `x IS NOT NULL`.

DROP INDEX processes_initiator;
DROP INDEX processes_parent;
CREATE INDEX processes_parent ON processes (parent_instance_id, created_at) WHERE parent_instance_id IS NOT NULL;
DROP INDEX processes_project;
CREATE INDEX processes_project ON processes (project_id, created_at, instance_id) WHERE project_id IS NOT NULL;
DROP INDEX processes_project_status;
CREATE INDEX processes_project_status ON processes (project_id, status, created_at, instance_id)
    WHERE project_id IS NOT NULL;
DROP INDEX processes_project_initiator;
CREATE INDEX processes_project_initiator ON processes (project_id, initiator, created_at) WHERE project_id IS NOT NULL;
