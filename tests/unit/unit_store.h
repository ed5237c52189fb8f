/* The store a unit test of the store's users runs on: SQLite in a folder of its own by
 * default; PostgreSQL — a fresh database in the cluster $ACCORD_TEST_DB names — when the
 * test runs inside `scripts/pg-cluster run` (make unit-pg), so that those tests cover both
 * backends.  Included by the test, which is run from the repository's top folder. */
#ifndef ACCORD_TESTS_UNIT_UNIT_STORE_H
#define ACCORD_TESTS_UNIT_UNIT_STORE_H

#include "pg_cluster.h"

/* The URL of the test's store in out: "sqlite:<dir>/accord.db", or database db (a plain
 * name) of $ACCORD_TEST_DB's cluster, created anew.  0, or -1 when it cannot be made. */
static inline int unit_store_url(const char *dir, const char *db, char *out, size_t cap)
{
	const char *env = getenv("ACCORD_TEST_DB");

	if (!env || !*env)
		return str_fmt(out, cap, "sqlite:%s/accord.db", dir);
	if (pg_cluster_start(db) != 0)
		return -1;
	return pg_cluster_new_db(db, out, cap);
}

#endif
