#include "inventory/narrow.h"

#include <stdlib.h>

#include "store/sqlite_api.h"

/* A posting list this many times longer than the candidates already left is not read: the
 * exact check of those few items costs less than reading it. */
#define READ_RATIO 16

struct inv_narrow {
	sqlite3 *db;
	sqlite3_stmt *count; /* the postings of one key, up to a limit */
	sqlite3_stmt *read;  /* the items of one key, ascending */
	struct inv_ids tmp;
};

struct key {
	int64_t hash;
	int64_t count; /* capped: at most the cap it was counted with */
};

static int prep(struct inv_narrow *nw, const char *sql, sqlite3_stmt **st, struct err *e)
{
	if (sqlite.prepare_v3(nw->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
		return err_set(e, ERR_INTERNAL, "inventory query: preparing the postings' reads: %s",
			       sqlite.errmsg(nw->db));
	return 0;
}

struct inv_narrow *inv_narrow_new(sqlite3 *db, struct err *e)
{
	struct inv_narrow *nw = calloc(1, sizeof(*nw));

	if (!nw) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	nw->db = db;
	if (prep(nw,
		 "SELECT count(*) FROM (SELECT 1 FROM main.inventory_postings WHERE inventory = ?1 AND hash = ?2 "
		 "LIMIT ?3)",
		 &nw->count, e) ||
	    prep(nw, "SELECT item FROM main.inventory_postings WHERE inventory = ?1 AND hash = ?2 ORDER BY item",
		 &nw->read, e)) {
		inv_narrow_free(nw);
		return NULL;
	}
	return nw;
}

void inv_narrow_free(struct inv_narrow *nw)
{
	if (!nw)
		return;
	sqlite.finalize(nw->count);
	sqlite.finalize(nw->read);
	inv_ids_cleanup(&nw->tmp);
	free(nw);
}

static int fail(struct inv_narrow *nw, sqlite3_stmt *st, struct err *e)
{
	err_set(e, ERR_INTERNAL, "inventory query: reading the postings: %s", sqlite.errmsg(nw->db));
	sqlite.reset(st);
	return -1;
}

static int count_key(struct inv_narrow *nw, int64_t inventory, struct key *k, int64_t cap, struct err *e)
{
	sqlite3_stmt *st = nw->count;

	if (sqlite.bind_int64(st, 1, inventory) || sqlite.bind_int64(st, 2, k->hash) || sqlite.bind_int64(st, 3, cap) ||
	    sqlite.step(st) != SQLITE_ROW)
		return fail(nw, st, e);
	k->count = sqlite.column_int64(st, 0);
	sqlite.reset(st);
	return 0;
}

/* Appends the ids st yields (its first column) to out. */
static int read_ids(struct inv_narrow *nw, sqlite3_stmt *st, struct inv_ids *out, struct err *e)
{
	int rc;

	while ((rc = sqlite.step(st)) == SQLITE_ROW)
		if (inv_ids_push(out, sqlite.column_int64(st, 0), e)) {
			sqlite.reset(st);
			return -1;
		}
	if (rc != SQLITE_DONE)
		return fail(nw, st, e);
	sqlite.reset(st);
	return 0;
}

static int read_key(struct inv_narrow *nw, int64_t inventory, int64_t hash, struct inv_ids *out, struct err *e)
{
	if (sqlite.bind_int64(nw->read, 1, inventory) || sqlite.bind_int64(nw->read, 2, hash))
		return fail(nw, nw->read, e);
	return read_ids(nw, nw->read, out, e);
}

static int by_count(const void *a, const void *b)
{
	int64_t x = ((const struct key *)a)->count, y = ((const struct key *)b)->count;
	return (x > y) - (x < y);
}

/* Counts every key, each only up to READ_RATIO times the rarest so far (a longer one will not
 * be read), and sorts them rarest first. */
static int count_keys(struct inv_narrow *nw, int64_t inventory, struct key *keys, size_t n, struct err *e)
{
	int64_t least = INT64_MAX;

	for (size_t i = 0; i < n; i++) {
		int64_t cap = least > INT64_MAX / READ_RATIO ? INT64_MAX : least * READ_RATIO + 1;
		if (count_key(nw, inventory, &keys[i], cap, e))
			return -1;
		if (keys[i].count < least)
			least = keys[i].count;
	}
	qsort(keys, n, sizeof(*keys), by_count);
	return 0;
}

int inv_narrow_ids(struct inv_narrow *nw, int64_t inventory, const int64_t *hashes, size_t n, struct inv_ids *out,
		   struct err *e)
{
	struct key *keys;
	int rc = -1;

	inv_ids_clear(out);
	if (n == 0)
		return 0;
	if (!(keys = calloc(n, sizeof(*keys))))
		return err_set(e, ERR_INTERNAL, "out of memory");
	for (size_t i = 0; i < n; i++)
		keys[i].hash = hashes[i];
	if (count_keys(nw, inventory, keys, n, e) || read_key(nw, inventory, keys[0].hash, out, e))
		goto out;
	for (size_t i = 1; i < n && out->n > 0 && (size_t)keys[i].count <= out->n * READ_RATIO; i++) {
		inv_ids_clear(&nw->tmp);
		if (read_key(nw, inventory, keys[i].hash, &nw->tmp, e))
			goto out;
		inv_ids_intersect(out, &nw->tmp);
	}
	rc = 0;
out:
	inv_ids_cleanup(&nw->tmp); /* a long list is not kept between runs */
	free(keys);
	return rc;
}
