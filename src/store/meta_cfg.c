#include "store/meta_cfg.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static char *dup_col(struct store_stmt *st, int i, int *rc, struct err *e)
{
	const char *v = store_col_text(st, i);
	char *copy;

	if (!v)
		return NULL;
	copy = strdup(v);
	if (!copy)
		*rc = err_set(e, ERR_INTERNAL, "out of memory");
	return copy;
}

int store_meta_cfg_read(struct store_conn *c, const char *sql, const char *id, const char *what, char **meta,
			char **cfg, struct err *e)
{
	struct store_stmt *st = store_prepare(c, sql, e);
	bool found;
	int rc;

	*meta = *cfg = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	found = rc == STORE_ROW;
	if (found) {
		rc = 0;
		*meta = dup_col(st, 0, &rc, e);
		*cfg = dup_col(st, 1, &rc, e);
	}
	store_reset(st);
	if (rc == STORE_DONE && !found)
		return err_set(e, ERR_NOT_FOUND, "%s not found: %.128s", what, id);
	if (rc < 0) {
		free(*meta);
		free(*cfg);
		*meta = *cfg = NULL;
	}
	return rc < 0 ? rc : 0;
}
