/* Temporary folders of a unit test (cmocka): made under /tmp, removed with what they hold.
 * Included by the test after <cmocka.h>. */
#ifndef ACCORD_TESTS_UNIT_UNIT_TMP_H
#define ACCORD_TESTS_UNIT_UNIT_TMP_H

#include <stdlib.h>
#include <string.h>

#include "base/path.h"

/* A new folder /tmp/<prefix>XXXXXX (caller frees with unit_rmtree); template ends in XXXXXX. */
static inline char *unit_tmpdir(const char *template)
{
	char *d = strdup(template);
	assert_non_null(d);
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
