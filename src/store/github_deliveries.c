/* The GitHub webhook deliveries seen (github_deliveries.h). */
#include "store/github_deliveries.h"

int store_github_delivery_seen(struct store_conn *c, const char *id, int64_t now_ms, bool *first, struct err *e)
{
	static const char SQL_ADD[] = "INSERT INTO github_deliveries (id, received_at) VALUES (?, ?)"
				      " ON CONFLICT (id) DO NOTHING";
	static const char SQL_OLD[] = "DELETE FROM github_deliveries WHERE received_at < ?";
	struct store_stmt *st;
	int rc;

	*first = false;
	if ((rc = store_tx_begin_rows(c, e)))
		return rc;
	if (!(st = store_prepare(c, SQL_OLD, e)))
		goto fail;
	store_bind_int64(st, 1, now_ms - GITHUB_DELIVERY_KEEP_MS);
	if (store_step_done(st, e) || !(st = store_prepare(c, SQL_ADD, e)))
		goto fail;
	store_bind_text(st, 1, id);
	store_bind_int64(st, 2, now_ms);
	if (store_step_done(st, e))
		goto fail;
	*first = store_changes(c) == 1;
	return store_tx_commit(c, e);
fail:
	store_tx_rollback(c);
	return -1;
}
