#ifndef ACCORD_API_JSONSTORES_H
#define ACCORD_API_JSONSTORES_H

#include "api/api.h"
#include "inventory/jsonstore.h"

/* Shared by the JSON store handlers (jsonstores.c: stores, capacity, access rules;
 * jsonstore_data.c: items and queries).  Not used elsewhere. */

#define DOC_JSONSTORE                                                                                                  \
	{                                                                                                              \
		"store", "string", "the JSON store's name"                                                             \
	}

/* The path's {org} and {store} with `need` checked (jsonstore_open; c->err set). */
int api_jsonstore_open(struct api_call *c, enum access_level need, struct jsonstore *s) WUR;
/* offset and limit (api_paging, but 30 when no limit is given, as Concord) and the
 * optional `filter` query parameter (NULL when absent or empty). */
int api_jsonstore_paging(struct api_call *c, size_t *limit, size_t *offset, const char **filter) WUR;

/* Whether filter occurs in name, ignoring ASCII case (Concord's list filter). */
bool api_jsonstore_name_has(const char *name, const char *filter);

#endif
