/* The compact payload blob of a start's files (base/memdir_blob.h): its size, what the
 * payload readers make of it and of the tar blobs stored before it, malformed blobs and
 * the byte limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/memdir.h"
#include "base/memdir_blob.h"
#include "base/pack.h"
#include "base/path.h"
#include "base/str.h"
#include "unit_tmp.h"

static void hello(struct memdir *md)
{
	struct err e;

	memdir_init(md);
	assert_int_equal(
	    memdir_add(md, "concord.yml", "flows:\n  default:\n    - log: \"Hello, world!\"\n", 45, false, &e), 0);
	assert_int_equal(memdir_add(md, "_main.json", "{\"entryPoint\":\"default\"}", 24, false, &e), 0);
}

/* A hello world's two files: the content and ~10 bytes an entry, well under what SQLite
 * keeps in a row without an overflow page (~1,000 bytes), where their tar took 3,072. */
static void test_a_hello_world_payload_is_small(void **state)
{
	struct memdir md, back;
	struct err e;
	void *blob;
	size_t len;
	(void)state;

	hello(&md);
	assert_int_equal(pack_files(&md, 1 << 20, &blob, &len, &e), 0);
	assert_true(memdir_blob_is(blob, len));
	assert_int_equal(len, MEMDIR_BLOB_MAGIC_LEN + 2 * 7 + strlen("concord.yml") + strlen("_main.json") + 45 + 24);
	memdir_init(&back);
	assert_int_equal(pack_tar_files(blob, len, 1 << 20, &back, &e), 0);
	assert_int_equal(back.n, 2);
	assert_string_equal(memdir_find(&back, "_main.json")->data, "{\"entryPoint\":\"default\"}");
	assert_false(memdir_find(&back, "concord.yml")->exec);
	memdir_cleanup(&back);
	/* over the byte limit, unpacking or packing: ERR_TOO_LARGE (the supervisor then restores
	 * the blob to a folder instead of holding it in memory) */
	memdir_init(&back);
	assert_true(pack_tar_files(blob, len, 50, &back, &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	memdir_cleanup(&back);
	free(blob);
	assert_true(pack_files(&md, 10, &blob, &len, &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	memdir_cleanup(&md);
}

/* pack_tar_read and pack_restore read it as they read a tar. */
static void test_the_readers_take_it(void **state)
{
	struct memdir md;
	struct err e;
	void *blob;
	size_t len, n;
	char *data, *dir = unit_tmpdir("/tmp/accord-blob-"), p[4096];
	(void)state;

	hello(&md);
	assert_int_equal(memdir_add(&md, "forms/f/index.html", "<p>hi</p>", 9, false, &e), 0);
	assert_int_equal(memdir_add(&md, "bin/run.sh", "#!/bin/sh\n", 10, true, &e), 0);
	assert_int_equal(pack_files(&md, 1 << 20, &blob, &len, &e), 0);
	assert_int_equal(pack_tar_read(blob, len, "forms/f/index.html", 100, &data, &n, &e), 0);
	assert_string_equal(data, "<p>hi</p>");
	assert_int_equal(n, 9);
	free(data);
	assert_true(pack_tar_read(blob, len, "forms/f", 100, &data, &n, &e) < 0); /* a folder */
	assert_int_equal(e.code, ERR_NOT_FOUND);
	assert_true(pack_tar_read(blob, len, "nope", 100, &data, &n, &e) < 0);
	assert_int_equal(e.code, ERR_NOT_FOUND);
	assert_true(pack_tar_read(blob, len, "forms/f/index.html", 5, &data, &n, &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);

	assert_int_equal(pack_restore(blob, len, dir, &e), 0);
	assert_int_equal(str_fmt(p, sizeof p, "%s/bin/run.sh", dir), 0);
	assert_non_null(data = path_read_file(p, 100, &n, &e));
	assert_string_equal(data, "#!/bin/sh\n");
	free(data);
	assert_int_equal(access(p, X_OK), 0);
	free(blob);
	memdir_cleanup(&md);
	unit_rmtree(dir);
}

/* A payload stored before (a tar of the folder) is still read. */
static void test_a_tar_payload_is_still_read(void **state)
{
	struct memdir md;
	struct err e;
	void *tar;
	size_t len;
	char *dir = unit_tmpdir("/tmp/accord-blob-tar-"), p[4096];
	(void)state;

	assert_int_equal(str_fmt(p, sizeof p, "%s/concord.yml", dir), 0);
	assert_int_equal(path_write_file(p, "flows: {}\n", 10, 0600, &e), 0);
	assert_int_equal(pack_dir(dir, 1 << 20, &tar, &len, &e), 0);
	assert_false(memdir_blob_is(tar, len));
	memdir_init(&md);
	assert_int_equal(pack_tar_files(tar, len, 1 << 20, &md, &e), 0);
	assert_string_equal(memdir_find(&md, "concord.yml")->data, "flows: {}\n");
	memdir_cleanup(&md);
	free(tar);
	unit_rmtree(dir);
}

/* Malformed or hostile blobs are refused with ERR_INVALID, never read past their end, and
 * no entry names a path outside the folder. */
static void test_malformed_blobs_are_refused(void **state)
{
	static const struct {
		const char *bytes;
		size_t len;
	} bad[] = {
	    {MEMDIR_BLOB_MAGIC "q\1\0a", MEMDIR_BLOB_MAGIC_LEN + 4},		/* unknown kind */
	    {MEMDIR_BLOB_MAGIC "f\1", MEMDIR_BLOB_MAGIC_LEN + 2},		/* truncated entry */
	    {MEMDIR_BLOB_MAGIC "f\0\0", MEMDIR_BLOB_MAGIC_LEN + 3},		/* empty path */
	    {MEMDIR_BLOB_MAGIC "f\5\0ab", MEMDIR_BLOB_MAGIC_LEN + 5},		/* truncated path */
	    {MEMDIR_BLOB_MAGIC "f\1\0a\3\0", MEMDIR_BLOB_MAGIC_LEN + 6},	/* truncated length */
	    {MEMDIR_BLOB_MAGIC "f\1\0a\5\0\0\0ab", MEMDIR_BLOB_MAGIC_LEN + 10}, /* truncated content */
	    {MEMDIR_BLOB_MAGIC "f\1\0a\377\377\377\377", MEMDIR_BLOB_MAGIC_LEN + 8},
	    {MEMDIR_BLOB_MAGIC "f\3\0a\0b\0\0\0\0", MEMDIR_BLOB_MAGIC_LEN + 10}, /* NUL in a path */
	    {MEMDIR_BLOB_MAGIC "f\4\0../x\0\0\0\0", MEMDIR_BLOB_MAGIC_LEN + 11},
	    {MEMDIR_BLOB_MAGIC "f\4\0/etc\0\0\0\0", MEMDIR_BLOB_MAGIC_LEN + 11},
	    {MEMDIR_BLOB_MAGIC "d\2\0..", MEMDIR_BLOB_MAGIC_LEN + 5},
	    {MEMDIR_BLOB_MAGIC "f\1\0a\0\0\0\0d\1\0a", MEMDIR_BLOB_MAGIC_LEN + 12}, /* a file and a folder */
	};
	char *dir = unit_tmpdir("/tmp/accord-blob-bad-");
	(void)state;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct memdir md;
		struct err e;
		char *copy = malloc(bad[i].len); /* exactly its length: ASan sees any read past it */
		assert_non_null(copy);
		memcpy(copy, bad[i].bytes, bad[i].len);
		memdir_init(&md);
		assert_true(memdir_blob_unpack(copy, bad[i].len, 1 << 20, &md, &e) < 0);
		assert_int_equal(e.code, ERR_INVALID);
		memdir_cleanup(&md);
		assert_true(pack_restore(copy, bad[i].len, dir, &e) < 0);
		free(copy);
	}
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_hello_world_payload_is_small),
	    cmocka_unit_test(test_the_readers_take_it),
	    cmocka_unit_test(test_a_tar_payload_is_still_read),
	    cmocka_unit_test(test_malformed_blobs_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
