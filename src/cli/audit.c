/* accord audit verify: proves that no entry of the audit log was changed, removed, added or
 * reordered since it was written (store/audit_chain.h, docs/security.md "The audit chain"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sodium.h>

#include "base/str.h"
#include "cli/commands.h"
#include "crypto/auditkey.h"
#include "crypto/masterkey.h"
#include "store/audit_chain.h"
#include "store/store.h"

#define EXIT_USAGE 2

static const char USAGE[] =
    "usage: accord audit verify [--data DIR] [--db DB]\n\n"
    "Walks the audit log's chain from its oldest kept entry to its head and says whether every\n"
    "entry is as it was written: none changed, removed, added or reordered, and none cut off the\n"
    "end.  Else it names the first entry that is not.  It needs the master key the entries were\n"
    "chained with, as a server start does: ACCORD_MASTER_KEY, else DIR/master.key.  It only\n"
    "reads, also while servers run (it applies no migration).\n\n"
    "  --data DIR   data folder (default: $ACCORD_DATA, else ./data)\n"
    "  --db DB      the database, as `accord serve --db` (default: $ACCORD_DB, else DIR/accord.db)\n\n"
    "Exit status: 0 the chain verifies, 1 it does not (or it could not be read), 2 usage error.\n";

struct args {
	const char *data, *db;
};

static int parse(int argc, char **argv, struct args *a)
{
	const char *env = getenv("ACCORD_DATA"), *db_env = getenv("ACCORD_DB");

	a->data = env && *env ? env : "./data";
	a->db = db_env && *db_env ? db_env : NULL;
	if (argc < 2 || strcmp(argv[1], "verify") != 0) {
		if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
			fputs(USAGE, stdout);
			return 1;
		}
		fprintf(stderr, "accord audit: which action? (usage: accord audit verify [--data DIR] [--db DB])\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		const char *s = argv[i], **out = NULL;
		size_t n = 0;
		if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
			fputs(USAGE, stdout);
			return 1;
		}
		if (strncmp(s, "--data", 6) == 0 && (s[6] == '\0' || s[6] == '='))
			out = &a->data, n = 6;
		else if (strncmp(s, "--db", 4) == 0 && (s[4] == '\0' || s[4] == '='))
			out = &a->db, n = 4;
		if (!out) {
			fprintf(stderr, "accord audit verify: unknown argument '%s' (see accord audit --help)\n", s);
			return 2;
		}
		if (s[n] == '=' ? !s[n + 1] : i + 1 >= argc || !*argv[i + 1]) {
			fprintf(stderr, "accord audit verify: %.*s needs a value\n", (int)n, s);
			return 2;
		}
		*out = s[n] == '=' ? s + n + 1 : argv[++i];
	}
	return 0;
}

/* The master key as a server would take it, never creating one. */
static int load_key(const struct args *a, struct masterkey *mk, struct err *e)
{
	const char *env = getenv("ACCORD_MASTER_KEY");
	char path[4200];
	int rc;

	if (env && *env)
		return masterkey_load(env, a->data, mk, NULL, e);
	if (str_fmt(path, sizeof path, "%s/%s", a->data, MASTERKEY_FILE))
		return err_set(e, ERR_INVALID, "--data: path too long");
	rc = masterkey_load_file(path, mk, e);
	if (rc == -ERR_NOT_FOUND)
		return err_set(e, ERR_NOT_FOUND,
			       "no master key: %s does not exist and ACCORD_MASTER_KEY is not set (the chain is keyed "
			       "with the master key the server uses)",
			       path);
	return rc;
}

/* The database to read: a PostgreSQL URL as given, else an existing SQLite file. */
static int db_url(const struct args *a, char *out, size_t cap, struct err *e)
{
	struct stat st;
	const char *path;

	if (a->db && store_url_is_pg(a->db))
		return str_fmt(out, cap, "%s", a->db) ? err_set(e, ERR_INVALID, "--db: too long") : 0;
	if (a->db ? str_fmt(out, cap, "%s", a->db) : str_fmt(out, cap, "sqlite:%s/accord.db", a->data))
		return err_set(e, ERR_INVALID, "--db or --data: path too long");
	path = strncmp(out, "sqlite:", 7) == 0 ? out + 7 : out;
	if (stat(path, &st) != 0)
		return err_set(e, ERR_NOT_FOUND, "no database at %s", path);
	return 0;
}

int cli_audit_main(int argc, char **argv)
{
	struct args a;
	struct err e = {0};
	struct masterkey *mk = sodium_malloc(sizeof *mk);
	struct audit_keys *k = sodium_malloc(sizeof *k);
	struct audit_verdict v;
	struct store *store = NULL;
	struct store_conn *conn;
	char url[4200];
	int rc = parse(argc, argv, &a);

	if (rc || !mk || !k) {
		if (!rc)
			fprintf(stderr, "accord audit verify: out of memory\n");
		sodium_free(mk);
		sodium_free(k);
		return rc == 1 ? 0 : rc ? EXIT_USAGE : 1;
	}
	rc = 1;
	if (load_key(&a, mk, &e) || db_url(&a, url, sizeof url, &e) || !(store = store_open_as_is(url, &e)) ||
	    !(conn = store_conn(store, &e)))
		goto out;
	auditkey_derive(mk, k);
	if (store_audit_chain_verify(conn, k, &v, &e))
		goto out;
	if (v.ok) {
		if (v.entries)
			printf("audit chain verified: entries %lld to %lld (%lld), none changed, removed, added or "
			       "reordered\n",
			       (long long)v.first_no, (long long)v.last_no, (long long)v.entries);
		else
			printf("audit chain verified: no entries kept (up to entry %lld removed by retention)\n",
			       (long long)v.last_no);
		rc = 0;
	} else {
		printf("audit chain does NOT verify: %s\n", v.problem);
	}
out:
	if (rc && e.msg[0])
		fprintf(stderr, "accord audit verify: %s%s\n", e.msg,
			strstr(e.msg, "audit_chain") ? " (the database's schema is older: start a server of this version "
						       "once, or run accord migrate)"
						     : "");
	if (store)
		store_close(store);
	sodium_free(mk);
	sodium_free(k);
	return rc;
}
