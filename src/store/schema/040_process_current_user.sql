-- A form's runAs.keep (issue 30 part 1, docs/api.md "Forms"): the user on whose behalf a
-- process runs once such a form was submitted — its currentUser and the identity of its
-- session token — while initiator_id stays who started it.  NULL: the initiator.
ALTER TABLE processes ADD COLUMN current_user_id TEXT;
