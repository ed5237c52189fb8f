/* Fuzz target for the parsers a request meets before any handler: JSON bodies (with the
 * depth limit), ISO-8601 dates, names, API-key values, Base64 and the router.
 * The first byte selects the parser; the rest is the input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/authn.h"
#include "base/b64.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/names.h"
#include "base/rand.h"
#include "http/router.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct router *router;
static int h;

static void setup(void)
{
	static const struct http_route routes[] = {
		{"GET", "/api/v1/apikey", &h, 0, 0},
		{"DELETE", "/api/v1/apikey/{id}", &h, 0, 0},
		{"GET", "/api/v1/org/{org}/secret/{name}/public", &h, 0, 0},
		{"GET", "/api/v1/org/{org}/inventory/{inv}/data/{path*}", &h, 0, 0},
	};
	struct err e;

	rand_init();
	limits_defaults();
	router = router_new();
	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
		if (router_add(router, &routes[i], &e))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err e;
	char *s;

	if (!router)
		setup();
	if (size < 1)
		return 0;
	s = malloc(size);
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 6) {
	case 0: {
		json_t *v = jsonx_parse((const char *)data + 1, size - 1, limits.json_depth, &e);
		json_decref(v);
		break;
	}
	case 1: {
		int64_t ms;
		(void)!dt_parse_iso((const char *)data + 1, size - 1, data[0] & 8, &ms, "x", &e);
		break;
	}
	case 2:
		(void)name_valid(s, NAME_APIKEY);
		break;
	case 3: {
		uint8_t hash[APIKEY_HASH_LEN];
		(void)!authn_apikey_hash(s, hash, &e);
		break;
	}
	case 4: {
		size_t n;
		free(b64_decode((const char *)data + 1, size - 1, &n, &e));
		break;
	}
	case 5: {
		struct http_request req;
		char allow[64];
		memset(&req, 0, sizeof req);
		arena_init(&req.arena);
		req.method = (data[0] & 16) ? "GET" : "DELETE";
		req.path = s;
		(void)router_match(router, &req, allow, sizeof allow, &e);
		arena_cleanup(&req.arena);
		break;
	}
	}
	free(s);
	return 0;
}
