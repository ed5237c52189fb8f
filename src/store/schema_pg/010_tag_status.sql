-- A process's status copied into its tag rows (kept in step by every status change, in
-- the same transaction), so that a list or count with a project, a tag and a status reads
-- process_tags alone, newest first, instead of looking up every tagged process
-- (bench/processes/fill: a count with tags=nightly and status=FINISHED walked 78,000 rows).
ALTER TABLE process_tags ADD COLUMN status TEXT;
UPDATE process_tags SET status = (SELECT p.status FROM processes p WHERE p.instance_id = process_tags.instance_id);
CREATE INDEX process_tags_project_status ON process_tags (project_id, tag, status, created_at, instance_id);
