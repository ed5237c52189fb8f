-- Issue 29 (Concord compatibility).
--
-- A project's outVariablesMode (Concord's ProjectEntry): who may name the out variables of
-- its processes in a start request.  The modes are rawPayloadMode's; DISABLED, Concord's
-- default, refuses them.
ALTER TABLE projects ADD COLUMN out_variables_mode TEXT NOT NULL DEFAULT 'DISABLED';

-- User names are stored in lower case, as Concord stores them (the API folds new names;
-- lookups always folded case).  Here the ASCII letters of existing names, as on SQLite.
UPDATE users SET username = translate(username, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
    WHERE username ~ '[A-Z]';
