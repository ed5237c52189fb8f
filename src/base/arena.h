#ifndef ACCORD_BASE_ARENA_H
#define ACCORD_BASE_ARENA_H

#include <stddef.h>

/* A region allocator: many small allocations, freed all at once by arena_cleanup.
 * Used for per-request scratch memory.  Allocation failure aborts (the process is out
 * of memory; no caller could recover).  Not thread-safe. */
struct arena_block;
struct arena {
	struct arena_block *head;
};

void arena_init(struct arena *a);
void arena_cleanup(struct arena *a);
void *arena_alloc(struct arena *a, size_t n); /* zeroed, 16-byte aligned */
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_printf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
