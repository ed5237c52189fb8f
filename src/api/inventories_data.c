/* /api/v1/org/{org}/inventory/{inv}/data[/{path}]: the JSON items of an inventory
 * (reference §7.2).  Items are stored per path; reading a path returns the nested tree of
 * every item whose path starts with it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/inventories.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "flow/value.h"
#include "inventory/jsonstore_policy.h"

/* The Java class Concord's Jackson reads a JSON value as (its message names it): an integer
 * that fits an int is an Integer there. */
static const char *jackson_class(const json_t *v)
{
	if (json_is_integer(v) && json_integer_value(v) >= INT32_MIN && json_integer_value(v) <= INT32_MAX)
		return "java.lang.Integer";
	return value_class_name(v);
}

/* Merges src into dst: objects key by key, recursively; anything else replaces. */
static int deep_merge(json_t *dst, json_t *src)
{
	const char *key;
	json_t *v;

	json_object_foreach(src, key, v)
	{
		json_t *d = json_object_get(dst, key);
		if (json_is_object(d) && json_is_object(v)) {
			if (deep_merge(d, v))
				return -1;
		} else if (json_object_set(dst, key, v)) {
			return -1;
		}
	}
	return 0;
}

/* Places value at the nested position of path ("a/b/c"; a leading '/' is dropped, empty
 * segments are skipped). */
static int tree_put(json_t *root, const char *path, json_t *value)
{
	json_t *cur = root;
	char *copy = strdup(*path == '/' ? path + 1 : path), *seg;
	int rc = 0;

	if (!copy)
		return -1;
	seg = copy;
	for (;;) {
		char *slash = strchr(seg, '/');
		json_t *child;
		if (slash)
			*slash = '\0';
		if (!*seg && slash) {
			seg = slash + 1;
			continue;
		}
		child = json_object_get(cur, seg);
		if (!slash || !slash[1]) {
			if (json_is_object(child) && json_is_object(value))
				rc = deep_merge(child, value);
			else
				rc = json_object_set(cur, seg, value);
			break;
		}
		if (!json_is_object(child)) {
			child = json_object();
			if (!child || json_object_set_new(cur, seg, child)) {
				rc = -1;
				break;
			}
		}
		cur = child;
		seg = slash + 1;
	}
	free(copy);
	return rc;
}

/* A stored item's JSON (new; NULL if it does not parse), by base/json_fast. */
static json_t *stored_json(const char *data)
{
	struct err ignored;

	return jsonx_parse(data, strlen(data), JSONX_DEPTH_JANSSON, &ignored);
}

static int add_to_tree(void *ctx, const char *path, const char *data, struct err *e)
{
	json_t *v = stored_json(data);
	int rc;

	if (!v)
		return err_set(e, ERR_INTERNAL, "stored item %.128s is not valid JSON", path);
	rc = tree_put(ctx, path, v);
	json_decref(v);
	return rc ? err_set(e, ERR_INTERNAL, "out of memory") : 0;
}

static int reply_tree(struct api_call *c, const struct inventory *inv, const char *path)
{
	json_t *root = json_object();
	int rc;

	if (!root)
		return api_fail(c, ERR_INTERNAL, "out of memory");
	rc = store_inventory_items_each(c->db, inv->rid, path, add_to_tree, root, &c->err);
	if (rc) {
		json_decref(root);
		return rc;
	}
	return api_reply(c, root);
}

static int add_to_list(void *ctx, const char *path, const char *data, struct err *e)
{
	json_t *v = stored_json(data);

	if (!v)
		return err_set(e, ERR_INTERNAL, "stored item %.128s is not valid JSON", path);
	if (json_array_append_new(ctx, json_pack("{s:s,s:o}", "path", path, "data", v)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	return 0;
}

int api_inventory_data_list(struct api_call *c)
{
	struct org org;
	struct inventory inv;
	json_t *list;
	int rc;

	if ((rc = api_inventory_load(c, ACCESS_READER, &org, &inv)))
		return rc;
	if (!(list = json_array()))
		return api_fail(c, ERR_INTERNAL, "out of memory");
	if ((rc = store_inventory_items_each(c->db, inv.rid, NULL, add_to_list, list, &c->err))) {
		json_decref(list);
		return rc;
	}
	return api_reply(c, list);
}

int api_inventory_data_get(struct api_call *c)
{
	const char *path = api_param(c, "path"), *single = http_query(c->req, "singleItem");
	struct org org;
	struct inventory inv;
	int rc;

	if ((rc = api_inventory_load(c, ACCESS_READER, &org, &inv)))
		return rc;
	if (!single || strcasecmp(single, "true") != 0)
		return reply_tree(c, &inv, path);
	return api_inventory_item_reply(c, inv.rid, path);
}

int api_inventory_item_reply(struct api_call *c, int64_t rid, const char *path)
{
	char *data = NULL;
	int rc = store_inventory_item_get(c->db, rid, path, &data, &c->err);

	if (rc == -ERR_NOT_FOUND) { /* Concord answers a missing single item with 204 */
		http_resp_bytes(c->resp, 204, NULL, NULL, 0);
		return 0;
	}
	if (rc)
		return rc;
	http_resp_take(c->resp, 200, "application/json", data, strlen(data));
	return 0;
}

int api_inventory_data_put(struct api_call *c)
{
	const char *path = api_param(c, "path");
	struct org org;
	struct inventory inv;
	json_t *body = NULL;
	int rc;

	if ((rc = http_body_json(c->req, &body, &c->err)))
		return rc;
	/* checked before access, as Concord does */
	if (!strchr(path, '/') && !json_is_object(body)) {
		rc = api_fail(c, ERR_INVALID, "Top-level inventory entries must be JSON objects. Got: class %s",
			      jackson_class(body));
		goto out;
	}
	if ((rc = api_inventory_load(c, ACCESS_WRITER, &org, &inv)) ||
	    (rc = jsonstore_policy_item(c->db, &c->who, &org, &inv, path, body, &c->err)))
		goto out;
	if ((rc = store_inventory_item_put(c->db, inv.rid, path, body, &c->err)))
		goto out;
	rc = reply_tree(c, &inv, path);
out:
	json_decref(body);
	return rc;
}

/* The body of a bulk item write (borrowed): a JSON array of 1 … limits.inventory_bulk_items
 * objects {"path": non-empty string, "data": any JSON}.  *items: new array (caller frees)
 * borrowing from body.  400 naming the first bad item's index, 413 over the limit. */
static int bulk_items(struct api_call *c, const json_t *body, struct inventory_item_in **items, size_t *n)
{
	size_t count = json_array_size(body);

	*items = NULL;
	*n = 0;
	if (!json_is_array(body) || count == 0)
		return api_fail(c, ERR_INVALID,
				"A bulk item write takes a non-empty JSON array of {\"path\", \"data\"}");
	if (count > limits.inventory_bulk_items)
		return api_fail(c, ERR_TOO_LARGE,
				"Too many items in one request: %zu, limit %zu (--limit-inventory-bulk-items)", count,
				limits.inventory_bulk_items);
	if (!(*items = calloc(count, sizeof **items)))
		return api_fail(c, ERR_INTERNAL, "out of memory");
	for (size_t i = 0; i < count; i++) {
		const json_t *it = json_array_get(body, i), *path = json_object_get(it, "path");
		if (!json_is_object(it) || !json_is_string(path) || !json_string_length(path) ||
		    !json_object_get(it, "data")) {
			free(*items);
			*items = NULL;
			return api_fail(c, ERR_INVALID,
					"item %zu: expected an object with a non-empty string \"path\" and \"data\"",
					i);
		}
		(*items)[i] = (struct inventory_item_in){json_string_value(path), json_object_get(it, "data")};
	}
	*n = count;
	return 0;
}

int api_inventory_bulk(struct api_call *c, api_bulk_write_fn write)
{
	struct inventory_item_in *items = NULL;
	json_t *body = NULL;
	size_t n = 0, created = 0, bad = 0;
	int rc;

	if ((rc = http_body_json(c->req, &body, &c->err)) || (rc = bulk_items(c, body, &items, &n)))
		goto out;
	bad = n;
	if ((rc = write(c, items, n, &created, &bad))) {
		if (bad < n) /* one item's fault: the message names it */
			err_prefix(&c->err, "item %zu (%.128s)", bad, items[bad].path);
		goto out;
	}
	api_audit_note_count(c, "items", n);
	api_audit_note_count(c, "created", created);
	rc = api_reply(c, json_pack("{s:b,s:I,s:I,s:I}", "ok", 1, "items", (json_int_t)n, "created",
				    (json_int_t)created, "updated", (json_int_t)(n - created)));
out:
	free(items);
	json_decref(body);
	return rc;
}

/* The inventory's bulk write: the single put's rules on each item, then one transaction. */
static int bulk_write(struct api_call *c, const struct inventory_item_in *items, size_t n, size_t *created, size_t *bad)
{
	struct org org;
	struct inventory inv;
	int rc;

	for (size_t i = 0; i < n; i++) /* checked before access, as for one item */
		if (!strchr(items[i].path, '/') && !json_is_object(items[i].value)) {
			*bad = i;
			return api_fail(c, ERR_INVALID,
					"Top-level inventory entries must be JSON objects. Got: class %s",
					jackson_class(items[i].value));
		}
	if ((rc = api_inventory_load(c, ACCESS_WRITER, &org, &inv)) ||
	    (rc = jsonstore_policy_items(c->db, &c->who, &org, &inv, items, n, bad, &c->err)))
		return rc;
	return store_inventory_items_put(c->db, inv.rid, items, n, -1, created, bad, &c->err);
}

/* POST …/data: a JSON array of {path, data}, in one transaction. */
int api_inventory_data_bulk(struct api_call *c)
{
	return api_inventory_bulk(c, bulk_write);
}

int api_inventory_data_delete(struct api_call *c)
{
	struct org org;
	struct inventory inv;
	bool deleted;
	int rc;

	if ((rc = api_inventory_load(c, ACCESS_WRITER, &org, &inv)))
		return rc;
	if ((rc = store_inventory_item_delete(c->db, inv.rid, api_param(c, "path"), &deleted, &c->err)))
		return rc;
	return api_reply(c, json_pack("{s:b}", "ok", 1));
}
