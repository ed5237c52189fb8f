#include "store/inventory_postings.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonx.h"
#include "store/inventory_keys.h"
#include "store/sqlite_api.h"

/* Every posting goes in or out with one statement: the hashes as a JSON array of numbers. */
static const char SQL_ADD[] = "INSERT OR IGNORE INTO inventory_postings (inventory, hash, item)"
			      " SELECT ?1, value, ?2 FROM json_each(?3)";
static const char SQL_DEL[] = "DELETE FROM inventory_postings WHERE inventory = ?1 AND item = ?2"
			      " AND hash IN (SELECT value FROM json_each(?3))";

bool store_inventory_postings_kept(struct store_conn *c)
{
	return strcmp(store_backend(store_conn_store(c)), "sqlite") == 0;
}

/* v's decimal digits, with its sign, ending at end (at most 20 bytes before it). */
static char *decimal(int64_t v, char *end)
{
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do
		*--end = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--end = '-';
	return end;
}

/* By hand, not printf: formatting the ~20 numbers of each item took a sixth of a bulk write's
 * instructions (callgrind, bench/RESULTS.md 2026-11-27). */
static int hashes_json(const int64_t *v, size_t n, struct buf *out, struct err *e)
{
	char num[24];

	if (buf_append_char(out, '[', e))
		return -1;
	for (size_t i = 0; i < n; i++) {
		char *p = decimal(v[i], num + sizeof num);
		if ((i && buf_append_char(out, ',', e)) || buf_append(out, p, (size_t)(num + sizeof num - p), e))
			return -1;
	}
	return buf_append_char(out, ']', e);
}

/* Runs sql (SQL_ADD or SQL_DEL) with the n hashes of v. */
static int apply(struct store_conn *c, const char *sql, int64_t rid, int64_t item, const int64_t *v, size_t n,
		 struct err *e)
{
	struct store_stmt *st;
	struct buf b;
	int rc = -1;

	if (n == 0)
		return 0;
	buf_init(&b, 0);
	if (hashes_json(v, n, &b, e) == 0 && (st = store_prepare(c, sql, e))) {
		store_bind_int64(st, 1, rid);
		store_bind_int64(st, 2, item);
		store_bind_text(st, 3, b.data);
		rc = store_step_done(st, e);
	}
	buf_cleanup(&b);
	return rc;
}

/* The merge of two ascending lists: add gets what only n has, del what only o has. */
static void diff(const int64_t *o, size_t no, const int64_t *n, size_t nn, int64_t *add, size_t *n_add, int64_t *del,
		 size_t *n_del)
{
	size_t i = 0, j = 0;

	*n_add = *n_del = 0;
	while (i < no || j < nn) {
		if (j == nn || (i < no && o[i] < n[j]))
			del[(*n_del)++] = o[i++];
		else if (i == no || n[j] < o[i])
			add[(*n_add)++] = n[j++];
		else
			i++, j++;
	}
}

int store_inventory_postings_update(struct store_conn *c, int64_t rid, int64_t item, const json_t *old_v,
				    const json_t *new_v, struct err *e)
{
	int64_t *n = NULL;
	size_t nn = 0;
	int rc;

	if (!store_inventory_postings_kept(c))
		return 0;
	if (new_v && inv_keys_postings(new_v, &n, &nn, e))
		return -1;
	rc = store_inventory_postings_set(c, rid, item, old_v, n, nn, e);
	free(n);
	return rc;
}

int store_inventory_postings_set(struct store_conn *c, int64_t rid, int64_t item, const json_t *old_v, const int64_t *n,
				 size_t nn, struct err *e)
{
	int64_t *o = NULL, *add = NULL, *del = NULL;
	size_t no = 0, n_add, n_del;
	int rc = -1;

	if (!store_inventory_postings_kept(c))
		return 0;
	if (old_v && inv_keys_postings(old_v, &o, &no, e))
		goto out;
	if ((nn && !(add = malloc(nn * sizeof(*add)))) || (no && !(del = malloc(no * sizeof(*del))))) {
		err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	diff(o, no, n, nn, add, &n_add, del, &n_del);
	if (apply(c, SQL_DEL, rid, item, del, n_del, e) == 0)
		rc = apply(c, SQL_ADD, rid, item, add, n_add, e);
out:
	free(o);
	free(add);
	free(del);
	return rc;
}

int store_inventory_postings_drop(struct store_conn *c, int64_t rid, int64_t item, const char *old_text, struct err *e)
{
	json_t *v;
	int rc;

	if (!store_inventory_postings_kept(c))
		return 0;
	if (!(v = jsonx_parse(old_text, strlen(old_text), JSONX_DEPTH_JANSSON, e)))
		return err_set(e, ERR_INTERNAL, "item %lld: its stored JSON does not parse", (long long)item);
	rc = store_inventory_postings_update(c, rid, item, v, NULL, e);
	json_decref(v);
	return rc;
}

static void fn_postings(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *s = (const char *)sqlite.value_text(argv[0]);
	int64_t *v = NULL;
	size_t n = 0;
	json_t *j;
	struct buf b;
	struct err e;

	(void)argc;
	if (!s) { /* NULL in, NULL out (no result is NULL) */
		if (sqlite.value_type(argv[0]) != SQLITE_NULL)
			sqlite.result_error_nomem(ctx);
		return;
	}
	if (!(j = json_loadb(s, (size_t)sqlite.value_bytes(argv[0]), JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL)))
		return sqlite.result_error(ctx, "accord_inv_postings: the item is not JSON", -1);
	buf_init(&b, 0);
	if (inv_keys_postings(j, &v, &n, &e) || hashes_json(v, n, &b, &e))
		sqlite.result_error(ctx, e.msg, -1);
	else
		sqlite.result_text(ctx, b.data, (int)b.len, SQLITE_TRANSIENT);
	buf_cleanup(&b);
	free(v);
	json_decref(j);
}

int store_inventory_postings_register(sqlite3 *db, struct err *e)
{
	if (sqlite.create_function_v2(db, "accord_inv_postings", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				      fn_postings, NULL, NULL, NULL) != SQLITE_OK)
		return err_set(e, ERR_INTERNAL, "registering accord_inv_postings: %s", sqlite.errmsg(db));
	return 0;
}
