/* A PostgreSQL server for the unit tests that need one (test_store_pg, test_inv_exec_pg):
 * $ACCORD_TEST_DB (a cluster URL whose user may create databases), else $ACCORD_TEST_CLUSTER
 * (the same, given by scripts/run-suites to every suite: the tests that run on SQLite
 * otherwise, unit_store.h, do not look at it), else a throwaway cluster started with
 * scripts/pg-cluster and stopped by pg_cluster_stop.  Included by the test,
 * which is run from the repository's top folder. */
#ifndef ACCORD_TESTS_UNIT_PG_CLUSTER_H
#define ACCORD_TESTS_UNIT_PG_CLUSTER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"

static char pg_cluster_dir[64];	 /* the folder of the cluster we started ("" if none) */
static char pg_cluster_url[512]; /* the cluster (its database accord) */

/* 0: pg_cluster_url is set; 1: no server binaries (the caller skips its server tests, and
 * says so on stderr); -1: the cluster did not start.  who names the test in the message. */
static inline int pg_cluster_start(const char *who)
{
	char cmd[256];
	FILE *f;
	const char *env = getenv("ACCORD_TEST_DB");

	if (!env || !*env)
		env = getenv("ACCORD_TEST_CLUSTER");
	if (env && *env)
		return str_fmt(pg_cluster_url, sizeof pg_cluster_url, "%s", env);
	if (system("scripts/pg-cluster bindir >/dev/null 2>&1") != 0) {
		fprintf(stderr,
			"%s: SKIPPED the server tests: no PostgreSQL server binaries in "
			"/usr/lib/postgresql/*/bin (scripts/deps installs Debian's postgresql)\n",
			who);
		return 1;
	}
	if (str_fmt(pg_cluster_dir, sizeof pg_cluster_dir, "/tmp/accord-pgunit-XXXXXX") || !mkdtemp(pg_cluster_dir) ||
	    str_fmt(cmd, sizeof cmd, "scripts/pg-cluster start %s", pg_cluster_dir) || !(f = popen(cmd, "r")))
		return -1;
	if (!fgets(pg_cluster_url, sizeof pg_cluster_url, f))
		pg_cluster_url[0] = '\0';
	if (pclose(f) != 0 || !*pg_cluster_url)
		return -1;
	pg_cluster_url[strcspn(pg_cluster_url, "\n")] = '\0';
	return 0;
}

/* Runs sql (no double quotes) with psql as the cluster's user; psql's exit status. */
static inline int pg_cluster_psql(const char *sql)
{
	char cmd[1200];

	if (str_fmt(cmd, sizeof cmd,
		    "PGOPTIONS='-c client_min_messages=warning' psql -X -q -d '%s' -c \"%s\" >/dev/null",
		    pg_cluster_url, sql))
		return -1;
	return system(cmd);
}

/* A fresh database db in the cluster (dropped first if there) and its URL in out. */
static inline int pg_cluster_new_db(const char *db, char *out, size_t cap)
{
	char sql[128];

	if (str_fmt(sql, sizeof sql, "DROP DATABASE IF EXISTS %s", db) || pg_cluster_psql(sql) ||
	    str_fmt(sql, sizeof sql, "CREATE DATABASE %s", db) || pg_cluster_psql(sql))
		return -1;
	/* the same cluster: a URL query's dbname wins over the path */
	return str_fmt(out, cap, "%s%sdbname=%s", pg_cluster_url, strchr(pg_cluster_url, '?') ? "&" : "?", db);
}

/* Stops the cluster pg_cluster_start started, if it did. */
static inline int pg_cluster_stop(void)
{
	char cmd[128];

	if (!*pg_cluster_dir)
		return 0;
	return str_fmt(cmd, sizeof cmd, "scripts/pg-cluster stop %s", pg_cluster_dir) || system(cmd) ? -1 : 0;
}

#endif
