/* Unit tests for src/base/pack: ZIP extraction under limits, refused entries, planted
 * links, tar round trips.  Archives are built in memory with libarchive's writer. */
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

#include "base/archive_api.h"
#include "base/limits.h"
#include "base/pack.h"
#include "base/path.h"
#include "base/str.h"
#include "unit_tmp.h"

struct ent {
	const char *name;
	mode_t type; /* AE_IFREG when 0 */
	const char *data;
	size_t repeat; /* data written this many times (for big entries) */
	const char *link;
	bool hardlink;
};

#define ARCHIVE_CAP (8 * 1024 * 1024)

static void *make_archive(bool zip, const struct ent *v, size_t n, size_t *len)
{
	struct err e;
	struct archive *a;
	struct archive_entry *ae;
	char *mem = malloc(ARCHIVE_CAP);
	size_t used = 0;

	/* The tests link libarchive no more than the binary does: the writer comes from the
	 * same table pack.c reads through. */
	assert_int_equal(archive_api_load(&e), 0);
	a = archive.write_new();
	ae = archive.entry_new();
	assert_non_null(mem);
	if (zip)
		assert_int_equal(archive.write_set_format_zip(a), ARCHIVE_OK);
	else
		assert_int_equal(archive.write_set_format_pax_restricted(a), ARCHIVE_OK);
	assert_int_equal(archive.write_open_memory(a, mem, ARCHIVE_CAP, &used), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		size_t dlen = v[i].data ? strlen(v[i].data) : 0, rep = v[i].repeat ? v[i].repeat : 1;
		mode_t t = v[i].type ? v[i].type : AE_IFREG;
		archive.entry_clear(ae);
		archive.entry_set_pathname(ae, v[i].name);
		archive.entry_set_filetype(ae, t);
		/* a ".sh" entry is setuid and executable by all: only the owner's x may survive */
		archive.entry_set_perm(ae, t == AE_IFDIR ? 0755 : strstr(v[i].name, ".sh") ? 04755 : 0644);
		if (t == AE_IFLNK)
			archive.entry_set_symlink(ae, v[i].link);
		if (v[i].hardlink)
			archive.entry_set_hardlink(ae, v[i].link);
		archive.entry_set_size(ae, t == AE_IFREG && !v[i].hardlink ? (la_int64_t)(dlen * rep) : 0);
		assert_true(archive.write_header(a, ae) >= ARCHIVE_WARN);
		for (size_t r = 0; t == AE_IFREG && dlen && r < rep; r++)
			assert_int_equal(archive.write_data(a, v[i].data, dlen), (la_ssize_t)dlen);
	}
	assert_int_equal(archive.write_close(a), ARCHIVE_OK);
	archive.write_free(a);
	archive.entry_free(ae);
	*len = used;
	return mem;
}

static char *tmpdir(void)
{
	return unit_tmpdir("/tmp/accord-test-pack-");
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

static const struct pack_limits big = {1000, 1ULL << 30, 1000000};

static int unzip_ents(const struct ent *v, size_t n, const char *dir, const struct pack_limits *lim, struct err *e)
{
	size_t len;
	void *zip = make_archive(true, v, n, &len);
	int rc = pack_unzip(zip, len, dir, lim, e);
	free(zip);
	return rc;
}

static int setup(void **state)
{
	(void)state;
	limits_defaults();
	umask(022);
	return 0;
}

static void test_unzip_files_and_modes(void **state)
{
	struct ent v[] = {
	    {"concord.yml", 0, "flows: {}\n", 0, NULL, false},
	    {"lib/", AE_IFDIR, NULL, 0, NULL, false},
	    {"lib/a/b.txt", 0, "hello", 0, NULL, false},
	    {"empty", 0, NULL, 0, NULL, false},
	    {"bin/run.sh", 0, "#!/bin/sh\n", 0, NULL, false},
	};
	char *d = tmpdir(), *s;
	struct err e;
	(void)state;

	assert_int_equal(unzip_ents(v, 5, d, &big, &e), 0);
	assert_int_equal(lmode(d, "bin/run.sh") & 07777, 0700); /* owner's x kept, setuid and others' bits not */
	s = read_at(d, "concord.yml");
	assert_string_equal(s, "flows: {}\n");
	free(s);
	s = read_at(d, "lib/a/b.txt");
	assert_string_equal(s, "hello");
	free(s);
	assert_int_equal(lmode(d, "concord.yml") & 07777, 0600);
	assert_int_equal(lmode(d, "empty") & 07777, 0600);
	assert_true(S_ISDIR(lmode(d, "lib")));
	assert_int_equal(lmode(d, "lib") & 07777, 0700);
	assert_int_equal(lmode(d, "lib/a") & 07777, 0700);
	unit_rmtree(d);
}

static void expect_refused(const char *name, mode_t type, const char *link, const char *why)
{
	struct ent v[] = {{"ok.txt", 0, "x", 0, NULL, false}, {name, type, "data", 0, link, false}};
	char *d = tmpdir();
	struct err e;
	char want[512];

	assert_true(unzip_ents(v, 2, d, &big, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	assert_int_equal(str_fmt(want, sizeof want, "archive entry '%s' is not allowed: %s", name, why), 0);
	assert_string_equal(e.msg, want);
	unit_rmtree(d);
}

static void test_unzip_refuses_bad_names(void **state)
{
	(void)state;
	expect_refused("../x", 0, NULL, "it leaves the working directory");
	expect_refused("a/../../x", 0, NULL, "it leaves the working directory");
	expect_refused("a/..", 0, NULL, "it leaves the working directory");
	expect_refused("/tmp/accord-abs", 0, NULL, "absolute name");
	/* libarchive's ZIP reader turns backslashes into slashes: "..\\x" is "../x" */
	{
		struct ent v[] = {{"..\\x", 0, "data", 0, NULL, false}};
		char *d = tmpdir();
		struct err e;
		assert_true(unzip_ents(v, 1, d, &big, &e) < 0);
		assert_string_equal(e.msg, "archive entry '../x' is not allowed: it leaves the working directory");
		unit_rmtree(d);
	}
	expect_refused("a//b", 0, NULL, "empty or '.' path component");
	expect_refused("./a", 0, NULL, "empty or '.' path component");
	assert_int_equal(access("/tmp/accord-abs", F_OK), -1);
}

static void test_unzip_refuses_symlink_entry(void **state)
{
	(void)state;
	expect_refused("link", AE_IFLNK, "/etc/passwd", "symbolic links are not allowed");
	expect_refused("dir/link", AE_IFLNK, "../../x", "symbolic links are not allowed");
}

/* Hard links, devices and FIFOs cannot be written into a ZIP by libarchive: checked through
 * pack_restore, which applies the same entry checks. */
static void test_restore_refuses_links_and_specials(void **state)
{
	static const struct {
		struct ent ent;
		const char *msg;
	} cases[] = {
	    {{"hl", 0, NULL, 0, "ok.txt", true}, "archive entry 'hl' is not allowed: hard links are not allowed"},
	    {{"hl2", 0, NULL, 0, "/etc/passwd", true},
	     "archive entry 'hl2' is not allowed: hard links are not allowed"},
	    {{"sl", AE_IFLNK, NULL, 0, "/", false},
	     "archive entry 'sl' is not allowed: symbolic links are not allowed"},
	    {{"dev", AE_IFCHR, NULL, 0, NULL, false}, "archive entry 'dev' is not allowed: devices are not allowed"},
	    {{"fifo", AE_IFIFO, NULL, 0, NULL, false}, "archive entry 'fifo' is not allowed: FIFOs are not allowed"},
	    {{"../up", 0, "x", 0, NULL, false},
	     "archive entry '../up' is not allowed: it leaves the working directory"},
	    {{"a\\b", 0, "x", 0, NULL, false}, "archive entry 'a\\b' is not allowed: backslash in the name"},
	};
	(void)state;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ent v[] = {{"ok.txt", 0, "x", 0, NULL, false}, cases[i].ent};
		size_t len;
		void *tar = make_archive(false, v, 2, &len);
		char *d = tmpdir();
		struct err e;
		assert_true(pack_restore(tar, len, d, &e) < 0);
		assert_int_equal(e.code, ERR_INVALID);
		assert_string_equal(e.msg, cases[i].msg);
		assert_int_equal(lmode(d, cases[i].ent.name), 0);
		free(tar);
		unit_rmtree(d);
	}
}

static void test_unzip_bomb_refused_early(void **state)
{
	static char zeros[64 * 1024];
	struct ent v[] = {{"bomb", 0, zeros, 800, NULL, false}}; /* 50 MiB of 'a' */
	struct pack_limits lim = {100, 1ULL << 30, 100};
	char *d = tmpdir();
	struct err e;
	size_t len;
	void *zip;
	(void)state;

	memset(zeros, 'a', sizeof zeros - 1);
	zip = make_archive(true, v, 1, &len);
	assert_true(len < 1024 * 1024);
	assert_true(pack_unzip(zip, len, d, &lim, &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	assert_non_null(strstr(e.msg, "(limit-archive-ratio)"));
	assert_non_null(strstr(e.msg, "more than 100 times"));
	/* refused before a byte of it was written */
	assert_int_equal(lmode(d, "bomb"), 0);
	free(zip);
	unit_rmtree(d);
}

static void test_unzip_bytes_limit(void **state)
{
	struct ent v[] = {{"a", 0, "0123456789", 60, NULL, false}, {"b", 0, "0123456789", 60, NULL, false}};
	struct pack_limits lim = {100, 1000, 0};
	char *d = tmpdir();
	struct err e;
	(void)state;

	assert_true(unzip_ents(v, 2, d, &lim, &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	assert_string_equal(e.msg, "archive: more than 1000 unpacked bytes (limit-archive-bytes)");
	assert_true(S_ISREG(lmode(d, "a")));
	assert_int_equal(lmode(d, "b"), 0);
	unit_rmtree(d);
}

static void test_unzip_entry_limit(void **state)
{
	struct ent v[11];
	char names[11][16];
	struct pack_limits lim = {10, 1ULL << 20, 100};
	char *d = tmpdir();
	struct err e;
	(void)state;

	for (int i = 0; i < 11; i++) {
		assert_int_equal(str_fmt(names[i], sizeof names[i], "f%d", i), 0);
		v[i] = (struct ent){names[i], 0, "x", 0, NULL, false};
	}
	assert_int_equal(unzip_ents(v, 10, d, &lim, &e), 0);
	assert_true(unzip_ents(v, 11, d, &lim, &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	assert_string_equal(e.msg, "archive: more than 10 entries (limit-archive-entries)");
	unit_rmtree(d);
}

static void test_unzip_does_not_follow_planted_links(void **state)
{
	struct ent v[] = {
	    {"evil/x", 0, "inside", 0, NULL, false},
	    {"victim", 0, "replaced", 0, NULL, false},
	};
	char *d = tmpdir(), *outside = tmpdir(), p[4096], *s;
	struct err e;
	(void)state;

	assert_int_equal(str_fmt(p, sizeof p, "%s/victim", outside), 0);
	assert_int_equal(path_write_file(p, "precious", 8, 0600, &e), 0);
	{
		char l[4096];
		assert_int_equal(str_fmt(l, sizeof l, "%s/victim", d), 0);
		assert_int_equal(symlink(p, l), 0);
	}
	assert_int_equal(str_fmt(p, sizeof p, "%s/evil", d), 0);
	assert_int_equal(symlink(outside, p), 0);

	assert_int_equal(unzip_ents(v, 2, d, &big, &e), 0);
	/* nothing written outside */
	s = read_at(outside, "victim");
	assert_string_equal(s, "precious");
	free(s);
	assert_int_equal(lmode(outside, "x"), 0);
	/* the links were replaced by what the archive holds */
	assert_true(S_ISDIR(lmode(d, "evil")));
	assert_true(S_ISREG(lmode(d, "victim")));
	s = read_at(d, "evil/x");
	assert_string_equal(s, "inside");
	free(s);
	unit_rmtree(d);
	unit_rmtree(outside);
}

static void test_unzip_garbage(void **state)
{
	char *d = tmpdir();
	struct err e;
	(void)state;

	assert_true(pack_unzip("not a zip at all", 16, d, &big, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	assert_non_null(strstr(e.msg, "not a valid ZIP file"));
	unit_rmtree(d);
}

static void test_tar_round_trip(void **state)
{
	char *src = tmpdir(), *dst = tmpdir(), p[4096], *s;
	struct err e;
	void *tar = NULL;
	size_t len = 0;
	(void)state;

	assert_int_equal(str_fmt(p, sizeof p, "%s/a/b", src), 0);
	assert_int_equal(path_mkdirs(p, 0755, &e), 0);
	assert_int_equal(str_fmt(p, sizeof p, "%s/a/b/deep.txt", src), 0);
	assert_int_equal(path_write_file(p, "deep", 4, 0644, &e), 0);
	assert_int_equal(str_fmt(p, sizeof p, "%s/top.json", src), 0);
	assert_int_equal(path_write_file(p, "{}", 2, 0644, &e), 0);
	assert_int_equal(str_fmt(p, sizeof p, "%s/empty", src), 0);
	assert_int_equal(path_mkdirs(p, 0755, &e), 0);
	assert_int_equal(str_fmt(p, sizeof p, "%s/link", src), 0);
	assert_int_equal(symlink("/etc/passwd", p), 0);

	assert_int_equal(pack_dir(src, 1024, &tar, &len, &e), 0);
	assert_true(len > 0);
	assert_int_equal(pack_restore(tar, len, dst, &e), 0);
	s = read_at(dst, "a/b/deep.txt");
	assert_string_equal(s, "deep");
	free(s);
	s = read_at(dst, "top.json");
	assert_string_equal(s, "{}");
	free(s);
	assert_int_equal(lmode(dst, "top.json") & 07777, 0600);
	assert_true(S_ISDIR(lmode(dst, "empty")));
	assert_int_equal(lmode(dst, "link"), 0);
	free(tar);

	/* over max_bytes: 6 bytes of content */
	tar = (void *)1;
	assert_true(pack_dir(src, 5, &tar, &len, &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	assert_null(tar);
	unit_rmtree(src);
	unit_rmtree(dst);
}

static void test_tar_read_one_file(void **state)
{
	char *src = tmpdir(), p[4096], *data = NULL;
	struct err e;
	void *tar = NULL;
	size_t len = 0, n = 0;
	(void)state;

	assert_int_equal(str_fmt(p, sizeof p, "%s/forms/f", src), 0);
	assert_int_equal(path_mkdirs(p, 0755, &e), 0);
	assert_int_equal(str_fmt(p, sizeof p, "%s/forms/f/index.html", src), 0);
	assert_int_equal(path_write_file(p, "<html>", 6, 0644, &e), 0);
	assert_int_equal(str_fmt(p, sizeof p, "%s/forms/f/link", src), 0);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	assert_int_equal(pack_dir(src, 1024, &tar, &len, &e), 0);

	assert_int_equal(pack_tar_read(tar, len, "forms/f/index.html", 100, &data, &n, &e), 0);
	assert_int_equal(n, 6);
	assert_string_equal(data, "<html>");
	free(data);
	/* a folder, a link (never packed), a name that is only a prefix: not files */
	static const char *const not_files[] = {"forms/f", "forms/f/link", "forms/f/index", "forms"};
	for (size_t i = 0; i < sizeof not_files / sizeof not_files[0]; i++) {
		assert_true(pack_tar_read(tar, len, not_files[i], 100, &data, &n, &e) < 0);
		assert_int_equal(e.code, ERR_NOT_FOUND);
		assert_null(data);
	}
	assert_true(pack_tar_read(tar, len, "forms/f/index.html", 5, &data, &n, &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	free(tar);
	unit_rmtree(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unzip_files_and_modes),
	    cmocka_unit_test(test_unzip_refuses_bad_names),
	    cmocka_unit_test(test_unzip_refuses_symlink_entry),
	    cmocka_unit_test(test_restore_refuses_links_and_specials),
	    cmocka_unit_test(test_unzip_bomb_refused_early),
	    cmocka_unit_test(test_unzip_bytes_limit),
	    cmocka_unit_test(test_unzip_entry_limit),
	    cmocka_unit_test(test_unzip_does_not_follow_planted_links),
	    cmocka_unit_test(test_unzip_garbage),
	    cmocka_unit_test(test_tar_round_trip),
	    cmocka_unit_test(test_tar_read_one_file),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
