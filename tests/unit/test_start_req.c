/* Unit tests for src/api/process_start_req: every start part, precedence, nesting,
 * startAt and timeout forms, refused parts, and writing the payload to disk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/process_start_req.h"
#include "base/duration.h"
#include "base/archive_api.h"
#include "base/buf.h"
#include "base/datetime.h"
#include "base/limits.h"
#include "base/path.h"
#include "base/str.h"

#define CT "multipart/form-data; boundary=XyZ"
#define NOW 1800000000000LL /* 2027-01-15T08:00:00Z */
#define UUID1 "8f5a1d7e-3c2b-4a59-9f0e-1b2c3d4e5f60"
#define UUID2 "0a1b2c3d-4e5f-4061-8273-94a5b6c7d8e9"

/* A multipart body under construction; parts are added with add() and friends. */
struct body {
	struct buf b;
	struct multipart mp;
};

static void add_n(struct body *bd, const char *name, const char *ctype, const void *data, size_t len)
{
	struct err e;
	assert_int_equal(buf_printf(&bd->b, &e, "--XyZ\r\nContent-Disposition: form-data; name=\"%s\"\r\n", name), 0);
	if (ctype)
		assert_int_equal(buf_printf(&bd->b, &e, "Content-Type: %s\r\n", ctype), 0);
	assert_int_equal(buf_append(&bd->b, "\r\n", 2, &e), 0);
	assert_int_equal(buf_append(&bd->b, data, len, &e), 0);
	assert_int_equal(buf_append(&bd->b, "\r\n", 2, &e), 0);
}

static void text(struct body *bd, const char *name, const char *v)
{
	add_n(bd, name, NULL, v, strlen(v));
}

static void file(struct body *bd, const char *name, const char *ctype, const char *v)
{
	add_n(bd, name, ctype, v, strlen(v));
}

static void finish(struct body *bd)
{
	struct err e;
	assert_int_equal(buf_append_str(&bd->b, "--XyZ--\r\n", &e), 0);
	assert_int_equal(multipart_parse(str_from(CT), (struct str){bd->b.data, bd->b.len}, &bd->mp, &e), 0);
}

static void body_init(struct body *bd)
{
	memset(bd, 0, sizeof *bd);
	buf_init(&bd->b, 0);
}

static void body_cleanup(struct body *bd)
{
	multipart_cleanup(&bd->mp);
	buf_cleanup(&bd->b);
}

static int parse(struct body *bd, struct start_req *r, struct err *e)
{
	finish(bd);
	return start_req_parse(&bd->mp, NOW, r, e);
}

/* Parses a body that must fail and checks the error. */
static void expect_error(struct body *bd, enum err_code code, const char *msg)
{
	struct start_req r;
	struct err e;
	assert_true(parse(bd, &r, &e) < 0);
	assert_int_equal(e.code, code);
	assert_string_equal(e.msg, msg);
	assert_null(r.cfg);
	body_cleanup(bd);
}

static void expect_json(json_t *v, const char *want)
{
	char *got = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(got, want);
	free(got);
}

static int setup(void **state)
{
	(void)state;
	limits_defaults();
	return 0;
}

static void test_every_part(void **state)
{
	struct body bd;
	struct start_req r;
	struct err e;
	(void)state;

	body_init(&bd);
	text(&bd, "org", " Default ");
	text(&bd, "orgId", UUID1);
	text(&bd, "project", "p");
	text(&bd, "projectId", UUID1);
	text(&bd, "repo", "r");
	text(&bd, "repoId", UUID1);
	text(&bd, "repoBranchOrTag", "main");
	text(&bd, "repoCommitId", "abc123");
	text(&bd, "entryPoint", "main");
	text(&bd, "activeProfiles", " a, b,,c ,");
	text(&bd, "out", "x, y");
	text(&bd, "tags", "t1, t2 ,t1,");
	text(&bd, "startAt", "2030-01-01T10:00:00+02:00");
	text(&bd, "processTimeout", "PT1H");
	text(&bd, "suspendTimeout", "P1DT2M");
	text(&bd, "parentInstanceId", UUID2);
	text(&bd, "sync", "false");
	file(&bd, "meta", "application/json", "{\"m\":1}");
	file(&bd, "request", "application/json", "{\"arguments\":{\"a\":1}}");
	file(&bd, "data/x.txt", "application/octet-stream", "x");
	assert_int_equal(parse(&bd, &r, &e), 0);

	assert_string_equal(r.org, "Default");
	assert_string_equal(r.org_id, UUID1);
	assert_string_equal(r.project, "p");
	assert_string_equal(r.project_id, UUID1);
	assert_string_equal(r.repo, "r");
	assert_string_equal(r.repo_id, UUID1);
	assert_string_equal(r.repo_branch_or_tag, "main");
	assert_string_equal(r.repo_commit_id, "abc123");
	assert_string_equal(r.entry_point, "main");
	assert_string_equal(r.parent_instance_id, UUID2);
	expect_json(r.active_profiles, "[\"a\",\"b\",\"c\"]");
	expect_json(r.out, "[\"x\",\"y\"]");
	assert_true(r.out_from_part);
	expect_json(r.tags, "[\"t1\",\"t2\"]");
	expect_json(r.meta, "{\"m\":1}");
	assert_int_equal(r.start_at, 1893484800000LL); /* 2030-01-01T08:00:00Z */
	assert_int_equal(r.timeout_s, 3600);
	assert_int_equal(r.suspend_timeout_s, 86400 + 120);
	assert_false(r.raw_payload);
	assert_false(r.has_archive);
	/* special text parts land in cfg too, as strings */
	assert_string_equal(json_string_value(json_object_get(r.cfg, "activeProfiles")), "a, b,,c ,");
	assert_string_equal(json_string_value(json_object_get(r.cfg, "processTimeout")), "PT1H");
	expect_json(json_object_get(r.cfg, "arguments"), "{\"a\":1}");
	assert_null(json_object_get(r.cfg, "meta"));
	assert_null(json_object_get(r.cfg, "data/x.txt"));
	start_req_cleanup(&r);
	body_cleanup(&bd);
}

static void test_absent_parts(void **state)
{
	struct body bd;
	struct start_req r;
	struct err e;
	(void)state;

	body_init(&bd);
	text(&bd, "entryPoint", "   ");
	assert_int_equal(parse(&bd, &r, &e), 0);
	assert_null(r.org);
	assert_null(r.entry_point);
	assert_null(r.active_profiles);
	assert_null(r.out);
	assert_false(r.out_from_part);
	assert_null(r.tags);
	assert_null(r.meta);
	assert_int_equal(r.start_at, 0);
	assert_int_equal(r.timeout_s, -1);
	assert_int_equal(r.suspend_timeout_s, -1);
	start_req_cleanup(&r);
	body_cleanup(&bd);
}

static void test_text_part_wins_over_request(void **state)
{
	struct body bd;
	struct start_req r;
	struct err e;
	(void)state;

	body_init(&bd);
	text(&bd, "entryPoint", "fromText");
	text(&bd, "arguments.b", "t");
	file(&bd, "request", "application/json",
	     "{\"entryPoint\":\"fromRequest\",\"arguments\":{\"a\":1,\"b\":2},\"out\":[\"o1\",\"o2\"],"
	     "\"tags\":[\"x\",\"x\"],\"processTimeout\":30,\"activeProfiles\":[\"p\"]}");
	assert_int_equal(parse(&bd, &r, &e), 0);
	assert_string_equal(r.entry_point, "fromText");
	expect_json(json_object_get(r.cfg, "arguments"), "{\"a\":1,\"b\":\"t\"}");
	expect_json(r.out, "[\"o1\",\"o2\"]");
	assert_false(r.out_from_part);
	expect_json(r.tags, "[\"x\"]");
	expect_json(r.active_profiles, "[\"p\"]");
	assert_int_equal(r.timeout_s, 30);
	start_req_cleanup(&r);
	body_cleanup(&bd);
}

static void test_nested_names(void **state)
{
	struct body bd;
	struct start_req r;
	struct err e;
	(void)state;

	body_init(&bd);
	text(&bd, "arguments.x.y", " v ");
	text(&bd, "arguments.x.z", "w");
	text(&bd, "Org", "o"); /* special names match in any case, as Concord's getString */
	assert_int_equal(parse(&bd, &r, &e), 0);
	expect_json(r.cfg, "{\"arguments\":{\"x\":{\"y\":\"v\",\"z\":\"w\"}},\"org\":\"o\"}");
	assert_string_equal(r.org, "o");
	start_req_cleanup(&r);
	body_cleanup(&bd);

	body_init(&bd);
	text(&bd, "arguments..y", "v");
	expect_error(&bd, ERR_INVALID, "Invalid part name 'arguments..y'");
}

static void test_start_at_forms(void **state)
{
	struct body bd;
	(void)state;

	body_init(&bd);
	text(&bd, "startAt", "2020-01-01T00:00:00Z");
	expect_error(&bd, ERR_INVALID,
		     "Invalid 'startAt' value, can't be in the past: 2020-01-01T00:00:00Z Current server time: "
		     "2027-01-15T08:00:00.000Z");
	body_init(&bd);
	text(&bd, "startAt", "2030-01-01T00:00:00");
	expect_error(&bd, ERR_INVALID,
		     "Invalid 'startAt' format, expected an ISO-8601 value, got: 2030-01-01T00:00:00");
	body_init(&bd);
	text(&bd, "startAt", "tomorrow");
	expect_error(&bd, ERR_INVALID, "Invalid 'startAt' format, expected an ISO-8601 value, got: tomorrow");
	body_init(&bd);
	file(&bd, "request", "application/json", "{\"startAt\":12345}");
	expect_error(&bd, ERR_INVALID, "Invalid 'startAt' format, expected an ISO-8601 value, got: 12345");
}

static void test_timeouts(void **state)
{
	struct body bd;
	int64_t s = -7;
	struct err e;
	static const struct {
		const char *in;
		int64_t secs;
	} ok[] = {{"PT1H", 3600}, {"pt1h30m", 5400}, {"P1D", 86400}, {"PT0.5S", 1}, {"PT2.000S", 2}, {"+PT10S", 10}};
	static const char *bad[] = {"3600", "P", "PT", "P1H", "PT1D", "1H", "", "PT1H1H", "PT1M1H"};
	(void)state;

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		json_t *v = json_string(ok[i].in);
		assert_int_equal(duration_json(v, "processTimeout", &s, &e), 0);
		assert_int_equal(s, ok[i].secs);
		json_decref(v);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_t *v = json_string(bad[i]);
		assert_true(duration_json(v, "processTimeout", &s, &e) < 0);
		assert_int_equal(e.code, ERR_INVALID);
		json_decref(v);
	}
	json_t *n = json_integer(30), *r = json_real(1.5);
	assert_int_equal(duration_json(n, "processTimeout", &s, &e), 0);
	assert_int_equal(s, 30);
	assert_true(duration_json(r, "processTimeout", &s, &e) < 0);
	json_decref(n);
	json_decref(r);

	body_init(&bd);
	text(&bd, "processTimeout", "3600");
	expect_error(
	    &bd, ERR_INVALID,
	    "Invalid 'processTimeout' value, expected a number of seconds or an ISO-8601 duration (e.g. PT1H), got: "
	    "3600");
	body_init(&bd);
	file(&bd, "request", "application/json", "{\"suspendTimeout\":-5}");
	expect_error(&bd, ERR_INVALID, "Invalid 'suspendTimeout' value, can't be negative: -5");
	body_init(&bd);
	text(&bd, "suspendTimeout", "-PT1H");
	expect_error(&bd, ERR_INVALID, "Invalid 'suspendTimeout' value, can't be negative: -PT1H");
}

static void test_refused_parts(void **state)
{
	struct body bd;
	char many[1024] = "";
	(void)state;

	body_init(&bd);
	text(&bd, "meta", "{\"a\":1}");
	expect_error(&bd, ERR_INVALID, "Expected a JSON object in 'meta', got: {\"a\":1}");
	body_init(&bd);
	file(&bd, "meta", "application/json", "[1]");
	expect_error(&bd, ERR_INVALID, "Expected a JSON object in 'meta', got: [1]");
	body_init(&bd);
	file(&bd, "request", "application/json", "\"s\"");
	expect_error(&bd, ERR_INVALID, "Expected a JSON object in 'request', got: s");
	body_init(&bd);
	text(&bd, "request", "{}");
	expect_error(&bd, ERR_INVALID, "Expected a JSON object in 'request', got: {}");
	body_init(&bd);
	text(&bd, "sync", " TRUE ");
	expect_error(&bd, ERR_INVALID,
		     "The 'sync' mode is no longer available. Please use sync=false and poll for the status updates.");
	body_init(&bd);
	text(&bd, "parentInstanceId", "not-a-uuid");
	expect_error(&bd, ERR_INVALID, "Invalid 'parentInstanceId' value, expected a UUID, got: not-a-uuid");
	body_init(&bd);
	file(&bd, "request", "application/json", "{\"entryPoint\":1}");
	expect_error(&bd, ERR_INVALID, "Invalid 'entryPoint' value, expected a string");

	for (int i = 0; i <= START_REQ_TAGS_MAX; i++)
		assert_int_equal(str_fmt(many + strlen(many), sizeof many - strlen(many), "t%d,", i), 0);
	body_init(&bd);
	text(&bd, "tags", many);
	expect_error(&bd, ERR_INVALID, "Too many tags: 101 (at most 100)");

	struct start_req r;
	struct err e;
	body_init(&bd);
	file(&bd, "request", "application/json", "{\"a\":");
	assert_true(parse(&bd, &r, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	assert_non_null(strstr(e.msg, "Invalid JSON in 'request'"));
	body_cleanup(&bd);
}

static void test_invalid_attachment_names(void **state)
{
	static const char *names[] = {"../x", "a/../../x", "/etc/x", "a//b", "a/", "./a", "a\\\\b"};
	char want[256];
	(void)state;

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct body bd;
		body_init(&bd);
		file(&bd, names[i], "application/octet-stream", "x");
		assert_int_equal(str_fmt(want, sizeof want, "Invalid attachment name: %s", names[i]), 0);
		expect_error(&bd, ERR_INVALID, want);
	}
}

static void test_raw_payload(void **state)
{
	static const struct {
		const char *name;
		bool raw;
	} cases[] = {{"concord.yml", true},	{".concord.yml", true},	      {"concord.yaml", true},
		     {".concord.yaml", true},	{"concord/x.yml", true},      {"concord/a/b.yaml", true},
		     {"concord/x.json", false}, {"other/concord.yml", false}, {"data.txt", false}};
	(void)state;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct body bd;
		struct start_req r;
		struct err e;
		body_init(&bd);
		file(&bd, cases[i].name, "application/octet-stream", "x");
		assert_int_equal(parse(&bd, &r, &e), 0);
		assert_int_equal(r.raw_payload, cases[i].raw);
		assert_false(r.has_archive);
		start_req_cleanup(&r);
		body_cleanup(&bd);
	}
}

static void *make_zip(size_t *len)
{
	static const char *const ents[][2] = {{"concord.yml", "from-archive"}, {"lib/a.txt", "a"}};
	struct err e;
	struct archive *a;
	struct archive_entry *ae;
	size_t cap = 64 * 1024;
	char *mem = malloc(cap);

	/* The tests link libarchive no more than the binary does: the writer comes from the
	 * same table pack.c reads through. */
	assert_int_equal(archive_api_load(&e), 0);
	a = archive.write_new();
	ae = archive.entry_new();
	assert_int_equal(archive.write_set_format_zip(a), ARCHIVE_OK);
	assert_int_equal(archive.write_open_memory(a, mem, cap, len), ARCHIVE_OK);
	for (size_t i = 0; i < 2; i++) {
		archive.entry_clear(ae);
		archive.entry_set_pathname(ae, ents[i][0]);
		archive.entry_set_filetype(ae, AE_IFREG);
		archive.entry_set_perm(ae, 0644);
		archive.entry_set_size(ae, (la_int64_t)strlen(ents[i][1]));
		assert_int_equal(archive.write_header(a, ae), ARCHIVE_OK);
		assert_int_equal(archive.write_data(a, ents[i][1], strlen(ents[i][1])), (la_ssize_t)strlen(ents[i][1]));
	}
	assert_int_equal(archive.write_close(a), ARCHIVE_OK);
	archive.write_free(a);
	archive.entry_free(ae);
	return mem;
}

static char *read_at(const char *dir, const char *rel)
{
	char p[4096];
	struct err e;
	assert_int_equal(str_fmt(p, sizeof p, "%s/%s", dir, rel), 0);
	return path_read_file(p, 1 << 20, NULL, &e);
}

static mode_t lmode(const char *dir, const char *rel)
{
	char p[4096];
	struct stat st;
	assert_int_equal(str_fmt(p, sizeof p, "%s/%s", dir, rel), 0);
	return lstat(p, &st) == 0 ? st.st_mode : 0;
}

static void test_materialize(void **state)
{
	char dir[] = "/tmp/accord-test-start-XXXXXX", outside[] = "/tmp/accord-test-outside-XXXXXX", p[4096], l[4096];
	struct body bd;
	struct start_req r;
	struct err e;
	size_t zlen;
	void *zip = make_zip(&zlen);
	char *s;
	(void)state;

	assert_non_null(mkdtemp(dir));
	assert_non_null(mkdtemp(outside));
	/* links planted in the working folder must not carry a write outside */
	assert_int_equal(str_fmt(l, sizeof l, "%s/planted", dir), 0);
	assert_int_equal(symlink(outside, l), 0);
	assert_int_equal(str_fmt(p, sizeof p, "%s/victim", outside), 0);
	assert_int_equal(path_write_file(p, "precious", 8, 0600, &e), 0);
	assert_int_equal(str_fmt(l, sizeof l, "%s/victim", dir), 0);
	assert_int_equal(symlink(p, l), 0);

	body_init(&bd);
	add_n(&bd, "archive", "application/zip", zip, zlen);
	file(&bd, "concord.yml", "application/octet-stream", "from-part");
	file(&bd, "sub/dir/file.txt", "application/octet-stream", "deep");
	file(&bd, "planted/x", "application/octet-stream", "evil");
	file(&bd, "victim", "application/octet-stream", "evil");
	file(&bd, "meta", "application/json", "{}");
	text(&bd, "arguments.k", "v");
	assert_int_equal(parse(&bd, &r, &e), 0);
	assert_true(r.raw_payload);
	assert_true(r.has_archive);
	assert_int_equal(start_req_materialize(&bd.mp, &r, dir, false, &e), 0);

	s = read_at(dir, "concord.yml"); /* the archive wins */
	assert_string_equal(s, "from-archive");
	free(s);
	s = read_at(dir, "lib/a.txt");
	assert_string_equal(s, "a");
	free(s);
	s = read_at(dir, "sub/dir/file.txt");
	assert_string_equal(s, "deep");
	free(s);
	assert_int_equal(lmode(dir, "sub") & 07777, 0700);
	assert_int_equal(lmode(dir, "sub/dir") & 07777, 0700);
	assert_int_equal(lmode(dir, "sub/dir/file.txt") & 07777, 0600);
	assert_int_equal(lmode(outside, "x"), 0);
	s = read_at(outside, "victim");
	assert_string_equal(s, "precious");
	free(s);
	assert_int_equal(lmode(dir, "meta"), 0);
	assert_int_equal(lmode(dir, "arguments.k"), 0);

	start_req_cleanup(&r);
	body_cleanup(&bd);
	free(zip);
	assert_int_equal(path_remove_tree(dir, &e), 0);
	assert_int_equal(path_remove_tree(outside, &e), 0);
}

/* overlay (a repository checkout in the folder): file parts replace what is there, never
 * writing through a link. */
static void test_materialize_overlay(void **state)
{
	char dir[] = "/tmp/accord-test-start-XXXXXX", outside[] = "/tmp/accord-test-out-XXXXXX";
	char p[4200], l[4200];
	struct body bd;
	struct start_req r;
	struct err e;
	char *s;
	(void)state;

	assert_non_null(mkdtemp(dir));
	assert_non_null(mkdtemp(outside));
	assert_int_equal(str_fmt(p, sizeof p, "%s/data.txt", dir), 0);
	assert_int_equal(path_write_file(p, "checkout", 8, 0600, &e), 0);
	assert_int_equal(str_fmt(p, sizeof p, "%s/victim", outside), 0);
	assert_int_equal(path_write_file(p, "precious", 8, 0600, &e), 0);
	assert_int_equal(str_fmt(l, sizeof l, "%s/victim", dir), 0);
	assert_int_equal(symlink(p, l), 0);

	body_init(&bd);
	file(&bd, "data.txt", "application/octet-stream", "uploaded");
	file(&bd, "victim", "application/octet-stream", "evil");
	file(&bd, "new/file.txt", "application/octet-stream", "added");
	assert_int_equal(parse(&bd, &r, &e), 0);
	assert_int_equal(start_req_materialize(&bd.mp, &r, dir, false, &e), 0);
	s = read_at(dir, "data.txt"); /* without overlay, what is there wins */
	assert_string_equal(s, "checkout");
	free(s);
	assert_int_equal(start_req_materialize(&bd.mp, &r, dir, true, &e), 0);
	s = read_at(dir, "data.txt");
	assert_string_equal(s, "uploaded");
	free(s);
	s = read_at(dir, "new/file.txt");
	assert_string_equal(s, "added");
	free(s);
	s = read_at(outside, "victim"); /* the link was replaced, not written through */
	assert_string_equal(s, "precious");
	free(s);
	s = read_at(dir, "victim");
	assert_string_equal(s, "evil");
	free(s);

	start_req_cleanup(&r);
	body_cleanup(&bd);
	assert_int_equal(path_remove_tree(dir, &e), 0);
	assert_int_equal(path_remove_tree(outside, &e), 0);
}

static void test_materialize_archive_limits(void **state)
{
	char dir[] = "/tmp/accord-test-start-XXXXXX";
	struct body bd;
	struct start_req r;
	struct err e;
	size_t zlen;
	void *zip = make_zip(&zlen);
	(void)state;

	assert_non_null(mkdtemp(dir));
	limits.archive_entries = 1;
	body_init(&bd);
	add_n(&bd, "archive", "application/zip", zip, zlen);
	assert_int_equal(parse(&bd, &r, &e), 0);
	assert_true(start_req_materialize(&bd.mp, &r, dir, false, &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	assert_string_equal(e.msg, "archive: more than 1 entries (limit-archive-entries)");
	limits_defaults();
	start_req_cleanup(&r);
	body_cleanup(&bd);
	free(zip);
	assert_int_equal(path_remove_tree(dir, &e), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_part),
	    cmocka_unit_test(test_absent_parts),
	    cmocka_unit_test(test_text_part_wins_over_request),
	    cmocka_unit_test(test_nested_names),
	    cmocka_unit_test(test_start_at_forms),
	    cmocka_unit_test(test_timeouts),
	    cmocka_unit_test(test_refused_parts),
	    cmocka_unit_test(test_invalid_attachment_names),
	    cmocka_unit_test(test_raw_payload),
	    cmocka_unit_test(test_materialize),
	    cmocka_unit_test(test_materialize_overlay),
	    cmocka_unit_test(test_materialize_archive_limits),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
