#ifndef ACCORD_INVENTORY_ID_LIST_H
#define ACCORD_INVENTORY_ID_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* A growable list of item ids (inventory_items.id), kept in ascending order by whoever
 * fills it: what the postings of a filter's keys narrow a query to (narrow.h), intersected
 * here in memory instead of by a lookup per candidate.  Not thread-safe; plain memory. */
struct inv_ids {
	int64_t *v;
	size_t n, cap;
};

/* Appends id (ERR_INTERNAL when out of memory). */
int inv_ids_push(struct inv_ids *l, int64_t id, struct err *e) WUR;

/* Sorts l ascending and drops repeated ids. */
void inv_ids_sort(struct inv_ids *l);

/* Keeps in a (ascending) only the ids that are also in b (ascending): a merge where the
 * lists are of like sizes, a galloping search of the longer one where one is much shorter,
 * so the work follows the shorter list. */
void inv_ids_intersect(struct inv_ids *a, const struct inv_ids *b);

/* Empties l, keeping its memory. */
void inv_ids_clear(struct inv_ids *l);

/* Frees l's memory; l is then empty. */
void inv_ids_cleanup(struct inv_ids *l);

#endif
