/* Applies the numbered migrations of the store's dialect (src/store/schema) in
 * order, each in its own transaction, recording them in schema_migrations.  On PostgreSQL
 * the whole run holds an advisory lock: a node that starts while another migrates waits,
 * then finds the migrations applied.  The dialect's start_sql follows, under the same lock. */
#include <stdio.h>
#include <stdlib.h>

#include "base/datetime.h"
#include "base/log.h"
#include "store/migrations.h"
#include "store/store_impl.h"

static const char SQL_CREATE[] = "CREATE TABLE IF NOT EXISTS schema_migrations ("
				 " number INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)";
static const char SQL_APPLIED[] = "SELECT number FROM schema_migrations";
static const char SQL_ADD[] = "INSERT INTO schema_migrations (number, name, applied_at) VALUES (?, ?, ?)";

/* Marks done[i] for each of the n migrations m[i] that schema_migrations lists: one query
 * for all of them (a query per migration was ~50 round trips at every start). */
static int applied(struct store_conn *c, const struct migration *m, size_t n, bool *done, struct err *e)
{
	struct store_stmt *st = store_prepare(c, SQL_APPLIED, e);
	int rc;

	if (!st)
		return -1;
	while ((rc = store_step(st, e)) == STORE_ROW) {
		int64_t number = store_col_int64(st, 0);
		for (size_t i = 0; i < n; i++)
			if (m[i].number == number)
				done[i] = true;
	}
	store_reset(st);
	return rc < 0 ? rc : 0;
}

static int apply(struct store_conn *c, const struct migration *m, struct err *e)
{
	struct store_stmt *st;
	int rc;

	if ((rc = store_tx_begin(c, e)))
		return rc;
	if ((rc = store_exec(c, m->sql, e))) {
		err_prefix(e, "migration %s", m->name);
		goto fail;
	}
	st = store_prepare(c, SQL_ADD, e);
	if (!st) {
		rc = -1;
		goto fail;
	}
	store_bind_int64(st, 1, m->number);
	store_bind_text(st, 2, m->name);
	store_bind_int64(st, 3, dt_now_ms());
	if ((rc = store_step_done(st, e)))
		goto fail;
	if ((rc = store_tx_commit(c, e)))
		return rc;
	LOG_I("applied migration %s", m->name);
	return 0;
fail:
	store_tx_rollback(c);
	return rc;
}

static int migrate_all(struct store_conn *c, const struct migration *m, struct err *e)
{
	size_t n = 0;
	bool *done;
	int rc;

	if ((rc = store_exec(c, SQL_CREATE, e)))
		return rc;
	while (m[n].name)
		n++;
	if (!(done = calloc(n ? n : 1, sizeof *done)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	rc = applied(c, m, n, done, e);
	for (size_t i = 0; !rc && i < n; i++)
		if (!done[i])
			rc = apply(c, &m[i], e);
	free(done);
	return rc;
}

int store_migrate(struct store *s, struct err *e)
{
	struct store_conn *c = store_conn(s, e);
	struct err ignored;
	int rc;

	if (!c)
		return -1;
	if (s->ops->migrate_lock_sql && (rc = store_exec(c, s->ops->migrate_lock_sql, e)))
		return rc;
	rc = migrate_all(c, s->ops->migrations, e);
	if (!rc && s->ops->start_sql && (rc = store_exec(c, s->ops->start_sql, e)))
		err_prefix(e, "after the migrations");
	/* A failed unlock (connection lost) frees the lock anyway: it is the session's. */
	if (s->ops->migrate_unlock_sql && store_exec(c, s->ops->migrate_unlock_sql, &ignored))
		LOG_W("migrations: %s", ignored.msg);
	return rc;
}

int store_schema_version(struct store *s, int *version, struct err *e)
{
	struct store_conn *c = store_conn(s, e);
	struct store_stmt *st;
	int rc;

	if (!c || !(st = store_prepare(c, "SELECT coalesce(max(number), 0) FROM schema_migrations", e)))
		return -1;
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		*version = (int)store_col_int64(st, 0);
	store_reset(st);
	return rc == STORE_ROW ? 0 : rc < 0 ? rc : err_set(e, ERR_INTERNAL, "no schema version");
}
