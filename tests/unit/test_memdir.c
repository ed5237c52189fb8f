/* Unit tests for src/base/memdir and the tar conversions of src/base/pack_mem: what a
 * folder held in memory keeps, and that it becomes on disk exactly what its payload
 * unpacks to. */
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

#include "base/memdir.h"
#include "base/pack.h"
#include "base/path.h"
#include "base/str.h"
#include "unit_tmp.h"

static char *tmpdir(void)
{
	return unit_tmpdir("/tmp/accord-memdir-");
}

/* "name mode content" of a file beneath dir, or "name dir" of a folder. */
static void describe(const char *dir, const char *rel, char *out, size_t cap)
{
	char p[4096];
	struct stat st;
	struct err e;
	size_t len;
	char *data;

	assert_int_equal(str_fmt(p, sizeof p, "%s/%s", dir, rel), 0);
	assert_int_equal(lstat(p, &st), 0);
	if (S_ISDIR(st.st_mode)) {
		assert_int_equal(str_fmt(out, cap, "%s dir %o", rel, st.st_mode & 0777), 0);
		return;
	}
	assert_non_null(data = path_read_file(p, 1 << 20, &len, &e));
	assert_int_equal(str_fmt(out, cap, "%s %o %s", rel, st.st_mode & 0777, data), 0);
	free(data);
}

static void sample(struct memdir *md)
{
	struct err e;

	memdir_init(md);
	assert_int_equal(memdir_add(md, "concord.yml", "flows: {}\n", 10, false, &e), 0);
	assert_int_equal(memdir_add(md, "a/b/deep.txt", "deep", 4, false, &e), 0);
	assert_int_equal(memdir_add(md, "run.sh", "#!/bin/sh\n", 10, true, &e), 0);
	assert_int_equal(memdir_add_dir(md, "empty", &e), 0);
}

static void test_the_first_file_of_a_path_wins(void **state)
{
	struct memdir md;
	struct err e;
	(void)state;

	sample(&md);
	/* a path that is there, a folder that is a file, a file where a folder is implied */
	assert_int_equal(memdir_add(&md, "concord.yml", "x", 1, false, &e), 0);
	assert_int_equal(memdir_add(&md, "run.sh/x", "x", 1, false, &e), 0);
	assert_int_equal(memdir_add(&md, "a/b", "x", 1, false, &e), 0);
	assert_int_equal(md.n, 4);
	assert_string_equal(memdir_find(&md, "concord.yml")->data, "flows: {}\n");
	assert_int_equal(md.bytes, 24);
	/* set replaces, and refuses a folder in the way */
	assert_int_equal(memdir_set(&md, "concord.yml", "y", 1, &e), 0);
	assert_string_equal(memdir_find(&md, "concord.yml")->data, "y");
	assert_int_equal(md.bytes, 15);
	assert_true(memdir_set(&md, "a/b", "x", 1, &e) < 0);
	static const char *const bad[] = {"../x", "/etc/passwd", "a//b", "a/./b", "", "a\\b"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_true(memdir_add(&md, bad[i], "x", 1, false, &e) < 0);
		assert_int_equal(e.code, ERR_INVALID);
	}
	memdir_cleanup(&md);
}

/* Written from memory and unpacked from its payload: the same tree. */
static void test_written_as_its_payload_unpacks(void **state)
{
	static const char *const rels[] = {"concord.yml", "a", "a/b", "a/b/deep.txt", "run.sh", "empty"};
	char *mem = tmpdir(), *unpacked = tmpdir(), x[256], y[256];
	struct memdir md, back;
	struct err e;
	void *tar = NULL;
	size_t len = 0;
	(void)state;

	sample(&md);
	assert_int_equal(memdir_write(&md, mem, &e), 0);
	assert_int_equal(pack_files(&md, 1024, &tar, &len, &e), 0);
	assert_int_equal(pack_restore(tar, len, unpacked, &e), 0);
	for (size_t i = 0; i < sizeof rels / sizeof rels[0]; i++) {
		describe(mem, rels[i], x, sizeof x);
		describe(unpacked, rels[i], y, sizeof y);
		assert_string_equal(x, y);
	}
	describe(mem, "run.sh", x, sizeof x);
	assert_string_equal(x, "run.sh 700 #!/bin/sh\n");
	describe(mem, "a/b/deep.txt", x, sizeof x);
	assert_string_equal(x, "a/b/deep.txt 600 deep");

	/* and back from the blob: the same entries (the implied folders made explicit) */
	memdir_init(&back);
	assert_int_equal(pack_tar_files(tar, len, 1024, &back, &e), 0);
	assert_true(memdir_find(&back, "run.sh")->exec);
	assert_string_equal(memdir_find(&back, "a/b/deep.txt")->data, "deep");
	assert_true(memdir_find(&back, "empty")->dir);
	assert_true(memdir_find(&back, "a")->dir);
	assert_int_equal(back.bytes, md.bytes);
	memdir_cleanup(&back);
	/* over the limit either way */
	memdir_init(&back);
	assert_true(pack_tar_files(tar, len, 10, &back, &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	memdir_cleanup(&back);
	free(tar);
	assert_true(pack_files(&md, 10, &tar, &len, &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	memdir_cleanup(&md);
	unit_rmtree(mem);
	unit_rmtree(unpacked);
}

static void test_a_planted_link_is_not_followed(void **state)
{
	char *dir = tmpdir(), *outside = tmpdir(), p[4096];
	struct memdir md;
	struct err e;
	(void)state;

	assert_int_equal(str_fmt(p, sizeof p, "%s/a", dir), 0);
	assert_int_equal(symlink(outside, p), 0);
	sample(&md);
	assert_true(memdir_write(&md, dir, &e) < 0);
	assert_int_equal(str_fmt(p, sizeof p, "%s/b", outside), 0);
	assert_int_not_equal(access(p, F_OK), 0);
	memdir_cleanup(&md);
	unit_rmtree(dir);
	unit_rmtree(outside);
}

static void test_json_round_trip(void **state)
{
	struct memdir md, back;
	struct err e;
	json_t *v;
	(void)state;

	sample(&md);
	assert_int_equal(memdir_add(&md, "bin.dat", "\0\xff\x01", 3, false, &e), 0);
	assert_non_null(v = memdir_to_json(&md));
	memdir_init(&back);
	assert_int_equal(memdir_from_json(&back, v, &e), 0);
	assert_int_equal(back.n, md.n);
	assert_int_equal(back.bytes, md.bytes);
	assert_memory_equal(memdir_find(&back, "bin.dat")->data, "\0\xff\x01", 3);
	assert_true(memdir_find(&back, "run.sh")->exec);
	assert_true(memdir_find(&back, "empty")->dir);
	json_decref(v);
	memdir_cleanup(&back);
	/* malformed: refused */
	memdir_init(&back);
	v = json_pack("[{s:s, s:s}]", "path", "../x", "data", "eA==");
	assert_true(memdir_from_json(&back, v, &e) < 0);
	json_decref(v);
	v = json_pack("[{s:s, s:s}]", "path", "x", "data", "not base64!");
	assert_true(memdir_from_json(&back, v, &e) < 0);
	json_decref(v);
	memdir_cleanup(&back);
	memdir_cleanup(&md);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_first_file_of_a_path_wins),
	    cmocka_unit_test(test_written_as_its_payload_unpacks),
	    cmocka_unit_test(test_a_planted_link_is_not_followed),
	    cmocka_unit_test(test_json_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
