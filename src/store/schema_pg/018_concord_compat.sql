-- A project's outVariablesMode (Concord's ProjectEntry): who may name the out variables of
-- its processes in a start request.  The modes are rawPayloadMode's; DISABLED, Concord's
-- default, refuses them.
ALTER TABLE projects ADD COLUMN out_variables_mode TEXT NOT NULL DEFAULT 'DISABLED';
