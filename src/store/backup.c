/* Online backup and restore of a SQLite store (store/backup.h). */
#include "store/backup.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/datetime.h"
#include "base/str.h"
#include "store/migrations.h"
#include "store/sqlite_api.h"

static int db_err(sqlite3 *db, const char *what, const char *path, struct err *e)
{
	return err_set(e, ERR_INTERNAL, "%s %s: %s", what, path, db ? sqlite.errmsg(db) : "out of memory");
}

static int db_open(const char *path, int flags, sqlite3 **db, struct err *e)
{
	if (sqlite.open_v2(path, db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		int rc = db_err(*db, "cannot open database", path, e);
		sqlite.close(*db);
		*db = NULL;
		return rc;
	}
	sqlite.busy_timeout(*db, 10000);
	return 0;
}

int store_schema_latest(void)
{
	int n = 0;

	for (const struct migration *m = store_migrations; m->name; m++)
		if (m->number > n)
			n = m->number;
	return n;
}

/* Copies every page of src into dst in steps; src is read within the caller's snapshot. */
static int copy_pages(sqlite3 *src, sqlite3 *dst, const char *dst_path, struct store_backup_info *info, struct err *e)
{
	sqlite3_backup *b = sqlite.backup_init(dst, "main", src, "main");
	int rc;

	if (!b)
		return db_err(dst, "cannot copy into", dst_path, e);
	do {
		rc = sqlite.backup_step(b, STORE_BACKUP_STEP_PAGES);
		if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
			sqlite.sleep(10);
	} while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
	if (info)
		info->pages = sqlite.backup_pagecount(b);
	sqlite.backup_finish(b);
	if (rc != SQLITE_DONE)
		return err_set(e, ERR_INTERNAL, "copy into %s failed: %s", dst_path, sqlite.errstr(rc));
	return 0;
}

static int exec(sqlite3 *db, const char *sql, const char *path, struct err *e)
{
	char *msg = NULL;

	if (sqlite.exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	err_set(e, ERR_INTERNAL, "%s: %s", path, msg ? msg : sqlite.errmsg(db));
	sqlite.free(msg);
	return -ERR_INTERNAL;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int sync_path(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* Makes the new file at tmp durable and moves it to dst. */
static int publish(const char *tmp, const char *dst, struct err *e)
{
	char dir[PATH_MAX];

	if (sync_path(tmp, O_RDONLY) != 0)
		return err_set(e, ERR_INTERNAL, "cannot sync %s: %s", tmp, strerror(errno));
	if (rename(tmp, dst) != 0)
		return err_set(e, ERR_INTERNAL, "cannot rename %s to %s: %s", tmp, dst, strerror(errno));
	if (str_fmt(dir, sizeof dir, "%s", dst))
		return err_set(e, ERR_INVALID, "cannot sync the folder of %s: path too long (limit %zu bytes)", dst,
			       sizeof dir - 1);
	sync_path(dirname(dir), O_RDONLY | O_DIRECTORY);
	return 0;
}

int store_backup_to_file(const char *src_path, const char *dst_path, struct store_backup_info *info, struct err *e)
{
	sqlite3 *src = NULL, *dst = NULL;
	char tmp[PATH_MAX];
	int64_t t0 = dt_mono_ns();
	struct stat st;
	int rc;

	if (sqlite_api_load(e))
		return -1;
	if (stat(src_path, &st) != 0)
		return err_set(e, ERR_NOT_FOUND, "no database at %s: %s", src_path, strerror(errno));
	if (same_file(src_path, dst_path))
		return err_set(e, ERR_INVALID, "%s is the database itself: write the backup somewhere else", dst_path);
	if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp-%ld", dst_path, (long)getpid()) >= sizeof tmp)
		return err_set(e, ERR_INVALID, "backup path too long: %s", dst_path);
	unlink(tmp);
	/* Read-write without create: a WAL database needs its -shm, and a typo must not
	 * create an empty database. */
	if ((rc = db_open(src_path, SQLITE_OPEN_READWRITE, &src, e)) ||
	    (rc = db_open(tmp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &dst, e)))
		goto out;
	/* One read transaction over the whole copy: one instant of the database, and no
	 * restart of the copy when the server commits meanwhile. */
	if ((rc = exec(src, "BEGIN; SELECT count(*) FROM sqlite_schema;", src_path, e)) ||
	    (rc = copy_pages(src, dst, tmp, info, e)))
		goto out;
	exec(src, "COMMIT", src_path, e);
	if ((rc = exec(dst, "PRAGMA journal_mode=DELETE;", tmp, e)))
		goto out;
	sqlite.close(dst);
	dst = NULL;
	if ((rc = store_backup_check(tmp, info, e)) || (rc = publish(tmp, dst_path, e)))
		goto out;
	if (info) {
		info->bytes = stat(dst_path, &st) == 0 ? st.st_size : 0;
		info->elapsed_ms = (dt_mono_ns() - t0) / 1000000;
	}
out:
	sqlite.close(src);
	sqlite.close(dst);
	if (rc)
		unlink(tmp);
	return rc;
}

static int integrity(sqlite3 *db, const char *path, struct err *e)
{
	sqlite3_stmt *st = NULL;
	const char *res;
	int rc;

	if (sqlite.prepare_v2(db, "PRAGMA integrity_check(5)", -1, &st, NULL) != SQLITE_OK)
		return err_set(e, ERR_INVALID, "%s is not an Accord database: %s", path, sqlite.errmsg(db));
	rc = sqlite.step(st);
	res = rc == SQLITE_ROW ? (const char *)sqlite.column_text(st, 0) : NULL;
	if (!res)
		rc = err_set(e, ERR_INVALID, "%s is not an Accord database: %s", path, sqlite.errmsg(db));
	else if (strcmp(res, "ok") != 0)
		rc = err_set(e, ERR_INVALID, "%s is damaged (integrity_check: %s)", path, res);
	else
		rc = 0;
	sqlite.finalize(st);
	return rc;
}

static int schema_version(sqlite3 *db, const char *path, int *out, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite.prepare_v2(db, "SELECT max(number) FROM schema_migrations", -1, &st, NULL) != SQLITE_OK)
		return err_set(e, ERR_INVALID, "%s is not an Accord database (no schema_migrations table)", path);
	rc = sqlite.step(st);
	*out = rc == SQLITE_ROW ? sqlite.column_int(st, 0) : 0;
	sqlite.finalize(st);
	if (*out <= 0)
		return err_set(e, ERR_INVALID, "%s is not an Accord database (no migration recorded)", path);
	if (*out > store_schema_latest())
		return err_set(e, ERR_INVALID,
			       "%s has schema version %d, newer than this build's %d: use the Accord version that "
			       "wrote it",
			       path, *out, store_schema_latest());
	return 0;
}

int store_backup_check(const char *path, struct store_backup_info *info, struct err *e)
{
	sqlite3 *db = NULL;
	int rc, schema = 0;

	if (sqlite_api_load(e))
		return -1;
	if (access(path, R_OK) != 0)
		return err_set(e, ERR_NOT_FOUND, "cannot read %s: %s", path, strerror(errno));
	if ((rc = db_open(path, SQLITE_OPEN_READONLY, &db, e)))
		return rc;
	rc = integrity(db, path, e);
	if (rc == 0)
		rc = schema_version(db, path, &schema, e);
	sqlite.close(db);
	if (rc == 0 && info)
		info->schema = schema;
	return rc;
}

int store_backup_restore(const char *src_path, const char *dst_path, struct store_backup_info *info, struct err *e)
{
	sqlite3 *src = NULL, *dst = NULL;
	int64_t t0 = dt_mono_ns();
	int rc;

	if (sqlite_api_load(e))
		return -1;
	if (same_file(src_path, dst_path))
		return err_set(e, ERR_INVALID, "%s is the database itself", src_path);
	if ((rc = store_backup_check(src_path, info, e)) || (rc = db_open(src_path, SQLITE_OPEN_READONLY, &src, e)) ||
	    (rc = db_open(dst_path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &dst, e)))
		goto out;
	/* The server's own mode, so the copy lands in a database the server opens as is. */
	if ((rc = exec(dst, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", dst_path, e)) ||
	    (rc = copy_pages(src, dst, dst_path, info, e)) ||
	    (rc = exec(dst, "PRAGMA wal_checkpoint(TRUNCATE);", dst_path, e)))
		goto out;
	sqlite.close(dst);
	dst = NULL;
	rc = store_backup_check(dst_path, info, e);
	if (rc == 0 && info)
		info->elapsed_ms = (dt_mono_ns() - t0) / 1000000;
out:
	sqlite.close(src);
	sqlite.close(dst);
	return rc;
}
