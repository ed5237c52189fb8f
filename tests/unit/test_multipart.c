/* Unit tests for src/http/multipart: boundaries, parts, helpers, malformed bodies, limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/limits.h"
#include "http/multipart.h"

#define CT "multipart/form-data; boundary=XyZ"

static int setup(void **state)
{
	(void)state;
	limits_defaults();
	return 0;
}

static int parse(const char *ct, const char *body, size_t len, struct multipart *mp, struct err *e)
{
	return multipart_parse(str_from(ct), (struct str){body, len}, mp, e);
}

#define BODY(lit) lit, sizeof(lit) - 1

static void test_curl_style_body(void **state)
{
	static const char body[] = "--XyZ\r\n"
				   "Content-Disposition: form-data; name=\"type\"\r\n"
				   "\r\n"
				   "data\r\n"
				   "--XyZ\r\n"
				   "Content-Disposition: form-data; name=\"data\"; filename=\"blob.bin\"\r\n"
				   "Content-Type: application/octet-stream\r\n"
				   "\r\n"
				   "\x00\x01\r\n--Xy\r\n\xff\r\n"
				   "--XyZ--\r\n";
	struct multipart mp;
	const struct multipart_part *p;
	struct err e;
	(void)state;

	assert_int_equal(parse(CT, BODY(body), &mp, &e), 0);
	assert_int_equal(mp.n_parts, 2);
	assert_true(str_eq_cstr(mp.parts[0].name, "type"));
	assert_false(mp.parts[0].has_filename);
	assert_true(multipart_part_is_text(&mp.parts[0]));
	assert_true(str_eq_cstr(mp.parts[0].data, "data"));
	p = multipart_find(&mp, "data");
	assert_non_null(p);
	assert_true(p->has_filename);
	assert_true(str_eq_cstr(p->filename, "blob.bin"));
	assert_true(str_eq_cstr(p->content_type, "application/octet-stream"));
	assert_false(multipart_part_is_text(p));
	assert_int_equal(p->data.len, 11);
	assert_memory_equal(p->data.p, "\x00\x01\r\n--Xy\r\n\xff", 11);
	assert_null(multipart_find(&mp, "Data")); /* exact match only */
	multipart_cleanup(&mp);
}

static void test_quoted_boundary_preamble_epilogue(void **state)
{
	static const char body[] = "preamble text\r\n"
				   "--a b:c\r\n"
				   "content-disposition: FORM-DATA; NAME=name\r\n"
				   "content-type: text/plain; charset=utf-8\r\n"
				   "\r\n"
				   "  mySecret \r\n"
				   "--a b:c--\r\n"
				   "epilogue --a b:c\r\n";
	struct multipart mp;
	struct str v;
	struct err e;
	(void)state;

	assert_int_equal(parse("Multipart/Form-Data ; charset=x; boundary=\"a b:c\"", BODY(body), &mp, &e), 0);
	assert_int_equal(mp.n_parts, 1);
	assert_true(str_eq_cstr(mp.parts[0].name, "name"));
	assert_true(multipart_part_is_text(&mp.parts[0]));
	assert_true(multipart_text(&mp, "NAME", &v));
	assert_true(str_eq_cstr(v, "mySecret"));
	multipart_cleanup(&mp);
}

static void test_text_helpers(void **state)
{
	static const char body[] = "--XyZ\r\nContent-Disposition: form-data; name=\"Visibility\"\r\n\r\n   \r\n"
				   "--XyZ\r\nContent-Disposition: form-data; name=\"generatePassword\"\r\n\r\nTRUE\r\n"
				   "--XyZ\r\nContent-Disposition: form-data; name=\"flag\"\r\n\r\nyes\r\n"
				   "--XyZ\r\nContent-Disposition: form-data; name=\"empty\"\r\n\r\n\r\n"
				   "--XyZ--";
	struct multipart mp;
	struct str v;
	struct err e;
	(void)state;

	assert_int_equal(parse(CT, BODY(body), &mp, &e), 0);
	assert_int_equal(mp.n_parts, 4);
	assert_false(multipart_text(&mp, "visibility", &v)); /* blank counts as absent */
	assert_false(multipart_text(&mp, "empty", &v));
	assert_int_equal(mp.parts[3].data.len, 0);
	assert_true(multipart_bool(&mp, "generatepassword"));
	assert_false(multipart_bool(&mp, "flag"));
	assert_false(multipart_bool(&mp, "missing"));
	multipart_cleanup(&mp);
}

static void test_part_without_headers_and_padding(void **state)
{
	static const char body[] = "--XyZ \t\r\n\r\nno headers\r\n--XyZ--";
	static const char body2[] = "--XyZ  \r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--XyZ--";
	struct multipart mp;
	struct err e;
	(void)state;

	assert_true(parse(CT, BODY(body), &mp, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	assert_non_null(strstr(e.msg, "no Content-Disposition"));
	assert_int_equal(mp.n_parts, 0);
	assert_int_equal(parse(CT, BODY(body2), &mp, &e), 0);
	assert_true(str_eq_cstr(mp.parts[0].data, "v"));
	multipart_cleanup(&mp);
}

static void test_empty_form(void **state)
{
	struct multipart mp;
	struct err e;
	(void)state;

	assert_int_equal(parse(CT, BODY("--XyZ--\r\n"), &mp, &e), 0);
	assert_int_equal(mp.n_parts, 0);
	multipart_cleanup(&mp);
}

static void expect_error(const char *ct, const char *body, size_t len, enum err_code code, const char *fragment)
{
	struct multipart mp;
	struct err e;

	assert_true(parse(ct, body, len, &mp, &e) < 0);
	assert_int_equal(e.code, code);
	if (!strstr(e.msg, fragment))
		fail_msg("message '%s' lacks '%s'", e.msg, fragment);
	assert_null(mp.parts);
	assert_int_equal(mp.n_parts, 0);
}

static void test_malformed(void **state)
{
	(void)state;
	expect_error("application/json", BODY("{}"), ERR_MEDIA_TYPE, "multipart/form-data");
	expect_error("", BODY(""), ERR_MEDIA_TYPE, "multipart/form-data");
	expect_error("multipart/mixed; boundary=XyZ", BODY("--XyZ--"), ERR_MEDIA_TYPE, "multipart/form-data");
	expect_error("multipart/form-data", BODY("--XyZ--"), ERR_INVALID, "boundary");
	expect_error("multipart/form-data; boundary=", BODY("--XyZ--"), ERR_INVALID, "boundary");
	expect_error("multipart/form-data; boundary=\"XyZ", BODY("--XyZ--"), ERR_INVALID, "unterminated");
	expect_error("multipart/form-data; boundary", BODY("--XyZ--"), ERR_INVALID, "'='");
	expect_error("multipart/form-data; boundary="
		     "12345678901234567890123456789012345678901234567890123456789012345678901",
		     BODY("--XyZ--"), ERR_INVALID, "70");
	expect_error(CT, BODY(""), ERR_INVALID, "does not contain the boundary");
	expect_error(CT, BODY("--Other--"), ERR_INVALID, "does not contain the boundary");
	expect_error(CT, BODY("--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nvalue"), ERR_INVALID,
		     "no closing boundary");
	expect_error(CT, BODY("--XyZ\r\nContent-Disposition: form-data; name=a\r\n"), ERR_INVALID, "not terminated");
	expect_error(CT, BODY("--XyZx\r\n"), ERR_INVALID, "CRLF");
	expect_error(CT, BODY("--XyZ\nContent-Disposition: form-data; name=a\n\nv\n--XyZ--"), ERR_INVALID, "CRLF");
	expect_error(CT, BODY("--XyZ\r\nContent-Disposition: attachment; name=a\r\n\r\nv\r\n--XyZ--"), ERR_INVALID,
		     "not form-data");
	expect_error(CT, BODY("--XyZ\r\nContent-Disposition: form-data\r\n\r\nv\r\n--XyZ--"), ERR_INVALID,
		     "has no name");
	expect_error(CT, BODY("--XyZ\r\nContent-Disposition: form-data; name=\"\"\r\n\r\nv\r\n--XyZ--"), ERR_INVALID,
		     "has no name");
	expect_error(CT, BODY("--XyZ\r\nContent-Disposition: form-data; name=\"a\r\n\r\nv\r\n--XyZ--"), ERR_INVALID,
		     "unterminated");
	expect_error(CT, BODY("--XyZ\r\nContent-Disposition: form-data; name=\"a\"x\r\n\r\nv\r\n--XyZ--"), ERR_INVALID,
		     "after a quoted value");
	expect_error(CT, BODY("--XyZ\r\nbogus header\r\n\r\nv\r\n--XyZ--"), ERR_INVALID, "without ':'");
	expect_error(CT,
		     BODY("--XyZ\r\nContent-Disposition: form-data; name=a\r\nContent-Type: text/plain;\r\n "
			  "charset=x\r\n\r\nv\r\n--XyZ--"),
		     ERR_INVALID, "folded");
	expect_error(CT,
		     BODY("--XyZ\r\nContent-Disposition: form-data; name=a\r\nContent-Disposition: form-data; "
			  "name=b\r\n\r\nv\r\n--XyZ--"),
		     ERR_INVALID, "duplicate");
	expect_error(CT,
		     BODY("--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n"
			  "--XyZ\r\nContent-Disposition: form-data\r\n\r\nv\r\n--XyZ--"),
		     ERR_INVALID, "part 2");
}

static void test_escaped_quote_in_name(void **state)
{
	static const char body[] = "--XyZ\r\nContent-Disposition: form-data; name=\"a\\\"b\"; filename=\"\"\r\n\r\n"
				   "v\r\n--XyZ--";
	struct multipart mp;
	struct err e;
	(void)state;

	assert_int_equal(parse(CT, BODY(body), &mp, &e), 0);
	assert_true(str_eq_cstr(mp.parts[0].name, "a\\\"b"));
	assert_true(mp.parts[0].has_filename);
	assert_int_equal(mp.parts[0].filename.len, 0);
	multipart_cleanup(&mp);
}

static char *repeat_parts(size_t n, size_t *len)
{
	static const char one[] = "--XyZ\r\nContent-Disposition: form-data; name=p\r\n\r\nv\r\n";
	char *b = malloc(n * (sizeof one - 1) + 8);
	size_t off = 0;

	for (size_t i = 0; i < n; i++, off += sizeof one - 1)
		memcpy(b + off, one, sizeof one - 1);
	memcpy(b + off, "--XyZ--", 7);
	*len = off + 7;
	return b;
}

static void test_limits(void **state)
{
	struct multipart mp;
	struct err e;
	size_t len;
	char *b;
	(void)state;

	b = repeat_parts(limits.multipart_parts, &len);
	assert_int_equal(parse(CT, b, len, &mp, &e), 0);
	assert_int_equal(mp.n_parts, limits.multipart_parts);
	multipart_cleanup(&mp);
	free(b);
	b = repeat_parts(limits.multipart_parts + 1, &len);
	expect_error(CT, b, len, ERR_TOO_LARGE, "parts");
	free(b);

	len = MULTIPART_HEADER_MAX + 200;
	b = malloc(len);
	memcpy(b, "--XyZ\r\nX-Long: ", 15);
	memset(b + 15, 'a', len - 15);
	expect_error(CT, b, len, ERR_INVALID, "headers longer");
	free(b);
}

static void test_nul_bytes(void **state)
{
	static const char in_name[] =
	    "--XyZ\r\nContent-Disposition: form-data; name=\"da\0ta\"\r\n\r\nv\r\n--XyZ--\r\n";
	static const char in_text[] =
	    "--XyZ\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\na\0b\r\n--XyZ--\r\n";
	static const char in_file[] = "--XyZ\r\nContent-Disposition: form-data; name=\"data\"; filename=\"f\"\r\n\r\n"
				      "a\0b\r\n--XyZ--\r\n";
	struct multipart mp;
	struct err e;
	(void)state;

	expect_error(CT, in_name, sizeof in_name - 1, ERR_INVALID, "headers contain a NUL byte");
	expect_error(CT, in_text, sizeof in_text - 1, ERR_INVALID, "text field contains a NUL byte");
	/* a file part is binary: NUL bytes are data */
	assert_int_equal(parse(CT, in_file, sizeof in_file - 1, &mp, &e), 0);
	assert_int_equal(mp.parts[0].data.len, 3);
	multipart_cleanup(&mp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_curl_style_body),
	    cmocka_unit_test(test_quoted_boundary_preamble_epilogue),
	    cmocka_unit_test(test_text_helpers),
	    cmocka_unit_test(test_part_without_headers_and_padding),
	    cmocka_unit_test(test_empty_form),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_escaped_quote_in_name),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_nul_bytes),
	};
	return cmocka_run_group_tests_name("multipart", tests, setup, NULL);
}
