/* The sealed sensitive values of processes (sensitive.h). */
#include "store/sensitive.h"

#include <stdlib.h>
#include <string.h>

int store_sensitive_get(struct store_conn *c, const char *instance_id, unsigned char **env, size_t *len, struct err *e)
{
	static const char SQL[] = "SELECT envelope FROM process_sensitive WHERE instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	const void *p;
	int rc;

	*env = NULL;
	*len = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, instance_id);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		p = store_col_blob(st, 0, len);
		if (!(*env = malloc(*len ? *len : 1)))
			rc = err_set(e, ERR_INTERNAL, "out of memory");
		else if (*len)
			memcpy(*env, p, *len);
	}
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_sensitive_put(struct store_conn *c, const char *instance_id, const void *env, size_t len, struct err *e)
{
	static const char SQL[] = "INSERT INTO process_sensitive (instance_id, envelope) VALUES (?, ?)"
				  " ON CONFLICT (instance_id) DO UPDATE SET envelope = excluded.envelope";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, instance_id);
	store_bind_blob(st, 2, env, len);
	return store_step_done(st, e);
}
