/* libFuzzer driver for api/process_start_req.  Input: a multipart/form-data body with the
 * boundary "XyZ".  It is parsed, turned into a start request and written into a fresh
 * working folder, which must be the only thing that appears beside it. */
#include <assert.h>
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/process_start_req.h"
#include "base/limits.h"
#include "base/path.h"
#include "base/str.h"

#define NOW 1800000000000LL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char base[] = "/tmp/accord-fuzz-start-XXXXXX";
static char work[sizeof base + 8];

/* Only "w" may exist in base: nothing escaped the working folder. */
static void check_base(void)
{
	DIR *d = opendir(base);
	struct dirent *de;
	assert(d);
	while ((de = readdir(d)) != NULL)
		assert(strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || strcmp(de->d_name, "w") == 0);
	closedir(d);
}

static void remove_base(void)
{
	struct err e;

	if (path_remove_tree(base, &e) != 0)
		fprintf(stderr, "fuzz_start_request: %s not removed: %s\n", base, e.msg);
}

static void init(void)
{
	limits_defaults();
	limits.archive_entries = 64;
	limits.archive_bytes = 1024 * 1024;
	assert(mkdtemp(base));
	if (str_fmt(work, sizeof work, "%s/w", base))
		abort();
	atexit(remove_base);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct multipart mp;
	struct start_req r;
	struct err e;
	char *copy;

	if (!work[0])
		init();
	copy = malloc(size ? size : 1); /* exact size, so ASan catches reads past the body */
	memcpy(copy, data, size);
	if (multipart_parse(STR_LIT("multipart/form-data; boundary=XyZ"), (struct str){copy, size}, &mp, &e) < 0)
		goto out;
	if (start_req_parse(&mp, NOW, &r, &e) == 0) {
		assert(json_is_object(r.cfg));
		assert(!r.has_archive || r.raw_payload);
		assert(r.timeout_s >= -1 && r.suspend_timeout_s >= -1);
		assert(!r.tags || json_array_size(r.tags) <= START_REQ_TAGS_MAX);
		assert(!r.start_at || r.start_at >= NOW);
		assert(mkdir(work, 0700) == 0);
		if (start_req_materialize(&mp, &r, work, false, &e) < 0)
			assert(e.code == ERR_INVALID || e.code == ERR_TOO_LARGE || e.code == ERR_INTERNAL);
		check_base();
		assert(path_remove_tree(work, &e) == 0);
		start_req_cleanup(&r);
	} else {
		assert(r.cfg == NULL);
		assert(e.code == ERR_INVALID || e.code == ERR_TOO_LARGE || e.code == ERR_INTERNAL);
	}
	multipart_cleanup(&mp);
out:
	free(copy);
	return 0;
}
