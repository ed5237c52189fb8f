/* Unit tests for http/router.c: literal and parameter segments, precedence, methods,
 * rest parameters, bad patterns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/str.h"
#include "http/router.h"

static int h1, h2, h3, h4, h5;

static struct router *build(void)
{
	static const struct http_route routes[] = {
	    {"GET", "/api/v1/apikey", &h1, 0, 0},
	    {"DELETE", "/api/v1/apikey/{id}", &h2, 0, 0},
	    {"GET", "/api/v1/org/{org}/secret/{name}", &h3, 0, 0},
	    {"GET", "/api/v1/org/{org}/secret/{name}/public", &h4, 0, 0},
	    {"GET", "/api/v1/org/{org}/inventory/{inv}/data/{path*}", &h5, 0, 0},
	    {"GET", "/api/v1/org/{org}/secret/special", &h1, 0, 0},
	};
	struct router *r = router_new();
	struct err e;

	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
		assert_int_equal(router_add(r, &routes[i], &e), 0);
	return r;
}

static const struct http_route *match(struct router *r, struct http_request *req, const char *method, const char *path,
				      struct err *e)
{
	char allow[64];

	memset(req, 0, sizeof *req);
	arena_init(&req->arena);
	req->method = method;
	req->path = path;
	return router_match(r, req, allow, sizeof allow, e);
}

static void test_literal_and_params(void **state)
{
	struct router *r = build();
	struct http_request req;
	struct err e;
	const struct http_route *hr;
	(void)state;

	hr = match(r, &req, "GET", "/api/v1/apikey", &e);
	assert_non_null(hr);
	assert_ptr_equal(hr->handler, &h1);
	assert_int_equal(req.n_params, 0);
	arena_cleanup(&req.arena);

	hr = match(r, &req, "GET", "/api/v1/org/Default/secret/mine", &e);
	assert_ptr_equal(hr->handler, &h3);
	assert_string_equal(http_param(&req, "org"), "Default");
	assert_string_equal(http_param(&req, "name"), "mine");
	assert_null(http_param(&req, "nope"));
	arena_cleanup(&req.arena);

	hr = match(r, &req, "GET", "/api/v1/org/Default/secret/mine/public", &e);
	assert_ptr_equal(hr->handler, &h4);
	arena_cleanup(&req.arena);

	/* trailing slash tolerated */
	hr = match(r, &req, "GET", "/api/v1/apikey/", &e);
	assert_ptr_equal(hr->handler, &h1);
	arena_cleanup(&req.arena);
	router_free(r);
}

static void test_literal_beats_param(void **state)
{
	struct router *r = build();
	struct http_request req;
	struct err e;
	const struct http_route *hr;
	(void)state;

	hr = match(r, &req, "GET", "/api/v1/org/x/secret/special", &e);
	assert_non_null(hr);
	/* both patterns match; they tie on literal prefix, the first added wins */
	assert_true(hr->handler == &h3 || hr->handler == &h1);
	arena_cleanup(&req.arena);
	router_free(r);
}

static void test_rest_param(void **state)
{
	struct router *r = build();
	struct http_request req;
	struct err e;
	const struct http_route *hr;
	(void)state;

	hr = match(r, &req, "GET", "/api/v1/org/o/inventory/i/data/a/b/c", &e);
	assert_ptr_equal(hr->handler, &h5);
	assert_string_equal(http_param(&req, "path"), "a/b/c");
	arena_cleanup(&req.arena);
	hr = match(r, &req, "GET", "/api/v1/org/o/inventory/i/data", &e);
	assert_null(hr);
	arena_cleanup(&req.arena);
	{
		/* deeper than any pattern: only the rest parameter can take it */
		char path[512] = "/api/v1/org/o/inventory/i/data", rest[512] = "";

		for (int i = 0; i < 50; i++) {
			size_t n = strlen(rest);
			assert_int_equal(str_fmt(rest + n, sizeof rest - n, "%ss%d", i ? "/" : "", i), 0);
		}
		{
			size_t used = strlen(path);
			assert_true(snprintf(path + used, sizeof path - used, "/%s/", rest) <
				    (int)(sizeof path - used));
		}
		hr = match(r, &req, "GET", path, &e);
		assert_non_null(hr);
		assert_ptr_equal(hr->handler, &h5);
		assert_string_equal(http_param(&req, "path"), rest);
		arena_cleanup(&req.arena);
		hr = match(r, &req, "GET", path + 4, &e); /* "/v1/org/…": no pattern */
		assert_null(hr);
		assert_int_equal(e.code, ERR_NOT_FOUND);
		arena_cleanup(&req.arena);
	}
	router_free(r);
}

static void test_not_found_and_method(void **state)
{
	struct router *r = build();
	struct http_request req;
	struct err e;
	(void)state;

	assert_null(match(r, &req, "GET", "/api/v1/nothing", &e));
	assert_int_equal(e.code, ERR_NOT_FOUND);
	arena_cleanup(&req.arena);
	assert_null(match(r, &req, "POST", "/api/v1/apikey/123", &e));
	assert_int_equal(e.code, ERR_METHOD);
	assert_non_null(strstr(e.msg, "DELETE"));
	arena_cleanup(&req.arena);
	assert_null(match(r, &req, "GET", "/api/v1/org//secret/x", &e)); /* empty parameter */
	arena_cleanup(&req.arena);
	assert_null(match(r, &req, "GET", "/api/v1/apikeyX", &e));
	arena_cleanup(&req.arena);
	router_free(r);
}

/* Routes with {x*} and routes of the path's segment count are held against a path in the
 * order they were added: the first of equal scores wins, Allow lists methods in that order. */
static void test_order_across_rest_and_counted_routes(void **state)
{
	static const struct http_route routes[] = {
	    {"GET", "/x/{a*}", &h1, 0, 0}, {"POST", "/x/{b}", &h2, 0, 0}, {"PUT", "/x/{c*}", &h3, 0, 0},
	    {"GET", "/x/{d}", &h4, 0, 0},  {"DELETE", "/x/y", &h5, 0, 0},
	};
	struct router *r = router_new();
	struct http_request req;
	struct err e;
	char allow[64];
	const struct http_route *hr;
	(void)state;

	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
		assert_int_equal(router_add(r, &routes[i], &e), 0);
	hr = match(r, &req, "GET", "/x/v", &e);
	assert_ptr_equal(hr->handler, &h1); /* added before the equal /x/{d} */
	arena_cleanup(&req.arena);
	hr = match(r, &req, "DELETE", "/x/y", &e);
	assert_ptr_equal(hr->handler, &h5);
	arena_cleanup(&req.arena);
	memset(&req, 0, sizeof req);
	arena_init(&req.arena);
	req.method = "PATCH";
	req.path = "/x/v";
	assert_null(router_match(r, &req, allow, sizeof allow, &e));
	assert_int_equal(e.code, ERR_METHOD);
	assert_string_equal(allow, "GET, POST, PUT");
	arena_cleanup(&req.arena);
	router_free(r);
}

static void test_bad_patterns(void **state)
{
	struct router *r = router_new();
	struct err e;
	struct http_route dup = {"GET", "/a/{x}", &h1, 0, 0};
	struct http_route rest_mid = {"GET", "/a/{x*}/b", &h1, 0, 0};
	struct http_route no_slash = {"GET", "a", &h1, 0, 0};
	struct http_route many = {"GET", "/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}", &h1, 0, 0};
	(void)state;

	assert_int_equal(router_add(r, &dup, &e), 0);
	assert_true(router_add(r, &dup, &e) < 0);
	assert_true(router_add(r, &rest_mid, &e) < 0);
	assert_true(router_add(r, &no_slash, &e) < 0);
	assert_true(router_add(r, &many, &e) < 0);
	router_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_literal_and_params),
	    cmocka_unit_test(test_literal_beats_param),
	    cmocka_unit_test(test_rest_param),
	    cmocka_unit_test(test_not_found_and_method),
	    cmocka_unit_test(test_order_across_rest_and_counted_routes),
	    cmocka_unit_test(test_bad_patterns),
	};
	return cmocka_run_group_tests_name("router", tests, NULL, NULL);
}
