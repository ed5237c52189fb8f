/* The one store function of repositories that the clones write (repo/): a successful
 * fetch.  The rest of store/repositories.h is in store/repositories.c. */
#include "store/repositories.h"

int store_repository_fetched(struct store_conn *c, const char *id, int64_t at, const char *commit, struct err *e)
{
	static const char SQL[] = "UPDATE repositories SET fetched_at = ?, fetched_commit = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_int64(st, 1, at);
	store_bind_text(st, 2, commit && *commit ? commit : NULL);
	store_bind_text(st, 3, id);
	/* No row is no error: a create fetches (and checks) before it stores the repository. */
	return store_step_done(st, e);
}
