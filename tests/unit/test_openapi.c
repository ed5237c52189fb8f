/* Unit tests for the route documentation (struct api_doc) and api/openapi.c: every route
 * of every table has a summary, a description of each of its path parameters and schemas
 * that are valid JSON; changes name their audit object and action; the document has an
 * operation for every route. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/openapi.h"
#include "api/routes.h"

static int undocumented(void *ctx, const struct api_route *r)
{
	size_t *n = ctx;

	if (!r->doc || !r->doc->summary || !r->doc->summary[0]) {
		print_error("%s %s has no struct api_doc with a summary\n", r->method, r->pattern);
		(*n)++;
	}
	return 0;
}

/* Every route has a documentation: add one next to the route table when this fails. */
static void test_every_route_documented(void **state)
{
	size_t n = 0;

	(void)state;
	assert_int_equal(api_routes_each(undocumented, &n), 0);
	assert_int_equal(n, 0);
}

static bool schema_ok(const struct api_route *r, const char *what, const char *text)
{
	json_t *v;

	if (!text)
		return true;
	if (!(v = api_openapi_schema(text))) {
		print_error("%s %s: %s schema is not valid JSON: %s\n", r->method, r->pattern, what, text);
		return false;
	}
	json_decref(v);
	return true;
}

/* Each "{name}" or "{name*}" of the pattern has an entry in params. */
static bool path_params_described(const struct api_route *r)
{
	for (const char *p = r->pattern; (p = strchr(p, '{')); p++) {
		size_t n = strcspn(p + 1, "*}");
		bool found = false;

		for (const struct api_param_doc *q = r->doc->params; q && q->name; q++)
			found = found || (strlen(q->name) == n && strncmp(q->name, p + 1, n) == 0);
		if (!found) {
			print_error("%s %s: path parameter '%.*s' has no description\n", r->method, r->pattern, (int)n,
				    p + 1);
			return false;
		}
	}
	return true;
}

static int check_doc(void *ctx, const struct api_route *r)
{
	size_t *bad = ctx;
	const struct api_doc *d = r->doc;
	bool ok;

	if (!d)
		return 0; /* test_every_route_documented reports it */
	ok = schema_ok(r, "body", d->body) && schema_ok(r, "response", d->response) && path_params_described(r);
	for (const struct api_param_doc *q = d->params; q && q->name; q++)
		if (!q->type || !q->desc ||
		    (strcmp(q->type, "string") && strcmp(q->type, "integer") && strcmp(q->type, "boolean"))) {
			print_error("%s %s: parameter %s needs a type and a description\n", r->method, r->pattern,
				    q->name);
			ok = false;
		}
	/* A route that changes something is audited; reads and public routes (nobody to name,
	 * e.g. a logout) are not. */
	if (strcmp(r->method, "GET") != 0 && !(r->flags & API_PUBLIC) && !d->audit.object &&
	    !strstr(r->pattern, "validate") &&
	    !strstr(r->pattern, "/exec") &&
	    !strstr(r->pattern, "/custom_form/{id}/{name}/start")) { /* Concord's POST that only reads */
		print_error("%s %s changes something but names no audit object\n", r->method, r->pattern);
		ok = false;
	}
	if (d->audit.object && !d->audit.action) {
		print_error("%s %s: audit object without an action\n", r->method, r->pattern);
		ok = false;
	}
	*bad += !ok;
	return 0;
}

static void test_docs_are_well_formed(void **state)
{
	size_t bad = 0;

	(void)state;
	assert_int_equal(api_routes_each(check_doc, &bad), 0);
	assert_int_equal(bad, 0);
}

/* The document's path for a pattern ("{path*}" → "{path}"), any parameter names. */
static json_t *find_operation(json_t *paths, const struct api_route *r)
{
	const char *key;
	json_t *item;
	char method[16];
	size_t i;

	for (i = 0; r->method[i] && i + 1 < sizeof method; i++)
		method[i] = (char)(r->method[i] | 0x20);
	method[i] = 0;
	json_object_foreach(paths, key, item)
	{
		const char *a = key, *b = r->pattern;

		while (*a && *b) {
			if (*a == '{' && *b == '{') {
				a = strchr(a, '}');
				b = strchr(b, '}');
				if (!a || !b)
					break;
			} else if (*a != *b) {
				break;
			}
			a++;
			b++;
		}
		if (a && b && !*a && !*b && json_object_get(item, method))
			return json_object_get(item, method);
	}
	return NULL;
}

static int has_operation(void *ctx, const struct api_route *r)
{
	json_t *op = find_operation(json_object_get(ctx, "paths"), r);

	if (!op) {
		print_error("%s %s is not in the document\n", r->method, r->pattern);
		return -1;
	}
	if (!json_object_get(json_object_get(op, "responses"), "500")) {
		print_error("%s %s: no 500 answer\n", r->method, r->pattern);
		return -1;
	}
	return 0;
}

static void test_document_has_every_route(void **state)
{
	struct err e = {0};
	json_t *doc = api_openapi_build(&e);

	(void)state;
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "openapi")), "3.1.0");
	assert_int_equal(api_routes_each(has_operation, doc), 0);
	assert_non_null(
	    json_object_get(json_object_get(json_object_get(doc, "components"), "securitySchemes"), "basic"));
	json_decref(doc);
}

static void test_schema_quotes(void **state)
{
	json_t *v = api_openapi_schema("{'type':'object','properties':{'a':{'type':'string'}}}");

	(void)state;
	assert_non_null(v);
	assert_string_equal(json_string_value(json_object_get(v, "type")), "object");
	json_decref(v);
	assert_null(api_openapi_schema("{'type':"));
	assert_null(api_openapi_schema("{'a':1,'a':2}")); /* duplicate keys are a mistake */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_route_documented),
	    cmocka_unit_test(test_docs_are_well_formed),
	    cmocka_unit_test(test_document_has_every_route),
	    cmocka_unit_test(test_schema_quotes),
	};
	return cmocka_run_group_tests_name("openapi", tests, NULL, NULL);
}
