#ifndef ACCORD_FLOW_COPY_H
#define ACCORD_FLOW_COPY_H

#include "base/err.h"

/* Copies the file tree src into dst (created as needed; existing files are overwritten).
 * Symbolic links are not followed and not copied.  Paths named `skip` (a top-level entry
 * name of src, or NULL) are left out. */
int flow_copy_tree(const char *src, const char *dst, const char *skip, struct err *e) WUR;

#endif
