/* The scopes a process is held to (process_scopes.h). */
#include "store/process_scopes.h"

#include <stdlib.h>
#include <string.h>

int store_process_scopes_put(struct store_conn *c, const char *id, const char *scopes, struct err *e)
{
	static const char SQL[] = "INSERT INTO process_scopes (instance_id, scopes) VALUES (?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	store_bind_text(st, 2, scopes);
	return store_step_done(st, e);
}

int store_process_scopes_inherit(struct store_conn *c, const char *id, const char *parent_id, struct err *e)
{
	static const char SQL[] = "INSERT INTO process_scopes (instance_id, scopes)"
				  " SELECT ?, scopes FROM process_scopes WHERE instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	store_bind_text(st, 2, parent_id);
	return store_step_done(st, e);
}

int store_process_scopes_get(struct store_conn *c, const char *id, char **out, struct err *e)
{
	static const char SQL[] = "SELECT scopes FROM process_scopes WHERE instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	const char *v;
	int rc;

	*out = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW && (v = store_col_text(st, 0)) && !(*out = strdup(v)))
		rc = err_set(e, ERR_INTERNAL, "out of memory");
	if (rc == STORE_ROW && store_stmt_check(st, e))
		rc = -1;
	store_reset(st);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		return rc;
	}
	return 0;
}
