#ifndef ACCORD_BASE_I64_LIST_H
#define ACCORD_BASE_I64_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* A growable list of 64-bit integers, sorted and intersected in memory: the item ids the
 * postings of an inventory filter's keys narrow a query to (inventory/narrow.h), the
 * posting hashes of an item (store/inventory_keys.c).  Not thread-safe; plain memory. */
struct i64_list {
	int64_t *v;
	size_t n, cap;
};

/* Appends id (ERR_INTERNAL when out of memory). */
int i64_list_push(struct i64_list *l, int64_t id, struct err *e) WUR;

/* Sorts l ascending and drops repeated ids. */
void i64_list_sort(struct i64_list *l);

/* Keeps in a (ascending) only the ids that are also in b (ascending): a merge where the
 * lists are of like sizes, a galloping search of the longer one where one is much shorter,
 * so the work follows the shorter list. */
void i64_list_intersect(struct i64_list *a, const struct i64_list *b);

/* Empties l, keeping its memory. */
void i64_list_clear(struct i64_list *l);

/* Frees l's memory; l is then empty. */
void i64_list_cleanup(struct i64_list *l);

#endif
