-- Timeouts and exclusive groups (issue 9).  A SUSPENDED process with a suspendTimeout is
-- due at last_updated_at + suspend_timeout_s s: the expression index gives the dispatcher
-- the next deadline and the due ones without a scan.  A process of a project may belong
-- to an exclusive group (configuration.exclusive) with a mode: cancel, cancelOld or wait.

CREATE INDEX processes_suspend_due ON processes ((last_updated_at + suspend_timeout_s * 1000))
    WHERE status = 'SUSPENDED' AND suspend_timeout_s > 0;

ALTER TABLE processes ADD COLUMN exclusive_group TEXT;
ALTER TABLE processes ADD COLUMN exclusive_mode TEXT;
CREATE INDEX processes_exclusive ON processes (project_id, exclusive_group, created_at)
    WHERE exclusive_group IS NOT NULL;
