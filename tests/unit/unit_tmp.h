/* Temporary folders of a unit test (cmocka): made under /tmp, removed with what they hold.
 * Included by the test after <cmocka.h>. */
#ifndef ACCORD_TESTS_UNIT_UNIT_TMP_H
#define ACCORD_TESTS_UNIT_UNIT_TMP_H

#include <stdlib.h>
#include <string.h>

#include "base/path.h"

/* A new folder prefix + six random characters (mkdtemp's template; the caller frees it with
 * unit_rmtree), e.g. unit_tmpdir("/tmp/accord-pack-"). */
static inline char *unit_tmpdir(const char *prefix)
{
	size_t n = strlen(prefix);
	char *d = malloc(n + 7);

	assert_non_null(d);
	memcpy(d, prefix, n);
	memset(d + n, 'X', 6); /* the part mkdtemp replaces */
	d[n + 6] = '\0';
	assert_non_null(mkdtemp(d));
	return d;
}

static inline void unit_rmtree(char *d)
{
	struct err e;
	assert_int_equal(path_remove_tree(d, &e), 0);
	free(d);
}

#endif
