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

/* Item handlers (inventories_data.c). */
int api_inventory_data_list(struct api_call *c);
int api_inventory_data_get(struct api_call *c);
int api_inventory_data_put(struct api_call *c);
int api_inventory_data_delete(struct api_call *c);

#endif
