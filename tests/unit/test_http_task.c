/* Unit tests for src/flow/tasks/http.c: the response size cap, response header parsing,
 * URL checks (scheme, query, user info kept out of messages), header and auth building.
 * libcurl is loaded on demand (flow/tasks/curl_api.h), as the task does on its first call.
 * The transfers themselves are tested black-box in tests/api/test_http_task.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../src/flow/tasks/http.c"
#include "base/str.h"

static struct http_call new_call(void)
{
	struct http_call c = {.workdir = "/nonexistent"};
	buf_init(&c.resp_body, limits.http_task_response_bytes);
	c.resp_headers = json_object();
	return c;
}

static void test_body_cap(void **state)
{
	struct http_call c;
	char chunk[40];
	(void)state;
	limits_defaults();
	limits.http_task_response_bytes = 100;
	c = new_call();
	memset(chunk, 'x', sizeof chunk);
	assert_int_equal(on_body(chunk, 1, sizeof chunk, &c), sizeof chunk);
	assert_int_equal(on_body(chunk, 1, sizeof chunk, &c), sizeof chunk);
	assert_false(c.too_large);
	/* 120 bytes would pass the cap: refused, nothing appended */
	assert_int_equal(on_body(chunk, 1, sizeof chunk, &c), 0);
	assert_true(c.too_large);
	assert_int_equal(c.resp_body.len, 80);
	call_cleanup(&c);
	limits_defaults();
}

static void test_headers_count_against_cap(void **state)
{
	struct http_call c;
	char line[64];
	(void)state;
	limits_defaults();
	limits.http_task_response_bytes = 100;
	c = new_call();
	assert_int_equal(str_fmt(line, sizeof line, "X-Long: %050d\r\n", 0), 0);
	assert_int_equal(on_header(line, 1, strlen(line), &c), strlen(line));
	assert_int_equal(on_header(line, 1, strlen(line), &c), 0);
	assert_true(c.too_large);
	call_cleanup(&c);
	limits_defaults();
}

static void test_header_parsing(void **state)
{
	struct http_call c;
	const char *lines[] = {"HTTP/1.1 302 Found\r\n",
			       "Location: /x\r\n",
			       "HTTP/1.1 200 OK\r\n",
			       "Content-Type:  text/plain \r\n",
			       "X-Empty:\r\n",
			       "no colon line\r\n",
			       "\r\n"};
	(void)state;
	limits_defaults();
	c = new_call();
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
		assert_int_equal(on_header((char *)lines[i], 1, strlen(lines[i]), &c), strlen(lines[i]));
	/* the redirect's headers are gone, values are trimmed */
	assert_null(json_object_get(c.resp_headers, "Location"));
	assert_string_equal(json_string_value(json_object_get(c.resp_headers, "Content-Type")), "text/plain");
	assert_string_equal(json_string_value(json_object_get(c.resp_headers, "X-Empty")), "");
	assert_int_equal(json_object_size(c.resp_headers), 2);
	call_cleanup(&c);
}

static int url_of(const char *json, struct http_call *c, struct err *e)
{
	json_t *in = json_loads(json, 0, NULL);
	int rc;
	assert_non_null(in);
	rc = parse_url(in, c, e);
	json_decref(in);
	return rc;
}

static void test_url(void **state)
{
	struct http_call c = new_call();
	struct err e;
	(void)state;
	assert_int_equal(url_of("{\"url\": \"http://u:secret@127.0.0.1:8080/a/b.bin?x=1\", "
				"\"query\": {\"q\": \"a b&c\", \"l\": [1, 2], \"n\": null}}",
				&c, &e),
			 0);
	assert_string_equal(c.url, "http://u:secret@127.0.0.1:8080/a/b.bin?x=1&q=a%20b%26c&l=1&l=2");
	assert_string_equal(c.shown_url, "http://127.0.0.1:8080/a/b.bin?x=1&q=a%20b%26c&l=1&l=2");
	assert_string_equal(c.file_name, "b.bin");
	call_cleanup(&c);

	c = new_call();
	assert_true(url_of("{\"url\": \"file:///etc/passwd\"}", &c, &e) < 0);
	assert_string_equal(e.msg, "'url' must be an http or https URL, got scheme 'file'");
	assert_true(url_of("{\"url\": \"HTTPS://example.com/\"}", &c, &e) == 0);
	call_cleanup(&c);

	c = new_call();
	assert_true(url_of("{}", &c, &e) < 0);
	assert_string_equal(e.msg, "('url') argument is missing");
	assert_true(url_of("{\"url\": 5}", &c, &e) < 0);
	assert_true(url_of("{\"url\": \"http://a/\", \"query\": [1]}", &c, &e) < 0);
	assert_string_equal(e.msg, "'query' must be a map, got java.util.ArrayList");
	call_cleanup(&c);
}

static void test_header_names_and_values(void **state)
{
	struct http_call c = new_call();
	struct err e;
	(void)state;
	assert_int_equal(add_header(&c, "X-Ok", "v", &e), 0);
	assert_int_equal(add_header(&c, "X-Empty", "", &e), 0);
	assert_true(add_header(&c, "X Bad", "v", &e) < 0);
	assert_true(add_header(&c, "X-Bad:", "v", &e) < 0);
	assert_true(add_header(&c, "", "v", &e) < 0);
	assert_true(add_header(&c, "X-Inject", "a\r\nB: c", &e) < 0);
	assert_string_equal(c.headers->data, "X-Ok: v");
	assert_string_equal(c.headers->next->data, "X-Empty;");
	assert_null(c.headers->next->next);
	call_cleanup(&c);
}

static int auth_of(const char *json, struct http_call *c, struct err *e)
{
	json_t *in = json_loads(json, 0, NULL);
	int rc;
	assert_non_null(in);
	rc = parse_auth(in, c, e);
	json_decref(in);
	return rc;
}

static void test_auth(void **state)
{
	struct http_call c = new_call();
	struct err e;
	(void)state;
	assert_int_equal(auth_of("{\"auth\": {\"basic\": {\"username\": \"u\", \"password\": \"p\"}}}", &c, &e), 0);
	assert_string_equal(c.auth, "Authorization: Basic dTpw");
	call_cleanup(&c);
	c = new_call();
	assert_int_equal(auth_of("{\"auth\": {\"basic\": {\"token\": \"dTpw\"}}}", &c, &e), 0);
	assert_string_equal(c.auth, "Authorization: Basic dTpw");
	call_cleanup(&c);
	c = new_call();
	assert_true(auth_of("{\"auth\": {\"basic\": {\"token\": \"sec ret!\"}}}", &c, &e) < 0);
	assert_null(strstr(e.msg, "sec ret"));
	assert_true(auth_of("{\"auth\": {\"basic\": {\"token\": \"dTpw\\r\\nX: y\"}}}", &c, &e) < 0);
	assert_true(auth_of("{\"auth\": {\"bearer\": \"x\"}}", &c, &e) < 0);
	assert_true(auth_of("{\"auth\": {\"basic\": {\"password\": \"p\"}}}", &c, &e) < 0);
	assert_null(c.auth);
	call_cleanup(&c);
}

/* The parsers build curl handles, lists and URLs: the table must be loaded. */
static int load_curl(void **state)
{
	struct err e;
	(void)state;
	if (curl_api_load(&e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return -1;
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_body_cap),
	    cmocka_unit_test(test_headers_count_against_cap),
	    cmocka_unit_test(test_header_parsing),
	    cmocka_unit_test(test_url),
	    cmocka_unit_test(test_header_names_and_values),
	    cmocka_unit_test(test_auth),
	};
	limits_defaults();
	return cmocka_run_group_tests(tests, load_curl, NULL);
}
