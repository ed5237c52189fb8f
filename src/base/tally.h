#ifndef ACCORD_BASE_TALLY_H
#define ACCORD_BASE_TALLY_H

#include <stddef.h>

#include "base/err.h"

/* A count per short key (an id: up to TALLY_KEY_MAX - 1 bytes), for admission limits that
 * count what a user or a resource holds at once.  Only keys with a count above zero are
 * kept, so the table is no larger than what is being counted; lookups scan it.  Not
 * thread-safe: the caller locks. */

#define TALLY_KEY_MAX 40

struct tally_entry {
	char key[TALLY_KEY_MAX];
	unsigned n;
};

struct tally {
	struct tally_entry *v;
	size_t n, cap;
};

/* The count of key (borrowed), 0 when it has none. */
unsigned tally_get(const struct tally *t, const char *key);
/* Adds one to key's count.  ERR_INVALID for a key too long, ERR_INTERNAL out of memory. */
int tally_add(struct tally *t, const char *key, struct err *e) WUR;
/* Takes one from key's count (nothing when it has none). */
void tally_sub(struct tally *t, const char *key);
void tally_cleanup(struct tally *t);

#endif
