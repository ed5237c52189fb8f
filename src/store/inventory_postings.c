#include "store/inventory_postings.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/i64_block.h"
#include "base/i64_list.h"
#include "base/jsonx.h"
#include "store/inventory_keys.h"
#include "store/sqlite_api.h"

/* A block under this many ids is merged with the next one when both fit in one. */
#define BLOCK_IDS_MIN (INV_POSTINGS_BLOCK_IDS / 4)

struct posting_change {
	int64_t hash, item;
	uint32_t seq;
	bool add; /* else remove */
};

/* The block that holds an item (the greatest first_item not above it); the block after a
 * point (the list's first block when the point is before it). */
static const char SQL_FLOOR[] = "SELECT first_item, items FROM inventory_postings WHERE inventory = ?1 AND hash = ?2"
				" AND first_item <= ?3 ORDER BY first_item DESC LIMIT 1";
static const char SQL_AFTER[] = "SELECT first_item, items FROM inventory_postings WHERE inventory = ?1 AND hash = ?2"
				" AND first_item > ?3 ORDER BY first_item LIMIT 1";
/* A block whose first item stays is rewritten in place; a new first item is a new row. */
static const char SQL_SET[] = "UPDATE inventory_postings SET items = ?4 WHERE inventory = ?1 AND hash = ?2"
			      " AND first_item = ?3";
static const char SQL_ADD[] =
    "INSERT INTO inventory_postings (inventory, hash, first_item, items) VALUES (?1, ?2, ?3, ?4)";
static const char SQL_DEL[] = "DELETE FROM inventory_postings WHERE inventory = ?1 AND hash = ?2 AND first_item = ?3";

bool store_inventory_postings_kept(struct store_conn *c)
{
	return strcmp(store_backend(store_conn_store(c)), "sqlite") == 0;
}

/* ---- gathering ---- */

static int push_change(struct inventory_postings_batch *b, int64_t hash, int64_t item, bool add, struct err *e)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct posting_change *v = cap > SIZE_MAX / sizeof(*v) ? NULL : realloc(b->v, cap * sizeof(*v));
		if (!v)
			return err_set(e, ERR_INTERNAL, "out of memory");
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = (struct posting_change){.hash = hash, .item = item, .seq = b->seq++, .add = add};
	return 0;
}

/* The merge of two ascending lists: what only n has is added, what only o has removed. */
static int diff(struct inventory_postings_batch *b, int64_t item, const int64_t *o, size_t no, const int64_t *n,
		size_t nn, struct err *e)
{
	size_t i = 0, j = 0;
	int rc = 0;

	while (rc == 0 && (i < no || j < nn)) {
		if (j == nn || (i < no && o[i] < n[j]))
			rc = push_change(b, o[i++], item, false, e);
		else if (i == no || n[j] < o[i])
			rc = push_change(b, n[j++], item, true, e);
		else
			i++, j++;
	}
	return rc;
}

int store_inventory_postings_batch_item(struct inventory_postings_batch *b, int64_t item, const json_t *old_v,
					const int64_t *n, size_t nn, struct err *e)
{
	int64_t *o = NULL;
	size_t no = 0;
	int rc;

	if (old_v && inv_keys_postings(old_v, &o, &no, e))
		return -1;
	rc = diff(b, item, o, no, n, nn, e);
	free(o);
	return rc;
}

void store_inventory_postings_batch_cleanup(struct inventory_postings_batch *b)
{
	free(b->v);
	*b = (struct inventory_postings_batch){0};
}

/* ---- applying: one posting list at a time, one block at a time ---- */

/* The work of one batch on one inventory's list of one key. */
struct list_io {
	struct store_conn *c;
	int64_t rid, hash;
	struct i64_list ids;  /* the block being changed */
	struct i64_list out;  /* what it becomes */
	struct i64_list next; /* the next block, when merged */
	uint8_t *next_raw;    /* its gaps, copied */
	size_t next_len;
	bool kept;	    /* the changed block's row stays, under this first item: */
	int64_t kept_first; /* rewritten in place */
	uint8_t enc[I64_BLOCK_BOUND(INV_POSTINGS_BLOCK_IDS)];
};

/* The block around an item: the one holding it, else the list's first; and the next, once
 * read (when the changes go past the item, or the block is to merge with it). */
struct around {
	bool have, next_read, have_next;
	int64_t first, next_first;
};

/* A block that does not decode: i64_block_decode's ERR_INVALID, said of the stored block, is
 * ERR_INTERNAL (the store's own data); its out of memory stays as it is. */
static int block_failed(const struct list_io *io, int64_t first, struct err *e)
{
	if (e->code != ERR_INVALID)
		return -1;
	err_prefix(e, "the containment index of inventory %lld, key %lld, block from item %lld", (long long)io->rid,
		   (long long)io->hash, (long long)first);
	e->code = ERR_INTERNAL;
	return -ERR_INTERNAL;
}

static int blob_of(struct store_stmt *st, const uint8_t **p, size_t *n, struct err *e)
{
	*p = store_col_blob(st, 1, n);
	return *p ? 0 : store_stmt_check(st, e); /* an empty blob is a block of one id */
}

/* Steps sql (SQL_FLOOR or SQL_AFTER) at point: *found, *first and the row's gaps (borrowed
 * until st is reset, which the caller does). */
static int block_at(struct list_io *io, struct store_stmt *st, int64_t point, bool *found, int64_t *first,
		    const uint8_t **p, size_t *n, struct err *e)
{
	int rc;

	store_bind_int64(st, 1, io->rid);
	store_bind_int64(st, 2, io->hash);
	store_bind_int64(st, 3, point);
	*found = (rc = store_step(st, e)) == STORE_ROW;
	if (*found) {
		*first = store_col_int64(st, 0);
		rc = blob_of(st, p, n, e);
	}
	return rc < 0 ? rc : 0;
}

/* Reads the block around item into io->ids (emptied first). */
static int read_around(struct list_io *io, int64_t item, struct around *a, struct err *e)
{
	static const char *const sql[] = {SQL_FLOOR, SQL_AFTER};
	const uint8_t *p = NULL;
	size_t n = 0;
	int rc = 0;

	*a = (struct around){0};
	i64_list_clear(&io->ids);
	for (size_t i = 0; rc == 0 && !a->have && i < 2; i++) {
		struct store_stmt *st = store_prepare(io->c, sql[i], e);
		if (!st)
			return -1;
		if ((rc = block_at(io, st, item, &a->have, &a->first, &p, &n, e)) == 0 && a->have &&
		    i64_block_decode(a->first, p, n, &io->ids, e))
			rc = block_failed(io, a->first, e);
		store_reset(st);
	}
	return rc;
}

/* Reads the first item of the block after a's and copies its gaps. */
static int read_next(struct list_io *io, struct around *a, struct err *e)
{
	struct store_stmt *st = store_prepare(io->c, SQL_AFTER, e);
	const uint8_t *p = NULL;
	size_t n = 0;
	int rc;

	a->next_read = true;
	if (!st)
		return -1;
	rc = block_at(io, st, a->first, &a->have_next, &a->next_first, &p, &n, e);
	if (rc == 0 && a->have_next) {
		uint8_t *copy = realloc(io->next_raw, n ? n : 1);
		if (!copy) {
			rc = err_set(e, ERR_INTERNAL, "out of memory");
		} else {
			io->next_raw = copy;
			io->next_len = n;
			if (n)
				memcpy(copy, p, n);
		}
	}
	store_reset(st);
	return rc;
}

/* io->out = io->ids with the changes ch[0..n) made (ascending, one per item); *appended:
 * every change adds an item past the block's last. */
static int merge_changes(struct list_io *io, const struct posting_change *ch, size_t n, bool *appended, struct err *e)
{
	const struct i64_list *in = &io->ids;
	size_t a = 0;

	i64_list_clear(&io->out);
	*appended = true;
	for (size_t k = 0; k < n; k++) {
		int64_t x = ch[k].item;
		*appended = *appended && ch[k].add && (in->n == 0 || x > in->v[in->n - 1]);
		while (a < in->n && in->v[a] < x)
			if (i64_list_push(&io->out, in->v[a++], e))
				return -1;
		if (a < in->n && in->v[a] == x)
			a++;
		if (ch[k].add && i64_list_push(&io->out, x, e))
			return -1;
	}
	while (a < in->n)
		if (i64_list_push(&io->out, in->v[a++], e))
			return -1;
	return 0;
}

static int del_block(struct list_io *io, int64_t first, struct err *e)
{
	struct store_stmt *st = store_prepare(io->c, SQL_DEL, e);

	if (!st)
		return -1;
	store_bind_int64(st, 1, io->rid);
	store_bind_int64(st, 2, io->hash);
	store_bind_int64(st, 3, first);
	return store_step_done(st, e);
}

static int put_block(struct list_io *io, const int64_t *v, size_t n, struct err *e)
{
	struct store_stmt *st = store_prepare(io->c, io->kept && v[0] == io->kept_first ? SQL_SET : SQL_ADD, e);
	size_t len = i64_block_encode(v, n, io->enc);

	if (!st)
		return -1;
	store_bind_int64(st, 1, io->rid);
	store_bind_int64(st, 2, io->hash);
	store_bind_int64(st, 3, v[0]);
	store_bind_blob(st, 4, io->enc, len);
	return store_step_done(st, e);
}

/* Writes v[0..n) (n > 0) as blocks within the limits: full ones from the start when greedy
 * (items added at the end, as a load adds them: the last block keeps room for the next),
 * else halves (room on both sides of an item added in the middle). */
static int put_blocks(struct list_io *io, const int64_t *v, size_t n, bool greedy, struct err *e)
{
	size_t k;

	for (; greedy && n > INV_POSTINGS_BLOCK_IDS; v += k, n -= k)
		if (put_blocks(io, v, k = INV_POSTINGS_BLOCK_IDS, false, e))
			return -1;
	if (n <= INV_POSTINGS_BLOCK_IDS && i64_block_size(v, n) <= INV_POSTINGS_BLOCK_BYTES)
		return put_block(io, v, n, e);
	k = n / 2; /* ≥ 1: a single id takes no bytes */
	if (put_blocks(io, v, k, false, e))
		return -1;
	return put_blocks(io, v + k, n - k, false, e);
}

/* Appends the next block to io->out when io->out is under BLOCK_IDS_MIN (not empty) and
 * both fit in one block; *merged says it did (the next block's row is then to go). */
static int merge_next(struct list_io *io, struct around *a, bool *merged, struct err *e)
{
	struct i64_list *o = &io->out;

	*merged = false;
	if (!a->have || o->n == 0 || o->n >= BLOCK_IDS_MIN)
		return 0;
	if (!a->next_read && read_next(io, a, e))
		return -1;
	if (!a->have_next)
		return 0;
	i64_list_clear(&io->next);
	if (i64_block_decode(a->next_first, io->next_raw, io->next_len, &io->next, e))
		return block_failed(io, a->next_first, e);
	if (o->n + io->next.n > INV_POSTINGS_BLOCK_IDS ||
	    i64_block_size(o->v, o->n) + i64_block_size(io->next.v, io->next.n) + I64_BLOCK_GAP_MAX >
		INV_POSTINGS_BLOCK_BYTES)
		return 0;
	for (size_t i = 0; i < io->next.n; i++)
		if (i64_list_push(o, io->next.v[i], e))
			return -1;
	*merged = true;
	return 0;
}

/* Applies ch[0..n) (one list's changes, ascending, one per item) from the first on, as far
 * as the block that holds ch[0] goes; *used: how many it applied. */
static int apply_block(struct list_io *io, const struct posting_change *ch, size_t n, size_t *used, struct err *e)
{
	struct around a;
	bool appended, merged;
	size_t k = 0;

	if (read_around(io, ch[0].item, &a, e) || (n > 1 && a.have && read_next(io, &a, e)))
		return -1;
	while (k < n && (!a.have_next || ch[k].item < a.next_first))
		k++;
	*used = k;
	if (merge_changes(io, ch, k, &appended, e) || merge_next(io, &a, &merged, e))
		return -1;
	if (!merged && io->out.n == io->ids.n &&
	    (io->ids.n == 0 || memcmp(io->out.v, io->ids.v, io->ids.n * sizeof(*io->ids.v)) == 0))
		return 0; /* nothing changed: items removed that the list did not hold */
	io->kept = a.have && io->out.n > 0 && io->out.v[0] == a.first;
	io->kept_first = a.first;
	if (a.have && !io->kept && del_block(io, a.first, e))
		return -1;
	if (merged && del_block(io, a.next_first, e))
		return -1;
	return io->out.n ? put_blocks(io, io->out.v, io->out.n, appended, e) : 0;
}

static int cmp_change(const void *pa, const void *pb)
{
	const struct posting_change *a = pa, *b = pb;

	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	if (a->item != b->item)
		return a->item < b->item ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Keeps the last change of each (hash, item): what the item holds in the end. */
static size_t last_changes(struct posting_change *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && v[i + 1].hash == v[i].hash && v[i + 1].item == v[i].item)
			continue;
		v[k++] = v[i];
	}
	return k;
}

int store_inventory_postings_batch_apply(struct store_conn *c, int64_t rid, struct inventory_postings_batch *b,
					 struct err *e)
{
	struct list_io *io;
	size_t n, i = 0;
	int rc = 0;

	if (b->n == 0 || !store_inventory_postings_kept(c)) {
		b->n = 0;
		return 0;
	}
	if (!(io = calloc(1, sizeof(*io))))
		return err_set(e, ERR_INTERNAL, "out of memory");
	*io = (struct list_io){.c = c, .rid = rid};
	qsort(b->v, b->n, sizeof(*b->v), cmp_change);
	n = last_changes(b->v, b->n);
	while (rc == 0 && i < n) {
		size_t end = i, used;
		io->hash = b->v[i].hash;
		while (end < n && b->v[end].hash == io->hash)
			end++;
		for (; rc == 0 && i < end; i += used)
			rc = apply_block(io, b->v + i, end - i, &used, e);
	}
	i64_list_cleanup(&io->ids);
	i64_list_cleanup(&io->out);
	i64_list_cleanup(&io->next);
	free(io->next_raw);
	free(io);
	b->n = 0;
	return rc;
}

int store_inventory_postings_drop(struct store_conn *c, int64_t rid, int64_t item, const char *old_text, struct err *e)
{
	struct inventory_postings_batch b = {0};
	json_t *v;
	int rc;

	if (!store_inventory_postings_kept(c))
		return 0;
	if (!(v = jsonx_parse(old_text, strlen(old_text), JSONX_DEPTH_JANSSON, e)))
		return err_set(e, ERR_INTERNAL, "item %lld: its stored JSON does not parse", (long long)item);
	rc = store_inventory_postings_batch_item(&b, item, v, NULL, 0, e);
	if (rc == 0)
		rc = store_inventory_postings_batch_apply(c, rid, &b, e);
	store_inventory_postings_batch_cleanup(&b);
	json_decref(v);
	return rc;
}

/* ---- the migrations' functions ---- */

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

/* accord_inv_block(item): the group's items gathered in a list held by the aggregate's context. */
static void block_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct i64_list **l = sqlite.aggregate_context(ctx, sizeof(*l));
	struct err e;

	(void)argc;
	if (!l || (!*l && !(*l = calloc(1, sizeof(**l))))) {
		sqlite.result_error_nomem(ctx);
		return;
	}
	if (i64_list_push(*l, sqlite.value_int64(argv[0]), &e))
		sqlite.result_error_nomem(ctx);
}

static void block_final(sqlite3_context *ctx)
{
	struct i64_list **l = sqlite.aggregate_context(ctx, 0);
	uint8_t *out;

	if (!l || !*l) { /* no rows */
		sqlite.result_blob64(ctx, "", 0, SQLITE_STATIC);
		return;
	}
	i64_list_sort(*l);
	if (!(out = malloc(I64_BLOCK_BOUND((*l)->n) + 1)))
		sqlite.result_error_nomem(ctx);
	else
		sqlite.result_blob64(ctx, out, i64_block_encode((*l)->v, (*l)->n, out), free);
	i64_list_cleanup(*l);
	free(*l);
}

int store_inventory_postings_register(sqlite3 *db, struct err *e)
{
	if (sqlite.create_function_v2(db, "accord_inv_postings", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				      fn_postings, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite.create_function_v2(db, "accord_inv_block", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, NULL,
				      block_step, block_final, NULL) != SQLITE_OK)
		return err_set(e, ERR_INTERNAL, "registering the containment index's functions: %s", sqlite.errmsg(db));
	return 0;
}
