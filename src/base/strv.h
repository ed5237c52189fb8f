#ifndef ACCORD_BASE_STRV_H
#define ACCORD_BASE_STRV_H

#include <stddef.h>

#include "base/err.h"

/* A growing NULL-terminated list of strings it owns: an argv, an environment.  Zeroed is
 * empty (v is NULL until the first add). */
struct strv {
	char **v;
	size_t n, cap;
};

/* Appends a NEW formatted string; -1 when out of memory (the list is unchanged). */
int strv_add(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3))) WUR;
/* Frees every string and the list, and leaves it empty. */
void strv_free(struct strv *s);

#endif
