/* The one store function of repositories that the clones write (repo/): a successful
 * fetch.  The rest of store/repositories.h is in store/repositories.c. */
#include "store/repositories.h"

int store_repository_fetched(struct store_conn *c, const char *id, int64_t at, const char *commit, struct err *e)
{
	static const char SQL[] = "UPDATE repositories SET fetched_at = ?, fetched_commit = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_int64(st, 1, at);
	store_bind_text(st, 2, commit && *commit ? commit : NULL);
	store_bind_text(st, 3, id);
	rc = store_step_done(st, e);
	if (rc == 0 && store_changes(c) == 0)
		return err_set(e, ERR_NOT_FOUND, "Repository not found: %s", id);
	return rc;
}
