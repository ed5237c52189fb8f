/* The commands on a data folder's database: accord backup / accord restore (a consistent
 * copy while the server runs, and putting one back while it is stopped) and accord migrate
 * (its schema brought up to date without starting a server). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/path.h"
#include "base/str.h"
#include "cli/commands.h"
#include "cli/datalock.h"
#include "store/backup.h"
#include "store/store.h"

#define EXIT_USAGE 2
/* What to use on PostgreSQL instead (docs/operations.md "Running several nodes"). */
#define PG_DUMP                                                                                                        \
	"back it up with pg_dump, also while the nodes run (pg_dump -Fc -d DATABASE -f accord.dump), and keep the "    \
	"master key with it"
#define PG_RESTORE                                                                                                     \
	"restore a pg_dump with pg_restore into an empty database while the nodes are stopped (pg_restore -d "         \
	"DATABASE accord.dump), with the master key of the dump"

struct backup_args {
	const char *data;    /* --data, else ACCORD_DATA, else ./data */
	const char *db;	     /* --db, else ACCORD_DB, else NULL: the data folder's accord.db */
	const char *db_from; /* "--db" or "ACCORD_DB" */
	const char *file;    /* the one positional argument (none for migrate) */
};

static const char BACKUP_USAGE[] =
    "usage: accord backup [--data DIR] [--db DB] OUT.db\n\n"
    "Writes a consistent copy of DIR/accord.db to OUT.db, also while `accord serve` runs on DIR\n"
    "(SQLite's online backup: one read snapshot, copied 256 pages at a time; the server keeps\n"
    "writing meanwhile).  OUT.db is written under a temporary name, checked (integrity_check)\n"
    "and synced, then renamed: an existing OUT.db is replaced only by a complete copy.\n\n"
    "  --data DIR   data folder (default: $ACCORD_DATA, else ./data)\n"
    "  --db DB      the database, as `accord serve --db` (default: $ACCORD_DB, else DIR/accord.db):\n"
    "               sqlite:PATH or a path.  A PostgreSQL database is refused: use pg_dump\n"
    "               (docs/operations.md \"Running several nodes\")\n\n"
    "The master key is not in the copy: back up DIR/master.key (or ACCORD_MASTER_KEY)\n"
    "separately, or the secrets of the copy cannot be read.  Exit status: 0 written, 1 failed,\n"
    "2 usage error.\n";

static const char MIGRATE_USAGE[] =
    "usage: accord migrate [--data DIR] [--db DB]\n\n"
    "Applies the schema migrations this build has and the database lacks, then exits, as\n"
    "`accord serve` does at every start: to upgrade a database ahead of starting the nodes, or\n"
    "to make one ready to copy (PostgreSQL's CREATE DATABASE … TEMPLATE).  On PostgreSQL nodes\n"
    "that start meanwhile wait for it (one advisory lock); a SQLite file is refused while\n"
    "`accord serve` runs on DIR.\n\n"
    "  --data DIR   data folder (default: $ACCORD_DATA, else ./data)\n"
    "  --db DB      the database, as `accord serve --db` (default: $ACCORD_DB, else DIR/accord.db)\n\n"
    "Exit status: 0 up to date (the schema version is printed), 1 failed, 2 usage error.\n";

static const char RESTORE_USAGE[] =
    "usage: accord restore [--data DIR] [--db DB] IN.db\n\n"
    "Replaces the database DIR/accord.db (or --db; created if missing) with the backup IN.db, after\n"
    "checking it (integrity_check, a schema version this build knows).  The server must be\n"
    "stopped: restore refuses while `accord serve` holds DIR (DIR/accord.pid is locked).\n"
    "Migrations newer than the backup run at the next start.\n\n"
    "  --data DIR   data folder (default: $ACCORD_DATA, else ./data)\n"
    "  --db DB      the database to replace, as `accord serve --db` (default: $ACCORD_DB, else\n"
    "               DIR/accord.db): sqlite:PATH or a path.  A PostgreSQL database is refused: use\n"
    "               pg_restore (docs/operations.md \"Running several nodes\")\n\n"
    "Secrets need the master key that was in use when the backup was taken (DIR/master.key\n"
    "or ACCORD_MASTER_KEY).  Exit status: 0 restored, 1 failed, 2 usage error.\n";

/* Takes `NAME VALUE` or `NAME=VALUE` at argv[*i] into *out: 1 taken (*i moved past it), 0 not
 * this option, -1 no value (said on stderr). */
static int option(const char *cmd, const char *name, const char *what, int argc, char **argv, int *i, const char **out)
{
	const char *s = argv[*i];
	size_t n = strlen(name);

	if (strncmp(s, name, n) != 0 || (s[n] && s[n] != '='))
		return 0;
	if (s[n] == '=' ? !s[n + 1] : *i + 1 >= argc || !*argv[*i + 1]) {
		fprintf(stderr, "accord %s: %s needs %s\n", cmd, name, what);
		return -1;
	}
	*out = s[n] == '=' ? s + n + 1 : argv[++*i];
	return 1;
}

/* 0 parsed, 1 --help printed, 2 usage error printed. */
static int parse(const char *cmd, const char *usage, bool wants_file, int argc, char **argv, struct backup_args *a)
{
	const char *env = getenv("ACCORD_DATA"), *db_env = getenv("ACCORD_DB");

	a->data = env && *env ? env : "./data";
	a->db = db_env && *db_env ? db_env : NULL;
	a->db_from = "ACCORD_DB";
	a->file = NULL;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		int got;
		if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
			fputs(usage, stdout);
			return 1;
		} else if ((got = option(cmd, "--data", "a folder", argc, argv, &i, &a->data)) ||
			   (got = option(cmd, "--db", "a database", argc, argv, &i, &a->db))) {
			if (got < 0)
				return 2;
			if (strncmp(s, "--db", 4) == 0)
				a->db_from = "--db";
		} else if (s[0] == '-' && s[1]) {
			fprintf(stderr, "accord %s: unknown option '%s' (see accord %s --help)\n", cmd, s, cmd);
			return 2;
		} else if (!wants_file) {
			fprintf(stderr, "accord %s: unexpected argument '%s' (see accord %s --help)\n", cmd, s, cmd);
			return 2;
		} else if (a->file) {
			fprintf(stderr, "accord %s: one file only ('%s' and '%s' given)\n", cmd, a->file, s);
			return 2;
		} else {
			a->file = s;
		}
	}
	if (wants_file && !a->file) {
		fprintf(stderr, "accord %s: which file? (usage: accord %s [--data DIR] FILE.db)\n", cmd, cmd);
		return 2;
	}
	return 0;
}

/* The SQLite file to back up or replace: --db (or ACCORD_DB) as `accord serve` reads it, else
 * DIR/accord.db.  A PostgreSQL database is refused with what to use instead. */
static int db_path(const struct backup_args *a, const char *instead, char *out, size_t n, struct err *e)
{
	if (a->db && store_url_is_pg(a->db))
		return err_set(e, ERR_INVALID,
			       "%s names a PostgreSQL database, and accord backup and restore work on SQLite files "
			       "only: %s (docs/operations.md \"Running several nodes\")",
			       a->db_from, instead);
	if (a->db ? str_fmt(out, n, "%s", strncmp(a->db, "sqlite:", 7) == 0 ? a->db + 7 : a->db)
		  : str_fmt(out, n, "%s/accord.db", a->data))
		return err_set(e, ERR_INVALID, "%s: path too long (limit %zu bytes)", a->db ? a->db_from : "--data",
			       a->db ? n - 1 : n - 11);
	if (!*out)
		return err_set(e, ERR_INVALID, "%s names no file", a->db_from);
	return 0;
}

int cli_backup_main(int argc, char **argv)
{
	struct backup_args a;
	struct store_backup_info info = {0};
	struct err e = {0};
	char db[4200];
	int rc = parse("backup", BACKUP_USAGE, true, argc, argv, &a);

	if (rc)
		return rc == 1 ? 0 : EXIT_USAGE;
	umask(077);
	if (db_path(&a, PG_DUMP, db, sizeof db, &e) || store_backup_to_file(db, a.file, &info, &e)) {
		/* A data folder without accord.db may be one of a server on PostgreSQL whose
		 * --db this shell does not have. */
		fprintf(stderr, "accord backup: %s%s\n", e.msg,
			e.code == ERR_NOT_FOUND && !a.db
			    ? "; a server on PostgreSQL (--db, ACCORD_DB) is backed up with "
			      "pg_dump (docs/operations.md \"Running several nodes\")"
			    : "");
		return 1;
	}
	printf("backup of %s written to %s: %lld pages, %lld bytes, schema version %d, %lld ms\n"
	       "remember the master key: %s/master.key (or ACCORD_MASTER_KEY) is not in the backup\n",
	       db, a.file, (long long)info.pages, (long long)info.bytes, info.schema, (long long)info.elapsed_ms,
	       a.data);
	return 0;
}

/* Run as root on a folder that belongs to the service's user (/var/lib/accord): the files
 * restore made must belong to that user too, or the server cannot open them. */
static void give_to_folder_owner(const char *dir)
{
	static const char *const names[] = {"accord.db", "accord.db-wal", "accord.db-shm", DATALOCK_FILE};
	struct stat st;
	char path[4200];

	if (geteuid() != 0 || stat(dir, &st) != 0 || st.st_uid == 0)
		return;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (str_fmt(path, sizeof path, "%s/%s", dir, names[i])) {
			fprintf(stderr, "accord restore: %s/%s: path too long\n", dir, names[i]);
			continue;
		}
		if (chown(path, st.st_uid, st.st_gid) != 0 && errno != ENOENT)
			fprintf(stderr, "accord restore: cannot give %s to uid %u: %s\n", path, (unsigned)st.st_uid,
				strerror(errno));
	}
}

int cli_restore_main(int argc, char **argv)
{
	struct backup_args a;
	struct store_backup_info info = {0};
	struct err e = {0};
	char db[4200];
	int rc = parse("restore", RESTORE_USAGE, true, argc, argv, &a), lock;

	if (rc)
		return rc == 1 ? 0 : EXIT_USAGE;
	umask(077);
	/* Check where to and the backup before anything in the data folder changes. */
	if (db_path(&a, PG_RESTORE, db, sizeof db, &e) || store_backup_check(a.file, &info, &e)) {
		fprintf(stderr, "accord restore: %s\n", e.msg);
		return 1;
	}
	if (path_mkdirs(a.data, 0700, &e)) {
		fprintf(stderr, "accord restore: %s\n", e.msg);
		return 1;
	}
	lock = datalock_take(a.data, ": stop the server before restoring", &e);
	if (lock < 0) {
		fprintf(stderr, "accord restore: %s\n", e.msg);
		return 1;
	}
	rc = store_backup_restore(a.file, db, &info, &e);
	give_to_folder_owner(a.data);
	datalock_release(lock);
	if (rc) {
		fprintf(stderr, "accord restore: %s\n", e.msg);
		return 1;
	}
	printf("restored %s into %s: schema version %d, %lld ms\n"
	       "secrets need the master key of the backup: %s/master.key or ACCORD_MASTER_KEY\n",
	       a.file, db, info.schema, (long long)info.elapsed_ms, a.data);
	return 0;
}

int cli_migrate_main(int argc, char **argv)
{
	struct backup_args a;
	struct store *store;
	struct err e = {0};
	char db[4200];
	const char *url;
	int rc = parse("migrate", MIGRATE_USAGE, false, argc, argv, &a), lock = -1, version = 0;

	if (rc)
		return rc == 1 ? 0 : EXIT_USAGE;
	umask(077);
	if (a.db && store_url_is_pg(a.db)) {
		url = a.db;
	} else {
		if (db_path(&a, "", db, sizeof db, &e) || path_mkdirs(a.data, 0700, &e) ||
		    (lock = datalock_take(a.data, ": stop the server first, or let it migrate at its start", &e)) < 0) {
			fprintf(stderr, "accord migrate: %s\n", e.msg);
			return 1;
		}
		url = db;
	}
	store = store_open(url, &e);
	rc = store && store_schema_version(store, &version, &e) == 0 ? 0 : 1;
	if (rc)
		fprintf(stderr, "accord migrate: %s\n", e.msg);
	else
		printf("database up to date: schema version %d\n", version);
	if (store)
		store_close(store);
	datalock_release(lock);
	return rc;
}
