#ifndef ACCORD_API_INVENTORIES_H
#define ACCORD_API_INVENTORIES_H

#include "api/api.h"
#include "store/access.h"
#include "store/inventories.h"
#include "store/orgs.h"

/* Shared by the inventory handlers (inventories.c: inventories, access rules, queries;
 * inventories_data.c: items).  Not used elsewhere. */

/* Resolves the path's {org} and {inv} and checks that the caller holds `need` on the
 * inventory (ACCESS_NONE: no check).  Unknown org or inventory: 404; not allowed: 403
 * (c->err set). */
int api_inventory_load(struct api_call *c, enum access_level need, struct org *org, struct inventory *inv) WUR;

/* The two faces of one storage: inventories (this API) and JSON stores (api/jsonstores.c).
 * noun/Noun name the resource in messages, visibility is a new one's default. */
struct inventory_face {
	const char *noun, *Noun, *visibility;
};
extern const struct inventory_face inventory_face_inventory;

/* POST …/{inventory|jsonstore}: creates the one named in body (an object, borrowed), or
 * updates the one named or identified by "id" (name, visibility, owner), with Concord's
 * rules: creating needs org membership, updating WRITER, changing the owner OWNER.  Fills
 * org and inv (as stored) and *created; replies nothing (c->err set on failure). */
int api_inventory_put(struct api_call *c, const struct inventory_face *f, json_t *body, struct org *org,
		      struct inventory *inv, bool *created) WUR;

/* Item handlers (inventories_data.c). */
int api_inventory_data_list(struct api_call *c);
int api_inventory_data_get(struct api_call *c);
int api_inventory_data_put(struct api_call *c);
int api_inventory_data_delete(struct api_call *c);
int api_inventory_data_bulk(struct api_call *c);
/* A bulk item write (POST …/inventory/{inv}/data, POST …/jsonstore/{store}/item): the body,
 * a JSON array of 1 … limits.inventory_bulk_items objects {"path": non-empty string, "data":
 * any JSON} (else 400 naming the first bad item's index, 413 over the limit), is handed to
 * write (items borrowed from the body; it checks access and writes them all or nothing,
 * *created: how many paths were new; on failure *bad: the index of the item at fault, n
 * when none is, and the error is then prefixed "item <index> (<path>)"), then answered
 * {"ok", "items", "created", "updated"} with the counts noted for the audit entry. */
typedef int (*api_bulk_write_fn)(struct api_call *c, const struct inventory_item_in *items, size_t n, size_t *created,
				 size_t *bad);
int api_inventory_bulk(struct api_call *c, api_bulk_write_fn write);
/* Replies with the item at exactly path as stored, or 204 with no body when there is none
 * (Concord's answer for a missing single item). */
int api_inventory_item_reply(struct api_call *c, int64_t rid, const char *path);

#endif
