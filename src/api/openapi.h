#ifndef ACCORD_API_OPENAPI_H
#define ACCORD_API_OPENAPI_H

#include <jansson.h>

#include "api/api.h"

/* The OpenAPI 3.1 document of every route (GET /api/openapi.json), built from the route
 * tables and the struct api_doc kept next to each (routes.c lists the tables). */

/* The whole document as a new JSON object; NULL with e set when a route has no
 * documentation or one of its schemas is not valid JSON (a programmer's error that
 * tests/unit/test_openapi.c catches). */
json_t *api_openapi_build(struct err *e);

/* One schema text of a struct api_doc (JSON with single quotes) as a new JSON value;
 * NULL when it is not valid JSON. */
json_t *api_openapi_schema(const char *text);

#endif
