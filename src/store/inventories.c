#include "store/inventories.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/str.h"
#include "store/access.h"
#include "store/inventory_keys.h"
#include "store/inventory_postings.h"
#include "store/jsonstores.h"

#define CP(dst, i) store_col_copy(st, (i), (dst), sizeof(dst))

#define INV_COLS                                                                                                       \
	"i.rid, i.id, i.org_id, i.name, i.visibility, coalesce(i.owner_id, ''), coalesce(u.username, '')"              \
	" FROM inventories i LEFT JOIN users u ON u.id = i.owner_id"

/* The INV_COLS from column col of st. */
static void read_inventory_at(struct store_stmt *st, int col, struct inventory *inv)
{
	inv->rid = store_col_int64(st, col);
	CP(inv->id, col + 1);
	CP(inv->org_id, col + 2);
	CP(inv->name, col + 3);
	CP(inv->visibility, col + 4);
	CP(inv->owner_id, col + 5);
	CP(inv->owner_name, col + 6);
}

static void read_inventory(struct store_stmt *st, void *out)
{
	read_inventory_at(st, 0, out);
}

int store_inventory_find(struct store_conn *c, const char *org_id, const char *name, struct inventory *out,
			 struct err *e)
{
	static const char SQL[] = "SELECT " INV_COLS " WHERE i.org_id = ? AND i.name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, org_id);
	store_bind_text(st, 2, name);
	return store_one(st, read_inventory, out, "Inventory", name, e);
}

int store_inventory_list(struct store_conn *c, const char *org_id, struct inventory **out, size_t *n, struct err *e)
{
	static const char SQL[] = "SELECT " INV_COLS " WHERE i.org_id = ? ORDER BY i.name";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, org_id);
	return store_collect(st, sizeof **out, read_inventory, (void **)out, n, e);
}

int store_inventory_insert(struct store_conn *c, struct inventory *inv, struct err *e)
{
	static const char SQL[] = "INSERT INTO inventories (id, org_id, name, visibility, owner_id, created_at)"
				  " VALUES (?, ?, ?, ?, ?, ?) RETURNING rid";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, inv->id);
	store_bind_text(st, 2, inv->org_id);
	store_bind_text(st, 3, inv->name);
	store_bind_text(st, 4, inv->visibility);
	store_bind_text(st, 5, inv->owner_id[0] ? inv->owner_id : NULL);
	store_bind_int64(st, 6, dt_now_ms());
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		inv->rid = store_col_int64(st, 0);
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_inventory_update(struct store_conn *c, const struct inventory *inv, struct err *e)
{
	static const char SQL[] = "UPDATE inventories SET name = ?, visibility = ?, owner_id = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, inv->name);
	store_bind_text(st, 2, inv->visibility);
	store_bind_text(st, 3, inv->owner_id[0] ? inv->owner_id : NULL);
	store_bind_text(st, 4, inv->id);
	return store_step_done(st, e);
}

int store_inventory_delete(struct store_conn *c, const struct inventory *inv, struct err *e)
{
	static const char SQL[] = "DELETE FROM inventories WHERE id = ?";
	struct store_stmt *st;

	if (store_tx_begin(c, e))
		return -1;
	if (store_access_clear(c, "INVENTORY", inv->id, e) || !(st = store_prepare(c, SQL, e)))
		goto fail;
	store_bind_text(st, 1, inv->id);
	if (store_step_done(st, e) || store_tx_commit(c, e))
		goto fail;
	return 0;
fail:
	store_tx_rollback(c);
	return -1;
}

/* ---- items ---- */

static int put_item_row(struct store_conn *c, int64_t rid, const char *path, const char *text, int64_t *item,
			struct err *e)
{
	static const char SQL[] = "INSERT INTO inventory_items (inventory, item_path, item_data, item_size)"
				  " VALUES (?, ?, ?, ?) ON CONFLICT (inventory, item_path) DO UPDATE"
				  " SET item_data = excluded.item_data, item_size = excluded.item_size RETURNING id";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_int64(st, 1, rid);
	store_bind_text(st, 2, path);
	store_bind_text(st, 3, text);
	store_bind_int64(st, 4, (int64_t)strlen(text));
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		*item = store_col_int64(st, 0);
	store_reset(st);
	return rc < 0 ? rc : 0;
}

/* An item as it was before a write. */
struct old_item {
	bool exists;
	int64_t id, size;
	char *text; /* its JSON (new), when asked for */
};

/* Inside the write transaction: the item at path, if any, with its text when want_text (the
 * postings need it). */
static int old_item(struct store_conn *c, int64_t rid, const char *path, bool want_text, struct old_item *o,
		    struct err *e)
{
	static const char SQL[] = "SELECT id, item_size FROM inventory_items WHERE inventory = ? AND item_path = ?";
	static const char SQL_TEXT[] = "SELECT id, item_size, item_data FROM inventory_items"
				       " WHERE inventory = ? AND item_path = ?";
	struct store_stmt *st = store_prepare(c, want_text ? SQL_TEXT : SQL, e);
	int rc;

	*o = (struct old_item){0};
	if (!st)
		return -1;
	store_bind_int64(st, 1, rid);
	store_bind_text(st, 2, path);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		o->exists = true;
		o->id = store_col_int64(st, 0);
		o->size = store_col_int64(st, 1);
		if (want_text && !(o->text = strdup(store_col_text(st, 2))))
			rc = err_set(e, ERR_INTERNAL, "out of memory");
	}
	store_reset(st);
	return rc < 0 ? rc : 0;
}

/* An item to be written, with what can be worked out before the write transaction (which
 * holds the database's write lock): its stored text and its postings. */
struct item_new {
	const char *path;
	char *text;	 /* compact JSON */
	int64_t *hashes; /* its postings, ascending (NULL: the backend keeps none) */
	size_t n_hashes;
};

static int item_prepare(struct store_conn *c, const char *path, const json_t *value, struct item_new *p, struct err *e)
{
	*p = (struct item_new){.path = path};
	if (!(p->text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (store_inventory_postings_kept(c) && inv_keys_postings(value, &p->hashes, &p->n_hashes, e))
		return -1;
	return 0;
}

static void item_new_cleanup(struct item_new *p)
{
	free(p->text);
	free(p->hashes);
}

/* Inside the write transaction: the item's row, replacing the one whose JSON was old_text
 * (NULL: none); its postings' changes go to batch (store/inventory_postings.h), only those
 * that differ. */
static int replace_item(struct store_conn *c, int64_t rid, const struct item_new *p, const char *old_text,
			struct inventory_postings_batch *batch, struct err *e)
{
	json_t *old = NULL;
	int64_t item = 0;
	int rc = -1;

	if (old_text && !(old = jsonx_parse(old_text, strlen(old_text), JSONX_DEPTH_JANSSON, e)))
		err_set(e, ERR_INTERNAL, "item %.128s: its stored JSON does not parse", p->path);
	else if (put_item_row(c, rid, p->path, p->text, &item, e) == 0)
		rc = store_inventory_postings_batch_item(batch, item, old, p->hashes, p->n_hashes, e);
	json_decref(old);
	return rc;
}

/* Inside the write transaction: the inventory found before it began may have been deleted
 * since by another request (its items would then break the foreign key: a 500). */
static int inventory_still_there(struct store_conn *c, int64_t rid, struct err *e)
{
	static const char SQL[] = "SELECT 1 FROM inventories WHERE rid = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_int64(st, 1, rid);
	rc = store_step(st, e);
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "Inventory not found: it was deleted while the item was written");
	return rc < 0 ? rc : 0;
}

/* Java's MessageFormat of a long in Concord's messages: digits grouped by commas. */
static void grouped(int64_t v, char *out, size_t cap)
{
	char digits[24];
	size_t n, j = 0;

	str_fmt_cut(digits, sizeof digits, "%lld", (long long)(v < 0 ? -v : v));
	n = strlen(digits);
	if (v < 0 && j + 1 < cap)
		out[j++] = '-';
	for (size_t i = 0; i < n && j + 2 < cap; i++) {
		if (i && (n - i) % 3 == 0)
			out[j++] = ',';
		out[j++] = digits[i];
	}
	out[j] = '\0';
}

/* Concord's message for a store that would hold total bytes, over max_bytes. */
static int too_large(int64_t total, int64_t max_bytes, struct err *e)
{
	char cur[32], lim[32];

	grouped(total, cur, sizeof cur);
	grouped(max_bytes, lim, sizeof lim);
	return err_set(e, ERR_TOO_LARGE,
		       "Found JSON store policy violations: Maximum data size in the JSON store exceeded: "
		       "current %s, limit %s;",
		       cur, lim);
}

/* Inside the write transaction: one item; *total moves by its change of size. */
static int write_one(struct store_conn *c, int64_t rid, const struct item_new *p, int64_t *total, size_t *created,
		     struct inventory_postings_batch *batch, struct err *e)
{
	struct old_item o = {0};
	int rc = -1;

	if (old_item(c, rid, p->path, store_inventory_postings_kept(c), &o, e) == 0) {
		*total += (int64_t)strlen(p->text) - o.size;
		*created += !o.exists;
		rc = replace_item(c, rid, p, o.text, batch, e);
	}
	free(o.text);
	return rc;
}

/* The write transaction of the n prepared items (a single put is one): the store's size
 * decided once, after every item; the postings of all of them written together. */
static int items_tx(struct store_conn *c, int64_t rid, const struct item_new *p, size_t n, int64_t max_bytes,
		    size_t *n_created, size_t *bad, struct err *e)
{
	struct inventory_postings_batch batch = {0};
	int64_t total = 0, own_max;
	size_t created = 0;

	if (store_tx_begin(c, e))
		return -1;
	if (inventory_still_there(c, rid, e) ||
	    (max_bytes >= 0 && store_jsonstore_capacity(c, rid, &total, &own_max, e)))
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (write_one(c, rid, &p[i], &total, &created, &batch, e)) {
			*bad = i;
			goto fail;
		}
	if (max_bytes >= 0 && total > max_bytes) {
		too_large(total, max_bytes, e);
		goto fail;
	}
	if (store_inventory_postings_batch_apply(c, rid, &batch, e) || store_tx_commit(c, e))
		goto fail;
	store_inventory_postings_batch_cleanup(&batch);
	if (n_created)
		*n_created = created;
	return 0;
fail:
	store_tx_rollback(c);
	store_inventory_postings_batch_cleanup(&batch);
	return -1;
}

int store_inventory_items_put(struct store_conn *c, int64_t rid, const struct inventory_item_in *items, size_t n,
			      int64_t max_bytes, size_t *n_created, size_t *bad, struct err *e)
{
	struct item_new *p = calloc(n ? n : 1, sizeof *p);
	size_t ready = 0;
	int rc = -1;

	*bad = n;
	if (!p)
		return err_set(e, ERR_INTERNAL, "out of memory");
	/* the texts and postings before the write lock is taken: other writers wait less */
	for (; ready < n; ready++)
		if (item_prepare(c, items[ready].path, items[ready].value, &p[ready], e)) {
			*bad = ready;
			ready++; /* its cleanup */
			goto out;
		}
	rc = items_tx(c, rid, p, n, max_bytes, n_created, bad, e);
out:
	for (size_t i = 0; i < ready; i++)
		item_new_cleanup(&p[i]);
	free(p);
	return rc;
}

int store_inventory_item_put_capped(struct store_conn *c, int64_t rid, const char *path, const json_t *value,
				    int64_t max_bytes, bool *created, struct err *e)
{
	const struct inventory_item_in one = {.path = path, .value = value};
	size_t n_created = 0, bad;

	if (store_inventory_items_put(c, rid, &one, 1, max_bytes, &n_created, &bad, e))
		return -1;
	if (created)
		*created = n_created == 1;
	return 0;
}

int store_inventory_item_put(struct store_conn *c, int64_t rid, const char *path, const json_t *value, struct err *e)
{
	return store_inventory_item_put_capped(c, rid, path, value, -1, NULL, e);
}

int store_inventory_item_get(struct store_conn *c, int64_t rid, const char *path, char **data, struct err *e)
{
	static const char SQL[] = "SELECT item_data FROM inventory_items WHERE inventory = ? AND item_path = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_int64(st, 1, rid);
	store_bind_text(st, 2, path);
	rc = store_step(st, e);
	*data = NULL;
	if (rc == STORE_ROW && !(*data = strdup(store_col_text(st, 0))))
		rc = err_set(e, ERR_INTERNAL, "out of memory");
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "Item not found: %.128s", path);
	return rc < 0 ? rc : 0;
}

/* The smallest string greater than every string that starts with prefix, compared bytewise
 * (SQLite's BINARY collation): prefix with its last byte below 0xFF incremented and the
 * rest cut.  False when there is none (empty prefix, or only 0xFF bytes). */
static bool prefix_end(const char *prefix, char *out, size_t cap)
{
	size_t n = strlen(prefix);

	if (n == 0 || n >= cap)
		return false;
	memcpy(out, prefix, n + 1);
	while (n > 0 && (unsigned char)out[n - 1] == 0xFF)
		out[--n] = '\0';
	if (n == 0)
		return false;
	out[n - 1] = (char)((unsigned char)out[n - 1] + 1);
	return true;
}

int store_inventory_items_each(struct store_conn *c, int64_t rid, const char *prefix, inventory_item_fn fn, void *ctx,
			       struct err *e)
{
	/* a range on the (inventory, item_path) index: [prefix, prefix_end) */
	static const char SQL_ALL[] = "SELECT item_path, item_data FROM inventory_items WHERE inventory = ?1"
				      " AND item_path >= ?2 ORDER BY item_path";
	static const char SQL_RANGE[] = "SELECT item_path, item_data FROM inventory_items WHERE inventory = ?1"
					" AND item_path >= ?2 AND item_path < ?3 ORDER BY item_path";
	char end[1024];
	bool bounded = prefix && prefix_end(prefix, end, sizeof(end));
	struct store_stmt *st = store_prepare(c, bounded ? SQL_RANGE : SQL_ALL, e);
	size_t plen = prefix ? strlen(prefix) : 0;
	int rc;

	if (!st)
		return -1;
	store_bind_int64(st, 1, rid);
	store_bind_text(st, 2, prefix ? prefix : "");
	if (bounded)
		store_bind_text(st, 3, end);
	while ((rc = store_step(st, e)) == STORE_ROW) {
		const char *path = store_col_text(st, 0);
		if (plen && strncmp(path, prefix, plen) != 0) /* only for prefixes too long to bound */
			break;
		rc = fn(ctx, path, store_col_text(st, 1), e);
		if (rc)
			break;
	}
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_inventory_item_delete(struct store_conn *c, int64_t rid, const char *path, bool *deleted, struct err *e)
{
	static const char SQL[] = "DELETE FROM inventory_items WHERE inventory = ? AND item_path = ?";
	bool postings = store_inventory_postings_kept(c);
	struct store_stmt *st;
	struct old_item o = {0};

	if (postings && store_tx_begin(c, e))
		return -1;
	if (postings &&
	    (old_item(c, rid, path, true, &o, e) || (o.text && store_inventory_postings_drop(c, rid, o.id, o.text, e))))
		goto fail;
	if (!(st = store_prepare(c, SQL, e)))
		goto fail;
	store_bind_int64(st, 1, rid);
	store_bind_text(st, 2, path);
	if (store_step_done(st, e))
		goto fail;
	*deleted = store_changes(c) > 0;
	if (postings && store_tx_commit(c, e))
		goto fail;
	free(o.text);
	return 0;
fail:
	if (postings)
		store_tx_rollback(c);
	free(o.text);
	return -1;
}

/* ---- queries ---- */

void inventory_query_cleanup(struct inventory_query *q)
{
	free(q->text);
	q->text = NULL;
}

void inventory_query_list_free(struct inventory_query *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		inventory_query_cleanup(&v[i]);
	free(v);
}

/* id, name, inventory_id and text from column col of st. */
static int read_query_at(struct store_stmt *st, int col, struct inventory_query *q, struct err *e)
{
	const char *text = store_col_text(st, col + 3);

	CP(q->id, col);
	CP(q->name, col + 1);
	CP(q->inventory_id, col + 2);
	q->text = strdup(text ? text : "");
	return q->text ? store_stmt_check(st, e) : err_set(e, ERR_INTERNAL, "out of memory");
}

static int read_query(struct store_stmt *st, struct inventory_query *q, struct err *e)
{
	return read_query_at(st, 0, q, e);
}

static int query_not_found(const char *name, struct err *e)
{
	return err_set(e, ERR_NOT_FOUND, "Query not found: %.128s", name);
}

int store_inventory_query_get(struct store_conn *c, const char *inventory_id, const char *name,
			      struct inventory_query *out, struct err *e)
{
	static const char SQL[] = "SELECT id, name, inventory_id, text FROM inventory_queries"
				  " WHERE inventory_id = ? AND name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, inventory_id);
	store_bind_text(st, 2, name);
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		rc = read_query(st, out, e) == 0 ? STORE_ROW : -1;
	store_reset(st);
	if (rc == STORE_DONE)
		return query_not_found(name, e);
	return rc < 0 ? rc : 0;
}

int store_inventory_lookup(struct store_conn *c, const char *org, const char *inv, const char *query,
			   struct inventory_lookup *out, struct err *e)
{
	static const char SQL[] =
	    "SELECT o.id, o.name, o.visibility, o.owner_id, ou.username, o.created_at,"
	    " i.rid, i.id, i.org_id, i.name, i.visibility, coalesce(i.owner_id, ''), coalesce(iu.username, ''),"
	    " q.id, q.name, q.inventory_id, q.text"
	    " FROM orgs o LEFT JOIN users ou ON ou.id = o.owner_id"
	    " LEFT JOIN inventories i ON i.org_id = o.id AND i.name = ?"
	    " LEFT JOIN users iu ON iu.id = i.owner_id"
	    " LEFT JOIN inventory_queries q ON q.inventory_id = i.id AND q.name = ?"
	    " WHERE o.name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*out = (struct inventory_lookup){.inv_name = inv, .query_name = query};
	if (!st)
		return -1;
	store_bind_text(st, 1, inv);
	store_bind_text(st, 2, query);
	store_bind_text(st, 3, org);
	if ((rc = store_step(st, e)) == STORE_DONE)
		rc = err_set(e, ERR_NOT_FOUND, "Organization not found: %.128s", org);
	else if (rc == STORE_ROW) {
		store_org_read(st, 0, &out->org);
		out->found = 1;
		if (!store_col_is_null(st, 6)) {
			read_inventory_at(st, 6, &out->inv);
			out->found = 2;
		}
		rc = store_stmt_check(st, e);
		if (rc == 0 && !store_col_is_null(st, 13) && (rc = read_query_at(st, 13, &out->q, e)) == 0)
			out->found = 3;
	}
	store_reset(st);
	return rc;
}

int store_inventory_lookup_missing(const struct inventory_lookup *l, struct err *e)
{
	assert(l->found >= 1 && l->found < 3);
	if (l->found == 1)
		return err_set(e, ERR_NOT_FOUND, "Inventory not found: %.128s", l->inv_name);
	return query_not_found(l->query_name, e);
}

int store_inventory_query_list(struct store_conn *c, const char *inventory_id, struct inventory_query **out, size_t *n,
			       struct err *e)
{
	static const char SQL[] = "SELECT id, name, inventory_id, text FROM inventory_queries"
				  " WHERE inventory_id = ? ORDER BY name";
	struct store_stmt *st = store_prepare(c, SQL, e);
	struct inventory_query *arr = NULL;
	size_t len = 0, cap = 0;
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, inventory_id);
	while ((rc = store_step(st, e)) == STORE_ROW) {
		if (len == cap) {
			struct inventory_query *r;
			cap = cap ? cap * 2 : 8;
			r = realloc(arr, cap * sizeof(*arr));
			if (!r) {
				rc = err_set(e, ERR_INTERNAL, "out of memory");
				break;
			}
			arr = r;
		}
		if ((rc = read_query(st, &arr[len++], e)) != 0)
			break;
	}
	store_reset(st);
	if (rc < 0) {
		inventory_query_list_free(arr, len);
		return rc;
	}
	*out = arr;
	*n = len;
	return 0;
}

int store_inventory_query_put(struct store_conn *c, const char *inventory_id, const char *name, const char *text,
			      char id_out[UUID_STR_LEN], bool *created, struct err *e)
{
	static const char SQL_UPD[] = "UPDATE inventory_queries SET text = ? WHERE inventory_id = ? AND name = ?"
				      " RETURNING id";
	static const char SQL_INS[] = "INSERT INTO inventory_queries (id, inventory_id, name, text, created_at)"
				      " VALUES (?, ?, ?, ?, ?)";
	struct store_stmt *st = store_prepare(c, SQL_UPD, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, text);
	store_bind_text(st, 2, inventory_id);
	store_bind_text(st, 3, name);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		store_col_copy(st, 0, id_out, UUID_STR_LEN);
		if (store_stmt_check(st, e))
			rc = -1;
	}
	store_reset(st);
	if (rc < 0)
		return rc;
	*created = rc == STORE_DONE;
	if (!*created)
		return 0;
	if (!(st = store_prepare(c, SQL_INS, e)))
		return -1;
	uuid_v4(id_out);
	store_bind_text(st, 1, id_out);
	store_bind_text(st, 2, inventory_id);
	store_bind_text(st, 3, name);
	store_bind_text(st, 4, text);
	store_bind_int64(st, 5, dt_now_ms());
	return store_step_done(st, e);
}

int store_inventory_query_delete(struct store_conn *c, const char *inventory_id, const char *name, struct err *e)
{
	static const char SQL[] = "DELETE FROM inventory_queries WHERE inventory_id = ? AND name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, inventory_id);
	store_bind_text(st, 2, name);
	if (store_step_done(st, e))
		return -1;
	if (store_changes(c) == 0)
		return err_set(e, ERR_NOT_FOUND, "Query not found: %.128s", name);
	return 0;
}
