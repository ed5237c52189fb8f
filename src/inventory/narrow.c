#include "inventory/narrow.h"

#include <stdbool.h>
#include <stdlib.h>

#include "base/i64_block.h"
#include "store/sqlite_api.h"

/* A posting list this many times longer than the rarest is not read to its end: the exact
 * check of the items it would have taken out costs less than reading it. */
#define READ_RATIO 16
/* The lists are read side by side, blocks of each in turn up to this many ids, until the
 * rarest ends. */
#define CHUNK 256
/* Keys past this many are not read (the exact check still decides them). */
#define MAX_LISTS 8

struct list {
	sqlite3_stmt *st; /* this key's blocks, ascending; NULL once ended */
	struct i64_list ids;
	bool dropped; /* too long to be worth reading */
};

struct inv_narrow {
	sqlite3 *db;
	sqlite3_stmt *read[MAX_LISTS]; /* the blocks of one key, ascending; prepared as needed */
	struct list lists[MAX_LISTS];
};

struct inv_narrow *inv_narrow_new(sqlite3 *db, struct err *e)
{
	struct inv_narrow *nw = calloc(1, sizeof(*nw));

	if (!nw)
		err_set(e, ERR_INTERNAL, "out of memory");
	else
		nw->db = db;
	return nw;
}

void inv_narrow_free(struct inv_narrow *nw)
{
	if (!nw)
		return;
	for (size_t i = 0; i < MAX_LISTS; i++) {
		sqlite.finalize(nw->read[i]);
		i64_list_cleanup(&nw->lists[i].ids);
	}
	free(nw);
}

static int fail(struct inv_narrow *nw, struct err *e)
{
	return err_set(e, ERR_INTERNAL, "inventory query: reading the postings: %s", sqlite.errmsg(nw->db));
}

/* Starts list i on the postings of hash. */
static int open_list(struct inv_narrow *nw, size_t i, int64_t inventory, int64_t hash, struct err *e)
{
	struct list *l = &nw->lists[i];

	if (!nw->read[i] &&
	    sqlite.prepare_v3(nw->db,
			      "SELECT first_item, items FROM main.inventory_postings WHERE inventory = ?1 AND hash = ?2"
			      " ORDER BY first_item",
			      -1, SQLITE_PREPARE_PERSISTENT, &nw->read[i], NULL) != SQLITE_OK)
		return fail(nw, e);
	*l = (struct list){.st = nw->read[i], .ids = l->ids};
	i64_list_clear(&l->ids);
	if (sqlite.bind_int64(l->st, 1, inventory) || sqlite.bind_int64(l->st, 2, hash))
		return fail(nw, e);
	return 0;
}

/* Appends the ids of the block l->st is on. */
static int read_block(struct inv_narrow *nw, struct list *l, struct err *e)
{
	int64_t first = sqlite.column_int64(l->st, 0);
	const uint8_t *p = sqlite.column_blob(l->st, 1);
	int n = sqlite.column_bytes(l->st, 1);

	if (!p && n > 0)
		return fail(nw, e);
	if (i64_block_decode(first, p, (size_t)n, &l->ids, e) == 0)
		return 0;
	if (e->code == ERR_INVALID) { /* the index's own data */
		err_prefix(e, "inventory query: reading the postings");
		e->code = ERR_INTERNAL;
	}
	return -1;
}

/* Reads blocks of l until at least max more ids (all with max 0); l->st is NULL once the list
 * has ended. */
static int read_more(struct inv_narrow *nw, struct list *l, size_t max, struct err *e)
{
	size_t goal = l->ids.n + max;
	int rc = SQLITE_ROW;

	while (l->st && (max == 0 || l->ids.n < goal)) {
		if ((rc = sqlite.step(l->st)) != SQLITE_ROW)
			break;
		if (read_block(nw, l, e))
			return -1;
	}
	if (rc == SQLITE_DONE) {
		sqlite.reset(l->st);
		l->st = NULL;
	} else if (rc != SQLITE_ROW) {
		return fail(nw, e);
	}
	return 0;
}

/* Reads the n lists side by side until one ends: the rarest (its index). */
static int rarest(struct inv_narrow *nw, size_t n, size_t *base, struct err *e)
{
	for (;;) {
		for (size_t i = 0; i < n; i++)
			if (read_more(nw, &nw->lists[i], CHUNK, e))
				return -1;
		for (size_t i = 0; i < n; i++)
			if (!nw->lists[i].st && (*base == SIZE_MAX || nw->lists[i].ids.n < nw->lists[*base].ids.n))
				*base = i;
		if (*base != SIZE_MAX)
			return 0;
	}
}

/* Reads each other list as far as the rarest's last id, or drops it past READ_RATIO times
 * the rarest's length. */
static int read_others(struct inv_narrow *nw, size_t n, size_t base, struct err *e)
{
	const struct i64_list *b = &nw->lists[base].ids;
	size_t cap = b->n > SIZE_MAX / READ_RATIO ? SIZE_MAX : b->n * READ_RATIO;

	for (size_t i = 0; i < n && b->n > 0; i++) {
		struct list *l = &nw->lists[i];
		while (l->st && !l->dropped && (l->ids.n == 0 || l->ids.v[l->ids.n - 1] < b->v[b->n - 1])) {
			if (read_more(nw, l, CHUNK, e))
				return -1;
			l->dropped = l->ids.n > cap;
		}
	}
	return 0;
}

static void stop_lists(struct inv_narrow *nw, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (nw->lists[i].st)
			sqlite.reset(nw->lists[i].st);
		nw->lists[i].st = NULL;
		i64_list_cleanup(&nw->lists[i].ids); /* a long list is not kept between runs */
	}
}

static void intersect_all(struct inv_narrow *nw, size_t n, size_t base, struct i64_list *out)
{
	for (;;) { /* the shortest remaining list first: the candidates shrink fastest */
		size_t next = SIZE_MAX;
		for (size_t i = 0; i < n; i++) {
			const struct list *l = &nw->lists[i];
			if (i != base && !l->dropped && (next == SIZE_MAX || l->ids.n < nw->lists[next].ids.n))
				next = i;
		}
		if (next == SIZE_MAX || out->n == 0)
			return;
		i64_list_intersect(out, &nw->lists[next].ids);
		nw->lists[next].dropped = true;
	}
}

int inv_narrow_ids(struct inv_narrow *nw, int64_t inventory, const int64_t *hashes, size_t n, struct i64_list *out,
		   struct err *e)
{
	size_t base = SIZE_MAX;
	int rc = -1;

	i64_list_clear(out);
	if (n == 0)
		return 0;
	if (n > MAX_LISTS)
		n = MAX_LISTS;
	for (size_t i = 0; i < n; i++)
		if (open_list(nw, i, inventory, hashes[i], e))
			goto out;
	if (rarest(nw, n, &base, e) || read_others(nw, n, base, e))
		goto out;
	{ /* the rarest list becomes the candidates (out's old memory is freed with the lists) */
		struct i64_list t = *out;
		*out = nw->lists[base].ids;
		nw->lists[base].ids = t;
	}
	intersect_all(nw, n, base, out);
	rc = 0;
out:
	stop_lists(nw, n);
	return rc;
}
