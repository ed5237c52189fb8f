#ifndef ACCORD_STORE_STMT_CACHE_H
#define ACCORD_STORE_STMT_CACHE_H

/* A connection's prepared statements, found by the address of their SQL text (store.h:
 * SQL is a string constant or interned).  Shared by the backends; one thread at a time. */

#include <stddef.h>

struct stmt_cache_slot {
	const char *sql;
	void *stmt; /* the backend's statement (owned by the cache's user) */
};

struct stmt_cache {
	struct stmt_cache_slot *slots; /* open addressing, cap a power of two */
	size_t cap, n;
};

/* 0, or -1 out of memory. */
int stmt_cache_init(struct stmt_cache *c);
/* The statement cached for sql, or NULL. */
void *stmt_cache_get(const struct stmt_cache *c, const char *sql);
/* Adds stmt for sql (not cached yet); 0, or -1 out of memory (nothing added). */
int stmt_cache_put(struct stmt_cache *c, const char *sql, void *stmt);
/* Calls free_stmt on every statement, then frees the table. */
void stmt_cache_cleanup(struct stmt_cache *c, void (*free_stmt)(void *stmt));

#endif
