#ifndef ACCORD_BASE_DIRWALK_H
#define ACCORD_BASE_DIRWALK_H

#include <sys/stat.h>

#include "base/err.h"

/* One entry of a walk: rel its path below the root ("a/b"), full the root's path and rel,
 * st what lstat says of it.  A non-zero return stops the walk and is its result. */
typedef int (*dirwalk_fn)(void *ctx, const char *rel, const char *full, const struct stat *st);

/* Visits every entry below root depth-first (a folder, then what it holds), never following
 * a link; a folder that cannot be opened is passed over.  A tree nested deeper than
 * depth_max is ERR_TOO_LARGE "<what> too deep: <path>". */
int dirwalk(const char *root, int depth_max, const char *what, dirwalk_fn fn, void *ctx, struct err *e) WUR;

#endif
